"""Core overheads, ember vs torch in one process: `python bench/bench_core.py`.

- a + b on 1-element tensors without grad (per-op overhead), target <= 1.5x torch
- a small graph forward+backward on 16-element tensors, target <= 0.6x torch
- 512x512 matmul forward+backward (BLAS-bound), target <= 1.1x torch
- a deep chain of 10,000 ops forward+backward, target <= 0.5x torch
"""
import gc
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

if __name__ == "__main__":
    common.native_blas()

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402
from common import median_time, report  # noqa: E402

# Importing torch puts ~150k Python objects in this process that a program using ember alone
# never has. Python's cyclic GC rescans all of them each time a growing ember graph triggers a
# full collection (torch's own graph lives in C++ and never does). Freezing what the imports
# made removes that cost of the side-by-side setup; `--no-freeze` shows it.
if "--no-freeze" not in sys.argv:
    gc.freeze()


def add_no_grad(T):
    a, b = T.ones(1), T.ones(1)
    return lambda: a + b


def small_graph(T):
    rng = np.random.default_rng(0)
    xs = [T.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
          for _ in range(3)]

    def step():
        x, w, b = xs
        h = (x * w + b).tanh()
        y = (h * h).sum() + (x.exp() * w).mean()
        y.backward()
    return step


def matmul_512(T):
    rng = np.random.default_rng(0)
    a = T.tensor(rng.standard_normal((512, 512)).astype(np.float32), requires_grad=True)
    b = T.tensor(rng.standard_normal((512, 512)).astype(np.float32), requires_grad=True)

    def step():
        (a @ b).sum().backward()
    return step


def deep_chain(T, n=10_000):
    x = T.ones(4, requires_grad=True)

    def step():
        y = x
        for _ in range(n):
            y = y * 1.0001
        y.sum().backward()
    return step


def main():
    rows = []
    for name, make, target, repeat in [
        ("a + b, 1 element, no grad", add_no_grad, 1.5, 9),
        ("small graph fwd+bwd, 16 elements", small_graph, 0.6, 9),
        ("matmul 512x512 fwd+bwd", matmul_512, 1.1, 7),
        ("deep chain 10k ops fwd+bwd", deep_chain, 0.5, 5),
    ]:
        e = median_time(make(ember), repeat=repeat)
        t = median_time(make(torch), repeat=repeat)
        rows.append((name, e, t, target))
    frozen = "--no-freeze" not in sys.argv
    report(rows, f"ember vs torch {torch.__version__} (median of repeated runs; import-time "
                 f"objects {'frozen' if frozen else 'NOT frozen'} for the GC)")


if __name__ == "__main__":
    main()
