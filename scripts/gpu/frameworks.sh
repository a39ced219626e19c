#!/usr/bin/env bash
# Framework jobs (examples/frameworks: PyTorch, a DataLoader, DDP, JAX, CuPy) on a 2-GPU node,
# without mgb and under `mgb run` with no --mem:
#   scripts/gpu/frameworks.sh BIN_DIR [OUT_DIR]
#   BIN_DIR: mgbd and mgb (../lib/libmgb-guard.so beside it, found by mgb); OUT_DIR: logs (default
#   $OUT, else ./frameworks-out): frameworks.log (all of this output), one folder per experiment
#   with each job's output, the mgbd logs, the learned-peaks store.
# a. sizing: 8 jobs whose --gib add up to 1.6x the node's GPU memory, each fitting one GPU alone,
#    some pairs not fitting one GPU together; each about 20 s alone on an H100 (STEPS_* below).
# b. without mgb, all 8 at once, 4 a GPU round robin, default settings (JAX preallocates): jobs
#    lost (the baseline, never a FAIL) and makespan.
# solo. one job of each kind alone on a GPU, two at a time (one a GPU): the solo wall times that
#    (c), (d) and (e) print beside each job's (SOLO=all: all 8; SOLO=0: skipped).
# c. by hand, best order: first-fit-decreasing on --gib + 1 GiB into per-GPU waves, each wave at
#    once on its GPU, JAX without preallocation: makespan, and the RESULT lines of reference.
# d. mgb, first run: a fresh mgbd (fresh state directory, so an empty learned-peaks store), all 8
#    at once under `mgb run` with no --mem: no job lost, the same RESULTs as (c); makespan / (c).
# e. mgb, second run: mgbd restarted on the same store, the same 8 jobs with new --out paths:
#    no job lost, the same RESULTs, makespan below (d)'s.
# f. a DataLoader job, a 2-GPU DDP job (mgb run --gpus 2 -- torchrun) and 2 torch_train jobs
#    under mgb at once: all finish, no out-of-memory; the most nvidia-smi saw used per GPU.
# g. overhead.py's steps/s plainly and under mgb run, cached and with
#    PYTORCH_NO_CUDA_MEMORY_CACHING=1 (3 alternating runs each, medians); not in the exit status.
# h. a summary table; exit 1 if any FAIL line came from c-f.
# Every job runs under `timeout` (JOB_TIMEOUT s; a timed-out job is lost). The whole script should
# take about 9 minutes on 2x H100 with the defaults below (estimated, not yet measured).
set -uo pipefail
if [[ $# -lt 1 || ! -x $1/mgbd || ! -x $1/mgb ]]; then
  echo "usage: $0 BIN_DIR [OUT_DIR]   (BIN_DIR holds mgbd and mgb)" >&2
  exit 2
fi

# ---- settings (environment overrides)
# Steps per job: about 20 s of compute alone on one H100, from each script's estimate of a step
# (STEP_S in the script; the solo pass below prints the real times to recalibrate with).
STEPS_TORCH=${STEPS_TORCH:-500}      # torch_train.py, ~0.04 s a step
STEPS_JAX=${STEPS_JAX:-800}          # jax_job.py, ~0.025 s a step
STEPS_CUPY=${STEPS_CUPY:-650}        # cupy_job.py, ~0.03 s a step
STEPS_F_TRAIN=${STEPS_F_TRAIN:-250}  # (f) torch_train.py, ~10 s alone
STEPS_F_DL=${STEPS_F_DL:-1000}       # (f) torch_dataloader.py, ~0.01 s a step
STEPS_F_DDP=${STEPS_F_DDP:-400}      # (f) torch_ddp.py, ~0.025 s a step
G_STEPS=${G_STEPS:-300}              # (g) overhead.py timed steps
JOB_TIMEOUT=${JOB_TIMEOUT:-300}      # seconds a job may take, waiting for a GPU included
SOLO=${SOLO:-1}                      # 1: solo wall time of one job of each kind (~1 min); all: of all 8 (~2 min); 0: none
E_REUSE_OUT=${E_REUSE_OUT:-0}        # 1: (e) reuses (d)'s --out paths (the same command lines)
# 1: by hand (c, solo) JAX also gets XLA_PYTHON_CLIENT_MEM_FRACTION = (--gib + 1.25 GiB) / GPU, as
# one sharing a GPU by hand would set it: without preallocation XLA's pool grows in doubling
# regions up to 0.75 of the GPU (jax-a, 36 GiB of arrays, could hold ~60 GiB) and the waves
# planned on --gib + 1 would not fit. 0: PREALLOCATE=false alone.
C_JAX_CAP=${C_JAX_CAP:-1}
# A frameworks.log of an earlier run on the same kind of machine: b and c are not run again; their
# lost jobs, makespans and (c)'s RESULTs are read from it (the jobs are deterministic). Saves
# about 2 minutes of GPU time when only mgb changed.
BC_FROM_LOG=${BC_FROM_LOG:-}

bin=$(cd "$1" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
fw=$repo/examples/frameworks
OUT_DIR=${2:-${OUT:-$PWD/frameworks-out}}
mkdir -p "$OUT_DIR" && OUT_DIR=$(cd "$OUT_DIR" && pwd)
exec > >(tee -a "$OUT_DIR/frameworks.log") 2>&1
work=$(mktemp -d /tmp/mgb-fw.XXXXXX)  # short: mgbd's socket lives here
pids=$work/pids                       # timeout's pid (its process group) of every job started
: > "$pids"
failures=0 mgbd='' sampler=''
runners=()
declare -A REF SOLO_WALL
rows=()

# Each experiment decides these itself; the node keeps NVLink multicast off.
unset XLA_PYTHON_CLIENT_PREALLOCATE XLA_PYTHON_CLIENT_MEM_FRACTION XLA_PYTHON_CLIENT_ALLOCATOR \
  PYTORCH_CUDA_ALLOC_CONF PYTORCH_NO_CUDA_MEMORY_CACHING CUDA_VISIBLE_DEVICES MGB_SOCKET
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1

cleanup() {
  local p
  while read -r p; do [[ -n $p ]] && kill -TERM -- "-$p" 2> /dev/null; done < "$pids"
  [[ -n $sampler ]] && kill "$sampler" 2> /dev/null
  if [[ -n $mgbd ]]; then kill -TERM "$mgbd" 2> /dev/null; wait "$mgbd" 2> /dev/null; fi
  [[ -f $work/profiles.tsv ]] && cp "$work/profiles.tsv" "$OUT_DIR/profiles.tsv"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }'; }
row() { rows+=("$(printf '%-30s %5s %5s %11s %7s' "$1" "$2" "$3" "$4" "$5")"); }

# run_job FILE CMD...: CMD under timeout (its own process group), output in FILE, "rc wall" in
# FILE.rc. Run it in the background.
run_job() {
  local file=$1 t0 p rc
  shift
  t0=$(now)
  timeout -k 10 "$JOB_TIMEOUT" "$@" > "$file" 2>&1 &
  p=$!
  echo "$p" >> "$pids"
  wait "$p"
  rc=$?
  echo "$rc $(since "$t0")" > "$file.rc"
}
wait_jobs() {  # waits for the jobs this shell started (never for mgbd)
  local p
  for p in "${runners[@]}"; do wait "$p"; done
  runners=()
}
forget_jobs() { : > "$pids"; }  # after an experiment's jobs all ended: nothing left to end

# start_job MODE I LOGDIR OUTDIR [GPU]: job I of the mix in the background, output in
# LOGDIR/NAME.log, --out OUTDIR/NAME.json. MODE plain: the frameworks' defaults; hand: JAX
# without preallocation (and with C_JAX_CAP its pool capped); mgb: under `mgb run` (no --mem),
# JAX's settings left to mgb run. GPU: CUDA_VISIBLE_DEVICES.
start_job() {
  local mode=$1 i=$2 logdir=$3 outdir=$4 gpu=${5:-}
  local envs=() cmd=(python3 "$fw/${SCRIPT[i]}" --name "${NAME[i]}" --gib "${GIB[i]}"
    --steps "${STEPS[i]}" --seed "${SEED[i]}" --out "$outdir/${NAME[i]}.json")
  [[ ${ALLOC[i]} == expandable ]] && envs+=(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)
  if [[ $mode == hand && ${SCRIPT[i]} == jax_job.py ]]; then
    envs+=(XLA_PYTHON_CLIENT_PREALLOCATE=false)
    [[ $C_JAX_CAP == 1 ]] && envs+=("XLA_PYTHON_CLIENT_MEM_FRACTION=$(jax_fraction "${GIB[i]}")")
  fi
  [[ -n $gpu ]] && envs+=("CUDA_VISIBLE_DEVICES=$gpu")
  [[ $mode == mgb ]] && cmd=("$bin/mgb" run -- "${cmd[@]}")
  mkdir -p "$logdir" "$outdir"
  run_job "$logdir/${NAME[i]}.log" env "${envs[@]}" "${cmd[@]}" &
  runners+=($!)
}

# tally DIR [compare]: one line per job of the mix (with only_present=1, per job that has a log
# in DIR). Sets lost (exit status not 0, or no RESULT line) and differ (a RESULT unlike (c)'s,
# with compare).
tally() {
  local dir=$1 compare=${2:-} i rc wall result info verdict solo
  lost=0 differ=0
  for i in "${!NAME[@]}"; do
    [[ ${only_present:-} == 1 && ! -f $dir/${NAME[i]}.log ]] && continue
    rc=none wall=-
    [[ -f $dir/${NAME[i]}.log.rc ]] && read -r rc wall < "$dir/${NAME[i]}.log.rc"
    result=$(grep -m1 '^RESULT ' "$dir/${NAME[i]}.log" 2> /dev/null | awk '{print $3}')
    info=$(grep -m1 "^INFO ${NAME[i]} steps=" "$dir/${NAME[i]}.log" 2> /dev/null | cut -d' ' -f3-)
    verdict=ok
    if [[ $rc != 0 || -z $result ]]; then
      lost=$((lost + 1))
      verdict="LOST ($( [[ $rc == 124 || $rc == 137 ]] && echo "timed out" || echo "exit $rc"): $(
        { grep -oE '[A-Za-z_.]*(OutOfMemory|RESOURCE_EXHAUSTED|out of memory|Error)[^"]{0,90}' \
          "$dir/${NAME[i]}.log" || tail -n1 "$dir/${NAME[i]}.log"; } 2> /dev/null | tail -n1 | cut -c1-110))"
    elif [[ -n $compare && $result != "${REF[${NAME[i]}]:-}" ]]; then
      differ=$((differ + 1))
      verdict="DIFFERENT from (c): ${REF[${NAME[i]}]:-none}"
    fi
    solo=${SOLO_WALL[${NAME[i]}]:-}
    printf '  %-9s %5s GiB  wall %6s s%s  result %-13s %s  [%s]\n' "${NAME[i]}" "${GIB[i]}" \
      "$wall" "${solo:+ (solo $solo)}" "${result:--}" "$verdict" "${info:-}"
  done
}

jax_fraction() { awk -v g="$1" -v t="$gpu_gib" 'BEGIN { f = (g + 1.25) / t; printf "%.3f", f < 0.95 ? f : 0.95 }'; }
start_mgbd() {  # start_mgbd TAG: mgbd on $work (socket, learned peaks), log OUT_DIR/mgbd-TAG.log
  local sock=$work/mgbd.sock
  "$bin/mgbd" --socket "$sock" --profile-store "$work/profiles.tsv" --verbose 1 \
    2> "$OUT_DIR/mgbd-$1.log" &
  mgbd=$!
  for _ in $(seq 100); do "$bin/mgb" status --socket "$sock" > /dev/null 2>&1 && break; sleep 0.1; done
  export MGB_SOCKET=$sock
  if ! kill -0 "$mgbd" 2> /dev/null; then
    fail "mgbd did not start ($1):"; tail -n5 "$OUT_DIR/mgbd-$1.log"; mgbd=
  fi
}
stop_mgbd() { [[ -n $mgbd ]] && { kill -TERM "$mgbd"; wait "$mgbd"; }; mgbd=; }
# placements LOG: "placed N, of them with mgbd's default reservation (--run-default-mem, 1 GiB
# unless changed: nothing learned or guessed) M".
placements() {
  awk '/ task-placed /{ for (i = 1; i < NF; i++) if ($i == "memory") { n++; if ($(i + 1) == 1073741824) d++ } }
       END { printf "placed %d, of them with the default 1 GiB (no learned peak) %d", n, d }' "$1"
}
grows() { grep -c ' task-grown ' "$1"; }

# ==== a. sizing
echo "===== a. sizing"
mapfile -t gpu_mib < <(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | tr -d ' ')
if [[ ${#gpu_mib[@]} -lt 2 ]]; then echo "FAIL needs 2 GPUs, nvidia-smi shows ${#gpu_mib[@]}"; exit 1; fi
[[ ${#gpu_mib[@]} -gt 2 ]] && echo "note: ${#gpu_mib[@]} GPUs; the plain runs use GPUs 0 and 1, mgbd all of them"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv
gpu_gib=$(printf '%s\n' "${gpu_mib[0]}" "${gpu_mib[1]}" | sort -n | head -1 | awk '{ printf "%.1f", $1 / 1024 }')
node_gib=$(awk -v a="${gpu_mib[0]}" -v b="${gpu_mib[1]}" 'BEGIN { printf "%.1f", (a + b) / 1024 }')
# name, script, allocator, share of one GPU's memory (--gib = share x the smaller GPU), steps,
# seed. The shares add up to 3.2 = 1.6 x 2 GPUs; 0.55 + 0.50 and others do not fit one GPU.
MIX=(
  "train-a  torch_train.py default    0.55 $STEPS_TORCH 11"
  "train-b  torch_train.py default    0.30 $STEPS_TORCH 12"
  "trainx-a torch_train.py expandable 0.50 $STEPS_TORCH 13"
  "trainx-b torch_train.py expandable 0.35 $STEPS_TORCH 14"
  "jax-a    jax_job.py     -          0.45 $STEPS_JAX 15"
  "jax-b    jax_job.py     -          0.25 $STEPS_JAX 16"
  "cupy-a   cupy_job.py    -          0.40 $STEPS_CUPY 17"
  "cupy-b   cupy_job.py    -          0.40 $STEPS_CUPY 18"
)
NAME=() SCRIPT=() ALLOC=() GIB=() STEPS=() SEED=()
for line in "${MIX[@]}"; do
  read -r n s a share st se <<< "$line"
  NAME+=("$n") SCRIPT+=("$s") ALLOC+=("$a") STEPS+=("$st") SEED+=("$se")
  GIB+=("$(awk -v f="$share" -v g="$gpu_gib" 'BEGIN { printf "%.1f", f * g }')")
done
total_gib=$(printf '%s\n' "${GIB[@]}" | awk '{ s += $1 } END { printf "%.1f", s }')
echo "GPUs: ${gpu_mib[0]} + ${gpu_mib[1]} MiB = $node_gib GiB; one GPU (the smaller): $gpu_gib GiB"
for i in "${!NAME[@]}"; do
  printf '  %-9s %-15s %-10s --gib %5s --steps %4s --seed %s\n' "${NAME[i]}" "${SCRIPT[i]}" \
    "${ALLOC[i]}" "${GIB[i]}" "${STEPS[i]}" "${SEED[i]}"
done
echo "the 8 jobs ask $total_gib GiB: $(ratio "$total_gib" "$node_gib")x the node's GPU memory"

# ==== b. without mgb: all at once, round robin, default settings
echo "===== b. without mgb: all 8 at once, 4 a GPU round robin (CUDA_VISIBLE_DEVICES), default settings"
if [[ -n $BC_FROM_LOG ]]; then
  read -r b_lost b_make < <(sed -n 's/^b: lost \([0-9]*\) of 8 .*makespan \([0-9.]*\) s$/\1 \2/p' "$BC_FROM_LOG" | head -1)
  echo "b: lost $b_lost of 8 without mgb, makespan $b_make s (not run again: from $BC_FROM_LOG)"
else
t0=$(now)
for i in "${!NAME[@]}"; do start_job plain "$i" "$OUT_DIR/b" "$OUT_DIR/b" $((i % 2)); done
wait_jobs
b_make=$(since "$t0")
forget_jobs
tally "$OUT_DIR/b"
b_lost=$lost
echo "b: lost $b_lost of 8 without mgb (the baseline: expected above 0), makespan $b_make s"
fi

# ==== c. by hand, best order
echo "===== c. by hand: first-fit-decreasing on --gib + 1 GiB into per-GPU waves, JAX without preallocation"
if [[ -n $BC_FROM_LOG ]]; then
  c_make=$(sed -n 's/^PASS c: .*makespan \([0-9.]*\) s$/\1/p' "$BC_FROM_LOG" | head -1)
  c_lost=0
  [[ -z $c_make ]] && { fail "c: no (c) makespan in $BC_FROM_LOG"; c_lost=8; }
  for i in "${!NAME[@]}"; do  # (c)'s table rows: "  NAME  GIB GiB  wall W s  result R ..."
    REF[${NAME[i]}]=$(sed -n '/^===== c\./,/^PASS c/p' "$BC_FROM_LOG" |
      awk -v n="${NAME[i]}" '$1 == n { for (k = 1; k < NF; ++k) if ($k == "result") { print $(k + 1); exit } }')
  done
  echo "c: makespan $c_make s, RESULTs of reference read from $BC_FROM_LOG (not run again)"
else
[[ $C_JAX_CAP == 1 ]] && echo "(JAX also with XLA_PYTHON_CLIENT_MEM_FRACTION = (--gib + 1.25) / $gpu_gib GiB: $(
  for i in "${!NAME[@]}"; do [[ ${SCRIPT[i]} == jax_job.py ]] && printf '%s %s ' "${NAME[i]}" "$(jax_fraction "${GIB[i]}")"; done))"
plan=$(python3 - "$gpu_gib" "${GIB[@]}" << 'PY'
import sys
cap, sizes = float(sys.argv[1]), [float(g) + 1 for g in sys.argv[2:]]
bins = []  # [free GiB, [jobs]]
for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
    for b in bins:
        if b[0] >= sizes[i]:
            b[0] -= sizes[i]
            b[1].append(i)
            break
    else:
        bins.append([cap - sizes[i], [i]])
for k, (free, jobs) in enumerate(bins):
    print(k % 2, *jobs)
PY
)
waves=(0 0)
while read -r g jobs; do
  waves[g]=$((waves[g] + 1)) sum=0 names=
  for i in $jobs; do
    names+="${names:+ + }${NAME[i]} (${GIB[i]}+1)"
    sum=$(awk -v a="$sum" -v b="${GIB[i]}" 'BEGIN { print a + b + 1 }')
  done
  echo "  GPU $g, wave ${waves[g]}: $names = $sum of $gpu_gib GiB"
done <<< "$plan"
lane() {  # lane GPU: the plan's waves for GPU one after another, each wave's jobs at once
  local gpu=$1 g jobs i
  while read -r g jobs; do
    [[ $g == "$gpu" ]] || continue
    for i in $jobs; do start_job hand "$i" "$OUT_DIR/c" "$OUT_DIR/c" "$gpu"; done
    wait_jobs
  done <<< "$plan"
}
t0=$(now)
lane 0 & lane0=$!
lane 1 & lane1=$!
wait "$lane0" "$lane1"
c_make=$(since "$t0")
forget_jobs
for i in "${!NAME[@]}"; do
  REF[${NAME[i]}]=$(grep -m1 '^RESULT ' "$OUT_DIR/c/${NAME[i]}.log" 2> /dev/null | awk '{print $3}')
done
tally "$OUT_DIR/c"
c_lost=$lost
if [[ $c_lost -eq 0 ]]; then pass "c: by hand in the best order all 8 finished, makespan $c_make s"
else fail "c: by hand $c_lost of 8 lost (the reference RESULTs are missing for them)"; fi
fi

# ==== solo: jobs alone on a GPU, two at a time (one a GPU). SOLO=1: one job of each kind (script
# and allocator; its twin runs the same steps, only with another --gib); all: all 8; 0: none.
if [[ $SOLO != 0 ]]; then
  echo "===== solo: $( [[ $SOLO == all ]] && echo "each job" || echo "one job of each kind") alone on one GPU (JAX as in c), two at a time"
  declare -A kind_first
  solo_jobs=()
  for i in "${!NAME[@]}"; do
    k=${SCRIPT[i]}/${ALLOC[i]}
    [[ $SOLO == all || -z ${kind_first[$k]:-} ]] && solo_jobs+=("$i")
    kind_first[$k]=${kind_first[$k]:-${NAME[i]}}
  done
  solo_lane() {
    local gpu=$1 j
    for j in "${!solo_jobs[@]}"; do
      [[ $((j % 2)) == "$gpu" ]] || continue
      start_job hand "${solo_jobs[j]}" "$OUT_DIR/solo" "$OUT_DIR/solo" "$gpu"
      wait_jobs
    done
  }
  solo_lane 0 & lane0=$!
  solo_lane 1 & lane1=$!
  wait "$lane0" "$lane1"
  forget_jobs
  for i in "${!NAME[@]}"; do
    first=${kind_first[${SCRIPT[i]}/${ALLOC[i]}]}
    if [[ -f $OUT_DIR/solo/${NAME[i]}.log.rc ]]; then
      SOLO_WALL[${NAME[i]}]="$(awk '{print $2}' "$OUT_DIR/solo/${NAME[i]}.log.rc") s"
    elif [[ -f $OUT_DIR/solo/$first.log.rc ]]; then
      SOLO_WALL[${NAME[i]}]="~$(awk '{print $2}' "$OUT_DIR/solo/$first.log.rc") s as $first"
    fi
  done
  only_present=1 tally "$OUT_DIR/solo" compare
  echo "solo: lost $lost, RESULT unlike (c)'s $differ (alone vs beside another job)"
fi

# ==== d. mgb, first run: fresh mgbd, fresh learned peaks
echo "===== d. mgb first run: a fresh mgbd (empty learned-peaks store $work/profiles.tsv), all 8 at once, no --mem"
rm -f "$work/profiles.tsv"
start_mgbd d
t0=$(now)
for i in "${!NAME[@]}"; do start_job mgb "$i" "$OUT_DIR/d" "$OUT_DIR/d"; done
wait_jobs
d_make=$(since "$t0")
forget_jobs
tally "$OUT_DIR/d" compare
d_lost=$lost d_ratio=$(ratio "$d_make" "$c_make")
echo "d: makespan $d_make s, (c) $c_make s: ratio $d_ratio (aim: at most 1.25; $(
  awk -v r="$d_ratio" 'BEGIN { print (r != "-" && r <= 1.25) ? "met" : "missed" }'))"
echo "d: mgbd $(placements "$OUT_DIR/mgbd-d.log"); grows $(grows "$OUT_DIR/mgbd-d.log"); lines in the learned-peaks store: $( [[ -f $work/profiles.tsv ]] && wc -l < "$work/profiles.tsv" || echo 0)"
if [[ $d_lost -eq 0 && $differ -eq 0 ]]; then
  pass "d: under mgb (first run) all 8 finished with (c)'s RESULTs, makespan $d_make s ($d_ratio x (c))"
else fail "d: under mgb (first run) $d_lost lost, $differ RESULT(s) unlike (c)'s"; fi
stop_mgbd

# ==== e. mgb, second run: the same store
echo "===== e. mgb second run: mgbd restarted on the same store, the same 8 jobs, new --out paths"
[[ $E_REUSE_OUT == 1 ]] && echo "(E_REUSE_OUT=1: (d)'s --out paths again, so the command lines are (d)'s)"
start_mgbd e
e_out=$OUT_DIR/e
[[ $E_REUSE_OUT == 1 ]] && e_out=$OUT_DIR/d
t0=$(now)
for i in "${!NAME[@]}"; do start_job mgb "$i" "$OUT_DIR/e" "$e_out"; done
wait_jobs
e_make=$(since "$t0")
forget_jobs
tally "$OUT_DIR/e" compare
e_lost=$lost
echo "e: mgbd $(placements "$OUT_DIR/mgbd-e.log"); grows $(grows "$OUT_DIR/mgbd-e.log")"
echo "e: makespan $e_make s, (d) $d_make s, (c) $c_make s: ratio to (c) $(ratio "$e_make" "$c_make")"
if [[ $e_lost -eq 0 && $differ -eq 0 ]] && awk -v e="$e_make" -v d="$d_make" 'BEGIN { exit !(e < d) }'; then
  pass "e: second run all 8 finished with (c)'s RESULTs in $e_make s, below the first run's $d_make s"
else fail "e: second run $e_lost lost, $differ RESULT(s) unlike (c)'s, makespan $e_make s vs the first run's $d_make s"; fi
stop_mgbd

# ==== f. DataLoader + 2-GPU DDP + 2 torch_train under mgb at once
echo "===== f. a DataLoader job, a 2-GPU DDP job (mgb run --gpus 2 -- torchrun) and 2 torch_train jobs under mgb at once"
start_mgbd f
share() { awk -v f="$1" -v g="$gpu_gib" 'BEGIN { printf "%.1f", f * g }'; }
mkdir -p "$OUT_DIR/f"
F_NAMES=(dataloader ddp train-f1 train-f2)
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -lms 500 > "$OUT_DIR/f/memory-used.csv" 2> /dev/null &
sampler=$!
t0=$(now)
run_job "$OUT_DIR/f/dataloader.log" "$bin/mgb" run -- python3 "$fw/torch_dataloader.py" --name dataloader \
  --gib "$(share 0.20)" --steps "$STEPS_F_DL" --seed 21 --out "$OUT_DIR/f/dataloader.json" & runners+=($!)
run_job "$OUT_DIR/f/ddp.log" "$bin/mgb" run --gpus 2 -- python3 -m torch.distributed.run --standalone \
  --nproc_per_node=2 "$fw/torch_ddp.py" --name ddp --gib "$(share 0.30)" --steps "$STEPS_F_DDP" --seed 22 \
  --out "$OUT_DIR/f/ddp.json" & runners+=($!)
run_job "$OUT_DIR/f/train-f1.log" "$bin/mgb" run -- python3 "$fw/torch_train.py" --name train-f1 \
  --gib "$(share 0.30)" --steps "$STEPS_F_TRAIN" --seed 23 --out "$OUT_DIR/f/train-f1.json" & runners+=($!)
run_job "$OUT_DIR/f/train-f2.log" env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "$bin/mgb" run -- \
  python3 "$fw/torch_train.py" --name train-f2 --gib "$(share 0.25)" --steps "$STEPS_F_TRAIN" --seed 24 \
  --out "$OUT_DIR/f/train-f2.json" & runners+=($!)
wait_jobs
f_make=$(since "$t0")
forget_jobs
kill "$sampler" 2> /dev/null; wait "$sampler" 2> /dev/null; sampler=
f_lost=0 f_oom=0
for n in "${F_NAMES[@]}"; do
  rc=none wall=-
  [[ -f $OUT_DIR/f/$n.log.rc ]] && read -r rc wall < "$OUT_DIR/f/$n.log.rc"
  result=$(grep -m1 '^RESULT ' "$OUT_DIR/f/$n.log" | awk '{print $3}')
  oom=$(grep -m1 -oE '(OutOfMemoryError|out of memory|RESOURCE_EXHAUSTED|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation).{0,80}' "$OUT_DIR/f/$n.log")
  [[ -n $oom ]] && f_oom=$((f_oom + 1))
  if [[ $rc != 0 || -z $result ]]; then f_lost=$((f_lost + 1)); fi
  printf '  %-10s exit %-4s wall %6s s  result %-13s %s\n' "$n" "$rc" "$wall" "${result:--}" \
    "$( [[ $rc != 0 || -z $result ]] && echo "LOST: ${oom:-$(tail -n1 "$OUT_DIR/f/$n.log" | cut -c1-100)}")"
done
awk -F', *' -v cap="${gpu_mib[*]}" 'BEGIN { split(cap, c, " ") }
  { if ($2 + 0 > m[$1]) m[$1] = $2 + 0 }
  END { for (g in m) printf "f: GPU %s: at most %d MiB used of %d (nvidia-smi every 0.5 s)\n", g, m[g], c[g + 1] }' \
  "$OUT_DIR/f/memory-used.csv" | sort
echo "f: mgbd $(placements "$OUT_DIR/mgbd-f.log"); grows $(grows "$OUT_DIR/mgbd-f.log"); makespan $f_make s"
if [[ $f_lost -eq 0 && $f_oom -eq 0 ]]; then
  pass "f: DataLoader, 2-GPU DDP and 2 torch_train jobs all finished under mgb, no out-of-memory"
else fail "f: $f_lost of 4 lost, $f_oom with an out-of-memory error"; fi

# ==== g. overhead: steps/s plainly and under mgb run
echo "===== g. overhead.py steps/s: plain (GPU 0) vs under mgb run, 3 alternating runs each"
mkdir -p "$OUT_DIR/g"
: > "$OUT_DIR/g/steps.txt"
for mode in cached no-cache; do
  flags=() envs=()
  [[ $mode == no-cache ]] && flags=(--no-cache) envs=(PYTORCH_NO_CUDA_MEMORY_CACHING=1)
  for rep in 1 2 3; do
    for how in plain mgb; do
      cmd=(python3 "$fw/overhead.py" --steps "$G_STEPS" "${flags[@]}")
      if [[ $how == mgb ]]; then cmd=("$bin/mgb" run -- "${cmd[@]}"); else cmd=(env CUDA_VISIBLE_DEVICES=0 "${cmd[@]}"); fi
      log=$OUT_DIR/g/$mode-$how-$rep.log
      run_job "$log" env "${envs[@]}" "${cmd[@]}"
      echo "$mode $how $(grep -m1 '^STEPS_PER_S ' "$log" | awk '{print $2}')" >> "$OUT_DIR/g/steps.txt"
    done
  done
done
g_summary=$(python3 - "$OUT_DIR/g/steps.txt" << 'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) == 3:
        runs.setdefault((w[0], w[1]), []).append(float(w[2]))
for mode, limit in (("cached", 0.99), ("no-cache", 0.95)):
    plain, mgb = runs.get((mode, "plain"), []), runs.get((mode, "mgb"), [])
    if not plain or not mgb:
        print(f"SLOW g {mode}: runs missing (plain {len(plain)}, mgb {len(mgb)}); not counted in the exit status")
        continue
    p, m = statistics.median(plain), statistics.median(mgb)
    verdict = "PASS" if m / p >= limit else "SLOW"
    print(f"{verdict} g {mode}: median steps/s plain {p:.2f}, under mgb {m:.2f}: ratio {m / p:.3f} "
          f"(limit {limit}; not counted in the exit status)")
PY
)
echo "$g_summary"
forget_jobs
stop_mgbd

# ==== h. summary
echo "===== h. summary"
row experiment jobs lost "makespan s" "ratio/c"
row "b. without mgb, all at once" 8 "$b_lost" "$b_make" "$(ratio "$b_make" "$c_make")"
row "c. by hand, FFD waves" 8 "$c_lost" "$c_make" 1.00
row "d. mgb, first run" 8 "$d_lost" "$d_make" "$(ratio "$d_make" "$c_make")"
row "e. mgb, second run" 8 "$e_lost" "$e_make" "$(ratio "$e_make" "$c_make")"
row "f. DataLoader+DDP+2 train" 4 "$f_lost" "$f_make" -
printf '%s\n' "${rows[@]}"
echo "$g_summary" | sed 's/^/  /'
echo "failures: $failures"
exit $((failures > 0))
