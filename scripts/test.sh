#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds everything, runs every test through CTest.
# Usage: scripts/test.sh [BUILD_DIR]   (default: build)
# MGB_BUILD_TYPE picks the CMake build type (default RelWithDebInfo; CI uses Release, -O3).
# Warnings are errors here (MGB_WERROR=ON), not in a user's plain cmake build.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bash scripts/setup-deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE="${MGB_BUILD_TYPE:-RelWithDebInfo}" -DMGB_WERROR=ON
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
