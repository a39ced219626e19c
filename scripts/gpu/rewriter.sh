#!/usr/bin/env bash
# On the GPU machine: run every pattern program as written and as rewritten (both built on the
# build machine and carried: original with nvcc, rewritten with mgb-nvcc), the rewritten ones
# under an mgbd, and compare their outputs.
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
mgbd="${3:-$out/mgbd}"
sock="$(mktemp -u /tmp/mgbd-rewriter.XXXXXX.sock)"
"$mgbd" --socket "$sock" > "$out/mgbd.log" 2>&1 &
mgbd_pid=$!
trap 'kill "$mgbd_pid" 2>/dev/null || true' EXIT
for _ in $(seq 50); do [[ -S "$sock" ]] && break; sleep 0.1; done
status=0
for p in "${programs[@]}"; do
  "$out/$p.orig" > "$out/$p.orig.txt" 2>&1 || true
  MGB_SOCKET="$sock" "$out/$p.mgb" > "$out/$p.mgb.txt" 2>&1 || true
  if diff -q "$out/$p.orig.txt" "$out/$p.mgb.txt" >/dev/null && grep -q '^PASS' "$out/$p.mgb.txt"; then
    echo "same output: $p ($(grep '^PASS' "$out/$p.mgb.txt"))"
  else
    echo "DIFFERENT: $p"; diff "$out/$p.orig.txt" "$out/$p.mgb.txt" || true; status=1
  fi
done
echo "mgbd log: $out/mgbd.log (placements per task)"
exit $status
