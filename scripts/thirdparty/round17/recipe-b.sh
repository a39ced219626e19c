#!/usr/bin/env bash
# Round r17 (engineer b): compile-only test of the mgb drop-in drivers (mgb-nvcc/mgb-cc/mgb-c++), from round16/recipe-b.sh.
# Sources (git --git-dir=/work/.mirror/OWNER+NAME/repo archive HEAD | tar -x -C src/NAME):
#   Mantevo/miniFE            c79e0f7f7afdd6c8191936efce7a668316159cc3 -> src/miniFE (cuda/ variant, cuda/src/Makefile)
#   akrizhevsky/cuda-convnet2 3238bf0367f63eb370e897b9e5714794cb67ddc2 -> src/cuda-convnet2 (nvmatrix, cudaconv3, cudaconvnet Makefiles)
# Arch override (same both builds, on the make line): miniFE NVCCFLAGS="-lineinfo -arch=sm_90" (its compute_35 is rejected by
#   CUDA 13); cuda-convnet2 GENCODE_FLAGS="-gencode arch=compute_90,code=sm_90".
# mgb builds: PATH=$R/bin (nvcc/gcc/g++/cc/c++ -> the drivers) first; for Makefiles calling $(CUDA_INSTALL_PATH)/bin/nvcc,
#   CUDA_INSTALL_PATH=$R/cudaroot (bin/nvcc -> mgb-nvcc, the rest -> /usr/local/cuda). MGB_STRICT=1, MGB_NVCC_LOG=logs/NAME.driver.log.
#   miniFE's CXX=mpicxx (Open MPI) runs `g++` from PATH, i.e. mgb-c++ in the mgb build.
# Usage: recipe.sh [POOL...]   (default: all pools in order). Logs: logs/NAME.{orig,mgb}.log, trees build/{orig,mgb}/NAME.
set -u
R=/work/thirdparty/r17/b
MGB=/work/thirdparty/r17/mgb/bin
SRC=$R/src
LOGS=$R/logs
mkdir -p "$LOGS" "$R/build" "$R/bin"
ln -sfn "$MGB/mgb-nvcc" "$R/bin/nvcc"; ln -sfn "$MGB/mgb-c++" "$R/bin/g++"; ln -sfn "$MGB/mgb-cc" "$R/bin/gcc"
ln -sfn "$MGB/mgb-c++" "$R/bin/c++"; ln -sfn "$MGB/mgb-cc" "$R/bin/cc"
mkdir -p "$R/cudaroot/bin"; ln -sfn "$MGB/mgb-nvcc" "$R/cudaroot/bin/nvcc"
for d in targets lib64 include nvvm; do ln -sfn /usr/local/cuda/$d "$R/cudaroot/$d"; done
export PATH=/usr/local/cuda/bin:$PATH

want() { ((${#SEL[@]} == 0)) && return 0; local n; for n in "${SEL[@]}"; do [[ "$n" == "$1" ]] && return 0; done; return 1; }
SEL=("$@")

# run_pool NAME SRCDIR SUBDIR "ENV(both)" "ENV(mgb only)" CMD...   (CMD run via bash -c in SUBDIR; PATH=$R/bin first for mgb)
run_pool() {
  local name=$1 srcdir=$2 sub=$3 envs=$4 menvs=$5; shift 5
  local variant base log venv p start rc
  for variant in ${VARIANTS:-orig mgb}; do
    base=$R/build/$variant/$name
    rm -rf "$base"; mkdir -p "$(dirname "$base")"; cp -a "$SRC/$srcdir" "$base"
    log=$LOGS/$name.$variant.log
    if [[ $variant == orig ]]; then venv="$envs"; p=$PATH
    else rm -f "$LOGS/$name.driver.log"; venv="$envs MGB_STRICT=${STRICT:-1} $menvs MGB_NVCC_LOG=$LOGS/$name.driver.log"; p=$R/bin:$PATH; fi
    echo "# cd $base/$sub; PATH=$p env $venv nice -n 5 bash -c '$*'" >"$log"
    start=$(date +%s)
    (cd "$base/$sub" && PATH=$p env $venv nice -n 5 bash -c "$*") >>"$log" 2>&1
    rc=$?; echo "# rc=$rc seconds=$(( $(date +%s) - start ))" >>"$log"; echo "rc=$rc" >>"$log"
    echo "$name $variant rc=$rc"
  done
}

# miniFE cuda/src: `make -k -j1` (all: get_common_files, generate_info_header, miniFE.x). MPI_HOME = Open MPI's dir (its
#   MPICFLAGS=-I$(MPI_HOME)/include). Link needs -lnvToolsExt (absent in CUDA 13: expected to fail both ways) and -lmpi_cxx.
want minife && run_pool minife miniFE cuda/src "" "" \
  'make -k -j1 "NVCCFLAGS=-lineinfo -arch=sm_90" MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi'
#   As written this fails both ways at main.cu (orig: nvToolsExt.h not found, CUDA 13 has only nvtx3/; mgb: clang cannot find
#   mpi.h, which the Makefile passes as -Xcompiler "-I$(MPI_HOME)/include": repro/xcompiler-include).
# minife_nvtx: same Makefile, same make line, both builds given the same environment so that it gets past both:
#   NVCC_APPEND_FLAGS=-I/usr/local/cuda/include/nvtx3 (CUDA 13's header-only nvToolsExt.h), CPATH=Open MPI include dir (so that the
#   rewriter's clang finds mpi.h too), LDFLAGS=-L$R/stub (an empty libnvToolsExt.a: CUDA 13 ships no libnvToolsExt).
want minife_nvtx && run_pool minife_nvtx miniFE cuda/src \
  "NVCC_APPEND_FLAGS=-I/usr/local/cuda/include/nvtx3 CPATH=/usr/lib/x86_64-linux-gnu/openmpi/include" "" \
  'make -k -j1 "NVCCFLAGS=-lineinfo -arch=sm_90" MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi LDFLAGS=-L'$R/stub
#   minife_nvtx fails both ways at main.cu: orig "perform_element_loop.hpp(293): error: identifier cudaThreadSetCacheConfig is
#   undefined" (removed in CUDA 13); mgb: mgb-rewrite aborts (replacement overlap, repro/raw-pointer-cast-overlap).
# minife_compat: as minife_nvtx plus -DcudaThreadSetCacheConfig=cudaDeviceSetCacheConfig in NVCC_APPEND_FLAGS (both builds), to get
#   the orig build to a binary. The mgb build still stops at the overlap under MGB_STRICT=1; minife_compat_nostrict (mgb only,
#   STRICT=0) shows what the fallback gives.
MF_ENV="CPATH=/usr/lib/x86_64-linux-gnu/openmpi/include"
MF_CMD='NVCC_APPEND_FLAGS="-I/usr/local/cuda/include/nvtx3 -DcudaThreadSetCacheConfig=cudaDeviceSetCacheConfig" make -k -j1 "NVCCFLAGS=-lineinfo -arch=sm_90" MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi LDFLAGS=-L'$R/stub
want minife_compat && run_pool minife_compat miniFE cuda/src "$MF_ENV" "" "$MF_CMD"
want minife_compat_nostrict && STRICT=0 VARIANTS=mgb run_pool minife_compat_nostrict miniFE cuda/src "$MF_ENV" "" "$MF_CMD"
# cuda-convnet2 (build.sh's order, each directory's Makefile, make -k -j1): util (numpy=1: libutilpy.so), nvmatrix, cudaconvnet, then
#   cudaconv3 time-boxed (its 4 big template TUs take long here). Same both builds: CUDA_SDK_PATH=src/cuda-samples (NVIDIA/cuda-samples
#   c94ff366aed18c797b8a85dfaac7817b0228b420 Common/ as common/inc: helper_cuda.h; CUDA 13 has no samples), python3.11 + Debian's
#   numpy headers (its python2-era pyconvnet.cu is expected to fail), ATLAS_LIB_PATH=/usr/lib/x86_64-linux-gnu,
#   GENCODE_FLAGS=-gencode arch=compute_90,code=sm_90 on the make line. NVCC=$(CUDA_INSTALL_PATH)/bin/nvcc: CUDA_INSTALL_PATH
#   is /usr/local/cuda (orig) / $R/cudaroot (mgb); GCC/CC=g++ from PATH.
CC2_ENV="CUDA_SDK_PATH=$R/src/cuda-samples PYTHON_INCLUDE_PATH=/usr/include/python3.11 NUMPY_INCLUDE_PATH=/usr/lib/python3/dist-packages/numpy/core/include/numpy ATLAS_LIB_PATH=/usr/lib/x86_64-linux-gnu"
CC2_CMD='G="GENCODE_FLAGS=-gencode arch=compute_90,code=sm_90"; rc=0; (cd util && make -k -j1 numpy=1) || rc=1; (cd nvmatrix && make -k -j1 "$G") || rc=1
  (cd cudaconvnet && make -k -j1 "$G") || rc=1; (cd cudaconv3 && timeout ${CC2_T:-420} make -k -j1 "$G") || rc=1; exit $rc'
want convnet2 && run_pool convnet2 cuda-convnet2 . "$CC2_ENV CUDA_INSTALL_PATH=/usr/local/cuda" "CUDA_INSTALL_PATH=$R/cudaroot" "$CC2_CMD"
# minife_probe: NOT the project as written - src/miniFE-probe = miniFE with every thrust::raw_pointer_cast(&V[0]) in cuda/src/*.hpp
#   replaced by thrust::raw_pointer_cast(V.data()) (same lines), to see what lies behind the rewriter abort; same make line as
#   minife_compat:  sed -i 's/thrust::raw_pointer_cast(&\([A-Za-z_][A-Za-z_0-9.>-]*\)\[0\])/thrust::raw_pointer_cast(\1.data())/g'
want minife_probe && run_pool minife_probe miniFE-probe cuda/src "$MF_ENV" "" "$MF_CMD"
