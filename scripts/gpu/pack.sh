#!/usr/bin/env bash
# Packs what the GPU machine needs into .device/ (git-ignored), from a build made here:
#   bin/       mgbd, mgb, mgb-batch, mgb_hold_memory, the runtime GPU tests and benchmark
#   wl/        the six workloads as rewritten by mgb-rewrite (mgb_rewrite() in CMake)
#   wl-plain/  the same six as written (calibration: scripts/gpu/workloads.sh .device/wl-plain)
#   patterns/  each pattern program as written (NAME.orig) and rewritten (NAME.mgb)
#   golden/    each golden program of test/rewriter/inputs as written and through mgb-nvcc
#   lib/       the shared libraries those need that a bare Ubuntu GPU machine lacks (gRPC...), and
#              libmgb-guard.so (where the packed mgb finds it: bin/../lib)
#   guard/     the unmodified programs of examples/guard for scripts/gpu/guard.sh
#   jobs/      job lists for the evaluation (mgb batch --generate, calibrated on the H200)
# Usage: scripts/gpu/pack.sh [BUILD_DIR]    (default: build; build it first: scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=.device
# Only the folders this script fills are replaced: others under .device/ (a set of third-party
# programs built for scripts/gpu/compare-programs.sh, say) are kept.
rm -rf "$out"/{bin,lib,wl,wl-plain,patterns,golden,jobs,guard}
mkdir -p "$out"/{bin,lib,wl,wl-plain,patterns,golden,jobs,guard}

need() { [ -x "$1" ] || { echo "pack: $1 is not built (build $build first)" >&2; exit 1; }; echo "$1"; }
programs=(
  "$(need "$build/service/mgbd")" "$(need "$build/service/mgb")"
  "$(need "$build/tools/batch/mgb-batch")" "$(need "$build/examples/service/mgb_hold_memory")"
)
for t in two_gpus lazy_path grow killed; do programs+=("$(need "$build/examples/runtime/runtime_$t")"); done
programs+=("$(need "$build/bench/runtime/runtime_bench_gpu")")
cp "${programs[@]}" "$out/bin/"
cp "$(need "$build/guard/libmgb-guard.so")" "$out/lib/"
for g in libraries big cost c_alloc; do
  cp "$(need "$build/examples/guard/guard_$g")" "$out/guard/"; programs+=("$build/examples/guard/guard_$g")
done
cp examples/guard/ctypes_alloc.py "$out/guard/"
for w in "$build"/workloads-mgb/*; do cp "$(need "$w")" "$out/wl/"; programs+=("$w"); done
for w in "$build"/workloads/*; do cp "$(need "$w")" "$out/wl-plain/"; done
for p in "$build"/examples/patterns/pattern_*_mgb; do
  name=$(basename "$p" _mgb); name=${name#pattern_}
  cp "$(need "$build/examples/patterns/pattern_$name")" "$out/patterns/$name.orig"
  cp "$p" "$out/patterns/$name.mgb"; programs+=("$p")
done

MGB_NVCC="$build/rewriter/mgb-nvcc" bash scripts/gpu/rewriter.sh --build "$out/golden" >&2
for p in "$out"/golden/*.mgb; do programs+=("$p"); done

# Libraries every glibc system has, that must come from the GPU machine's own driver, or that its
# CUDA toolkit has (the math libraries: hundreds of MiB, found through /usr/local/cuda/lib64).
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libgcc_s|libstdc\+\+|libcuda\.so|libnvidia-ml|libcu(blas|blasLt|sparse|fft|rand|solver)\.so|libnvJitLink)'
for f in "${programs[@]}"; do
  ldd "$f" 2>/dev/null | awk '/=> \//{print $1" "$3}' | while read -r name path; do
    echo "$name" | grep -qE "$skip" || cp -Ln "$path" "$out/lib/" 2>/dev/null || true
  done
done
strip --strip-debug "$out"/bin/* "$out"/wl/* "$out"/wl-plain/* "$out"/patterns/* "$out"/lib/* 2>/dev/null || true
rm -f "$out"/golden/*.build.log

# Job lists: the paper's shapes, sized from the H200 calibration; paths relative to the repo root.
for spec in "W1 16 1:1" "W2 16 2:1" "W3 16 3:1"; do
  set -- $spec
  "$build/tools/batch/mgb-batch" --generate --out "$out/jobs/$1.json" --count "$2" --ratio "$3" \
    --seed 1 --bin-dir "$out/wl" --target-seconds "${MGB_TARGET_SECONDS:-10}" \
    --calibration examples/workloads/calibration-h200.json >/dev/null
done
echo "pack: $(ls "$out/bin" | wc -l) tools, $(ls "$out/wl" | wc -l) workloads, $(ls "$out/patterns" | wc -l) pattern binaries, $(ls "$out/golden" | wc -l) golden binaries, $(ls "$out/lib" | wc -l) libraries: $(du -sm "$out" | cut -f1) MiB in $out/"
