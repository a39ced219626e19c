#!/usr/bin/env bash
# scripts/paper/paper-mix.sh without a GPU: from a fake bundle (the .wl as GPU-Sched ships it,
# with its authors' /home paths) and inputs already there, it must write each build's job list
# with our programs and data, each job in its own directory (or all in one with --dirs shared),
# and the distinct command lines once each for the solo runs. No run is made (--runs "").
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
b="$tmp/bundle"; mkdir -p "$b"/{nvcc,mgb,gpusched/bin,tools} "$tmp/bin"
P=/home/cc/GPU-Sched/Benchmarks/rodinia_cuda_3.1
cat >"$b/p100_50_16jobs_0.wl" <<WL
$P/cuda/srad/srad_v2/srad 8192 8192 0 127 0 127 0.5 2
$P/cuda/bfs/bfs $P/data/bfs/inputGen/graph32M.txt
$P/cuda/srad/srad_v1/srad 100 0.5 20000 20000
$P/cuda/dwt2d/dwt2d $P/data/dwt2d/rgb.bmp -d 8192x8192 -f -5 -l 3
$P/cuda/srad/srad_v1/srad 100 0.5 20000 20000
$P/cuda/nw/needle 32768 10
WL
printf '#!/bin/sh\n' >"$tmp/bin/mgbd"; chmod +x "$tmp/bin/mgbd"
work="$tmp/work"; mkdir -p "$work/data"/{srad,bfs,dwt2d}
for f in srad/image.pgm bfs/graph32M.txt; do echo x >"$work/data/$f"; done
truncate -s $((54 + 3 * 8192 * 8192)) "$work/data/dwt2d/rgb.bmp"  # sparse: as large as dwt2d reads

fail() { echo "FAIL: $*" >&2; exit 1; }
PAPER_WORK="$work" bash "$repo/scripts/paper/paper-mix.sh" --bundle "$b" --mgb-bin "$tmp/bin" \
  --runs "" --out "$tmp/out" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "paper-mix.sh failed"; }
python3 - "$work/lists" "$b" "$work" <<'PY'
import json, sys
lists, bundle, work = sys.argv[1:4]
mgb = json.load(open(f"{lists}/mgb.json"))["jobs"]
assert len(mgb) == 6, len(mgb)
assert mgb[1]["argv"] == [f"{bundle}/tools/in-dir.sh", f"{work}/jobs/01/b", f"{bundle}/mgb/bfs",
                          f"{work}/data/bfs/graph32M.txt"], mgb[1]["argv"]
assert mgb[3]["argv"][2:4] == [f"{bundle}/mgb/dwt2d", f"{work}/data/dwt2d/rgb.bmp"], mgb[3]["argv"]
assert [j["name"] for j in mgb][:3] == ["00-srad_v2", "01-bfs", "02-srad_v1"]
gs = open(f"{lists}/gpusched.wl").read().splitlines()
assert gs[5].split()[2:] == [f"{bundle}/gpusched/bin/needle", "32768", "10"], gs[5]
solo = json.load(open(f"{lists}/nvcc-solo.json"))["jobs"]
assert len(solo) == 5, [j["name"] for j in solo]  # srad_v1 20000 twice in the mix, once solo
assert all("/home/" not in a for j in mgb for a in j["argv"])
PY
PAPER_WORK="$work" bash "$repo/scripts/paper/paper-mix.sh" --dirs shared --bundle "$b" \
  --mgb-bin "$tmp/bin" --runs "" --out "$tmp/out" >"$tmp/log" 2>&1 || fail "--dirs shared failed"
first=$(head -1 "$work/lists/nvcc.wl")
[[ "$first" == "$b/nvcc/srad_v2 8192 8192 0 127 0 127 0.5 2" ]] || fail "shared: first job is '$first'"
# A run named twice keeps both results apart: bound, then bound-2 (a stand-in srad_v1).
printf '#!/bin/sh\nexit 0\n' >"$b/nvcc/srad_v1"; chmod +x "$b/nvcc/srad_v1"
PAPER_WORK="$work" bash "$repo/scripts/paper/paper-mix.sh" --bundle "$b" --mgb-bin "$tmp/bin" \
  --runs "bound bound" --out "$tmp/out" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "two bound runs failed"; }
[ "$(cut -d' ' -f1 "$tmp/out/paper-mix.txt" | tr '\n' ' ')" = "bound bound-2 " ] ||
  fail "repeated runs: $(cat "$tmp/out/paper-mix.txt")"
tar -tzf "$tmp/out/runs.tar.gz" | grep -q 'results/bound-2.log' || fail "no log of the second bound run"
# A mix from --wl: its own command lines, and rgb.bmp made again as large as its largest -d needs.
printf '%s\n' "$P/cuda/dwt2d/dwt2d $P/data/dwt2d/rgb.bmp -d 9000x9000 -f -5 -l 3" \
  "$P/cuda/lavaMD/lavaMD -boxes1d 150" >"$tmp/mix.wl"
# rodinia-mix.py's description beside it: each job's device bytes, in order.
echo '{"mix": [{"program": "dwt2d", "bytes": 1000}, {"program": "lavaMD", "bytes": 26514000000}]}' \
  >"$tmp/mix.wl.json"
cat >"$b/tools/gen-bmp.py" <<'GEN'
import sys
open(sys.argv[3], "w").write(f"{sys.argv[1]}x{sys.argv[2]}")
GEN
PAPER_WORK="$work" bash "$repo/scripts/paper/paper-mix.sh" --bundle "$b" --mgb-bin "$tmp/bin" \
  --wl "$tmp/mix.wl" --runs "" --out "$tmp/out" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "--wl failed"; }
[ "$(cat "$work/data/dwt2d/rgb.bmp")" = 9000x9000 ] || fail "rgb.bmp not made for 9000x9000"
python3 - "$work/lists" "$b" <<'PY'
import json, sys
lists, bundle = sys.argv[1:3]
mgb = json.load(open(f"{lists}/mgb.json"))["jobs"]
assert [j["name"] for j in mgb] == ["00-dwt2d", "01-lavaMD"], [j["name"] for j in mgb]
assert mgb[1]["argv"][2:] == [f"{bundle}/mgb/lavaMD", "-boxes1d", "150"], mgb[1]["argv"]
# Host memory estimates for mgb batch's gate: lavaMD holds its device bytes on the host too.
assert [j.get("host_memory_bytes") for j in mgb] == [100, 26514000000], mgb
PY
for bad in "cg:x@4" "single@0"; do
  if bash "$repo/scripts/paper/paper-mix.sh" --runs "$bad" --bundle "$b" --mgb-bin "$tmp/bin" 2>"$tmp/err"; then
    fail "--runs '$bad' was accepted"
  fi
done
if bash "$repo/scripts/paper/paper-mix.sh" --wl "$tmp/none.wl" --bundle "$b" --mgb-bin "$tmp/bin" 2>"$tmp/err"; then
  fail "a missing --wl file was accepted"
fi
grep -q -- "--wl '$tmp/none.wl' is not a file" "$tmp/err" || fail "no message for a bad --wl: $(cat "$tmp/err")"
if bash "$repo/scripts/paper/paper-mix.sh" --dirs mine --bundle "$b" --mgb-bin "$tmp/bin" 2>"$tmp/err"; then
  fail "--dirs mine was accepted"
fi
grep -q -- "--dirs must be own or shared" "$tmp/err" || fail "no message for a bad --dirs: $(cat "$tmp/err")"
if bash "$repo/scripts/paper/paper-mix.sh" --runs "bound mgb@x" --bundle "$b" --mgb-bin "$tmp/bin" 2>"$tmp/err"; then
  fail "--runs 'mgb@x' was accepted"
fi
grep -q -- "--runs: 'mgb@x' is not a run" "$tmp/err" || fail "no message for a bad --runs: $(cat "$tmp/err")"
if bash "$repo/scripts/paper/paper-mix.sh" --gpus "$tmp/none.json" --bundle "$b" --mgb-bin "$tmp/bin" 2>"$tmp/err"; then
  fail "a missing --gpus file was accepted"
fi
grep -q -- "--gpus '$tmp/none.json' is not a file" "$tmp/err" || fail "no message for a bad --gpus: $(cat "$tmp/err")"
echo "paper-mix job lists: PASS"
