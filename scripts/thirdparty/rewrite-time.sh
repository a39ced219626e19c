#!/usr/bin/env bash
# Rewrite time per translation unit of two mgb-rewrite builds, alternated on the same TUs:
#   scripts/thirdparty/rewrite-time.sh [--runs N] BEFORE_MGB_REWRITE AFTER_MGB_REWRITE TU...
# Each TU is rewritten N times (default 3) by each tool in turn (before, after, before, ...) into
# a scratch directory, with --root its own directory and no compile flags (the TUs are
# self-contained: test/rewriter/inputs/*.cu). Prints per TU the fastest wall time of each, in
# seconds, and the sums; a TU one of the tools fails on is reported and left out of the sums.
set -uo pipefail
runs=3
if [[ "${1:-}" == --runs ]]; then runs="${2:?--runs needs N}"; shift 2; fi
if [[ "${1:-}" == --help || $# -lt 3 ]]; then sed -n '2,7p' "$0"; [[ "${1:-}" == --help ]]; exit $?; fi
before="$1" after="$2"; shift 2
for tool in "$before" "$after"; do
  [[ -x "$tool" ]] || { echo "rewrite-time: $tool is not an executable mgb-rewrite" >&2; exit 2; }
done
scratch="$(mktemp -d /tmp/mgb-rewrite-time.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT

# Wall seconds of one rewrite of $2 by $1, or "fail".
one() {
  local start end
  rm -rf "$scratch/out"
  start=$(date +%s.%N)
  "$1" --root "$(dirname -- "$2")" -o "$scratch/out" "$2" -- >/dev/null 2>&1 || { echo fail; return; }
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'
}
min() { printf '%s\n' "$@" | sort -g | head -1; }

printf '%-40s %10s %10s\n' TU before_s after_s
sum_before=0 sum_after=0 counted=0
for tu in "$@"; do
  b=() a=() failed=0
  for ((i = 0; i < runs; ++i)); do
    t=$(one "$before" "$tu"); [[ $t == fail ]] && failed=1; b+=("$t")
    t=$(one "$after" "$tu"); [[ $t == fail ]] && failed=1; a+=("$t")
  done
  if ((failed)); then printf '%-40s %s\n' "$(basename -- "$tu")" "a rewrite failed: left out"; continue; fi
  mb=$(min "${b[@]}") ma=$(min "${a[@]}")
  printf '%-40s %10.3f %10.3f\n' "$(basename -- "$tu")" "$mb" "$ma"
  sum_before=$(awk -v a="$sum_before" -v b="$mb" 'BEGIN { print a + b }')
  sum_after=$(awk -v a="$sum_after" -v b="$ma" 'BEGIN { print a + b }')
  counted=$((counted + 1))
done
printf '%-40s %10.3f %10.3f\n' "sum of $counted TUs" "$sum_before" "$sum_after"
