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

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

if __name__ == "__main__":
    common.native_blas()

import torch  # noqa: E402

import ember  # noqa: E402
from common import median_time, report  # noqa: E402
from models import make_step  # noqa: E402

if "--no-freeze" not in sys.argv:
    gc.freeze()     # see bench_core.py: torch's import-time objects are not ember's to scan


def peak_rss_growth(lib, case="mlp", steps=30):
    """Peak resident memory growth (bytes) over `steps` training steps, sampled every
    millisecond, in a fresh interpreter that imports only `lib`."""
    code = f"""
import sys, threading, time
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
import {lib}, models

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

step, _ = models.make_step({lib}, {case!r})
base, peak, done = rss(), [0], []

def sample():
    while not done:
        peak[0] = max(peak[0], rss())
        time.sleep(0.001)

t = threading.Thread(target=sample)
t.start()
for _ in range({steps}):
    step()
done.append(1)
t.join()
print(max(peak[0], rss()) - base)
"""
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
