"""The paper's mix side by side with GPU-Sched: reads scripts/paper/paper-mix.sh's logs, one file
per device call, and writes the comparison table of docs/results.md. No figures are made up: a
run the log does not name is shown as "-"."""

import os
import re
import statistics
from dataclasses import dataclass, field

AIM_OVER_BOUND = 1.05   # issue 19: mgb's makespan at most 1.05x the bound
AIM_VS_GPUSCHED = 0.15  # and at least 15% faster than GPU-Sched in the same call

_STAMP = r"^\[\s*\d+s\] "
LINE_PATTERNS = {  # kind -> regex over one of paper-mix.sh's log lines (load_call reads the groups)
    "bound": re.compile(_STAMP + r"(bound(?:-\d+)?): srad_v1 \S+ alone, as written: ([\d.]+) s, exit (\d+)"),
    "gpusched": re.compile(_STAMP + r"(gpusched-w(\d+)(?:-\d+)?): wall ([\d.]+) s, workloader's "
                           r"TOTAL_EXPERIMENT_TIME (\S+), jobs lost (\d+), exit (\d+)"),
    "mgb": re.compile(_STAMP + r"((mgb(?:-lpt)?)-w(\d+)(?:-\d+)?): makespan_s=([\d.]+) lost=(\d+)"),
    "blind": re.compile(_STAMP + r"(blind-w(\d+)(?:-\d+)?): summary .* makespan=([\d.]+)s .* "
                        r"crashed=(\d+) .* not_run=(\d+)"),
}


class InputError(Exception):
    """A log that is not paper-mix.sh's; the message names the file."""


@dataclass
class MixRun:
    tag: str       # as logged: bound, mgb-w16, gpusched-w10-2 ...
    system: str    # bound, mgb, mgb-lpt, gpusched, blind
    workers: int
    makespan_s: float
    lost: int
    ok: bool = True  # False: a harness failure (no result), not a makespan


@dataclass
class MixCall:
    source: str
    device: str
    runs: list = field(default_factory=list)

    def of(self, system, workers=None):
        return [r for r in self.runs if r.system == system and r.ok
                and (workers is None or r.workers == workers)]

    def rounds(self):
        """The call cut before each bound run after the first: each part is measured against
        its own bound run, since a machine's speed drifts within a call (session 14: the bound
        took 38.8 s, then 49.0 s four runs later)."""
        parts, current = [], []
        for r in self.runs:
            if r.system == "bound" and any(o.system == "bound" for o in current):
                parts.append(current)
                current = []
            current.append(r)
        parts.append(current)
        if len(parts) == 1:
            return [self]
        return [MixCall(f"{self.source}, round {i}", self.device, p) for i, p in enumerate(parts, 1)]

    @property
    def bound_s(self):
        """The call's bound: the fastest run of the longest job alone (the strictest figure)."""
        runs = self.of("bound")
        return min(r.makespan_s for r in runs) if runs else None


def device_of(path, lines):
    """The GPU's name, from machine.txt beside the log or the log's own machine line."""
    texts = lines[:1]
    beside = os.path.join(os.path.dirname(path), "machine.txt")
    if os.path.exists(beside):
        with open(beside) as f:
            texts.insert(0, f.read())
    for text in texts:
        m = re.search(r"NVIDIA [A-Z]\d+[^,]*", text)
        if m:
            return m.group(0).strip()
    return "-"


def _is_log(path):
    """paper-mix.sh's log begins with its machine line."""
    try:
        with open(path, errors="replace") as f:
            return re.match(_STAMP + "machine: ", f.readline()) is not None
    except OSError:
        return False


def find_logs(path):
    """A log itself, or every paper-mix.sh log under a folder (other files there skipped)."""
    if not os.path.isdir(path):
        return [path]
    logs = sorted(os.path.join(d, n) for d, _, names in os.walk(path) for n in names
                  if n.endswith(".log") and _is_log(os.path.join(d, n)))
    if not logs:
        raise InputError(f"{path}: no scripts/paper/paper-mix.sh log in this folder")
    return logs


def load_call(path):
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})")
    call = MixCall(source=path, device=device_of(path, lines))
    for line in lines:
        m = LINE_PATTERNS["bound"].match(line)
        if m:
            call.runs.append(MixRun(m.group(1), "bound", 0, float(m.group(2)), 0, m.group(3) == "0"))
            continue
        m = LINE_PATTERNS["gpusched"].match(line)
        if m:
            total = m.group(4)
            ok = m.group(6) == "0" and total != "none"
            makespan = float(total) if ok else float(m.group(3))
            call.runs.append(MixRun(m.group(1), "gpusched", int(m.group(2)), makespan, int(m.group(5)), ok))
            continue
        m = LINE_PATTERNS["mgb"].match(line)
        if m:
            call.runs.append(MixRun(m.group(1), m.group(2), int(m.group(3)), float(m.group(4)), int(m.group(5))))
            continue
        m = LINE_PATTERNS["blind"].match(line)
        if m:
            call.runs.append(MixRun(m.group(1), "blind", int(m.group(2)), float(m.group(3)),
                                    int(m.group(4)) + int(m.group(5))))
    if not call.runs:
        raise InputError(f"{path}: no paper-mix.sh run lines (is it scripts/paper/paper-mix.sh's log?)")
    return call


def _list(runs):
    return ", ".join(f"{r.makespan_s:.1f}" for r in runs) or "-"


def _by_workers(call, system):
    out = []
    for n in sorted({r.workers for r in call.of(system)}):
        out.append(f"@{n}: {_list(call.of(system, n))}")
    return "; ".join(out) or "-"


def _median(runs):
    return statistics.median(r.makespan_s for r in runs) if runs else None


def comparisons(call):
    """(mgb's worker count, its median, median / bound or None, {GPU-Sched workers: (its median,
    mgb's gain, the bound's gain or None)}) for mgb's runs at its most-run worker count; None
    when the call has no mgb run."""
    mgb = call.of("mgb")
    if not mgb:
        return None
    workers = max({r.workers for r in mgb}, key=lambda n: (len(call.of("mgb", n)), n))
    median = _median(call.of("mgb", workers))
    bound = call.bound_s
    over = median / bound if bound else None
    versus = {}
    for n in sorted({r.workers for r in call.of("gpusched")}):
        theirs = _median(call.of("gpusched", n))
        ceiling = 1.0 - bound / theirs if bound else None  # what a perfect scheduler would gain
        versus[n] = (theirs, 1.0 - median / theirs, ceiling)
    return workers, median, over, versus


def _gain(gain):
    return f"{100 * gain:.0f}% faster" if gain >= 0 else f"{-100 * gain:.0f}% slower"


def section(calls):
    lines = ["| call (round) | GPU | bound s (runs) | mgb s (runs) | GPU-Sched s (runs) | no scheduler s | "
             "jobs lost: mgb / GPU-Sched / none | mgb median / bound | mgb median vs GPU-Sched median |",
             "|---|---|---|---|---|---|---|---|---|"]
    met_bound, met_gain, reachable, lost = [], [], [], 0
    for c in (part for call in calls for part in call.rounds()):
        lost_mgb = sum(r.lost for r in c.of("mgb") + c.of("mgb-lpt"))
        lost_gs = sum(r.lost for r in c.of("gpusched"))
        lost_blind = sum(r.lost for r in c.of("blind"))
        failed = [r.tag for r in c.runs if not r.ok]
        cmp = comparisons(c)
        over = versus = "-"
        if cmp:
            workers, median, ratio, vs = cmp
            if ratio is not None:
                over = f"{median:.1f} / {c.bound_s:.1f} = {ratio:.2f}x"
                met_bound.append(ratio <= AIM_OVER_BOUND)
            versus = "; ".join(
                f"@{n}: {theirs:.1f} s, mgb@{workers} {_gain(gain)}"
                + (f" (the bound: {100 * ceiling:.1f}% faster)" if ceiling is not None else "")
                for n, (theirs, gain, ceiling) in vs.items()) or "-"
            met_gain += [gain >= AIM_VS_GPUSCHED for _, gain, _ in vs.values()]
            reachable += [ceiling >= AIM_VS_GPUSCHED for _, _, ceiling in vs.values() if ceiling is not None]
        lost += lost_mgb
        note = f" (harness failures, no result: {', '.join(failed)})" if failed else ""
        lines.append(f"| {c.source}{note} | {c.device} | {_list(c.of('bound'))} | "
                     f"{_by_workers(c, 'mgb')}"
                     f"{'; longest-first ' + _by_workers(c, 'mgb-lpt') if c.of('mgb-lpt') else ''} | "
                     f"{_by_workers(c, 'gpusched')} | {_by_workers(c, 'blind')} | "
                     f"{lost_mgb} / {lost_gs if c.of('gpusched') else '-'} / "
                     f"{lost_blind if c.of('blind') else '-'} | {over} | {versus} |")

    def verdict(flags):
        if not flags:
            return "not measured"
        return f"met in {sum(flags)} of {len(flags)}" + (" (**met**)" if all(flags) else " (**not met**)")

    lines += ["", "| aim (issue 19) | target | measured |", "|---|---|---|",
              f"| mgb makespan over the bound (the round's fastest bound run) | <= {AIM_OVER_BOUND:.2f}x | "
              f"{verdict(met_bound)} rounds |",
              f"| mgb faster than GPU-Sched, same round (each worker count) | >= {100 * AIM_VS_GPUSCHED:.0f}% | "
              f"{verdict(met_gain)} comparisons |",
              f"| jobs lost under mgb | 0 | {lost} |", "",
              f"Where a round has its own bound run, even a perfect scheduler (the mix done in the "
              f"bound's time) would be {100 * AIM_VS_GPUSCHED:.0f}% faster than GPU-Sched in "
              f"{sum(reachable)} of {len(reachable)} comparisons: the aim asks for a makespan below "
              f"the longest job's own solo time in the others."]
    return lines
