"""How fast can a define-by-run autograd in Python go? `python bench/lean_floor.py`

The core targets (`bench_core.py`) ask ember for a fraction of torch's time on graphs of tiny
tensors, where all time is per-op overhead. This script measures the floor under those targets:
the leanest autograd we could write in Python on NumPy, doing only what these two graphs need:
no dtypes or devices, no checks, no version counters, no hooks, no grad modes, no broadcasting
of gradients. It is a yardstick, not a library: everything ember adds to it is what makes
`import ember as torch` behave as torch does.

Printed: the floor's times next to ember's and torch's, and each as a ratio of torch's.
"""
import gc
import heapq
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

if __name__ == "__main__":
    common.native_blas()

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402
from bench_core import deep_chain, small_graph  # noqa: E402
from common import fmt, median_time  # noqa: E402

_creation = itertools.count()


class Value:
    """A tensor: its array, whether it needs a gradient, the node that made it, its gradient."""
    __slots__ = ("data", "requires_grad", "node", "grad", "leaf_node")

    def __init__(self, data, requires_grad=False):
        self.data, self.requires_grad = data, requires_grad
        self.node = self.grad = self.leaf_node = None


class Node:
    """A recorded op: where its inputs' gradients go, and what its derivative reads."""
    __slots__ = ("inputs", "order", "saved", "derivative")


class Leaf:
    """Where a leaf's gradient is accumulated."""
    __slots__ = ("value", "inputs")


def _edge(v):
    if v.node is not None:
        return v.node
    if v.leaf_node is None:
        leaf = v.leaf_node = Leaf()
        leaf.value, leaf.inputs = v, ()
    return v.leaf_node


def _record(data, inputs, saved, derivative):
    out = Value(data, True)
    node = out.node = Node()
    node.inputs = tuple(_edge(x) if x.requires_grad else None for x in inputs)
    node.order, node.saved, node.derivative = next(_creation), saved, derivative
    return out


def mul(a, b):
    return _record(a.data * b.data, (a, b), (a.data, b.data), lambda g, s: (g * s[1], g * s[0]))


def mul_number(a, c):
    return _record(a.data * c, (a,), c, lambda g, c: (g * c,))


def add(a, b):
    return _record(a.data + b.data, (a, b), None, lambda g, s: (g, g))


def tanh(a):
    y = np.tanh(a.data)
    return _record(y, (a,), y, lambda g, y: (g * (1 - y * y),))


def exp(a):
    y = np.exp(a.data)
    return _record(y, (a,), y, lambda g, y: (g * y,))


def sum_all(a):
    return _record(np.add.reduce(a.data), (a,), a.data.shape,
                   lambda g, shape: (np.broadcast_to(g, shape),))


def mean_all(a):
    return _record(np.add.reduce(a.data) / a.data.size, (a,), a.data.shape,
                   lambda g, shape: (np.broadcast_to(g / np.prod(shape), shape),))


def backward(y):
    """Dependency-counted walk, newest node first (as torch and ember order it)."""
    pending = {y.node: 0}
    stack = [y.node]
    while stack:
        for child in stack.pop().inputs:
            if child is not None:
                if child in pending:
                    pending[child] += 1
                else:
                    pending[child] = 1
                    stack.append(child)
    grads = {y.node: np.ones((), y.data.dtype)}
    tie = itertools.count()
    ready = [(0, 0, y.node)]
    while ready:
        node = heapq.heappop(ready)[2]
        g = grads.pop(node)
        if node.__class__ is Leaf:
            v = node.value
            v.grad = g if v.grad is None else v.grad + g
            continue
        outputs = node.derivative(g, node.saved)
        node.saved = None
        for child, gi in zip(node.inputs, outputs):
            if child is None:
                continue
            grads[child] = gi if child not in grads else grads[child] + gi
            pending[child] -= 1
            if pending[child] == 0:
                key = -1 if child.__class__ is Leaf else -child.order
                heapq.heappush(ready, (key, next(tie), child))


def floor_small_graph():
    rng = np.random.default_rng(0)
    x, w, b = [Value(rng.standard_normal(16).astype(np.float32), True) for _ in range(3)]

    def step():
        h = tanh(add(mul(x, w), b))
        backward(add(sum_all(mul(h, h)), mean_all(mul(exp(x), w))))
    return step


def floor_deep_chain(n=10_000):
    x = Value(np.ones(4, np.float32), True)

    def step():
        y = x
        for _ in range(n):
            y = mul_number(y, 1.0001)
        backward(sum_all(y))
    return step


def main():
    gc.freeze()         # as bench_core.py does (see the reason there)
    print(f"\nthe leanest Python autograd vs ember and torch {torch.__version__} (medians)")
    print(f"{'benchmark':<30}{'floor':>11}{'ember':>11}{'torch':>11}"
          f"{'floor/torch':>13}{'ember/torch':>13}{'target':>8}")
    for name, floor, make, target, repeat in [
        ("small graph fwd+bwd", floor_small_graph, small_graph, 0.6, 9),
        ("deep chain 10k ops fwd+bwd", floor_deep_chain, deep_chain, 0.5, 5),
    ]:
        f = median_time(floor(), repeat=repeat)
        e = median_time(make(ember), repeat=repeat)
        t = median_time(make(torch), repeat=repeat)
        print(f"{name:<30}{fmt(f):>11}{fmt(e):>11}{fmt(t):>11}{f / t:>12.2f}x"
              f"{e / t:>12.2f}x{'<=' + str(target):>8}")


if __name__ == "__main__":
    main()
