#!/usr/bin/env bash
# Round 7, pool `lib`: NVIDIA/CUDALibrarySamples, built by each sample's own CMakeLists.txt,
# once as written and once through mgb's drop-in compilers.
# Usage: recipe.sh [NAME...]   (default: all programs below)
# Sources: /work/thirdparty/src/CUDALibrarySamples, extracted from the fetch mirror with
#   D=/work/.mirror/NVIDIA+CUDALibrarySamples/repo
#   git --git-dir=$D archive HEAD cuBLAS cuBLASLt cuFFT cuSPARSE cuSOLVER cuRAND NPP nvJPEG README.md LICENSE.md \
#     | tar -x -C /work/thirdparty/src/CUDALibrarySamples
#   (a whole-tree archive fails: nvJPEG2000's large .jp2 blobs are absent from the mirror)
# commit 34377293fb148e90aad16fd762fa2445f941be55
set -uo pipefail

SRC=/work/thirdparty/src/CUDALibrarySamples
R7=/work/thirdparty/r7
WORK=$R7/lib/work          # scratch: clean source copies + build dirs
PAIRS=$R7/pairs
LOGS=$R7/logs
RW=/work/main/build/rewriter
export CUDACXX=/usr/local/cuda/bin/nvcc
export PATH=/usr/local/cuda/bin:$PATH

mkdir -p "$WORK" "$PAIRS" "$LOGS" "$PAIRS/data"

# cuBLASLt/Common/helpers.h (newest commit) names CUBLASLT_MATMUL_MATRIX_SCALE_PER_BATCH_SCALAR_32F, an
# enumerator newer than CUDA 13.0's cublasLt.h (only compared against in getScaleTensorSize, unused by
# LtSgemm*): define it on the command line, same for both builds.
LT_FIX="-DCMAKE_CXX_FLAGS=-DCUBLASLT_MATMUL_MATRIX_SCALE_PER_BATCH_SCALAR_32F=6 -DCMAKE_CUDA_FLAGS=-DCUBLASLT_MATMUL_MATRIX_SCALE_PER_BATCH_SCALAR_32F=6"
# NPP and nvJPEG are not in this CUDA 13.0 toolkit (no libnpp*/libnvjpeg, no headers): not built.
# NAME | library dir | sample dir (under library dir) | CMake target | run args (relative to pairs/) | extra cmake args
PROGRAMS=(
  "lib-cublas-gemm|cuBLAS|Level-3/gemm|cublas_gemm_example|"
  "lib-cublas-gemmbatched|cuBLAS|Level-3/gemmBatched|cublas_gemmBatched_example|"
  "lib-cublaslt-autotune|cuBLASLt|LtSgemmSimpleAutoTuning|sample_cublasLt_LtSgemmSimpleAutoTuning||$LT_FIX"
  "lib-cufft-1d-c2c|cuFFT|1d_c2c|1d_c2c_example|"
  "lib-cufft-2d-c2r-r2c|cuFFT|2d_c2r_r2c|2d_c2r_r2c_example|"
  "lib-cusparse-spmv|cuSPARSE|spmv_csr|spmv_csr_example|"
  "lib-cusparse-spgemm|cuSPARSE|spgemm|spgemm_example|"
  "lib-cusparse-graph|cuSPARSE|graph_capture|graph_capture_example|"
  "lib-cusolver-getrf|cuSOLVER|getrf|cusolver_getrf_example|"
  "lib-cusolver-syevd|cuSOLVER|syevd|cusolver_syevd_example|"
  "lib-curand-philox|cuRAND|Host/philox|curand_philox_normal_example|"
)

# build NAME LIBDIR SUBDIR TARGET MODE(orig|mgb) EXTRA -> copies binary to pairs/NAME.MODE
build() {
  local name=$1 lib=$2 sub=$3 target=$4 mode=$5 extra=$6
  local top=$WORK/$mode/$name
  rm -rf "$top"; mkdir -p "$top/src"
  # clean copy of the library's samples dir (the CMakeLists include ../cmake, ../utils, ../Common)
  cp -a "$SRC/$lib" "$top/src/$lib"
  local cm=(cmake -S "$top/src/$lib/$sub" -B "$top/build" -DCMAKE_CUDA_ARCHITECTURES=90 $extra)
  local log
  if [[ $mode == mgb ]]; then
    cm+=(-DCMAKE_CUDA_COMPILER=$RW/mgb-nvcc -DCMAKE_CXX_COMPILER=$RW/mgb-c++ -DCMAKE_C_COMPILER=$RW/mgb-cc)
    log=$LOGS/$name.mgb-build.log
    rm -f "$LOGS/$name.driver.log"
  else
    cm+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc)
    log=$LOGS/$name.orig-build.log
  fi
  rm -f "$PAIRS/$name.$mode"
  (
    if [[ $mode == mgb ]]; then export MGB_STRICT=1 MGB_NVCC_LOG=$LOGS/$name.driver.log; fi
    echo "+ ${cm[*]}"
    nice -n 5 "${cm[@]}" &&
    echo "+ make -C $top/build $target -j2 VERBOSE=1" &&
    nice -n 5 make -C "$top/build" "$target" -j2 VERBOSE=1
  ) >"$log" 2>&1
  local rc=$?
  local bin
  bin=$(find "$top/build" -type f -name "$target" -perm -u+x | head -n1)
  if [[ $rc -eq 0 && -n $bin ]]; then
    cp "$bin" "$PAIRS/$name.$mode"
    if [[ $mode == mgb ]]; then
      echo "$name.mgb: built, mgb_ symbols: $(nm "$PAIRS/$name.mgb" | grep -c ' mgb_'), rewrite warnings: $(grep 'warning:' "$log" | grep -vc '\[-W')"
    else
      echo "$name.orig: built"
    fi
  else
    echo "$name.$mode: BUILD FAILED (rc=$rc), see $log"
  fi
}

want=("$@")
selected() { [[ ${#want[@]} -eq 0 ]] && return 0; local w; for w in "${want[@]}"; do [[ $w == "$1" ]] && return 0; done; return 1; }

start=$(date +%s)
args_tmp=$(mktemp)
for p in "${PROGRAMS[@]}"; do
  IFS='|' read -r name lib sub target args extra <<<"$p"
  if selected "$name"; then
    build "$name" "$lib" "$sub" "$target" orig "$extra"
    build "$name" "$lib" "$sub" "$target" mgb "$extra"
  fi
  # a pair is listed only when both binaries exist (lib-cublaslt-autotune.mgb does not build: see
  # lib/repro/default_stream_outside_root); rerunning this recipe after an mgb fix lists it again
  if [[ -x $PAIRS/$name.orig && -x $PAIRS/$name.mgb ]]; then
    echo "$name $args" | sed 's/ *$//' >>"$args_tmp"
  else
    echo "NOT LISTED in args.lib.txt (missing binary): $name"
  fi
done
mv "$args_tmp" "$PAIRS/args.lib.txt"
chmod 644 "$PAIRS/args.lib.txt"
# no program writes result files (files.lib.txt left empty on purpose)
: >"$PAIRS/files.lib.txt"
echo "recipe.sh done in $(( $(date +%s) - start )) s"
