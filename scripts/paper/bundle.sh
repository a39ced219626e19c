#!/usr/bin/env bash
# Gathers what scripts/paper/paper-mix.sh needs on the GPU machine into one folder (carried
# beside .device/bin and .device/lib, which scripts/gpu/pack.sh fills).
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: bundle.sh NVCC_BUILD MGB_BUILD GPUSCHED_OUT DEST

  NVCC_BUILD    build-rodinia.sh's OUT_DIR with plain nvcc (bin/ holds the seven programs)
  MGB_BUILD     build-rodinia.sh's OUT_DIR with mgb-nvcc
  GPUSCHED_OUT  build-gpusched.sh's OUT_DIR (bin/, lib/, workloader.py, workloads/)
  DEST          replaced by: nvcc/ mgb/ gpusched/ tools/ p100_50_16jobs_0.wl
USAGE
}
[[ "${1:-}" == --help || "${1:-}" == -h ]] && { usage; exit 0; }
(($# == 4)) || { usage >&2; exit 2; }
nvcc_build=$1 mgb_build=$2 gpusched=$3 dest=$4
here="$(dirname -- "$(readlink -f -- "$0")")"
programs=(srad_v1 srad_v2 bfs lavaMD backprop dwt2d needle)
for d in "$nvcc_build/bin" "$mgb_build/bin" "$gpusched/bin"; do
  for p in "${programs[@]}"; do
    [[ -x "$d/$p" ]] || { echo "bundle.sh: $d/$p is missing: build it first" >&2; exit 1; }
  done
done
[[ -f "$gpusched/workloads/p100_50_16jobs_0.wl" ]] || { echo "bundle.sh: no $gpusched/workloads/p100_50_16jobs_0.wl" >&2; exit 1; }

rm -rf "$dest"; mkdir -p "$dest"/{nvcc,mgb,tools}
for p in "${programs[@]}"; do
  cp "$nvcc_build/bin/$p" "$dest/nvcc/"; cp "$mgb_build/bin/$p" "$dest/mgb/"
done
cp -r "$gpusched" "$dest/gpusched"
rm -rf "$dest/gpusched/tools"
cp "$gpusched/workloads/p100_50_16jobs_0.wl" "$dest/"
g++ -O2 -static -o "$dest/tools/gen-bfs-graph" "$here/gen-bfs-graph.cpp"
cp "$here/gen-bmp.py" "$here/gen-pgm.py" "$here/in-dir.sh" "$dest/tools/"
echo "bundle: $dest ($(du -sh "$dest" | cut -f1))"
