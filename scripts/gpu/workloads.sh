#!/usr/bin/env bash
# Calibrates the workload suite on the GPU machine: runs each workload once at a small size and
# once at ~10 GiB, each with 2 snapshots, prints time and PASS/FAIL, and writes the costs that
# `mgb batch --generate --calibration FILE` uses to size --iters and --snapshots: kernel time per
# iteration, and the host phases (input, one snapshot), each as a + b * GiB.
#
# usage: scripts/gpu/workloads.sh [BIN_DIR] [BIG_GIB]
#   BIN_DIR  the built workloads (default build-work/workloads; build them here, carry them)
#   BIG_GIB  the large calibration size (default 10)
# Outputs (under $OUT when set, else ./workloads-out): workloads.log (every run's output),
# workload_calibration.json, workloads_table.txt.
set -u
BIN_DIR=${1:-build-work/workloads}
BIG=${2:-10}
SMALL=0.5
SNAPSHOTS=2
DEST=${OUT:-./workloads-out}
mkdir -p "$DEST"
LOG="$DEST/workloads.log"
: > "$LOG"
WORKLOADS=${WORKLOADS:-"mlp_train heat2d md_cells nw_align wavelet2d bfs_graph"}
# Iterations per calibration run: enough to dominate set-up, few enough to stay short.
declare -A ITERS=([mlp_train]=1000 [heat2d]=200 [md_cells]=10 [nw_align]=3 [wavelet2d]=10 [bfs_graph]=4)

nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv >> "$LOG" 2>&1 || true
status=0
rows=()
for w in $WORKLOADS; do
  for gb in $SMALL $BIG; do
    start=$(date +%s.%N)
    output=$(timeout ${RUN_TIMEOUT:-300} "$BIN_DIR/$w" --gb "$gb" --iters "${ITERS[$w]}" \
             --snapshots $SNAPSHOTS 2>&1)
    rc=$?
    end=$(date +%s.%N)
    printf '===== %s --gb %s --iters %s (rc=%d)\n%s\n' "$w" "$gb" "${ITERS[$w]}" "$rc" "$output" >> "$LOG"
    verdict=$(grep -o 'MGB_RESULT [A-Z]*' <<<"$output" | awk '{print $2}')
    [ -z "$verdict" ] && verdict="NONE(rc=$rc)"
    [ "$verdict" = PASS ] && [ $rc -eq 0 ] || status=1
    kernel_ms=$(grep -o 'kernel_ms=[0-9.]*' <<<"$output" | head -1 | cut -d= -f2)
    footprint=$(grep -o 'footprint_gib=[0-9.]*' <<<"$output" | head -1 | cut -d= -f2)
    input_ms=$(grep -o 'MGB_HOST_MS phase=input ms=[0-9.]*' <<<"$output" | awk -F= '{s+=$3} END{print s+0}')
    # per snapshot (one snapshot may be several transfers: count is not the snapshot count)
    snap_ms=$(grep -o 'MGB_HOST_MS phase=snapshot ms=[0-9.]*' <<<"$output" |
              awk -F= -v n="$SNAPSHOTS" '{s+=$3} END{print s/n}')
    wall=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b-a}')
    line=$(printf '%-10s gb=%-5s footprint=%-8s iters=%-5s wall_s=%-7s kernel_ms=%-10s input_ms=%-9s snapshot_ms=%-9s %s' \
           "$w" "$gb" "${footprint:-?}" "${ITERS[$w]}" "$wall" "${kernel_ms:-?}" "$input_ms" "${snap_ms:-?}" "$verdict")
    echo "$line"
    rows+=("$w $gb ${footprint:-0} ${ITERS[$w]} $wall ${kernel_ms:-0} ${input_ms:-0} ${snap_ms:-0} $verdict")
  done
done
printf '%s\n' "${rows[@]}" > "$DEST/workloads_table.txt"

# Each cost = a + b * footprint, from the two sizes.
python3 - "$DEST/workloads_table.txt" "$DEST/workload_calibration.json" <<'PY'
import json, sys
runs = {}
for line in open(sys.argv[1]):
    w, gb, fp, iters, wall, kms, input_ms, snap_ms, verdict = line.split()
    runs.setdefault(w, []).append((float(fp), int(iters), float(kms) / 1e3, float(input_ms) / 1e3,
                                   float(snap_ms) / 1e3, verdict))
def line_through(g1, c1, g2, c2):
    b = max(0.0, (c2 - c1) / (g2 - g1))
    return max(0.0, c1 - b * g1), b
cal = {}
for w, pts in runs.items():
    if len(pts) != 2 or any(p[5] != "PASS" for p in pts):
        print(f"{w}: no calibration (a run failed)")
        continue
    (g1, i1, k1, in1, s1, _), (g2, i2, k2, in2, s2, _) = pts
    a, b = line_through(g1, k1 / i1, g2, k2 / i2)
    ia, ib = line_through(g1, in1, g2, in2)
    sa, sb = line_through(g1, s1, g2, s2)
    cal[w] = {"per_iter_s": a, "per_iter_per_gib_s": b, "input_s": ia, "input_s_per_gib": ib,
              "snapshot_s": sa, "snapshot_s_per_gib": sb}
    print(f"{w}: per_iter_s={a:.6g} per_iter_per_gib_s={b:.6g} input={ia:.3g}+{ib:.3g}/GiB s "
          f"snapshot={sa:.3g}+{sb:.3g}/GiB s")
json.dump(cal, open(sys.argv[2], "w"), indent=2)
PY
echo "calibration: $DEST/workload_calibration.json; full output: $LOG"
exit $status
