#!/usr/bin/env python3
"""Writes a Rodinia job mix where memory binds, the way the paper's mixes were made.

The paper's mixes (GPU-Sched's src/runtime/driver/workloads/generator.py, "50" and "33") draw
jobs from a table of Rodinia command lines with known device footprints, for a 16 GiB P100:
every D-th job is a medium one (1-4 GiB), the others large (> 4 GiB), then the list is
shuffled. Here the same draw runs on the same seven programs with their inputs scaled to the
target GPU: medium is (G/16, G/4] GiB and large (G/4, 0.8 G] GiB for a G GiB card, and the
arguments are chosen from each program's footprint formula and kept where no 32-bit size or
index overflows (docs/evaluation.md, "Rodinia mixes where memory binds").

Output: the mix in GPU-Sched's workload format (one command line per job, programs under
.../rodinia_cuda_3.1/cuda, data under .../rodinia_cuda_3.1/data), which
scripts/paper/paper-mix.sh --wl runs under every system, and FILE.json beside it with each
job's predicted device bytes and class.
"""

import argparse
import json
import random
import sys

ROOT = "/gpusched/Benchmarks/rodinia_cuda_3.1"
GIB = 1 << 30


class Program:
    """One Rodinia program: its command line and device footprint as a function of one size."""

    def __init__(self, name, path, argv, footprint, sizes):
        self.name, self.path, self.argv, self.footprint, self.sizes = name, path, argv, footprint, sizes

    def job(self, size):
        return {"program": self.name, "size": size, "bytes": self.footprint(size),
                "command": f"{ROOT}/cuda/{self.path} {self.argv(size)}"}


# Footprints: the bytes every cudaMalloc of the program holds at its peak, read from the sources;
# they reproduce each footprint generator.py lists. sizes: the ladder, every value below the
# program's first 32-bit overflow (docs/evaluation.md, "Rodinia mixes where memory binds", has
# the limits and where each comes from). Left out: backprop (from 2^20 inputs GPU-Sched's grid
# cap makes its kernels skip rows, and it needs 2.25x its device bytes on the host) and bfs
# (10-29 GB graph files, minutes of fscanf per job); srad_v1 stops at 15000, above which its
# text output takes most of a minute, and lavaMD at 150 (26.5 GB): it holds as much host memory
# as device memory, so a node of 2 x 141 GB GPUs and 256 GiB of RAM runs out of RAM first.
PROGRAMS = [
    Program("srad_v1", "srad/srad_v1/srad", lambda n: f"100 0.5 {n} {n}",
            lambda n: 32 * n * n + 16 * n, [12500, 15000]),
    Program("srad_v2", "srad/srad_v2/srad", lambda n: f"{n} {n} 0 127 0 127 0.5 2",
            lambda n: 24 * n * n, [16384, 20480, 24576, 32768, 36864, 40960, 46336]),
    Program("lavaMD", "lavaMD/lavaMD", lambda b: f"-boxes1d {b}",
            lambda b: 7856 * b ** 3, [100, 115, 130, 150]),
    Program("needle", "nw/needle", lambda n: f"{n} 10",
            lambda n: 8 * (n + 1) ** 2, [25600, 28672, 32768, 36864, 40960, 46336]),
    Program("dwt2d", "dwt2d/dwt2d", lambda n: f"{ROOT}/data/dwt2d/rgb.bmp -d {n}x{n} -f -5 -l 3",
            lambda n: 28 * n * n + 3 * -(-n * n // 256) * 256, [13312, 16384, 18432, 20480, 22528]),
]


def ladder(gpu_gib):
    """Every (program, size) job whose footprint is a medium or a large job on this GPU."""
    scale = gpu_gib / 16.0
    medium, large = [], []
    for p in PROGRAMS:
        for size in p.sizes:
            j = p.job(size)
            gib = j["bytes"] / GIB
            if scale < gib <= 4 * scale:
                medium.append(j)
            elif 4 * scale < gib <= 0.8 * gpu_gib:
                large.append(j)
    return medium, large


def draw(medium, large, jobs, every, seed):
    """generator.py's proportional draw: every `every`-th job medium, the rest large, shuffled.
    A job is drawn as a program first, then one of its sizes, so that a program with a long
    ladder (lavaMD's sizes are close together) is not drawn more often than the others."""
    rng = random.Random(seed)
    out = []
    for i in range(jobs):
        kind, pool = ("medium", medium) if (i + 1) % every == 0 else ("large", large)
        names = sorted({j["program"] for j in pool})
        name = names[rng.randrange(len(names))]
        sizes = [j for j in pool if j["program"] == name]
        out.append(dict(sizes[rng.randrange(len(sizes))], kind=kind))
    rng.shuffle(out)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu-gib", type=float, required=True, help="memory of one GPU (80 for an H100, 140 for an H200)")
    ap.add_argument("--jobs", type=int, default=16, help="jobs in the mix (default 16)")
    ap.add_argument("--ratio", default="1:1", help="large:medium, 1:1 or 2:1 (the paper's '50' and '33'; default 1:1)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--out", help="the .wl to write (default: print the mix)")
    ap.add_argument("--gpus", type=int, default=2, help="GPUs of the node, for the summary only (default 2)")
    a = ap.parse_args()
    parts = a.ratio.split(":")
    if len(parts) != 2 or not all(p.isdigit() for p in parts) or int(parts[0]) < 1 or parts[1] != "1":
        sys.exit(f"rodinia-mix.py: --ratio must be L:1 with L >= 1, got '{a.ratio}'")
    large_n = int(parts[0])
    if a.jobs < 1 or a.gpu_gib <= 0:
        sys.exit("rodinia-mix.py: --jobs and --gpu-gib must be positive")
    medium, large = ladder(a.gpu_gib)
    if not medium or not large:
        sys.exit(f"rodinia-mix.py: no {'medium' if not medium else 'large'} job fits a {a.gpu_gib:g} GiB GPU")
    mix = draw(medium, large, a.jobs, large_n + 1, a.seed)
    total = sum(j["bytes"] for j in mix) / GIB
    print(f"rodinia-mix: {a.jobs} jobs ({sum(j['kind'] == 'large' for j in mix)} large), "
          f"{total:.0f} GiB in all on {a.gpus} x {a.gpu_gib:g} GiB "
          f"({total / (a.gpus * a.gpu_gib):.1f}x the node), seed {a.seed}", file=sys.stderr)
    text = "".join(j["command"] + "\n" for j in mix)
    if not a.out:
        sys.stdout.write(text)
        return
    meta = {"gpu_gib": a.gpu_gib, "jobs": a.jobs, "ratio": a.ratio, "seed": a.seed,
            "mix": [{k: j[k] for k in ("program", "size", "bytes", "kind", "command")} for j in mix]}
    try:
        with open(a.out, "w") as f:
            f.write(text)
        with open(a.out + ".json", "w") as f:
            json.dump(meta, f, indent=1)
    except OSError as e:
        sys.exit(f"rodinia-mix.py: cannot write {e.filename}: {e.strerror}")


if __name__ == "__main__":
    main()
