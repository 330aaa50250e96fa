"""Training steps, ember vs torch in one process: `python bench/bench_nn.py`.

- MLP 784-256-128-10, batch 128, SGD with momentum: target <= 1.2x torch
- the seed notes' `Simple` net (two 3x3 convs, one Linear) on 8x3x10x10: target <= 1.5x
- LeNet-5 on 64 28x28 images: target <= 2.0x
- peak memory of the MLP loop (max RSS growth over the imports, each library in a fresh
  subprocess): ember's no higher than torch's
"""
import gc
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import ember  # noqa: E402
from common import median_time, report  # noqa: E402

if "--no-freeze" not in sys.argv:
    gc.freeze()     # see bench_core.py: torch's import-time objects are not ember's to scan


def copy_weights(src, dst):
    """torch module -> ember module (same architecture), through numpy."""
    state = {k: ember.tensor(v.detach().numpy()) for k, v in src.state_dict().items()}
    dst.load_state_dict(state)


def mlp(T):
    nn = T.nn
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def simple(T):
    nn = T.nn

    class Simple(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3, 1, padding=1, bias=False)
            self.conv2 = nn.Conv2d(16, 32, 3, 1, padding=1, bias=False)
            self.linear = nn.Linear(32 * 10 * 10, 20, bias=False)

        def forward(self, x):
            x = self.conv1(x)
            x = self.conv2(x)
            return self.linear(x.view(x.size(0), -1))
    return Simple()


def lenet(T):
    nn = T.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


CASES = {
    "mlp": (mlp, (128, 784), 10, dict(lr=0.01, momentum=0.9)),
    "simple": (simple, (8, 3, 10, 10), 20, dict(lr=1.0)),
    "lenet": (lenet, (64, 1, 28, 28), 10, dict(lr=0.01, momentum=0.9)),
}


def make_step(T, case, torch_model=None):
    build, shape, classes, opt_args = CASES[case]
    rng = np.random.default_rng(0)
    x = T.tensor(rng.standard_normal(shape).astype(np.float32))
    y = T.tensor(rng.integers(0, classes, shape[0]))
    model = build(T)
    if torch_model is not None:
        copy_weights(torch_model, model)
    opt = T.optim.SGD(model.parameters(), **opt_args)
    loss_fn = T.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return step, model


def peak_rss_growth(lib, case="mlp", steps=30):
    """Max RSS growth (bytes) of `steps` training steps, in a fresh interpreter."""
    code = (f"import resource, sys; sys.path.insert(0, {os.path.dirname(__file__)!r});"
            f"import {lib}, bench_nn; "
            f"step, _ = bench_nn.make_step({lib}, {case!r}); "
            f"base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
            f"[step() for _ in range({steps})]; "
            f"print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return int(out.stdout.strip().splitlines()[-1])


def main():
    rows = []
    for case, target in (("mlp", 1.2), ("simple", 1.5), ("lenet", 2.0)):
        t_step, t_model = make_step(torch, case)
        e_step, _ = make_step(ember, case, torch_model=t_model)
        e = median_time(e_step, repeat=7)
        t = median_time(t_step, repeat=7)
        rows.append((f"{case} training step", e, t, target))
    report(rows, f"ember vs torch {torch.__version__}: training steps (median of repeated runs)")
    e_mem, t_mem = peak_rss_growth("ember"), peak_rss_growth("torch")
    print(f"\nMLP loop peak RSS growth: ember {e_mem / 2**20:.1f} MiB, torch "
          f"{t_mem / 2**20:.1f} MiB ({'ok' if e_mem <= t_mem else 'MISS'}: target ember <= torch)")


if __name__ == "__main__":
    main()
