"""Writes docs/results.md from loaded runs: tables per workload, aims, sweeps, plots."""

import os
from collections import OrderedDict

import metrics
import plots

# The aims of issue 6, checked against measured runs only.
AIM_THROUGHPUT_VS_SINGLE = 2.5
AIM_VS_BEST_CG = 1.5
AIM_SLOWDOWN_PERCENT = 2.0
AIM_BOUND_PERCENT = 15.0


def fmt(value, pattern="{:.1f}", missing="-"):
    return missing if value is None else pattern.format(value)


def group_runs(runs):
    groups = OrderedDict()
    for r in sorted(runs, key=lambda r: (r.workload, r.policy != metrics.SINGLE, r.policy, r.workers)):
        groups.setdefault(r.workload, []).append(r)
    return groups


class Analysis:
    """Per-run figures of one workload, against its single-assignment run and bound."""

    def __init__(self, workload, runs, node):
        self.workload, self.runs, self.node = workload, runs, node
        self.single = metrics.baseline(runs)
        self.solo = metrics.solo_times(self.single) if self.single else {}
        self.bound = metrics.makespan_lower_bound(self.single.jobs, self.solo, node) if self.single else None

    def normalised(self, run):
        if not self.single or self.single.throughput_per_hour <= 0:
            return None
        return run.throughput_per_hour / self.single.throughput_per_hour

    def turnaround_speedup(self, run):
        if not self.single or run.mean_turnaround_s <= 0 or run.crashed:
            return None
        return self.single.mean_turnaround_s / run.mean_turnaround_s

    def slowdown(self, run):
        if not self.single or run is self.single:
            return None, {}
        return metrics.kernel_slowdown(run, self.single)

    def over_bound(self, run):
        if not self.bound or run.succeeded < len(run.jobs):
            return None  # a run that lost jobs did not do the work the bound is for
        return 100.0 * (run.makespan_s / self.bound[0] - 1.0)


def _run_name(a, r):
    """The run's policy; repeats of one policy and worker count also name their file."""
    twins = sum(o.policy == r.policy and o.workers == r.workers for o in a.runs)
    return r.policy if twins < 2 else f"{r.policy} ({os.path.splitext(os.path.basename(r.source))[0]})"


def _runs_table(a, mark):
    lines = ["| policy | workers | jobs | ok | crashed (OOM) | makespan s | jobs/h | vs single "
             "| mean turnaround s | turnaround speedup | kernel slowdown % | mean GPU util % "
             "| over bound % |",
             "|" + "---|" * 13]
    for r in a.runs:
        slow, _ = a.slowdown(r)
        util = "/".join(f"{u:.0f}" for u in metrics.mean_util(r)) or "-"
        flag = " INTERRUPTED" if r.interrupted else ""
        lines.append(
            f"| {_run_name(a, r)}{mark}{flag} | {r.workers} | {len(r.jobs)} | {r.succeeded} | "
            f"{r.crashed} ({r.oom}) | {r.makespan_s:.1f} | {r.throughput_per_hour:.1f} | "
            f"{fmt(a.normalised(r), '{:.2f}x')} | {r.mean_turnaround_s:.1f} | "
            f"{fmt(a.turnaround_speedup(r), '{:.2f}x')} | {fmt(slow, '{:+.1f}')} | {util} | "
            f"{fmt(a.over_bound(r), '{:+.1f}')} |")
    return lines


def _bound_lines(a):
    if not a.single:
        return ["No single-assignment run of this workload: no baseline, no solo times, no bound."]
    if not a.bound:
        return ["The single-assignment run has no successful job: no solo times, no bound."]
    value, name, terms = a.bound
    parts = ", ".join(f"{k} {v:.1f} s" for k, v in terms.items())
    missing = len(a.single.jobs) - len(a.solo)
    note = f" ({missing} job(s) without a solo time left out)" if missing else ""
    return [f"Makespan lower bound: **{value:.1f} s** ({name}); terms: {parts}{note}. "
            f"Solo times are the jobs' run times in the single-assignment run."]


def _wait_lines(a):
    """Time the jobs were blocked on mgbd, from libmgb's MGB_WAIT_MS lines (runs that have them)."""
    rows = []
    for r in a.runs:
        waits = [j.waits_ms for j in r.jobs if j.waits_ms is not None]
        if waits:
            rows.append(f"| {_run_name(a, r)} | {r.workers} | {len(waits)} of {len(r.jobs)} | "
                        f"{sum(w[0] for w in waits) / 1000:.1f} | {sum(w[1] for w in waits) / 1000:.1f} |")
    if not rows:
        return []
    return ["", "Time the jobs were blocked on mgbd (libmgb's `MGB_WAIT_MS`, summed over the jobs; a "
            "grow that waited inside a launch also counts in that launch's kernel time):", "",
            "| run | workers | jobs reporting | waiting for a GPU s | waiting to grow s |",
            "|---|---|---|---|---|"] + rows


def _kernel_lines(a, mark):
    rows = [(r, a.slowdown(r)[1]) for r in a.runs if r is not a.single and not r.simulated]
    rows = [(r, k) for r, k in rows if k]
    if not rows:
        return []
    kernels = sorted({name for _, k in rows for name in k})
    lines = ["", "Kernel slowdown against single-assignment, % (per kernel name, summed over the "
             "jobs that succeeded in both runs):", "",
             "| kernel | " + " | ".join(f"{_run_name(a, r)}{mark} w{r.workers}" for r, _ in rows) + " |",
             "|---|" + "---|" * len(rows)]
    for name in kernels:
        lines.append(f"| {name} | " + " | ".join(fmt(k.get(name), "{:+.1f}") for _, k in rows) + " |")
    return lines


def _cg_section(analyses, mark, plots_dir, prefix, links):
    rows = [(a.workload, [(r.workers, r.crash_percent) for r in a.runs if metrics.is_cg(r.policy)])
            for a in analyses]
    rows = [(w, pts) for w, pts in rows if pts]
    if not rows:
        return []
    lines = ["", f"### Core-to-GPU (memory-blind) crashes{mark}", "",
             "| workload | policy | workers | crashed % | OOM | jobs/h |", "|---|---|---|---|---|---|"]
    for a in analyses:
        for r in a.runs:
            if metrics.is_cg(r.policy):
                lines.append(f"| {a.workload} | {r.policy} | {r.workers} | {r.crash_percent:.0f} | "
                             f"{r.oom} | {r.throughput_per_hour:.1f} |")
    if plots_dir:
        name = plots.cg_crashes(rows, os.path.join(plots_dir, f"{prefix}cg_crashes.png"),
                                f"core-to-GPU crashes{mark}")
        links.append(name)
        lines += ["", f"![core-to-GPU crashes](plots/{name})"]
    return lines


def _sweep_section(analyses, node, mark, plots_dir, prefix, links):
    lines = []
    for a in analyses:
        sweep = [r for r in a.runs if r.policy == "mgb"]
        if len({r.workers for r in sweep}) < 2:
            continue
        rule = metrics.worker_rule(a.runs[0].jobs, node)
        best = metrics.best_workers(sweep)
        lines += ["", f"### mgb worker-count sweep: {a.workload}{mark}", "",
                  "| workers | jobs/h | makespan s | mean turnaround s | crashed |",
                  "|---|---|---|---|---|"]
        for r in sorted(sweep, key=lambda r: r.workers):
            lines.append(f"| {r.workers} | {r.throughput_per_hour:.1f} | {r.makespan_s:.1f} | "
                         f"{r.mean_turnaround_s:.1f} | {r.crashed} |")
        lines += ["", f"Fewest workers within 3% of the best throughput: **{fmt(best, '{}')}**; "
                      f"the rule (jobs that fit in memory at the mean footprint + one per GPU) "
                      f"gives **{fmt(rule, '{}')}**."]
        if plots_dir:
            name = plots.worker_sweep(a.workload, sweep,
                                      os.path.join(plots_dir, f"{prefix}sweep_{a.workload}.png"),
                                      f"mgb worker sweep{mark}")
            links.append(name)
            lines += ["", f"![worker sweep {a.workload}](plots/{name})"]
    return lines


def _aims(analyses):
    """Issue 6's aims against measured runs: (aim, measured text) rows."""
    ratios, vs_cg, crashed, slowdowns, bounds = [], [], 0, [], []
    for a in analyses:
        every_mgb = [r for r in a.runs if r.policy == "mgb"]
        crashed += sum(r.crashed for r in every_mgb)  # an interrupted run's crashes count too
        # An interrupted run has no makespan: it gives no ratio, slowdown or bound.
        mgb = [r for r in every_mgb if not r.interrupted]
        if not mgb or not a.single:
            continue
        best_mgb = max(mgb, key=lambda r: r.throughput_per_hour)
        ratios.append(a.normalised(best_mgb))
        safe_cg = [r.throughput_per_hour for r in a.runs if metrics.is_cg(r.policy) and r.crashed == 0]
        if safe_cg and max(safe_cg) > 0:
            vs_cg.append(best_mgb.throughput_per_hour / max(safe_cg))
        slow = a.slowdown(best_mgb)[0]
        if slow is not None:
            slowdowns.append(slow)
        if a.over_bound(best_mgb) is not None:
            bounds.append(a.over_bound(best_mgb))

    def mean(v, fmt):
        return f"{fmt.format(sum(v) / len(v))} (mean of {len(v)} workload(s))" if v else "not measured"
    return [("mgb throughput vs single-assignment", f">= {AIM_THROUGHPUT_VS_SINGLE}x", mean(ratios, "{:.2f}x")),
            ("mgb vs best crash-free core-to-GPU", f">= {AIM_VS_BEST_CG}x", mean(vs_cg, "{:.2f}x")),
            ("crashed jobs under mgb", "0", str(crashed) if ratios else "not measured"),
            ("kernel slowdown under mgb", f"<= {AIM_SLOWDOWN_PERCENT}%", mean(slowdowns, "{:+.1f}%")),
            ("mgb makespan over the lower bound", f"<= {AIM_BOUND_PERCENT}%", mean(bounds, "{:+.1f}%"))]


def section(runs, node, plots_dir, simulated):
    """The lines of one part of the report (measured or simulated runs) and its plot files."""
    mark = " (simulated)" if simulated else ""
    prefix = "sim_" if simulated else ""
    analyses = [Analysis(w, rs, node) for w, rs in group_runs(runs).items()]
    links, lines = [], []
    if not simulated:
        lines += ["### Aims (issue 6) and where the measured runs stand", "",
                  "| aim | target | measured (best mgb run per workload) |", "|---|---|---|"]
        lines += [f"| {a} | {t} | {m} |" for a, t, m in _aims(analyses)]
    groups = []
    for a in analyses:
        lines += ["", f"### Workload {a.workload}{mark}", ""]
        lines += _runs_table(a, mark)
        lines += [""] + _bound_lines(a)
        lines += _wait_lines(a)
        lines += _kernel_lines(a, mark)
        groups.append((a.workload, [(r, a.normalised(r)) for r in a.runs]))
        if plots_dir and any(r.samples for r in a.runs):
            name = plots.utilisation(a.workload, [r for r in a.runs if r.samples],
                                     os.path.join(plots_dir, f"{prefix}util_{a.workload}.png"),
                                     "GPU utilisation" + mark)
            links.append(name)
            lines += ["", f"![GPU utilisation {a.workload}](plots/{name})"]
    lines += _cg_section(analyses, mark, plots_dir, prefix, links)
    lines += _sweep_section(analyses, node, mark, plots_dir, prefix, links)
    if plots_dir and any(v is not None for _, rows in groups for _, v in rows):
        name = plots.throughput(groups, os.path.join(plots_dir, f"{prefix}throughput.png"),
                                "throughput normalised to single-assignment" + mark)
        links.append(name)
        lines += ["", f"![throughput{mark}](plots/{name})"]
    return lines, links


def document(runs, node, plots_dir, command, extra=()):
    """The whole report; `extra` (lines) goes after the measured runs, before the simulated."""
    real = [r for r in runs if not r.simulated]
    simulated = [r for r in runs if r.simulated]
    lines = ["# Results", "",
             f"Generated by `{command}` from "
             f"{len({r.source for r in runs})} result file(s); the method, the metrics and the "
             "makespan bound are described in [evaluation.md](evaluation.md). Node assumed for "
             f"the bound: {node.gpus} GPU(s) of {node.memory_bytes / metrics.GIB:.1f} GiB, "
             f"{node.context_bytes / (1 << 20):.0f} MiB CUDA context per job.", "",
             "## Measured on GPUs", ""]
    links = []
    if real:
        body, files = section(real, node, plots_dir, simulated=False)
        lines += body
        links += files
    else:
        lines += ["**No real GPU results yet**: the results folder holds no `mgb batch` run. "
                  "Nothing in this section is measured; run `scripts/gpu/eval.sh` on the GPU "
                  "machine (docs/evaluation.md) and regenerate."]
    if extra:
        lines += [""] + list(extra)
    lines += ["", "## Simulated (`mgb simulate`: a model of the node, no GPU ran these)", ""]
    if simulated:
        lines += ["Every row here is **SIMULATED**: figures come from the simulator's slowdown "
                  "model, not from a GPU.", ""]
        body, files = section(simulated, node, plots_dir, simulated=True)
        lines += body
        links += files
    else:
        lines += ["No simulated runs in the results folder."]
    lines += ["", "## Sources", ""] + [f"- {s}" for s in sorted({r.source for r in runs})]
    return "\n".join(lines) + "\n", links
