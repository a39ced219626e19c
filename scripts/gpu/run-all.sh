#!/usr/bin/env bash
# The GPU test suite (the README's optional third command), on a GPU node such as nvidia-h200-x2:
#   scripts/gpu/pack.sh            # on the build machine, after scripts/test.sh: fills .device/
#   scripts/gpu/run-all.sh         # on the GPU node, from the repo root, with .device/ carried
# Runs, each printing PASS/FAIL lines: the service suite (context reserve, 100 GB programs with and
# without mgbd, MPS caps), libmgb's GPU tests and benchmark (MPS on), the driver-level guard with
# unmodified programs (scripts/gpu/guard.sh), every pattern program and
# every golden program of the rewriter's tests as written vs rewritten under mgbd, and each
# rewritten workload at a small size under mgbd.
# Logs go to $OUT (or ./gpu-out). Exit status: the number of failed suites.
set -uo pipefail
cd "$(dirname "$0")/../.."
dev=${MGB_DEVICE_DIR:-.device}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/$dev/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
failed=0
suite() {  # suite NAME COMMAND...: runs it with a time limit, output to $OUT/NAME.log and here
  local name=$1; shift
  echo "===== $name"
  timeout "${SUITE_TIMEOUT:-240}" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  grep -E '^(PASS|FAIL|same output|DIFFERENT|both failed|compared|MISSING|context reserve|busy-first-gpu|placements per GPU|==)|MGB_RESULT|per task|per op|^cost ' "$OUT/$name.log" | cut -c1-200
  echo "===== $name: exit $rc"
  [ $rc -eq 0 ] || failed=$((failed + 1))
}

workloads_smoke() {  # each rewritten workload at 0.5 GiB, three at a time, under an NVML mgbd
  local sock=/tmp/mgb-smoke.sock pids=() rc=0
  "$dev/bin/mgbd" --socket "$sock" --verbose 1 > "$OUT/smoke-mgbd.log" 2>&1 & local mgbd=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
  for w in "$dev"/wl/*; do
    MGB_SOCKET=$sock "$w" --gb 0.5 > "$OUT/smoke-$(basename "$w").txt" 2>&1 & pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  "$dev/bin/mgb" status --socket "$sock" || true
  kill "$mgbd"; wait "$mgbd" 2>/dev/null
  for w in "$dev"/wl/*; do grep -H MGB_RESULT "$OUT/smoke-$(basename "$w").txt" || { echo "FAIL $w"; rc=1; }; done
  grep -c ' task-placed ' "$OUT/smoke-mgbd.log" | sed 's/^/placements logged: /'
  return $rc
}

nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv
suite service bash scripts/gpu/service.sh "$dev/bin"
suite runtime env MGB_GPU_MPS=1 bash scripts/gpu/runtime.sh run "$dev/bin"
suite guard bash scripts/gpu/guard.sh "$dev/bin" "$dev/guard" "" "$(ls "$dev"/wl/* | head -1)"
suite patterns bash scripts/gpu/rewriter.sh --run "$dev/patterns" "$dev/bin/mgbd"
suite golden bash scripts/gpu/rewriter.sh --run "$dev/golden" "$dev/bin/mgbd"
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then  # again, placed away from the first GPU
  suite golden-second-gpu bash scripts/gpu/compare-programs.sh --exact --busy-first-gpu \
    "$dev/golden" "$dev/bin/mgbd"
fi
export dev OUT; export -f workloads_smoke
suite workloads bash -c workloads_smoke
echo "suites failed: $failed"
exit $failed
