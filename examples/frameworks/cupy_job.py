#!/usr/bin/env python3
"""cupy_job: a CuPy signal-processing job whose GPU memory (CuPy's default memory pool) grows to
--gib over its first steps, then runs FFTs and matrix products.

Models an iterative solver that keeps growing history buffers: each step multiplies an
8192x8192 float32 matrix by a fixed random one (cuBLAS), filters it in the frequency domain
(a 2-D real FFT, a fixed low-pass mask, the inverse FFT; cuFFT) and normalizes it, while a
history of written arrays grows to --gib in 4 steps over the first quarter of the run. Prints
one line, `RESULT <name> <checksum of the final matrix>`, the same for the same arguments on the
same kind of GPU. Any exception (cupy.cuda.memory.OutOfMemoryError included) prints its
traceback and exits 1.

One step takes about 0.03 s alone on one H100 (an estimate: a 1.1 TFLOP fp32 GEMM, two FFTs)."""
import time

import common

STEP_S = 0.03
N = 8192


def main():
    args = common.parse(__doc__, STEP_S, __file__)
    import cupy as cp

    pool = cp.get_default_memory_pool()
    rs = cp.random.RandomState(args.seed)
    w = rs.standard_normal((N, N), dtype=cp.float32) / cp.float32(N ** 0.5)
    x = rs.standard_normal((N, N), dtype=cp.float32) / cp.float32(N)
    fy, fx = cp.meshgrid(cp.fft.fftfreq(N), cp.fft.rfftfreq(N), indexing="ij")
    mask = (fy * fy + fx * fx < 0.1).astype(cp.complex64)

    def allocate(nbytes, k):
        return cp.full(nbytes // 4, k + 1.0, dtype=cp.float32)

    growth = common.Growth(args, pool.total_bytes, allocate)
    peak = 0
    started = time.time()
    for i in range(args.steps):
        y = cp.fft.irfft2(cp.fft.rfft2(x @ w) * mask, s=(N, N))
        x = (y / cp.sqrt(cp.sum(y * y))).astype(cp.float32)
        growth.after_step(i)
        if i in growth.at:
            peak = max(peak, pool.total_bytes())
    cp.cuda.Device().synchronize()
    x64 = x.astype(cp.float64)
    total = float(cp.sum(x64) + cp.sum(cp.abs(x64)))
    common.report(args, f"{total:.6e}", started, max(peak, pool.total_bytes()))


if __name__ == "__main__":
    common.run(main)
