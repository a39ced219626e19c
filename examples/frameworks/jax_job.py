#!/usr/bin/env python3
"""jax_job: a JAX training job (a jitted SGD step of an MLP) whose live device arrays grow to
--gib over its first steps.

Models a JAX training run whose caches grow: an MLP (4 fp32 layers, 42M parameters, batch 4096)
learns a fixed random teacher on data drawn inside the jitted step from a seeded key, while a
list of live device arrays grows to --gib in 4 steps over the first quarter of the run. Prints
one line, `RESULT <name> <checksum of the final weights>`, the same for the same arguments on
the same kind of GPU: the step is compiled with XLA's deterministic ops and without autotuning,
whose timing-based choice of GEMM kernels could differ between runs beside other jobs (passed as
compiler options; an older JAX without them compiles plainly and says so). Any exception (an
out-of-memory included) prints its traceback and exits 1.

It sets no XLA_* environment variable: whether XLA preallocates GPU memory (by default 75% of the
GPU at start) and how much its pool may take (XLA_PYTHON_CLIENT_MEM_FRACTION) are the caller's
choice, e.g. XLA_PYTHON_CLIENT_PREALLOCATE=false. Without preallocation XLA's allocator grows its
pool in doubling regions, so the pool can reach up to the fraction (0.75 of the GPU) while the
arrays in use are --gib; the INFO line on stderr gives both (peak_gib, pool_gib).
One step takes about 0.025 s alone on one H100 (an estimate: fp32 GEMMs, ~1 TFLOP a step)."""
import time

import common

STEP_S = 0.025
BATCH = 4096
LR = 1e-3
SIZES = [1024, 4096, 4096, 4096, 1024]
DETERMINISTIC = ({"xla_gpu_deterministic_ops": True, "xla_gpu_autotune_level": 0},
                 {"xla_gpu_autotune_level": 0})


def compile_deterministic(args, jitted, *example):
    lowered = jitted.lower(*example)
    for options in DETERMINISTIC:
        try:
            return lowered.compile(compiler_options=options)
        except Exception as e:  # noqa: BLE001 -- an older JAX or XLA: try the next
            common.log(args, f"compiler options {options} refused ({type(e).__name__}: {e})")
    common.log(args, "compiled without deterministic options: the RESULT may vary between runs")
    return lowered.compile()


def main():
    args = common.parse(__doc__, STEP_S, __file__)
    import jax
    import jax.numpy as jnp
    import numpy as np

    jax.config.update("jax_default_matmul_precision", "highest")  # fp32, as the torch jobs
    dev = jax.devices()[0]
    common.log(args, f"device {dev.platform}:{dev.id} {getattr(dev, 'device_kind', '')}")
    keys = jax.random.split(jax.random.PRNGKey(args.seed), len(SIZES))
    params = [(jax.random.normal(k, (a, b)) / np.sqrt(a), jnp.zeros(b))
              for k, a, b in zip(keys, SIZES[:-1], SIZES[1:])]
    teacher = jax.random.normal(keys[-1], (SIZES[0], SIZES[-1])) / 32
    data_key = jax.random.PRNGKey(args.seed + 1)

    def loss_fn(params, x, y):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        return jnp.mean((h - y) ** 2)

    def step(params, key, i):
        x = jax.random.normal(jax.random.fold_in(key, i), (BATCH, SIZES[0]))
        grads = jax.grad(loss_fn)(params, x, jnp.sin(x @ teacher))
        return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)

    train = compile_deterministic(args, jax.jit(step, donate_argnums=0), params, data_key,
                                  np.int32(0))

    def in_use():
        stats = dev.memory_stats() or {}
        return stats.get("bytes_in_use") or sum(a.nbytes for a in jax.live_arrays())

    def allocate(nbytes, k):
        return jnp.full((nbytes // 4,), k + 1.0, dtype=jnp.float32).block_until_ready()

    growth = common.Growth(args, in_use, allocate)
    started = time.time()
    for i in range(args.steps):
        params = train(params, data_key, np.int32(i))
        if i in growth.at:
            jax.block_until_ready(params)
        growth.after_step(i)
    jax.block_until_ready(params)
    total = sum(np.asarray(a, dtype=np.float64).sum() + np.square(np.asarray(a, np.float64)).sum()
                for a in jax.tree_util.tree_leaves(params))
    # XLA's allocator (BFC) grows its pool in doubling regions, up to XLA_PYTHON_CLIENT_MEM_FRACTION
    # (0.75) of the GPU: the pool (what the GPU gives up) can be well above the arrays in use.
    stats = dev.memory_stats() or {}
    peak = stats.get("peak_bytes_in_use") or in_use()
    pool = stats.get("peak_pool_bytes") or stats.get("pool_bytes") or stats.get("bytes_reserved")
    more = f"pool_gib={pool / common.GIB:.2f}" if pool else ""
    common.report(args, f"{total:.6e}", started, peak, more)


if __name__ == "__main__":
    common.run(main)
