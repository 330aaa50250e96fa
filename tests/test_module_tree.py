"""The torch module tree outside ops/nn: import paths, behaviour, warnings and errors of
ember.backends.*, ember.cuda.amp, ember.amp.custom_fwd/bwd, ember.utils.hooks,
ember.utils.data.dataloader, ember.hub, ember.onnx, ember.types, ember.overrides and the
legacy Variable(volatile=True), each against torch 2.13."""
import importlib
import os
import warnings
from collections import OrderedDict

import pytest
import torch

import ember


def _caught(fn):
    """fn's result and its warnings as (category name, message) pairs."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        result = fn()
    return result, [(x.category.__name__, str(x.message)) for x in w]


def _raised(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("path", ["backends.cudnn", "backends.mps", "backends.mkldnn",
                                  "backends.openmp", "cuda.amp", "utils.hooks", "hub", "onnx",
                                  "types", "overrides", "utils.data.dataloader"])
def test_import_paths(path):
    torch_mod = importlib.import_module("torch." + path)
    ember_mod = importlib.import_module("ember." + path)
    # reachable as attributes after `import ember`, as torch's are after `import torch`
    obj_t, obj_e = torch, ember
    for part in path.split("."):
        obj_t, obj_e = getattr(obj_t, part), getattr(obj_e, part)
    assert obj_e is ember_mod
    assert torch_mod is not None


# ---- backends ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["enabled", "benchmark", "deterministic", "allow_tf32",
                                  "benchmark_limit", "fp32_precision", "depthwise_kernel"])
def test_cudnn_flag_values(name):
    assert getattr(ember.backends.cudnn, name) == getattr(torch.backends.cudnn, name)


def test_cudnn_functions_and_sub_precisions():
    c, tc = ember.backends.cudnn, torch.backends.cudnn
    assert c.is_available() is tc.is_available() is False
    assert c.version() is tc.version() is None
    assert c.is_acceptable(ember.ones(2)) is tc.is_acceptable(torch.ones(2)) is False
    assert c.conv.fp32_precision == tc.conv.fp32_precision
    assert c.rnn.fp32_precision == tc.rnn.fp32_precision
    assert {str(d).split(".")[1] for d in c.CUDNN_TENSOR_DTYPES} == \
        {str(d).split(".")[1] for d in tc.CUDNN_TENSOR_DTYPES}


def test_cudnn_set_flags_and_flags_context():
    c, tc = ember.backends.cudnn, torch.backends.cudnn
    try:
        assert c.set_flags(_benchmark=True) == tc.set_flags(_benchmark=True)
        assert c.benchmark is tc.benchmark is True
        assert c.set_flags(True, False, None, False, True) == \
            tc.set_flags(True, False, None, False, True)
        with c.flags(enabled=False, benchmark=True) as a, \
                tc.flags(enabled=False, benchmark=True) as b:
            assert a is b is None
            for n in ("enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit"):
                assert getattr(c, n) == getattr(tc, n), n
        for n in ("enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit"):
            assert getattr(c, n) == getattr(tc, n), n
    finally:
        c.set_flags(_benchmark=False)
        tc.set_flags(_benchmark=False)


def test_frozen_global_flags_refuse_cudnn_set_flags(monkeypatch):
    monkeypatch.setattr(ember.backends, "_frozen", [True])
    assert ember.backends.flags_frozen() is True
    msg = ("not allowed to set torch.backends.cudnn flags after disable_global_flags; please "
           "use flags() context manager instead")
    assert _raised(lambda: ember.backends.cudnn.set_flags(_enabled=False)) == ("RuntimeError", msg)
    with ember.backends.cudnn.flags(enabled=False):      # the context manager still may
        assert ember.backends.cudnn.enabled is False
    assert ember.backends.cudnn.enabled is True


def test_backends_global_flags():
    assert ember.backends.fp32_precision == torch.backends.fp32_precision
    assert ember.backends.flags_frozen() is torch.backends.flags_frozen() is False
    assert ember.backends.set_flags("none") == torch.backends.set_flags("none")
    with ember.backends.flags() as a, torch.backends.flags() as b:
        assert a is b is None


_MKLDNN_PRECISIONS = """
import sys, importlib
T = importlib.import_module(sys.argv[1])
m = T.backends.mkldnn
print([m.fp32_precision] + [getattr(m, n).fp32_precision for n in ("matmul", "conv", "rnn")])
"""


def test_mkldnn():
    m, tm = ember.backends.mkldnn, torch.backends.mkldnn
    for n in ("enabled", "deterministic", "allow_tf32", "VERBOSE_OFF",
              "VERBOSE_ON", "VERBOSE_ON_CREATION"):
        assert getattr(m, n) == getattr(tm, n), n
    assert m.is_available() is tm.is_available()
    assert m.is_acl_available() is tm.is_acl_available()
    # the precisions as a fresh process has them: torch's are process-wide state that other
    # tests' set_float32_matmul_precision and allow_tf32 calls leave in a mixed legacy/new form
    import subprocess
    import sys
    fresh = [subprocess.run([sys.executable, "-c", _MKLDNN_PRECISIONS, lib], capture_output=True,
                            text=True, check=True).stdout for lib in ("ember", "torch")]
    assert fresh[0] == fresh[1] and "none" in fresh[1]
    assert m.set_flags(True, False, None) == tm.set_flags(True, False, None)
    with m.flags(enabled=False) as a:
        assert a is None and m.enabled is False
    assert m.enabled is True
    with m.verbose(m.VERBOSE_OFF) as v, tm.verbose(tm.VERBOSE_OFF) as tv:
        assert v is tv is None
    assert m.verbose(1).level == tm.verbose(1).level == 1


def test_mps_and_openmp():
    mp, tmp = ember.backends.mps, torch.backends.mps
    assert mp.__all__ == tmp.__all__
    assert mp.is_available() is tmp.is_available() is False
    assert mp.is_built() is tmp.is_built() is False
    assert _raised(lambda: mp.is_macos_or_newer(13, 0)) == \
        _raised(lambda: tmp.is_macos_or_newer(13, 0))
    assert _raised(mp.is_macos13_or_newer) == _raised(tmp.is_macos13_or_newer)
    assert ember.backends.openmp.is_available() is torch.backends.openmp.is_available() is True


# ---- cuda.amp and amp.custom_fwd/bwd -------------------------------------------------------

def test_cuda_amp_grad_scaler_warns_as_torch():
    s, w = _caught(ember.cuda.amp.GradScaler)
    ts, tw = _caught(torch.cuda.amp.GradScaler)
    assert w == tw
    assert s.is_enabled() is ts.is_enabled() is False
    assert isinstance(s, ember.amp.GradScaler)


def test_cuda_amp_autocast_warns_as_torch():
    a, w = _caught(lambda: ember.cuda.amp.autocast(dtype=ember.bfloat16))
    ta, tw = _caught(lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16))
    assert w == tw
    assert a.device == ta.device == "cuda"
    assert str(a.fast_dtype).split(".")[1] == str(ta.fast_dtype).split(".")[1]
    assert isinstance(a, ember.amp.autocast)


def test_cuda_amp_decorators_warn_as_torch():
    def f(ctx, x):
        return x
    for name in ("custom_fwd", "custom_bwd"):
        _, w = _caught(lambda: getattr(ember.cuda.amp, name)(f))
        _, tw = _caught(lambda: getattr(torch.cuda.amp, name)(f))
        assert w == tw and len(w) == 1
    assert ember.cuda.amp.amp_definitely_not_available() is \
        torch.cuda.amp.amp_definitely_not_available()


def test_custom_fwd_requires_a_string_device_type():
    for mod in (ember.amp, torch.amp):
        assert _raised(lambda: mod.custom_fwd(device_type=3)) == \
            ("ValueError", "Expected `device_type` of type `str`, got: `<class 'int'>`")
    assert _raised(lambda: ember.amp.custom_fwd(lambda x: x))[0] == \
        _raised(lambda: torch.amp.custom_fwd(lambda x: x))[0] == "TypeError"


def _autocast_function(lib, **fwd_options):
    class Mul(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", **fwd_options)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            ctx.dtypes = (a.dtype, lib.is_autocast_enabled("cpu"))
            return a @ b

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            ctx.bwd_autocast = lib.is_autocast_enabled("cpu")
            g = g.float()       # (ember's autocast cannot yet mix bfloat16 and float32 in mm)
            return g @ b.t(), a.t() @ g
    return Mul


@pytest.mark.parametrize("cast", [None, "float32"])
def test_custom_fwd_and_bwd_under_autocast(cast):
    results = []
    for lib in (ember, torch):
        options = {} if cast is None else {"cast_inputs": getattr(lib, cast)}
        Mul = _autocast_function(lib, **options)
        a = lib.ones(2, 2, requires_grad=True)
        b = lib.full((2, 2), 2.0, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = Mul.apply(a, b)
            seen = (str(out.dtype).split(".")[1], out.grad_fn.dtypes[1],
                    str(out.grad_fn.dtypes[0]).split(".")[1])
        out.float().sum().backward()
        results.append((seen, out.grad_fn.bwd_autocast, a.grad.tolist(), b.grad.tolist()))
    assert results[0] == results[1]


# ---- utils.hooks, dataloader -----------------------------------------------------------------

def test_removable_handle_removes_from_its_dicts():
    for lib in (ember, torch):
        hooks, extra = OrderedDict(), OrderedDict()
        h = lib.utils.hooks.RemovableHandle(hooks, extra_dict=extra)
        hooks[h.id] = "hook"
        extra[h.id] = "flag"
        h2 = lib.utils.hooks.RemovableHandle(hooks)
        assert h2.id == h.id + 1
        with h:
            assert h.id in hooks
        assert h.id not in hooks and h.id not in extra
        h.remove()          # twice is harmless
    # the dictionaries are held weakly: a plain dict cannot be
    assert _raised(lambda: ember.utils.hooks.RemovableHandle({})) == \
        _raised(lambda: torch.utils.hooks.RemovableHandle({}))


def test_module_and_tensor_hooks_return_removable_handles():
    m = ember.nn.Linear(1, 1)
    x = ember.ones(1, requires_grad=True)
    for h in (m.register_forward_hook(lambda *a: None), x.register_hook(lambda g: g)):
        assert isinstance(h, ember.utils.hooks.RemovableHandle)
    assert not isinstance(object(), ember.utils.hooks.RemovableHandle)


def test_unserializable_hook():
    def f(g):
        return g
    assert ember.utils.hooks.unserializable_hook(f) is f
    assert f.__torch_unserializable__ is True


def test_dataloader_module_has_default_collate():
    from ember.utils.data.dataloader import default_collate, default_convert
    from torch.utils.data.dataloader import default_collate as t_collate
    assert default_collate is ember.utils.data.default_collate
    assert default_convert is ember.utils.data.default_convert
    batch = [(1, 2.0), (3, 4.0)]
    out, tout = default_collate(batch), t_collate(batch)
    assert [x.tolist() for x in out] == [x.tolist() for x in tout]
    assert [str(x.dtype) for x in out] == [str(x.dtype).replace("torch", "ember") for x in tout]


def test_utils_set_module():
    for lib in (ember, torch):
        def f():
            pass
        lib.utils.set_module(f, "somewhere")
        assert f.__module__ == "somewhere"
    assert _raised(lambda: ember.utils.set_module(f, 3)) == \
        _raised(lambda: torch.utils.set_module(f, 3))


# ---- hub ---------------------------------------------------------------------------------

@pytest.fixture
def hub_dirs(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text(
        "dependencies = ['numpy']\n"
        "def mymodel(scale=1):\n    '''Docstring of mymodel.'''\n    return ('model', scale)\n"
        "_private = 1\nnotcallable = 3\n")
    monkeypatch.setattr(ember.hub, "_hub_dir", [str(tmp_path / "ehub")])
    old = torch.hub.get_dir()
    torch.hub.set_dir(str(tmp_path / "thub"))
    yield tmp_path
    torch.hub.set_dir(old)


def test_hub_load_local(hub_dirs):
    repo = str(hub_dirs / "repo")
    assert ember.hub.load(repo, "mymodel", source="local", scale=3) == \
        torch.hub.load(repo, "mymodel", source="local", scale=3) == ("model", 3)
    for model in ("nope", "notcallable", "_private"):
        assert _raised(lambda: ember.hub.load(repo, model, source="local")) == \
            _raised(lambda: torch.hub.load(repo, model, source="local"))
    assert _raised(lambda: ember.hub.load(repo, "mymodel", source="x")) == \
        _raised(lambda: torch.hub.load(repo, "mymodel", source="x"))


def test_hub_missing_dependency(hub_dirs):
    repo = hub_dirs / "repo"
    (repo / "hubconf.py").write_text("dependencies = ['no_such_package_xyz']\n"
                                     "def m():\n    return 1\n")
    assert _raised(lambda: ember.hub.load(str(repo), "m", source="local")) == \
        _raised(lambda: torch.hub.load(str(repo), "m", source="local"))


def test_hub_cached_github_repo(hub_dirs):
    cached = hub_dirs / "ehub" / "owner_repo_main"
    cached.mkdir(parents=True)
    (cached / "hubconf.py").write_text((hub_dirs / "repo" / "hubconf.py").read_text())
    assert ember.hub.load("owner/repo", "mymodel", scale=2) == ("model", 2)
    assert ember.hub.list("owner/repo") == ["mymodel"]
    assert ember.hub.help("owner/repo", "mymodel") == "Docstring of mymodel."
    kind, msg = _raised(lambda: ember.hub.load("owner/other:v1", "mymodel"))
    assert kind == "RuntimeError" and "'https://github.com/owner/other/tree/v1'" in msg


def test_hub_get_and_set_dir(hub_dirs, monkeypatch):
    assert ember.hub.get_dir() == str(hub_dirs / "ehub")
    monkeypatch.setattr(ember.hub, "_hub_dir", [None])
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(hub_dirs / "home"))
    assert ember.hub.get_dir() == torch.hub.get_dir() == str(hub_dirs / "home" / "hub")
    ember.hub.set_dir("~/x")
    assert ember.hub.get_dir() == os.path.expanduser("~/x")


def test_hub_load_state_dict_from_file_url(hub_dirs, capsys):
    path = hub_dirs / "w.pth"
    torch.save({"a": torch.ones(2)}, str(path))
    sd = ember.hub.load_state_dict_from_url(path.as_uri())
    tsd = torch.hub.load_state_dict_from_url(path.as_uri(), progress=False)
    assert sd["a"].tolist() == tsd["a"].tolist()
    err = capsys.readouterr().err
    assert f'Downloading: "{path.as_uri()}" to {hub_dirs}/ehub/checkpoints/w.pth' in err
    assert os.listdir(hub_dirs / "ehub" / "checkpoints") == ["w.pth"]
    # a second load uses the cached copy
    path.unlink()
    assert ember.hub.load_state_dict_from_url(path.as_uri())["a"].tolist() == [1.0, 1.0]


def test_hub_hash_check(hub_dirs):
    path = hub_dirs / "w-deadbeef.pth"
    torch.save({"a": torch.ones(2)}, str(path))
    e = _raised(lambda: ember.hub.load_state_dict_from_url(path.as_uri(), check_hash=True))
    t = _raised(lambda: torch.hub.load_state_dict_from_url(path.as_uri(), check_hash=True,
                                                          progress=False))
    assert e == t
    assert os.listdir(hub_dirs / "ehub" / "checkpoints") == []


def test_hub_network_url_raises_naming_it(hub_dirs):
    url = "https://example.com/weights/resnet.pth"
    kind, msg = _raised(lambda: ember.hub.load_state_dict_from_url(url))
    assert kind == "RuntimeError" and repr(url) in msg and "network" in msg


# ---- onnx, types, overrides, Variable -------------------------------------------------------

def test_onnx():
    assert ember.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    assert ember.onnx.__all__ == [n for n in torch.onnx.__all__ if n not in ("errors", "ops")]
    assert issubclass(ember.onnx.OnnxExporterError, RuntimeError)
    kind, msg = _raised(lambda: ember.onnx.export(ember.nn.Linear(1, 1), (ember.ones(1),), "m"))
    assert kind == "OnnxExporterError" and "torch.onnx.export is not supported" in msg


def test_types():
    assert ember.types.__all__ == torch.types.__all__
    assert set(ember.types.Number.__args__) == set(torch.types.Number.__args__)
    assert len(ember.types.Device.__args__) == len(torch.types.Device.__args__)
    assert isinstance(ember.types.Storage, type)


class _Overriding:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("called", func.__name__, [t.__name__ for t in types])


class _Declining:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def test_has_torch_function():
    for lib in (ember, torch):
        o = lib.overrides
        x = lib.ones(2)
        assert o.has_torch_function((x,)) is False
        assert o.has_torch_function((x, _Overriding())) is True
        assert o.has_torch_function_unary(x) is False
        assert o.has_torch_function_unary(_Overriding()) is True
        assert o.has_torch_function_variadic(x, 1) is False
        assert o.has_torch_function_variadic(x, _Overriding()) is True
        assert o.is_tensor_like(x) and o.is_tensor_like(_Overriding()) and not o.is_tensor_like(1)


def test_handle_torch_function():
    results = []
    for lib in (ember, torch):
        o = lib.overrides
        t = _Overriding()
        results.append(o.handle_torch_function(lib.add, (t,), t, 1))
        results.append(_raised(lambda: o.handle_torch_function(lib.add, (_Declining(),),
                                                               _Declining(), 1)))
    assert results[0] == results[2] == ("called", "add", ["_Overriding"])
    assert results[1] == results[3]


def test_wrap_torch_function():
    for lib in (ember, torch):
        @lib.overrides.wrap_torch_function(lambda a, b=None: (a,))
        def func(a, b=None):
            return "plain"
        assert func(1) == "plain"
        assert func(_Overriding()) == ("called", "func", ["_Overriding"])


def test_redispatch_function_skips_one_level():
    results = []
    for lib in (ember, torch):
        o = lib.overrides
        log = []

        class Logging:
            def __init__(self, v):
                self.v = v

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append(func.__name__)
                return o.redispatch_function(func, types, args, kwargs or {})

        def inner(a):
            if o.has_torch_function((a,)):
                return o.handle_torch_function(inner, (a,), a)
            return ("inner", a.v)

        def outer(a):
            if o.has_torch_function_unary(a):
                return o.handle_torch_function(outer, (a,), a)
            return ("outer", inner(a))

        results.append((outer(Logging(3)), log, o.has_torch_function((Logging(1),))))
    assert results[0] == results[1] == (("outer", ("inner", 3)), ["outer", "inner"], True)


def test_resolve_name_and_tensor_methods():
    for name in ("add", "exp"):
        assert ember.overrides.resolve_name(getattr(ember, name)) == \
            torch.overrides.resolve_name(getattr(torch, name)) == f"torch.{name}"
    assert ember.overrides.resolve_name(ember.Tensor.exp) == "torch.Tensor.exp"
    assert ember.overrides.resolve_name(ember.nn.functional.relu) == \
        torch.overrides.resolve_name(torch.nn.functional.relu)
    assert ember.overrides.resolve_name(ember.Tensor.shape.__get__) == \
        torch.overrides.resolve_name(torch.Tensor.shape.__get__)
    assert ember.overrides.resolve_name(lambda x: x) is None
    for lib in (ember, torch):
        o = lib.overrides
        assert o.is_tensor_method_or_property(lib.Tensor.exp) is True
        assert o.is_tensor_method_or_property(lib.exp) is False
        assert o.is_tensor_method_or_property(lib.Tensor.shape.__get__) is True


def test_variable_volatile_warns_as_torch():
    def make(lib):
        return lib.autograd.Variable(lib.ones(1), volatile=True)
    x, w = _caught(lambda: make(ember))
    tx, tw = _caught(lambda: make(torch))
    assert w == tw
    assert _caught(lambda: x.volatile) == _caught(lambda: tx.volatile) == \
        (False, [("UserWarning", "volatile was removed (Variable.volatile is always False)")])

    def set_volatile(t):
        t.volatile = True
    assert _caught(lambda: set_volatile(x)) == _caught(lambda: set_volatile(tx))
    assert _caught(lambda: x.volatile)[0] is False


# ---- cuda without a GPU ----------------------------------------------------------------------

_no_gpu = pytest.mark.skipif(torch.cuda.is_available() or ember.cuda.is_available(),
                             reason="these are torch's answers on a machine without CUDA")


@_no_gpu
@pytest.mark.parametrize("name", ["default_generators", "has_half", "has_magma"])
def test_cuda_values(name):
    assert getattr(ember.cuda, name) == getattr(torch.cuda, name)


@_no_gpu
@pytest.mark.parametrize("name", [
    "empty_cache", "get_arch_list", "get_gencode_flags", "get_rng_state_all", "seed", "seed_all",
    "host_memory_stats", "host_memory_stats_as_nested_dict", "memory_stats",
    "memory_stats_as_nested_dict", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "memory_cached", "max_memory_cached", "is_initialized",
    "is_tf32_supported", "list_gpu_processes", "is_available", "device_count"])
def test_cuda_answers_without_a_gpu(name):
    (e, ew), (t, tw) = _caught(getattr(ember.cuda, name)), _caught(getattr(torch.cuda, name))
    assert type(e) is type(t) and e == t and ew == tw


@_no_gpu
@pytest.mark.parametrize("call", [
    "init()", "initial_seed()", "ipc_collect()", "current_stream()", "default_stream()",
    "get_device_capability()", "get_device_name()", "get_device_properties()",
    "get_per_process_memory_fraction()", "get_rng_state()", "get_sync_debug_mode()",
    "mem_get_info()", "current_device()", "can_device_access_peer(0, 1)",
    "set_per_process_memory_fraction(0.5)", "set_sync_debug_mode(0)",
    "get_stream_from_external(0)", "memory_summary()", "Stream()", "Event()",
    "FloatTensor(2)", "LongTensor()", "HalfStorage(2)", "set_device('cpu')",
    "utilization()", "temperature()", "clock_rate()", "power_draw()", "memory_usage()",
    "device_memory_used()"])
def test_cuda_errors_without_a_gpu(call):
    assert _raised(lambda: eval("ember.cuda." + call)) == _raised(lambda: eval("torch.cuda." + call))


@_no_gpu
def test_cuda_contexts_and_accepted_calls_without_a_gpu():
    for lib in (ember, torch):
        c = lib.cuda
        assert c.set_device(-1) is None
        assert c.set_rng_state(lib.zeros(5, dtype=lib.uint8)) is None
        assert c.set_rng_state_all([]) is None and c.set_stream(None) is None
        assert c.manual_seed(1) is None
        with c.stream(None) as s, c.device(-1) as d, c.device_of(lib.ones(1)) as o:
            assert s is d is o is None
        assert _raised(lambda: c.device(0).__enter__()) == \
            ("RuntimeError", "PyTorch was compiled without CUDA support")
        assert (c.cudaStatus.SUCCESS, c.cudaStatus.ERROR_NOT_READY) == (0, 34)
        assert issubclass(c.CudaError, RuntimeError)
        assert not issubclass(c.DeferredCudaCallError, RuntimeError)
        assert isinstance(c.FloatTensor, type) and not isinstance(lib.ones(1), c.FloatTensor)


def test_cuda_where_torch_crashes_without_a_gpu():
    # torch without CUDA fails in its own bindings here (AttributeError, RuntimeError from a
    # dummy class); ember answers the questions: no segments, no graph capture
    assert _raised(torch.cuda.memory_snapshot)[0] == "AttributeError"
    assert _raised(torch.cuda.is_current_stream_capturing)[0] == "RuntimeError"
    assert ember.cuda.memory_snapshot() == []
    assert ember.cuda.is_current_stream_capturing() is False
