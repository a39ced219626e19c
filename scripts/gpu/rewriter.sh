#!/usr/bin/env bash
# The rewriter's GPU check: every golden program (test/rewriter/inputs, each a whole program with
# a main) built as written with nvcc (NAME.orig) and through mgb-nvcc (NAME.mgb), and the whole
# program of test/rewriter/whole_program built by its Makefile with gcc/g++/nvcc and with
# mgb-cc/mgb-c++/mgb-nvcc (linked by mgb-c++, and by plain gcc with mgb-config --libs), run on the GPU
# machine side by side, the rewritten ones under an mgbd, outputs compared exactly
# (scripts/gpu/compare-programs.sh: same output, exit status, and how many tasks mgbd placed).
#   build machine:  scripts/gpu/rewriter.sh --build OUT_DIR   (MGB_NVCC: default build/rewriter/mgb-nvcc)
#   GPU machine:    scripts/gpu/rewriter.sh --run OUT_DIR [MGBD_BINARY]
# A program whose original nvcc 13 cannot build (CUDA 13 removed what it calls) is listed as such
# and left out; parse_error.cu is not a program.
set -euo pipefail
mode="${1:-}"; out="${2:-}"
if [[ -z "$mode" || -z "$out" || "$mode" == --help ]]; then sed -n '2,9p' "$0"; exit 2; fi
root="$(cd "$(dirname "$0")/../.." && pwd)"
inputs="$root/test/rewriter/inputs"

if [[ "$mode" == --build ]]; then
  mgb_nvcc="${MGB_NVCC:-$root/build/rewriter/mgb-nvcc}"
  [[ -x "$mgb_nvcc" ]] || { echo "rewriter.sh: $mgb_nvcc is not built (scripts/test.sh first)" >&2; exit 2; }
  mgb_nvcc="$(cd "$(dirname "$mgb_nvcc")" && pwd)/$(basename "$mgb_nvcc")"  # make -C changes directory
  mkdir -p "$out"
  libs=(-Xlinker --as-needed -lcublas -lcusparse -lcufft -lcurand -lcusolver)
  built=0; skipped=()
  for src in "$inputs"/*.cu "$inputs"/outside_root/app/main.cu; do
    name=$(basename "$src" .cu)
    [[ "$name" == parse_error ]] && continue
    flags=(-arch=sm_90 -O2)
    [[ "$name" == main ]] && { name=outside_root; flags+=(-I"$inputs/outside_root/common"); }
    echo "build $name" >&2
    if ! /usr/local/cuda/bin/nvcc "${flags[@]}" -o "$out/$name.orig" "$src" "${libs[@]}" 2>"$out/$name.orig.build.log"; then
      skipped+=("$name"); rm -f "$out/$name.orig"; continue
    fi
    "$mgb_nvcc" "${flags[@]}" -o "$out/$name.mgb" "$src" "${libs[@]}" 2>"$out/$name.mgb.build.log" \
      || { echo "rewriter.sh: mgb-nvcc failed on $name (see $out/$name.mgb.build.log)" >&2; exit 1; }
    built=$((built + 1))
  done
  # The whole program (test/rewriter/whole_program: a C helper, a .cu, a C++ main) built by its
  # Makefile with the plain tools and with the drop-ins: linked by mgb-c++ and by plain gcc.
  drivers="$(dirname "$mgb_nvcc")"
  for variant in orig mgb; do
    rm -rf "$out/wp-$variant"; cp -r "$root/test/rewriter/whole_program" "$out/wp-$variant"
  done
  make -s -C "$out/wp-orig" CC=gcc CXX=g++ NVCC=/usr/local/cuda/bin/nvcc scaler \
    > "$out/whole_program.orig.build.log" 2>&1 \
    || { echo "rewriter.sh: the whole program does not build as written" >&2; exit 1; }
  make -s -C "$out/wp-mgb" CC="$drivers/mgb-cc" CXX="$drivers/mgb-c++" NVCC="$mgb_nvcc" \
    MGB_CONFIG="$drivers/../mgb-config" all > "$out/whole_program.mgb.build.log" 2>&1 \
    || { echo "rewriter.sh: the whole program does not build through the drop-ins" >&2; exit 1; }
  cp "$out/wp-orig/scaler" "$out/whole_program.orig"; cp "$out/wp-mgb/scaler" "$out/whole_program.mgb"
  cp "$out/wp-orig/scaler" "$out/whole_program_gcc.orig"; cp "$out/wp-mgb/scaler_gcc" "$out/whole_program_gcc.mgb"
  rm -rf "$out/wp-orig" "$out/wp-mgb"
  built=$((built + 2))
  strip --strip-debug "$out"/*.orig "$out"/*.mgb 2>/dev/null || true
  echo "built $built pairs into $out; left out (nvcc 13 cannot build the original): ${skipped[*]:-none}"
  exit 0
fi

[[ "$mode" == --run ]] || { echo "rewriter.sh: unknown mode $mode (see --help)" >&2; exit 2; }
exec bash "$root/scripts/gpu/compare-programs.sh" --exact "$out" "${3:-$out/mgbd}"
