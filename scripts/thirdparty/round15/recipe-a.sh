#!/usr/bin/env bash
# Round r15/a: compile-only test of the mgb drop-in drivers (mgb-nvcc/mgb-cc/mgb-c++), adapted from
# /work/main/scripts/thirdparty/round10/recipe.sh.
# Pool: accel-sim/gpu-app-collection 52c11fbccbe11fefd8bb27c1ec64ecfd1828b088
#   (fetched bare repo /work/.mirror/accel-sim+gpu-app-collection/repo; `git archive` fails on missing blobs
#    (cudnn/mnist/.../libfreeimage.a, parboil spmv bcsstk32.mtx), so every blob of the used subtrees was extracted
#    one by one with `git cat-file blob` into $R/src/src/... ; see $R/tree.txt and $R/extract.log).
# Suites used: pannotia, lonestargpu-2.0, parboil, GPU_Microbenchmark, custom-apps, microbench, proxy-apps-doe,
#   cub (examples), tensorcore-microbenchmarks (Turing/FragmentDistribution) + src/cuda/common (cutil + common.mk).
# Arch override (same for both builds): all GENCODE_SM* / GENCODE_ARCH make variables blanked on the make command line
#   (cub: sm=900, which selects no -gencode) and NVCC_APPEND_FLAGS=-arch=sm_90 in the environment; tensorcore Turing
#   hard-codes -arch=sm_75 in its rule (supported by CUDA 13): left as is, no NVCC_APPEND_FLAGS there.
# Drop-ins: PATH=$R/bin first (nvcc,g++,c++,gcc,cc -> mgb-*); suites naming $(CUDA_INSTALL_PATH)/bin/nvcc get
#   CUDA_INSTALL_PATH=$R/cudaroot (bin/nvcc -> mgb-nvcc; include, lib64, targets, nvvm -> /usr/local/cuda's).
# The CUDA SDK 4.2 the suites expect (NVIDIA_COMPUTE_SDK_LOCATION) is faked with the collection's own
#   src/cuda/common/{inc,lib} (cutil.h, libcutil_x86_64.a) as $R/sdk/4.2/C/common/inc, $R/sdk/4.2/C/lib.
#   Also gpuwattch-ubench (11 benchmarks) and cudnn/mnist (sections at the end).
# Caveat found in this round: mgb-nvcc's Clang parse does not read NVCC_APPEND_FLAGS (repro/nvcc_append_flags_ignored);
#   the arch given there reaches the real nvcc only, which made no difference to the programs here.
# Usage: recipe.sh [NAME...]   (no names: everything except the supplementary cudnn_mnist_exec and tsync sets,
#   which are selected by those names). Expects an empty $R/build (copies are made once; make would find targets
#   up to date in a second run). Summary: analyze.py [-v] (results.txt, results_verbose.txt).
set -u
R=/work/thirdparty/r15/a
MGB=/work/thirdparty/r15/mgb/bin
SRC=$R/src/src/cuda
LOGS=$R/logs
mkdir -p "$LOGS" "$R/build" "$R/bin" "$R/cudaroot/bin"
for c in nvcc; do ln -sfn "$MGB/mgb-nvcc" "$R/bin/$c"; done
for c in g++ c++; do ln -sfn "$MGB/mgb-c++" "$R/bin/$c"; done
for c in gcc cc; do ln -sfn "$MGB/mgb-cc" "$R/bin/$c"; done
ln -sfn "$MGB/mgb-nvcc" "$R/cudaroot/bin/nvcc"
for d in targets lib64 include nvvm; do ln -sfn /usr/local/cuda/$d "$R/cudaroot/$d"; done
mkdir -p "$R/sdk/4.2/C/common"
ln -sfn "$SRC/common/inc" "$R/sdk/4.2/C/common/inc"; ln -sfn "$SRC/common/lib" "$R/sdk/4.2/C/lib"
ln -sfn "$R/sdk/4.2/C/common" "$R/sdk/4.2/common"
export PATH=/usr/local/cuda/bin:$PATH
ARCHVARS=(GENCODE_SM10= GENCODE_SM13= GENCODE_SM20= GENCODE_SM30= GENCODE_SM35= GENCODE_SM50= GENCODE_SM60=
          GENCODE_SM61= GENCODE_SM62= GENCODE_SM70= GENCODE_SM75= GENCODE_ARCH=)
APPEND="NVCC_APPEND_FLAGS=-arch=sm_90"

want() { ((${#SEL[@]} == 0)) && return 0; local n; for n in "${SEL[@]}"; do [[ "$n" == "$1" ]] && return 0; done; return 1; }
SEL=("$@")

# One copy of the used suites per variant: $R/build/{orig,mgb}/cuda (made once; `fresh` recopies).
prep() {
  local v
  for v in orig mgb; do
    if [[ ! -d $R/build/$v/cuda ]]; then
      mkdir -p $R/build/$v/cuda
      for s in common pannotia lonestargpu-2.0 parboil GPU_Microbenchmark custom-apps microbench proxy-apps-doe cub; do
        cp -a "$SRC/$s" "$R/build/$v/cuda/$s"; done
      mkdir -p $R/build/$v/cuda/tensorcore-microbenchmarks/Turing
      cp -a "$SRC/tensorcore-microbenchmarks/Turing/FragmentDistribution" $R/build/$v/cuda/tensorcore-microbenchmarks/Turing/
    fi
  done
}
prep

# run1 NAME VARIANT RELDIR "ENV(both)" CMD... : run CMD in $R/build/VARIANT/cuda/RELDIR, log to logs/NAME.VARIANT.log
run1() {
  local name=$1 v=$2 rel=$3 envs=$4; shift 4
  local base=$R/build/$v/${TREE:-cuda} log=$LOGS/$name.$v.log p cip venv start rc ea
  if [[ $v == orig ]]; then p=$PATH; cip=/usr/local/cuda; venv="$envs"
  else rm -f "$LOGS/$name.driver.log"; p=$R/bin:$PATH; cip=$R/cudaroot
       venv="$envs MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$name.driver.log"; fi
  venv="BINDIR=$base/bin BINSUBDIR=release NVIDIA_COMPUTE_SDK_LOCATION=$R/sdk/4.2 CUDA_INSTALL_PATH=$cip $venv"
  echo "# cd $base/$rel; PATH=$p env $venv nice -n 5 $*" >"$log"
  start=$(date +%s)
  read -ra ea <<<"$venv"; ea=("${ea[@]//\~/ }")   # '~' in an ENV word stands for a space
  (cd "$base/$rel" && PATH=$p env "${ea[@]}" nice -n 5 "$@") >>"$log" 2>&1
  rc=$?; echo "# rc=$rc seconds=$(( $(date +%s) - start ))" >>"$log"
  echo "$name $v rc=$rc"
}
# mk NAME RELDIR "ENV" MAKEARGS... : both variants, make -j2 with the arch variables blanked
mk() { local name=$1 rel=$2 envs=$3 v; shift 3; want "$name" || return 0
  for v in orig mgb; do run1 "$name" $v "$rel" "$envs" make -j2 "${ARCHVARS[@]}" "$@"; done; }

# pannotia (Makefiles: `nvcc`/`g++` by name; VARIANT selects the program; binaries into $BINDIR/release)
mk pan_bc            pannotia/bc        "$APPEND"
mk pan_color_max     pannotia/color     "$APPEND VARIANT=MAX"
mk pan_color_maxmin  pannotia/color     "$APPEND VARIANT=MAXMIN"
mk pan_fw            pannotia/fw        "$APPEND VARIANT=DEFAULT"
mk pan_fw_block      pannotia/fw        "$APPEND VARIANT=BLOCK"
mk pan_mis           pannotia/mis       "$APPEND"
mk pan_pagerank      pannotia/pagerank  "$APPEND VARIANT=DEFAULT"
mk pan_pagerank_spmv pannotia/pagerank  "$APPEND VARIANT=SPMV"
mk pan_sssp_csr      pannotia/sssp      "$APPEND VARIANT=CSR"
mk pan_sssp_ell      pannotia/sssp      "$APPEND VARIANT=ELL"

# lonestargpu-2.0 (NVCC := nvcc by name; top Makefile target APP builds the app and its variants)
for a in bfs bh dmr mst pta sp sssp; do mk ls_$a lonestargpu-2.0 "$APPEND" $a; done

# GPU_Microbenchmark (one Makefile per benchmark, CC := nvcc by name)
for d in l1_bw_32f l1_bw_64f l1_bw_128 l1_lat l2_bw_32f l2_bw_64f l2_bw_128 l2_lat mem_bw mem_lat shared_bw shared_lat \
         MaxFlops l1_shared_bw l1_bw_32f_unroll l1_bw_32f_unroll_large \
         Atomic_ubench/Atomic_add/Atomic_add_bw Atomic_ubench/Atomic_add/Atomic_add_bw_conflict Atomic_ubench/Atomic_add/Atomic_add_lat; do
  mk gm_$(basename $d) GPU_Microbenchmark/$d "$APPEND"
done

# custom-apps and proxy-apps lulesh: the SDK-style src/cuda/common/common.mk ($(CUDA_INSTALL_PATH)/bin/nvcc, g++/gcc by name)
mk ca_spmv       custom-apps/shoc-modified-spmv     "$APPEND"
mk ca_kmeans     custom-apps/rodinia-kmn-no-tex     "$APPEND"
mk ca_matrixmul  custom-apps/sdk-matrixMul-modified "$APPEND"
mk px_lulesh     proxy-apps-doe/lulesh              "$APPEND"
# proxy-apps xsbench (makefile: GCC = nvcc by name), comd (Makefile), minife_matvec_ell (Makefile), cns (compile.bash: nvcc by name)
mk px_xsbench    proxy-apps-doe/xsbench             "$APPEND"
mk px_comd       proxy-apps-doe/comd                "$APPEND"
mk px_minife     proxy-apps-doe/minife_matvec_ell   "$APPEND"
if want px_cns; then for v in orig mgb; do run1 px_cns $v proxy-apps-doe/cns "$APPEND" bash ./compile.bash; done; fi

# microbench (the collection builds target cuda-$(CUDA_VERSION_MAJOR); the Makefile stops at cuda-11: cuda-11 used)
mk mb_oo_vfunc microbench "$APPEND" cuda-11

# parboil: what `./parboil compile BENCH cuda` runs (driver: make in benchmarks/BENCH with these variables), called directly
for b in bfs cutcp histo lbm mri-gridding mri-q sad sgemm spmv stencil tpacf; do
  want pb_$b || continue
  for v in orig mgb; do
    P=$R/build/$v/cuda/parboil
    mkdir -p $P/benchmarks/$b/build/cuda_default
    run1 pb_$b $v parboil/benchmarks/$b "$APPEND" make -j2 "${ARCHVARS[@]}" -f $P/common/mk/Makefile PARBOIL_ROOT=$P PLATFORM=default \
      SRCDIR=$P/benchmarks/$b/src/cuda BUILDDIR=$P/benchmarks/$b/build/cuda_default BIN=$P/benchmarks/$b/build/cuda_default/$b default
  done
done

# cub examples (cub/common.mk: NVCC = `which nvcc`; sm=900 selects no -gencode of its list)
mk cub_block  cub/examples/block  "$APPEND" sm=900 example_block_reduce example_block_scan
mk cub_device cub/examples/device "$APPEND" sm=900 example_device_reduce example_device_scan

# tensorcore Turing fragment distribution (rule: nvcc -arch=sm_75 by name; 18 programs)
mk tc_turing_frag tensorcore-microbenchmarks/Turing/FragmentDistribution ""
# gpuwattch-ubench (SDK-style src/cuda/common/common.mk via ../../../common; the suite's `common` step,
# ./replace_iterations.sh HW, fills REPLACE_ITERATIONS/REPLACE_FLAGS in place: run once per copy).
for v in orig mgb; do
  if [[ ! -d $R/build/$v/cuda/gpuwattch-ubench ]]; then
    cp -a "$SRC/gpuwattch-ubench" $R/build/$v/cuda/gpuwattch-ubench
    (cd $R/build/$v/cuda/gpuwattch-ubench && ./replace_iterations.sh HW) > $LOGS/gw_replace_iterations.$v.out 2>&1
  fi
done
for d in functional_benchmarks/BE_SFU_SIN functional_benchmarks/BE_SP_INT_DIV memories_benchmarks/l1r2 \
         memories_benchmarks/BE_MEM_SHRD_Acss memories_benchmarks/BE_MEM_CNST_Acss memories_benchmarks/BE_TEXTURE_ACCESS_2 \
         dram_benchmarks/dram_r1 mix_benchmarks/mix1 mix_benchmarks/PP_FP_MEM active_cores/BE_SP_FP_MUL1 \
         branching_benchmarks/BE_SP_FP_ADD_l1; do
  mk gw_$(basename $d) gpuwattch-ubench/$d "$APPEND"
done
# cudnn/mnist (CUDA-samples-style Makefile: NVCC := $(CUDA_PATH)/bin/nvcc -ccbin g++, SMS = 70 -> SMS=90 on the
# command line; the FreeImage static library is a missing blob in the snapshot and cudnn_static_v7 does not exist,
# so the link fails either way: compile steps compared).
if want cudnn_mnist; then
  for v in orig mgb; do
    [[ -d $R/build/$v/cuda/cudnn ]] || cp -a "$SRC/cudnn" $R/build/$v/cuda/cudnn
    if [[ $v == orig ]]; then cp_=/usr/local/cuda; else cp_=$R/cudaroot; fi
    run1 cudnn_mnist $v cudnn/mnist "CUDA_PATH=$cp_" make -j2 SMS=90
  done
fi
# Supplementary: the Makefile waives the build (EXEC = @echo) when FreeImage is missing; EXEC= makes it run the
# compile steps (fp16_dev.cu via nvcc -ccbin g++, fp16_emu.cpp and mnistCUDNN.cpp via g++); the link fails both ways.
if ((${#SEL[@]} > 0)) && want cudnn_mnist_exec; then
  for v in orig mgb; do
    if [[ $v == orig ]]; then cp_=/usr/local/cuda; else cp_=$R/cudaroot; fi
    (cd $R/build/$v/cuda/cudnn/mnist && rm -f *.o mnistCUDNN)
    run1 cudnn_mnist_exec $v cudnn/mnist "CUDA_PATH=$cp_" make -j2 SMS=90 EXEC=
  done
fi

# Supplementary (NOT part of the as-written comparison): the programs whose only as-written error under CUDA 13 is
# the removed cudaThreadSynchronize, rebuilt in separate copies ($R/build/{orig,mgb}/cuda_tsync) with
# -DcudaThreadSynchronize=cudaDeviceSynchronize added to NVCC_APPEND_FLAGS for BOTH builds (no source edited),
# so that orig and mgb become comparable. Names carry the suffix _tsync.
if ((${#SEL[@]} > 0)) && want tsync; then
  TREE=cuda_tsync
  for v in orig mgb; do
    if [[ ! -d $R/build/$v/$TREE ]]; then mkdir -p $R/build/$v/$TREE
      for s in common pannotia lonestargpu-2.0 parboil; do cp -a "$SRC/$s" "$R/build/$v/$TREE/$s"; done; fi
  done
  TS="NVCC_APPEND_FLAGS=-arch=sm_90~-DcudaThreadSynchronize=cudaDeviceSynchronize"
  SEL=()
  mk pan_bc_tsync            pannotia/bc        "$TS"
  mk pan_color_max_tsync     pannotia/color     "$TS VARIANT=MAX"
  mk pan_color_maxmin_tsync  pannotia/color     "$TS VARIANT=MAXMIN"
  mk pan_fw_tsync            pannotia/fw        "$TS VARIANT=DEFAULT"
  mk pan_fw_block_tsync      pannotia/fw        "$TS VARIANT=BLOCK"
  mk pan_mis_tsync           pannotia/mis       "$TS"
  mk pan_pagerank_tsync      pannotia/pagerank  "$TS VARIANT=DEFAULT"
  mk pan_pagerank_spmv_tsync pannotia/pagerank  "$TS VARIANT=SPMV"
  mk pan_sssp_csr_tsync      pannotia/sssp      "$TS VARIANT=CSR"
  mk pan_sssp_ell_tsync      pannotia/sssp      "$TS VARIANT=ELL"
  for a in bh dmr mst sp; do mk ls_${a}_tsync lonestargpu-2.0 "$TS" $a; done
  for b in cutcp lbm mri-q; do
    for v in orig mgb; do P=$R/build/$v/$TREE/parboil; mkdir -p $P/benchmarks/$b/build/cuda_default
      run1 pb_${b}_tsync $v parboil/benchmarks/$b "$TS" make -j2 "${ARCHVARS[@]}" -f $P/common/mk/Makefile PARBOIL_ROOT=$P \
        PLATFORM=default SRCDIR=$P/benchmarks/$b/src/cuda BUILDDIR=$P/benchmarks/$b/build/cuda_default BIN=$P/benchmarks/$b/build/cuda_default/$b default
    done
  done
fi
# Supplementary 2: the same lonestar _tsync builds with MGB_ROOT set to the suite's top (the remedy the
# "outside --root" warning names) for the mgb build; copies in $R/build/{orig,mgb}/cuda_tsync_root. Names *_tsync_root.
if ((${#SEL[@]} > 0)) && want tsync_root; then
  TREE=cuda_tsync_root
  for v in orig mgb; do
    if [[ ! -d $R/build/$v/$TREE ]]; then mkdir -p $R/build/$v/$TREE
      for s in common lonestargpu-2.0; do cp -a "$SRC/$s" "$R/build/$v/$TREE/$s"; done; fi
  done
  TS="NVCC_APPEND_FLAGS=-arch=sm_90~-DcudaThreadSynchronize=cudaDeviceSynchronize"
  for a in dmr mst sp; do
    run1 ls_${a}_tsync_root orig lonestargpu-2.0 "$TS" make -j2 "${ARCHVARS[@]}" $a
    run1 ls_${a}_tsync_root mgb lonestargpu-2.0 "$TS MGB_ROOT=$R/build/mgb/$TREE/lonestargpu-2.0" make -j2 "${ARCHVARS[@]}" $a
  done
fi
exit 0
