"""ember.distributed (MPI) vs torch.distributed (gloo): `python bench/bench_distributed.py`.

- all_reduce (SUM, float32) of 1 KB .. 64 MB between 2 processes: median milliseconds, and
  ember's time over torch's. Jobs of ember and torch alternate for ROUNDS rounds; a size's time
  is the median of the rounds' medians (the range of the per-round ratios is shown too), so
  one run under a burst of load elsewhere does not decide
- a DDP training step of a small CNN for one global batch of 64, in 1 and in 2 processes
  (each of 2 processes takes 32 samples), ember and torch, and DDP's overhead: how much
  longer the step is than the same step under `no_sync()` (no communication), measured
  interleaved in the same run

ember runs under its launcher (`python -m ember.distributed.run --nproc-per-node N`, which
starts the mpich wheel's mpiexec), torch under torch.multiprocessing with env://. Each worker prints one JSON line per measurement from rank 0. Needs the `distributed`
extra (mpi4py, mpich). Options: --quick (fewer sizes and repeats, one round). The first
and last lines are `uptime` (the machine's load).
"""
import json
import os
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = [1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26]
GLOBAL_BATCH = 64
ROUNDS = 5          # alternating ember and torch jobs for the all-reduce table


def _repeats(nbytes, quick):
    base = 5 if quick else 20
    return max(3, base if nbytes <= 1 << 20 else base // 4)


def allreduce_times(T, dist, quick):
    rank = dist.get_rank()
    sizes = SIZES[::2] if quick else SIZES
    for nbytes in sizes:
        t = T.ones(nbytes // 4)
        dist.all_reduce(t)                  # warm up
        times = []
        for _ in range(_repeats(nbytes, quick)):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - start)
        times.sort()
        if rank == 0:
            print(json.dumps({"kind": "allreduce", "bytes": nbytes,
                              "ms": 1e3 * times[len(times) // 2]}), flush=True)


def ddp_step_time(T, dist, quick):
    rank, world = dist.get_rank(), dist.get_world_size()
    nn = T.nn
    T.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 8 * 8, 10)))
    opt = T.optim.SGD(model.parameters(), lr=0.01)
    share = GLOBAL_BATCH // world
    x, y = T.randn(share, 3, 32, 32), T.randint(0, 10, (share,))

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    def local_step():           # the same step without DDP's communication
        with model.no_sync():
            step()
    step()
    local_step()
    times, local = [], []
    for _ in range(5 if quick else 15):     # interleaved, so load changes hit both alike
        for fn, into in ((step, times), (local_step, local)):
            dist.barrier()
            start = time.perf_counter()
            fn()
            dist.barrier()      # both wait for the slower rank, so only communication differs
            into.append(time.perf_counter() - start)
    times.sort()
    local.sort()
    if rank == 0:
        print(json.dumps({"kind": "ddp", "world": world, "ms": 1e3 * times[len(times) // 2],
                          "local_ms": 1e3 * local[len(local) // 2]}), flush=True)


def worker(T, dist, what, quick):
    if what in ("all", "allreduce"):
        allreduce_times(T, dist, quick)
    if what in ("all", "ddp"):
        ddp_step_time(T, dist, quick)


def _torch_rank(rank, world, port, what, quick):
    import torch
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.distributed.init_process_group("gloo", rank=rank, world_size=world)
    worker(torch, torch.distributed, what, quick)
    torch.distributed.destroy_process_group()


def run_ember(world, what, quick):
    # ember's launcher (torchrun's interface) starts the processes with mpiexec and its
    # settings for one machine
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(world),
           __file__, "--worker", "ember", what]
    return _collect(cmd + (["--quick"] if quick else []))


def run_torch(world, what, quick):
    cmd = [sys.executable, __file__, "--worker", "torch", what, str(world)]
    return _collect(cmd + (["--quick"] if quick else []))


def _collect(cmd):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1")
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1200, env=env)
    if out.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def _median(values):
    values = sorted(values)
    return values[len(values) // 2]


def _uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "uptime: not available"


def main():
    quick = "--quick" in sys.argv
    rounds = 1 if quick else ROUNDS
    print(_uptime())
    # ember's and torch's jobs alternate, round after round, so a change in the machine's load
    # hits both; each size's time is the median over the rounds of each run's median
    ember_ar, torch_ar = {}, {}
    for _ in range(rounds):
        for runs, run in ((ember_ar, run_ember), (torch_ar, run_torch)):
            for r in run(2, "allreduce", quick):
                runs.setdefault(r["bytes"], []).append(r["ms"])
    print(f"all_reduce float32 SUM, 2 processes (ms: median of {rounds} runs' medians; ratio: "
          f"ember/torch, and its range over the runs)")
    print(f"{'size':>8} {'ember':>10} {'torch':>10} {'ratio':>7} {'per run':>13}")
    for nbytes in sorted(ember_ar):
        size = f"{nbytes >> 20} MB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KB"
        e, t = ember_ar[nbytes], torch_ar[nbytes]
        ratios = [a / b for a, b in zip(e, t)]
        print(f"{size:>8} {_median(e):10.3f} {_median(t):10.3f} {_median(e) / _median(t):7.2f} "
              f"{min(ratios):6.2f}-{max(ratios):.2f}")
    print(f"\nDDP step, small CNN, global batch {GLOBAL_BATCH} (median ms); overhead: the "
          f"share of the step\nthat DDP's communication adds (step vs the same step under "
          f"no_sync)")
    print(f"{'processes':>9} {'ember':>10} {'torch':>10} {'ratio':>7} {'ember overhead':>15} "
          f"{'torch overhead':>15}")
    for world in (1, 2):
        e = run_ember(world, "ddp", quick)[0]
        t = run_torch(world, "ddp", quick)[0]
        print(f"{world:>9} {e['ms']:10.2f} {t['ms']:10.2f} {e['ms'] / t['ms']:7.2f} "
              f"{_overhead(e):>15} {_overhead(t):>15}")
    print(_uptime())


def _overhead(row):
    return f"{100 * (row['ms'] - row['local_ms']) / row['ms']:.1f}%"


if __name__ == "__main__":
    if "--worker" in sys.argv:
        args = [a for a in sys.argv[sys.argv.index("--worker") + 1:] if a != "--quick"]
        quick = "--quick" in sys.argv
        if args[0] == "ember":
            sys.path.insert(0, ROOT)
            import ember
            ember.distributed.init_process_group("gloo")
            worker(ember, ember.distributed, args[1], quick)
            ember.distributed.destroy_process_group()
        else:
            import torch.multiprocessing as mp
            world = int(args[2])
            with socket.socket() as s:      # a free port, not a guessed one
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            mp.spawn(_torch_rank, args=(world, port, args[1], quick), nprocs=world)
    else:
        main()
