#!/usr/bin/env bash
# The main job: the demo batch. Installs dependencies, builds what the demo needs, then
#  - on a node with NVIDIA GPUs: starts mgbd (NVML; MPS when run as root), runs a 16-job mix of the
#    rewritten workload suite through `mgb batch` with 8 worker slots, and prints the summary;
#  - on a machine without a GPU: runs a 16-job mix through `mgb simulate` (mgbd's own scheduling
#    core over job profiles recorded on real H200s) on a simulated 2-GPU node, and says so.
# Usage: scripts/demo.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
export PATH=/usr/local/cuda/bin:$PATH
bash scripts/setup-deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

if nvidia-smi -L >/dev/null 2>&1; then
  echo "demo: $(nvidia-smi -L | wc -l) GPU(s) found: running the REAL demo batch"
  targets=(mgbd mgb)
  for w in heat2d mlp_train md_cells nw_align wavelet2d bfs_graph; do targets+=("wl_${w}_mgb"); done
  cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
  work=$(mktemp -d /tmp/mgb-demo.XXXXXX)
  sock="$work/mgbd.sock"
  mps=()
  [ "$(id -u)" -eq 0 ] && command -v nvidia-cuda-mps-control >/dev/null && mps=(--mps --mps-dir "$work/mps")
  "$build/service/mgbd" --socket "$sock" "${mps[@]}" > "$work/mgbd.log" 2>&1 &
  mgbd=$!
  trap 'kill $mgbd 2>/dev/null; wait $mgbd 2>/dev/null; [ ${#mps[@]} -gt 0 ] && CUDA_MPS_PIPE_DIRECTORY=$work/mps/pipe bash -c "echo quit | nvidia-cuda-mps-control" 2>/dev/null; true' EXIT
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
  "$build/service/mgb" batch --generate --out "$work/jobs.json" --count 16 --ratio 2:1 --seed 1 \
    --bin-dir "$build/workloads-mgb" --target-seconds 12 --gpu-fraction 0.3 \
    --calibration examples/workloads/calibration-h200.json
  "$build/service/mgb" status --socket "$sock"
  "$build/service/mgb" batch --jobs "$work/jobs.json" --workers 8 --socket "$sock" \
    --label mgb --out "$work/demo.json"
  echo "demo: result JSON $work/demo.json; mgbd's decisions in $work/mgbd.log"
else
  echo "demo: no GPU on this machine (nvidia-smi finds none), so the demo batch is SIMULATED:"
  echo "      mgbd's own scheduling core places the 16-job mix W1 on a simulated node of two"
  echo "      141 GB H200s, with job profiles measured on real H200s (docs/results.md), against"
  echo "      the baselines. On a GPU node this command runs the real batch instead."
  cmake --build "$build" -j "$(nproc)" --target mgb
  "$build/service/mgb" simulate --trace examples/traces/w1-h200-solo-profiles.json --gpus 2 \
    --workers 8 --policy mgb,memory,cg:3,single --out "$build/demo-simulated.json"
  echo "demo: SIMULATED result JSON in $build/demo-simulated.json (measured on GPUs: docs/results.md)"
fi
