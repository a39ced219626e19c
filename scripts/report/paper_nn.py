"""The paper's neural-network study (its Section "Neural Network Performance") beside measured
Darknet workloads. scripts/paper/darknet/run-on-gpu.sh names each job list after its job type
(predict19.json, train.json, mix.json...), which is how their runs are found here."""

from markdown import Analysis, fmt

# The paper's figures (4 x V100): mgb's throughput over schedGPU for the homogeneous 8-job
# workloads (detection: "similar results"), and over single-assignment for the 128-job mix.
PAPER = {
    "predict19": ("schedgpu", 1.4, "1.4x schedGPU (predict)"),
    "predict53": ("schedgpu", 1.4, "1.4x schedGPU (predict)"),
    "generate": ("schedgpu", 2.2, "2.2x schedGPU"),
    "train": ("schedgpu", 3.1, "3.1x schedGPU"),
    "detect": ("schedgpu", 1.0, "similar to schedGPU"),
    "mix": ("single", 2.7, "2.7x single-assignment"),
}


def _ratio(a, b):
    if a is None or b is None or b.throughput_per_hour <= 0 or a.succeeded < len(a.jobs):
        return None
    return a.throughput_per_hour / b.throughput_per_hour


def _ceiling(baseline, group, workload, node):
    """The most any scheduler could gain over the baseline on this node: its makespan over the
    workload's lower bound (the bound its own table shows)."""
    if baseline is None or baseline.succeeded < len(baseline.jobs):
        return None
    bound = Analysis(workload, group, node).bound
    return baseline.makespan_s / bound[0] if bound and bound[0] > 0 else None


def section(runs, node):
    """Lines of the table, empty when no run is of a Darknet job type."""
    rows = []
    for workload in PAPER:
        group = [r for r in runs if r.workload == workload and not r.simulated]
        single = next((r for r in group if r.policy == "single"), None)
        schedgpu = next((r for r in group if r.policy == "schedgpu"), None)
        mgbs = [r for r in group if r.policy == "mgb" and r.succeeded == len(r.jobs)]
        if not mgbs:
            continue
        best = max(mgbs, key=lambda r: r.throughput_per_hour)
        against, paper, said = PAPER[workload]
        baseline = single if against == "single" else schedgpu
        ours = _ratio(best, baseline)
        ceiling = _ceiling(baseline, group, workload, node)
        # Judged at the precision shown (2.70x is the paper's 2.7x, whatever the last bits).
        met = ours is not None and round(ours, 2) >= paper
        verdict = "-" if ours is None else ("met" if met else
                                            f"missed by {100.0 * (1.0 - ours / paper):.0f}%")
        if ours is not None and not met and ceiling is not None and round(ceiling, 2) < paper:
            verdict += " (beyond the bound here)"
        cell = lambda r: "-" if r is None else f"{r.makespan_s:.1f} s"
        lost = sum(len(r.jobs) - r.succeeded for r in group if r.policy == "mgb")
        rows.append(
            f"| {workload} | {len(best.jobs)} | {cell(single)} | {cell(schedgpu)} | "
            f"{best.makespan_s:.1f} s @{best.workers} | {fmt(_ratio(best, single), '{:.2f}x')} | "
            f"{fmt(_ratio(best, schedgpu), '{:.2f}x')} | {said} | {fmt(ceiling, '{:.2f}x')} | "
            f"{verdict} | {lost} |")
    if not rows:
        return []
    return ["### The paper's neural-network study (Darknet)", "",
            "The best mgb run of each job type's workload against the same call's "
            "single-assignment and schedGPU-like (`mgbd --policy schedgpu`) runs, beside the "
            "paper's figure for it (docs/evaluation.md has the setup). The bound allows: the "
            "most any scheduler could gain over the paper's baseline on this node, the "
            "baseline's makespan over the workload's lower bound (evaluation.md; solo times from "
            "the single-assignment run). Where it is below the paper's figure, no scheduler "
            "could meet that figure here.", "",
            "| workload | jobs | single-assignment | schedGPU-like | mgb | mgb x single "
            "| mgb x schedGPU | paper | the bound allows | against the paper | jobs lost by mgb |",
            "|" + "---|" * 11] + rows
