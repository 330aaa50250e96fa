"""The headline benchmark: one training step of the networks people train, ember vs torch.

    python bench/train_steps.py [--threads 1,2] [--models gpt,lstm,cnn,mlp] [--steps N]
                                [--rounds R]

Networks (bench/models.py, written as their public programs write them): a char-level GPT
(nanoGPT/minGPT), the word_language_model LSTM, the pytorch/examples MNIST CNN, a tiny MLP.
Each library runs in its own process per thread count (so neither's imports, allocator or
thread pools touch the other's numbers), with the OpenBLAS kernel pin unset (common.py) and
the thread count set through the environment before the imports, then threadpoolctl and
torch.set_num_threads. The torch process saves its initial weights to a .npz that the ember
process loads: the same weights, the same batch. Printed: median step time after warmup,
ember/torch, each process's peak RSS (ru_maxrss: the whole process, imports included), and
the first losses of both (eval-mode loss before training, then the first training steps'
losses for the networks without dropout), which should agree to ~1e-6.

--rounds R (default 1) runs the pair of processes R times in turn (torch, ember, torch, ...)
and prints the medians over the rounds: each time, the median of the rounds' step times, and
the ratio as the median of the rounds' own ratios, with their range. On a shared machine
whose speed drifts by tens of percent within minutes, a ratio taken from two processes that
ran side by side in time is the one that means something.
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

WARMUP = 3


def worker(lib, name, threads, weights, steps):
    """In a fresh process: build, load or save the weights, time `steps` steps; JSON out."""
    common.set_threads_env(threads)
    import numpy as np
    T = __import__(lib)
    common.limit_threads(threads, T if lib == "torch" else None)
    import models
    if lib == "torch":
        T.manual_seed(0)
    _, build = models.TRAIN_MODELS[name]
    model, make_opt, step = build(T)
    if lib == "torch":
        np.savez(weights, **{k: v.detach().numpy() for k, v in model.state_dict().items()})
    else:
        with np.load(weights) as saved:
            model.load_state_dict({k: T.tensor(saved[k]) for k in saved.files})
    batch = models.train_batch(T, name)
    has_dropout = any(type(m).__name__ == "Dropout" and m.p > 0 for m in model.modules())

    model.eval()                        # the first loss, dropout off
    with T.no_grad():
        losses = [_eval_loss(T, model, name, batch)]
    model.train()
    opt = make_opt(model)
    times = []
    for i in range(WARMUP + steps):
        start = time.perf_counter()
        loss = step(model, opt, batch)
        times.append(time.perf_counter() - start)
        if i < 3 and not has_dropout:
            losses.append(loss.item())
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(dict(median=statistics.median(times[WARMUP:]), peak_mib=peak_kib / 1024,
                          losses=losses, threads=T.get_num_threads())))


def _eval_loss(T, model, name, batch):
    F = T.nn.functional
    x, y = batch
    if name == "gpt":
        return model(x, y).item()
    if name == "lstm":
        out, _ = model(x, model.init_hidden(x.size(1)))
        return F.nll_loss(out, y).item()
    if name == "cnn":
        return F.nll_loss(model(x), y).item()
    return F.mse_loss(model(x), y).item()


def run_worker(lib, name, threads, weights, steps):
    env = dict(os.environ)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", lib, name, str(threads),
           weights, str(steps)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode:
        raise RuntimeError(f"{lib} {name} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    import models
    threads = [int(t) for t in str(common.arg_value("--threads", "1,2")).split(",")]
    names = str(common.arg_value("--models", ",".join(models.TRAIN_MODELS))).split(",")
    steps = common.arg_value("--steps", 20)
    rounds = common.arg_value("--rounds", 1)
    print("one training step, median of", steps, "steps after", WARMUP, "warmup; each library "
          "in its own process" + (f"; medians of {rounds} rounds" if rounds > 1 else ""))
    print(f"{'network':<58}{'thr':>4}{'torch':>11}{'ember':>11}{'e/t':>7}"
          f"{'RSS torch':>11}{'RSS ember':>11}  first losses agree"
          + ("  (e/t of the rounds)" if rounds > 1 else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            label, _ = models.TRAIN_MODELS[name]
            weights = os.path.join(tmp, name + ".npz")
            for n in threads:
                pairs = [(run_worker("torch", name, n, weights, steps),
                          run_worker("ember", name, n, weights, steps)) for _ in range(rounds)]
                t, e = pairs[0]
                diff = max(abs(a - b) / max(abs(a), 1e-12)
                           for a, b in zip(t["losses"], e["losses"]))
                agree = f"{'yes' if diff <= 1e-6 else 'NO'} (rel {diff:.1e}, " \
                        f"{len(t['losses'])} losses)"
                ratios = sorted(e["median"] / t["median"] for t, e in pairs)
                t_ms, e_ms = (statistics.median(p[k]["median"] for p in pairs) * 1e3
                              for k in (0, 1))
                spread = f"  ({ratios[0]:.2f}-{ratios[-1]:.2f}x)" if rounds > 1 else ""
                print(f"{label:<58}{n:>4}{t_ms:>9.2f}ms{e_ms:>9.2f}ms"
                      f"{statistics.median(ratios):>6.2f}x{t['peak_mib']:>8.0f}MiB"
                      f"{e['peak_mib']:>8.0f}MiB  {agree}{spread}", flush=True)


if __name__ == "__main__":
    common.native_blas()
    if "--worker" in sys.argv:
        i = sys.argv.index("--worker")
        lib, name, threads, weights, steps = sys.argv[i + 1:i + 6]
        worker(lib, name, int(threads), weights, int(steps))
    else:
        main()
