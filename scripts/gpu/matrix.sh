#!/usr/bin/env bash
# One device call's share of the evaluation matrix: optionally calibrates the workloads first,
# generates the job lists from that calibration, runs each workload's policies with eval.sh, and
# packs everything into $OUT/matrix.tar.gz (a device call returns at most 8 files).
set -u

usage() {
  cat <<'EOF'
usage: scripts/gpu/matrix.sh [options] SPEC...

SPEC is NAME/COUNT/RATIO/RUNS, e.g. W1/16/1:1/single@2,mgb@8 : a COUNT-job mix at large:small
RATIO (mgb batch --generate --seed 1), run under each POLICY@WORKERS of RUNS (eval.sh --runs).
Specs run in order until --deadline; a spec that would start with < 60 s left is skipped.

options:
  --calibrate          first run scripts/gpu/workloads.sh on --plain (the costs then size the mixes)
  --calibration FILE   size the mixes from FILE instead (default examples/workloads/calibration-h200.json)
  --plain DIR          the workloads as written, for --calibrate (default .device/wl-plain)
  --wl DIR             the rewritten workloads the jobs run (default .device/wl)
  --bin DIR            mgbd, mgb, mgb-batch (default .device/bin)
  --target S           solo seconds per job (default 15)
  --gpu-fraction F     share of it in kernels, the rest host phases (default 0.3)
  --gpu-gib G          the GPU size the mixes are drawn for (default 140, an H200; 80 for an H100)
  --deadline S         whole-script limit in seconds (default 540)
  --gpus FILE          passed to eval.sh: mgbd --gpus FILE instead of NVML (dry runs)
  --no-mps             passed to eval.sh: no MPS (dry runs)
  -h, --help           this text
Outputs: $OUT/matrix.tar.gz (cal/ jobs/ NAME/ with eval.sh's files), $OUT/matrix.log.
EOF
}

HERE=$(cd "$(dirname "$0")" && pwd)
CALIBRATE=0
CALIBRATION=$(cd "$HERE/../.." && pwd)/examples/workloads/calibration-h200.json
PLAIN=.device/wl-plain
WL=.device/wl
BIN=.device/bin
TARGET=15
FRACTION=0.3
GPU_GIB=140
DEADLINE=540
EVAL_EXTRA=()
SPECS=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --calibrate) CALIBRATE=1; shift ;;
    --no-mps) EVAL_EXTRA+=(--no-mps); shift ;;
    --gpus) [ $# -ge 2 ] || { echo "matrix.sh: --gpus needs a value" >&2; exit 2; }
      EVAL_EXTRA+=(--gpus "$2"); shift 2 ;;
    --calibration|--plain|--wl|--bin|--target|--gpu-fraction|--gpu-gib|--deadline)
      [ $# -ge 2 ] || { echo "matrix.sh: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --calibration) CALIBRATION=$2 ;; --plain) PLAIN=$2 ;; --wl) WL=$2 ;; --bin) BIN=$2 ;;
        --target) TARGET=$2 ;; --gpu-fraction) FRACTION=$2 ;; --deadline) DEADLINE=$2 ;;
        --gpu-gib) GPU_GIB=$2 ;;
      esac
      shift 2 ;;
    -*) echo "matrix.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    *) SPECS+=("$1"); shift ;;
  esac
done
[ ${#SPECS[@]} -ge 1 ] || { echo "matrix.sh: give at least one SPEC (try --help)" >&2; exit 2; }
[[ "$DEADLINE" =~ ^[0-9]+$ ]] || { echo "matrix.sh: --deadline must be whole seconds, got '$DEADLINE'" >&2; exit 2; }
for spec in "${SPECS[@]}"; do
  [[ "$spec" =~ ^[A-Za-z0-9_-]+/[0-9]+/[0-9]+:[0-9]+/[a-z:0-9@,+-]+$ ]] ||
    { echo "matrix.sh: SPEC '$spec' is not NAME/COUNT/L:S/POLICY@N,..." >&2; exit 2; }
done

DEST=${OUT:-./matrix-out}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
WORK=$(mktemp -d /tmp/mgb-matrix.XXXXXX)
mkdir -p "$WORK/cal" "$WORK/jobs"
LOG="$DEST/matrix.log"
: >"$LOG"
START=$SECONDS
log() { printf '[%4ds] %s\n' $((SECONDS - START)) "$*" | tee -a "$LOG"; }
pack() { tar -czf "$DEST/matrix.tar.gz" -C "$WORK" . 2>>"$LOG"; log "packed $DEST/matrix.tar.gz"; }
trap 'log "stopped by a signal"; pack; exit 1' INT TERM
[ -d "$BIN/../lib" ] && export LD_LIBRARY_PATH="$(cd "$BIN/../lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

if [ "$CALIBRATE" = 1 ]; then
  log "calibrating $PLAIN"
  OUT="$WORK/cal" bash "$HERE/workloads.sh" "$PLAIN" 10 2>&1 | tee -a "$LOG"
  CALIBRATION="$WORK/cal/workload_calibration.json"
fi
[ -r "$CALIBRATION" ] || { log "no calibration at $CALIBRATION"; pack; exit 1; }

status=0
for spec in "${SPECS[@]}"; do
  IFS=/ read -r name count ratio runs <<<"$spec"
  left=$((DEADLINE - (SECONDS - START)))
  if [ "$left" -lt 60 ]; then log "$name: skipped ($left s left)"; continue; fi
  "$BIN/mgb-batch" --generate --out "$WORK/jobs/$name.json" --count "$count" --ratio "$ratio" \
    --seed 1 --bin-dir "$WL" --target-seconds "$TARGET" --gpu-fraction "$FRACTION" \
    --gpu-gib "$GPU_GIB" --max-gib "$(awk -v g="$GPU_GIB" 'BEGIN {print g * 0.7}')" \
    --calibration "$CALIBRATION" >>"$LOG" 2>&1 || { log "$name: generate failed"; status=1; continue; }
  log "$name: ${runs//,/ } ($left s left)"
  OUT="$WORK/$name" bash "$HERE/eval.sh" --bin "$BIN" --runs "${runs//,/ }" "${EVAL_EXTRA[@]}" \
    --deadline $((left - 15)) --timeout $((left - 20)) "$WORK/jobs/$name.json" 2>&1 | tee -a "$LOG"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
done
pack
exit $status
