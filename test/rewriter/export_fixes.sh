#!/usr/bin/env bash
# --export-fixes: clang-apply-replacements, given the YAML, turns copies of the sources into
# exactly what -o wrote; --check --export-fixes writes the same YAML and leaves the sources alone.
# Usage: export_fixes.sh MGB_REWRITE CLANG_APPLY_REPLACEMENTS SOURCE...
set -u
rewrite=$1 apply=$2
shift 2
dir=$(mktemp -d /tmp/mgb-fixes.XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src" "$dir/fixes" "$dir/check-fixes"
cp "$@" "$dir/src/"
fail() { echo "FAIL: $*" >&2; exit 1; }
"$rewrite" --root "$dir/src" -o "$dir/out" --export-fixes "$dir/fixes/mgb.yaml" "$dir"/src/* -- \
  >"$dir/log" 2>&1 || fail "mgb-rewrite exited $?: $(tail -5 "$dir/log")"
grep -q "^MainSourceFile:" "$dir/fixes/mgb.yaml" || fail "no MainSourceFile in the YAML"
"$rewrite" --root "$dir/src" --check --export-fixes "$dir/check-fixes/mgb.yaml" "$dir"/src/* -- \
  >"$dir/check.log" 2>&1
[ $? -eq 1 ] || fail "--check on the originals should exit 1"
cmp -s "$dir/fixes/mgb.yaml" "$dir/check-fixes/mgb.yaml" || fail "--check wrote other fixes"
for f in "$@"; do
  cmp -s "$f" "$dir/src/$(basename "$f")" || fail "--check changed $(basename "$f")"
done
"$apply" "$dir/fixes" >"$dir/apply.log" 2>&1 || fail "clang-apply-replacements: $(cat "$dir/apply.log")"
for f in "$dir"/src/*; do
  cmp -s "$f" "$dir/out/$(basename "$f")" || fail "applied fixes differ from -o for $(basename "$f")"
done
echo "PASS: $# sources: the applied fixes equal the rewrite"
