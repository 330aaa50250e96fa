"""ember.distributed on MPI: each collective against NumPy's answer, in 2 and 4 processes.

The tests start `mpiexec -n N python tests/test_distributed.py CASE`; the worker for CASE (below,
under __main__) checks its results itself and prints "OK rank R" when every check passed, so a
test passes only when every rank printed it and the job exited 0. Every job is bounded by a
timeout.
"""
import importlib.util
import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def mpiexec():
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return here if os.path.exists(here) else shutil.which("mpiexec")


HAVE_MPI = importlib.util.find_spec("mpi4py") is not None and mpiexec() is not None
needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason="mpi4py or mpiexec is not installed (pip "
                               "install 'ember[distributed]')")


def launch(n, *args, timeout=300, script=__file__):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([mpiexec(), "-n", str(n), sys.executable, script, *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


def assert_all_ok(result, n):
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    for r in range(n):
        assert f"OK rank {r}" in result.stdout, out


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_reductions_every_op_and_dtype(n):
    assert_all_ok(launch(n, "reductions"), n)


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_collectives(n):
    assert_all_ok(launch(n, "collectives"), n)


@needs_mpi
@pytest.mark.parametrize("n", [2, 3])
def test_all_reduce_in_chunks(n):
    # a large all-reduce goes as several MPI requests (chunks); the worker makes the chunk
    # small, so a short tensor takes that path, with a last chunk shorter than the others
    assert_all_ok(launch(n, "chunks"), n)


@needs_mpi
def test_objects_and_safe_unpickling():
    assert_all_ok(launch(2, "objects"), 2)


@needs_mpi
def test_rank_that_raises_stops_the_job():
    result = launch(2, "raises")
    assert result.returncode != 0
    assert "ValueError: rank 1 failed on purpose" in result.stderr
    assert "OK rank 0" not in result.stdout


@needs_mpi
def test_rank_that_dies_stops_the_job():
    result = launch(2, "dies")
    assert result.returncode != 0
    assert "OK rank" not in result.stdout and "after the kill" not in result.stdout


@needs_mpi
def test_missing_rank_times_out():
    # rank 1 never joins the all_reduce: rank 0 stops the job after the group's 3 s timeout
    result = launch(2, "timeout")
    assert result.returncode != 0
    assert "all_reduce did not complete within the process group's timeout" in result.stderr


@needs_mpi
def test_launcher_sets_torchrun_variables():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run(
        [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2",
         "--master-port", "29611", __file__, "launcher"],
        capture_output=True, text=True, timeout=300, env=env)
    assert_all_ok(result, 2)


@needs_mpi
def test_launcher_with_a_host_file(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("# host[:slots], one a line\nlocalhost:2\n")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run(
        [sys.executable, "-m", "ember.distributed.run", "--nnodes", "1", "--nproc-per-node",
         "2", "--master-port", "29611", "--hostfile", str(hosts), __file__, "launcher",
         "localhost"],
        capture_output=True, text=True, timeout=300, env=env)
    assert_all_ok(result, 2)


@needs_mpi
@pytest.mark.parametrize("bind", [True, False])
def test_launcher_binds_a_process_per_core(bind):
    # with as many processes as usable CPUs, each process gets a core of its own
    # (and a wait spins longer before it yields); --no-bind leaves the kernel to place them
    cpus = sorted(os.sched_getaffinity(0))
    n = len(cpus)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run(
        [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(n)] +
        ([] if bind else ["--no-bind"]) +
        [__file__, "binding", str(int(bind)), ",".join(map(str, cpus))],
        capture_output=True, text=True, timeout=300, env=env)
    assert_all_ok(result, n)


def test_without_a_group():
    import ember.distributed as dist
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()


def test_init_without_mpi4py_says_what_to_install():
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "import ember.distributed as d\n"
            "try:\n    d.init_process_group('gloo')\n"
            "except RuntimeError as e:\n    print(e)\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env=env).stdout
    assert "pip install 'ember[distributed]'" in out and "mpi4py mpich" in out


# ====================================================================== the workers
OPS = ["SUM", "PRODUCT", "MIN", "MAX", "AVG", "BAND", "BOR", "BXOR"]


def _rank_data(dtype, rank, shape=(3, 5)):
    """Rank `rank`'s input: small values so products stay exact in every dtype."""
    rng = np.random.default_rng(100 + rank)
    values = rng.integers(1, 4, size=shape)
    if dtype.name == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.is_complex:
        return (values + 1j * rng.integers(0, 3, size=shape)).astype(dtype.np)
    return values.astype(dtype.np)


def _expected(op, dtype, arrays):
    if dtype.name == "bool":
        f = {"SUM": np.logical_or, "MAX": np.logical_or, "BOR": np.logical_or,
             "PRODUCT": np.logical_and, "MIN": np.logical_and, "BAND": np.logical_and,
             "BXOR": np.logical_xor}[op]
    else:
        f = {"SUM": np.add, "AVG": np.add, "PRODUCT": np.multiply, "MIN": np.minimum,
             "MAX": np.maximum, "BAND": np.bitwise_and, "BOR": np.bitwise_or,
             "BXOR": np.bitwise_xor}[op]
    wide = [a.astype(np.float64) if dtype._half else a for a in arrays]
    acc = wide[0]
    for a in wide[1:]:
        acc = f(acc, a)
    if op == "AVG":
        acc = acc / len(arrays)
    return acc


def _np(t):
    """A tensor's values as NumPy (bfloat16, which torch's .numpy() refuses, via float32)."""
    if str(t.dtype).endswith("bfloat16"):
        return t.float().numpy().astype(t.dtype.np)
    return t.numpy()


def _close(got, want, dtype):
    got = np.asarray(got)
    if dtype._half:
        return np.allclose(got.astype(np.float64), want, rtol=1e-2)
    if dtype.is_floating_point or dtype.is_complex:
        return np.allclose(got, want, rtol=1e-6)
    return np.array_equal(got, np.asarray(want).astype(got.dtype))


def _expected_error(op, dtype):
    if op in ("BAND", "BOR", "BXOR") and (dtype.is_floating_point or dtype.is_complex):
        return "non-integral dtype"
    if op == "AVG" and not (dtype.is_floating_point or dtype.is_complex):
        return "can't be cast"
    if op in ("MIN", "MAX") and dtype.is_complex:
        return "complex"
    return None


def worker_reductions(torch, dist, r, n):
    from ember import _dtype as D
    checked = 0
    for dtype in D.ALL_DTYPES:
        arrays = [_rank_data(dtype, k) for k in range(n)]
        for op in OPS:
            reduce_op = getattr(dist.ReduceOp, op)
            error = _expected_error(op, dtype)
            # all_reduce on a non-contiguous tensor (a transpose), async half the time
            t = torch.from_numpy(arrays[r].T.copy()).t()
            assert not t.is_contiguous()
            if error:
                try:
                    dist.all_reduce(t, op=reduce_op)
                except RuntimeError as e:
                    assert error in str(e), (op, dtype, e)
                    checked += 1
                    continue
                raise AssertionError(f"{op} on {dtype} did not raise")
            want = _expected(op, dtype, arrays)
            work = dist.all_reduce(t, op=reduce_op, async_op=checked % 2 == 0)
            if work is not None:
                work.wait()
                assert work.is_completed()
            assert t.dtype == dtype and not t.is_contiguous()
            assert _close(_np(t), want, dtype), (op, dtype, t, want)
            # all_reduce on a contiguous tensor (reduced in its own memory), sharing NumPy's
            shared = arrays[r].copy()
            t = torch.from_numpy(shared)
            dist.all_reduce(t, op=reduce_op)
            assert _close(_np(t), want, dtype) and _close(shared, want, dtype), (op, dtype)
            assert t._version == 0          # as torch: a collective's write is not counted
            # reduce to the last rank
            t = torch.from_numpy(arrays[r].copy())
            dist.reduce(t, dst=n - 1, op=reduce_op)
            want_here = want if r == n - 1 else arrays[r]
            assert _close(_np(t), want_here, dtype), ("reduce", op, dtype)
            # reduce_scatter_tensor: rank k gets row-block k of the reduction
            rows = [np.concatenate([_rank_data(dtype, 10 * k + j, (2, 3)) for j in range(n)])
                    for k in range(n)]
            out = torch.empty(2, 3, dtype=dtype)
            dist.reduce_scatter_tensor(out, torch.from_numpy(rows[r]), op=reduce_op)
            want_rs = _expected(op, dtype, rows)[2 * r:2 * r + 2]
            assert _close(_np(out), want_rs, dtype), ("reduce_scatter_tensor", op, dtype)
            # reduce_scatter from a list
            out = torch.empty(2, 3, dtype=dtype)
            dist.reduce_scatter(out, list(torch.from_numpy(rows[r]).split(2)), op=reduce_op)
            assert _close(_np(out), want_rs, dtype), ("reduce_scatter", op, dtype)
            checked += 1
    assert checked == len(D.ALL_DTYPES) * len(OPS)


def worker_chunks(torch, dist, r, n):
    from ember import _dtype as D
    c10d = dist.distributed_c10d
    c10d._CHUNK_BYTES = 24      # 3 float64s, 6 float32s, 12 bfloat16s, 1 complex128 a chunk
    checked = 0
    for dtype in D.ALL_DTYPES:
        arrays = [_rank_data(dtype, k, shape=(7, 5)) for k in range(n)]
        for op in ("SUM", "MAX", "AVG"):
            if _expected_error(op, dtype):
                continue
            want = _expected(op, dtype, arrays)
            reduce_op = getattr(dist.ReduceOp, op)
            shared = arrays[r].copy()
            work = dist.all_reduce(torch.from_numpy(shared), op=reduce_op, async_op=True)
            per_chunk = max(1, 24 // shared.itemsize)     # whole elements only
            assert len(work._requests) == -(-shared.size // per_chunk) > 1     # one a chunk
            assert work.wait() and work.is_completed()
            assert _close(shared, want, dtype), ("chunks", op, dtype, shared, want)
            shared = arrays[r].copy()
            dist.all_reduce(torch.from_numpy(shared), op=reduce_op)       # blocking
            assert _close(shared, want, dtype), ("chunks, blocking", op, dtype)
            t = torch.from_numpy(arrays[r].T.copy()).t()      # non-contiguous: a copy's chunks
            dist.all_reduce(t, op=reduce_op)
            assert _close(_np(t), want, dtype), ("chunks, strided", op, dtype)
            checked += 1
    assert checked == 3 * len(D.ALL_DTYPES) - sum(
        _expected_error(op, dt) is not None for dt in D.ALL_DTYPES for op in ("SUM", "MAX", "AVG"))


def worker_collectives(torch, dist, r, n):
    from ember import _dtype as D
    for dtype in D.ALL_DTYPES:
        mine = _rank_data(dtype, r)
        everyone = [_rank_data(dtype, k) for k in range(n)]
        # broadcast into a non-contiguous view
        base = torch.zeros(5, 6, dtype=dtype)
        view = base[:, ::2].t()
        if r == 1:
            view.copy_(torch.from_numpy(everyone[1]))
        dist.broadcast(view, src=1)
        assert np.array_equal(_np(view), everyone[1]), ("broadcast", dtype)
        assert np.array_equal(_np(base[:, 1::2]), np.zeros((5, 3), dtype.np))
        # all_gather / all_gather_into_tensor
        outs = [torch.empty(3, 5, dtype=dtype) for _ in range(n)]
        dist.all_gather(outs, torch.from_numpy(mine))
        for k in range(n):
            assert np.array_equal(_np(outs[k]), everyone[k]), ("all_gather", dtype)
        big = torch.empty(n * 3, 5, dtype=dtype)
        work = dist.all_gather_into_tensor(big, torch.from_numpy(mine), async_op=True)
        work.wait()
        assert np.array_equal(_np(big), np.concatenate(everyone)), ("agit", dtype)
        # gather to rank 0, scatter from the last rank
        gl = [torch.empty(3, 5, dtype=dtype) for _ in range(n)] if r == 0 else None
        dist.gather(torch.from_numpy(mine), gl, dst=0)
        if r == 0:
            for k in range(n):
                assert np.array_equal(_np(gl[k]), everyone[k]), ("gather", dtype)
        got = torch.empty(3, 5, dtype=dtype)
        sl = [torch.from_numpy(everyone[k]) for k in range(n)] if r == n - 1 else None
        dist.scatter(got, sl, src=n - 1)
        assert np.array_equal(_np(got), everyone[r]), ("scatter", dtype)
        # all_to_all with uneven sizes: rank r sends k + 1 rows of its data to rank k
        data = _rank_data(dtype, r, (10, 2))
        ins = [torch.from_numpy(data[:k + 1]) for k in range(n)]
        outs = [torch.empty(r + 1, 2, dtype=dtype) for _ in range(n)]
        dist.all_to_all(outs, ins)
        for k in range(n):
            assert np.array_equal(_np(outs[k]), _rank_data(dtype, k, (10, 2))[:r + 1])
        # all_to_all_single with split sizes: to rank k, k + 1 rows
        inp = torch.from_numpy(np.concatenate([data[:k + 1] for k in range(n)]))
        out = torch.empty(n * (r + 1), 2, dtype=dtype)
        dist.all_to_all_single(out, inp, output_split_sizes=[r + 1] * n,
                               input_split_sizes=[k + 1 for k in range(n)])
        want = np.concatenate([_rank_data(dtype, k, (10, 2))[:r + 1] for k in range(n)])
        assert np.array_equal(_np(out), want), ("all_to_all_single", dtype)
        # send/recv around a ring, and isend/irecv with a known source
        right, left = (r + 1) % n, (r - 1) % n
        recv_buf = torch.empty(3, 5, dtype=dtype)
        if r % 2 == 0:
            dist.send(torch.from_numpy(mine), right)
            source = dist.recv(recv_buf)
        else:
            source = dist.recv(recv_buf)
            dist.send(torch.from_numpy(mine), right)
        assert source == left and np.array_equal(_np(recv_buf), everyone[left])
        req_r = dist.irecv(recv_buf, src=right, tag=7)
        req_s = dist.isend(torch.from_numpy(mine), left, tag=7)
        req_s.wait()
        req_r.wait()
        assert req_r.is_completed()
        assert np.array_equal(_np(recv_buf), everyone[right]), ("isend/irecv", dtype)
    # a collective's write leaves the version counter alone (torch's gloo does too)
    t = torch.ones(4)[::2]
    dist.broadcast(t, src=0)
    dist.all_reduce(t)
    assert t._version == 0 and t.tolist() == [n, n]
    # barrier, groups
    dist.barrier()
    evens = dist.new_group([k for k in range(n) if k % 2 == 0])
    if r % 2 == 0:
        t = torch.tensor([r])
        dist.all_reduce(t, group=evens)
        assert t.item() == sum(range(0, n, 2))
        assert dist.get_world_size(evens) == len(range(0, n, 2))
        assert dist.get_rank(evens) == r // 2
        t = torch.tensor([r])
        dist.broadcast(t, src=n - 2, group=evens)    # src is a global rank
        assert t.item() == n - 2
    else:
        assert evens is dist.GroupMember.NON_GROUP_MEMBER
    assert dist.get_rank() == r and dist.get_world_size() == n
    assert dist.is_initialized() and dist.get_backend() == "gloo"
    # torch's errors (gloo's wording)
    for call, kind, message in [
            (lambda: dist.all_reduce([1, 2]), TypeError,
             "Expected parameter `tensor` of type torch.Tensor"),
            (lambda: dist.broadcast(torch.ones(2), src=n + 3), RuntimeError,
             f"ProcessGroupGloo::broadcast: invalid root rank: {n + 3}"),
            (lambda: dist.all_reduce(torch.ones(2), op="x"), TypeError, "ReduceOp")]:
        try:
            call()
        except kind as e:
            assert message in str(e), e
        else:
            raise AssertionError(f"no {kind.__name__}")


def worker_objects(torch, dist, r, n):
    import collections
    objs = [None, None, None]
    if r == 0:
        objs = [{"a": 1, "t": torch.arange(3.)}, [1, "two", 3.0], collections.OrderedDict(x=(1, 2))]
    dist.broadcast_object_list(objs, src=0)
    assert objs[0]["a"] == 1 and objs[0]["t"].tolist() == [0., 1., 2.]
    assert objs[1] == [1, "two", 3.0] and objs[2] == collections.OrderedDict(x=(1, 2))
    gathered = [None] * n
    dist.all_gather_object(gathered, {"rank": r, "d": torch.float16})
    assert gathered == [{"rank": k, "d": torch.float16} for k in range(n)]
    got = [None] * n if r == 1 else None
    dist.gather_object(("r", r), got, dst=1)
    if r == 1:
        assert got == [("r", k) for k in range(n)]
    out = [None]
    dist.scatter_object_list(out, [k * 10 for k in range(n)] if r == 0 else None, src=0)
    assert out == [r * 10]
    # code from another rank is never run: the global is refused
    objs = [None]
    if r == 0:
        objs = [_Evil()]
    try:
        dist.broadcast_object_list(objs, src=0)
        refused = r == 0
    except pickle.UnpicklingError as e:
        refused = "posix.system is not allowed" in str(e)
    assert refused and not os.path.exists("/tmp/ember_dist_pwned")


class _Evil:
    def __reduce__(self):
        return (os.system, ("touch /tmp/ember_dist_pwned",))


def worker_raises(torch, dist, r, n):
    if r == 1:
        raise ValueError("rank 1 failed on purpose")
    dist.barrier()              # rank 0 would wait here forever without the abort


def worker_dies(torch, dist, r, n):
    import signal
    if r == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    dist.all_reduce(torch.ones(3))
    print("after the kill", flush=True)


def worker_timeout(torch, dist, r, n):
    if r == 0:
        dist.all_reduce(torch.ones(2))
    else:
        import time
        time.sleep(600)     # (rank 0's abort ends it; long, so a slow rank 0 still times out)


def worker_launcher(torch, dist, r, n, master="127.0.0.1"):
    env = os.environ
    assert env["RANK"] == str(r) and env["WORLD_SIZE"] == str(n)
    assert env["LOCAL_RANK"] == str(r) and env["LOCAL_WORLD_SIZE"] == str(n)
    assert env["MASTER_ADDR"] == master and env["MASTER_PORT"] == "29611"


def worker_binding(torch, dist, r, n, bound, usable):
    from ember.distributed import _mpi
    usable = [int(c) for c in usable.split(",")]     # the launcher's CPUs
    cpus = sorted(os.sched_getaffinity(0))
    everyone = [None] * n
    dist.all_gather_object(everyone, cpus)
    if bound == "1":
        assert len(cpus) == 1 and sorted(sum(everyone, [])) == usable, everyone
        assert _mpi._spin[0] == _mpi._SPIN_OWN_CORE
    else:
        assert cpus == usable, cpus
        assert _mpi._spin[0] == _mpi._SPIN_SHARED


if __name__ == "__main__":
    import datetime
    sys.path.insert(0, ROOT)
    import ember
    import ember.distributed as dist
    case = sys.argv[1]
    # "timeout" waits for a rank that never comes; "dies" gets a bound too, so its job ends
    # even if mpiexec were slow to notice the killed rank
    timeout = {"timeout": datetime.timedelta(seconds=3),
               "dies": datetime.timedelta(seconds=60)}.get(case)
    dist.init_process_group("gloo", timeout=timeout)
    rank, size = dist.get_rank(), dist.get_world_size()
    globals()[f"worker_{case}"](ember, dist, rank, size, *sys.argv[2:])
    dist.barrier()
    dist.destroy_process_group()
    print(f"OK rank {rank}", flush=True)
