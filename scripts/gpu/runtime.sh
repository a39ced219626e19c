#!/usr/bin/env bash
# scripts/gpu/runtime.sh: libmgb's GPU test suite and GPU benchmark.
#
#   scripts/gpu/runtime.sh pack          # on the build machine: static build, then one archive
#   scripts/gpu/runtime.sh run [ARCHIVE|DIR] # on the GPU machine (2 GPUs): runs everything
#
# pack builds (in build-runtime/gpu, -DMGB_STATIC_GRPC=ON so nothing but glibc is needed there)
# mgbd, the four examples/runtime programs and bench/runtime/gpu_overhead.cu (linked through
# mgb-config), strips them and writes build-runtime/gpu/carry/runtime-gpu.tar.xz. That one file
# (plus this script, which is tracked) is all the GPU machine needs: carry
#   build-runtime/gpu/carry
# run starts mgbd with NVML (MGB_GPU_MPS=1: with --mps) and runs: runtime_two_gpus, runtime_lazy_path,
# runtime_bench_gpu; then against an mgbd given small config GPUs (mapped onto CUDA devices 0/1, so
# waiting is forced without filling 143 GB): two runtime_grow at once (the second waits for the
# first's memory) and runtime_killed (SIGKILL mid-task; the next task needing that memory must be
# placed). Exit status 0 only when every program printed PASS.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }

pack() {
  local build="$here/build-runtime/gpu"
  export PATH=/usr/local/cuda/bin:$PATH
  cmake -S "$here" -B "$build" -DMGB_STATIC_GRPC=ON -DMGB_BUILD_REWRITER=OFF \
        -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target mgbd runtime_two_gpus runtime_lazy_path runtime_grow \
        runtime_killed
  local stage="$build/carry/stage"
  rm -rf "$build/carry" && mkdir -p "$stage"
  # The link line any nvcc user gets from mgb-config: the benchmark is built that way.
  nvcc -O2 -arch=sm_90 $("$build/mgb-config" --cflags) "$here/bench/runtime/gpu_overhead.cu" \
       -o "$stage/runtime_bench_gpu" $("$build/mgb-config" --nvcc-libs)
  cp "$build/service/mgbd" "$build"/examples/runtime/runtime_{two_gpus,lazy_path,grow,killed} \
     "$stage/"
  strip "$stage"/*
  tar -C "$stage" -cJf "$build/carry/runtime-gpu.tar.xz" .
  rm -rf "$stage"
  ls -l "$build/carry/runtime-gpu.tar.xz"
}

run() {
  local archive=${1:-$here/build-runtime/gpu/carry/runtime-gpu.tar.xz}
  work=$(mktemp -d /tmp/mgb-runtime-gpu.XXXXXX)  # global: the EXIT trap uses it
  bin="$work/bin" failures=0 mgbd_pid=""
  if [ -d "$archive" ]; then  # a folder of binaries (scripts/gpu/pack.sh's .device/bin)
    bin=$(cd "$archive" && pwd)
  else
    mkdir -p "$bin" && tar -C "$bin" -xJf "$archive"
  fi
  stop_mgbd() { [ -n "$mgbd_pid" ] && kill "$mgbd_pid" 2>/dev/null && wait "$mgbd_pid" 2>/dev/null; mgbd_pid=""; }
  trap 'stop_mgbd; [ "${MGB_GPU_MPS:-0}" = 1 ] && CUDA_MPS_PIPE_DIRECTORY=$work/mps/pipe \
        bash -c "echo quit | nvidia-cuda-mps-control" 2>/dev/null; true' EXIT
  start_mgbd() {  # start_mgbd SOCKET [mgbd flags...]
    local socket=$1; shift
    "$bin/mgbd" --socket "$socket" "$@" >"$work/mgbd.log" 2>&1 &
    mgbd_pid=$!
    for _ in $(seq 100); do [ -S "$socket" ] && return 0; sleep 0.1; done
    echo "mgbd did not start:"; cat "$work/mgbd.log"; exit 1
  }
  check() {  # check NAME COMMAND...: runs it, counts a missing PASS as a failure
    echo "== $1"
    local out; out=$("${@:2}" 2>&1) || true
    echo "$out"
    grep -q "^PASS" <<<"$out" || failures=$((failures + 1))
  }
  nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader || true

  # 1. mgbd on the real GPUs (NVML), MPS if asked.
  local mps=()
  if [ "${MGB_GPU_MPS:-0}" = 1 ]; then
    mps=(--mps --mps-dir "$work/mps")
    export CUDA_MPS_PIPE_DIRECTORY="$work/mps/pipe"  # also for programs that init CUDA first
  fi
  export MGB_SOCKET="$work/nvml.sock"
  # --spread-tasks: one process's tasks on several GPUs at once (by default mgbd keeps them on the
  # GPUs the process already uses while they fit, so this example would use one).
  start_mgbd "$MGB_SOCKET" "${mps[@]}" --spread-tasks
  check runtime_two_gpus "$bin/runtime_two_gpus"
  check runtime_lazy_path "$bin/runtime_lazy_path"
  echo "== runtime_bench_gpu"
  "$bin/runtime_bench_gpu" 500 1000 || failures=$((failures + 1))
  echo "== runtime_bench_gpu, TaskBegin/TaskEnd as gRPC calls (MGB_FAST_LANE=0)"
  MGB_FAST_LANE=0 "$bin/runtime_bench_gpu" 500 1000 || failures=$((failures + 1))
  stop_mgbd

  # 2. Small config GPUs: force waiting and check release after SIGKILL.
  cat >"$work/small.json" <<JSON
{"gpus": [{"name": "small0", "memory_bytes": 3221225472, "sms": 132}]}
JSON
  export MGB_SOCKET="$work/small.sock"
  start_mgbd "$MGB_SOCKET" --gpus "$work/small.json" --context-reserve 0
  echo "== runtime_grow x2 (3 GiB GPU, each grows to 2 GiB: the second must wait ~2 s)"
  "$bin/runtime_grow" 4 512 2000 >"$work/grow1.log" 2>&1 & local g1=$!
  sleep 0.5
  "$bin/runtime_grow" 4 512 0 >"$work/grow2.log" 2>&1 & local g2=$!
  wait $g1 || true; wait $g2 || true
  cat "$work/grow1.log" "$work/grow2.log"
  grep -q '^PASS' "$work/grow1.log" && grep -q '^PASS' "$work/grow2.log" || failures=$((failures + 1))
  local waited; waited=$(sed -n 's/.* in \([0-9]*\) ms.*/\1/p' "$work/grow2.log")
  if [ -z "$waited" ] || [ "$waited" -lt 1000 ]; then
    echo "FAIL runtime_grow: the second program did not wait for memory (${waited:-?} ms)"
    failures=$((failures + 1))
  else
    echo "PASS runtime_grow waiting (${waited} ms)"
  fi

  echo "== runtime_killed (2.5 GiB held, SIGKILL, then 2.5 GiB more must be placed)"
  "$bin/runtime_killed" hold 2560 >"$work/killed.log" 2>&1 & local holder=$!
  for _ in $(seq 300); do grep -q holding "$work/killed.log" && break; sleep 0.1; done
  kill -9 "$holder"; wait "$holder" 2>/dev/null || true
  check runtime_killed timeout 30 "$bin/runtime_killed" verify 2560
  stop_mgbd

  echo "== $failures failure(s)"
  [ "$failures" -eq 0 ]
}

case "${1:-}" in
  pack) pack ;;
  run) shift; run "$@" ;;
  -h|--help) usage ;;
  *) usage >&2; exit 2 ;;
esac
