#!/usr/bin/env python3
"""torch_dataloader: a PyTorch image-classifier training job fed by a DataLoader with worker
processes, whose GPU memory grows over its first steps.

Models the usual input pipeline: a CPU Dataset makes each 3x64x64 image from its index (numpy,
seeded per sample; the workers never touch CUDA), DataLoader(num_workers=4, pin_memory=True)
batches them (256 a batch, in order), and a small conv net (4 convolutions, AdamW) trains on the
GPU while a cache of feature tensors grows to --gib in 4 steps over the first quarter of the
run. Prints one line, `RESULT <name> <checksum of the final weights>`, the same for the same
arguments on the same kind of GPU (deterministic cuDNN and cuBLAS). Any exception (a CUDA
out-of-memory included) prints its traceback and exits 1.

One step takes about 0.01 s (an estimate, bound by the 4 workers making the data on the CPU)."""
import time

import common
import torch_common as tc
import numpy as np
import torch
from torch import nn

STEP_S = 0.01
BATCH = 256


class Images(torch.utils.data.Dataset):
    """Image idx: noise plus a pattern of its class (idx % 10); made on the CPU only."""

    def __init__(self, seed, length):
        self.seed, self.length = seed, length
        self.patterns = np.random.default_rng(seed).standard_normal((10, 3, 64, 64), np.float32)

    def __len__(self):
        return self.length

    def __getitem__(self, idx):
        rng = np.random.default_rng([self.seed, idx])
        label = idx % 10
        image = rng.standard_normal((3, 64, 64), np.float32) + 0.5 * self.patterns[label]
        return torch.from_numpy(image), label


def convnet():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(128, 256, 3, stride=2, padding=1), nn.ReLU(),
        nn.Flatten(2), Mean(), nn.Linear(256, 10))


class Mean(nn.Module):  # global average pooling by a plain mean (deterministic backward)
    def forward(self, x):
        return x.mean(dim=2)


def main():
    args = common.parse(__doc__, STEP_S, __file__)
    dev = torch.device("cuda")
    torch.manual_seed(args.seed)
    model = convnet().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = torch.utils.data.DataLoader(Images(args.seed, args.steps * BATCH), batch_size=BATCH,
                                         shuffle=False, num_workers=4, pin_memory=True)
    growth = tc.growth(args, dev)
    started = time.time()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        tc.train_step(model, opt, nn.functional.cross_entropy, x, y)
        growth.after_step(step)
    torch.cuda.synchronize()
    common.report(args, tc.checksum(model), started, torch.cuda.max_memory_reserved(dev))


if __name__ == "__main__":
    common.run(main)
