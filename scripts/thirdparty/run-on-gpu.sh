#!/usr/bin/env bash
# On the GPU machine: the third-party pairs packed by scripts/thirdparty/pack.sh, each run as
# written and rewritten (under an mgbd), outputs and written files compared
# (scripts/gpu/compare-programs.sh; its options pass through, e.g. --busy-first-gpu).
#   scripts/thirdparty/run-on-gpu.sh [COMPARE_OPTIONS...]
# PROGRAM_TIMEOUT (default 90 s) bounds each run. Exit status: the number of programs that differ.
set -uo pipefail
cd "$(dirname "$0")/../.."
[[ "${1:-}" == --help ]] && { sed -n '2,6p' "$0"; exit 0; }
[[ -d .device/tp && -x .device/bin/mgbd ]] ||
  { echo "thirdparty/run-on-gpu: .device/tp or .device/bin/mgbd missing (pack first)" >&2; exit 2; }
export LD_LIBRARY_PATH="$PWD/.device/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PROGRAM_TIMEOUT="${PROGRAM_TIMEOUT:-90}"
exec bash scripts/gpu/compare-programs.sh "$@" .device/tp .device/bin/mgbd
