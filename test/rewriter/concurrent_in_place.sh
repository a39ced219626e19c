#!/usr/bin/env bash
# Ten `mgb-rewrite --in-place` runs on one file at once: each must wait for the file's lock, the
# result must be the single rewrite (the later runs find it already rewritten), and FILE.orig the
# true original. Before the lock: all exited 0 with edits at wrong offsets, .orig a rewrite.
# Usage: concurrent_in_place.sh MGB_REWRITE SOURCE.cu
set -u
rewrite=$1 source=$2
dir=$(mktemp -d /tmp/mgb-inplace.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cp "$source" "$dir/prog.cu"
# --line-names=none: the #line directives --in-place writes (it cannot know how the file is compiled).
"$rewrite" -o "$dir/single" --line-names=none "$dir/prog.cu" -- >/dev/null 2>&1 || fail "a single rewrite failed"
pids=()
for i in $(seq 10); do
  "$rewrite" --in-place "$dir/prog.cu" -- >"$dir/run$i.log" 2>&1 &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || fail "run $((i + 1)) exited $?: $(cat "$dir/run$((i + 1)).log")"
done
cmp -s "$dir/prog.cu" "$dir/single/prog.cu" || fail "the result is not the single rewrite: $(diff "$dir/single/prog.cu" "$dir/prog.cu" | head -20)"
cmp -s "$dir/prog.cu.orig" "$source" || fail "prog.cu.orig is not the original"
grep -q '^#line [0-9]*$' "$dir/prog.cu" || fail "no nameless #line in the in-place rewrite"
echo "PASS: 10 concurrent --in-place runs gave the single rewrite; .orig is the original"
