#!/usr/bin/env bash
# Builds the paper's prototype scheduler GPU-Sched (bemps client library, lazy runtime, scheduler
# "sched", beacon/wrapper LLVM passes) and the seven Rodinia programs of the job mix
# p100_50_16jobs_0, instrumented the way the benchmarks' own GPU-Sched Makefiles do it.
# Plain-nvcc Rodinia builds are build-rodinia.sh.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: build-gpusched.sh GPU_SCHED_SRC_DIR OUT_DIR [--work DIR] [-j N]

  GPU_SCHED_SRC_DIR  a clean GPU-Sched checkout (needs src/ and Benchmarks/rodinia_cuda_3.1/)
  OUT_DIR            receives bin/ (sched + srad_v1 srad_v2 bfs lavaMD backprop dwt2d needle),
                     lib/ (libbemps.so liblazy.so libcudart.so.13), workloader.py,
                     workloads/, tools/ (input generators), BUILD-INFO.txt
  --work DIR         scratch/build directory (default: OUT_DIR.work); it is wiped first
  -j N               make parallelism for the CMake builds (default 2)

Steps: copy src/ and the needed Rodinia sources to the work dir; apply
patches/rodinia/01-cuda13-device-synchronize.patch and patches/gpusched/*.patch (patch -p1);
build the runtime with GPU-Sched's default CMake build and the passes in a Release build
against LLVM 14; compile each program's host code nvcc --cuda -> .ii -> clang-14 (+ beacon
pass: backprop, srad_v1, srad_v2) or clang-14 -> opt-14 wrapper pass + lazy runtime (bfs,
needle, lavaMD, dwt2d); device code nvcc -O2 -arch=sm_90. Checks that every program is
instrumented and that the beacon precedes every cudaMalloc/cudaMemcpy in the emitted IR.

Tools (override with env vars): NVCC=/usr/local/cuda/bin/nvcc CLANG=clang-14
CLANGXX=clang++-14 OPT=opt-14 LLVM_DIR=/usr/lib/llvm-14/lib/cmake/llvm CUDA_DIR=/usr/local/cuda
USAGE
}

die() { echo "build-gpusched.sh: error: $*" >&2; exit 1; }
step() { echo "== $*"; }

[[ "${1:-}" == --help || "${1:-}" == -h ]] && { usage; exit 0; }
(($# >= 2)) || { usage >&2; exit 2; }
src_arg="$1"; out="$2"; shift 2
work=""; jobs=2
while (($#)); do
  case "$1" in
    --work) (($# >= 2)) || die "--work needs a directory"; work="$2"; shift 2 ;;
    -j) (($# >= 2)) || die "-j needs a number"; jobs="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

CUDA_DIR="${CUDA_DIR:-/usr/local/cuda}"
NVCC="${NVCC:-$CUDA_DIR/bin/nvcc}"
CLANG="${CLANG:-clang-14}"
CLANGXX="${CLANGXX:-clang++-14}"
OPT="${OPT:-opt-14}"
LLVM_DIR="${LLVM_DIR:-/usr/lib/llvm-14/lib/cmake/llvm}"
ARCH_FLAGS=(-O2 -arch=sm_90)

[[ -d "$src_arg" ]] || die "GPU_SCHED_SRC_DIR '$src_arg' is not a directory"
src="$(readlink -f -- "$src_arg")"
[[ -f "$src/src/CMakeLists.txt" && -d "$src/Benchmarks/rodinia_cuda_3.1/cuda" ]] \
  || die "$src does not look like a GPU-Sched checkout (src/CMakeLists.txt, Benchmarks/rodinia_cuda_3.1/cuda)"
here="$(dirname -- "$(readlink -f -- "$0")")"
[[ -d "$here/patches/gpusched" && -f "$here/patches/rodinia/01-cuda13-device-synchronize.patch" ]] \
  || die "patches not found next to this script ($here/patches)"
for t in cmake make patch python3 "$NVCC" "$CLANG" "$CLANGXX" "$OPT" nm readelf; do
  command -v "$t" >/dev/null || die "required tool '$t' not found"
done
[[ -f "$LLVM_DIR/LLVMConfig.cmake" ]] || die "LLVM_DIR=$LLVM_DIR has no LLVMConfig.cmake (install llvm-14-dev)"
[[ -f "$CUDA_DIR/lib64/libcudart.so" ]] || die "$CUDA_DIR/lib64/libcudart.so not found"

mkdir -p "$out"; out="$(readlink -f -- "$out")"
[[ -n "$work" ]] || work="$out.work"
mkdir -p "$work"; work="$(readlink -f -- "$work")"
[[ "$work" != "$src" && "$work" != "$out" ]] || die "--work must differ from the source and output dirs"

# ---------------------------------------------------------------- sources + patches
step "copy sources to $work/tree"
rm -rf "$work/tree" "$work/build-runtime" "$work/build-passes" "$work/obj"
mkdir -p "$work/tree/Benchmarks/rodinia_cuda_3.1/cuda" "$work/obj"
cp -r "$src/src" "$work/tree/"
cp -r "$src/Benchmarks/rodinia_cuda_3.1/common" "$work/tree/Benchmarks/rodinia_cuda_3.1/"
for d in srad bfs lavaMD backprop dwt2d nw; do
  cp -r "$src/Benchmarks/rodinia_cuda_3.1/cuda/$d" "$work/tree/Benchmarks/rodinia_cuda_3.1/cuda/"
done
for p in "$here/patches/rodinia/01-cuda13-device-synchronize.patch" "$here"/patches/gpusched/*.patch; do
  step "patch $(basename "$p")"
  patch -s -p1 -d "$work/tree" < "$p" || die "patch $p does not apply to $src"
done
T="$work/tree/src"
R="$work/tree/Benchmarks/rodinia_cuda_3.1/cuda"

# ---------------------------------------------------------------- runtime + passes
step "runtime: bemps, lazy, bemps_sched (default CMake build type)"
# RUNPATH $ORIGIN:$ORIGIN/../lib so that bin/sched and lib/liblazy.so find lib/ after copying.
cmake -S "$T" -B "$work/build-runtime" -DLLVM_DIR="$LLVM_DIR" \
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN:$ORIGIN/../lib' \
  > "$work/build-runtime.log" 2>&1 || die "cmake (runtime) failed, see $work/build-runtime.log"
make -C "$work/build-runtime" -j"$jobs" bemps lazy bemps_sched >> "$work/build-runtime.log" 2>&1 \
  || die "runtime build failed, see $work/build-runtime.log"

step "passes: GPUBeaconPass, WrapperPass (Release: LLVM 14 header assertions abort clang otherwise)"
cmake -S "$T" -B "$work/build-passes" -DLLVM_DIR="$LLVM_DIR" -DCMAKE_BUILD_TYPE=Release \
  > "$work/build-passes.log" 2>&1 || die "cmake (passes) failed, see $work/build-passes.log"
make -C "$work/build-passes" -j"$jobs" GPUBeaconPass WrapperPass >> "$work/build-passes.log" 2>&1 \
  || die "pass build failed, see $work/build-passes.log"

BEMPS_LIB_DIR="$work/build-runtime/runtime/bemps"
LAZY_LIB_DIR="$work/build-runtime/runtime/lazy"
BEMPS_PASS="$work/build-passes/passes/analysis/libGPUBeaconPass.so"
WRAPPER_PASS="$work/build-passes/passes/wrappers/libWrapperPass.so"
for f in "$BEMPS_LIB_DIR/libbemps.so" "$LAZY_LIB_DIR/liblazy.so" "$work/build-runtime/runtime/sched/bemps_sched" \
         "$BEMPS_PASS" "$WRAPPER_PASS"; do
  [[ -f "$f" ]] || die "expected build output $f missing"
done

LINK_COMMON=(-L"$CUDA_DIR/lib64" -Wl,-rpath,'$ORIGIN/../lib' -Wl,-rpath-link,"$BEMPS_LIB_DIR")
BIN="$work/bin"; mkdir -p "$BIN"

# nvcc --cuda: device code for sm_90 embedded, host code preprocessed for clang-14
cuda_ii() { # in.cu out.ii [extra nvcc flags]
  local in="$1" o="$2"; shift 2
  "$NVCC" -ccbin "$CLANGXX" "${ARCH_FLAGS[@]}" "$@" --cuda "$in" -o "$o" > "$o.log" 2>&1 \
    || { cat "$o.log" >&2; die "nvcc --cuda $in failed"; }
}
# host .ii -> .o through clang-14 -O1 with the beacon pass (as backprop/srad Makefiles);
# also keeps the emitted IR (.beacon.ll) for the ordering check
beacon_obj() { # in.ii out.o
  local in="$1" o="$2"
  "$CLANG" -O1 -flegacy-pass-manager -Xclang -load -Xclang "$BEMPS_PASS" -c "$in" -o "$o" \
    > "$o.pass.log" 2>&1 || { tail -20 "$o.pass.log" >&2; die "clang+beacon pass on $in failed"; }
  "$CLANG" -O1 -flegacy-pass-manager -Xclang -load -Xclang "$BEMPS_PASS" -S -emit-llvm "$in" \
    -o "${o%.o}.beacon.ll" > /dev/null 2>&1 || die "clang+beacon pass (-emit-llvm) on $in failed"
  "$OPT" -verify -disable-output "${o%.o}.beacon.ll" || die "beacon pass produced invalid IR for $in"
}
# host .ii -> .ll (clang-14 -O1) -> opt-14 wrapper pass -> .o (as bfs/nw/lavaMD/dwt2d Makefiles)
wrapper_obj() { # in.ii out.o clang-lang [--lowerinvoke]
  local in="$1" o="$2" lang="$3" li="${4:-}"
  local ll="${o%.o}.ll" wll="${o%.o}.wp.ll"
  "$CLANG" -x "$lang" -O1 -S -emit-llvm "$in" -o "$ll" > "$o.clang.log" 2>&1 \
    || { tail -20 "$o.clang.log" >&2; die "clang -emit-llvm $in failed"; }
  "$OPT" -enable-new-pm=0 $li -load "$WRAPPER_PASS" -WP "$ll" -S -o "$wll" > "$o.wp.log" 2>&1 \
    || { tail -20 "$o.wp.log" >&2; die "opt wrapper pass on $ll failed"; }
  "$OPT" -verify -disable-output "$wll" || die "wrapper pass produced invalid IR for $in"
  "$CLANG" -O1 -c "$wll" -o "$o" || die "clang -c $wll failed"
}

# ---------------------------------------------------------------- beacon-pass programs
step "backprop (beacon pass)"
o="$work/obj/backprop"; mkdir -p "$o"
for c in backprop facetrain imagenet; do
  "$CLANG" -O1 -w -c "$R/backprop/$c.c" -o "$o/$c.o" || die "clang $c.c failed"
done
cuda_ii "$R/backprop/backprop_cuda.cu" "$o/backprop_cuda.ii"
beacon_obj "$o/backprop_cuda.ii" "$o/backprop_cuda.o"
"$CLANGXX" -O1 "$o"/{backprop,facetrain,imagenet,backprop_cuda}.o -o "$BIN/backprop" "${LINK_COMMON[@]}" \
  -L"$BEMPS_LIB_DIR" -lcudart -lm -lbemps || die "link backprop failed"

step "srad_v1 (beacon pass)"
o="$work/obj/srad_v1"; mkdir -p "$o"
cuda_ii "$R/srad/srad_v1/main.cu" "$o/main.ii" -I"$R/srad/srad_v1"
beacon_obj "$o/main.ii" "$o/main.o"
"$CLANGXX" -O1 "$o/main.o" -o "$BIN/srad_v1" "${LINK_COMMON[@]}" -L"$BEMPS_LIB_DIR" \
  -lm -lcudart -lbemps || die "link srad_v1 failed"

step "srad_v2 (beacon pass)"
o="$work/obj/srad_v2"; mkdir -p "$o"
cuda_ii "$R/srad/srad_v2/srad.cu" "$o/srad.ii" -I"$R/srad/srad_v2"
beacon_obj "$o/srad.ii" "$o/srad.o"
"$CLANGXX" -O1 "$o/srad.o" -o "$BIN/srad_v2" "${LINK_COMMON[@]}" -L"$BEMPS_LIB_DIR" \
  -lcudart -lm -lrt -lbemps || die "link srad_v2 failed"

# ---------------------------------------------------------------- wrapper-pass programs
LAZY_LINK=(-L"$LAZY_LIB_DIR" -llazy -lcudart -lrt -lm)

step "bfs (wrapper pass + lazy runtime)"
o="$work/obj/bfs"; mkdir -p "$o"
cuda_ii "$R/bfs/bfs.cu" "$o/bfs.ii" -I"$R/bfs"
wrapper_obj "$o/bfs.ii" "$o/bfs.o" c++-cpp-output --lowerinvoke
"$CLANGXX" "$o/bfs.o" -o "$BIN/bfs" "${LINK_COMMON[@]}" "${LAZY_LINK[@]}" || die "link bfs failed"

step "needle (wrapper pass + lazy runtime)"
o="$work/obj/nw"; mkdir -p "$o"
cuda_ii "$R/nw/needle.cu" "$o/needle.ii" -I"$R/nw"
wrapper_obj "$o/needle.ii" "$o/needle.o" c++-cpp-output
"$CLANGXX" "$o/needle.o" -o "$BIN/needle" "${LINK_COMMON[@]}" "${LAZY_LINK[@]}" || die "link needle failed"

step "lavaMD (wrapper pass + lazy runtime)"
o="$work/obj/lavaMD"; mkdir -p "$o"
L="$R/lavaMD"
(cd "$L" && "$CLANG" -O3 -w -c main.c -o "$o/main.o") || die "clang lavaMD main.c failed"
"$CLANG" -O3 -w -c "$L/util/num/num.c" -o "$o/num.o" || die "clang num.c failed"
"$CLANG" -O3 -w -c "$L/util/timer/timer.c" -o "$o/timer.o" || die "clang timer.c failed"
"$NVCC" -ccbin "$CLANGXX" "${ARCH_FLAGS[@]}" -c "$L/util/device/device.cu" -o "$o/device.o" \
  || die "nvcc device.cu failed"
cuda_ii "$L/kernel/kernel_gpu_cuda_wrapper.cu" "$o/kernel_gpu_cuda_wrapper.ii" -I"$L/kernel"
wrapper_obj "$o/kernel_gpu_cuda_wrapper.ii" "$o/kernel_gpu_cuda_wrapper.o" c++-cpp-output
"$CLANGXX" "$o"/{main,kernel_gpu_cuda_wrapper,num,timer,device}.o -o "$BIN/lavaMD" "${LINK_COMMON[@]}" \
  "${LAZY_LINK[@]}" -lgomp || die "link lavaMD failed"

step "dwt2d (wrapper pass + lazy runtime)"
o="$work/obj/dwt2d"; mkdir -p "$o/dwt_cuda"
objs=()
for cu in main.cu dwt.cu components.cu dwt_cuda/fdwt53.cu dwt_cuda/fdwt97.cu dwt_cuda/common.cu \
          dwt_cuda/rdwt97.cu dwt_cuda/rdwt53.cu; do
  b="$o/${cu%.cu}"
  cuda_ii "$R/dwt2d/$cu" "$b.ii" -I"$R/dwt2d"
  wrapper_obj "$b.ii" "$b.o" c++-cpp-output --lowerinvoke
  objs+=("$b.o")
done
"$CLANGXX" -fPIC -o "$BIN/dwt2d" "${objs[@]}" "${LINK_COMMON[@]}" "${LAZY_LINK[@]}" || die "link dwt2d failed"

# ---------------------------------------------------------------- checks
step "check instrumentation"
for p in backprop srad_v1 srad_v2; do
  nm -D "$BIN/$p" | grep -q ' U bemps_begin$' || die "$p does not reference bemps_begin"
  nm -D "$BIN/$p" | grep -q ' U bemps_free$' || die "$p does not reference bemps_free"
done
for p in bfs needle lavaMD dwt2d; do
  for s in cudaMallocWrapper cudaKernelLaunchPrepare cudaFreeWrapper; do
    nm -D "$BIN/$p" | grep -q " U $s\$" || die "$p does not reference $s"
  done
done
# In every function that calls bemps_begin, no cudaMalloc/cudaMemcpy/cudaMemset may come first.
python3 - "$work"/obj/backprop/backprop_cuda.beacon.ll "$work"/obj/srad_v1/main.beacon.ll \
          "$work"/obj/srad_v2/srad.beacon.ll <<'PY' || die "beacon ordering check failed"
import re, sys
bad = 0
for path in sys.argv[1:]:
    fn, seen, n = None, [], 0
    for line in open(path):
        if line.startswith('define '):
            fn, seen = line.split('@')[1].split('(')[0], []
        elif line.startswith('}'):
            fn = None
        elif fn:
            m = re.search(r'call \S+ @(bemps_begin|cudaMalloc|cudaMemcpy|cudaMemset)\b', line)
            if m and m.group(1) == 'bemps_begin':
                n += 1
                if seen:
                    bad += 1
                    print('  %s: %s: %s before bemps_begin' % (path, fn, seen))
            elif m:
                seen.append(m.group(1))
    if n == 0:
        bad += 1
        print('  %s: no bemps_begin found' % path)
    else:
        print('  %s: %d bemps_begin call(s)' % (path.split('/obj/')[1], n))
sys.exit(1 if bad else 0)
PY

# ---------------------------------------------------------------- install
step "install into $out"
rm -rf "$out/bin" "$out/lib" "$out/workloads" "$out/tools"
mkdir -p "$out/bin" "$out/lib" "$out/workloads" "$out/tools"
cp "$work/build-runtime/runtime/sched/bemps_sched" "$out/bin/sched"
for p in srad_v1 srad_v2 bfs lavaMD backprop dwt2d needle; do cp "$BIN/$p" "$out/bin/"; done
cp "$BEMPS_LIB_DIR/libbemps.so" "$LAZY_LIB_DIR/liblazy.so" "$out/lib/"
cp -L "$CUDA_DIR/lib64/libcudart.so.13" "$out/lib/"
strip --strip-debug "$out/lib/libbemps.so" "$out/lib/liblazy.so" "$out"/bin/* 2>/dev/null || true
cp "$T/runtime/driver/workloader.py" "$out/workloader.py"
cp "$T/runtime/driver/workloads/ppopp21/p100_50_16jobs_0.wl" "$out/workloads/"
for g in gen-bfs-graph.cpp gen-bmp.py gen-pgm.py; do
  [[ -f "$here/$g" ]] && cp "$here/$g" "$out/tools/"
done
{
  echo "built $(date -u +%FT%TZ) on $(uname -n) from $src"
  echo "nvcc: $("$NVCC" --version | tail -1)"; echo "clang: $("$CLANG" --version | head -1)"
  echo "patches:"; for p in "$here/patches/rodinia/01-cuda13-device-synchronize.patch" "$here"/patches/gpusched/*.patch; do
    echo "  $(basename "$p") $(sha256sum "$p" | cut -c1-16)"; done
  echo "dynamic libraries (ldd, LD_LIBRARY_PATH unset):"
  for f in "$out"/bin/* "$out"/lib/*.so*; do echo "  $(basename "$f"): $(ldd "$f" 2>/dev/null | awk '{print $1}' | grep -v '^linux-vdso\|^/lib64' | tr '\n' ' ')"; done
} > "$out/BUILD-INFO.txt"
echo "== done: $(cd "$out/bin" && echo *) ; lib: $(cd "$out/lib" && echo *) ; size $(du -sh "$out" | cut -f1)"
