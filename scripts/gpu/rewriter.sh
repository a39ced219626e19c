#!/usr/bin/env bash
# The rewriter's GPU check: every golden program (test/rewriter/inputs, each a whole program with
# a main) built as written with nvcc (NAME.orig) and through mgb-nvcc (NAME.mgb), run on the GPU
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
  strip --strip-debug "$out"/*.orig "$out"/*.mgb 2>/dev/null || true
  echo "built $built pairs into $out; left out (nvcc 13 cannot build the original): ${skipped[*]:-none}"
  exit 0
fi

[[ "$mode" == --run ]] || { echo "rewriter.sh: unknown mode $mode (see --help)" >&2; exit 2; }
exec bash "$root/scripts/gpu/compare-programs.sh" --exact "$out" "${3:-$out/mgbd}"
