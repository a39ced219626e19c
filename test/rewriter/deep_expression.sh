#!/usr/bin/env bash
# A host function with a 60,000-term expression on one line (clang parses it in a second): the
# rewrite must succeed. Before the large stack: SIGSEGV.
# Usage: deep_expression.sh MGB_REWRITE
set -u
rewrite=$1
dir=$(mktemp -d /tmp/mgb-deep.XXXXXX)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir/deep.cu" <<'PY'
import sys
terms = "+".join(["1"] * 60000)
open(sys.argv[1], "w").write(
    "__global__ void k(int *p) { *p = 1; }\n"
    "int host() {\n"
    f"  int x = {terms};\n"
    "  int *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); cudaFree(d);\n"
    "  return x;\n"
    "}\n")
PY
"$rewrite" -o "$dir/out" "$dir/deep.cu" -- >"$dir/log" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: mgb-rewrite exited $rc: $(tail -5 "$dir/log")" >&2; exit 1; }
grep -q "mgb_task_begin\|mgb_cudaMalloc" "$dir/out/deep.cu" || { echo "FAIL: no probe in the rewrite" >&2; exit 1; }
echo "PASS: the 60,000-term expression was rewritten"
