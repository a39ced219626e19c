#!/usr/bin/env python3
"""Memory held per task in a paper-mix.sh mgb run, from mgbd's decision log.

usage: scripts/paper/memory-held.py OUT_DIR...

Each OUT_DIR is a paper-mix.sh --out directory whose runs.tar.gz holds one mgb@N run. For each,
prints the tasks mgbd placed, the memory they held in GiB*s (reservation x time from task-placed
to task-ended), and the six largest reservations with how long each was held.
"""
import io
import re
import sys
import tarfile

EVENT = re.compile(r"mgbd: ([0-9.]+) (task-placed|task-ended) session (\S+) task (\d+) "
                   r"gpu (\S+) memory (\d+)")


def mgbd_log(runs_tgz):
    outer = tarfile.open(runs_tgz)
    logs = [m for m in outer.getmembers() if m.name.endswith("logs.tar.gz")]
    if not logs:
        raise ValueError(f"{runs_tgz}: no mgb run (no logs.tar.gz inside)")
    inner = tarfile.open(fileobj=io.BytesIO(outer.extractfile(logs[0]).read()))
    texts = [m for m in inner.getmembers() if m.name.endswith("mgbd.txt")]
    if not texts:
        raise ValueError(f"{runs_tgz}: the mgb run has no mgbd log")
    return inner.extractfile(texts[0]).read().decode()


def held(text):
    placed, rows = {}, []
    for line in text.splitlines():
        m = EVENT.search(line)
        if not m:
            continue
        at, kind, _, task, _, memory = m.groups()
        if kind == "task-placed":
            placed[task] = (float(at), int(memory))
        elif task in placed:
            start, memory = placed.pop(task)
            rows.append((memory, float(at) - start))
    return rows


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    for out in argv:
        try:
            rows = held(mgbd_log(f"{out}/runs.tar.gz"))
        except (OSError, ValueError, tarfile.TarError) as e:
            print(f"memory-held.py: {e}", file=sys.stderr)
            return 2
        total = sum(m * s for m, s in rows) / 2**30
        largest = ", ".join(f"{m / 2**30:.1f} GiB {s:.1f} s"
                            for m, s in sorted(rows, key=lambda r: -r[0])[:6])
        print(f"{out}: {len(rows)} tasks, {total:.0f} GiB*s held; largest: {largest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
