#!/usr/bin/env bash
# On the GPU machine: Darknet as written and rewritten (scripts/paper/darknet/build.sh's
# darknet.tar.xz), (1) each job type once under mgbd with both builds, outputs compared, and (2)
# homogeneous 8-job workloads under single-assignment, schedgpu (the paper's schedGPU baseline:
# memory only, every job on one device while they fit) and mgb, each through scripts/gpu/eval.sh
# (fresh MPS and mgbd per run). Weights are Darknet's own random initialisation (an empty weights
# argument: no file is read), which costs the same compute as trained weights; there is no
# network access to fetch those.
#
# usage: run-on-gpu.sh DARKNET_TXZ [TYPES]   (from the repository root; mgbd, mgb in .device/bin)
#   TYPES   job types for the workloads (default "predict19 generate"), of:
#           predict19 (Darknet19 classification), predict53 (Darknet53-448), detect (yolov3-tiny),
#           generate (RNN text generation), train (CIFAR-10 training, cfg/cifar.cfg, on generated
#           data), mix (the paper's large experiment: N_MIX jobs, each a random one of predict19,
#           generate, train and detect, seed MIX_SEED, sized by the MIX_* variables);
#           "none": the comparison only
# env: N_PREDICT (images per predict job, default 400), N_DETECT (default 60), N_CHARS (RNN
#      characters, default 20000), N_TRAIN (training batches of 128 images, default 500),
#      DEADLINE (seconds for the workloads, default 420),
#      RUNS (eval.sh runs, default "single@2 schedgpu@8 mgb@8"), COMPARE=0 (skip part 1);
#      for mix: N_MIX (default 128), MIX_SEED (default 7), MIX_RUNS (default "single@2 mgb@16
#      mgb@32": the paper's 32 workers were 8 per GPU on 4 GPUs), and each job type's work
#      MIX_PREDICT (images, default 100), MIX_DETECT (default 30), MIX_CHARS (default 5000),
#      MIX_TRAIN (batches, default 100)
# Outputs in $OUT: darknet.log, darknet-results.tar.gz (compare/, each eval.sh folder).
set -u
txz=${1:?usage: run-on-gpu.sh DARKNET_TXZ [TYPES]}
types=${2:-predict19 generate}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${OUT:-./darknet-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
work=$(mktemp -d /tmp/mgb-darknet.XXXXXX)
log() { echo "[$SECONDS s] $*" | tee -a "$OUT/darknet.log"; }
tar -C "$work" -xJf "$txz" || { echo "cannot unpack $txz" >&2; exit 2; }
bin=$repo/.device/bin
export LD_LIBRARY_PATH=$repo/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
N_PREDICT=${N_PREDICT:-400} N_DETECT=${N_DETECT:-60} N_CHARS=${N_CHARS:-20000}
N_TRAIN=${N_TRAIN:-500}
N_MIX=${N_MIX:-128} MIX_SEED=${MIX_SEED:-7}
MIX_PREDICT=${MIX_PREDICT:-100} MIX_DETECT=${MIX_DETECT:-30} MIX_CHARS=${MIX_CHARS:-5000}
MIX_TRAIN=${MIX_TRAIN:-100}
for v in N_PREDICT N_DETECT N_CHARS N_TRAIN N_MIX MIX_SEED MIX_PREDICT MIX_DETECT MIX_CHARS MIX_TRAIN; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "run-on-gpu.sh: $v must be a whole number, got '${!v}'" >&2; exit 2; }
done
# A job's units of work for its type, from the N_ (homogeneous workloads) or MIX_ (the mix) set.
units() { # type N|MIX
  case $1 in
    predict19 | predict53) local v=${2}_PREDICT ;; detect) local v=${2}_DETECT ;;
    generate) local v=${2}_CHARS ;; train) local v=${2}_TRAIN ;;
  esac
  echo "${!v}"
}

# CIFAR-10 training input, made here (no network access to fetch the real set): the five binary
# batches load_all_cifar10() reads, 10,000 records of a label byte (0-9) and 32x32x3 pixel bytes
# each, random; the labels file; and copies of cfg/cifar.cfg with max_batches cut to 20 (the
# comparison) and to N_TRAIN (the workload's jobs share it): cfg/cifar-N.cfg. The copies also
# set height and width to 32: the cfg's 28x28 input is smaller than the 32x32 images train_cifar()
# copies into it unchanged, a heap overflow (AddressSanitizer on a CPU build; with 32 it is clean). train_cifar() saves its weights under the hard-coded
# /home/pjreddie/backup/ and exits when it cannot: that directory is made too (the jobs of a
# workload overwrite each other's weights there, which nothing reads).
prepare_train() {
  local c="$work/plain/data/cifar"
  mkdir -p "$c/cifar-10-batches-bin" /home/pjreddie/backup || return 1
  python3 - "$c" <<'PY' || return 1
import random, sys
out = sys.argv[1]
rng = random.Random(7)
for b in range(1, 6):
    records = bytearray(rng.randbytes(10000 * 3073))
    records[::3073] = bytes(x % 10 for x in records[::3073])  # each record's label byte
    open(f"{out}/cifar-10-batches-bin/data_batch_{b}.bin", "wb").write(records)
open(f"{out}/labels.txt", "w").write("\n".join(
    ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]) + "\n")
PY
  local n
  for n in 20 "$N_TRAIN" "$MIX_TRAIN"; do
    sed -E -e "s/^max_batches *=.*/max_batches = $n/" -e "s/^height *=.*/height=32/" \
      -e "s/^width *=.*/width=32/" "$work/plain/cfg/cifar.cfg" >"$work/plain/cfg/cifar-$n.cfg" ||
      return 1
  done
  trained=train
}
# The command of one job of a type with a build (plain or mgb), N units of work, from plain/
# (cfg/ and data/ live there).
job() { # type kind n
  local d="$work/$2/darknet"
  case "$1" in
    predict19) echo "yes data/dog.jpg | head -$3 | $d classifier predict cfg/imagenet1k.data cfg/darknet19.cfg ''" ;;
    predict53) echo "yes data/dog.jpg | head -$3 | $d classifier predict cfg/imagenet1k.data cfg/darknet53_448.cfg ''" ;;
    # -thresh 1.01: random weights saturate every box's class probability, and drawing tens of
    # thousands of boxes per image took longer than the 120 s limit (first GPU run); the network,
    # NMS and the image output still run.
    detect) echo "yes data/dog.jpg | head -$3 | $d detector test cfg/coco.data cfg/yolov3-tiny.cfg '' -thresh 1.01" ;;
    generate) echo "$d rnn generate cfg/rnn.cfg '' -len $3 -srand 7 -seed 'The '" ;;
    # N batches: the cfg prepare_train wrote for N; train_cifar() seeds rand() with time(0).
    train) echo "$d cifar train cfg/cifar-$3.cfg" ;;
  esac
}
# Lines that carry time (Darknet prints "Predicted in 0.01 seconds"), left out of comparisons.
# Training prints one line per batch: its loss depends on time-seeded random crops, so only the
# batch count and images seen are compared.
untimed() {
  sed -E -e 's/in [0-9.e+-]+ (milli)?seconds/in <t> seconds/g' \
    -e 's/^([0-9]+), ([0-9.]+): .*, ([0-9]+) images$/\1, \2: <loss, time> \3 images/'
}

# 1. Correctness: each type with both builds (the rewritten one under mgbd), outputs compared.
mkdir -p "$work/compare"
trained=""  # "train" once prepare_train made its input: the comparison then trains too
case " $types " in *" train "* | *" mix "*) prepare_train || log "train: could not prepare its input" ;; esac
if [ "${COMPARE:-1}" != 0 ]; then
"$bin/mgbd" --socket "$work/mgbd.sock" --policy mgb --verbose 1 >"$work/compare/mgbd.txt" 2>&1 &
mgbd=$!
for _ in $(seq 100); do [ -S "$work/mgbd.sock" ] && break; sleep 0.1; done
same=0 differ=0
for t in predict19 predict53 detect generate $trained; do
  n=5; [ $t = generate ] && n=300; [ $t = train ] && n=20
  for kind in plain mgb; do
    (cd "$work/plain" && MGB_SOCKET="$work/mgbd.sock" timeout 120 sh -c "$(job $t $kind $n)") \
      >"$work/compare/$t.$kind.out" 2>"$work/compare/$t.$kind.err"
    echo "exit $?" >>"$work/compare/$t.$kind.out"
  done
  if diff <(untimed <"$work/compare/$t.plain.out") <(untimed <"$work/compare/$t.mgb.out") \
      >"$work/compare/$t.diff"; then
    same=$((same + 1)); log "compare $t: the same output ($(wc -l <"$work/compare/$t.mgb.out") lines)"
  else
    differ=$((differ + 1)); log "compare $t: DIFFERENT output: $(head -4 "$work/compare/$t.diff" | tr '\n' ' ')"
  fi
done
kill "$mgbd"; wait "$mgbd" 2>/dev/null
log "compare: $same the same, $differ different; mgbd placed $(grep -c ' task-placed ' "$work/compare/mgbd.txt") tasks of $(grep -c ' session-opened ' "$work/compare/mgbd.txt") rewritten processes (mgbd.txt)"
fi

# 2. Workloads of the rewritten build, through eval.sh: homogeneous 8-job ones per type, and the
# random mix. A job list's lines: NAME COMMAND, written as eval.sh's JSON (each job runs in plain/).
job_list() { # JSON_PATH < lines
  python3 -c '
import json, sys
path, work = sys.argv[1:]
jobs = []
for line in sys.stdin:
    name, command = line.rstrip("\n").split(" ", 1)
    jobs.append({"name": name, "argv": ["/bin/sh", "-c", f"cd {work}/plain && exec sh -c \"$0\"", command],
                 "memory_bytes": 0, "arrival_s": 0})
json.dump({"jobs": jobs}, open(path, "w"), indent=1)
' "$1" "$work"
}
# N_MIX jobs, each type drawn with a seeded generator (the same list for every run of a call).
mix_lines() {
  local kinds="predict19 generate detect"
  [ -n "$trained" ] && kinds="$kinds train"
  python3 -c '
import random, sys
n, seed, kinds = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split()
rng = random.Random(seed)
print("\n".join(f"m{i:03d}-{rng.choice(kinds)}" for i in range(n)))
' "$N_MIX" "$MIX_SEED" "$kinds" | while read -r name; do
    local t=${name#*-} n
    n=$(units "$t" MIX)
    echo "$name $(job "$t" mgb "$n")"
  done
}
for t in $types; do
  runs=${RUNS:-single@2 schedgpu@8 mgb@8}
  case $t in
    predict19 | predict53 | detect | generate) ;;
    train) [ -n "$trained" ] || continue ;;
    mix) runs=${MIX_RUNS:-single@2 mgb@16 mgb@32} ;;
    none) continue ;;
    *) log "unknown job type '$t' (predict19 predict53 detect generate train mix none)"; continue ;;
  esac
  if [ "$t" = mix ]; then
    mix_lines | job_list "$work/$t.json"
    cp "$work/$t.json" "$OUT/mix.json"
    what="$N_MIX jobs, seed $MIX_SEED: $(python3 -c '
import collections, json, sys
c = collections.Counter(j["name"].split("-", 1)[1] for j in json.load(open(sys.argv[1]))["jobs"])
print(", ".join(f"{v} {k}" for k, v in sorted(c.items())))' "$work/$t.json")"
  else
    n=$(units "$t" N)
    for i in $(seq 0 7); do echo "j$i $(job $t mgb $n)"; done | job_list "$work/$t.json"
    what="8 jobs of: $(job $t mgb $n)"
  fi
  left=$((${DEADLINE:-420} - SECONDS))
  [ $left -lt 60 ] && { log "$t: skipped ($left s left)"; continue; }
  log "workload $t ($what)"
  OUT="$work/eval-$t" bash "$repo/scripts/gpu/eval.sh" --bin "$bin" --runs "$runs" \
    --timeout $((left / 2)) --deadline $((left - 5)) "$work/$t.json" 2>&1 | grep -E "summary|FAIL|TIMEOUT" |
    tee -a "$OUT/darknet.log"
done
(cd "$work" && tar -czf "$OUT/darknet-results.tar.gz" compare $(ls -d eval-* *.json 2>/dev/null))
log "results in $OUT/darknet-results.tar.gz"
rm -rf "$work"
