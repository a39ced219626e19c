#!/usr/bin/env bash
# scripts/gpu/eval.sh end to end without a GPU: the real mgbd (--gpus FILE: two fake 140 GiB GPUs),
# the real mgb-batch and `mgb run`, and fake workloads that take their GPU from mgbd through
# `mgb run` and keep a per-GPU memory ledger, so a memory-blind policy really runs out of memory.
# Then scripts/report.py on what came back. Checks: every run's JSON, <= 8 files, no process
# left behind, OOM crashes under cg only, the timeout path, the report.
# usage: eval_dry_run.sh BUILD_DIR   (holding service/mgbd, service/mgb, tools/batch/mgb-batch)
set -u
[ "${1:-}" = --help ] && { sed -n 2,6p "$0"; exit 0; }
BUILD=$(cd "${1:?usage: eval_dry_run.sh BUILD_DIR}" && pwd)
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
T=$(mktemp -d /tmp/mgb-eval-dry.XXXXXX)
trap '[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"' EXIT
# Every process this test starts inherits MGB_DRY_TEST; eval.sh marks a run's jobs MGB_EVAL_RUN.
export MGB_DRY_TEST=$T
left_behind() {
  grep -lzxF "MGB_DRY_TEST=$T" /proc/[0-9]*/environ 2>/dev/null | xargs -r grep -lz '^MGB_EVAL_RUN=' 2>/dev/null | grep -q .
}
fail() { echo "FAIL: $*" >&2; [ -f "$T/out/eval.log" ] && tail -30 "$T/out/eval.log" >&2; exit 1; }

mkdir -p "$T/tools" "$T/bin" "$T/ledger"
for p in service/mgbd service/mgb tools/batch/mgb-batch; do
  [ -x "$BUILD/$p" ] || fail "$BUILD/$p is not built"
  ln -s "$BUILD/$p" "$T/tools/"
done
GIB=$((1 << 30))
echo "{\"gpus\": [{\"name\": \"fake-H200\", \"memory_bytes\": $((140 * GIB)), \"sms\": 132},
                  {\"name\": \"fake-H200\", \"memory_bytes\": $((140 * GIB)), \"sms\": 132}]}" >"$T/gpus.json"

# The task: holds GB of the GPU mgb run granted (CUDA_VISIBLE_DEVICES) for a while, or dies of
# "out of memory" as CUDA would when the GPU's 140 GiB are taken.
cat >"$T/tools/fake_task" <<EOF
#!/usr/bin/env bash
gb=\$1
ledger="$T/ledger/gpu\${CUDA_VISIBLE_DEVICES:-none}"
exec 9>"\$ledger.lock"
flock 9
used=\$(awk '{s += \$2} END {print s + 0}' "\$ledger" 2>/dev/null || echo 0)
if awk -v u="\$used" -v g="\$gb" 'BEGIN {exit !(u + g > 140)}'; then
  echo "fake: CUDA error: out of memory (\$used GiB used + \$gb)" >&2
  exit 2
fi
echo "\$\$ \$gb" >>"\$ledger"
flock -u 9
seconds=\$(awk -v g="\$gb" 'BEGIN {printf "%.2f", 1 + g / 50}')
sleep "\$seconds"
flock 9
sed -i "/^\$\$ /d" "\$ledger"
echo "MGB_KERNEL_MS name=fake_kernel ms=\$(awk -v s="\$seconds" 'BEGIN {print s * 900}') launches=1"
echo "MGB_RESULT PASS workload=fake"
EOF
chmod +x "$T/tools/fake_task"
for w in mlp_train heat2d md_cells nw_align wavelet2d bfs_graph; do
  cat >"$T/bin/$w" <<EOF
#!/usr/bin/env bash
# fake $w: --gb G [other flags ignored]
while [ \$# -gt 0 ]; do [ "\$1" = --gb ] && gb=\$2; shift; done
exec "$T/tools/mgb" run --mem "\${gb}G" -- "$T/tools/fake_task" "\$gb"
EOF
  chmod +x "$T/bin/$w"
done

# MPS's control program, faked: -d starts a "daemon" (a sleep carrying the caller's environment,
# as the real one does) and its control pipe; "quit" on stdin stops it; other commands answer 0.
mkdir -p "$T/path"
cat >"$T/path/nvidia-cuda-mps-control" <<FAKE
#!/usr/bin/env bash
pipe=\${CUDA_MPS_PIPE_DIRECTORY:?}
if [ "\${1:-}" = -d ]; then
  [ -e "\$pipe/control" ] && exit 1
  echo "start \$pipe" >>"$T/mps-events"
  setsid sleep 600 </dev/null >/dev/null 2>&1 &
  echo \$! >"\$pipe/fake.pid"
  touch "\$pipe/control"
  exit 0
fi
read -r command
if [ "\$command" = quit ]; then
  echo "quit \$pipe" >>"$T/mps-events"
  kill "\$(cat "\$pipe/fake.pid")"
  rm -f "\$pipe/control"
fi
exit 0
FAKE
chmod +x "$T/path/nvidia-cuda-mps-control"
export PATH="$T/path:$PATH"

"$T/tools/mgb-batch" --generate --out "$T/w-dry.json" --count 8 --ratio 1:1 --seed 3 \
  --bin-dir "$T/bin" --target-seconds 2 --calibration "$REPO/examples/workloads/calibration-h200.json" \
  >/dev/null || fail "mgb-batch --generate"

# 1. Four policies, as on the GPU machine.
OUT="$T/out" "$REPO/scripts/gpu/eval.sh" --gpus "$T/gpus.json" --bin "$T/tools" \
  --runs "single@2 mgb@6 cg:4@8 memory+spread+priority@6 mgb+slow5@auto" --timeout 60 --deadline 360 "$T/w-dry.json" >"$T/eval.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "eval.sh exit $rc, expected 1 (cg:4 must crash jobs)"
for tag in single.w2 mgb.w6 cg-4.w8 memory+spread+priority.w6 mgb+slow5.wauto; do
  [ -s "$T/out/w-dry.$tag.json" ] || fail "no w-dry.$tag.json"
done
[ "$(grep -c '^start' "$T/mps-events")" -eq 5 ] && [ "$(grep -c '^quit' "$T/mps-events")" -eq 5 ] ||
  fail "expected 5 MPS starts and 5 quits, got: $(cat "$T/mps-events" 2>/dev/null)"
[ "$(find "$T/out" -type f | wc -l)" -le 8 ] || fail "more than 8 files under \$OUT"
[ -s "$T/out/logs.tar.gz" ] && tar -tzf "$T/out/logs.tar.gz" | grep -q 'w-dry.mgb.w6.mgbd.txt' ||
  fail "logs.tar.gz lacks the mgbd log"
python3 - "$T/out" <<'PY' || fail "run JSONs"
import json, sys, os
def load(tag):
    return json.load(open(os.path.join(sys.argv[1], f"w-dry.{tag}.json")))
for tag in ("single.w2", "mgb.w6", "memory+spread+priority.w6"):
    s = load(tag)["summary"]
    assert s["jobs"] == 8 and s["succeeded"] == 8 and s["crashed"] == 0, (tag, s)
cg = load("cg-4.w8")
assert cg["label"] == "cg:4" and cg["summary"]["oom"] >= 1, cg["summary"]
mgb = load("mgb.w6")
assert mgb["label"] == "mgb" and mgb["workers"] == 6
assert mgb["summary"]["makespan_s"] < load("single.w2")["summary"]["makespan_s"]
assert load("memory+spread+priority.w6")["label"] == "memory+spread+priority"
auto = load("mgb+slow5.wauto")
assert auto["summary"]["succeeded"] == 8, auto["summary"]
changes = auto["workers_auto"]
assert changes[0] == [0.0, 2] and auto["workers"] == max(n for _, n in changes), changes
PY
tar -xzf "$T/out/logs.tar.gz" -C "$T" logs/w-dry.memory+spread+priority.w6.mgbd.txt 2>/dev/null
grep -q "tasks spread" "$T/logs/w-dry.memory+spread+priority.w6.mgbd.txt" || fail "POLICY+spread did not start mgbd --spread-tasks"
grep -q "queue priorities" "$T/logs/w-dry.memory+spread+priority.w6.mgbd.txt" || fail "POLICY+priority did not start mgbd --queue-priority"
tar -xzf "$T/out/logs.tar.gz" -C "$T" logs/w-dry.mgb+slow5.wauto.mgbd.txt 2>/dev/null
grep -q "max slowdown 5%" "$T/logs/w-dry.mgb+slow5.wauto.mgbd.txt" || fail "POLICY+slow5 did not start mgbd --max-slowdown 5"
left_behind && fail "job processes left running"

# 1b. The same through matrix.sh: job list generated, runs made, everything packed in one file.
OUT="$T/mout" "$REPO/scripts/gpu/matrix.sh" --gpus "$T/gpus.json" --bin "$T/tools" --wl "$T/bin" \
  --target 2 --deadline 200 D1/6/1:1/single@2,mgb@4 >"$T/matrix.txt" 2>&1 ||
  fail "matrix.sh exit $?: $(tail -5 "$T/matrix.txt")"
[ "$(ls "$T/mout")" = "$(printf 'matrix.log\nmatrix.tar.gz')" ] || fail "matrix.sh outputs: $(ls "$T/mout")"
packed=$(tar -tzf "$T/mout/matrix.tar.gz")
for f in ./jobs/D1.json ./D1/D1.single.w2.json ./D1/D1.mgb.w4.json ./D1/eval.log; do
  grep -qxF "$f" <<<"$packed" || fail "matrix.tar.gz lacks $f"
done
"$REPO/scripts/gpu/matrix.sh" D1/6/1-1/mgb@4 >/dev/null 2>&1
[ $? -eq 2 ] || fail "matrix.sh took a bad SPEC"
"$REPO/scripts/gpu/matrix.sh" --deadline soon D1/6/1:1/mgb@4 2>&1 | grep -q "deadline must be whole seconds" ||
  fail "matrix.sh took a bad --deadline"
left_behind && fail "job processes left running after matrix.sh"

# 2. A run past its limit is stopped, recorded as interrupted, and leaves nothing behind.
OUT="$T/out2" "$REPO/scripts/gpu/eval.sh" --gpus "$T/gpus.json" --bin "$T/tools" \
  --no-mps --runs "single@1" --timeout 3 --deadline 100 "$T/w-dry.json" >"$T/eval2.txt" 2>&1
grep -q TIMEOUT "$T/out2/eval.log" || fail "no TIMEOUT logged"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['interrupted'], d['summary']" \
  "$T/out2/w-dry.single.w1.json" || fail "timed-out run not marked interrupted"
left_behind && fail "job processes left running after the timeout"

# 3. Bad usage is refused before anything runs.
"$REPO/scripts/gpu/eval.sh" --runs "fast@2" "$T/w-dry.json" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a bad --runs entry was not refused with exit 2"

# 4. The report from what came back.
python3 "$REPO/scripts/report.py" "$T/out" --out "$T/docs/results.md" >/dev/null ||
  fail "report.py on the dry run"
grep -q '^| mgb | 6 | 8 | 8 |' "$T/docs/results.md" || fail "report lacks the mgb row"
grep -q '^| w-dry | cg:4 | 8 |' "$T/docs/results.md" || fail "report lacks the cg crash row"
echo "eval dry run: OK ($(grep -c '^\[' "$T/out/eval.log") log lines)"
