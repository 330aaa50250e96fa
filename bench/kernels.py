"""Isolated kernels, ember vs torch in one process: `python bench/kernels.py [--threads N]
[--only optim|ops] [-k NAME]`.

Forward+backward of the building blocks the benchmark networks spend their time in (exact
GELU, embedding backward, layer_norm, softmax, log_softmax, cross_entropy, sigmoid, nn.LSTM,
conv2d (both MNIST CNN layers), dropout, max_pool2d, an LSTM step's matrix product: compare --threads 1 and 2), and optimizer steps (and clip_grad_norm_) over ~20 and ~100 parameters shaped like a
small model's (weight matrices and biases), and each benchmark network's update (clip, step).
Medians of repeated runs; speed only, no targets.
"""
import gc
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

if __name__ == "__main__":
    common.native_blas()
    common.set_threads_env(common.arg_value("--threads", 1))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402
from common import fmt, median_time  # noqa: E402

if "--no-freeze" not in sys.argv:
    gc.freeze()     # see bench_core.py


def _rand(shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def fwd_bwd(T, make):
    """A step: forward with fresh grads, then backward of the output's sum-like loss."""
    inputs, fn = make(T)

    def run():
        for x in inputs:
            x.grad = None
        out = fn(*inputs)
        out.backward(T.ones_like(out)) if out.dim() else out.backward()
    return run


def kernel_cases():
    B, L, C = 16, 64, 128

    def gelu(T):
        x = T.tensor(_rand((B, L, 4 * C)), requires_grad=True)
        return [x], lambda x: T.nn.functional.gelu(x)

    def embedding(T):
        w = T.tensor(_rand((1000, C)), requires_grad=True)
        idx = T.tensor(np.random.default_rng(1).integers(0, 1000, (B, L)))
        return [w], lambda w: T.nn.functional.embedding(idx, w)

    def layer_norm(T):
        x = T.tensor(_rand((B, L, C)), requires_grad=True)
        w = T.tensor(_rand(C, 1), requires_grad=True)
        b = T.tensor(_rand(C, 2), requires_grad=True)
        return [x, w, b], lambda x, w, b: T.nn.functional.layer_norm(x, (C,), w, b)

    def softmax(T):
        x = T.tensor(_rand((B, 4, L, L)), requires_grad=True)
        return [x], lambda x: T.softmax(x, -1)

    def log_softmax(T):
        x = T.tensor(_rand((B * L, 65)), requires_grad=True)
        return [x], lambda x: T.log_softmax(x, -1)

    def cross_entropy(T):
        x = T.tensor(_rand((B * L, 65)), requires_grad=True)
        y = T.tensor(np.random.default_rng(1).integers(0, 65, B * L))
        return [x], lambda x: T.nn.functional.cross_entropy(x, y)

    def sigmoid(T):
        x = T.tensor(_rand((35 * 20, 800)), requires_grad=True)
        return [x], lambda x: T.sigmoid(x)

    def lstm(T):
        T.manual_seed(0)
        m = T.nn.LSTM(200, 200, 2)
        x = T.tensor(_rand((35, 20, 200)), requires_grad=True)
        return [x], lambda x: m(x)[0]

    def conv2d(T):
        x = T.tensor(_rand((64, 32, 26, 26)), requires_grad=True)
        w = T.tensor(_rand((64, 32, 3, 3), 1, 0.1), requires_grad=True)
        b = T.tensor(_rand(64, 2), requires_grad=True)
        return [x, w, b], lambda x, w, b: T.nn.functional.conv2d(x, w, b)

    def conv2d_first(T):    # the MNIST CNN's first convolution: one input channel
        x = T.tensor(_rand((64, 1, 28, 28)), requires_grad=True)
        w = T.tensor(_rand((32, 1, 3, 3), 1, 0.3), requires_grad=True)
        b = T.tensor(_rand(32, 2), requires_grad=True)
        return [x, w, b], lambda x, w, b: T.nn.functional.conv2d(x, w, b)

    def conv2d_padded(T):   # a VGG-style 3x3 layer, padding 1 (a small image: direct GEMMs)
        x = T.tensor(_rand((32, 64, 16, 16)), requires_grad=True)
        w = T.tensor(_rand((64, 64, 3, 3), 1, 0.05), requires_grad=True)
        b = T.tensor(_rand(64, 2), requires_grad=True)
        return [x, w, b], lambda x, w, b: T.nn.functional.conv2d(x, w, b, padding=1)

    def dropout(T):         # the MNIST CNN's first dropout (the noise is drawn each call)
        x = T.tensor(_rand((64, 9216)), requires_grad=True)
        return [x], lambda x: T.nn.functional.dropout(x, 0.25)

    def max_pool2d(T):      # the MNIST CNN's pooling
        x = T.tensor(_rand((64, 64, 24, 24)), requires_grad=True)
        return [x], lambda x: T.nn.functional.max_pool2d(x, 2)

    def mm(T):      # an LSTM step's product: BLAS splits it, ember keeps it on one thread
        h = T.tensor(_rand((20, 200)), requires_grad=True)
        w = T.tensor(_rand((800, 200), 1, 0.1), requires_grad=True)
        return [h, w], lambda h, w: h.mm(w.t())

    return {"gelu exact (16x64x512)": gelu, "embedding 1000x128, 16x64 ids": embedding,
            "layer_norm 16x64x128": layer_norm, "softmax 16x4x64x64": softmax,
            "log_softmax 1024x65": log_softmax, "cross_entropy 1024x65": cross_entropy,
            "sigmoid 700x800": sigmoid, "nn.LSTM 2x200, seq 35, batch 20": lstm,
            "conv2d 64x32x26x26, 64 3x3": conv2d, "conv2d 64x1x28x28, 32 3x3": conv2d_first,
            "conv2d 32x64x16x16, 64 3x3, pad 1": conv2d_padded,
            "dropout 64x9216, p 0.25": dropout, "max_pool2d 64x64x24x24, 2": max_pool2d,
            "mm 20x200 @ 200x800": mm}


# ----------------------------------------------------------------------------- optimizers
def param_shapes(n):
    """n parameter shapes like a small model's: alternating 128x128 weights and 128 biases,
    with a 1000x128 embedding first."""
    shapes = [(1000, 128)]
    while len(shapes) < n:
        shapes.append((128, 128) if len(shapes) % 2 else (128,))
    return shapes


OPTIMIZERS = {
    "SGD momentum": ("SGD", dict(lr=0.1, momentum=0.9)),
    "SGD nesterov wd": ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)),
    "Adam": ("Adam", dict(lr=1e-3)),
    "AdamW": ("AdamW", dict(lr=1e-3, weight_decay=0.1)),
    "Adam amsgrad": ("Adam", dict(lr=1e-3, amsgrad=True)),
    "Adadelta": ("Adadelta", dict(lr=1.0)),
    "RMSprop": ("RMSprop", dict(lr=1e-3)),
    "Adagrad": ("Adagrad", dict(lr=1e-2)),
}


def optimizer_step(T, name, kw, n):
    shapes = param_shapes(n)
    params = [T.tensor(_rand(s, i, 0.1), requires_grad=True) for i, s in enumerate(shapes)]
    for i, p in enumerate(params):
        p.grad = T.tensor(_rand(p.shape, 1000 + i, 0.01))
    opt = getattr(T.optim, name)(params, **kw)
    return opt.step


def clip_step(T, n):
    shapes = param_shapes(n)
    params = [T.tensor(_rand(s, i, 0.1), requires_grad=True) for i, s in enumerate(shapes)]
    for i, p in enumerate(params):
        p.grad = T.tensor(_rand(p.shape, 1000 + i, 0.01))
    return lambda: T.nn.utils.clip_grad_norm_(params, 1e9)   # (norm below: grads unchanged)


def model_update(T, name):
    """The optimizer part of a benchmark network's step (bench/models.py): clip_grad_norm_
    where its program clips, then opt.step(), over the network's own parameters."""
    import models
    T.manual_seed(0)
    model, make_opt, _ = models.TRAIN_MODELS[name][1](T)
    params = list(model.parameters())
    for i, p in enumerate(params):
        p.grad = T.tensor(_rand(tuple(p.shape), 1000 + i, 0.01))
    opt = make_opt(model)
    clip = {"gpt": 1.0, "lstm": 0.25}.get(name)

    def update():
        if clip is not None:
            T.nn.utils.clip_grad_norm_(params, clip)
        opt.step()
    return update, len(params)


def row(name, e, t):
    print(f"{name:<40}{fmt(e):>12}{fmt(t):>12}{e / t:>12.2f}x", flush=True)


def main():
    only = common.arg_value("--only", None)
    pick = common.arg_value("-k", None)
    print(f"ember vs torch {torch.__version__}, {torch.get_num_threads()} thread(s); "
          f"{common.blas_description()}")
    print(f"{'kernel (forward+backward)':<40}{'ember':>12}{'torch':>12}{'ember/torch':>13}")
    if only in (None, "ops"):
        for name, make in kernel_cases().items():
            if pick and pick not in name:
                continue
            row(name, median_time(fwd_bwd(ember, make), repeat=5),
                median_time(fwd_bwd(torch, make), repeat=5))
    if only in (None, "optim"):
        for n in (20, 100):
            size = sum(int(np.prod(s)) for s in param_shapes(n))
            print(f"\noptimizer step, {n} parameters ({size / 1e6:.2f} M values)")
            for label, (name, kw) in OPTIMIZERS.items():
                if pick and pick not in label:
                    continue
                row(f"{label} ({n} params)", median_time(optimizer_step(ember, name, kw, n)),
                    median_time(optimizer_step(torch, name, kw, n)))
            if not pick or pick in "clip_grad_norm_":
                row(f"clip_grad_norm_ ({n} params)", median_time(clip_step(ember, n)),
                    median_time(clip_step(torch, n)))
        print("\nthe benchmark networks' updates (clip_grad_norm_ where clipped, opt.step)")
        for name in ("gpt", "lstm", "cnn", "mlp"):
            if pick and pick not in name:
                continue
            e, n = model_update(ember, name)
            t, _ = model_update(torch, name)
            row(f"{name} update ({n} params)", median_time(e), median_time(t))


if __name__ == "__main__":
    main()
