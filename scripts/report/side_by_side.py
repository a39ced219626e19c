"""docs/results.md's one-GPU part (issue 19): the paper's mix beside GPU-Sched, and the
memory-binding mixes on one GPU against their bound, in one table each."""

import markdown
import paper_mix


def _mix_rows(runs, node):
    """One row per workload: its single-assignment run against each mgb run."""
    rows = []
    for workload, group in markdown.group_runs(runs).items():
        a = markdown.Analysis(workload, group, node)
        if not a.single or not a.bound:
            continue
        bound, term, terms = a.bound
        for r in a.runs:
            if r is a.single or r.policy != "mgb":
                continue
            slow, _ = a.slowdown(r)
            over = a.over_bound(r)
            relaxed = terms["memory_time"]
            rows.append(
                f"| {workload} | {len(r.jobs)} | {bound:.1f} s ({term}; memory_time {relaxed:.1f} s) | "
                f"{a.single.makespan_s:.1f} s | {r.makespan_s:.1f} s @{r.workers} | "
                f"{markdown.fmt(over, '{:+.0f}%')} | {markdown.fmt(a.normalised(r), '{:.2f}x')} | "
                f"{a.single.mean_turnaround_s:.1f} -> {r.mean_turnaround_s:.1f} s | "
                f"{markdown.fmt(slow, '{:+.1f}%')} | {r.crashed} |")
    return rows


def section(calls, one_gpu_runs, one_gpu_node, one_gpu_dir):
    lines = ["## One GPU, side by side (issue 19)", ""]
    if calls:
        lines += ["### The paper's mix `p100_50_16jobs_0`: mgb beside GPU-Sched, one device call (or round) per row", "",
                  "Each row is one call of `scripts/paper/paper-mix.sh` (its log): the same seven Rodinia "
                  "programs built as written (the bound: srad_v1 20000x20000 alone), through mgb-nvcc "
                  "(`mgb batch` under mgbd) and through GPU-Sched's passes (its scheduler, policy "
                  "mgb_basic, and its workloader), MPS on for every shared run; @N is the worker "
                  "count. A call is cut into rounds at each bound run after its first, and each "
                  "round is compared with its own bound. Made on the GPU machine by", "",
                  "    scripts/paper/paper-mix.sh --bundle BUNDLE --mgb-bin .device/bin \\",
                  "        --runs \"warm bound mgb@16 gpusched@10 gpusched@16 bound mgb@16 gpusched@10\"",
                  "", "(the runs of each call are in its log); the builds (scripts/paper/build-*.sh, "
                  "bundle.sh) are in evaluation.md.", ""]
        lines += paper_mix.section(calls)
        lines += [""]
    if one_gpu_runs:
        lines += [f"### Memory-binding mixes on one GPU (`{one_gpu_dir}`)", "",
                  "W1-W4 halved to one GPU (`scripts/gpu/matrix.sh --target 12 "
                  "W1/8/1:1/single@1,mgb@4 W2/8/2:1/single@1,mgb@4 ...` on one H200). "
                  "The bound is the largest of the terms in evaluation.md; on "
                  "one GPU it includes `packing`, the best possible packing of the jobs' memory "
                  "spans, beside `memory_time`, the relaxation that packing tightens.", "",
                  "| mix | jobs | bound | single | mgb | mgb over bound | vs single | mean turnaround "
                  "single -> mgb | kernel slowdown | lost |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        lines += _mix_rows(one_gpu_runs, one_gpu_node)
        lines += [""]
    return lines
