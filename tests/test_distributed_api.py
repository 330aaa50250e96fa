"""ember.distributed's API that needs no process group, against torch.distributed: stores,
errors, option records, BackendConfig, DebugLevel, futures, small queries."""
import datetime
import os
import subprocess
import sys
import warnings

import pytest
import torch
import torch.distributed as tdist

import ember
import ember.distributed as edist

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _outcome(call):
    """What a call returns, or its error's type name and message."""
    try:
        return ("ok", call())
    except Exception as e:
        return (type(e).__name__, str(e).split("\n")[0])


def _store_script(dist, make):
    """The same operations on a store; every result, in order."""
    s = make()
    out = []
    rec = out.append
    rec(_outcome(lambda: s.set("a", "1")))
    rec(_outcome(lambda: s.set("b", b"xy")))
    rec(_outcome(lambda: s.get("a")))
    rec(_outcome(lambda: s.get("b")))
    rec(_outcome(lambda: s.num_keys()))
    rec(_outcome(lambda: (s.add("c", 5), s.add("c", -2), s.get("c"))))
    rec(_outcome(lambda: s.compare_set("a", "1", "2")))
    rec(_outcome(lambda: s.compare_set("a", "9", "3")))
    rec(_outcome(lambda: s.compare_set("new", "", "v")))
    rec(_outcome(lambda: s.compare_set("absent", "x", "v")))
    rec(_outcome(lambda: (s.check(["a", "q"]), s.check(["a", "b"]))))
    rec(_outcome(lambda: (s.delete_key("a"), s.delete_key("a"), s.num_keys())))
    rec(_outcome(lambda: (s.append("l", "ab"), s.append("l", b"cd"), s.get("l"))))
    rec(_outcome(lambda: (s.multi_set(["m1", "m2"], ["x", b"y"]), s.multi_get(["m2", "m1"]))))
    rec(_outcome(lambda: s.add("b", 1)))
    rec(_outcome(lambda: (s.queue_push("q", "v1"), s.queue_push("q", b"v2"), s.queue_len("q"),
                          s.queue_pop("q"), s.queue_pop("q", block=False))))
    rec(_outcome(lambda: s.queue_pop("q", block=False)))
    rec(_outcome(lambda: s.has_extended_api()))
    s.set_timeout(datetime.timedelta(milliseconds=50))
    rec(_outcome(lambda: s.timeout))
    rec(_outcome(lambda: s.get("missing")))
    rec(_outcome(lambda: s.wait(["missing"], datetime.timedelta(milliseconds=20))))
    rec(_outcome(lambda: s.wait(["b", "c"])))
    try:
        s.get("missing")
    except RuntimeError as e:
        rec(("caught", isinstance(e, dist.DistStoreError)))
    return out


@pytest.mark.parametrize("kind", ["HashStore", "FileStore", "PrefixStore"])
def test_stores_as_torch(kind, tmp_path):
    def maker(dist, name):
        if kind == "HashStore":
            return dist.HashStore
        if kind == "FileStore":
            return lambda: dist.FileStore(str(tmp_path / name), 1)
        return lambda: dist.PrefixStore("pre", dist.HashStore())
    assert _store_script(edist, maker(edist, "e")) == _store_script(tdist, maker(tdist, "t"))


def test_file_store_is_shared_and_prefix_store_namespaces(tmp_path):
    for dist, name in ((edist, "e"), (tdist, "t")):
        path = str(tmp_path / name)
        a, b = dist.FileStore(path, 2), dist.FileStore(path, 2)
        a.set("k", "v")
        assert b.get("k") == b"v" and b.add("n", 3) == 3 and a.add("n", 1) == 4
        base = dist.HashStore()
        p = dist.PrefixStore("pre", base)
        p.set("k", "v")
        assert base.get("pre/k") == b"v" and p.get("k") == b"v" and p.underlying_store is base
        assert not p.check(["pre/k"]) and p.num_keys() == base.num_keys() == 1


def test_errors_and_records_as_torch():
    for name in ("DistError", "DistBackendError", "DistNetworkError", "DistStoreError",
                 "QueueEmptyError"):
        ours, theirs = getattr(edist, name), getattr(tdist, name)
        assert [c.__name__ for c in ours.__mro__] == [c.__name__ for c in theirs.__mro__]
    for name in ("AllToAllOptions", "AllreduceCoalescedOptions", "AllreduceOptions",
                 "BarrierOptions", "BroadcastOptions", "GatherOptions", "ReduceOptions",
                 "ReduceScatterOptions", "ScatterOptions"):
        ours, theirs = getattr(edist, name)(), getattr(tdist, name)()
        fields = sorted(a for a in dir(theirs) if not a.startswith("_"))
        assert sorted(a for a in dir(ours) if not a.startswith("_")) == fields, name
        for f in fields:
            if f == "reduceOp":
                assert ours.reduceOp == edist.ReduceOp.SUM and theirs.reduceOp == tdist.ReduceOp.SUM
            else:
                assert getattr(ours, f) == getattr(theirs, f), (name, f)


@pytest.mark.parametrize("backend", ["gloo", "mpi", "nccl", "cpu:gloo,cuda:nccl", "foo"])
def test_backend_config_as_torch(backend):
    with warnings.catch_warnings(record=True) as ours_w:
        warnings.simplefilter("always")
        ours = edist.BackendConfig(backend)
    with warnings.catch_warnings(record=True) as theirs_w:
        warnings.simplefilter("always")
        theirs = tdist.BackendConfig(backend)
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    assert ours.get_device_backend_map() == theirs.get_device_backend_map()
    assert [str(w.message) for w in ours_w] == [str(w.message) for w in theirs_w]


def test_debug_level_as_torch(monkeypatch):
    for dist in (edist, tdist):
        assert list(dist.DebugLevel.__members__) == ["OFF", "INFO", "DETAIL"]
        assert dist.get_debug_level() == dist.DebugLevel.OFF
    assert repr(edist.DebugLevel.INFO) == repr(tdist.DebugLevel.INFO)
    assert str(edist.DebugLevel.INFO) == str(tdist.DebugLevel.INFO)
    for dist in (edist, tdist):
        dist.set_debug_level(dist.DebugLevel.DETAIL)
        assert dist.get_debug_level() == dist.DebugLevel.DETAIL
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "info")
        dist.set_debug_level_from_env()
        assert dist.get_debug_level() == dist.DebugLevel.INFO
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "loud")
        with pytest.raises(ValueError) as e:
            dist.set_debug_level_from_env()
        assert str(e.value) == "The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL."
        with pytest.raises(TypeError, match="incompatible function arguments"):
            dist.set_debug_level(5)
        monkeypatch.delenv("TORCH_DISTRIBUTED_DEBUG")
        dist.set_debug_level_from_env()
        assert dist.get_debug_level() == dist.DebugLevel.OFF


def test_queries_as_torch(monkeypatch):
    for dist in (edist, tdist):
        assert dist.get_default_backend_for_device("cpu") == "gloo"
        # ember's "gloo" runs on MPI: available exactly when mpi4py imports
        assert dist.is_backend_available("gloo") == (dist is tdist or edist.is_mpi_available())
        assert not dist.is_backend_available("nccl")
        assert not dist.is_ucc_available() and not dist.is_xccl_available()
        assert dist.timedelta is datetime.timedelta
        assert dist.log.name == "torch.distributed"
        assert [dist.supports_complex(getattr(dist.ReduceOp, op)) for op in
                ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND")] == \
            [True, True, False, False, False, False]
        assert dist.get_node_local_rank(fallback_rank=3) == 3
        monkeypatch.setenv("LOCAL_RANK", "1")
        assert dist.get_node_local_rank() == 1
        monkeypatch.delenv("LOCAL_RANK")
    assert _outcome(lambda: edist.get_default_backend_for_device("meta")) == \
        _outcome(lambda: tdist.get_default_backend_for_device("meta"))
    assert _outcome(lambda: edist.get_node_local_rank()) == \
        _outcome(lambda: tdist.get_node_local_rank())
    assert edist.get_default_backend_for_device(ember.device("cpu")) == "gloo"
    for dist in (edist, tdist):
        with pytest.warns(FutureWarning, match="`torch.distributed.reduce_op` is deprecated"):
            assert dist.reduce_op.SUM == dist.ReduceOp.SUM
    assert [str(m) for m in edist.BuiltinCommHookType.__members__.values()] == \
        [str(m) for m in tdist.BuiltinCommHookType.__members__.values()]


def test_backend_names_as_torch():
    for name in ("GLOO", "Gloo", "mpi", "nccl", "undefined", "cpu:gloo", "foo"):
        assert edist.Backend(name) == tdist.Backend(name)
        assert type(edist.Backend(name)) is type(tdist.Backend(name)) is str
    for bad in (None, 3):
        assert _outcome(lambda: edist.Backend(bad)) == _outcome(lambda: tdist.Backend(bad))
    for attr in ("UNDEFINED", "GLOO", "NCCL", "XCCL", "UCC", "MPI", "FAKE"):
        assert getattr(edist.Backend, attr) == getattr(tdist.Backend, attr)
    for attr in ("backend_list", "backend_capability"):
        assert getattr(edist.Backend, attr) == getattr(tdist.Backend, attr), attr
    # (torch's map gains {"hpu": "fake"} once its testing helpers register the fake backend)
    assert edist.Backend.default_device_backend_map == \
        {k: v for k, v in tdist.Backend.default_device_backend_map.items() if v != "fake"}
    assert {k: repr(v) for k, v in edist.Backend.backend_type_map.items()} == \
        {k: repr(v) for k, v in tdist.Backend.backend_type_map.items()}
    assert [int(m) for m in edist.ProcessGroup.BackendType.__members__.values()] == \
        [int(m) for m in sorted(tdist.ProcessGroup.BackendType.__members__.values(), key=int)]
    assert _outcome(lambda: edist.is_backend_available(3)) == \
        _outcome(lambda: tdist.is_backend_available(3))


def test_backend_availability_is_ember_s_own():
    # a deliberate difference from torch's CPU wheel (built without MPI): MPI is ember's
    # engine, so "mpi" (and "gloo", which runs on it) are available when mpi4py imports
    pytest.importorskip("mpi4py")
    assert not tdist.is_mpi_available() and not tdist.is_backend_available("mpi")
    assert edist.is_mpi_available() and edist.is_gloo_available()
    for name in ("mpi", "MPI", "gloo", "cpu:gloo", "undefined"):
        assert edist.is_backend_available(name), name
    for name in ("nccl", "ucc", "xccl", "fake", "foo"):
        assert not edist.is_backend_available(name), name
    with pytest.raises(RuntimeError, match="cannot run here"):
        edist.Backend.register_backend("mine", lambda *args: None, devices=["cpu"])


def test_backend_availability_without_mpi4py():
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "import ember.distributed as d\n"
            "print([d.is_mpi_available(), d.is_gloo_available(), d.is_available()] +\n"
            "      [d.is_backend_available(b) for b in ('mpi', 'gloo', 'undefined')])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "[False, False, True, False, False, True]"


def _future_script(make):
    out = []
    f = make()
    out.append(f.done())
    chained = f.then(lambda fut: fut.value() * 2)
    seen = []
    f.add_done_callback(lambda fut: seen.append(fut.value()))
    f.set_result(21)
    out += [f.done(), f.wait(), f.value(), chained.wait(), chained.done(), seen]
    out.append(_outcome(lambda: f.set_result(1)))
    bad = f.then(lambda fut: 1 / 0)
    out.append(_outcome(bad.wait))
    g = make()
    g.set_exception(ValueError("no"))
    out.append(_outcome(g.wait))
    out.append(_outcome(lambda: make().set_exception(3)))
    return out


def test_future_as_torch():
    assert _future_script(edist.Future) == _future_script(torch.futures.Future)
