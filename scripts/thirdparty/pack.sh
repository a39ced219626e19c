#!/usr/bin/env bash
# Lays out a third-party round for the GPU machine: the pairs NAME.orig / NAME.mgb built outside
# the repository (docs/rewriter.md, "Third-party code"), their arguments, inputs and result files,
# in .device/tp/ beside what scripts/gpu/pack.sh put in .device/ (run that first: the .mgb
# binaries need its lib/ and bin/mgbd).
#   scripts/thirdparty/pack.sh PAIRS_DIR
# PAIRS_DIR holds NAME.orig and NAME.mgb, args.*.txt (lines `NAME ARG...`), files.*.txt (lines
# `NAME PATH...`, the files a program writes) and data/ (inputs, referred to by the arguments).
# On the GPU machine: scripts/thirdparty/run-on-gpu.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
pairs="${1:-}"
if [[ -z "$pairs" || "$pairs" == --help ]]; then sed -n '2,9p' "$0"; [[ -n "$pairs" ]]; exit $?; fi
[[ -d "$pairs" ]] || { echo "thirdparty/pack: $pairs is not a directory" >&2; exit 2; }
[[ -d .device/lib ]] || { echo "thirdparty/pack: run scripts/gpu/pack.sh first" >&2; exit 2; }
out=.device/tp
rm -rf "$out"
mkdir -p "$out"
shopt -s nullglob
missing=0
for orig in "$pairs"/*.orig; do
  name=$(basename "$orig" .orig)
  if [[ ! -x "$pairs/$name.mgb" ]]; then
    echo "thirdparty/pack: $name.mgb is missing (not built through the drivers)" >&2
    missing=$((missing + 1))
  fi
  cp "$orig" "$out/"
  [[ -x "$pairs/$name.mgb" ]] && cp "$pairs/$name.mgb" "$out/"
done
cat "$pairs"/args.*.txt > "$out/args.txt" 2>/dev/null || true
cat "$pairs"/files.*.txt > "$out/files.txt" 2>/dev/null || true
[[ -d "$pairs/data" ]] && cp -r "$pairs/data" "$out/"
# Other files beside the programs: inputs a program opens from its working directory.
for f in "$pairs"/*; do
  case "$(basename "$f")" in *.orig | *.mgb | args.*.txt | files.*.txt | data) ;; *) [[ -f "$f" ]] && cp "$f" "$out/" ;; esac
done
# Shared libraries the programs need that neither the GPU machine's CUDA toolkit nor .device/lib
# has (the math libraries come from /usr/local/cuda/lib64 there).
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libgcc_s|libstdc\+\+|libgomp|libcuda\.so|libnvidia-ml|libcu[a-zA-Z]*\.so|libnv[a-zA-Z]*\.so|libnpp[a-z]*\.so)'
for f in "$out"/*.orig "$out"/*.mgb; do
  ldd "$f" 2>/dev/null | awk '/=> \//{print $1" "$3}' | while read -r lib path; do
    echo "$lib" | grep -qE "$skip" || [[ -e .device/lib/$lib ]] || cp -Ln "$path" .device/lib/
  done
done
strip --strip-debug "$out"/*.orig "$out"/*.mgb 2>/dev/null || true
echo "thirdparty/pack: $(ls "$out"/*.orig | wc -l) pairs ($missing without a rewritten build)," \
  "$(du -sm "$out" | cut -f1) MiB in $out/"
exit $((missing > 0))
