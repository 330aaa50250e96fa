"""Random draws, ember vs torch in one process (medians): `python bench/bench_random.py`.

Both sides draw from a seeded generator of their own (ember's: ember._generator.Generator,
torch's stream bit for bit), so the numbers compare the same amount of work.

- the recipes (ember/_random_recipes.py, NumPy arrays out) against torch's ops
- the public ops (ember.rand, ember.randn, ...) against torch's
Targets (issue 15): rand / randn of 1e6 float32 and a small draw's per-call cost <= 1.5x torch.
float32 randn of 16+ values is bit-exact and misses its target (~8x torch's CPU time): torch's
vectorised logf/sincosf take 16 fused multiply-adds, each one AVX instruction there and four
NumPy passes here (widen, multiply, add, round back), besides ~40 plain passes.
Small draws are served from a block of words converted once per twist block (_generator.py).
The machine is shared: read the numbers with `uptime` (wall-clock medians; the last table is
CPU time, which the other jobs disturb less).
"""
import os
import statistics
import sys
import time
import timeit

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

if __name__ == "__main__":
    common.native_blas()

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402
from common import median_time, report  # noqa: E402
from ember import _random_recipes as R  # noqa: E402
from ember._generator import Generator  # noqa: E402

M = 1_000_000


def recipe_rows(g, tg):
    f32, f64, i64 = np.float32, np.float64, np.int64
    alphas = np.linspace(0.1, 20, 10_000)
    counts, probs = np.full(10_000, 50.0), np.linspace(0.01, 0.99, 10_000)
    cases = [
        ("rand 1e6 (recipe)", lambda: R.uniform(g, (M,), f32),
         lambda: torch.rand(M, generator=tg), 1.5),
        ("randn 1e6 (recipe)", lambda: R.normal(g, (M,), f32),
         lambda: torch.randn(M, generator=tg), 1.5),
        ("rand 1e6 float64 (recipe)", lambda: R.uniform(g, (M,), f64),
         lambda: torch.rand(M, generator=tg, dtype=torch.float64), None),
        ("randn 1e6 float64 (recipe)", lambda: R.normal(g, (M,), f64),
         lambda: torch.randn(M, generator=tg, dtype=torch.float64), None),
        ("randn 1e6 strided (recipe)", lambda: R.normal(g, (M,), f32, contiguous=False),
         lambda: torch.empty(M, 2)[:, 0].normal_(generator=tg), None),
        ("randint 1e6 (recipe)", lambda: R.random_range(g, (M,), i64, 0, 10),
         lambda: torch.randint(0, 10, (M,), generator=tg), None),
        ("randperm 1e6 (recipe)", lambda: R.randperm(g, M, i64),
         lambda: torch.randperm(M, generator=tg), None),
        ("bernoulli 1e6 p=0.5 (recipe)", lambda: R.bernoulli_scalar(g, (M,), 0.5),
         lambda: torch.empty(M).bernoulli_(0.5, generator=tg), None),
        ("_standard_gamma 1e4 (recipe)", lambda: R.standard_gamma(g, alphas),
         lambda: torch._standard_gamma(torch.from_numpy(alphas), generator=tg), None),
        ("binomial 1e4 (recipe)", lambda: R.binomial(g, counts, probs),
         lambda: torch.binomial(torch.from_numpy(counts), torch.from_numpy(probs),
                                generator=tg), None),
        ("rand 3 (recipe)", lambda: R.uniform(g, (3,), f32),
         lambda: torch.rand(3, generator=tg), 1.5),
        ("randn 3 (recipe)", lambda: R.normal(g, (3,), f32),
         lambda: torch.randn(3, generator=tg), 1.5),
    ]
    return [(name, median_time(e), median_time(t), target) for name, e, t, target in cases]


def op_rows():
    cases = [
        ("ember.rand(1e6)", lambda: ember.rand(M), lambda: torch.rand(M), 1.5),
        ("ember.randn(1e6)", lambda: ember.randn(M), lambda: torch.randn(M), 1.5),
        ("ember.randn(1e6, float64)", lambda: ember.randn(M, dtype=ember.float64),
         lambda: torch.randn(M, dtype=torch.float64), None),
        ("ember.randperm(1e6)", lambda: ember.randperm(M), lambda: torch.randperm(M), None),
        ("ember.rand(3)", lambda: ember.rand(3), lambda: torch.rand(3), 1.5),
        ("ember.randn(3)", lambda: ember.randn(3), lambda: torch.randn(3), 1.5),
        ("ember.randint(0, 10, (3,))", lambda: ember.randint(0, 10, (3,)),
         lambda: torch.randint(0, 10, (3,)), 1.5),
    ]
    return [(name, median_time(e), median_time(t), target) for name, e, t, target in cases]


def cpu_time_pairs(e, t, rounds=21, number=5000):
    """Per-call CPU time (time.process_time: the other jobs of a shared machine count less
    than in wall-clock time), ember and torch measured in alternating rounds; the medians."""
    es, ts = [], []
    for _ in range(rounds):
        es.append(timeit.Timer(e, timer=time.process_time).timeit(number) / number)
        ts.append(timeit.Timer(t, timer=time.process_time).timeit(number) / number)
    return statistics.median(es), statistics.median(ts)


def small_cpu_rows():
    cases = [
        ("ember.rand(3)", lambda: ember.rand(3), lambda: torch.rand(3), 1.5),
        ("ember.randn(3)", lambda: ember.randn(3), lambda: torch.randn(3), 1.5),
        ("ember.randn(3, float64)", lambda: ember.randn(3, dtype=ember.float64),
         lambda: torch.randn(3, dtype=torch.float64), None),
        ("ember.randint(0, 10, (3,))", lambda: ember.randint(0, 10, (3,)),
         lambda: torch.randint(0, 10, (3,)), 1.5),
        ("empty(3).normal_()", lambda: ember.empty(3).normal_(),
         lambda: torch.empty(3).normal_(), None),
    ]
    return [(name, *cpu_time_pairs(e, t), target) for name, e, t, target in cases]


if __name__ == "__main__":
    torch.set_num_threads(1)        # ember draws on one thread; torch's sampling is serial too
    g, tg = Generator(), torch.Generator()
    g.manual_seed(0)
    tg.manual_seed(0)
    report(recipe_rows(g, tg), "random recipes (ember._random_recipes) vs torch ops")
    report(op_rows(), "random ops vs torch")
    report(small_cpu_rows(), "small draws, CPU time per call (medians of alternating rounds)")
