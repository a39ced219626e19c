#!/usr/bin/env python3
"""Regenerates docs/results.md and docs/plots/*.png from batch-run JSON files.

usage: python3 scripts/report.py RESULTS_DIR [--out FILE] [--plots DIR] [--gpus N]
                                 [--gpu-memory-gib G] [--context-mib M] [--no-plots]
                                 [--paper-mix PATH ...] [--one-gpu DIR] [--rodinia-mix PATH ...]

RESULTS_DIR is searched recursively for run JSONs written by `mgb batch --out` (real runs; the
label is the mgbd policy, as scripts/gpu/eval.sh sets it) and by `mgb simulate --out` (marked
simulated). Other JSON files (job lists, calibration) are skipped. Runs are grouped by the job
list they ran; each group's single-assignment run is the baseline and its per-job times are the
solo times of the makespan bound (docs/evaluation.md). --paper-mix and --one-gpu add issue 19's
one-GPU side-by-side section: scripts/paper/paper-mix.sh logs (one per device call) and a folder
of one-GPU runs (its node from their NVML samples). Runs of Darknet job lists (predict19, train,
mix...: scripts/paper/darknet/run-on-gpu.sh) also get a table beside the paper's neural-network
figures. --rodinia-mix adds issue 34's Rodinia mixes where memory binds: paper-mix.sh's output
folders (with the mix.wl.json it copies), every system of a mix beside single-assignment,
GPU-Sched and the bound. Exit 0 on success, 2 on bad input.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
sys.path.insert(0, os.path.join(HERE, "report"))

try:
    import matplotlib  # noqa: F401
except ImportError:
    # Debian's python3-matplotlib lives in the system interpreter; a pyenv/venv python3 first on
    # PATH lacks it. Re-run under the system one rather than lose the plots.
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath(
            "/usr/bin/python3") and not os.environ.get("MGB_REPORT_REEXEC"):
        os.environ["MGB_REPORT_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3", os.path.abspath(__file__)] + sys.argv[1:])
    sys.exit("report.py: matplotlib is missing: apt-get install python3-matplotlib "
             "(scripts/setup-deps.sh installs it)")

import markdown  # noqa: E402
import metrics  # noqa: E402
import paper_mix  # noqa: E402
import paper_nn  # noqa: E402
import rodinia_mix  # noqa: E402
import runs as run_files  # noqa: E402
import side_by_side  # noqa: E402


def parse_args(argv):
    repo = os.path.dirname(HERE)
    p = argparse.ArgumentParser(
        prog="report.py", description=__doc__.split("\n\n")[0],
        epilog="Writes the markdown and the PNGs it links; the plots folder is emptied of PNGs first.")
    p.add_argument("results_dir", metavar="RESULTS_DIR", help="folder of run JSON files")
    p.add_argument("--out", default=os.path.join(repo, "docs", "results.md"),
                   help="markdown to write (default docs/results.md)")
    p.add_argument("--plots", default=None,
                   help="folder for PNGs (default: plots/ beside --out)")
    p.add_argument("--no-plots", action="store_true", help="tables only")
    p.add_argument("--gpus", type=int, default=0,
                   help="GPUs of the node for the bound (default: from NVML samples, else 2)")
    p.add_argument("--gpu-memory-gib", type=float, default=0,
                   help="memory per GPU for the bound (default: NVML total, else 140.4 GiB)")
    p.add_argument("--context-mib", type=float, default=520,
                   help="CUDA context per job per GPU (default 520, measured on an H200)")
    p.add_argument("--paper-mix", action="append", default=[], metavar="PATH",
                   help="a scripts/paper/paper-mix.sh log (one per device call), or a folder: "
                        "every such log under it; repeat for several")
    p.add_argument("--one-gpu", metavar="DIR", default=None,
                   help="folder of one-GPU runs (W1-W4 halved) for the side-by-side section")
    p.add_argument("--rodinia-mix", action="append", default=[], metavar="PATH",
                   help="a scripts/paper/paper-mix.sh output folder of a Rodinia mix (holding "
                        "mix.wl.json), or a folder of them; repeat for several")
    args = p.parse_args(argv)
    if args.gpus < 0 or args.gpu_memory_gib < 0 or args.context_mib < 0:
        p.error("--gpus, --gpu-memory-gib and --context-mib must not be negative")
    return args


def _command(argv):
    """How to make this report again, for its header (the output paths left out)."""
    shown, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ("--out", "--plots"):
            skip = True
        elif not a.startswith(("--out=", "--plots=")):
            shown.append(a)
    return " ".join(["python3 scripts/report.py"] + shown)


def main(argv):
    args = parse_args(argv)
    try:
        runs = run_files.load_dir(args.results_dir)
        one_gpu = run_files.load_dir(args.one_gpu) if args.one_gpu else []
        calls = [paper_mix.load_call(log) for path in args.paper_mix for log in paper_mix.find_logs(path)]
        rodinia = rodinia_mix.section(args.rodinia_mix, args.context_mib * float(1 << 20))
    except (run_files.InputError, paper_mix.InputError, rodinia_mix.InputError) as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 2
    plots_dir = None
    if not args.no_plots:
        plots_dir = args.plots or os.path.join(os.path.dirname(os.path.abspath(args.out)), "plots")
        os.makedirs(plots_dir, exist_ok=True)
        for name in os.listdir(plots_dir):  # stale figures of runs no longer there
            if name.endswith(".png"):
                os.remove(os.path.join(plots_dir, name))
    node = metrics.node_from_samples(runs, args.gpus, args.gpu_memory_gib, args.context_mib)
    extra = []
    if calls or one_gpu:
        one_node = metrics.node_from_samples(one_gpu, 0, 0, args.context_mib)
        extra = side_by_side.section(calls, [r for r in one_gpu if not r.simulated], one_node, args.one_gpu)
    extra += rodinia
    extra += paper_nn.section(runs, node)
    text, pngs = markdown.document(runs, node, plots_dir, _command(argv), extra)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    real = sum(not r.simulated for r in runs)
    print(f"report.py: {len(runs)} run(s) ({real} measured, {len(runs) - real} simulated) -> "
          f"{args.out}, {len(pngs)} plot(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
