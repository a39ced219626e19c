#!/usr/bin/env python3
"""torch_train: a PyTorch training job whose GPU memory grows over its first steps.

Models a training run whose saved activations and caches grow before it settles: an MLP (4 fp32
layers, 42M parameters, AdamW, batch 8192) learns a fixed random teacher on data drawn on the
GPU from a seeded generator, while a replay buffer of written device tensors grows to --gib in 4
steps over the first quarter of the run. Then it trains on and prints one line,
`RESULT <name> <checksum of the final weights>`, the same for the same arguments on the same
kind of GPU (deterministic cuBLAS, no TF32). Any exception (a CUDA out-of-memory included)
prints its traceback and exits 1.

One step takes about 0.04 s alone on one H100 (an estimate: fp32 GEMMs, ~2 TFLOP a step).
The allocator is the caller's choice: the caching allocator by default, or
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True in the environment."""
import time

import common
import torch_common as tc
import torch

STEP_S = 0.04
BATCH = 8192


def main():
    args = common.parse(__doc__, STEP_S, __file__)
    dev = torch.device("cuda")
    torch.manual_seed(args.seed)
    model = tc.mlp().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed)
    teacher = torch.randn(1024, 1024, device=dev, generator=gen) / 32
    growth = tc.growth(args, dev)
    started = time.time()
    for step in range(args.steps):
        x = torch.randn(BATCH, 1024, device=dev, generator=gen)
        tc.train_step(model, opt, torch.nn.functional.mse_loss, x, torch.sin(x @ teacher))
        growth.after_step(step)
    torch.cuda.synchronize()
    common.report(args, tc.checksum(model), started, torch.cuda.max_memory_reserved(dev))


if __name__ == "__main__":
    common.run(main)
