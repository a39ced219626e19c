#!/usr/bin/env bash
# On the GPU machine: run every pattern program as written and as rewritten (both built on the
# build machine and carried: original with nvcc, rewritten with mgb-nvcc), the rewritten ones
# under an mgbd, and compare their outputs (exactly: scripts/gpu/compare-programs.sh).
#   build machine:  scripts/gpu/rewriter.sh --build OUT_DIR   (needs build-rewriter + the runtime)
#   GPU machine:    scripts/gpu/rewriter.sh --run OUT_DIR [MGBD_BINARY]
set -euo pipefail
mode="${1:-}"; out="${2:-}"
if [[ -z "$mode" || -z "$out" || "$mode" == --help ]]; then sed -n '2,7p' "$0"; exit 2; fi
root="$(cd "$(dirname "$0")/../.." && pwd)"
patterns="$root/examples/patterns"
programs=(vector_add pipeline best_device multi_tu)
sources() { if [[ "$1" == multi_tu ]]; then echo "$patterns/multi_tu.cu $patterns/buffers.cu"; else echo "$patterns/$1.cu"; fi; }

if [[ "$mode" == --build ]]; then
  mgb_nvcc="${MGB_NVCC:-$root/build-rewriter/rewriter/mgb-nvcc}"
  mkdir -p "$out"
  for p in "${programs[@]}"; do
    # shellcheck disable=SC2046
    /usr/local/cuda/bin/nvcc -arch=sm_90 -O2 -o "$out/$p.orig" $(sources "$p")
    # shellcheck disable=SC2046
    "$mgb_nvcc" -arch=sm_90 -O2 -o "$out/$p.mgb" $(sources "$p")
  done
  echo "built into $out: carry it to the GPU machine with an mgbd binary"
  exit 0
fi

[[ "$mode" == --run ]] || { echo "unknown mode $mode" >&2; exit 2; }
exec bash "$root/scripts/gpu/compare-programs.sh" --exact --require '^PASS' "$out" "${3:-$out/mgbd}"
