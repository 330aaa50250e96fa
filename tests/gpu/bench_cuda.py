"""ember on CUDA vs torch on CUDA: seconds per step, and their ratio (ember / torch).

    python tests/gpu/bench_cuda.py --out gpu-out/bench.json [--budget 150]
    python tests/gpu/bench_cuda.py --fake --small      # the script's logic, on the CPU stand-in

Cases: 4096x4096 matmul forward+backward in float32 and bfloat16; the MLP and CNN training
steps of bench/ (bench/models.py: tiny MLP with Adam, MNIST CNN with Adadelta); a GPT step
(bench/models.py's char GPT: batch 16, block 256, 6 layers, 6 heads, 384 wide, AdamW, clip).
Both libraries run in this one process, one after the other, each with the same weights and
batch; every timing ends with a device synchronize. The first steps (CuPy compiles its kernels
on first use) are warm-up and timed separately. A case that fails records its error and the
rest go on; the JSON is rewritten after every case, so a run cut short keeps what it measured.
"""
import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [ROOT, os.path.join(ROOT, "bench"), os.path.join(ROOT, "tests")]

import torch  # noqa: E402

import ember  # noqa: E402
import models  # noqa: E402  (bench/models.py)


def sync(lib):
    if lib is torch:
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    else:
        ember.cuda.synchronize()


def timed(lib, step, warmup, budget):
    """(warm-up seconds, median seconds per step) of step(), within about `budget` seconds."""
    t0 = time.perf_counter()
    for _ in range(warmup):
        step()
    sync(lib)
    first = time.perf_counter() - t0
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < budget and len(times) < 50):
        t = time.perf_counter()
        step()
        sync(lib)
        times.append(time.perf_counter() - t)
        if time.perf_counter() - start > 2 * budget:
            break
    return first, float(np.median(times))


# ----------------------------------------------------------------------------- cases
def matmul_case(n, dtype):
    def make(lib, device):
        rng = np.random.default_rng(0)
        a = lib.tensor(rng.standard_normal((n, n)).astype(np.float32), device=device)
        b = lib.tensor(rng.standard_normal((n, n)).astype(np.float32), device=device)
        a = a.to(getattr(lib, dtype)).requires_grad_()
        b = b.to(getattr(lib, dtype)).requires_grad_()
        g = lib.ones(n, n, dtype=getattr(lib, dtype), device=device)

        def step():
            a.grad = b.grad = None
            (a @ b).backward(g)
        return step
    return make


def train_case(name, **config):
    build = {"mlp": models.tiny_mlp, "cnn": models.mnist_cnn, "gpt": models.char_gpt}[name]

    def make(lib, device, weights=None):
        lib.manual_seed(0)
        model, make_opt, step_fn = build(lib, **config)
        if weights is not None:
            model.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
        model = model.to(device)
        opt = make_opt(model)
        batch = [t.to(device) for t in batch_for(lib, name, config)]

        def step():
            step_fn(model, opt, batch)
        return step, model
    return make


def batch_for(lib, name, config):
    if name != "gpt":
        return models.train_batch(lib, name)
    rng = np.random.default_rng(0)
    block, vocab = config.get("block", 64), config.get("vocab", 65)
    ids = rng.integers(0, vocab, (16, block + 1))
    return lib.tensor(ids[:, :-1]), lib.tensor(ids[:, 1:])


def cases(small):
    n = 256 if small else 4096
    gpt = dict(block=32, n_layer=2, n_head=2, n_embd=64) if small else \
        dict(block=256, n_layer=6, n_head=6, n_embd=384)
    return {f"matmul{n}_float32_fwd_bwd": ("matmul", matmul_case(n, "float32")),
            f"matmul{n}_bfloat16_fwd_bwd": ("matmul", matmul_case(n, "bfloat16")),
            "train_mlp": ("train", train_case("mlp")),
            "train_cnn": ("train", train_case("cnn")),
            "train_gpt_b16_t{block}_l{n_layer}_d{n_embd}".format(**gpt):
                ("train", train_case("gpt", **gpt))}


def run_case(kind, make, torch_device, budget):
    result = {}
    if kind == "train":
        t_step, t_model = make(torch, torch_device)
        weights = {k: v.detach().cpu().numpy() for k, v in t_model.state_dict().items()}
        e_step, _ = make(ember, "cuda", weights)
    else:
        t_step, e_step = make(torch, torch_device), make(ember, "cuda")
    for lib, step in ((torch, t_step), (ember, e_step)):
        name = lib.__name__
        try:
            first, per_step = timed(lib, step, warmup=2, budget=budget)
            result[f"{name}_s"] = per_step
            result[f"{name}_warmup_s"] = first
        except Exception as err:
            result[f"{name}_error"] = f"{type(err).__name__}: {err}"
            traceback.print_exc()
    if "ember_s" in result and "torch_s" in result:
        result["ratio"] = result["ember_s"] / result["torch_s"]
    return result


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.path.join(os.environ.get("OUT", "gpu-out"),
                                                 "bench.json"))
    p.add_argument("--budget", type=float, default=150.0, help="seconds for all cases")
    p.add_argument("--fake", action="store_true", help="ember on the CPU stand-in for CuPy")
    p.add_argument("--small", action="store_true", help="small sizes (a check of the script)")
    p.add_argument("--only", help="run only the cases whose name contains this")
    args = p.parse_args(argv)
    if args.fake:
        import fake_cupy
        fake_cupy.install()
    torch_device = "cuda" if torch.cuda.is_available() else "cpu"
    selected = {k: v for k, v in cases(args.small).items() if not args.only or args.only in k}
    report = {"torch": torch.__version__, "torch_device": torch_device,
              "ember_backend": "fake_cupy" if args.fake else "cupy",
              "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
              "cases": {}}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    deadline = time.perf_counter() + args.budget
    for i, (name, (kind, make)) in enumerate(selected.items()):
        left = deadline - time.perf_counter()
        if left <= 0:
            report["cases"][name] = {"skipped": "out of the time budget"}
            continue
        per_case = left / (len(selected) - i) / 4         # each library's timing loop
        print(f"== {name} (about {4 * per_case:.0f}s)", flush=True)
        try:
            report["cases"][name] = run_case(kind, make, torch_device, per_case)
        except Exception as err:
            traceback.print_exc()
            report["cases"][name] = {"error": f"{type(err).__name__}: {err}"}
        print(json.dumps(report["cases"][name]), flush=True)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
