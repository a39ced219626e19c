#!/usr/bin/env bash
# Round r10: compile-only test of the mgb drop-in drivers (mgb-nvcc/mgb-cc/mgb-c++), adapted from r9/recipe.sh.
# Pools (sources extracted with `git --git-dir=/work/.mirror/OWNER+NAME/repo archive HEAD [-- paths] | tar -x -C src/NAME`):
#   brucefan1983/CUDA-Programming    8b6c96ba30fafeb3f71c74b2abb18a6bf849822d -> src/CUDA-Programming
#        (src/13-md/{cpp,force-only,whole-code}: Makefiles, `nvcc` by name)
#   ahmet-f-gumustas/Cuda-Programming 228cff8e15a397837aabdfe88bd8d6993bce9a92 -> src/Cuda-Programming-ahmet
#        (only top dirs 01_*,12.-22.,13. archived: full archive fails on a missing blob 05_.../assets/lockstep.png)
#        CMake projects 14,15,16,18,20,21,22 used.
#   chongchen1999/cuda-kernels       de17017c9fb68a6f4392a6960875a5cafde38f04 -> src/cuda-kernels-chongchen
#        (top CMakeLists.txt is empty; only gemm/reference/std2/Makefile used: `$(CUDA_PATH)/bin/nvcc`, `g++` by name;
#         CUDA_PATH=/usr/local/cuda for orig, CUDA_PATH=$R/cudaroot (bin/nvcc -> mgb-nvcc, rest -> /usr/local/cuda) and
#         PATH=$R/bin (g++ -> mgb-c++) for mgb)
#   xlhu19/cuda_examples             f66df8b9a770db30ed6dc3868ad0d0129e7d949e -> src/cuda_examples-xlhu19
#        (cuda_memory/Makefile: `nvcc -arch=sm_32`, rejected by CUDA 13 -> NVCC_APPEND_FLAGS=-arch=sm_90 both builds)
#   arrzhev/cuda-kernels             51728eeeb0457a838fa5d1b9b0548bb1248d88e4 -> src/cuda-kernels-arrzhev (CMake, 8 targets)
# Architecture overrides (same for both builds):
#  - every CMake build: -DCMAKE_CUDA_ARCHITECTURES=90 (projects 14,16,18,20 set CMAKE_CUDA_ARCHITECTURES as a normal
#    variable to 75..89, 15 sets the target property to 75;86;89, 21 adds -arch=sm_89: all supported by CUDA 13, left as is).
#  - 13-md/cpp makefile uses -arch=sm_70 (rejected by CUDA 13): both builds run with NVCC_APPEND_FLAGS=-arch=sm_90.
#    force-only and whole-code use sm_75 (supported): no override.
set -u
R=/work/thirdparty/r10
MGB=/work/main/build/rewriter
SRC=$R/src
LOGS=$R/logs
mkdir -p "$LOGS" "$R/build" "$R/bin"
# For Makefiles that call `nvcc` by name: a directory holding nvcc -> mgb-nvcc.
ln -sfn "$MGB/mgb-nvcc" "$R/bin/nvcc"
export PATH=/usr/local/cuda/bin:$PATH

MGB_CMAKE=(-DCMAKE_CUDA_COMPILER=$MGB/mgb-nvcc -DCMAKE_C_COMPILER=$MGB/mgb-cc -DCMAKE_CXX_COMPILER=$MGB/mgb-c++)

# cmake_pool POOLKEY SRCDIR PREFIX "ENV..." TARGET...
cmake_pool() {
  local key=$1 srcdir=$2 prefix=$3 envs=$4; shift 4
  local variant base bdir log t name start rc cfgrc
  for variant in orig mgb; do
    base=$R/build/$variant/$key
    rm -rf "$base"; mkdir -p "$(dirname "$base")"; cp -a "$SRC/$srcdir" "$base"
    if [[ $variant == orig ]]; then bdir=build; extra=(); venv="$envs"
    else bdir=build-mgb; extra=("${MGB_CMAKE[@]}"); venv="$envs MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$key.configure.driver.log"; fi
    log=$LOGS/$key.configure.$variant.log
    echo "# cd $base; env $venv nice -n 5 cmake -S . -B $bdir -DCMAKE_CUDA_ARCHITECTURES=90 ${extra[*]}" >"$log"
    (cd "$base" && env $venv nice -n 5 cmake -S . -B $bdir -DCMAKE_CUDA_ARCHITECTURES=90 "${extra[@]}") >>"$log" 2>&1
    cfgrc=$?; echo "# rc=$cfgrc" >>"$log"; echo "$key configure $variant rc=$cfgrc"
    for t in "$@"; do
      name=$prefix$t
      log=$LOGS/$name.$variant.log
      if [[ $variant == mgb ]]; then rm -f "$LOGS/$name.driver.log"
        venv="$envs MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$name.driver.log"; fi
      echo "# cd $base; env $venv nice -n 5 cmake --build $bdir --target $t -j2" >"$log"
      start=$(date +%s)
      (cd "$base" && env $venv nice -n 5 cmake --build $bdir --target "$t" -j2) >>"$log" 2>&1
      rc=$?; echo "# rc=$rc seconds=$(( $(date +%s) - start ))" >>"$log"
      echo "$name $variant rc=$rc"
    done
  done
}

want() { ((${#SEL[@]} == 0)) && return 0; local n; for n in "${SEL[@]}"; do [[ "$n" == "$1" ]] && return 0; done; return 1; }
SEL=("$@")

# brucefan1983/CUDA-Programming 13-md: Makefile with `CC = nvcc`; drop-in via PATH=$R/bin (nvcc -> mgb-nvcc).
for d in cpp force-only whole-code; do
  want md_$d || continue
  name=md_$d
  envs=""; [[ $d == cpp ]] && envs="NVCC_APPEND_FLAGS=-arch=sm_90"
  for variant in orig mgb; do
    base=$R/build/$variant/md_$d
    rm -rf "$base"; mkdir -p "$(dirname "$base")"; cp -a "$SRC/CUDA-Programming/src/13-md/$d" "$base"
    log=$LOGS/$name.$variant.log
    if [[ $variant == orig ]]; then venv="$envs"; p=$PATH
    else rm -f "$LOGS/$name.driver.log"; venv="$envs MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$name.driver.log"; p=$R/bin:$PATH; fi
    echo "# cd $base; PATH=$p env $venv nice -n 5 make -j2" >"$log"
    start=$(date +%s)
    (cd "$base" && PATH=$p env $venv nice -n 5 make -j2) >>"$log" 2>&1
    rc=$?; echo "# rc=$rc seconds=$(( $(date +%s) - start ))" >>"$log"
    echo "$name $variant rc=$rc"
  done
done

# ahmet-f-gumustas/Cuda-Programming CMake projects (one configure per project per variant).
A=Cuda-Programming-ahmet
want ah14 && cmake_pool ah14 $A/14.Matrix_Multiplication_Benchmark ah14_ "" matrix_benchmark
want ah15 && cmake_pool ah15 $A/15.general_image_processing_concepts_with_cuda ah15_ "" image_processor
want ah16 && cmake_pool ah16 $A/16.collection_of_basic_algorithms ah16_ "" parallel_algorithms run_tests
want ah18 && cmake_pool ah18 $A/18.Calculate_Parallel_Histogram ah18_ "" cuda_histogram
want ah20 && cmake_pool ah20 $A/20.basic_two_vector_parallel_programming ah20_ "" vector_add vector_add_advanced
want ah21 && cmake_pool ah21 $A/21.cuda_mermory_management_and_optimization ah21_ "" memory_benchmark
want ah22 && cmake_pool ah22 $A/22.cuda_mlp-GPU_vs_CPU_Neural_Network_Training ah22_ "" cuda_mlp mnist_accuracy

# arrzhev/cuda-kernels (BUILD_PYTHON off by default).
want ck && cmake_pool ck cuda-kernels-arrzhev ck_ "" cuda_kernels cuda_c vectorAdd grayscale meanBlur vectorDotProduct matrixVectorMul matmul

# generic Makefile pool: mk_pool NAME SRCDIR "ENV(both)" "ENV(mgb only, besides MGB_*)" MAKEARGS...
mk_pool() {
  local name=$1 srcdir=$2 envs=$3 menvs=$4; shift 4
  for variant in orig mgb; do
    base=$R/build/$variant/$name
    rm -rf "$base"; mkdir -p "$(dirname "$base")"; cp -a "$SRC/$srcdir" "$base"
    log=$LOGS/$name.$variant.log
    if [[ $variant == orig ]]; then venv="$envs"; p=$PATH
    else rm -f "$LOGS/$name.driver.log"; venv="$envs $menvs MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$name.driver.log"; p=$R/bin:$PATH; fi
    echo "# cd $base; PATH=$p env $venv nice -n 5 make -j2 $*" >"$log"
    start=$(date +%s)
    (cd "$base" && PATH=$p env $venv nice -n 5 make -j2 "$@") >>"$log" 2>&1
    rc=$?; echo "# rc=$rc seconds=$(( $(date +%s) - start ))" >>"$log"
    echo "$name $variant rc=$rc"
  done
}
ln -sfn "$MGB/mgb-c++" "$R/bin/g++"
mkdir -p "$R/cudaroot/bin"; ln -sfn "$MGB/mgb-nvcc" "$R/cudaroot/bin/nvcc"
ln -sfn /usr/local/cuda/targets "$R/cudaroot/targets"; ln -sfn /usr/local/cuda/lib64 "$R/cudaroot/lib64"
want cc_std2 && CUDA_PATH=/usr/local/cuda mk_pool cc_std2 cuda-kernels-chongchen/gemm/reference/std2 "" "CUDA_PATH=$R/cudaroot"
want xl_uma && mk_pool xl_uma cuda_examples-xlhu19/cuda_memory "NVCC_APPEND_FLAGS=-arch=sm_90" ""
exit 0
