#!/usr/bin/env python3
"""torch_ddp: a 2-GPU PyTorch DistributedDataParallel training job (NCCL) whose GPU memory grows
over its first steps on every rank.

    torchrun --standalone --nproc_per_node=2 torch_ddp.py --gib 20 --steps 400

Models data-parallel training: each rank (on cuda:LOCAL_RANK) trains the same MLP (4 fp32
layers, 42M parameters, AdamW, batch 4096 a rank, data from a seeded generator of its own) with
gradients all-reduced by NCCL, while a replay buffer of written device tensors grows to --gib on
each rank in 4 steps over the first quarter of the run. Rank 0 prints one line,
`RESULT <name> <checksum of the final weights>`, the same for the same arguments on the same
GPUs. Any exception (a CUDA out-of-memory included) prints its traceback and exits 1, and so
torchrun ends the other rank and exits non-zero.

One step takes about 0.025 s (an estimate: fp32 GEMMs, ~1 TFLOP a rank, plus a 168 MB
all-reduce)."""
import os

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # no NVLink multicast (NVLS)
import time  # noqa: E402

import common  # noqa: E402
import torch_common as tc  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

STEP_S = 0.025
BATCH = 4096


def main():
    args = common.parse(__doc__, STEP_S, __file__)
    rank, local_rank = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    dev = torch.device("cuda", local_rank)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl")
    args.name = args.name if rank == 0 else f"{args.name}.rank{rank}"
    torch.manual_seed(args.seed)  # the same initial weights on every rank
    model = DistributedDataParallel(tc.mlp().to(dev), device_ids=[local_rank])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed)
    teacher = torch.randn(1024, 1024, device=dev, generator=gen) / 32  # the same on every rank
    gen.manual_seed(args.seed * 1000 + 1 + rank)  # each rank its own data
    growth = tc.growth(args, dev)
    started = time.time()
    for step in range(args.steps):
        x = torch.randn(BATCH, 1024, device=dev, generator=gen)
        tc.train_step(model, opt, torch.nn.functional.mse_loss, x, torch.sin(x @ teacher))
        growth.after_step(step)
    torch.cuda.synchronize()
    checksum = tc.checksum(model.module)
    if rank == 0:
        common.report(args, checksum, started, torch.cuda.max_memory_reserved(dev))
    else:
        common.log(args, f"peak_gib={torch.cuda.max_memory_reserved(dev) / common.GIB:.2f} "
                         f"checksum={checksum}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    common.run(main)
