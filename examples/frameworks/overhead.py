#!/usr/bin/env python3
"""overhead: the speed of a PyTorch training step, in steps per second, to compare a program run
plainly with the same program under `mgb run`.

Models the steady state of a mid-size training job: an MLP (4 fp32 layers of 2048, 14M
parameters, AdamW, batch 1024); --warmup steps, then --steps timed steps between two
torch.cuda.synchronize() calls. Prints `STEPS_PER_S <value>` (and with --out writes it there).

--no-cache only labels the run: it is meant to be run with PYTORCH_NO_CUDA_MEMORY_CACHING=1 in
the environment, so that every tensor is a cudaMalloc and a cudaFree (the worst case for a
guard that counts allocations); the script measures the same way either way and warns when the
flag and the environment disagree. About 300 cached steps a second on one H100 (an estimate)."""
import argparse
import os
import sys
import time


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=300, help="timed steps (default %(default)s)")
    p.add_argument("--warmup", type=int, default=30, help="untimed steps first (default %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-cache", action="store_true",
                   help="label: run with PYTORCH_NO_CUDA_MEMORY_CACHING=1 in the environment")
    p.add_argument("--out", help="file to write the STEPS_PER_S line to")
    args = p.parse_args()
    if args.no_cache != (os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING") == "1"):
        print("overhead: warning: --no-cache and PYTORCH_NO_CUDA_MEMORY_CACHING disagree",
              file=sys.stderr)
    import torch_common as tc
    import torch

    dev = torch.device("cuda")
    torch.manual_seed(args.seed)
    model = tc.mlp(d_in=2048, width=2048, depth=4, d_out=2048).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed)
    x = torch.randn(1024, 2048, device=dev, generator=gen)
    y = torch.randn(1024, 2048, device=dev, generator=gen)
    for _ in range(args.warmup):
        tc.train_step(model, opt, torch.nn.functional.mse_loss, x, y)
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(args.steps):
        tc.train_step(model, opt, torch.nn.functional.mse_loss, x, y)
    torch.cuda.synchronize()
    line = f"STEPS_PER_S {args.steps / (time.perf_counter() - started):.2f}"
    print(line, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    import common
    common.run(main)
