#!/usr/bin/env bash
# Round r8: compile-only test of mgb drop-in drivers on PacktPublishing/Learn-CUDA-Programming
# (commit 10bd9b59bfcc680d608ea1417da5089f73d91b11).
# Usage: recipe.sh [NAME...]   (no argument: every program in the list below)
#        KEEP=1 recipe.sh NAME...  supplementary run with `make -k` (logs NAME.{orig,mgb}.k.log,
#        NAME.k.driver.log), used for the programs whose as-written build fails, to build their
#        other targets too.
#
# Source setup (done once):
#   G=/work/.mirror/PacktPublishing+Learn-CUDA-Programming/repo
#   git --git-dir=$G archive HEAD -- . ':(exclude)Chapter10/10_deep_learning/04_framework_profile' | tar -x -C src
#   (04_framework_profile holds a git-LFS-like blob missing from the mirror; it has no Makefile program)
#   The Makefiles add -I$(CUDA_PATH)/samples/common/inc (helper_cuda.h & co., no longer shipped with
#   the toolkit). The same headers come from NVIDIA/cuda-samples (commit c94ff366aed18c797b8a85dfaac7817b0228b420):
#   S=/work/.mirror/NVIDIA+cuda-samples/repo; git --git-dir=$S archive HEAD Common | tar -x -C deps/cuda-samples
#   Both builds get INCLUDES=-I.../deps/cuda-samples/Common on the make command line.
set -u
R=/work/thirdparty/r8
MGB=/work/main/build/rewriter
SRC=$R/src
LOGS=$R/logs
COMMON=$R/deps/cuda-samples/Common
mkdir -p "$LOGS" "$R/build"

# NAME|directory|extra make overrides (both builds)|extra sibling dirs to copy
COMMONOVR="SMS=90 INCLUDES=-I$COMMON"
PROGRAMS=(
"c01_hello_world|Chapter01/01_cuda_introduction/01_hello_world|$COMMONOVR|"
"c01_vector_addition|Chapter01/01_cuda_introduction/02_vector_addition|$COMMONOVR|"
"c02_sgemm|Chapter02/02_memory_overview/01_sgemm|$COMMONOVR|"
"c02_aos_soa|Chapter02/02_memory_overview/03_aos_soa|$COMMONOVR|"
"c02_matrix_transpose|Chapter02/02_memory_overview/04_matrix_transpose|$COMMONOVR|"
"c02_image_scaling|Chapter02/02_memory_overview/05_image_scaling|$COMMONOVR|"
"c02_unified_memory|Chapter02/02_memory_overview/06_unified_memory|$COMMONOVR|"
"c03_cuda_occupancy|Chapter03/03_cuda_thread_programming/02_cuda_occupancy|$COMMONOVR|"
"c03_threadsync_reduction|Chapter03/03_cuda_thread_programming/03_threadsync_and_reduction|$COMMONOVR|"
"c03_warp_divergence|Chapter03/03_cuda_thread_programming/05_warp_divergence|$COMMONOVR|"
"c03_warp_sync|Chapter03/03_cuda_thread_programming/07_warp_synchronous_programming|$COMMONOVR|"
"c03_cooperative_group|Chapter03/03_cuda_thread_programming/08_cooperative_group|$COMMONOVR|"
"c03_atomic_operation|Chapter03/03_cuda_thread_programming/10_atomic_operation|$COMMONOVR|"
"c03_mixed_precision|Chapter03/03_cuda_thread_programming/11_mixed_precision_operation|$COMMONOVR|"
"c04_cuda_stream|Chapter04/04_kernel_execution/01_cuda_stream|$COMMONOVR|"
"c04_pipelining|Chapter04/04_kernel_execution/02_pipelining|$COMMONOVR|"
"c04_cuda_callback|Chapter04/04_kernel_execution/03_cuda_callback|$COMMONOVR|"
"c04_stream_priority|Chapter04/04_kernel_execution/04_stream_priority|$COMMONOVR|"
"c04_cuda_event|Chapter04/04_kernel_execution/05_cuda_event|$COMMONOVR|"
"c04_dynamic_parallelism|Chapter04/04_kernel_execution/06_dynamic_parallelism|$COMMONOVR|"
"c04_grid_level_cg|Chapter04/04_kernel_execution/07_grid_level_cg|$COMMONOVR|"
"c04_openmp_cuda|Chapter04/04_kernel_execution/08_openmp_cuda|$COMMONOVR|"
"c04_kernel_exec_overhead|Chapter04/04_kernel_execution/10_kernel_execution_overhead|$COMMONOVR|"
"c05_cuda_error|Chapter05/05_debug_profiling/03_cuda_error|$COMMONOVR|"
"c05_cuda_assert|Chapter05/05_debug_profiling/04_cuda_assert|$COMMONOVR|"
"c05_memcheck|Chapter05/05_debug_profiling/08_memcheck|$COMMONOVR|"
"c06_gaussian_multi_gpu|Chapter06/06_multigpu/02_gaussian_multi_gpu|'NV_CFLAGS=-gencode arch=compute_90,code=sm_90 -O3 -lineinfo \$(PARAMS) -I\$(CUDA_PATH)/include/ -Wno-deprecated-gpu-targets'|"
"c06_streams|Chapter06/06_multigpu/05_streams|$COMMONOVR|"
"c07_sgemm_optimization|Chapter07/07_parallel_programming_pattern/01_sgemm_optimization|$COMMONOVR|"
"c07_scan|Chapter07/07_parallel_programming_pattern/03_scan|$COMMONOVR|"
"c07_pack_n_split|Chapter07/07_parallel_programming_pattern/04_pack_n_split|$COMMONOVR|Chapter07/07_parallel_programming_pattern/03_scan"
"c07_quicksort|Chapter07/07_parallel_programming_pattern/06_quicksort|$COMMONOVR|"
"c07_radixsort|Chapter07/07_parallel_programming_pattern/07_radixsort|$COMMONOVR|"
"c07_histogram|Chapter07/07_parallel_programming_pattern/08_histogram|$COMMONOVR|"
"c08_cublas_sgemm|Chapter08/08_cuda_libs_and_other_languages/01_sgemm|$COMMONOVR|"
"c08_sgemm_mixed_precision|Chapter08/08_cuda_libs_and_other_languages/02_sgemm_mixed_precision|$COMMONOVR|"
"c08_curand|Chapter08/08_cuda_libs_and_other_languages/03_curand|$COMMONOVR|"
"c08_cufft|Chapter08/08_cuda_libs_and_other_languages/04_cufft|$COMMONOVR|"
)

# The drop-ins. The Makefiles (except c06) set NVCC=${CUDA_PATH}/bin/nvcc -ccbin ${HOST_COMPILER}
# (HOST_COMPILER=g++): the drop-in keeps "-ccbin g++"; c06 sets NVCC = nvcc, CC = g++.
mgb_vars() {
  case "$1" in
    c06_*) echo "NVCC=$MGB/mgb-nvcc CC=$MGB/mgb-c++ CXX=$MGB/mgb-c++" ;;
    *) echo "NVCC=$MGB/mgb-nvcc\ -ccbin\ g++ CC=$MGB/mgb-cc CXX=$MGB/mgb-c++" ;;
  esac
}

want() { (($# == 0)) && return 0; local n; for n in "${SEL[@]}"; do [[ "$n" == "$1" ]] && return 0; done; return 1; }
SEL=("$@")

export PATH=/usr/local/cuda/bin:$PATH
for entry in "${PROGRAMS[@]}"; do
  IFS='|' read -r name dir ovr extra <<<"$entry"
  if ((${#SEL[@]})); then want "$name" "${SEL[@]}" || continue; fi
  for variant in orig mgb; do
    base=$R/build/$variant/$name
    rm -rf "$base"; mkdir -p "$base/$(dirname "$dir")"
    cp -a "$SRC/$dir" "$base/$dir"
    if [[ -n "$extra" ]]; then mkdir -p "$base/$(dirname "$extra")"; cp -a "$SRC/$extra" "$base/$extra"; fi
    sfx=""; kflag=""; if [[ "${KEEP:-0}" == 1 ]]; then sfx=".k"; kflag="-k"; fi
    log=$LOGS/$name.$variant$sfx.log
    if [[ $variant == orig ]]; then
      cmd="make -j2 $kflag $ovr"
      envs=()
    else
      rm -f "$LOGS/$name$sfx.driver.log"
      cmd="make -j2 $kflag $ovr $(mgb_vars "$name")"
      envs=(MGB_STRICT=1 "MGB_NVCC_LOG=$LOGS/$name$sfx.driver.log")
    fi
    {
      echo "# cd $base/$dir"
      echo "# ${envs[*]:-} nice -n 5 $cmd"
    } >"$log"
    start=$(date +%s)
    (cd "$base/$dir" && eval "env ${envs[*]:-} nice -n 5 $cmd") >>"$log" 2>&1
    rc=$?
    echo "# rc=$rc seconds=$(( $(date +%s) - start ))" >>"$log"
    echo "$name $variant rc=$rc"
  done
done
