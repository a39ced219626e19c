#!/usr/bin/env bash
# Packs what the GPU machine needs into .device/ (git-ignored): mgbd, mgb, every CUDA program built
# under BUILD_DIR/examples, the scripts in scripts/gpu, and the shared libraries they need that a
# bare Ubuntu GPU machine lacks (gRPC, Protobuf, Abseil...). Run here, after building.
# Usage: scripts/gpu/pack.sh [BUILD_DIR]    (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=.device
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/gpu"
grep -qxF "/$out/" .git/info/exclude 2>/dev/null || echo "/$out/" >> .git/info/exclude

# Executables: the service binaries and every ELF executable under examples/ in the build tree.
mapfile -t programs < <(
  for f in "$build"/service/mgbd "$build"/service/mgb "$build"/service/*/mgbd "$build"/service/*/mgb; do
    [ -x "$f" ] && [ -f "$f" ] && echo "$f"
  done
  find "$build/examples" -type f -perm -u+x 2>/dev/null | while read -r f; do
    file -b "$f" | grep -q '^ELF.*executable' && echo "$f"
  done
  [ -d "$build/pattern-bin" ] && find "$build/pattern-bin" -type f -perm -u+x
  true)
[ ${#programs[@]} -gt 0 ] || { echo "pack: nothing built under $build" >&2; exit 1; }

# Libraries every glibc system has, or that must come from the GPU machine's own driver.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libgcc_s|libstdc\+\+|libcuda\.so|libnvidia-ml)'
for f in "${programs[@]}"; do
  cp -L "$f" "$out/bin/"
  ldd "$f" 2>/dev/null | awk '/=> \//{print $1" "$3}' | while read -r name path; do
    echo "$name" | grep -qE "$skip" || cp -Ln "$path" "$out/lib/" 2>/dev/null || true
  done
done
strip --strip-debug "$out"/bin/* "$out"/lib/* 2>/dev/null || true
cp scripts/gpu/*.sh "$out/gpu/"
echo "pack: ${#programs[@]} programs, $(ls "$out/lib" | wc -l) libraries, $(du -sm "$out" | cut -f1) MiB in $out/"
