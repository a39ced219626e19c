#!/usr/bin/env bash
# Round 7, pool olcf: olcf/cuda-training-series @ 9cd77d539d85 (HEAD, 2021-10-13), extracted to
# /work/thirdparty/src/olcf by
#   git --git-dir=/work/.mirror/olcf+cuda-training-series/repo archive HEAD | tar -x -C /work/thirdparty/src/olcf
# No exercise has a Makefile/CMake: each is built by the nvcc line its readme gives (hw8's build_nvcc
# scripts are the same one-liners), compiling the *_solution.cu file instead of the exercise file,
# with the readme's -arch=sm_70 (or none) replaced by -arch=sm_90.
# Usage: recipe.sh [NAME...]   (no names: all). Builds each program as written and through mgb's drop-ins.
POOL=olcf
source /work/thirdparty/r7/common-recipe.sh
[[ -d $SRC/olcf ]] || { mkdir -p $SRC/olcf && git --git-dir=/work/.mirror/olcf+cuda-training-series/repo \
  archive HEAD | tar -x -C $SRC/olcf; }
E=olcf/exercises

# hw6 readme: `nvcc -o array_inc array_inc.cu`. CUDA 13 removed cudaMemPrefetchAsync(ptr, n, int device,
# stream); no -D restores it, so both builds get the same 2-line port to the cudaMemLocation form.
build_pair olcf-array-inc $E hw6 array_inc "sed -i \
  -e 's/cudaMemPrefetchAsync(h_array, ds\*sizeof(h_array\[0\]), 0);/cudaMemPrefetchAsync(h_array, ds*sizeof(h_array[0]), cudaMemLocation{cudaMemLocationTypeDevice, 0}, 0);/' \
  -e 's/cudaMemPrefetchAsync(h_array, ds\*sizeof(h_array\[0\]), cudaCpuDeviceId);/cudaMemPrefetchAsync(h_array, ds*sizeof(h_array[0]), cudaMemLocation{cudaMemLocationTypeHost, 0}, 0);/' \
  array_inc_solution.cu && grep -c cudaMemLocationType array_inc_solution.cu && "'$X_NVCC -arch=sm_90 -o array_inc array_inc_solution.cu'
# hw6 readme: `nvcc -o linked_list linked_list.cu`
build_pair olcf-linked-list $E hw6 linked_list '$X_NVCC -arch=sm_90 -o linked_list linked_list_solution.cu'
# hw7 readme: `nvcc -o overlap overlap.cu -DUSE_STREAMS`
build_pair olcf-overlap $E hw7 overlap '$X_NVCC -arch=sm_90 -o overlap overlap_solution.cu -DUSE_STREAMS'
# hw9 readme: `nvcc -arch=sm_70 -o task2 task2.cu -rdc=true -std=c++11`; CUDA 13's Thrust (it includes
# thrust/device_vector.h) needs C++17: -std=c++11 -> -std=c++17 (same for both builds).
build_pair olcf-coop-remove $E hw9 task2 '$X_NVCC -arch=sm_90 -o task2 task2_solution.cu -rdc=true -std=c++17'
# hw12 readme: `nvcc -arch=sm_70 task2.cu -o task2 -G -g -std=c++14` (debug build, as given)
build_pair olcf-ahs-atomic $E hw12 task2 '$X_NVCC -arch=sm_90 task2_solution.cu -o task2 -G -g -std=c++14'
# hw2 readme: `nvcc -o matrix_mul matrix_mul_shared.cu`
build_pair olcf-mmul-shared $E hw2 matrix_mul '$X_NVCC -arch=sm_90 -o matrix_mul matrix_mul_shared_solution.cu'
# hw13 README: `nvcc -arch=sm_70 axpy_stream_capture_with_fixme.cu -o axpy_stream_capture_with_fixme`
build_pair olcf-graph-capture $E hw13/Solutions axpy_stream_capture \
  '$X_NVCC -arch=sm_90 axpy_stream_capture_solution.cu -o axpy_stream_capture'

cat > "$R7/olcf/args.olcf.txt" <<'ARGS'
olcf-array-inc
olcf-linked-list
olcf-overlap
olcf-coop-remove
olcf-ahs-atomic 1073741824
olcf-mmul-shared
olcf-graph-capture
ARGS
cp "$R7/olcf/args.olcf.txt" "$PAIRS/args.olcf.txt"
