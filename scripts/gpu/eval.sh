#!/usr/bin/env bash
# The GPU evaluation: runs ONE job list under several mgbd policies, one after another, each on a
# fresh MPS control daemon and a fresh mgbd, and writes one `mgb batch` JSON per run for
# scripts/report.py. Made for one device call (nvidia-h200-x2, <= 9 minutes): per-run timeouts,
# a whole-script deadline, nothing left running, at most 8 files under $OUT.
set -u

usage() {
  cat <<'EOF'
usage: scripts/gpu/eval.sh [options] JOBS_FILE

Runs JOBS_FILE (from `mgb batch --generate`) once per entry of --runs, in order:
  MPS control daemon (fresh pipe/log dirs) -> mgbd --policy P --mps -> mgb batch --workers N
  -> leftover jobs killed -> mgbd stopped -> MPS stopped (a poisoned server never carries over).
The single-assignment run (policy single, workers = GPUs) is also the solo reference: under it
each job has its GPU to itself, so its run time is its solo time (docs/evaluation.md).

options:
  --runs "P@N ..."  policy@workers, in order (default "single@2 mgb@8 cg:2@4 cg:3@6");
                    policies: mgb mgb-sm single cg:N memory schedgpu, each optionally +spread (mgbd
                    --spread-tasks) and/or +priority (mgbd --queue-priority: with --batch-args
                    "--order longest-first ...", the longest jobs first in mgbd's wait queue)
                    and/or +slowPCT (mgbd --max-slowdown PCT); WORKERS a count or auto
                    (mgb batch --workers auto); at most 6 runs (8 files come back)
  --bin DIR         holds mgbd and mgb (with `batch`) or mgb-batch (default .device/bin)
  --lib DIR         their shared libraries, put on LD_LIBRARY_PATH (default DIR/../lib if present)
  --timeout S       limit per run, seconds (default 200); a run past it is stopped (SIGTERM:
                    its JSON still says which jobs ended) and marked INTERRUPTED
  --deadline S      limit for the whole script (default 520); a run that would get < 30 s is skipped
  --name NAME       result file prefix (default: JOBS_FILE's name without .json)
  --nvml-period S   GPU sampling period for mgb batch (default 0.5)
  --gpus FILE       mgbd --gpus FILE instead of NVML (dry runs without a GPU)
  --batch-args "A"  more arguments for every mgb batch (e.g. "--order longest-first --history R.json")
  --no-mps          no MPS control daemon, mgbd without --mps
  -h, --help        this text

Outputs in $OUT (default ./eval-out): NAME.POLICY.wN.json per run (':' in a policy becomes '-'),
eval.log (this script's log with every run's summary), logs.tar.gz (job output, mgbd and MPS
logs, nvidia-smi snapshots). Exit 0 when every run finished with no crashed job, 1 otherwise,
2 on bad usage.
EOF
}

die_usage() { echo "eval.sh: $*" >&2; echo "try: scripts/gpu/eval.sh --help" >&2; exit 2; }

RUNS="single@2 mgb@8 cg:2@4 cg:3@6"
BIN=.device/bin
LIB=""
RUN_TIMEOUT=200
DEADLINE=520
NAME=""
NVML_PERIOD=0.5
GPUS_FILE=""
BATCH_ARGS=""
USE_MPS=1
JOBS=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --no-mps) USE_MPS=0; shift ;;
    --runs|--bin|--lib|--timeout|--deadline|--name|--nvml-period|--gpus|--batch-args)
      [ $# -ge 2 ] || die_usage "$1 needs a value"
      case "$1" in
        --runs) RUNS=$2 ;; --bin) BIN=$2 ;; --lib) LIB=$2 ;; --timeout) RUN_TIMEOUT=$2 ;;
        --deadline) DEADLINE=$2 ;; --name) NAME=$2 ;; --nvml-period) NVML_PERIOD=$2 ;;
        --gpus) GPUS_FILE=$2 ;; --batch-args) BATCH_ARGS=$2 ;;
      esac
      shift 2 ;;
    -*) die_usage "unknown option '$1'" ;;
    *) [ -z "$JOBS" ] || die_usage "one JOBS_FILE only (got '$JOBS' and '$1')"; JOBS=$1; shift ;;
  esac
done

# ---- checks before anything starts -------------------------------------------------------------
[ -n "$JOBS" ] || die_usage "JOBS_FILE is required"
[ -r "$JOBS" ] || die_usage "JOBS_FILE $JOBS: cannot read"
for n in "$RUN_TIMEOUT" "$DEADLINE"; do
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -gt 0 ] || die_usage "--timeout/--deadline must be whole seconds > 0, got '$n'"
done
[ -x "$BIN/mgbd" ] || die_usage "--bin $BIN: no executable mgbd there"
[ -z "$LIB" ] && [ -d "$BIN/../lib" ] && LIB=$(cd "$BIN/../lib" && pwd)
[ -n "$LIB" ] && export LD_LIBRARY_PATH="$LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -x "$BIN/mgb" ] && "$BIN/mgb" batch --help >/dev/null 2>&1; then
  BATCH=("$BIN/mgb" batch)
elif [ -x "$BIN/mgb-batch" ]; then
  BATCH=("$BIN/mgb-batch")
else
  die_usage "--bin $BIN: neither 'mgb batch' nor mgb-batch works there"
fi
[ -z "$GPUS_FILE" ] || [ -r "$GPUS_FILE" ] || die_usage "--gpus $GPUS_FILE: cannot read"
read -r -a RUN_LIST <<<"$RUNS"
[ ${#RUN_LIST[@]} -ge 1 ] && [ ${#RUN_LIST[@]} -le 6 ] || die_usage "--runs: 1 to 6 entries, got ${#RUN_LIST[@]}"
for r in "${RUN_LIST[@]}"; do
  [[ "$r" =~ ^(mgb|mgb-sm|single|memory|schedgpu|cg:[0-9]+)(\+spread)?(\+priority)?(\+slow[0-9]+)?@([0-9]+|auto)$ ]] ||
    die_usage "--runs: '$r' is not POLICY@WORKERS (POLICY: mgb mgb-sm single memory schedgpu cg:N, optionally +spread, +priority, +slowPCT; WORKERS: a count or auto)"
done
# Every program the job list names must be there now, not discovered missing 5 minutes in.
PROGRAMS=$(python3 - "$JOBS" <<'PY'
import json, sys
try:
    jobs = json.load(open(sys.argv[1]))["jobs"]
    print("\n".join(sorted({j["argv"][0] for j in jobs})))
except Exception as e:
    sys.exit(f"{sys.argv[1]}: not a job list: {e}")
PY
) || die_usage "JOBS_FILE $JOBS is not a job list"
while read -r p; do
  [ -x "$p" ] || die_usage "$JOBS names program '$p', which is not an executable here (cwd $(pwd))"
done <<<"$PROGRAMS"

[ -n "$NAME" ] || NAME=$(basename "$JOBS" .json)
DEST=${OUT:-./eval-out}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
WORK=$(mktemp -d /tmp/mgb-eval.XXXXXX)
mkdir -p "$WORK/logs"
LOG="$DEST/eval.log"
: >"$LOG"
START=$SECONDS
log() { printf '[%4ds] %s\n' $((SECONDS - START)) "$*" | tee -a "$LOG"; }

# ---- process control: only what this script started, found by id or by a marker ----------------
MGBD_PID=""
MPS_BASE=""
RUN_MARK=""  # MGB_EVAL_RUN=<token> in the environment of one run's batch and jobs only

# pids_with_env, mps_start, mps_stop, mps_env. The script never exports the markers it looks
# for, so it and its own children never match.
source "$(dirname "${BASH_SOURCE[0]}")/mps.sh"

kill_leftover_jobs() {
  [ -n "$RUN_MARK" ] || return 0
  local pids
  pids=$(pids_with_env "MGB_EVAL_RUN=$RUN_MARK")
  if [ -n "$pids" ]; then
    log "killing leftover job processes: $(echo $pids)"
    kill -KILL $pids 2>/dev/null
  fi
}

stop_mgbd() {
  [ -n "$MGBD_PID" ] || return 0
  kill -TERM "$MGBD_PID" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$MGBD_PID" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$MGBD_PID" 2>/dev/null; then
    log "mgbd $MGBD_PID ignored SIGTERM for 10 s: SIGKILL"
    kill -KILL "$MGBD_PID" 2>/dev/null
  fi
  wait "$MGBD_PID" 2>/dev/null
  MGBD_PID=""
}

# MPS with its own pipe/log dirs per run; mgbd --mps --mps-dir finds it there and tells clients.
start_mps() {
  MPS_BASE="$WORK/mps-$1"
  mps_start "$MPS_BASE" "$WORK/logs/mps-$1.txt"
}

stop_mps() {
  [ -n "$MPS_BASE" ] || return 0
  local killed
  killed=$(mps_stop "$MPS_BASE" "$WORK/logs/mps-quit.txt")
  [ -n "$killed" ] && log "MPS processes still up 20 s after quit: SIGKILL $killed"
  cp -r "$MPS_BASE/log" "$WORK/logs/$(basename "$MPS_BASE")-log" 2>/dev/null
  MPS_BASE=""
}

gpu_snapshot() {
  command -v nvidia-smi >/dev/null || return 0
  { echo "== $1"; timeout 20 nvidia-smi --query-gpu=index,memory.used,utilization.gpu --format=csv
    timeout 20 nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv; } \
    >>"$WORK/logs/nvidia-smi.txt" 2>&1
}

bundle_logs() {
  tar -czf "$DEST/logs.tar.gz" -C "$WORK" logs 2>>"$LOG"
  log "logs bundled: $DEST/logs.tar.gz ($(du -k "$DEST/logs.tar.gz" 2>/dev/null | cut -f1) KiB)"
}

cleanup() {
  kill_leftover_jobs
  stop_mgbd
  stop_mps
}
on_signal() {
  log "stopped by a signal: cleaning up"
  cleanup
  bundle_logs
  rm -rf "$WORK"
  exit 1
}
trap on_signal INT TERM

# ---- one run ------------------------------------------------------------------------------------
# run_one INDEX POLICY WORKERS: 0 = finished with no crash, 1 = ran with crashes/timeout, 2 = failed to start
run_one() {
  local i=$1 policy=$2 workers=$3
  local tag="$NAME.${policy//:/-}.w$workers" sock="$WORK/mgbd-$i.sock"
  local left=$((DEADLINE - (SECONDS - START)))
  if [ $left -lt 45 ]; then
    log "SKIPPED $tag: $left s left before the deadline"
    return 1
  fi
  local limit=$RUN_TIMEOUT
  [ $limit -gt $((left - 15)) ] && limit=$((left - 15))  # leave time to tear down
  log "run $tag: policy $policy, $workers workers, limit ${limit}s"
  gpu_snapshot "before $tag"

  # --verbose 1: one line per decision in logs/TAG.mgbd.txt, to explain a run afterwards.
  local base=${policy%%+*}
  local mgbd_args=(--socket "$sock" --policy "$base" --verbose 1)
  # POLICY+slowPCT: mgbd --max-slowdown PCT (co-run demand bound).
  [[ "$policy" =~ \+slow([0-9]+) ]] && mgbd_args+=(--max-slowdown "${BASH_REMATCH[1]}")
  # POLICY+spread: mgbd --spread-tasks (each task by the policy alone, as the paper's prototype).
  [[ "$policy" == *+spread* ]] && mgbd_args+=(--spread-tasks)
  # POLICY+priority: mgbd --queue-priority (the jobs' MGB_QUEUE_PRIORITY orders its wait queue).
  [[ "$policy" == *+priority ]] && mgbd_args+=(--queue-priority)
  [ -n "$GPUS_FILE" ] && mgbd_args+=(--gpus "$GPUS_FILE")
  if [ $USE_MPS = 1 ]; then
    if ! start_mps "$i"; then
      log "FAILED $tag: nvidia-cuda-mps-control -d failed (logs/mps-$i.txt)"
      stop_mps
      return 2
    fi
    mgbd_args+=(--mps --mps-dir "$MPS_BASE")
  fi
  "$BIN/mgbd" "${mgbd_args[@]}" >"$WORK/logs/$tag.mgbd.txt" 2>&1 &
  MGBD_PID=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; kill -0 "$MGBD_PID" 2>/dev/null || break; sleep 0.1; done
  if [ ! -S "$sock" ]; then
    log "FAILED $tag: mgbd did not listen on $sock: $(tail -2 "$WORK/logs/$tag.mgbd.txt" | tr '\n' ' ')"
    stop_mgbd
    stop_mps
    return 2
  fi

  RUN_MARK="$$-$i-$RANDOM"
  local rc=0
  local client_env=()
  [ -n "$MPS_BASE" ] && mps_env "$MPS_BASE" && client_env=("${MPS_ENV[@]}")
  env MGB_EVAL_RUN="$RUN_MARK" "${client_env[@]}" timeout --signal=TERM --kill-after=20 "$limit" \
    "${BATCH[@]}" --jobs "$JOBS" --workers "$workers" --socket "$sock" --label "$policy" \
    --out "$DEST/$tag.json" --logs "$WORK/logs/$tag.jobs" --nvml-period "$NVML_PERIOD" $BATCH_ARGS \
    >"$WORK/logs/$tag.batch.txt" 2>&1 </dev/null || rc=$?
  [ $rc -eq 124 ] && log "TIMEOUT $tag after ${limit}s: stopped, jobs not finished are recorded so"
  grep -E '^summary|cannot|error' "$WORK/logs/$tag.batch.txt" | tail -5 | while read -r l; do log "  $l"; done
  kill_leftover_jobs
  RUN_MARK=""
  stop_mgbd
  stop_mps
  gpu_snapshot "after $tag"
  [ -s "$DEST/$tag.json" ] || { log "FAILED $tag: no JSON written (batch exit $rc)"; return 2; }
  log "done $tag: batch exit $rc"
  [ $rc -eq 0 ] && return 0 || return 1
}

log "eval: jobs $JOBS ($(grep -c '"name"' "$JOBS") jobs), runs: ${RUN_LIST[*]}, batch: ${BATCH[*]}"
log "eval: GPUs from $([ -n "$GPUS_FILE" ] && echo "$GPUS_FILE (DRY: no real GPU)" || echo NVML), MPS $([ $USE_MPS = 1 ] && echo on || echo off)"
if command -v nvidia-smi >/dev/null; then
  timeout 20 nvidia-smi >"$WORK/logs/nvidia-smi-start.txt" 2>&1 || log "nvidia-smi failed"
fi
status=0
i=0
for entry in "${RUN_LIST[@]}"; do
  i=$((i + 1))
  run_one "$i" "${entry%@*}" "${entry##*@}" || status=1
done
bundle_logs
rm -rf "$WORK"
log "eval: finished in $((SECONDS - START)) s; results in $DEST (python3 scripts/report.py DIR)"
exit $status
