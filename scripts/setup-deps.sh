#!/usr/bin/env bash
# Installs exactly what mgb's build needs from Debian's packages, skipping what is already there.
# Fails with a clear message when the CUDA toolkit (nvcc 13) is missing: it is not a Debian package.
set -euo pipefail

packages=(
  clang-19 libclang-19-dev libclang-cpp19-dev llvm-19-dev llvm-19-tools   # rewriter + FileCheck, lit
  clang-tools-19                                   # clang-apply-replacements (rewriter tests)
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler  # service, runtime
  libabsl-dev catch2 pkg-config nlohmann-json3-dev                       # flags, JSON, tests
  python3-matplotlib                                                     # scripts/report.py plots
  tmux                                                                   # mgb top's terminal test
  slurmd slurmctld slurm-client munge                                    # the loopback Slurm test
)

nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || nvcc=/usr/local/cuda/bin/nvcc
if [ ! -x "$nvcc" ]; then
  echo "setup-deps: the CUDA toolkit is missing: no nvcc on PATH or at /usr/local/cuda/bin/nvcc." >&2
  echo "setup-deps: install CUDA Toolkit 13 (it is not a Debian package), then run this again." >&2
  exit 1
fi
cuda_major=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
if [ "${cuda_major:-0}" -lt 13 ]; then
  echo "setup-deps: $nvcc is CUDA ${cuda_major:-unknown}; mgb needs CUDA Toolkit 13 or newer." >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#packages[@]} packages already installed"
  exit 0
fi
echo "setup-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup-deps: done"
