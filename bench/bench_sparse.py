"""Sparse products, ember vs torch in one process: `python bench/bench_sparse.py [--threads N]`.

A GCN's products (pytorch/examples gcn, tkipf/pygcn): a Cora-sized normalised adjacency
(2708 nodes, ~13k entries with self-loops, a few nodes of high degree) times a 2708x16
hidden layer, forward and forward+backward (the dense operand's gradient, and the values'
gradient of a learnt adjacency); dense @ sparse; the first layer's sparse features (2708 x
1433, ~49k entries) times its weight; and a larger graph (20,000 nodes, ~200k entries, 64
features). Both libraries on one thread by default (torch's sparse kernels are serial per
row anyway). Target: ember <= 1.5x torch. Sums are bit for bit torch's in every row here
(tests/test_sparse_products.py), so both compute the same thing.
"""
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

if __name__ == "__main__":
    common.native_blas()
    common.set_threads_env(common.arg_value("--threads", 1))

import gc  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402
from common import median_time, report  # noqa: E402

warnings.filterwarnings("ignore", "Sparse invariant checks")
gc.freeze()         # (torch's import-time objects out of the GC's scans: see bench_core.py)


def graph(n, edges, seed=0):
    """A symmetric graph with self-loops, degrees skewed as a citation graph's (a few hubs),
    normalised as a GCN does: D^-1/2 (A + I) D^-1/2, as (indices, float32 values)."""
    rng = np.random.default_rng(seed)
    weight = 1.0 / np.arange(1, n + 1) ** 0.8          # hubs: a power law of popularity
    src = rng.integers(0, n, edges)
    dst = rng.choice(n, edges, p=weight / weight.sum())
    keep = src != dst
    pairs = np.unique(np.concatenate([np.stack([src[keep], dst[keep]]),
                                      np.stack([dst[keep], src[keep]]),
                                      np.stack([np.arange(n)] * 2)], axis=1), axis=1)
    degree = np.bincount(pairs[0], minlength=n).astype(np.float64)
    values = 1 / np.sqrt(degree[pairs[0]] * degree[pairs[1]])
    return pairs, values.astype(np.float32)


def features(n, f, per_row, seed=1):
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), per_row)
    cols = rng.integers(0, f, rows.size)
    pairs = np.unique(np.stack([rows, cols]), axis=1)
    return pairs, np.ones(pairs.shape[1], np.float32)


CORA = graph(2708, 5278)
BIG = graph(20_000, 100_000, seed=2)
CORA_FEATURES = features(2708, 1433, 18)


def sparse(T, pattern, n_cols=None, values=None):
    idx, vals = pattern
    shape = (int(idx[0].max()) + 1, n_cols or int(idx[1].max()) + 1)
    return T.sparse_coo_tensor(T.tensor(idx), values if values is not None else T.tensor(vals),
                               shape).coalesce()


def dense(T, *shape, grad=False):
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    return T.tensor(x, requires_grad=grad)


def forward(pattern, f):
    def make(T):
        a = sparse(T, pattern)
        x = dense(T, a.shape[1], f)
        return lambda: T.mm(a, x)
    return make


def forward_backward(pattern, f, n_cols=None):
    def make(T):
        a = sparse(T, pattern, n_cols)
        x = dense(T, a.shape[1], f, grad=True)

        def step():
            T.mm(a, x).sum().backward()
        return step
    return make


def values_gradient(pattern, f):
    # a learnt adjacency: the sparse tensor made from its values each step (torch's pattern)
    def make(T):
        idx, vals = pattern
        v = T.tensor(vals, requires_grad=True)
        i = T.tensor(idx)
        n = int(idx.max()) + 1
        x = dense(T, n, f, grad=True)

        def step():
            T.mm(T.sparse_coo_tensor(i, v, (n, n)), x).sum().backward()
        return step
    return make


def dense_at_sparse(pattern, f):
    def make(T):
        a = sparse(T, pattern)
        x = dense(T, f, a.shape[0], grad=True)

        def step():
            (x @ a).sum().backward()
        return step
    return make


def main():
    threads = common.arg_value("--threads", 1)
    common.limit_threads(threads, torch)
    rows = []
    for name, make, repeat in [
        ("Cora adj @ 2708x16", forward(CORA, 16), 9),
        ("Cora adj @ 2708x16 fwd+bwd", forward_backward(CORA, 16), 9),
        ("Cora adj(values) @ x fwd+bwd", values_gradient(CORA, 16), 7),
        ("16x2708 @ Cora adj fwd+bwd", dense_at_sparse(CORA, 16), 9),
        ("Cora features @ 1433x16 fwd+bwd", forward_backward(CORA_FEATURES, 16, 1433), 7),
        ("20k-node adj @ 20000x64 fwd+bwd", forward_backward(BIG, 64), 5),
    ]:
        e = median_time(make(ember), repeat=repeat)
        t = median_time(make(torch), repeat=repeat)
        rows.append((name, e, t, 1.5))
    report(rows, f"sparse products, ember vs torch {torch.__version__}, {threads} thread(s) "
                 f"(median of repeated runs); Cora: {CORA[0].shape[1]} entries, 20k graph: "
                 f"{BIG[0].shape[1]}")


if __name__ == "__main__":
    main()
