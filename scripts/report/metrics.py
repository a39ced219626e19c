"""Figures derived from runs: comparisons with single-assignment, the makespan lower bound,
kernel slowdown and the worker-count rule. No I/O here."""

import math
from dataclasses import dataclass

SINGLE = "single"
GIB = float(1 << 30)


@dataclass
class Node:
    gpus: int
    memory_bytes: float   # per GPU, what the bound may use (larger keeps it a bound)
    context_bytes: float  # CUDA context per process per GPU


def is_cg(policy):
    return policy.startswith("cg:")


def baseline(runs):
    """The single-assignment run among runs of one workload (the fewest workers if several)."""
    singles = sorted((r for r in runs if r.policy == SINGLE), key=lambda r: r.workers)
    return singles[0] if singles else None


def solo_times(single_run):
    """Per job name: (wall seconds, kernel seconds, memory-held seconds) alone on a GPU, from the
    single-assignment run.

    Under `single` a session owns its GPU from its first task to its end, so each job there ran
    alone on its GPU: its run time is its solo time (the other GPU's job shares only the host).
    Memory-held: how long its NVML samples show it holding >= 90% of its footprint (whole
    sampling intervals only, so never more than it held); its kernel time where that is longer
    or no samples were taken (its kernels need its memory)."""
    return {j.name: (j.run_s, j.kernel_ms / 1000.0, max(j.kernel_ms / 1000.0, j.held_s))
            for j in single_run.jobs if j.succeeded}


def makespan_lower_bound(jobs, solo, node):
    """(bound seconds, term name, all terms) for running `jobs` to completion on `node`.

    Assumes (a) co-running never makes a job or a kernel faster than alone, and (b) a job holds
    its whole footprint while its kernels run (the six workloads allocate, iterate, check, free).
      longest_job: no job ends before its arrival plus its solo wall time.
      memory_time: job j holds (m_j + context) bytes for at least H_j, its memory-held time alone
                   (solo_times; its kernel time K_j at least); the node offers gpus x memory bytes
                   at any instant.
      big_jobs:    two jobs above half a GPU's memory never share a GPU, so at most `gpus` of them
                   hold memory at once: their memory-held times, summed, are spread over `gpus`
                   at best.
      packing:     one GPU only: the best non-preemptive packing of the jobs' memory spans
                   (one_gpu_packing), which memory_time relaxes.
    Jobs without a solo time (failed alone too) are left out, which only lowers the bound."""
    known = [j for j in jobs if j.name in solo]
    if not known:
        return None
    terms = {
        "longest_job": max(j.queued_s + solo[j.name][0] for j in known),
        "memory_time": sum((j.memory_bytes + node.context_bytes) * solo[j.name][2] for j in known)
        / (node.gpus * node.memory_bytes),
        "big_jobs": sum(solo[j.name][2] for j in known
                        if j.memory_bytes + node.context_bytes > node.memory_bytes / 2) / node.gpus,
    }
    spans = [(j.memory_bytes + node.context_bytes, solo[j.name][2], j.queued_s) for j in known]
    packing = one_gpu_packing(spans, node)
    if packing is not None:
        terms["packing"] = packing
    name = max(terms, key=terms.get)
    return terms[name], name, terms


PACKING_MAX_JOBS = 10   # exhaustive search above this would take too long in a report
PACKING_MAX_STEPS = 2_000_000


def _earliest_start(placed, bytes_, length, release, capacity):
    """The earliest time >= release at which `bytes_` fit beside `placed` for `length` seconds.
    Usage only falls when a placed span ends, so the candidates are release and those ends."""
    for t in sorted({release} | {e for _, e, _ in placed if e > release}):
        points = [t] + [s for s, _, _ in placed if t < s < t + length]
        if all(sum(b for s, e, b in placed if s <= p < e) + bytes_ <= capacity for p in points):
            return t
    return None  # larger than the GPU: no schedule


def one_gpu_packing(spans, node):
    """The shortest time in which one GPU can hold every job's memory span, or None.

    spans: (bytes, held seconds, release) per job. A further assumption beside
    makespan_lower_bound's: each job holds its memory in one unbroken span (the workloads
    allocate at their start and free at their end). Then every schedule's memory spans form a
    non-preemptive packing on one resource, and some optimal packing is the serial schedule of
    some job order (each job at its earliest fit): the search tries every order, pruning an
    order once it cannot beat the best found. Only for one GPU and at most PACKING_MAX_JOBS jobs;
    None when that, or the step budget, rules it out (the term is then left out, which only
    lowers the bound)."""
    if node.gpus != 1 or not spans or len(spans) > PACKING_MAX_JOBS:
        return None
    if any(b > node.memory_bytes for b, _, _ in spans):
        return None
    floor = max(r + h for _, h, r in spans)  # no packing ends before its longest span
    best = [float("inf")]
    steps = [0]

    def search(placed, left, end):
        if not left:
            best[0] = min(best[0], end)
            return
        tried = set()
        for i in left:
            if spans[i] in tried:
                continue  # an identical job placed here gives the same packings
            tried.add(spans[i])
            steps[0] += 1
            if steps[0] > PACKING_MAX_STEPS:
                return
            b, h, r = spans[i]
            t = _earliest_start(placed, b, h, r, node.memory_bytes)
            if t + h >= best[0]:
                continue
            search(placed + [(t, t + h, b)], [k for k in left if k != i], max(end, t + h))
            if best[0] <= floor:
                return

    search([], list(range(len(spans))), 0.0)
    if steps[0] > PACKING_MAX_STEPS or best[0] == float("inf"):
        return None
    return best[0]


def kernel_slowdown(run, single_run):
    """Per kernel name and overall: percent more kernel time than under single-assignment, over
    the jobs that succeeded in both runs (same job names = same arguments). None when unmatched."""
    base = {j.name: j for j in single_run.jobs if j.succeeded}
    per_kernel, total_run, total_base = {}, 0.0, 0.0
    for j in run.jobs:
        b = base.get(j.name)
        if not j.succeeded or b is None:
            continue
        for kernel, ms in j.kernels_ms.items():
            if kernel in b.kernels_ms and b.kernels_ms[kernel] > 0:
                acc = per_kernel.setdefault(kernel, [0.0, 0.0])
                acc[0] += ms
                acc[1] += b.kernels_ms[kernel]
                total_run += ms
                total_base += b.kernels_ms[kernel]
    if total_base <= 0:
        return None, {}
    kernels = {k: 100.0 * (r / s - 1.0) for k, (r, s) in per_kernel.items()}
    return 100.0 * (total_run / total_base - 1.0), kernels


def mean_util(run):
    """Mean utilisation percent per GPU over the run's samples up to its makespan."""
    samples = [s for s in run.samples if s.t_s <= run.makespan_s] or run.samples
    if not samples:
        return []
    n = max(len(s.util) for s in samples)
    return [sum(s.util[g] for s in samples if g < len(s.util)) / len(samples) for g in range(n)]


def node_from_samples(runs, gpus, memory_gib, context_mib):
    """The node: flags win; otherwise GPU count and memory from the NVML samples of real runs."""
    totals = [s.mem_total for r in runs if not r.simulated for s in r.samples if s.mem_total]
    count = gpus or (max(len(t) for t in totals) if totals else 2)
    memory = memory_gib * GIB if memory_gib else (max(max(t) for t in totals) if totals else 0)
    if memory <= 0:
        memory = 143771 * float(1 << 20)  # an H200 as nvidia-smi reports it (the larger figure)
    return Node(gpus=count, memory_bytes=memory, context_bytes=context_mib * float(1 << 20))


def worker_rule(jobs, node):
    """Workers for mgb: the jobs that fit in the node's memory at once (mean footprint plus
    context), plus one per GPU so the next job's host set-up overlaps the running ones."""
    sizes = [j.memory_bytes + node.context_bytes for j in jobs if j.memory_bytes > 0]
    if not sizes:
        return None
    fit = node.gpus * node.memory_bytes / (sum(sizes) / len(sizes))
    return max(node.gpus, math.floor(fit)) + node.gpus


def best_workers(sweep, tolerance=0.03):
    """The fewest workers whose throughput is within `tolerance` of the sweep's best."""
    best = max(r.throughput_per_hour for r in sweep)
    good = [r for r in sweep if r.crashed == 0 and r.throughput_per_hour >= (1 - tolerance) * best]
    return min(good, key=lambda r: r.workers).workers if good else None
