#!/usr/bin/env bash
# mgb-nvcc keeps the original's source identity and prints only what nvcc prints:
#  1. __FILE__/__LINE__ (`nvcc -E` of inputs/source_identity: markers in the source and in a header
#     the rewrite edits) expand as in the original compile, spelled as given (before: the
#     temporary copy's path, lines shifted by the probe includes);
#  2. sources nvcc compiles with at most a warning and clang's host parse used to reject (device-only
#     errors, narrowing; inputs/device_diagnostics.cu), a source with a UTF-8 BOM
#     (inputs/byte_order_mark.cu) and one on which clang warns by default
#     (driver_identity/clang_only_warnings.cu), compiled in one command: rewritten (the objects
#     call mgb's twins), and stderr is exactly nvcc's: no clang warnings, no "[1/3] Processing
#     file", no fallback;
#  3. an untouched header's __FILE__ and its warnings, host and device (driver_identity/
#     untouched_header), with the source spelled three ways (before: warnings named the mirror);
#  5. (run before 4) a project compiled from its source top with -I./ or an absolute -I: an
#     untouched header found through the mirror keeps the line's spelling (before: the root's);
#  4. a C source with nothing to rewrite (driver_identity/untouched_source.c) through mgb-cc: gcc's
#     warnings and __FILE__/__LINE__ as in the original compile (before: the temporary copy's path).
# Usage: driver_source_identity.sh MGB_NVCC NVCC NM TEST_DIR(test/rewriter)
set -u
mgb_nvcc=$1 nvcc=$2 nm=$3 tests=$4
dir=$(mktemp -d /tmp/mgb-identity.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$dir/src" "$dir/plain" "$dir/mgb"
cp -r "$tests/inputs/source_identity" "$tests/inputs/device_diagnostics.cu" \
  "$tests/inputs/byte_order_mark.cu" "$tests/driver_identity/clang_only_warnings.cu" "$dir/src/"

# 1. The markers' expansions, original against rewrite, sources spelled relative to the compile.
sites() { grep -o 'mgb_site_marker(".*", [0-9]*)'; }
(cd "$dir/plain" && "$nvcc" -E ../src/source_identity/main.cu | sites >"$dir/plain.sites") ||
  fail "nvcc -E failed"
(cd "$dir/mgb" && "$mgb_nvcc" -E ../src/source_identity/main.cu 2>"$dir/mgb-E.err" | sites \
  >"$dir/mgb.sites") || fail "mgb-nvcc -E failed: $(cat "$dir/mgb-E.err")"
grep -q '"../src/source_identity/scale.cuh", 18' "$dir/plain.sites" ||
  fail "unexpected original markers: $(cat "$dir/plain.sites")"
diff "$dir/plain.sites" "$dir/mgb.sites" >"$dir/sites.diff" ||
  fail "__FILE__/__LINE__ differ after the rewrite: $(cat "$dir/sites.diff")"
grep -q "NOT rewritten" "$dir/mgb-E.err" && fail "source_identity fell back: $(cat "$dir/mgb-E.err")"

# 2. One command, three sources: the same stderr as nvcc's, and rewritten objects.
sources=(../src/device_diagnostics.cu ../src/byte_order_mark.cu ../src/clang_only_warnings.cu)
(cd "$dir/plain" && "$nvcc" -arch=sm_90 -c "${sources[@]}" 2>"$dir/plain.err") ||
  fail "nvcc failed: $(cat "$dir/plain.err")"
(cd "$dir/mgb" && "$mgb_nvcc" -arch=sm_90 -c "${sources[@]}" 2>"$dir/mgb.err") ||
  fail "mgb-nvcc failed: $(cat "$dir/mgb.err")"
grep -q "narrowing" "$dir/plain.err" || fail "nvcc's own narrowing warning is missing"
diff "$dir/plain.err" "$dir/mgb.err" >"$dir/err.diff" ||
  fail "mgb-nvcc's stderr is not nvcc's: $(cat "$dir/err.diff")"
for o in device_diagnostics.o byte_order_mark.o clang_only_warnings.o; do
  "$nm" "$dir/mgb/$o" | grep -q "U mgb_task_begin" || fail "$o is not rewritten"
done
# 3. A header the rewrite leaves alone is found beside the rewritten copy (the mirror tree): its
#    __FILE__ still names it as the original compile does, in the host and the device pass, with
#    the source spelled relative, bare (compiled in its own directory) and absolute.
cp -r "$tests/driver_identity/untouched_header" "$dir/src/"
untouched() { grep -o 'std::printf("%s:%d\\n", "[^"]*", [0-9]*)'; }
for spelling in ../src/untouched_header/main.cu main.cu "$dir/src/untouched_header/main.cu"; do
  cwd="$dir/plain"
  [[ "$spelling" == main.cu ]] && cwd="$dir/src/untouched_header"
  (cd "$cwd" && "$nvcc" -E "$spelling" | untouched >"$dir/untouched.plain") ||
    fail "nvcc -E $spelling failed"
  (cd "$cwd" && "$mgb_nvcc" -E "$spelling" 2>"$dir/untouched.err" | untouched \
    >"$dir/untouched.mgb") || fail "mgb-nvcc -E $spelling failed: $(cat "$dir/untouched.err")"
  [[ $(grep -c where.h "$dir/untouched.plain") -ge 2 ]] ||
    fail "unexpected original markers for $spelling: $(cat "$dir/untouched.plain")"
  diff "$dir/untouched.plain" "$dir/untouched.mgb" >"$dir/untouched.diff" ||
    fail "__FILE__ of an untouched header differs ($spelling): $(cat "$dir/untouched.diff")"
  grep -q "NOT rewritten" "$dir/untouched.err" && fail "untouched_header fell back ($spelling)"
  # Its warnings (host and device pass) name it as nvcc does, not the mirror.
  (cd "$cwd" && "$nvcc" -arch=sm_90 -c "$spelling" -o "$dir/u.o" 2>"$dir/untouched.plain.err") ||
    fail "nvcc -c $spelling failed: $(cat "$dir/untouched.plain.err")"
  (cd "$cwd" && "$mgb_nvcc" -arch=sm_90 -c "$spelling" -o "$dir/u.o" 2>"$dir/untouched.mgb.err") ||
    fail "mgb-nvcc -c $spelling failed: $(cat "$dir/untouched.mgb.err")"
  [[ $(grep -c "where.h.*where_old is old" "$dir/untouched.plain.err") -ge 1 &&
     $(grep -c "where.h(.*declared_but_never_referenced" "$dir/untouched.plain.err") -ge 1 ]] ||
    fail "unexpected nvcc warnings for $spelling: $(cat "$dir/untouched.plain.err")"
  diff "$dir/untouched.plain.err" "$dir/untouched.mgb.err" >"$dir/untouched.err.diff" ||
    fail "warnings in an untouched header name another file ($spelling): $(cat "$dir/untouched.err.diff")"
done
# 5. A project compiled from the top of its sources with sources in subdirectories (GPUMD's
#    `-I./` from src/): the root widens to that directory and both headers are searched in the
#    mirror first; the header the rewrite leaves alone must still be named as the line spells the
#    directory (./util/where.h, or absolute), in __FILE__ and in its warnings.
mkdir -p "$dir/proj/app" "$dir/proj/util"
cp "$tests/driver_identity/untouched_header/where.h" "$dir/proj/util/"
printf '%s\n' '#pragma once' \
  'template <typename T> __global__ void fill_k(T *d) { d[threadIdx.x] = T(1); }' \
  'template <typename T> struct Vec { T *d = nullptr; void fill() { fill_k<<<1, 32>>>(d); } };' \
  >"$dir/proj/util/vec.cuh"
printf '%s\n' '#include "util/vec.cuh"' '#include "util/where.h"' \
  'int main() { where_host(); Vec<float> v; cudaMalloc(&v.d, 128); v.fill(); cudaFree(v.d); return 0; }' \
  >"$dir/proj/app/main.cu"
for inc in -I./ "-I$dir/proj"; do
  (cd "$dir/proj" && "$nvcc" -arch=sm_90 "$inc" -E app/main.cu | untouched >"$dir/proj.plain" &&
    "$nvcc" -arch=sm_90 "$inc" -c app/main.cu -o "$dir/proj.o" 2>"$dir/proj.plain.err") ||
    fail "nvcc $inc failed"
  (cd "$dir/proj" && "$mgb_nvcc" -arch=sm_90 "$inc" -E app/main.cu 2>/dev/null | untouched >"$dir/proj.mgb" &&
    MGB_STRICT=1 "$mgb_nvcc" -arch=sm_90 "$inc" -c app/main.cu -o "$dir/proj.o" 2>"$dir/proj.mgb.err") ||
    fail "mgb-nvcc $inc failed: $(cat "$dir/proj.mgb.err")"
  grep -q 'util/where.h' "$dir/proj.plain" || fail "unexpected original markers ($inc): $(cat "$dir/proj.plain")"
  diff "$dir/proj.plain" "$dir/proj.mgb" >"$dir/proj.diff" ||
    fail "__FILE__ of util/where.h differs ($inc): $(cat "$dir/proj.diff")"
  diff "$dir/proj.plain.err" "$dir/proj.mgb.err" >"$dir/proj.err.diff" ||
    fail "warnings of util/where.h name another file ($inc): $(cat "$dir/proj.err.diff")"
  "$nm" "$dir/proj.o" | grep -q "U mgb_launch_prepare" || fail "util/vec.cuh's launch is not rewritten ($inc)"
done
# 4. An untouched C source through mgb-cc (beside mgb-nvcc): the same warnings and __FILE__.
mgb_cc="$(dirname "$mgb_nvcc")/mgb-cc"
cp "$tests/driver_identity/untouched_source.c" "$dir/src/"
(cd "$dir/plain" && gcc -Wall -c ../src/untouched_source.c 2>"$dir/c.plain.err" &&
  gcc -E ../src/untouched_source.c | grep -o 'return "[^"]*"\|printf.*, [0-9]*)' >"$dir/c.plain.E") ||
  fail "gcc failed: $(cat "$dir/c.plain.err")"
(cd "$dir/mgb" && "$mgb_cc" -Wall -c ../src/untouched_source.c 2>"$dir/c.mgb.err" &&
  "$mgb_cc" -E ../src/untouched_source.c 2>/dev/null | grep -o 'return "[^"]*"\|printf.*, [0-9]*)' \
  >"$dir/c.mgb.E") || fail "mgb-cc failed: $(cat "$dir/c.mgb.err")"
grep -q "unused variable" "$dir/c.plain.err" || fail "gcc's own warning is missing: $(cat "$dir/c.plain.err")"
diff "$dir/c.plain.err" "$dir/c.mgb.err" >"$dir/c.err.diff" ||
  fail "mgb-cc's warnings name another file: $(cat "$dir/c.err.diff")"
grep -q '"../src/untouched_source.c"' "$dir/c.plain.E" || fail "unexpected gcc -E: $(cat "$dir/c.plain.E")"
diff "$dir/c.plain.E" "$dir/c.mgb.E" >"$dir/c.E.diff" ||
  fail "__FILE__/__LINE__ of an untouched source differ: $(cat "$dir/c.E.diff")"
echo "PASS: __FILE__/__LINE__ as in the original (an untouched header's and source's too);" \
  "3 sources rewritten with nvcc's stderr only; an untouched C source with gcc's warnings"
