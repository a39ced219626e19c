#!/usr/bin/env bash
# Round r16 (helper a): compile-only test of the mgb drop-in drivers (mgb-nvcc/mgb-cc/mgb-c++), from round15/recipe-b.sh.
# Sources (git --git-dir=/work/.mirror/OWNER+NAME/repo archive HEAD | tar -x -C src/NAME):
#   tpruvot/ccminer          6ff4e50987e59a70056324a94ed8667cc0bf598d -> src/ccminer
#       (archive with pathspec ':!compat/curl-for-windows' ':!compat/jansson/*.lib': one Windows .lib blob is absent
#        from the mirror; then ./autogen.sh run once in src/ccminer). Needed `apt-get install -y libcurl4-openssl-dev`.
#   cusplibrary/cusplibrary  0c79a9b840462f0dfe701baaeab632e33a9673a8 -> src/cusp
#   nahmedraja/GASAL2        106d94ee53fc847214fb05f2f9f892538a5d3baf -> src/GASAL2
# Build orig = real compilers; mgb = drop-ins first in PATH (nvcc/gcc/g++/cc/c++ -> mgb-*), CUDA root $R/cudaroot
# whose bin/nvcc is mgb-nvcc; MGB_STRICT=1 and MGB_NVCC_LOG=logs/NAME.driver.log in the mgb build.
# Arch: sm_90 both builds (ccminer: make nvcc_ARCH=-arch=sm_90; GASAL2: GPU_SM_ARCH=sm_90; cusp: -arch=sm_90).
# Usage: recipe-a.sh [gasal2] [cusp] [cusp_shim] [ccminer]   (no argument = all); VARIANTS="orig" or "mgb" runs one build only.
# Run order used (2 shared cores, 80-minute budget): gasal2; cusp; cusp_shim (orig; its first mgb build stopped after
#   2 files); ccminer; then the cusp_shim mgb build in two parts with VARIANTS=mgb CUSP_FILES="10 files" (dir renamed
#   build/mgb/cusp_shim_part1, log logs/cusp_shim.mgb.part1.log) and VARIANTS=mgb CUSP_FILES="the other 17".
# Afterwards: python3 $R/analyze.py gasal2 ccminer (products + nm -g --defined-only); $R/make_pairs.sh (8 cusp pairs
#   into /work/thirdparty/r16/pairs, args.a.txt, files.a.txt); reproducers: $R/repro/*/run.sh.
# Results: $R/analysis.txt.
set -u
R=/work/thirdparty/r16/a
MGB=/work/thirdparty/r16/mgb/bin
SRC=$R/src
LOGS=$R/logs
mkdir -p "$LOGS" "$R/build" "$R/bin"
for t in nvcc:mgb-nvcc g++:mgb-c++ gcc:mgb-cc c++:mgb-c++ cc:mgb-cc; do ln -sfn "$MGB/${t#*:}" "$R/bin/${t%%:*}"; done
mkdir -p "$R/cudaroot/bin"; ln -sfn "$MGB/mgb-nvcc" "$R/cudaroot/bin/nvcc"
for d in targets lib64 include nvvm; do ln -sfn /usr/local/cuda/$d "$R/cudaroot/$d"; done
export PATH=/usr/local/cuda/bin:$PATH

want() { ((${#SEL[@]} == 0)) && return 0; local n; for n in "${SEL[@]}"; do [[ "$n" == "$1" ]] && return 0; done; return 1; }
SEL=("$@")

# sh_pool NAME SRCDIR 'COMMANDS'  -- runs COMMANDS (bash -c) in a fresh copy, twice; $CUDAROOT is /usr/local/cuda (orig)
# or $R/cudaroot (mgb); PATH has $R/bin first in the mgb build.
sh_pool() {
  local name=$1 srcdir=$2 cmds=$3 variant base log venv p start rc
  for variant in ${VARIANTS:-orig mgb}; do
    base=$R/build/$variant/$name
    rm -rf "$base"; mkdir -p "$(dirname "$base")"; cp -a "$SRC/$srcdir" "$base"
    log=$LOGS/$name.$variant.log
    if [[ $variant == orig ]]; then venv="CUDAROOT=/usr/local/cuda"; p=$PATH
    else rm -f "$LOGS/$name.driver.log"; venv="CUDAROOT=$R/cudaroot MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$name.driver.log"; p=$R/bin:$PATH; fi
    echo "# cd $base; PATH=$p env $venv bash -c '$cmds'" >"$log"
    start=$(date +%s)
    (cd "$base" && PATH=$p env $venv nice -n 5 bash -c "$cmds") >>"$log" 2>&1
    rc=$?; echo "# rc=$rc seconds=$(( $(date +%s) - start ))" >>"$log"; echo "rc=$rc" >>"$log"
    echo "$name $variant rc=$rc"
  done
}

# GASAL2: its configure.sh takes the CUDA root (rewrites NVCC= in Makefile and the cuda_runtime.h include path);
# -j1 because its 'all: clean makedir libgasal.a' races under -j2. Then test_prog (g++ from PATH, links -lgasal).
want gasal2 && sh_pool gasal2 GASAL2 'set -x; ./configure.sh $CUDAROOT; make -k GPU_SM_ARCH=sm_90 MAX_QUERY_LEN=160 N_CODE=0x4E N_PENALTY=1; r1=$?; make -k -C test_prog; r2=$?; exit $((r1|r2))'

# cusp: header-only; each listed .cu compiled and linked alone: nvcc -arch=sm_90 -O2 -I. FILE -o exe/NAME (2 at a time).
CUSP_FILES="${CUSP_FILES:-examples/Algorithms/blas.cu examples/Algorithms/multiply.cu examples/Algorithms/transpose.cu examples/Gallery/poisson.cu examples/Graph/breadth_first_search.cu examples/Graph/connected_components.cu examples/Graph/maximal_independent_set.cu examples/Graph/symmetric_rcm.cu examples/Graph/vertex_coloring.cu examples/Graph/hilbert_curve.cu examples/InputOutput/matrix_market.cu examples/LinearOperator/stencil.cu examples/LinearOperator/block_matrix.cu examples/MatrixAssembly/unordered_triplets.cu examples/MatrixFormats/coo.cu examples/MatrixFormats/hyb.cu examples/Monitors/verbose_monitor.cu examples/Preconditioners/ainv.cu examples/Preconditioners/custom_amg.cu examples/Preconditioners/smoothed_aggregation.cu examples/Solvers/bicgstab.cu examples/Solvers/cg.cu examples/Solvers/gmres.cu examples/Views/array2d_raw.cu examples/Views/csr_view.cu examples/Solvers/cg_m.cu examples/Version/version.cu}"
cusp_cmd() { echo 'mkdir -p exe; for f in '"$CUSP_FILES"'; do n=$(basename $(dirname $f))_$(basename $f .cu); echo "$f $n"; done | xargs -P2 -L1 bash -c '"'"'if nvcc -arch=sm_90 -O2 -I. '"$1"' $0 -o exe/$1 > exe/$1.log 2>&1; then r=OK; else r=FAIL; fi; echo "=== $0 $r"; cat exe/$1.log'"'"'; ls exe | grep -v log$ | wc -l'; }
# As written: every example but Version/version.cu stops both ways at cusp/detail/memory.inl(42):
# "qualified name is not allowed" (thrust::detail::minimum_system_t is not in CUDA 13.0's Thrust).
want cusp && sh_pool cusp cusp "$(cusp_cmd '')"
mkdir -p $R/shim; cat > $R/shim/cusp_cuda13_shim.h <<'SHIM'
// Compat shim for cusplibrary HEAD on CUDA 13's Thrust (passed with -include to BOTH builds):
// cusp/detail/memory.inl uses thrust::detail::minimum_system_t, which CUDA 13.0's Thrust does not define.
#pragma once
#include <thrust/iterator/detail/minimum_system.h>
THRUST_NAMESPACE_BEGIN
namespace detail {
template <typename... Ts> using minimum_system_t = typename minimum_system<Ts...>::type;
}
THRUST_NAMESPACE_END
SHIM
# Same files with a one-alias compat header force-included in BOTH builds ($R/shim/cusp_cuda13_shim.h).
want cusp_shim && sh_pool cusp_shim cusp "$(cusp_cmd "-include $R/shim/cusp_cuda13_shim.h")"

# ccminer: autotools (autogen.sh already run in src). configure picks gcc/g++/nvcc from PATH (mgb-* in mgb build).
# nvcc_ARCH overridden on the make line (its -gencode compute_52 is rejected by CUDA 13); the rules with hard-coded
# compute_30/35 (scrypt/*_kernel, salsa_kernel, titan_kernel) fail both ways. CCMINER_TARGETS limits the targets.
# Time budget (2 cores): all 62 host C/C++ objects + 24 of the ~150 .cu objects (list below); CCMINER_TARGETS=all for everything.
CCM_HOST=$(cd $SRC/ccminer && awk '/^am_ccminer_OBJECTS/,/^$/' Makefile.in | tr ' \t\\' '\n\n\n' | grep OBJEXT | sed 's/\$(OBJEXT)/o/' | grep -E '(^|/)ccminer-' | tr '\n' ' ')
CCM_CU="heavy/heavy.o heavy/cuda_hefty1.o heavy/cuda_bastion.o Algo256/cuda_fugue256.o Algo256/blake256.o Algo256/decred.o Algo256/blake2s.o cuda_groestlcoin.o blake2b.o cuda_checkhash.o skein.o lyra2/lyra2RE.o crypto/cryptonight.o crypto/wildkeccak.o JHA/jha.o quark/quarkcoin.o neoscrypt/cuda_neoscrypt.o equi/cuda_equi.o sha256/sha256d.o sia/sia.o x11/x11.o x16/x16r.o scrypt/salsa_kernel.o scrypt/nv_kernel2.o"
want ccminer && sh_pool ccminer ccminer './configure --with-cuda=$CUDAROOT && make -k -j2 nvcc_ARCH=-arch=sm_90 '"${CCMINER_TARGETS:-$CCM_HOST $CCM_CU}"
exit 0
