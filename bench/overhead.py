"""Per-op overhead of ember on the tiny MLP's training step.

    python bench/overhead.py [--py-spy PATH] [--steps N] [--seconds S] [--top N]

The step is bench/models.py's tiny MLP (2-32-32-32-1, tanh, batch 32, MSE, Adam), one thread.
Printed:
- the step time: median over blocks of steps, in CPU time of this process (time.process_time:
  less disturbed than wall time on a shared machine);
- the recorded nodes per step: every node of the loss's graph, AccumulateGrad included (the
  graph's ops plus one accumulator per parameter);
- the share of the step spent inside array kernels: py-spy samples the step with --native
  (it sees into C code, cProfile does not); a sample counts as kernel time when its innermost
  frame is NumPy's or BLAS's C code (or libc/libm called from there, e.g. memcpy);
- per op = (step time - time inside kernels) / nodes: what the Python around the kernels costs
  per recorded op, module calls, Adam.step and zero_grad included.

py-spy must be installed (a separate venv is fine: --py-spy /path/to/py-spy); it launches this
script itself (`py-spy record --native -- python bench/overhead.py --worker`), since attaching
to a running process is not allowed everywhere. Without py-spy only the step time and the node
count are printed.
"""
import collections
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

# innermost native frames that count as "inside an array kernel"
_KERNEL_LIBS = ("_multiarray_umath", "openblas", "_umath_linalg", "libm.so", "_ml_dtypes_ext")
# native frames that count only when called from a kernel frame (memcpy, malloc, ...)
_HELPER_LIBS = ("libc.so",)
_STEP_FRAME = re.compile(r"(tiny_mlp.<locals>.)?step \((.*/)?models\.py:")   # the step function's frame


def build():
    """ember's tiny MLP, its optimizer, its step function and its batch (bench/models.py)."""
    common.set_threads_env(1)
    import ember
    import models
    common.limit_threads(1)
    model, make_opt, step = models.tiny_mlp(ember)
    return ember, model, make_opt(model), step, models.train_batch(ember, "mlp")


def count_nodes(loss):
    """Every node reachable from the loss's grad_fn (each counted once)."""
    seen = set()
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(fn for fn, _ in node.next_functions)
    return len(seen)


def step_time(step, model, opt, batch, steps, blocks=15):
    """Median CPU seconds per step over `blocks` blocks of `steps` // blocks steps."""
    n = max(1, steps // blocks)
    times = []
    for _ in range(blocks):
        start = time.process_time()
        for _ in range(n):
            step(model, opt, batch)
        times.append((time.process_time() - start) / n)
    return statistics.median(times)


def worker(seconds):
    """Run steps for `seconds` of CPU time (py-spy samples this process)."""
    _, model, opt, step, batch = build()
    for _ in range(20):
        step(model, opt, batch)
    end = time.process_time() + seconds
    while time.process_time() < end:
        step(model, opt, batch)


def kernel_share(raw_path):
    """(kernel samples, all samples, {Python function: samples outside kernels}) among the
    samples taken inside the step function."""
    kernel = total = 0
    python_self = collections.Counter()
    for line in open(raw_path):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if not any(_STEP_FRAME.match(f) for f in frames):
            continue        # imports, warmup set-up, the timing loop itself
        total += int(count)
        if _is_kernel(frames):
            kernel += int(count)
        else:
            python_self[_innermost_python(frames)] += int(count)
    return kernel, total, python_self


def _library(frame):
    m = re.search(r"\(([^()]*)\)$", frame)
    return m.group(1) if m else ""


def _innermost_python(frames):
    """The innermost frame that is Python code (`function (file.py:line)`), line dropped."""
    for frame in reversed(frames):
        m = re.match(r"(.*) \((.*\.py):\d+\)$", frame)
        if m:
            return f"{m.group(1)} ({m.group(2)})"
    return frames[-1]


def _is_kernel(frames):
    for frame in reversed(frames):
        lib = _library(frame)
        if any(k in lib for k in _HELPER_LIBS):
            continue                        # look at who called it
        return any(k in lib for k in _KERNEL_LIBS)
    return False


def main():
    steps = common.arg_value("--steps", 3000)
    seconds = common.arg_value("--seconds", 8)
    ember, model, opt, step, batch = build()
    for _ in range(50):
        step(model, opt, batch)
    x, y = batch
    nodes = count_nodes(ember.nn.MSELoss()(model(x), y))       # the step's loss
    model.zero_grad()
    t = step_time(step, model, opt, batch, steps)
    print(f"tiny MLP step (ember, 1 thread): {t * 1e6:.1f} us CPU time per step "
          f"(median of blocks), {nodes} recorded nodes per step")
    spy = common.arg_value("--py-spy", None) or shutil.which("py-spy")
    if spy is None:
        print("py-spy not found (--py-spy PATH): no kernel share, no per-op figure")
        return
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "samples.txt")
        subprocess.run([spy, "record", "--native", "-r", "500", "-f", "raw", "-o", raw, "--",
                        sys.executable, os.path.abspath(__file__), "--worker",
                        "--seconds", str(seconds)], check=True, capture_output=True)
        kernel, total, python_self = kernel_share(raw)
    share = kernel / max(total, 1)
    per_op = t * (1 - share) / nodes
    print(f"inside array kernels: {share:.1%} of {total} samples in the step "
          f"({t * share * 1e6:.1f} us per step)")
    print(f"outside kernels: {t * (1 - share) * 1e6:.1f} us per step = {per_op * 1e6:.1f} us "
          f"per recorded node (target <= 4 us)")
    print("outside kernels, by innermost Python function (us per step):")
    for name, n in python_self.most_common(common.arg_value("--top", 15)):
        print(f"{t * n / total * 1e6:9.1f}  {name}")


if __name__ == "__main__":
    common.native_blas()
    if "--worker" in sys.argv:
        worker(float(common.arg_value("--seconds", 8)))
    else:
        main()
