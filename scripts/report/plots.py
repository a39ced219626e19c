"""PNG figures for docs/results.md (matplotlib, Agg backend: no display needed)."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return os.path.basename(path)


def _run_name(run):
    return f"{run.policy} w{run.workers}"


def throughput(groups, path, title):
    """Grouped bars: per workload, each run's throughput normalised to single-assignment.
    groups: [(workload, [(run, normalised)])]."""
    fig, ax = plt.subplots(figsize=(max(6, 1.8 * len(groups) + 3), 4))
    names = sorted({_run_name(r) for _, rows in groups for r, _ in rows})
    width = 0.8 / max(1, len(names))
    for i, name in enumerate(names):
        xs, ys = [], []
        for x, (_, rows) in enumerate(groups):
            for r, value in rows:
                if _run_name(r) == name and value is not None:
                    xs.append(x + i * width)
                    ys.append(value)
        ax.bar(xs, ys, width, label=name)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(groups))])
    ax.set_xticklabels([w for w, _ in groups])
    ax.set_ylabel("throughput / single-assignment")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return _save(fig, path)


def utilisation(workload, runs, path, title):
    """One panel per run: each GPU's utilisation over time."""
    fig, axes = plt.subplots(len(runs), 1, figsize=(8, 1.8 * len(runs) + 0.6), sharex=True,
                             squeeze=False)
    for ax, run in zip(axes[:, 0], runs):
        gpus = max((len(s.util) for s in run.samples), default=0)
        for g in range(gpus):
            pts = [(s.t_s, s.util[g]) for s in run.samples if g < len(s.util)]
            ax.plot([t for t, _ in pts], [u for _, u in pts], linewidth=0.9, label=f"GPU {g}")
        ax.set_ylim(0, 105)
        ax.set_ylabel("util %")
        ax.set_title(f"{_run_name(run)} (makespan {run.makespan_s:.0f} s)", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("seconds since batch start")
    fig.suptitle(f"{title}: {workload}", fontsize=10)
    return _save(fig, path)


def worker_sweep(workload, sweep, path, title):
    """mgb throughput and mean turnaround against the worker count."""
    sweep = sorted(sweep, key=lambda r: r.workers)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot([r.workers for r in sweep], [r.throughput_per_hour for r in sweep], "o-",
            label="throughput (jobs/h)")
    ax.set_xlabel("workers")
    ax.set_ylabel("jobs per hour")
    ax2 = ax.twinx()
    ax2.plot([r.workers for r in sweep], [r.mean_turnaround_s for r in sweep], "s--",
             color="tab:red", label="mean turnaround (s)")
    ax2.set_ylabel("mean turnaround (s)")
    ax.set_title(f"{title}: {workload}", fontsize=10)
    fig.legend(fontsize=8, loc="lower right")
    return _save(fig, path)


def cg_crashes(rows, path, title):
    """Crash percentage of core-to-GPU runs against the worker count, one line per workload.
    rows: [(workload, [(workers, crash_percent)])]."""
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for workload, points in rows:
        points = sorted(points)
        ax.plot([w for w, _ in points], [c for _, c in points], "o-", label=workload)
    ax.set_xlabel("workers")
    ax.set_ylabel("crashed jobs %")
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return _save(fig, path)
