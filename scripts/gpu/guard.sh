#!/usr/bin/env bash
# The driver-level guard on the GPU machine (one GPU is enough), unmodified programs under
# `mgb run` with no --mem, against mgbd with NVML:
#   scripts/gpu/guard.sh BIN_DIR EXAMPLES_DIR [--mps] [REWRITTEN_PROGRAM]
#   BIN_DIR: mgbd and mgb (lib/libmgb-guard.so beside it); EXAMPLES_DIR: examples/guard built
#   (guard_libraries, guard_big, guard_cost, guard_c_alloc) and ctypes_alloc.py.
# 1. how the CUDA runtime reached the driver (MGB_GUARD_VERBOSE), 2. cuBLAS/cuFFT workspaces seen,
# 3. a C program through libcudart.so, 4. Python through ctypes, 5. the learned peak reused,
# 6. two programs that do not fit the GPU together: crash without mgb, both finish under it,
# 7. a program killed while its grow waits frees everything, 8. --max-mem, 9. cost per call,
# 10. (given a rewritten workload) the guard stands down for libmgb.
set -uo pipefail
bin=$1 ex=$2 mps=${3:-} rewritten=${4:-}
work=$(mktemp -d) sock=$work/mgbd.sock failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mps_args=()
if [[ $mps == --mps ]]; then mps_args=(--mps --mps-dir "$work/mps"); fi
"$bin/mgbd" --socket "$sock" "${mps_args[@]}" --verbose 1 2> "$work/mgbd.log" & mgbd=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
export MGB_SOCKET=$sock
gpu_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0)
echo "GPU memory ${gpu_mib} MiB; MPS: ${mps:-off}"

# The first running task's field (allocated_bytes, memory_bytes, peak_bytes), from mgb status --json.
task_field() {
  "$bin/mgb" status --json | python3 -c "import json,sys; t=json.load(sys.stdin)['running_tasks']; print(t[0]['$1'] if t else 0)"
}
grows() { grep -c ' task-grown ' "$work/mgbd.log"; }

# ---- 1. the path the runtime takes to the driver
MGB_GUARD_VERBOSE=1 "$bin/mgb" run -- "$ex/guard_big" 0.25 0 > "$work/verbose.out" 2>&1
grep -m8 'mgb guard' "$work/verbose.out"
if grep -q 'cuMemAlloc_v2' "$work/verbose.out"; then pass "the static CUDA runtime's cudaMalloc reached the guard"
else fail "no guarded cuMemAlloc in a static-cudart program"; cat "$work/verbose.out"; fi

# ---- 2. CUDA libraries' own memory
"$bin/mgb" run -- "$ex/guard_libraries" 4096 3000 > "$work/lib.out" 2>&1 & run=$!
sleep 2.5; allocated=$(task_field allocated_bytes); wait $run; rc=$?
own=$(awk '/OWN_BYTES/{print $2}' "$work/lib.out")
cat "$work/lib.out"
if [[ $rc -eq 0 && -n $own && $allocated -gt $own ]]; then
  pass "cuBLAS + cuFFT: mgbd saw $allocated bytes allocated, the program's own buffers are $own (libraries: $((allocated - own)))"
else fail "libraries: rc $rc, allocated $allocated, own ${own:-?}"; fi

# ---- 3. a C program (shared libcudart), 4. Python through ctypes
"$bin/mgb" run -- "$ex/guard_c_alloc" 1024 2000 > "$work/c.out" 2>&1 & run=$!
sleep 1.2; allocated=$(task_field allocated_bytes); wait $run; rc=$?
cat "$work/c.out"
if [[ $rc -eq 0 && $allocated -ge $((1 << 30)) ]]; then pass "C program: $allocated bytes counted"
else fail "C program: rc $rc, allocated $allocated"; fi
"$bin/mgb" run -- python3 "$ex/ctypes_alloc.py" 2048 2 > "$work/py.out" 2>&1 & run=$!
sleep 1.5; allocated=$(task_field allocated_bytes); wait $run; rc=$?
cat "$work/py.out"
if [[ $rc -eq 0 && $allocated -ge $((2 << 30)) ]]; then pass "Python ctypes into libcudart.so: $allocated bytes counted"
else fail "Python ctypes: rc $rc, allocated $allocated"; fi

# ---- 5. the learned peak: the second run of one command line needs no grow
before=$(grows); "$bin/mgb" run -- "$ex/guard_c_alloc" 3072 0 > /dev/null 2>&1; first=$(( $(grows) - before ))
before=$(grows); "$bin/mgb" run -- "$ex/guard_c_alloc" 3072 0 > /dev/null 2>&1; second=$(( $(grows) - before ))
if [[ $first -ge 1 && $second -eq 0 ]]; then pass "learned peak: first run grew $first time(s), the second none"
else fail "learned peak: grows $first then $second"; fi

# ---- 6. two programs of 58% of the GPU each
gib=$(awk -v m="$gpu_mib" 'BEGIN { printf "%.1f", m * 0.58 / 1024 }')
"$ex/guard_big" "$gib" 3000 > "$work/plain1.out" 2>&1 & a=$!
"$ex/guard_big" "$gib" 3000 > "$work/plain2.out" 2>&1 & b=$!
wait $a; ra=$?; wait $b; rb=$?
cat "$work"/plain?.out
if [[ $ra -ne 0 || $rb -ne 0 ]]; then pass "without mgb two ${gib} GiB programs cannot both run (exit codes $ra $rb)"
else fail "without mgb both ${gib} GiB programs ran: the test does not exceed the GPU"; fi
start=$(date +%s.%N)
"$bin/mgb" run -- "$ex/guard_big" "$gib" 3000 > "$work/mgb1.out" 2>&1 & a=$!
"$bin/mgb" run -- "$ex/guard_big" "$gib" 3000 > "$work/mgb2.out" 2>&1 & b=$!
wait $a; ra=$?; wait $b; rb=$?
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
cat "$work"/mgb?.out
if [[ $ra -eq 0 && $rb -eq 0 ]]; then pass "under mgb run (no --mem) both ${gib} GiB programs finished in ${elapsed} s"
else fail "under mgb run: exit codes $ra $rb"; fi

# ---- 7. killed while its grow waits
"$bin/mgb" run -- "$ex/guard_big" "$gib" 4000 > /dev/null 2>&1 & a=$!
sleep 2
"$bin/mgb" run -- "$ex/guard_big" "$gib" 1 > /dev/null 2>&1 & b=$!
sleep 2; pkill -KILL -f "^$ex/guard_big $gib 1\$"; wait $b; rb=$?; wait $a; ra=$?
reserved=$("$bin/mgb" status --json | python3 -c "import json,sys; d=json.load(sys.stdin); print(sum(g['memory_reserved_bytes'] for g in d['gpus']), len(d['running_tasks']))")
if [[ $rb -eq 137 && $ra -eq 0 && $reserved == "0 0" ]]; then pass "killed mid-grow: its run exited 137, nothing left reserved"
else fail "killed mid-grow: exit codes $rb $ra, reserved/tasks $reserved"; fi

# ---- 8. --max-mem
"$bin/mgb" run --max-mem 1G -- "$ex/guard_c_alloc" 2048 0 > "$work/cap.out" 2>&1; rc=$?
cat "$work/cap.out"
if [[ $rc -ne 0 ]] && grep -q 'past --max-mem' "$work/cap.out"; then pass "--max-mem 1G refused a 2 GiB cudaMalloc (exit $rc)"
else fail "--max-mem: rc $rc"; fi

# ---- 9. cost per allocation and free (1 MiB, within the grant): 9 runs each, alternating
for i in 1 2 3 4 5 6 7 8 9; do
  "$ex/guard_cost" 4096 1048576 | sed 's/^/cost plain   /' >> "$work/cost.txt"
  "$bin/mgb" run --mem 1G -- "$ex/guard_cost" 4096 1048576 | sed 's/^/cost guarded /' >> "$work/cost.txt"
done
python3 - "$work/cost.txt" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    words = line.split()
    fields = dict(zip(words[2:10:2], map(float, words[3:10:2])))
    runs.setdefault(words[1], []).append(fields)
for name in ("malloc_us", "free_us", "async_us", "free_async_us"):
    plain = statistics.median(r[name] for r in runs["plain"])
    guarded = statistics.median(r[name] for r in runs["guarded"])
    print(f"cost {name:14s} median of {len(runs['plain'])}: plain {plain:8.3f}  guarded {guarded:8.3f}  difference {guarded - plain:+.3f} us")
PY

# ---- 10. a rewritten program under mgb run: libmgb manages it, the guard stands down
if [[ -n $rewritten ]]; then
  "$bin/mgb" run -- "$rewritten" --gb 0.25 > "$work/rewritten.out" 2>&1; rc=$?
  grep -E 'mgb guard|MGB_RESULT' "$work/rewritten.out"
  if [[ $rc -eq 0 ]] && grep -q 'standing down' "$work/rewritten.out"; then pass "rewritten program under mgb run: the guard stood down, exit 0"
  else fail "rewritten program under mgb run: rc $rc"; tail -5 "$work/rewritten.out"; fi
fi

kill -TERM $mgbd; wait $mgbd
[[ $mps == --mps ]] && CUDA_MPS_PIPE_DIRECTORY=$work/mps/pipe bash -c 'echo quit | nvidia-cuda-mps-control'
grep -E 'task-(placed|grown)' "$work/mgbd.log" | tail -n 12
echo "failures: $failures"
rm -rf "$work"
exit $((failures > 0))
