#!/usr/bin/env bash
# Two builds of libmgb's GPU benchmark (bench/runtime/gpu_overhead.cu) side by side, in one call on
# one GPU, alternated twice under one mgbd (no MPS): the before/after figures of a runtime change.
#   scripts/gpu/bench-compare.sh BENCH_BEFORE BENCH_AFTER MGBD   (on the GPU machine)
# Build the "before" one from the older commit (cmake --build BUILD --target runtime_bench_gpu) and
# carry it beside the packed .device/bin.
set -uo pipefail
[ $# -eq 3 ] || { sed -n '2,6p' "$0"; exit 2; }
before=$1 after=$2 mgbd=$3
for f in "$before" "$after" "$mgbd"; do [ -x "$f" ] || { echo "bench-compare: $f is not executable" >&2; exit 2; }; done
# The packed benchmarks find gRPC and the rest in .device/lib, as run-all.sh has them.
export LD_LIBRARY_PATH="$(cd "$(dirname "$after")/.." && pwd)/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
work=$(mktemp -d /tmp/mgb-bench-compare.XXXXXX)
export MGB_SOCKET="$work/mgbd.sock"
"$mgbd" --socket "$MGB_SOCKET" >"$work/mgbd.log" 2>&1 & pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -S "$MGB_SOCKET" ] && break; sleep 0.1; done
nvidia-smi --query-gpu=index,name --format=csv,noheader
for round in 1 2; do
  for which in before after; do
    bin=$before; [ "$which" = after ] && bin=$after
    echo "== round $round: $which ($bin)"
    "$bin" 500 1000
  done
done
