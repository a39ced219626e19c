#!/usr/bin/env bash
# Round 7, pool cccl: NVIDIA/cccl examples at tag v3.0.1 = f19d875da0d8 (the CCCL version bundled in
# CUDA 13.0: include/cccl/cuda/std/__cccl/version.h says CCCL_VERSION 3000001). HEAD (571f2fc3bc53,
# 2026-08) examples use <cuda/buffer>, <cuda/memory_pool>, <cuda/devices>, which CUDA 13.0's headers lack,
# so the examples matching the toolkit's own CCCL are used. Extracted to /work/thirdparty/src/cccl by:
#   git --git-dir=/work/.mirror/NVIDIA+cccl/repo archive v3.0.1 thrust/examples cub/examples cub/test c2h \
#     | tar -x -C /work/thirdparty/src/cccl
# (cub/test/test_util.h and c2h/include are needed by the CUB examples' "../../test/test_util.h").
# Headers: the toolkit's bundled Thrust/CUB (nvcc finds include/cccl itself); no CCCL checkout on -I.
# Usage: recipe.sh [NAME...]   (no names: all). Builds each program as written and through mgb's drop-ins.
POOL=cccl
source /work/thirdparty/r7/common-recipe.sh
[[ -d $SRC/cccl ]] || { mkdir -p $SRC/cccl && git --git-dir=/work/.mirror/NVIDIA+cccl/repo archive v3.0.1 \
  thrust/examples cub/examples cub/test c2h | tar -x -C $SRC/cccl; }

# Thrust examples have no standalone build (only CCCL's CMake test harness): one nvcc line each.
build_pair cccl-thrust-stream cccl thrust/examples/cuda explicit_cuda_stream \
  '$X_NVCC -O2 -arch=sm_90 explicit_cuda_stream.cu -o explicit_cuda_stream'
build_pair cccl-thrust-cachealloc cccl thrust/examples/cuda custom_temporary_allocation \
  '$X_NVCC -O2 -arch=sm_90 custom_temporary_allocation.cu -o custom_temporary_allocation'
build_pair cccl-thrust-stats cccl thrust/examples summary_statistics \
  '$X_NVCC -O2 -arch=sm_90 summary_statistics.cu -o summary_statistics'
build_pair cccl-thrust-setops cccl thrust/examples set_operations \
  '$X_NVCC -O2 -arch=sm_90 set_operations.cu -o set_operations'
# cpp_integration: README gives 3 commands (nvcc -c, g++ -c, nvcc link); our tiny Makefile runs them.
build_pair cccl-thrust-cppint cccl thrust/examples/cpp_integration tester \
  'cp /work/thirdparty/r7/cccl/Makefile.cpp_integration Makefile && make NVCC=$X_NVCC CXX=$X_CXX'
# CUB examples: one nvcc line each; -I c2h/include for test_util.h's <c2h/...> includes.
build_pair cccl-cub-radixsort cccl cub/examples/device example_device_radix_sort \
  '$X_NVCC -O2 -arch=sm_90 -I../../../c2h/include example_device_radix_sort.cu -o example_device_radix_sort'
build_pair cccl-cub-blockscan cccl cub/examples/block example_block_scan \
  '$X_NVCC -O2 -arch=sm_90 -I../../../c2h/include example_block_scan.cu -o example_block_scan'

cat > "$R7/cccl/args.cccl.txt" <<'ARGS'
cccl-thrust-stream
cccl-thrust-cachealloc
cccl-thrust-stats
cccl-thrust-setops
cccl-thrust-cppint
cccl-cub-radixsort --n=10000000
cccl-cub-blockscan --i=2000 --grid-size=1024
ARGS
cp "$R7/cccl/args.cccl.txt" "$PAIRS/args.cccl.txt"
