#!/usr/bin/env bash
# `cmake --install` into a staging prefix, then the installed tools used as a user would: mgbd on a
# config-GPU file and `mgb status`, `mgb run` finding the installed guard, mgb-config, and (when
# the rewriter is built and nvcc is present) the installed mgb-nvcc building a CUDA program that
# links the installed libmgb, and a CMake project using find_package(mgb) and mgb_rewrite(). No
# installed text file may name the build tree.
# Usage: staged_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(readlink -f "$1") src=$(readlink -f "$2")
stage=$(mktemp -d /tmp/mgb-stage-XXXXXX)
trap 'kill "${mgbd:-0}" 2>/dev/null || true; rm -rf "$stage"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$stage/usr" > "$stage/install.log"
for f in bin/mgbd bin/mgb bin/mgb-batch bin/mgb-config lib/mgb/libmgb.a lib/mgb/libmgb-guard.so \
         lib/cmake/mgb/mgbConfig.cmake \
         include/mgb/mgb.h share/mgb/mgb-link-flags.txt share/mgb/installed; do
  [[ -e "$stage/usr/$f" ]] || fail "not installed: $f"
done
if grep -rlI -- "$build" "$stage/usr/bin" "$stage/usr/share" "$stage/usr/include" "$stage/usr/lib/cmake"; then
  fail "installed files above name the build tree $build"
fi
for lib in $(tr ' ' '\n' < "$stage/usr/share/mgb/mgb-link-flags.txt" | grep '^/'); do
  [[ -f "$lib" ]] || fail "the installed link line names $lib, which is not there"
done
"$stage/usr/bin/mgb-config" --cflags | grep -- "-I$stage/usr/include" > /dev/null || fail "mgb-config --cflags"

# The installed daemon and CLI.
cat > "$stage/gpus.json" <<JSON
{"gpus": [{"name": "g0", "memory_bytes": 17179869184, "sms": 132}]}
JSON
"$stage/usr/bin/mgbd" --socket "$stage/mgbd.sock" --gpus "$stage/gpus.json" --profile-store none \
  2> "$stage/mgbd.log" & mgbd=$!
for _ in $(seq 50); do [[ -S "$stage/mgbd.sock" ]] && break; sleep 0.1; done
"$stage/usr/bin/mgb" status --socket "$stage/mgbd.sock" | grep g0 > /dev/null || fail "installed mgb status"
out=$(MGB_SOCKET="$stage/mgbd.sock" "$stage/usr/bin/mgb" run -- /bin/sh -c 'echo "$LD_PRELOAD"')
[[ "$out" == "$stage/usr/lib/mgb/libmgb-guard.so" ]] || fail "installed mgb run preloads '$out'"

# The installed compiler drop-in.
if [[ -x "$stage/usr/bin/mgb-nvcc" ]] && command -v nvcc > /dev/null; then
  "$stage/usr/bin/mgb-nvcc" -O2 -o "$stage/app" "$src/examples/patterns/vector_add.cu" \
    > "$stage/nvcc.log" 2>&1 || { cat "$stage/nvcc.log"; fail "installed mgb-nvcc"; }
  nm "$stage/app" | grep ' T mgb_cuda' > /dev/null || fail "the program mgb-nvcc built does not link libmgb"
  echo "installed mgb-nvcc built a program that links the installed libmgb"
  # A user's CMake project: find_package(mgb) and mgb_rewrite().
  cmake -S "$src/test/install/package_project" -B "$stage/project" -DCMAKE_PREFIX_PATH="$stage/usr" \
    > "$stage/project.log" 2>&1 && cmake --build "$stage/project" >> "$stage/project.log" 2>&1 ||
    { cat "$stage/project.log"; fail "find_package(mgb) + mgb_rewrite() from the install"; }
  nm "$stage/project/scale" | grep ' T mgb_task_begin' > /dev/null || fail "mgb_rewrite()'s program does not link libmgb"
  grep -l "mgb-rewrite" "$stage/project.log" > /dev/null || fail "mgb_rewrite() did not run mgb-rewrite"
  echo "find_package(mgb) + mgb_rewrite() built a rewritten program from the install"
fi
echo "PASS staged install"
