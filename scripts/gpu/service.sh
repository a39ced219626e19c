#!/usr/bin/env bash
# scripts/gpu/service.sh DIR: mgbd on the GPU machine (nvidia-h200-x2). DIR holds mgbd, mgb and
# mgb_hold_memory built on the build machine (with -DMGB_STATIC_GRPC=ON they need only glibc;
# a dynamic build needs DIR/lib with its libraries). Steps, each ending in PASS/FAIL lines:
#   1. CUDA context reserve per process, without and with MPS (8 cudaFree(0) processes, nvidia-smi)
#   2. two programs of 70% of GPU 0's memory each (100 GB on an H200, 55 GB on an H100) at once
#      on one GPU WITHOUT mgbd: expect one out-of-memory
#   3. mgbd with NVML and --mps; `mgb status`
#   4. three such programs under `mgb run --mem`: all finish (they wait for each other's GPU)
#   5. the MPS memory cap set by `mgb run`: 20 GB inside a 10 GB grant (--no-guard) or past
#      --max-mem 10G fails
set -uo pipefail
dir=$(cd "${1:?usage: service.sh DIR-with-mgbd-mgb-mgb_hold_memory}" && pwd)
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
work=$(mktemp -d /tmp/mgb-gpu-service-XXXXXX)
hold="$dir/mgb_hold_memory"
failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
used_mib() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0; }

nvidia-smi -L
# 70% of GPU 0: two do not fit one GPU together, one fits with room for the contexts.
big_gb=$(( $(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0) * 7 / 10 / 1024 ))
for f in mgbd mgb mgb_hold_memory; do [[ -x $dir/$f ]] || { echo "FAIL $dir/$f missing"; exit 1; }; done

# ---- 1. context reserve --------------------------------------------------------------------
measure_contexts() {  # $1: label; environment decides MPS
  local before after n=8 pids=()
  before=$(used_mib)
  for _ in $(seq $n); do
    CUDA_VISIBLE_DEVICES=0 "$hold" --context-only --seconds 6 > "$work/ctx.$RANDOM" & pids+=($!)
  done
  sleep 4
  after=$(used_mib)
  wait "${pids[@]}"
  echo "context reserve $1: GPU0 used $before -> $after MiB with $n processes = $(( (after - before) / n )) MiB per process"
}
measure_contexts "without MPS"
export CUDA_MPS_PIPE_DIRECTORY=$work/mps-probe/pipe CUDA_MPS_LOG_DIRECTORY=$work/mps-probe/log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d && measure_contexts "with MPS (MPS server included)"
echo quit | nvidia-cuda-mps-control; sleep 1
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY

# ---- 2. without mgbd: two big programs on one GPU ------------------------------------------
CUDA_VISIBLE_DEVICES=0 "$hold" --gb "$big_gb" --seconds 8 > "$work/a.out" 2>&1 & a=$!
CUDA_VISIBLE_DEVICES=0 "$hold" --gb "$big_gb" --seconds 8 > "$work/b.out" 2>&1 & b=$!
wait $a; ra=$?; wait $b; rb=$?
cat "$work/a.out" "$work/b.out"
if (( (ra == 2 && rb == 0) || (ra == 0 && rb == 2) )); then
  pass "without mgbd: one of two $big_gb GB programs ran out of memory (exit codes $ra, $rb)"
else
  fail "without mgbd: expected exactly one out-of-memory, got exit codes $ra, $rb"
fi

# ---- 3. mgbd with NVML and MPS -------------------------------------------------------------
sock=$work/mgbd.sock
"$dir/mgbd" --socket "$sock" --mps --mps-dir "$work/mps" --verbose 1 2> "$work/mgbd.log" & mgbd=$!
for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.1; done
export MGB_SOCKET=$sock
if "$dir/mgb" status; then pass "mgbd runs with NVML and MPS"; else fail "mgb status"; cat "$work/mgbd.log"; fi
"$dir/mgb" status --json > "$work/status.json" && grep -E '"(name|memory_total_bytes|sms|uuid)"' "$work/status.json"

# ---- 4. three big programs under mgb run ---------------------------------------------------
start=$(date +%s.%N)
pids=()
for i in 1 2 3; do
  "$dir/mgb" run --mem "${big_gb}G" -- "$hold" --gb "$big_gb" --seconds 8 > "$work/run$i.out" 2>&1 &
  pids+=($!)
done
sleep 3; "$dir/mgb" status
codes=()
for p in "${pids[@]}"; do wait "$p"; codes+=($?); done
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
cat "$work"/run?.out
if [[ "${codes[*]}" == "0 0 0" ]]; then
  pass "under mgbd: three $big_gb GB programs all finished in ${elapsed} s (exit codes ${codes[*]})"
else
  fail "under mgbd: exit codes ${codes[*]}"
fi

# ---- 5. the MPS cap mgb run sets: the first grant without the guard, --max-mem with it -----
"$dir/mgb" run --no-guard --mem 10G -- "$hold" --gb 20 --seconds 1 > "$work/cap.out" 2>&1; rc=$?
cat "$work/cap.out"
if [[ $rc -eq 2 ]]; then pass "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT from a 10G grant (--no-guard) stopped a 20 GB cudaMalloc"
else fail "MPS cap: expected out-of-memory (2), got $rc"; fi
"$dir/mgb" run --max-mem 10G -- "$hold" --gb 20 --seconds 1 > "$work/cap2.out" 2>&1; rc=$?
cat "$work/cap2.out"
if [[ $rc -eq 2 ]]; then pass "--max-mem 10G (guard, MPS limit behind it) stopped a 20 GB cudaMalloc"
else fail "--max-mem: expected out-of-memory (2), got $rc"; fi

kill -TERM $mgbd; wait $mgbd
echo "--- mgbd log (decisions)"; cat "$work/mgbd.log"
CUDA_MPS_PIPE_DIRECTORY=$work/mps/pipe bash -c 'echo quit | nvidia-cuda-mps-control'
echo "failures: $failures"
exit $((failures > 0))
