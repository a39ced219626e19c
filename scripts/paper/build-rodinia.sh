#!/usr/bin/env bash
# Builds the seven Rodinia programs of the paper's job mix (p100_50_16jobs_0) from a GPU-Sched
# checkout with an nvcc-compatible compiler: plain nvcc for "as written", mgb-nvcc (+ mgb-cc for
# the C files) for mgb. GPU-Sched's own instrumented build is build-gpusched.sh.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: build-rodinia.sh GPU_SCHED_SRC OUT_DIR [--nvcc NVCC] [--cc CC]

Copies Benchmarks/rodinia_cuda_3.1/cuda/{srad,bfs,lavaMD,backprop,dwt2d,nw} of GPU_SCHED_SRC
into OUT_DIR/src, applies scripts/paper/patches/rodinia/*.patch, and builds OUT_DIR/bin/
{srad_v1,srad_v2,bfs,lavaMD,backprop,dwt2d,needle} with NVCC (default
/usr/local/cuda/bin/nvcc) for sm_90 at -O2, C files with CC (default gcc).
  mgb:  build-rodinia.sh SRC OUT --nvcc build/rewriter/mgb-nvcc --cc build/rewriter/mgb-cc
USAGE
}

[[ "${1:-}" == --help || "${1:-}" == -h ]] && { usage; exit 0; }
(($# >= 2)) || { usage >&2; exit 2; }
src="$(readlink -f -- "$1")"; out="$2"; shift 2
nvcc=/usr/local/cuda/bin/nvcc
cc=gcc
while (($#)); do
  case "$1" in
    --nvcc) nvcc="$2"; shift 2 ;;
    --cc) cc="$2"; shift 2 ;;
    *) echo "build-rodinia.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
rodinia="$src/Benchmarks/rodinia_cuda_3.1/cuda"
[[ -d "$rodinia" ]] || { echo "build-rodinia.sh: $rodinia not found: is $src a GPU-Sched checkout?" >&2; exit 2; }
here="$(dirname -- "$(readlink -f -- "$0")")"

mkdir -p "$out"; out="$(readlink -f -- "$out")"
rm -rf "$out/src" && mkdir -p "$out/src/Benchmarks/rodinia_cuda_3.1/cuda" "$out/bin"
for d in srad bfs lavaMD backprop dwt2d nw; do cp -r "$rodinia/$d" "$out/src/Benchmarks/rodinia_cuda_3.1/cuda/"; done
for p in "$here"/patches/rodinia/*.patch; do
  echo "== patch $(basename "$p")"
  patch -s -p1 -d "$out/src" < "$p"
done

flags=(-O2 -arch=sm_90)
r="$out/src/Benchmarks/rodinia_cuda_3.1/cuda"
step() { echo "== $1"; }

step srad_v1;  (cd "$r/srad/srad_v1" && "$nvcc" "${flags[@]}" main.cu -o "$out/bin/srad_v1")
step srad_v2;  (cd "$r/srad/srad_v2" && "$nvcc" "${flags[@]}" srad.cu -o "$out/bin/srad_v2")
step bfs;      (cd "$r/bfs" && "$nvcc" "${flags[@]}" bfs.cu -o "$out/bin/bfs")
step needle;   (cd "$r/nw" && "$nvcc" "${flags[@]}" needle.cu -o "$out/bin/needle")
step backprop; (cd "$r/backprop" &&
  for c in backprop facetrain imagenet; do "$cc" -O2 -c "$c.c" -o "$c.o"; done &&
  "$nvcc" "${flags[@]}" backprop.o facetrain.o imagenet.o backprop_cuda.cu -o "$out/bin/backprop")
step lavaMD;   (cd "$r/lavaMD" &&
  "$cc" -O2 -c main.c -o main.o && "$cc" -O2 -c util/num/num.c -o num.o &&
  "$cc" -O2 -c util/timer/timer.c -o timer.o &&
  "$nvcc" "${flags[@]}" main.o num.o timer.o kernel/kernel_gpu_cuda_wrapper.cu util/device/device.cu \
    -o "$out/bin/lavaMD")
step dwt2d;    (cd "$r/dwt2d" &&
  "$nvcc" "${flags[@]}" -I. main.cu dwt.cu components.cu dwt_cuda/fdwt53.cu dwt_cuda/fdwt97.cu \
    dwt_cuda/common.cu dwt_cuda/rdwt97.cu dwt_cuda/rdwt53.cu -o "$out/bin/dwt2d")
echo "built: $(cd "$out/bin" && echo *)"
