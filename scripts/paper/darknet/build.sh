#!/usr/bin/env bash
# The paper's neural-network study (issue 34): Darknet (pjreddie/darknet) built by its own Makefile
# twice, as written (gcc, nvcc) and through mgb's drop-ins (mgb-cc, mgb-c++, mgb-nvcc), outside
# the repository. CUDA 13 needs two things of the make command line, not of the source:
# sm_90 instead of the Makefile's sm_30-sm_52, and cudaThreadSynchronize (removed in CUDA 11's
# successors) spelled as cudaDeviceSynchronize through -D. Then packs what the GPU machine needs
# (binaries, cfg/, data/) into OUT/darknet.tar.xz for scripts/paper/darknet/run-on-gpu.sh.
#
# usage: scripts/paper/darknet/build.sh SRC OUT [BUILD]
#   SRC    a Darknet checkout (git clone https://github.com/pjreddie/darknet; this study used
#          f6afaabc), never modified
#   OUT    where plain/ and mgb/ copies are built (made if missing)
#   BUILD  mgb's build directory (default: build of this repository)
set -euo pipefail
[ "${1:-}" = --help ] || [ "${1:-}" = -h ] && { sed -n 2,14p "$0"; exit 0; }
[ $# -ge 2 ] || { echo "usage: build.sh SRC OUT [BUILD] (--help)" >&2; exit 2; }
src=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
repo=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "${3:-$repo/build}" && pwd)
[ -f "$src/Makefile" ] && [ -d "$src/src" ] || { echo "build.sh: $src is not a Darknet checkout" >&2; exit 2; }
for d in mgb-cc mgb-c++ mgb-nvcc; do
  [ -x "$build/rewriter/$d" ] || { echo "build.sh: $build/rewriter/$d is not built" >&2; exit 2; }
done

flags=(GPU=1 "ARCH=-gencode arch=compute_90,code=sm_90"
       "COMMON=-Iinclude/ -Isrc/ -DGPU -I/usr/local/cuda/include/ -DcudaThreadSynchronize=cudaDeviceSynchronize")
for kind in plain mgb; do
  rm -rf "${out:?}/$kind"
  mkdir -p "$out/$kind"
  (cd "$src" && tar --exclude=.git -cf - .) | tar -C "$out/$kind" -xf -
  extra=()
  if [ "$kind" = mgb ]; then
    extra=("CC=$build/rewriter/mgb-cc" "CPP=$build/rewriter/mgb-c++" "NVCC=$build/rewriter/mgb-nvcc")
  fi
  echo "build.sh: building $kind (log: $out/$kind.log)"
  (cd "$out/$kind" && MGB_STRICT=1 make -j"$(nproc)" "${flags[@]}" "${extra[@]}") >"$out/$kind.log" 2>&1 ||
    { echo "build.sh: $kind build failed: $(tail -3 "$out/$kind.log")" >&2; exit 1; }
done
# The compilers' own messages must be the same (mgb prints nothing of its own here).
messages() { grep -v -E '^(gcc|g\+\+|nvcc|ar|mkdir|/.*/mgb-(cc|c\+\+|nvcc)) ' "$1" | sort; }
if diff <(messages "$out/plain.log") <(messages "$out/mgb.log") >"$out/messages.diff"; then
  echo "build.sh: both built; the same compiler messages"
else
  echo "build.sh: both built; compiler messages differ (see $out/messages.diff)"
fi
tar -C "$out" -cf - plain/darknet mgb/darknet plain/cfg plain/data | xz -T0 -6 >"$out/darknet.tar.xz"
echo "build.sh: packed $out/darknet.tar.xz ($(du -h "$out/darknet.tar.xz" | cut -f1))"
