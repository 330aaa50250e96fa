"""Tensors shared between processes, as torch shares them: `share_memory_()`, `is_shared()`,
`Module.share_memory()`, and tensors sent through multiprocessing (Queue, Process arguments)
arriving as shared memory rather than copies (Hogwild training). Each scenario is a small
program run under torch and under ember in its own process; their printed lines must agree."""
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import ember
from differential import same

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(tmp_path, program, lib, *args):
    path = tmp_path / f"prog_{lib}.py"
    path.write_text(textwrap.dedent(program))
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(path), lib, *args], capture_output=True,
                          text=True, timeout=240, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _same_output(tmp_path, program, *args):
    expected = _run(tmp_path, program, "torch", *args)
    assert expected                        # (the program printed what it observed)
    assert _run(tmp_path, program, "ember", *args) == expected


SENDING = """
    import sys, time
    T = __import__(sys.argv[1])
    import importlib
    mp = importlib.import_module(sys.argv[1] + ".multiprocessing")

    def child(q, t, p):
        x = q.get()
        x += 1
        t.add_(2)
        p.data.add_(10)
        print("child", x.is_shared(), t.is_shared(), type(p).__name__, p.is_shared(),
              p.requires_grad, flush=True)

    if __name__ == "__main__":
        ctx = mp.get_context(sys.argv[2])
        t = T.zeros(3)
        p = T.nn.Parameter(T.ones(2))
        q = ctx.Queue()
        x = T.zeros(2)
        print("before", x.is_shared(), t.is_shared(), p.is_shared())
        q.put(x)
        time.sleep(0.3)                 # (the queue's thread pickles x: x itself is moved)
        print("sender's x shared after put:", x.is_shared())
        pr = ctx.Process(target=child, args=(q, t, p))
        pr.start()
        pr.join()
        print(x.tolist(), t.tolist(), p.tolist(), t.is_shared(), p.is_shared(), flush=True)
        try:
            from multiprocessing.reduction import ForkingPickler      # (a queue's pickler)
            ForkingPickler.dumps(T.ones(2, requires_grad=True) * 2)
        except RuntimeError as e:
            print("error:", e)
"""


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_tensors_sent_to_processes_share_memory(tmp_path, method):
    """Under spawn a Queue's tensor and the Process's arguments arrive as shared memory (the
    child's writes reach the parent); under fork the arguments are the child's own copy."""
    _same_output(tmp_path, SENDING, method)


HOGWILD = """
    import sys
    T = __import__(sys.argv[1])
    import importlib
    mp = importlib.import_module(sys.argv[1] + ".multiprocessing")

    def train(rank, model):
        T.manual_seed(rank)
        opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
        for _ in range(5):
            x = T.randn(8, 4)
            loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(rank, round(loss.item(), 5), flush=True)

    if __name__ == "__main__":
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(4, 8), T.nn.Tanh(), T.nn.Linear(8, 1))
        model.register_buffer("seen", T.zeros(1))
        print(model.share_memory() is model, all(p.is_shared() for p in model.parameters()),
              model.seen.is_shared())
        for rank in range(2):           # one after the other: the same result every run
            p = mp.get_context(sys.argv[2]).Process(target=train, args=(rank, model))
            p.start()
            p.join()
        print([round(v, 5) for v in model[2].weight.flatten().tolist()], flush=True)
"""


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_hogwild_training_updates_the_parents_model(tmp_path, method):
    """pytorch/examples' mnist_hogwild pattern: model.share_memory(), then processes train it;
    the parent sees their updates, as under torch (the same final weights)."""
    _same_output(tmp_path, HOGWILD, method)


SHARED_ADAM = """
    import sys
    T = __import__(sys.argv[1])
    import importlib
    mp = importlib.import_module(sys.argv[1] + ".multiprocessing")

    class SharedAdam(T.optim.Adam):         # the A3C pattern: state made up front, shared
        def __init__(self, params, lr):
            super().__init__(params, lr=lr)
            for group in self.param_groups:
                for p in group["params"]:
                    state = self.state[p]
                    state["step"] = T.zeros(()).share_memory_()
                    state["exp_avg"] = T.zeros_like(p).share_memory_()
                    state["exp_avg_sq"] = T.zeros_like(p).share_memory_()

    def work(rank, model, opt):
        T.manual_seed(rank)
        for _ in range(3):
            x = T.randn(4, 3)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()

    if __name__ == "__main__":
        T.manual_seed(0)
        model = T.nn.Linear(3, 2)
        model.share_memory()
        opt = SharedAdam(model.parameters(), lr=0.01)
        for rank in range(2):
            p = mp.get_context(sys.argv[2]).Process(target=work, args=(rank, model, opt))
            p.start()
            p.join()
        state = opt.state[model.weight]
        print(state["step"].item(), [round(v, 6) for v in state["exp_avg"].flatten().tolist()],
              [round(v, 6) for v in model.weight.flatten().tolist()], flush=True)
"""


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_shared_optimizer_state_is_updated_by_the_processes(tmp_path, method):
    """A3C's shared Adam: the state tensors live in shared memory and every process's step
    updates them there (ember's batched optimizer update keeps shared state in place)."""
    _same_output(tmp_path, SHARED_ADAM, method)


LOADER = """
    import sys
    T = __import__(sys.argv[1])
    import importlib
    data = importlib.import_module(sys.argv[1] + ".utils.data")

    if __name__ == "__main__":
        ds = data.TensorDataset(T.arange(12.).reshape(6, 2), T.arange(6))
        for xb, yb in data.DataLoader(ds, batch_size=2, num_workers=2):
            print(xb.tolist(), yb.tolist(), xb.is_shared(), yb.is_shared())
"""


def test_worker_batches_arrive_in_shared_memory(tmp_path):
    _same_output(tmp_path, LOADER)


def test_share_memory_moves_the_storage_with_its_views():
    """A view's share_memory_ shares its base's whole storage; views and detached aliases
    made before still share memory with it afterwards."""
    def f(T):
        a = T.arange(6.).reshape(2, 3)
        v, d = a[1], a.detach()
        dv, t = d[0], a.t()
        before = [a.is_shared(), v.is_shared(), a.untyped_storage().is_shared()]
        assert v.share_memory_() is v
        a[1, 1] = 100.
        d[0, 0] = -5.
        return before + [a.is_shared(), v.is_shared(), d.is_shared(), dv.is_shared(),
                         a.untyped_storage().is_shared(), v, dv, t, a]
    same(f)


def test_share_memory_keeps_data_and_detach_aliases_of_a_root():
    """`.data` (its own version counter) and `detach()` of a whole tensor alias its memory
    without being views: they are moved with it."""
    def f(T):
        r = T.zeros(2, 2)
        d, data = r.detach(), r.data
        dv = d[0]
        r.share_memory_()
        d[0, 0], data[1, 1], dv[1] = 1., 2., 3.
        return [r, d.is_shared(), data.is_shared(), dv.is_shared(), r._version, d._version]
    same(f)


def test_storage_and_module_share_memory():
    def f(T):
        s = T.zeros(4).untyped_storage()
        out = [s.is_shared(), s.share_memory_() is s, s.is_shared()]
        T.manual_seed(0)
        m = T.nn.Linear(2, 3)
        m(T.ones(1, 2)).sum().backward()
        return out + [m.share_memory() is m, m.weight.is_shared(), m.bias.is_shared(),
                      m.weight.grad.is_shared(), m.weight, T.empty(0).share_memory_().is_shared()]
    same(f)


def test_plain_pickle_still_copies():
    import pickle
    for lib in (torch, ember):
        a = lib.ones(3).share_memory_()
        b = pickle.loads(pickle.dumps(a))
        b += 1
        assert a.tolist() == [1., 1., 1.] and not b.is_shared()
