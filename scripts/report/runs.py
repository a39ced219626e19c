"""Reads batch-run JSON files into one shape.

Two writers produce runs: `mgb batch --out` (real runs; tools/batch/report.cpp) and
`mgb simulate --out` (tools/sim/run_report.cpp; "simulated": true, possibly several runs under
"runs"). Their field names differ in places; this module is the one place that knows both.
"""

import json
import os
import signal
from dataclasses import dataclass, field


class InputError(Exception):
    """A results file that cannot be read; the message names the file and the field."""


@dataclass
class Job:
    name: str
    workload: str
    memory_bytes: int
    queued_s: float
    started_s: float  # -1: never started
    ended_s: float    # -1: never ended
    crashed: bool
    oom: bool
    kernels_ms: dict = field(default_factory=dict)  # kernel name -> summed ms
    held_s: float = 0.0  # seconds NVML saw it hold >= 90% of memory_bytes (0: no samples)
    stopped: bool = False  # ended by the runner's SIGTERM when its run was interrupted: no verdict
    waits_ms: tuple = None  # (begin, grow): libmgb's time blocked on mgbd (MGB_WAIT_MS); None: not printed

    @property
    def finished(self):
        return self.ended_s >= 0

    @property
    def succeeded(self):
        return self.finished and not self.crashed and not self.stopped

    @property
    def run_s(self):
        return self.ended_s - self.started_s if self.finished and self.started_s >= 0 else 0.0

    @property
    def kernel_ms(self):
        return sum(self.kernels_ms.values())


@dataclass
class GpuSample:
    t_s: float
    util: list      # per GPU, percent of time a kernel ran (NVML) or SM busy (simulator) x 100
    mem_used: list  # per GPU, bytes (real) or fraction x mem_total (simulated)
    mem_total: list


@dataclass
class Run:
    source: str      # the file it came from
    workload: str    # the job list it ran (its file name without .json)
    policy: str      # mgbd's --policy, as the run's label says
    workers: int
    simulated: bool
    interrupted: bool
    jobs: list
    samples: list

    @property
    def makespan_s(self):
        return max([j.ended_s for j in self.jobs if j.finished], default=0.0)

    @property
    def succeeded(self):
        return sum(j.succeeded for j in self.jobs)

    @property
    def stopped(self):
        """Jobs an interrupted run stopped (SIGTERM) or never started: no verdict."""
        return sum(j.stopped or not j.finished for j in self.jobs) if self.interrupted else 0

    @property
    def crashed(self):
        return sum(j.finished and j.crashed for j in self.jobs)

    @property
    def oom(self):
        return sum(j.oom for j in self.jobs)

    @property
    def throughput_per_hour(self):
        return self.succeeded * 3600.0 / self.makespan_s if self.makespan_s > 0 else 0.0

    @property
    def mean_turnaround_s(self):
        done = [j.ended_s - j.queued_s for j in self.jobs if j.finished]
        return sum(done) / len(done) if done else 0.0

    @property
    def crash_percent(self):
        return 100.0 * self.crashed / len(self.jobs) if self.jobs else 0.0


def _need(doc, key, where):
    if key not in doc:
        raise InputError(f"{where}: missing field '{key}'")
    return doc[key]


def _number(doc, key, where, default=None):
    value = doc.get(key, default)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise InputError(f"{where}.{key}: must be a number, got {value!r}")
    return float(value)


def _stem(path):
    base = os.path.basename(path or "")
    return base[:-5] if base.endswith(".json") else base


def _kernels(j, where):
    """Kernel name -> summed ms, from a job's "kernels" list (absent: none)."""
    kernels = {}
    for i, k in enumerate(j.get("kernels", [])):
        name = _need(k, "name", f"{where}.kernels[{i}]")
        kernels[name] = kernels.get(name, 0.0) + _number(k, "ms", f"{where}.kernels[{i}]")
    return kernels


def _real_job(j, where, interrupted):
    kernels = _kernels(j, where)
    # `mgb batch` stops its running jobs with SIGTERM when interrupted (--timeout, Ctrl-C): such a
    # job neither succeeded nor crashed.
    stopped = interrupted and _number(j, "signal", where, 0) == signal.SIGTERM
    return Job(name=str(_need(j, "name", where)), workload=str(j.get("workload", "")),
               memory_bytes=int(j.get("memory_bytes", 0)),
               queued_s=_number(j, "queued_s", where, 0.0),
               started_s=_number(j, "started_s", where), ended_s=_number(j, "ended_s", where),
               crashed=bool(_need(j, "crashed", where)) and not stopped,
               oom=bool(j.get("oom", False)), stopped=stopped,
               kernels_ms=kernels, held_s=_held_s(j.get("memory_samples", []), _footprint(j), where),
               waits_ms=_waits_ms(j, where))


def _footprint(j):
    """What a job holds at its peak: its declared memory, else the peak NVML saw (a job list
    without sizes, such as paper-mix.sh's)."""
    return int(j.get("memory_bytes", 0)) or int(j.get("peak_memory_bytes", 0))


def _waits_ms(j, where):
    waits = j.get("mgb_wait_ms")
    if waits is None:
        return None
    if not isinstance(waits, dict):
        raise InputError(f"{where}.mgb_wait_ms: must be an object with begin and grow")
    return (_number(waits, "begin", f"{where}.mgb_wait_ms"), _number(waits, "grow", f"{where}.mgb_wait_ms"))


def _held_s(samples, memory_bytes, where):
    """Seconds between consecutive samples that both show >= 90% of the footprint held."""
    if memory_bytes <= 0 or not isinstance(samples, list):
        return 0.0
    points = []
    for i, s in enumerate(samples):
        if not (isinstance(s, list) and len(s) == 2 and all(isinstance(v, (int, float)) for v in s)):
            raise InputError(f"{where}.memory_samples[{i}]: must be [t_s, bytes]")
        points.append(s)
    full = 0.9 * memory_bytes
    return sum(b[0] - a[0] for a, b in zip(points, points[1:]) if a[1] >= full and b[1] >= full)


def _simulated_job(j, where):
    outcome = str(j.get("outcome", "completed"))
    return Job(name=str(_need(j, "name", where)), workload=str(j.get("workload", "")),
               memory_bytes=int(j.get("memory_bytes", 0)),
               queued_s=_number(j, "queued_s", where, 0.0),
               started_s=_number(j, "started_s", where), ended_s=_number(j, "ended_s", where),
               crashed=outcome != "completed",
               oom=bool(j.get("out_of_memory", outcome == "out_of_memory")),
               kernels_ms=_kernels(j, where))


def _real_samples(doc, where):
    out = []
    for i, s in enumerate(doc.get("gpu_samples", [])):
        gpus = s.get("gpus", [])
        out.append(GpuSample(t_s=_number(s, "t_s", f"{where}.gpu_samples[{i}]"),
                             util=[float(g.get("util", 0)) for g in gpus],
                             mem_used=[float(g.get("mem_used", 0)) for g in gpus],
                             mem_total=[float(g.get("mem_total", 0)) for g in gpus]))
    return out


def _simulated_samples(doc):
    # Simulated buckets: fractions per GPU over [start_s, end_s); plotted at the bucket start.
    out = []
    for s in doc.get("utilisation", {}).get("samples", []):
        busy = [100.0 * float(b) for b in s.get("sm_busy", [])]
        used = [float(m) for m in s.get("memory_used", [])]
        out.append(GpuSample(t_s=float(s.get("start_s", 0)), util=busy, mem_used=used,
                             mem_total=[1.0] * len(used)))
    return out


def _one_run(doc, source, where):
    simulated = bool(doc.get("simulated", False))
    jobs_raw = _need(doc, "jobs", where)
    if not isinstance(jobs_raw, list):
        raise InputError(f"{where}.jobs: must be an array")
    interrupted = bool(doc.get("interrupted", False))
    if simulated:
        jobs = [_simulated_job(j, f"{where}.jobs[{i}]") for i, j in enumerate(jobs_raw)]
    else:
        jobs = [_real_job(j, f"{where}.jobs[{i}]", interrupted) for i, j in enumerate(jobs_raw)]
    label = str(doc.get("label", "")).strip()
    # A real run's policy is its label (scripts/gpu/eval.sh passes mgbd's --policy as --label);
    # the simulator records the policy itself.
    policy = str(doc.get("policy") or label or "unlabelled")
    # `mgb batch --workers auto` records its changes; its workers is the most it reached.
    if doc.get("workers_auto"):
        policy += " (auto workers)"
    workload = _stem(doc.get("jobs_file") or doc.get("trace") or doc.get("source") or "")
    if not workload or workload.startswith("("):
        workload = label or _stem(source)
    return Run(source=source, workload=workload, policy=policy,
               workers=int(_number(doc, "workers", where, 0)), simulated=simulated,
               interrupted=interrupted, jobs=jobs,
               samples=_simulated_samples(doc) if simulated else _real_samples(doc, where))


def load_file(path):
    """The runs in one file; [] for JSON that is not a run (job lists, calibration files)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: cannot read JSON: {e}") from e
    return runs_of(doc, path)


def runs_of(doc, source):
    """The runs in one parsed document named `source`; [] for JSON that is not a run."""
    if not isinstance(doc, dict):
        return []
    if isinstance(doc.get("runs"), list):
        return [_one_run(r, source, f"{source}: runs[{i}]") for i, r in enumerate(doc["runs"])]
    if "summary" in doc and "jobs" in doc:
        return [_one_run(doc, source, source)]
    return []


def load_dir(results_dir):
    """Every run in the JSON files under results_dir, in a stable order."""
    if not os.path.isdir(results_dir):
        raise InputError(f"{results_dir}: not a directory")
    runs = []
    for root, dirs, files in os.walk(results_dir):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".json"):
                runs.extend(load_file(os.path.join(root, name)))
    return runs
