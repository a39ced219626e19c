#!/usr/bin/env bash
# Round 7, pool poly: cavazos-lab/PolyBench-ACC @ 70ea4ca9047d, CUDA/ extracted to /work/thirdparty/src/polybench
#   (git --git-dir=/work/.mirror/cavazos-lab+PolyBench-ACC/repo archive HEAD | tar -x -C /work/thirdparty/src/polybench)
# Usage: recipe.sh [NAME...]
# Build: each benchmark's own Makefile + CUDA/utilities/common.mk, whose rule is
#   nvcc -O3 ${CUFILES} -I${PATH_TO_UTILS} -o ${EXECUTABLE}
# `nvcc` is hard-coded: the real one from PATH, mgb's through shim/mgb/nvcc -> mgb-nvcc. The only
# variable a user can set is CUFILES, so the extra flags ride on it: -arch=sm_90, the dataset size
# (polybench's -DSMALL_DATASET etc.; STANDARD is the default), and the one -D CUDA 13 needs:
# cudaThreadSynchronize was removed -> -DcudaThreadSynchronize=cudaDeviceSynchronize.
# Every .cu defines RUN_ON_CPU itself, so each run prints GPU time, CPU time and the CPU-vs-GPU
# "Non-Matching CPU-GPU Outputs Beyond Error Threshold of 0.05 Percent: N" line.
POOL=poly
source /work/thirdparty/r7/common-recipe.sh
F='-arch=sm_90 -DcudaThreadSynchronize=cudaDeviceSynchronize'
build_pair poly-2mm         polybench/CUDA linear-algebra/kernels/2mm         2mm.exe         "make CUFILES='2mm.cu $F'"
build_pair poly-atax        polybench/CUDA linear-algebra/kernels/atax        atax.exe        "make CUFILES='atax.cu $F'"
build_pair poly-correlation polybench/CUDA datamining/correlation             correlation.exe "make CUFILES='correlation.cu $F -DSMALL_DATASET'"
build_pair poly-fdtd2d      polybench/CUDA stencils/fdtd-2d                   fdtd2d.exe      "make CUFILES='fdtd2d.cu $F -DSMALL_DATASET'"
build_pair poly-gramschmidt polybench/CUDA linear-algebra/solvers/gramschmidt gramschmidt.exe "make CUFILES='gramschmidt.cu $F -DSMALL_DATASET'"
build_pair poly-lu          polybench/CUDA linear-algebra/solvers/lu          lu.exe          "make CUFILES='lu.cu $F -DSMALL_DATASET'"
cat > "$R7/poly/args.poly.txt" <<'ARGS'
poly-2mm
poly-atax
poly-correlation
poly-fdtd2d
poly-gramschmidt
poly-lu
ARGS
cp "$R7/poly/args.poly.txt" "$PAIRS/args.poly.txt"
