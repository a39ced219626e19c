#!/usr/bin/env bash
# Round r9: compile-only test of the mgb drop-in drivers (mgb-nvcc/mgb-cc/mgb-c++).
# Pools (sources extracted with `git --git-dir=/work/.mirror/OWNER+NAME/repo archive HEAD | tar -x -C src/NAME`):
#   siboehm/SGEMM_CUDA     60cba6f9b20a198116c76f18de8047f44df8c8b8  (CMake; 3 targets)
#   Tony-Tan/CUDA_Freshman 979938216fbbd8bc81ccbc525c4dd1f8c0c9fcbb  (CMake, 37 targets; 13_nested_hello_world: Makefile)
#   ema-pe/cuda-by-example 88e9f72ef3f6434fe5b7db1182e843243f58d5c0  (one Makefile per chapter, `nvcc` by name, -Werror all-warnings)
# Usage: recipe.sh [POOL...]   POOL in: sgemm freshman freshman_make cbe   (default: all)
#
# Each pool is copied fresh per variant (build/{orig,mgb}/POOL), configured once per variant
# (logs/POOL.configure.{orig,mgb}.log), then every target is built on its own, one after another
# (`cmake --build DIR --target T -j2`), log logs/NAME.{orig,mgb}.log, driver log logs/NAME.driver.log.
#
# Architecture overrides (same for both builds):
#  - every CMake build: -DCMAKE_CUDA_ARCHITECTURES=90.
#  - SGEMM_CUDA: CMakeLists sets CUDA_ARCHITECTURES 86 on target sgemm via a normal variable
#    (set(CUDA_COMPUTE_CAPABILITY 86)); sm_86 is still supported by CUDA 13, so it is left as is.
#  - CUDA_Freshman: CMakeLists does set(CMAKE_CUDA_FLAGS "-arch=compute_35 -g -G -O3") (a normal
#    variable, no -D can override it) and the Makefile of 13_nested_hello_world hard-codes
#    `nvcc -arch=sm_35`. CUDA 13 rejects compute_35/sm_35; both builds run with the environment
#    NVCC_APPEND_FLAGS=-arch=sm_90 (read by the real nvcc: "incompatible redefinition for option
#    'gpu-architecture', the last value of this option was used").
set -u
R=/work/thirdparty/r9
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

if want sgemm; then
  cmake_pool sgemm SGEMM_CUDA sgemm_ "" sgemm cuBLAS_sgemm simplest_kernel
fi

FRESHMAN_TARGETS=(hello_world check_dimension grid_block sum_arrays sum_arrays_timer thread_index
  sum_matrix device_information divergence sum_matrix2D reduceInteger simple_sum_matrix
  reduceUnrolling global_variable pine_memory zero_copy_memory UVA sum_array_offset AoS SoA
  sum_array_offset_unrolling transform_matrix2D sum_arrays_uniform_memory shared_memory_read_data
  reduce_integer_shared_memory transform_shared_memory stencil_1d_constant_read_only shfl_test
  reduce_shfl stream stream_resource stream_block stream_dependence multi_add_depth
  multi_add_breadth asyncAPI stream_call_back)
if want freshman; then
  cmake_pool freshman CUDA_Freshman fm_ "NVCC_APPEND_FLAGS=-arch=sm_90" "${FRESHMAN_TARGETS[@]}"
fi

# 13_nested_hello_world: Makefile with `nvcc` hard-coded; drop-in via PATH=$R/bin (nvcc -> mgb-nvcc).
# The Makefile's recipe needs include/ (../include) only if used; the whole pool is copied.
if want freshman_make; then
  name=fm_nested_hello_world
  for variant in orig mgb; do
    base=$R/build/$variant/freshman_make
    rm -rf "$base"; mkdir -p "$(dirname "$base")"; cp -a "$SRC/CUDA_Freshman" "$base"
    log=$LOGS/$name.$variant.log
    if [[ $variant == orig ]]; then venv="NVCC_APPEND_FLAGS=-arch=sm_90"; p=$PATH
    else rm -f "$LOGS/$name.driver.log"
      venv="NVCC_APPEND_FLAGS=-arch=sm_90 MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$name.driver.log"; p=$R/bin:$PATH; fi
    echo "# cd $base/13_nested_hello_world; PATH=$p env $venv nice -n 5 make -j2" >"$log"
    start=$(date +%s)
    (cd "$base/13_nested_hello_world" && PATH=$p env $venv nice -n 5 make -j2) >>"$log" 2>&1
    rc=$?; echo "# rc=$rc seconds=$(( $(date +%s) - start ))" >>"$log"
    echo "$name $variant rc=$rc"
  done
fi

# ema-pe/cuda-by-example: per chapter directory, each target built by its own `make TARGET`
# (no arch flags: nvcc's default arch). Drop-in via PATH=$R/bin (nvcc -> mgb-nvcc). No overrides.
CBE=(
"03|choose-device device-prop hello-world kernel-call parameters"
"04|cpu-julia cpu-vector-sum gpu-julia gpu-vector-sum"
"05|dot-product gpu-gif-threads gpu-longer-vector-sum gpu-vector-sum-fixed gpu-vector-sum-only-threads julia-fixed-sync julia-wrong-sync"
"06|ray-tracing ray-tracing-constant"
"07|heat-no-texture heat-texture-2d heat-texture test-array-surface test-array-texture"
"09|cpu-histogram gpu-histogram-global gpu-histogram-shared-curand gpu-histogram-shared"
"10|bandwidthtest bench_memcpy multiple_stream multiple_stream-fixed single_stream"
"11|dot-product-zero-copy"
"A|dot-product dot-product-deterministic dot-product-locks hash-cpu hash-gpu"
)
if want cbe; then
  for variant in orig mgb; do
    base=$R/build/$variant/cbe
    rm -rf "$base"; mkdir -p "$(dirname "$base")"; cp -a "$SRC/ema-pe_cuda-by-example" "$base"
    for entry in "${CBE[@]}"; do
      ch=${entry%%|*}
      for t in ${entry#*|}; do
        name=cbe_${ch}_$t; log=$LOGS/$name.$variant.log
        if [[ $variant == orig ]]; then venv=""; p=$PATH
        else rm -f "$LOGS/$name.driver.log"; venv="MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$name.driver.log"; p=$R/bin:$PATH; fi
        echo "# cd $base/$ch; PATH=$p env $venv nice -n 5 make $t" >"$log"
        start=$(date +%s)
        (cd "$base/$ch" && PATH=$p env $venv nice -n 5 make "$t") >>"$log" 2>&1
        rc=$?; echo "# rc=$rc seconds=$(( $(date +%s) - start ))" >>"$log"
        echo "$name $variant rc=$rc"
      done
    done
  done
fi
