#!/usr/bin/env bash
# The paper's 16-job Rodinia mix (GPU-Sched's p100_50_16jobs_0) on one GPU, side by side in one
# device call: the same sources built as written (nvcc), through mgb-nvcc, and through GPU-Sched's
# passes (scripts/paper/build-*.sh). Made for the GPU machine; docs/evaluation.md has the method.
set -u

usage() {
  cat <<'EOF'
usage: scripts/paper/paper-mix.sh --bundle DIR --mgb-bin DIR [--wl FILE] [--runs "RUN ..."] [--out DIR]

--bundle DIR   what scripts/paper/bundle.sh made: nvcc/ and mgb/ (the seven programs as written
               and through mgb-nvcc), gpusched/ (build-gpusched.sh's output), tools/ (input
               generators), p100_50_16jobs_0.wl
--mgb-bin DIR  mgbd and mgb (scripts/gpu/pack.sh: .device/bin; libraries in DIR/../lib)
--wl FILE      the job mix, in GPU-Sched's workload format (one command line per job naming
               .../rodinia_cuda_3.1/cuda/PROGRAM and .../rodinia_cuda_3.1/data/...; default the
               bundle's p100_50_16jobs_0.wl; scripts/paper/rodinia-mix.py writes others)
--runs "..."   in order (default "bound gpusched@10 mgb@16"):
                 bound          srad_v1 100 0.5 20000 20000 (the mix's longest job) alone, as
                                written: the makespan's lower bound
                 bound-busy     the same beside 15 processes that only spin
                 solo           every distinct job of the mix alone, as written, one after
                                another (one job at a time: the single-assignment baseline)
                 gpusched@N     GPU-Sched's scheduler (policy mgb_basic, the paper's Algorithm 3)
                                and its workloader with N workers, MPS on
                 mgb@N          mgbd --policy mgb and `mgb batch --workers N`, MPS on (eval.sh);
                                mgb@auto: `--workers auto` (the count adapts to the node)
                 POLICY@N       eval.sh's other mgbd policies with N workers, MPS on: single
                                (single-assignment: N = the GPUs; also the solo reference
                                report.py's bound comes from), cg:K (core-to-GPU, memory-blind),
                                memory (memory only), schedgpu (all on one GPU while it fits)
                 mgb-lpt@N      the same with --order longest-first, run times from the earlier
                                mgb@N runs of this call (or --history)
                 blind@N        every job as written, N at once under MPS, no scheduler
                 pair-same      two srad_v1 20000x20000 as written at once, one working directory
                 pair-own       the same, each in its own directory
                 warm           touch most of the host's free memory once, then free it (no
                                job): the VM backs its memory on first use, which made the
                                first run of a call slower (docs/evaluation.md)
               A run named twice is logged the second time as TAG-2 (mgb-w16-2), and so on.
--history F    earlier `mgb batch` JSON files (comma-separated) for mgb-lpt runs
--dirs own|shared
               own (default): each job runs in its own working directory WORK/jobs/NN/b (made
               through tools/in-dir.sh); shared: all in WORK/run/a/b, as GPU-Sched's workloader
               runs them, where every srad_v1 writes the same image_out.pgm
--gpus FILE    mgbd's GPUs for the mgb runs from FILE (mgbd --gpus) instead of NVML: the same
               card with less memory makes memory bind ({"gpus": [{"name", "memory_bytes",
               "sms"}]}; the programs still run on GPU 0)
--timeout S    limit per run (default 150)
--out DIR      results (default $OUT or ./paper-out): paper-mix.txt (one line per run), each
               run's log and JSON

Inputs are generated first (a 2^25-node graph for bfs, an 8192x8192 BMP for dwt2d, the 502x458
PGM srad_v1 reads); jobs run in WORK/run/a/b, where srad_v1 finds ../../../data/srad/image.pgm.
EOF
}

BUNDLE=""; MGB_BIN=""; WL=""; RUNS="bound gpusched@10 mgb@16"; DEST=${OUT:-./paper-out}; HISTORY=""
RUN_TIMEOUT=150
DIRS=own
GPUS_FILE=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --bundle|--mgb-bin|--wl|--runs|--out|--history|--timeout|--dirs|--gpus)
      [ $# -ge 2 ] || { echo "paper-mix.sh: $1 needs a value" >&2; exit 2; }
      case "$1" in
        --bundle) BUNDLE=$2 ;; --mgb-bin) MGB_BIN=$2 ;; --wl) WL=$2 ;; --runs) RUNS=$2 ;; --out) DEST=$2 ;;
        --history) HISTORY=$2 ;; --timeout) RUN_TIMEOUT=$2 ;; --dirs) DIRS=$2 ;;
        --gpus) GPUS_FILE=$2 ;;
      esac
      shift 2 ;;
    *) echo "paper-mix.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for r in $RUNS; do  # checked before any device time is spent
  [[ "$r" =~ ^(warm|bound|bound-busy|solo|pair-same|pair-own|mgb@auto|(gpusched|mgb|mgb-lpt|blind|single|cg:[1-9][0-9]*|memory|schedgpu)@[1-9][0-9]*)$ ]] ||
    { echo "paper-mix.sh: --runs: '$r' is not a run (see --help)" >&2; exit 2; }
done
[ "$DIRS" = own ] || [ "$DIRS" = shared ] || { echo "paper-mix.sh: --dirs must be own or shared, got '$DIRS'" >&2; exit 2; }
if [ -n "$GPUS_FILE" ]; then
  [ -f "$GPUS_FILE" ] || { echo "paper-mix.sh: --gpus '$GPUS_FILE' is not a file" >&2; exit 2; }
  GPUS_FILE=$(cd "$(dirname "$GPUS_FILE")" && pwd)/$(basename "$GPUS_FILE")
fi
[ -d "$BUNDLE" ] || { echo "paper-mix.sh: --bundle '$BUNDLE' is not a directory" >&2; exit 2; }
[ -x "$MGB_BIN/mgbd" ] || { echo "paper-mix.sh: --mgb-bin '$MGB_BIN' has no mgbd" >&2; exit 2; }
BUNDLE=$(cd "$BUNDLE" && pwd); MGB_BIN=$(cd "$MGB_BIN" && pwd)
WL=${WL:-$BUNDLE/p100_50_16jobs_0.wl}
[ -f "$WL" ] || { echo "paper-mix.sh: --wl '$WL' is not a file" >&2; exit 2; }
WL=$(cd "$(dirname "$WL")" && pwd)/$(basename "$WL")
MGB_LIB=$(cd "$MGB_BIN/../lib" 2>/dev/null && pwd || true)  # the mgb CLI's shared libraries (pack.sh)
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$DEST"; DEST=$(cd "$DEST" && pwd)
WORK=${PAPER_WORK:-/tmp/paper-mix}
mkdir -p "$WORK/data/srad" "$WORK/data/bfs" "$WORK/data/dwt2d" "$WORK/run/a/b" "$WORK/lists"
SUMMARY="$DEST/paper-mix.txt"
R="$WORK/results"  # every run's logs and JSON, packed into $DEST/runs.tar.gz at the end
rm -rf "$R"; mkdir -p "$R"; : >"$SUMMARY"
START=$SECONDS
log() { printf '[%4ds] %s\n' $((SECONDS - START)) "$*" | tee -a "$DEST/paper-mix.log"; }

# ---- the machine and the inputs -------------------------------------------------------------------
{ echo "== $(date -u)"; nproc; lscpu 2>/dev/null | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket'
  free -g | head -2; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
} >"$DEST/machine.txt" 2>&1
log "machine: $(tr '\n' ' ' <"$DEST/machine.txt" | cut -c1-300)"
# The mix beside the results: report.py's Rodinia section reads each job's program and predicted
# bytes from the description rodinia-mix.py writes beside its .wl.
cp "$WL" "$DEST/mix.wl"
[ -f "$WL.json" ] && cp "$WL.json" "$DEST/mix.wl.json"
log "mix: $(basename "$WL") ($(grep -c . "$WL") jobs)"

gen() {  # gen FILE COMMAND...: runs COMMAND (which writes FILE.tmp) unless FILE is there
  [ -s "$1" ] && return 0
  local t=$SECONDS
  "${@:2}" && mv "$1.tmp" "$1" || { log "FAILED to make $1"; exit 1; }
  log "made $1 ($(du -h "$1" | cut -f1), $((SECONDS - t)) s)"
}
D="$WORK/data"
gen "$D/srad/image.pgm" python3 "$BUNDLE/tools/gen-pgm.py" "$D/srad/image.pgm.tmp"
# dwt2d reads the first 3*W*H bytes of rgb.bmp without parsing it: the file is made as large as
# the mix's largest -d WxH needs (8192x8192 at least), and made again if an older one is smaller.
bmp_side=$(grep -o -- '-d [0-9]*x[0-9]*' "$WL" | awk '{split($2, d, "x"); s = d[1] > d[2] ? d[1] : d[2];
  if (s > m) m = s} END {print (m > 8192 ? m : 8192)}')
bmp_need=$((54 + 3 * bmp_side * bmp_side))
[ -f "$D/dwt2d/rgb.bmp" ] && [ "$(stat -c %s "$D/dwt2d/rgb.bmp")" -lt "$bmp_need" ] && rm -f "$D/dwt2d/rgb.bmp"
gen "$D/dwt2d/rgb.bmp" python3 "$BUNDLE/tools/gen-bmp.py" "$bmp_side" "$bmp_side" "$D/dwt2d/rgb.bmp.tmp"
if grep -q 'graph32M' "$WL"; then  # ~40 s: only for a mix that runs bfs on it
  gen "$D/bfs/graph32M.txt" "$BUNDLE/tools/gen-bfs-graph" 33554432 "$D/bfs/graph32M.txt.tmp"
fi

# One job list per build: the .wl's command lines with our programs and data.
make_lists() {
  python3 - "$WL" "$BUNDLE" "$WORK" "$DIRS" <<'PY'
import json, re, sys
wl, bundle, work, dirs = sys.argv[1:5]
programs = {"srad/srad_v1/srad": "srad_v1", "srad/srad_v2/srad": "srad_v2", "bfs/bfs": "bfs",
            "lavaMD/lavaMD": "lavaMD", "backprop/backprop": "backprop", "dwt2d/dwt2d": "dwt2d",
            "nw/needle": "needle"}
# The .wl names programs and data under its authors' home: .../rodinia_cuda_3.1/{cuda,data}/...
def rodinia_path(a):
    m = re.match(r"^/.*/rodinia_cuda_3\.1/(.*)$", a)
    return m.group(1) if m else None
data = {"data/bfs/inputGen/graph32M.txt": work + "/data/bfs/graph32M.txt",
        "data/dwt2d/rgb.bmp": work + "/data/dwt2d/rgb.bmp"}
lines = [l.split() for l in open(wl) if l.strip()]
# Host memory estimates for mgb batch's host memory gate, where rodinia-mix.py described the mix
# (WL.json: each job's device bytes): the host buffers each program fills, against its device
# footprint, read from the sources. lavaMD fills rv, qv and fv as on the device (1.0); needle
# reference, input and output itemsets against two device arrays (1.5); srad_v2 I and J against
# six (0.34); srad_v1 one image against nine arrays (0.13); dwt2d its RGB image (0.1: measured;
# its result buffers suggested 0.3). On the 140 GiB mix (session 26) the measured peaks of
# lavaMD, needle and srad_v2 came within 2% of these. A finished job's measured peak replaces the
# estimate for the runs after it.
host_per_device = {"lavaMD": 1.0, "needle": 1.5, "srad_v2": 0.34, "srad_v1": 0.13, "dwt2d": 0.1}
try:
    described = json.load(open(wl + ".json"))["mix"]
except (OSError, ValueError, KeyError):
    described = []
for build in ("nvcc", "mgb", "gpusched"):
    binary = bundle + "/" + build + ("/bin/" if build == "gpusched" else "/")
    jobs, text = [], []
    for i, argv in enumerate(lines):
        prog = rodinia_path(argv[0])[len("cuda/"):]
        out = [binary + programs[prog]] + [data.get(rodinia_path(a) or "", a) for a in argv[1:]]
        if dirs == "own":  # WORK/jobs/NN/b: srad_v1's ../../../data is WORK/data
            out = [bundle + "/tools/in-dir.sh", f"{work}/jobs/{i:02d}/b"] + out
        job = {"name": f"{i:02d}-{programs[prog]}", "argv": out, "memory_bytes": 0, "arrival_s": 0}
        if i < len(described) and programs[prog] in host_per_device:
            job["host_memory_bytes"] = int(described[i]["bytes"] * host_per_device[programs[prog]])
        jobs.append(job)
        text.append(" ".join(out))
    json.dump({"jobs": jobs}, open(f"{work}/lists/{build}.json", "w"), indent=1)
    open(f"{work}/lists/{build}.wl", "w").write("\n".join(text) + "\n")
    # Each distinct command line once, in the mix's order (the solo runs).
    seen, solo = set(), []
    for j in jobs:
        key = " ".join(j["argv"][2:] if dirs == "own" else j["argv"])
        if key not in seen:
            seen.add(key); solo.append(j)
    json.dump({"jobs": solo}, open(f"{work}/lists/{build}-solo.json", "w"), indent=1)
PY
}
make_lists || { log "FAILED to write the job lists"; exit 1; }
log "job lists ($DIRS working directories): $(ls "$WORK/lists" | tr '\n' ' ')"

clean_outputs() { rm -rf "$WORK"/run/a/b/* "$WORK"/jobs; }

# ---- MPS for the GPU-Sched and no-scheduler runs (eval.sh starts its own for mgb) ----------------
source "$HERE/../gpu/mps.sh"  # mps_start, mps_stop, mps_env: MPS_ENV for the clients
MPS_BASE=""
start_mps() {
  MPS_BASE="$WORK/mps-$1"; rm -rf "$MPS_BASE"
  mps_start "$MPS_BASE" "$R/$1.mps.log" && mps_env "$MPS_BASE"
}
stop_mps() {
  [ -n "$MPS_BASE" ] || return 0
  local killed; killed=$(mps_stop "$MPS_BASE" "$R/mps-quit.log")
  [ -n "$killed" ] && log "MPS processes still up 20 s after quit: SIGKILL $killed"
  MPS_BASE=""
}

# ---- runs -----------------------------------------------------------------------------------------
declare -A TAG_USES  # a run named twice gets TAG-2, TAG-3...: its logs and JSON stay apart
unique_tag() {  # sets TAG (not echoed: a $(...) subshell would lose the count)
  local n=$(( ${TAG_USES[$1]:-0} + 1 )); TAG_USES[$1]=$n
  if [ "$n" -eq 1 ]; then TAG=$1; else TAG=$1-$n; fi
}

# Touch most of the host's available memory once and free it, so no measured run pays for the
# VM backing fresh memory (KINDS.md: the machine's memory grows as it is first used).
run_warm() {
  local t0=$SECONDS
  python3 - >"$R/warm.log" 2>&1 <<'PY'
import mmap
avail = next(int(l.split()[1]) * 1024 for l in open("/proc/meminfo") if l.startswith("MemAvailable:"))
size = max(0, avail - (8 << 30)) // (1 << 30) * (1 << 30)  # leave 8 GiB to the rest
chunk = b"\x01" * (1 << 30)
m = mmap.mmap(-1, size) if size else None
for off in range(0, size, 1 << 30):
    m[off:off + (1 << 30)] = chunk
print(f"touched {size >> 30} GiB")
PY
  log "warm: $(tail -1 "$R/warm.log") in $((SECONDS - t0)) s"
  echo "warm $(tail -1 "$R/warm.log") seconds=$((SECONDS - t0))" >>"$SUMMARY"
}

run_bound() {
  clean_outputs
  local t0 t1 rc=0 tag; unique_tag bound; tag=$TAG
  t0=$(date +%s.%N)
  (cd "$WORK/run/a/b" && timeout "$RUN_TIMEOUT" "$BUNDLE/nvcc/srad_v1" 100 0.5 20000 20000) \
    >"$R/$tag.log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  local s; s=$(python3 -c "print(f'{$t1-$t0:.1f}')")
  log "$tag: srad_v1 20000x20000 alone, as written: $s s, exit $rc"
  echo "$tag srad_v1-20000-alone makespan_s=$s exit=$rc" >>"$SUMMARY"
}

run_solo() {
  clean_outputs
  (cd "$WORK/run/a/b" && timeout 600 env -u MGB_SOCKET LD_LIBRARY_PATH="$MGB_LIB" "$MGB_BIN/mgb" batch --jobs "$WORK/lists/nvcc-solo.json" \
    --workers 1 --label solo-as-written --out "$R/solo.json" --logs "$R/solo.logs" --no-nvml) \
    >"$R/solo.log" 2>&1
  log "solo: $(grep -E '^summary' "$R/solo.log" | tail -1)"
  echo "solo $(grep -E '^summary' "$R/solo.log" | tail -1)" >>"$SUMMARY"
}

# The bound's job beside 15 processes that only spin (no memory, no I/O, no GPU): how much of the
# mix's slowdown of it is plain CPU contention.
run_bound_busy() {
  clean_outputs
  local spinners=() t0 t1 rc=0 i
  for i in $(seq 15); do sh -c 'while :; do :; done' & spinners+=($!); done
  t0=$(date +%s.%N)
  (cd "$WORK/run/a/b" && timeout "$RUN_TIMEOUT" "$BUNDLE/nvcc/srad_v1" 100 0.5 20000 20000) \
    >"$R/bound-busy.log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  kill "${spinners[@]}" 2>/dev/null; wait "${spinners[@]}" 2>/dev/null
  local s; s=$(python3 -c "print(f'{$t1-$t0:.1f}')")
  log "bound-busy: srad_v1 20000x20000 beside 15 spinning processes: $s s, exit $rc"
  echo "bound-busy makespan_s=$s exit=$rc" >>"$SUMMARY"
}

# Two srad_v1 20000x20000 (as written) at once, alone on the machine: "same" in one working
# directory (they write one image_out.pgm, as every srad_v1 of the mix does), "own" in two.
run_pair() {  # $1 same|own
  clean_outputs
  local t0 t1 a=$WORK/run/a/b b=$WORK/run/a/b
  [ "$1" = own ] && { b=$WORK/run/a/c; mkdir -p "$b"; rm -f "$b"/*; }
  t0=$(date +%s.%N)
  (cd "$a" && exec "$BUNDLE/nvcc/srad_v1" 100 0.5 20000 20000) >"$R/pair-$1-1.log" 2>&1 &
  local p1=$!
  (cd "$b" && exec "$BUNDLE/nvcc/srad_v1" 100 0.5 20000 20000) >"$R/pair-$1-2.log" 2>&1 &
  local p2=$!
  wait $p1 $p2
  t1=$(date +%s.%N)
  local s; s=$(python3 -c "print(f'{$t1-$t0:.1f}')")
  log "pair-$1: two srad_v1 20000x20000 at once, $1 directory: $s s"
  echo "pair-$1 makespan_s=$s" >>"$SUMMARY"
}

# Every job as written at once (N workers) under MPS, no scheduler: memory-blind packing.
run_blind() {  # $1 workers
  local n=$1 tag; unique_tag "blind-w$1"; tag=$TAG
  clean_outputs
  start_mps "$tag" || { log "FAILED $tag: MPS did not start"; return 1; }
  (cd "$WORK/run/a/b" && timeout "$RUN_TIMEOUT" env -u MGB_SOCKET "${MPS_ENV[@]}" \
    LD_LIBRARY_PATH="$MGB_LIB" "$MGB_BIN/mgb" batch --jobs "$WORK/lists/nvcc.json" --workers "$n" --label "$tag" --out "$R/$tag.json" \
    --logs "$R/$tag.logs") >"$R/$tag.log" 2>&1
  stop_mps
  log "$tag: $(grep -E '^summary' "$R/$tag.log" | tail -1)"
  echo "$tag $(grep -E '^summary' "$R/$tag.log" | tail -1)" >>"$SUMMARY"
}

run_gpusched() {  # $1 workers
  local n=$1 tag; unique_tag "gpusched-w$1"; tag=$TAG
  clean_outputs
  start_mps "$tag" || { log "FAILED $tag: MPS did not start"; return 1; }
  rm -f /dev/shm/bemps  # its programs find gpusched/lib through their RUNPATH
  (cd "$WORK/run/a/b" && exec env "${MPS_ENV[@]}" "$BUNDLE/gpusched/bin/sched" mgb_basic) \
    >"$R/$tag.sched.log" 2>&1 &
  local sched=$!
  sleep 2
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  # Its argument order is <workload_file> <sched_alg> <num_processes> (its usage text is wrong).
  (cd "$WORK/run/a/b" && timeout "$RUN_TIMEOUT" env "${MPS_ENV[@]}" python3 "$BUNDLE/gpusched/workloader.py" \
    "$WORK/lists/gpusched.wl" mgb_basic "$n") >"$R/$tag.log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  kill -INT "$sched" 2>/dev/null; sleep 1; kill -KILL "$sched" 2>/dev/null; wait "$sched" 2>/dev/null
  pkill -KILL -f "$BUNDLE/gpusched/bin/" 2>/dev/null
  stop_mps
  local s lost total
  s=$(python3 -c "print(f'{$t1-$t0:.1f}')")
  lost=$(grep -c 'got error' "$R/$tag.log")
  total=$(grep -o 'TOTAL_EXPERIMENT_TIME [0-9.]*' "$R/$tag.log" | awk '{print $2}')
  cp "$WORK/run/a/b/sched-stats.out" "$R/$tag.sched-stats.out" 2>/dev/null
  log "$tag: wall $s s, workloader's TOTAL_EXPERIMENT_TIME ${total:-none}, jobs lost $lost, exit $rc"
  echo "$tag makespan_s=${total:-$s} wall_s=$s lost=$lost exit=$rc" >>"$SUMMARY"
}

# mgbd under eval.sh: $1 mgb, mgb-lpt or another of eval.sh's policies (single, cg:K, memory,
# schedgpu), $2 workers. Every policy runs the mgb-nvcc build: only the placement differs.
run_mgb() {
  local kind=$1 n=$2 tag args="" policy=$1; unique_tag "${1/:/-}-w$2"; tag=$TAG
  clean_outputs
  if [ "$kind" = mgb-lpt ]; then
    local hist=$HISTORY
    for f in "$R"/mgb-runs/mgb-w*/*.json; do [ -f "$f" ] && hist="${hist:+$hist,}$f"; done
    [ -n "$hist" ] || { log "SKIPPED $tag: no earlier mgb run to learn run times from"; return 1; }
    args="--order longest-first --history $hist"; policy=mgb
  else  # the host peaks every earlier run of this call measured, for the host memory gate
    local hist=$HISTORY
    for f in "$R"/mgb-runs/*/*.json; do [ -f "$f" ] && hist="${hist:+$hist,}$f"; done
    args=${hist:+--history $hist}
  fi
  (cd "$WORK/run/a/b" && OUT="$R/mgb-runs/$tag" bash "$HERE/../gpu/eval.sh" --runs "$policy@$n" \
    --bin "$MGB_BIN" --name "paper" --timeout "$RUN_TIMEOUT" --deadline $((RUN_TIMEOUT + 60)) \
    ${args:+--batch-args "$args"} ${GPUS_FILE:+--gpus "$GPUS_FILE"} "$WORK/lists/mgb.json") \
    >"$R/$tag.log" 2>&1
  local json; json=$(ls "$R/mgb-runs/$tag"/*.json 2>/dev/null | head -1)
  local line
  line=$(python3 - "$json" "$HERE/../report" <<'PY'
import json, sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
import runs  # scripts/report/runs.py: what an interrupted run's stopped jobs are
try:
    d = json.load(open(sys.argv[1])); s = d["summary"]
    # A run stopped by its time limit SIGTERMs its running jobs and never starts the rest: those
    # are stopped, not lost.
    stopped = runs.runs_of(d, sys.argv[1])[0].stopped
    print(f"makespan_s={s['makespan_s']:.1f} lost={s['crashed'] + s['not_run'] - stopped} "
          f"stopped={stopped} mean_turnaround_s={s['mean_turnaround_s']:.1f} "
          f"order={d.get('order', 'fifo')}")
except Exception as e:
    print(f"no result ({e})")
PY
)
  log "$tag: $line"
  echo "$tag $line" >>"$SUMMARY"
}

for r in $RUNS; do
  case "$r" in
    warm) run_warm ;;
    bound) run_bound ;;
    bound-busy) run_bound_busy ;;
    solo) run_solo ;;
    gpusched@*) run_gpusched "${r#*@}" ;;
    mgb@*) run_mgb mgb "${r#*@}" ;;
    mgb-lpt@*) run_mgb mgb-lpt "${r#*@}" ;;
    single@*|cg:*@*|memory@*|schedgpu@*) run_mgb "${r%@*}" "${r##*@}" ;;
    blind@*) run_blind "${r#*@}" ;;
    pair-same|pair-own) run_pair "${r#pair-}" ;;
  esac
done
log "done in $((SECONDS - START)) s"
tar -czf "$DEST/runs.tar.gz" -C "$WORK" results
cat "$SUMMARY"
