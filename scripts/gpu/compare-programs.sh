#!/usr/bin/env bash
# On the GPU machine: run programs as written and as rewritten by mgb-rewrite, the rewritten ones
# under an mgbd, and compare what they print and how they exit.
#   scripts/gpu/compare-programs.sh [--exact] [--require REGEX] [--busy-first-gpu] DIR MGBD_BINARY
# DIR holds pairs NAME.orig (nvcc) and NAME.mgb (mgb-nvcc), and optionally args.txt with lines
# `NAME ARG...` (the arguments; listed programs run in that order, the others after them with no
# arguments) and files.txt with lines `NAME PATH...` (files the program writes, relative to DIR:
# removed before each run, their checksums compared after it). Outputs are compared after dropping lines that report times or speeds (they differ
# from run to run) unless --exact, with the program's own name (argv[0]) read as NAME in both.
# --require: the rewritten output must also match REGEX.
# --busy-first-gpu: an `mgb run` (mgb beside MGBD_BINARY) holds 1 GiB and many warps on the GPU
# mgbd picks first, so that on a machine of several GPUs the programs are placed on another one
# (device choice, __constant__ replay and library handles away from GPU 0).
# Per program prints `same output`, `DIFFERENT` (with the diff), or `both failed` (the original
# fails too: not the rewriter's doing), and how many tasks mgbd placed for it. Outputs and
# mgbd's log stay in DIR. PROGRAM_TIMEOUT (default 60 s) bounds each run.
# Exit status: the number of programs that differ.
set -uo pipefail
exact=0; require=; busy_first=0
while [[ $# -gt 0 && "$1" == --* ]]; do
  case "$1" in
    --exact) exact=1; shift ;;
    --busy-first-gpu) busy_first=1; shift ;;
    --require)
      [[ $# -ge 2 ]] || { echo "compare-programs: --require needs a REGEX" >&2; exit 2; }
      require="$2"; shift 2 ;;
    --help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "compare-programs: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
dir="${1:-}"; mgbd="${2:-}"
if [[ -z "$dir" || -z "$mgbd" ]]; then sed -n '2,17p' "$0" >&2; exit 2; fi
[[ -d "$dir" ]] || { echo "compare-programs: $dir is not a directory" >&2; exit 2; }
[[ -x "$mgbd" ]] || { echo "compare-programs: $mgbd is not an executable mgbd" >&2; exit 2; }
shopt -s nullglob
timing='([Tt]ime|[Tt]iming|[Tt]hroughput|[Bb]andwidth|[Pp]erformance|GB/s|GBytes|GFLOP|[A-Za-z]/s(ec)?\b|elapsed|[0-9] *(s|ms|us|ns|sec|secs|seconds|msec|usec|nanoseconds)\b|\((ms|us|ns|sec|msec|usec)\))'
limit="${PROGRAM_TIMEOUT:-60}"

# Run order: args.txt's programs, then every other pair.
declare -A args=()
order=()
if [[ -f "$dir/args.txt" ]]; then
  while read -r name rest; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    args[$name]="$rest"; order+=("$name")
  done < "$dir/args.txt"
fi
declare -A files=()
if [[ -f "$dir/files.txt" ]]; then
  while read -r name rest; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    files[$name]="$rest"
  done < "$dir/files.txt"
fi
# Before a run: the files it writes are removed. After it: their checksums join its output.
clear_files() { local f; for f in ${files[$1]:-}; do rm -f -- "$dir/$f"; done; }
sum_files() {
  local f
  for f in ${files[$1]:-}; do
    if [[ -f "$dir/$f" ]]; then echo "file $f: $(sha256sum < "$dir/$f" | cut -c1-16)"
    else echo "file $f: missing"; fi
  done
}
for orig in "$dir"/*.orig; do
  name=$(basename "$orig" .orig)
  [[ -n "${args[$name]+set}" ]] || order+=("$name")
done

[[ ${#order[@]} -gt 0 ]] || { echo "compare-programs: no NAME.orig programs in $dir" >&2; exit 2; }

sock="$(mktemp -u /tmp/mgbd-compare.XXXXXX.sock)"
"$mgbd" --socket "$sock" --verbose 1 > "$dir/mgbd.log" 2>&1 &
mgbd_pid=$!
trap 'kill "$mgbd_pid" 2>/dev/null || true' EXIT
for _ in $(seq 50); do [[ -S "$sock" ]] && break; sleep 0.1; done
[[ -S "$sock" ]] || { echo "compare-programs: $mgbd did not start (its log: $dir/mgbd.log)" >&2; exit 2; }
if [[ $busy_first == 1 ]]; then
  "$(dirname "$mgbd")/mgb" run --mem 1G --warps 1000000 --socket "$sock" -- sleep 100000 \
    > "$dir/busy-first-gpu.txt" 2>&1 &
  busy_pid=$!
  trap 'kill "$busy_pid" 2>/dev/null; kill "$mgbd_pid" 2>/dev/null || true' EXIT
  for _ in $(seq 50); do grep -q ' task-placed ' "$dir/mgbd.log" && break; sleep 0.1; done
  echo "busy-first-gpu: $(grep ' task-placed ' "$dir/mgbd.log" | head -1 | grep -o 'gpu [0-9]*') held"
fi

# The program's own name (argv[0]: NAME.orig or NAME.mgb) is printed as NAME in both.
keep() {
  local name; name=$(basename "$1" .txt); name=${name%.*}
  if [[ $exact == 1 ]]; then cat "$1"; else grep -Ev "$timing" "$1"; fi | sed "s/$name\.\(orig\|mgb\)/$name/g"
}
different=0; same=0; failed_both=0
for name in "${order[@]}"; do
  [[ -x "$dir/$name.orig" && -x "$dir/$name.mgb" ]] || { echo "MISSING: $name"; different=$((different + 1)); continue; }
  clear_files "$name"
  # shellcheck disable=SC2086  # the arguments are words
  (cd "$dir" && timeout "$limit" "./$name.orig" ${args[$name]:-}) > "$dir/$name.orig.txt" 2>&1
  rc_orig=$?
  sum_files "$name" >> "$dir/$name.orig.txt"
  clear_files "$name"
  placed_before=$(grep -c ' task-placed ' "$dir/mgbd.log")
  # shellcheck disable=SC2086
  (cd "$dir" && MGB_SOCKET="$sock" timeout "$limit" "./$name.mgb" ${args[$name]:-}) > "$dir/$name.mgb.txt" 2>&1
  rc_mgb=$?
  sum_files "$name" >> "$dir/$name.mgb.txt"
  tasks=$(( $(grep -c ' task-placed ' "$dir/mgbd.log") - placed_before ))
  if [[ $rc_orig -ne 0 && $rc_mgb -eq $rc_orig ]]; then
    echo "both failed: $name (exit $rc_orig; tasks placed $tasks)"; failed_both=$((failed_both + 1))
  elif [[ $rc_orig -eq $rc_mgb ]] && diff -q <(keep "$dir/$name.orig.txt") <(keep "$dir/$name.mgb.txt") >/dev/null &&
       { [[ -z "$require" ]] || grep -qE "$require" "$dir/$name.mgb.txt"; }; then
    echo "same output: $name (exit $rc_mgb; tasks placed $tasks)"; same=$((same + 1))
  else
    echo "DIFFERENT: $name (exit $rc_orig as written, $rc_mgb rewritten; tasks placed $tasks)"
    diff <(keep "$dir/$name.orig.txt") <(keep "$dir/$name.mgb.txt") | head -20
    different=$((different + 1))
  fi
done
echo "placements per GPU: $(grep ' task-placed ' "$dir/mgbd.log" | grep -o 'gpu [0-9]*' | sort | uniq -c | tr -s ' ' | paste -sd,)"
echo "compared ${#order[@]}: $same same, $different different, $failed_both failed as written too; mgbd log: $dir/mgbd.log"
exit $different
