#!/usr/bin/env bash
# Round 7, pool app. Sources extracted with git archive from the fetched mirrors:
#   serban/kmeans @ 83e76bf685b6                      -> /work/thirdparty/src/kmeans
#   StarCloudes/cuda @ 0943dd7c4fd4                   -> /work/thirdparty/src/starcl   (assignment02: heat_sim)
#   wbing520/ai-performance-engineering @ b427e2791c42 -> /work/thirdparty/src/aiperf  (only code/ch10: archive HEAD code/ch10)
# Usage: recipe.sh [NAME...]
POOL=app
source /work/thirdparty/r7/common-recipe.sh

# kmeans: its Makefile's NVCC variable; arch through DFLAGS (its empty "defines" variable, in CFLAGS
# -> NVCCFLAGS). The cuda target links cuda_main.cu cuda_io.cu cuda_wtime.cu cuda_kmeans.cu.
build_pair app-kmeans kmeans . cuda_main 'make cuda NVCC=$X_NVCC DFLAGS=-arch=sm_90'
# heat_sim: Makefile hard-codes `nvcc` (PATH: real / shim/mgb/nvcc); arch through its CUDACFLAGS variable
# (set on the command line with the Makefile's own BLOCK_X/BLOCK_Y defaults). main.cu + heat_gpu.cu + heat_cpu.cpp.
build_pair app-heat starcl/assignment02 . heat_sim \
  "make heat_sim CUDACFLAGS='-DBLOCK_X=16 -DBLOCK_Y=16 -arch=sm_90'"
# ch10 Makefile: NVCC and NVCC_FLAGS are its variables; its NVCC_FLAGS hard-code sm_100 gencode, so a
# Hopper user sets NVCC_FLAGS (same flags, -arch=sm_90). cluster_group_blackwell is an explicit target.
CH10F='-O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -DCUDA_VERSION=13.0 -Xcompiler -fPIC'
build_pair app-cluster-sum aiperf/code/ch10 . cluster_group_blackwell \
  "make cluster_group_blackwell NVCC=\$X_NVCC NVCC_FLAGS='$CH10F'"
build_pair app-coop-persist aiperf/code/ch10 . cooperative_persistent_kernel \
  "make cooperative_persistent_kernel NVCC=\$X_NVCC NVCC_FLAGS='$CH10F'"

# Inputs: kmeans' own binary data set (texture17695.bin, 1.4 MB); it writes NAME.cluster_centres and
# NAME.membership beside its input.
if want app-kmeans; then
  mkdir -p "$PAIRS/data/app-kmeans"
  cp "$SRC/kmeans/Image_data/texture17695.bin" "$PAIRS/data/app-kmeans/"
  rm -f "$PAIRS/data/app-kmeans/"*.cluster_centres "$PAIRS/data/app-kmeans/"*.membership
fi
cat > "$R7/app/args.app.txt" <<'ARGS'
app-kmeans -o -b -n 128 -t 0.0001 -i data/app-kmeans/texture17695.bin
app-heat -n 1024 -m 1024 -p 200 -t
app-cluster-sum
app-coop-persist
ARGS
cat > "$R7/app/files.app.txt" <<'FILES'
app-kmeans data/app-kmeans/texture17695.bin.cluster_centres data/app-kmeans/texture17695.bin.membership
FILES
cp "$R7/app/args.app.txt" "$PAIRS/args.app.txt"; cp "$R7/app/files.app.txt" "$PAIRS/files.app.txt"
