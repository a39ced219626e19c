"""docs/results.md's Rodinia mixes where memory binds (issue 34): every system of a mix, per
device call of scripts/paper/paper-mix.sh, beside single-assignment, GPU-Sched and the bound.

A call's folder holds what paper-mix.sh leaves in --out: paper-mix.log (GPU-Sched's lines),
runs.tar.gz (each eval.sh run's `mgb batch` JSON) and mix.wl.json (the mix, written by
scripts/paper/rodinia-mix.py: each job's program, size and predicted bytes, in job order).

Single-assignment often cannot finish inside one device call (a 16-job mix of host-bound jobs
needs about 300 s). So its makespan is worked out from solo times: a job that finished in a
single-assignment run of the mix (any call) ran alone on its GPU, and its run time is its solo
time; a job that did not is estimated from its program's measured seconds per predicted byte
(the median over every finished single-assignment job of that program in the mix's calls, or,
for a program none of them finished alone, in other mixes' calls on the same GPU model: the same
programs and builds; the text names such a program). The makespan is then
the first-come-first-served list schedule of those times on the node's GPUs, which is what
`mgb batch --workers GPUS` under `--policy single` does. The table says how many solo times were
estimated; a complete single-assignment run, where there is one, is shown as measured."""

import io
import json
import os
import re
import statistics
import tarfile
from dataclasses import dataclass, field

import metrics
import paper_mix
import runs as run_files

AIM_VS_SINGLE = 2.5    # issue 34: mgb >= 2.5x single-assignment
AIM_VS_GPUSCHED = 1.3  # and >= 1.3x GPU-Sched
AIM_OVER_BOUND = 1.15  # within 15% of the bound

class InputError(Exception):
    """A call folder that cannot be read; the message names the file."""


@dataclass
class SystemRun:
    tag: str           # paper-mix.sh's tag: mgb-w8, single-w2, gpusched-w8-2 ...
    system: str        # mgb, single, cg:2, memory, schedgpu, gpusched
    workers: int
    makespan_s: float  # for an interrupted run: when it was stopped
    done: int
    crashed: int       # ended on their own without success (lost)
    stopped: int       # running or waiting when the run was stopped: no verdict
    run: object = None  # runs.Run for eval.sh's runs; None for GPU-Sched

    @property
    def complete(self):
        return self.stopped == 0

    @property
    def shown(self):
        """The system as the table names it: paper-mix.sh's mgb-lpt runs (longest first) apart."""
        return f"{self.system} (longest first)" if self.tag.startswith("mgb-lpt-") else self.system


@dataclass
class Call:
    source: str
    device: str
    mix: dict          # mix.wl.json
    systems: list = field(default_factory=list)
    gpus: int = 2      # the node's GPUs: machine.txt's lines, else the NVML samples' width
    note: str = ""     # note.txt beside the results: what the table must say about this call
    superseded: str = ""  # superseded.txt: why its mgb runs no longer speak for the build (aims)

    @property
    def mix_name(self):
        """The mix and, where the node is not the 2-GPU one the mixes were drawn for, its GPUs:
        the same mix on 4 GPUs is another experiment (its own single-assignment and bound)."""
        m = self.mix
        name = f"rodinia-{m['gpu_gib']:g}-{m['jobs']}-{m['ratio'].replace(':', 'to')}"
        return name if self.gpus == 2 else f"{name} on {self.gpus} GPUs"


def _eval_runs(folder):
    """eval.sh's runs from runs.tar.gz: (paper-mix.sh's tag, runs.Run)."""
    path = os.path.join(folder, "runs.tar.gz")
    if not os.path.exists(path):
        return []
    out = []
    try:
        with tarfile.open(path) as tar:
            for member in sorted(tar.getmembers(), key=lambda m: m.name):
                parts = member.name.split("/")
                if not (member.isfile() and member.name.endswith(".json") and "mgb-runs" in parts):
                    continue
                doc = json.load(io.TextIOWrapper(tar.extractfile(member)))
                tag = parts[parts.index("mgb-runs") + 1]
                for r in run_files.runs_of(doc, f"{path}:{member.name}"):
                    out.append((tag, r))
    except (OSError, tarfile.TarError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: cannot read ({e})") from e
    return out


def _system_of(run):
    return SystemRun(tag="", system=run.policy, workers=run.workers, makespan_s=run.makespan_s,
                     done=run.succeeded, crashed=run.crashed, stopped=run.stopped, run=run)


def load_call(folder):
    mix_path = os.path.join(folder, "mix.wl.json")
    try:
        with open(mix_path) as f:
            mix = json.load(f)
        for key in ("gpu_gib", "jobs", "ratio", "mix"):
            if key not in mix:
                raise InputError(f"{mix_path}: missing field '{key}'")
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{mix_path}: cannot read ({e})") from e
    log = os.path.join(folder, "paper-mix.log")
    lines = []
    if os.path.exists(log):
        with open(log, errors="replace") as f:
            lines = f.read().splitlines()
    call = Call(source=folder, device=paper_mix.device_of(log, lines), mix=mix)
    note = os.path.join(folder, "note.txt")
    if os.path.exists(note):
        with open(note) as f:
            call.note = " ".join(f.read().split())
    superseded = os.path.join(folder, "superseded.txt")
    if os.path.exists(superseded):
        with open(superseded) as f:
            call.superseded = " ".join(f.read().split()) or "superseded"
    for tag, run in _eval_runs(folder):
        s = _system_of(run)
        s.tag = tag
        call.systems.append(s)
    for line in lines:
        m = paper_mix.LINE_PATTERNS["gpusched"].match(line)
        if not m:
            continue
        total, exit_code = m.group(4), int(m.group(6))
        ok = exit_code == 0 and total != "none"
        lost = int(m.group(5))
        n = len(mix["mix"])
        call.systems.append(SystemRun(
            tag=m.group(1), system="gpusched", workers=int(m.group(2)),
            makespan_s=float(total) if ok else float(m.group(3)),
            done=n - lost if ok else 0, crashed=lost, stopped=0 if ok else n - lost))
    if not call.systems:
        raise InputError(f"{folder}: no runs (runs.tar.gz and paper-mix.log hold none)")
    call.gpus = _gpus_of(folder, call.systems)
    return call


def find_calls(path):
    """A call folder itself, or every call folder (one holding mix.wl.json) under a folder."""
    if os.path.exists(os.path.join(path, "mix.wl.json")):
        return [path]
    if not os.path.isdir(path):
        raise InputError(f"{path}: not a folder")
    found = sorted(d for d, _, names in os.walk(path) if "mix.wl.json" in names)
    if not found:
        raise InputError(f"{path}: no paper-mix.sh call folder (with mix.wl.json) under it")
    return found


def _job_index(name):
    """`mgb batch` names a job NN-program, NN its line in the list (the mix's order)."""
    m = re.match(r"(\d+)-", name)
    return int(m.group(1)) if m else None


@dataclass
class SoloTimes:
    seconds: list     # per job of the mix, in order
    held: list        # seconds it held its memory (NVML samples; estimated like seconds)
    measured: int     # how many came from a finished single-assignment job
    rates: dict       # program -> seconds per predicted GiB, where any job of it was estimated
    borrowed: set     # programs whose rate came from other mixes' calls on the same GPU


def _finished_alone(calls):
    """(mix, job index, run s, held s) of every job a single-assignment run of these calls finished."""
    for c in calls:
        jobs = c.mix["mix"]
        for s in c.systems:
            if s.system != metrics.SINGLE or s.run is None:
                continue
            for j in s.run.jobs:
                i = _job_index(j.name)
                if j.succeeded and i is not None and i < len(jobs):
                    # Held: what NVML saw it hold (0 without samples: a bound never guesses up).
                    yield jobs, i, j.run_s, j.held_s


def _rates_per_byte(calls):
    """Program -> [(seconds per predicted byte, held seconds per byte)] over the finished jobs."""
    rates = {}
    for jobs, i, run_s, held_s in _finished_alone(calls):
        rates.setdefault(jobs[i]["program"], []).append((run_s / jobs[i]["bytes"], held_s / jobs[i]["bytes"]))
    return rates


def solo_times(mix, calls, others=()):
    """Each job's solo time in the mix: measured where a single-assignment run finished it,
    else its program's median seconds per predicted byte times its bytes, from this mix's calls
    or, for a program none of them finished alone, from `others` (other mixes' calls on the same
    GPU: the same programs, built the same way); None when a program never finished alone."""
    jobs = mix["mix"]
    seen = {}
    for _, i, run_s, held_s in _finished_alone(calls):
        seen.setdefault(i, []).append((run_s, held_s))
    per_byte, elsewhere = _rates_per_byte(calls), _rates_per_byte(others)
    seconds, held, rates, borrowed = [], [], {}, set()
    for i, j in enumerate(jobs):
        if i in seen:
            seconds.append(statistics.median(t for t, _ in seen[i]))
            held.append(statistics.median(h for _, h in seen[i]))
            continue
        rate = per_byte.get(j["program"])
        if not rate:
            rate = elsewhere.get(j["program"])
            if not rate:
                return None
            borrowed.add(j["program"])
        s, h = statistics.median(r for r, _ in rate), statistics.median(r for _, r in rate)
        rates[j["program"]] = s * metrics.GIB
        seconds.append(s * j["bytes"])
        held.append(h * j["bytes"])
    return SoloTimes(seconds, held, len(seen), rates, borrowed)


def list_schedule(seconds, workers):
    """First come, first served on `workers` machines: each job to the earliest free one."""
    free = [0.0] * workers
    for s in seconds:
        k = free.index(min(free))
        free[k] += s
    return max(free)


def bound(mix, solo, node):
    jobs = [run_files.Job(name=str(i), workload="", memory_bytes=j["bytes"], queued_s=0.0,
                          started_s=0.0, ended_s=solo.seconds[i], crashed=False, oom=False)
            for i, j in enumerate(mix["mix"])]
    times = {str(i): (solo.seconds[i], 0.0, solo.held[i]) for i in range(len(jobs))}
    return metrics.makespan_lower_bound(jobs, times, node)


def _gpus_of(folder, systems):
    """machine.txt (paper-mix.sh: one nvidia-smi line per GPU), else the widest NVML sample of
    the call's runs, else 2 (the node the mixes were drawn for)."""
    machine = os.path.join(folder, "machine.txt")
    if os.path.exists(machine):
        with open(machine, errors="replace") as f:
            count = len(re.findall(r"^NVIDIA [^,\n]*, \d+ MiB", f.read(), re.MULTILINE))
        if count:
            return count
    counts = [len(s.run.samples[0].util) for s in systems if s.run and s.run.samples]
    return max(counts) if counts else 2


def _shown(folder):
    """A call folder as the table names it: relative to the working directory when inside it."""
    rel = os.path.relpath(folder)
    return folder if rel.startswith("..") else rel


def _fmt(x, spec):
    return "-" if x is None else spec.format(x)


def _session_of(call):
    """The folder that holds a call's folder (docs/measurements/rodinia-mix-session25 for .../call3)."""
    return os.path.dirname(os.path.normpath(call.source))


def _mix_lines(name, calls, context_bytes, others=()):
    mix = calls[0].mix
    gpus = calls[0].gpus
    node = metrics.Node(gpus=gpus, memory_bytes=mix["gpu_gib"] * metrics.GIB, context_bytes=context_bytes)
    total = sum(j["bytes"] for j in mix["mix"]) / metrics.GIB
    lines = [f"#### {name}: {len(mix['mix'])} jobs, {total:.0f} GiB predicted "
             f"({total / (gpus * mix['gpu_gib']):.1f}x {gpus} x {mix['gpu_gib']:g} GiB), "
             f"large:small {mix['ratio']}, seed {mix.get('seed', '-')}", ""]
    solo = solo_times(mix, calls, others)
    single_full = [s for c in calls for s in c.systems if s.system == metrics.SINGLE and s.complete]
    if single_full:
        sa, sa_how = min(s.makespan_s for s in single_full), "measured"
    elif solo:
        sa = list_schedule(solo.seconds, gpus)
        est = len(mix["mix"]) - solo.measured
        sa_how = (f"worked out from solo times, {solo.measured} measured and {est} estimated ("
                  + ", ".join(f"{p} {r:.2f} s/GiB" + (" from other mixes' single-assignment runs on the "
                                                        "same GPU" if p in solo.borrowed else "")
                              for p, r in sorted(solo.rates.items())) + ")")
    else:
        sa, sa_how = None, "no solo time for every program of the mix: one never finished alone in any call"
    b = bound(mix, solo, node) if solo else None
    lines += [f"Single-assignment makespan: **{_fmt(sa, '{:.1f} s')}** ({sa_how}). "
              f"Bound: **{_fmt(b[0] if b else None, '{:.1f} s')}**"
              + (f" ({b[1]}; " + ", ".join(f"{k} {v:.1f} s" for k, v in b[2].items()) + ")" if b else "")
              + (" from the same solo times" if solo and solo.measured < len(mix["mix"]) else "") + ".", "",
              "| call | GPU | system | workers | makespan s | done / lost / stopped | x single | "
              "x GPU-Sched (same call) | over bound |",
              "|---|---|---|---|---|---|---|---|---|"]
    flags = {"single": [], "gpusched": [], "bound": [], "lost": 0}
    # The aims judge the build as it is: the mix's latest measurement session (earlier sessions'
    # builds and worker counts stay in the table, not in the aims).
    latest = max((_session_of(c) for c in calls if not c.superseded), key=_session_number,
                 default=None)
    for c in calls:
        # Against GPU-Sched only where it ran every job: a run that lost jobs ends sooner for it.
        gs = [s for s in c.systems if s.system == "gpusched" and s.complete and s.crashed == 0]
        gs_best = min((s.makespan_s for s in gs), default=None)
        # A GPU-Sched run its time limit stopped with none lost took longer than its limit: a
        # ratio against it is a lower bound ("> 2.44x").
        gs_floor = max((s.makespan_s for s in c.systems if s.system == "gpusched" and not s.complete
                        and s.crashed == 0), default=None)
        for s in c.systems:
            makespan = f"{s.makespan_s:.1f}" if s.complete else f"> {s.makespan_s:.1f} (stopped)"
            # A run that lost jobs ended sooner for it: no ratio, no distance to the bound.
            whole = s.complete and s.crashed == 0
            x_sa = sa / s.makespan_s if sa and whole else None
            x_gs, gs_is_floor = None, False
            if whole and s.system != "gpusched":
                if gs_best:
                    x_gs = gs_best / s.makespan_s
                elif gs_floor:
                    x_gs, gs_is_floor = gs_floor / s.makespan_s, True
            over = s.makespan_s / b[0] - 1 if b and whole else None
            # A GPU-Sched run stopped by its limit: its log does not say how many were done.
            counts = (f"{s.done} / {s.crashed} / {s.stopped}" if s.complete or s.run is not None
                      else f"- / {s.crashed} / -")
            remarks = [c.note] + ([f"superseded, not in the aims: {c.superseded}"] if c.superseded else [])
            remarks = "; ".join(r for r in remarks if r)
            where = _shown(c.source) + (f" ({remarks})" if remarks else "")
            lines.append(f"| {where} | {c.device} | {s.shown} | {s.workers} | {makespan} | "
                         f"{counts} | {_fmt(x_sa, '{:.2f}x')} | "
                         f"{_fmt(x_gs, '> {:.2f}x' if gs_is_floor else '{:.2f}x')} | "
                         f"{_fmt(over, '{:+.0%}')} |")
            # Every mgb run counts, "mgb (auto workers)" too.
            if s.system.split(" ")[0] == "mgb" and _session_of(c) == latest and not c.superseded:
                flags["lost"] += s.crashed
                if x_sa is not None:
                    flags["single"].append(x_sa)
                if x_gs is not None:
                    flags["gpusched"].append((x_gs, gs_is_floor))
                if over is not None:
                    flags["bound"].append(over)
    return lines + [""], flags


def _session_number(folder):
    """rodinia-mix-session25 -> 25, so that session 9 sorts before session 10; 0 without one."""
    m = re.search(r"(\d+)$", os.path.basename(folder))
    return (int(m.group(1)) if m else 0, folder)


def section(paths, context_bytes):
    calls = [load_call(folder) for path in paths for folder in find_calls(path)]
    if not calls:
        return []
    by_mix = {}
    for c in calls:
        by_mix.setdefault(c.mix_name, []).append(c)
    lines = ["## Rodinia mixes where memory binds (issue 34)", "",
             "The paper's seven Rodinia programs with inputs scaled so that jobs need 5-60 GB, mixed "
             "the way the paper's mixes were (scripts/paper/rodinia-mix.py: large:small ratio, fixed "
             "seed, sized for a GPU of `--gpu-gib`), run by scripts/paper/paper-mix.sh in one device "
             "call per row group: GPU-Sched (the paper's prototype, its own build and scheduler), "
             "and mgbd's policies over the mgb-nvcc build (`single` is single-assignment, `cg:K` "
             "core-to-GPU, `memory` memory only). Lost: ended without success on their own; "
             "stopped: cut by the run's time limit. x single and x GPU-Sched divide their makespan "
             "by the row's (above 1: the row is faster); x GPU-Sched only against a GPU-Sched run "
             "of the same call that lost no job (\"> \": a lower bound, against a GPU-Sched run its "
             "time limit stopped). Commands are in docs/evaluation.md.", ""]
    aims = {"single": [], "gpusched": [], "bound": [], "lost": 0}
    for name, group in sorted(by_mix.items()):
        devices = {c.device for c in group}
        others = [c for c in calls if c.mix_name != name and c.device in devices]
        text, flags = _mix_lines(name, group, context_bytes, others)
        lines += text
        for k in ("single", "gpusched", "bound"):
            aims[k] += flags[k]
        aims["lost"] += flags["lost"]

    def worst(values, fmt):
        return fmt.format(min(values) if values else 0) if values else "not measured"

    # (ratio, lower bound?) pairs: the smallest, "> " when it is a lower bound.
    low = min(aims["gpusched"], default=None)
    worst_vs_gpusched = ("not measured" if low is None
                         else ("> " if low[1] else "") + f"{low[0]:.2f}x")

    lines += ["| aim (issue 34) | target | measured (mgb's worst run in each mix's latest session) |",
              "|---|---|---|",
              f"| mgb vs single-assignment | >= {AIM_VS_SINGLE}x | {worst(aims['single'], '{:.2f}x')} |",
              f"| mgb vs GPU-Sched, same call | >= {AIM_VS_GPUSCHED}x | {worst_vs_gpusched} |",
              f"| mgb over the bound | <= +{AIM_OVER_BOUND - 1:.0%} | "
              f"{'{:+.0%}'.format(max(aims['bound'])) if aims['bound'] else 'not measured'} |",
              f"| jobs lost under mgb | 0 | {aims['lost']} |", ""]
    return lines
