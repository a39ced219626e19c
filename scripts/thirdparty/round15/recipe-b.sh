#!/usr/bin/env bash
# Round r15: compile-only test of the mgb drop-in drivers (mgb-nvcc/mgb-cc/mgb-c++), adapted from round10/recipe.sh.
# Sources (git --git-dir=/work/.mirror/OWNER+NAME/repo archive HEAD | tar -x -C src/NAME):
#   QuEST-Kit/QuEST                 4d44ec81debdae20cb6ae988e400bf606180a65e -> src/QuEST
#   ingowald/cudaKDTree             57fb259a15c4056c325f08c47eece559a3d4f1fe -> src/cudaKDTree
#   e-ago/lulesh2-cuda-async        533b64d21afc2aef5be9fdb8cea1a0a1b6ffde61 -> src/lulesh2-cuda-async
#   maxbaird/luleshMultiGPU_MPI     f9d596581c9a72dfc261e2c0273d8532cb300e40 -> src/luleshMultiGPU_MPI
#   NVIDIA/multi-gpu-programming-models 9a600f5ea8f5e53614e30b7b36e9136107178dd8 -> src/mgpm
# Arch override (same both builds): CMake -DCMAKE_CUDA_ARCHITECTURES=90; Makefiles NVCC_APPEND_FLAGS=-arch=sm_90
# (their -arch=sm_35 is rejected by CUDA 13; the appended value wins, nvcc warns "incompatible redefinition" both ways).
# Results: analysis.txt / analysis_verbose.txt (python3 analyze.py [-v]); reproducers in repro/*/run.sh; pairs.txt.
# Run order used: ./recipe.sh cukd lulesh_async lulesh_mgpu; quest mgpm_*; cukd_tests (any subset by name).
set -u
R=/work/thirdparty/r15/b
MGB=/work/thirdparty/r15/mgb/bin
SRC=$R/src
LOGS=$R/logs
mkdir -p "$LOGS" "$R/build" "$R/bin"
ln -sfn "$MGB/mgb-nvcc" "$R/bin/nvcc"; ln -sfn "$MGB/mgb-c++" "$R/bin/g++"; ln -sfn "$MGB/mgb-cc" "$R/bin/gcc"
ln -sfn "$MGB/mgb-c++" "$R/bin/c++"; ln -sfn "$MGB/mgb-cc" "$R/bin/cc"
# CUDA_HOME-style root whose bin/nvcc is the drop-in (for Makefiles calling $(CUDA_HOME)/bin/nvcc)
mkdir -p "$R/cudaroot/bin"; ln -sfn "$MGB/mgb-nvcc" "$R/cudaroot/bin/nvcc"
for d in targets lib64 include nvvm; do ln -sfn /usr/local/cuda/$d "$R/cudaroot/$d"; done
export PATH=/usr/local/cuda/bin:$PATH
MGB_CMAKE=(-DCMAKE_CUDA_COMPILER=$MGB/mgb-nvcc -DCMAKE_C_COMPILER=$MGB/mgb-cc -DCMAKE_CXX_COMPILER=$MGB/mgb-c++)

want() { ((${#SEL[@]} == 0)) && return 0; local n; for n in "${SEL[@]}"; do [[ "$n" == "$1" ]] && return 0; done; return 1; }
SEL=("$@")

# cmake_pool NAME SRCDIR "CMAKE ARGS (both)" "TARGET..."   (one log per build; make -k so one failure does not hide others)
cmake_pool() {
  local name=$1 srcdir=$2 cargs=$3 t=$4 variant base bdir log venv start rc
  for variant in orig mgb; do
    base=$R/build/$variant/$name
    rm -rf "$base"; mkdir -p "$(dirname "$base")"; cp -a "$SRC/$srcdir" "$base"
    if [[ $variant == orig ]]; then bdir=build; extra=(); venv=""
    else bdir=build-mgb; extra=("${MGB_CMAKE[@]}"); rm -f "$LOGS/$name.driver.log"
      venv="MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$name.driver.log"; fi
    log=$LOGS/$name.$variant.log
    start=$(date +%s)
    echo "# cd $base; env $venv nice -n 5 cmake -S . -B $bdir -DCMAKE_CUDA_ARCHITECTURES=90 $cargs ${extra[*]} && env $venv nice -n 5 cmake --build $bdir --target $t -j2 -- -k" >"$log"
    (cd "$base" && env $venv nice -n 5 cmake -S . -B $bdir -DCMAKE_CUDA_ARCHITECTURES=90 $cargs "${extra[@]}" &&
       env $venv nice -n 5 cmake --build $bdir --target $t -j2 -- -k) >>"$log" 2>&1
    rc=$?; echo "# rc=$rc seconds=$(( $(date +%s) - start ))" >>"$log"; echo "rc=$rc" >>"$log"
    echo "$name $variant rc=$rc"
  done
}

# mk_pool NAME SRCDIR "ENV(both)" "ENV(mgb only, besides MGB_*)" MAKEARGS...   (PATH=$R/bin first for mgb)
mk_pool() {
  local name=$1 srcdir=$2 envs=$3 menvs=$4; shift 4
  local variant base log venv p start rc
  for variant in orig mgb; do
    base=$R/build/$variant/$name
    rm -rf "$base"; mkdir -p "$(dirname "$base")"; cp -a "$SRC/$srcdir" "$base"
    log=$LOGS/$name.$variant.log
    if [[ $variant == orig ]]; then venv="$envs"; p=$PATH
    else rm -f "$LOGS/$name.driver.log"; venv="$envs $menvs MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$name.driver.log"; p=$R/bin:$PATH; fi
    echo "# cd $base; PATH=$p env $venv nice -n 5 make -k -j2 $*" >"$log"
    start=$(date +%s)
    (cd "$base" && PATH=$p env $venv nice -n 5 make -k -j2 "$@") >>"$log" 2>&1
    rc=$?; echo "# rc=$rc seconds=$(( $(date +%s) - start ))" >>"$log"; echo "rc=$rc" >>"$log"
    echo "$name $variant rc=$rc"
  done
}

# QuEST: ENABLE_CUDA=ON, examples on; tests off (Catch2 would be downloaded; no network), no cuQuantum, no MPI.
want quest && cmake_pool quest QuEST "-DENABLE_CUDA=ON -DBUILD_EXAMPLES=ON" all
# cudaKDTree: default targets (cukd_sample, cukd_sampleHost, knn-float3-spatialkdtree; MPI samples if MPI found).
want cukd && cmake_pool cukd cudaKDTree "" all
# cudaKDTree tests (BUILD_ALL_TESTS=ON): a subset of testing/ and of the type/dimension matrix (2 CPU cores only)
want cukd_tests && cmake_pool cukd_tests cudaKDTree "-DBUILD_ALL_TESTS=ON" "cukdTestThrustSimpleInput cukdTestBitonicSimpleInput cukdTestInPlaceSimpleInput cukdTestPayloadSampleFromReadme cukdTestHostBuilderSimpleInput cukdTestBuildersSameResult cukdTestCompileKNN cukdTestCompileSpatialKNN cukdTestMultipleDefinitions cukdTestIssue5_thrust cukd_float3-knn-stackBased cukd_float3-fcp-cct cukd_float4-knn-stackFree-xd"

OMPI=/usr/lib/x86_64-linux-gnu/openmpi
# e-ago/lulesh2-cuda-async: needs libmp/gdsync/gdrapi (GPUDirect Async, not installed): comm.cc and link fail as written;
# make -k still compiles the four .cu objects. CUDA_HOME=/usr/local/cuda (orig) / $R/cudaroot (mgb), MPI_HOME=Open MPI.
want lulesh_async && mk_pool lulesh_async lulesh2-cuda-async/src "NVCC_APPEND_FLAGS=-arch=sm_90 MPI_HOME=$OMPI PREFIX=/usr/local CUDA_HOME=/usr/local/cuda" "CUDA_HOME=$R/cudaroot"
# maxbaird/luleshMultiGPU_MPI: always includes mpi.h; Open MPI include/lib dirs given on the make line (both builds).
want lulesh_mgpu && mk_pool lulesh_mgpu luleshMultiGPU_MPI "NVCC_APPEND_FLAGS=-arch=sm_90" "" MPI_INCLUDES=$OMPI/include MPI_LIBS=/usr/lib/x86_64-linux-gnu
# NVIDIA/multi-gpu-programming-models 9a600f5ea8f5e53614e30b7b36e9136107178dd8 -> src/mgpm: single-process Jacobi variants
# (streams, events, OpenMP threads, P2P, managed memory). Arch override: make BUILD_SM_ARCH=90 (both builds).
# As written (default HAVE_CUB, -std=c++14) every variant fails both ways: CUDA 13's CUB/Thrust/libcu++ require C++17
# (logs kept in logs/mgpm_default_cub/). Built with the Makefiles' own DISABLE_CUB=1 switch (both builds).
for d in single_gpu single_threaded_copy multi_threaded_copy multi_threaded_copy_overlap multi_threaded_p2p multi_threaded_p2p_opt multi_threaded_um; do
  want mgpm_$d && mk_pool mgpm_$d mgpm/$d "" "" BUILD_SM_ARCH=90 DISABLE_CUB=1
done
# MPI / NCCL variants (host jacobi.cpp through mpicxx; OMPI_CXX=g++ so Open MPI's wrapper takes g++ from PATH,
# i.e. mgb-c++ in the mgb build; NCCL from the CUDA toolkit: nccl.h in include/, libnccl in lib64/).
# mpi, mpi_overlap as written stop at jacobi.cpp's CUDA-aware-MPI #error (both builds; logs in logs/mgpm_mpi_default/):
# built with their Makefile switch SKIP_CUDA_AWARENESS_CHECK=1 (both builds).
for d in mpi mpi_overlap; do
  want mgpm_$d && mk_pool mgpm_$d mgpm/$d "OMPI_CXX=g++" "" BUILD_SM_ARCH=90 DISABLE_CUB=1 SKIP_CUDA_AWARENESS_CHECK=1
done
for d in nccl nccl_overlap nccl_graphs; do
  want mgpm_$d && mk_pool mgpm_$d mgpm/$d "OMPI_CXX=g++" "" BUILD_SM_ARCH=90 DISABLE_CUB=1
done
exit 0
