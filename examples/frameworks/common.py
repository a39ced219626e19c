"""Pieces shared by the framework job scripts in examples/frameworks: the arguments, the growth of
the job's GPU memory over its first steps, the RESULT line and the exit status.

Each job takes --gib (the peak it grows to), --steps (or --seconds, which only sets the default
--steps from the script's estimated time per step), --seed, --out and --name. The number of steps,
and so the work and the RESULT, depends on the arguments only, never on a clock."""
import argparse
import json
import os
import sys
import time
import traceback

GIB = 1 << 30
CHUNK = 512 << 20  # one growth allocation


def parse(doc, step_s, script, default_gib=4.0):
    """The job's arguments. step_s: the estimated seconds of one step alone on one H100."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gib", type=float, default=default_gib,
                   help="peak GPU memory in GiB that the job's framework holds (its allocator's "
                        "total; the CUDA context comes on top), reached in 4 growth steps after "
                        "steps 0, N/12, N/6 and N/4 (default %(default)s)")
    p.add_argument("--steps", type=int,
                   help=f"steps to run (default: --seconds / {step_s:g}, the estimated seconds of "
                        "one step alone on one H100)")
    p.add_argument("--seconds", type=float, default=20.0,
                   help="approximate run time alone on one H100; only sets the default --steps "
                        "(default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the data and the initial weights")
    p.add_argument("--out", help="per-run output file: a JSON summary (arguments, RESULT, times)")
    p.add_argument("--name", help="job name in the RESULT line (default: the script's name)")
    args = p.parse_args()
    if args.steps is None:
        args.steps = max(4, round(args.seconds / step_s))
    if args.steps < 1:
        p.error("--steps must be at least 1")
    args.name = args.name or os.path.splitext(os.path.basename(script))[0]
    return args


def log(args, message):
    """An information line on stderr (stdout carries only the RESULT line)."""
    print(f"INFO {args.name} {message}", file=sys.stderr, flush=True)


class Growth:
    """Grows what the job holds on the GPU to --gib in 4 equal parts, after steps 0, N/12, N/6 and
    N/4 (within the first third of the run), as a training job's caches and saved activations grow.
    in_use(): the bytes the framework holds now, read once after step 0 (model, optimizer state,
    workspaces, cached blocks); allocate(nbytes, k): one device buffer of nbytes, written (touched)
    on the device, kept until the job ends."""

    def __init__(self, args, in_use, allocate):
        self.target = int(args.gib * GIB)
        self.at = [k * args.steps // 12 for k in range(4)]
        self.in_use, self.allocate = in_use, allocate
        self.held, self.chunks = [], None

    def after_step(self, step):
        for k, at in enumerate(self.at):
            if at != step:
                continue
            if self.chunks is None:
                self.chunks = max(0, round((self.target - self.in_use()) / CHUNK))
            while len(self.held) < self.chunks * (k + 1) // 4:
                self.held.append(self.allocate(CHUNK, len(self.held)))


def report(args, checksum, started, peak_bytes, more=""):
    """Prints the RESULT line (the run's deterministic output) and writes --out. peak_bytes: the
    most the framework held (its allocator's reservation where it has one); more: extra figures
    for the INFO line."""
    seconds = time.time() - started
    log(args, f"steps={args.steps} compute_s={seconds:.1f} peak_gib={peak_bytes / GIB:.2f} "
              f"target_gib={args.gib:g}{' ' + more if more else ''}")
    line = f"RESULT {args.name} {checksum}"
    print(line, flush=True)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump({"result": line, "args": vars(args), "compute_s": round(seconds, 2),
                       "peak_bytes": int(peak_bytes)}, f)
            f.write("\n")


def run(main):
    """Runs main(); on any exception prints the traceback and exits 1 at once (without the
    interpreter's shutdown, which can hang in a framework after a failed GPU call)."""
    try:
        main()
    except SystemExit:  # --help, a bad argument
        raise
    except BaseException:  # noqa: BLE001 -- every failure, a PyTorch OOM included, exits non-zero
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
