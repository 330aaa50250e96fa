"""The torch names added to drive API coverage to 100% (tools/api_coverage.py), against torch:
build flags and runtime names, torch's removed functions (their errors), the deprecated
per-device autocast functions, storages, CPU streams and events, and the Tensor methods for
old or low-level uses."""
import collections
import importlib
import os
import warnings

import numpy as np

import pytest
import torch

import ember
from differential import same, catch, warnings_of


# ----------------------------------------------------------------------------- build and runtime
def test_build_flags_and_queries():
    def f(T):
        return [T.has_lapack, T.has_spectral, T.compiled_with_cxx11_abi(), T.is_vulkan_available(),
                T.is_distributed(T.ones(2)), catch(T.is_distributed, 1),
                T.legacy_contiguous_format is T.contiguous_format]
    same(f)


def test_build_flags_are_bools():
    # MKL and OpenMP describe the build: ember's answers are its own (no MKL; its thread pool)
    assert ember.has_mkl is False and isinstance(ember.has_openmp, bool)


def test_error_classes():
    def f(T):
        return [[c.__name__, [b.__name__ for b in c.__mro__[1:]]]
                for c in (T.AcceleratorError, T.OutOfMemoryError, T.FatalError)]
    same(f)
    assert ember.OutOfMemoryError.__module__ == "ember"


@pytest.mark.parametrize("arg", [None, "cpu", "cuda", "mps", "meta", 1, "foo"])
def test_get_device_module(arg):
    def f(T):
        r = catch(T.get_device_module, arg) if arg is not None else T.get_device_module()
        return r if isinstance(r, tuple) else r.__name__.split(".", 1)[1]
    same(f)


def test_cpu_device_module():
    def f(T):
        m = T.get_device_module("cpu")
        return [m.is_available(), m.device_count(), m.current_device(), m.synchronize(),
                m.is_initialized()]
    same(f)


def test_cpu_stream_and_event():
    def f(T):
        s, e = T.Stream(), T.Event()
        return [repr(s), repr(e), repr(T.Event(enable_timing=True)), str(s.device), s.query(),
                e.query(), s.synchronize(), s.wait_event(e), e.synchronize(), e.wait(),
                catch(s.wait_stream, T.Stream()), catch(s.record_event), catch(e.record),
                catch(e.elapsed_time, T.Event()), s == T.Stream(), repr(T.Stream("cpu")),
                catch(T.Stream, "cuda"), catch(T.Event, "cuda"),
                catch(lambda: T.Stream().priority)[1]]
    same(f)


def test_deterministic_debug_mode():
    def f(T):
        out = [T.get_deterministic_debug_mode()]
        for mode in ("warn", "error", "default", 1, 2, 0):
            T.set_deterministic_debug_mode(mode)
            out.append([T.get_deterministic_debug_mode(), T.are_deterministic_algorithms_enabled(),
                        T.is_deterministic_algorithms_warn_only_enabled()])
        out += [catch(T.set_deterministic_debug_mode, "x"),
                catch(T.set_deterministic_debug_mode, 3), T.get_deterministic_debug_mode()]
        return out
    same(f)


# ----------------------------------------------------------------------------- removed functions
REMOVED = {"eig": lambda T, a: T.eig(a), "lstsq": lambda T, a: T.lstsq(a, a),
           "solve": lambda T, a: T.solve(a, a), "symeig": lambda T, a: T.symeig(a, True),
           "matrix_rank": lambda T, a: T.matrix_rank(a),
           "Tensor.eig": lambda T, a: a.eig(True), "Tensor.lstsq": lambda T, a: a.lstsq(a),
           "Tensor.solve": lambda T, a: a.solve(a), "Tensor.symeig": lambda T, a: a.symeig(),
           "Tensor.reinforce": lambda T, a: a.reinforce(a)}


@pytest.mark.parametrize("name", list(REMOVED))
def test_removed_functions_raise_torch_error(name):
    # the first sentence is torch's; the advice after it is ember's own words
    def f(T):
        kind, typ, msg = catch(REMOVED[name], T, T.eye(3))
        return [kind, typ, msg[:msg.index("removed.") + len("removed.")]]
    same(f)


# ----------------------------------------------------------------------------- autocast
def test_per_device_autocast_functions():
    def f(T):
        out = []
        for call in (lambda: T.get_autocast_cpu_dtype(), lambda: T.get_autocast_gpu_dtype(),
                     lambda: T.is_autocast_cpu_enabled(),
                     lambda: T.set_autocast_cpu_dtype(T.float16),
                     lambda: (T.get_autocast_dtype("cpu"), T.get_autocast_cpu_dtype()),
                     lambda: T.set_autocast_cpu_dtype(T.bfloat16),
                     lambda: T.set_autocast_gpu_dtype(T.bfloat16),
                     lambda: T.get_autocast_dtype("cuda"),
                     lambda: T.set_autocast_gpu_dtype(T.float16),
                     lambda: T.set_autocast_cpu_enabled(True),
                     lambda: T.is_autocast_enabled("cpu"),
                     lambda: T.set_autocast_cpu_enabled(False)):
            out.append(warnings_of(call))
        out += [catch(T.set_autocast_cpu_dtype, 1), catch(T.set_autocast_gpu_dtype, "x"),
                catch(T.set_autocast_cpu_enabled, 1), catch(T.set_autocast_cache_enabled, 1)]
        return out
    same(f)


def test_autocast_cache_switch_and_nesting():
    def f(T):
        out = [T.is_autocast_cache_enabled(), T.set_autocast_cache_enabled(False),
               T.is_autocast_cache_enabled(), T.set_autocast_cache_enabled(True),
               T.clear_autocast_cache(), T.autocast_increment_nesting(),
               T.autocast_decrement_nesting()]
        with T.autocast("cpu"):
            out += [T.autocast_increment_nesting(), T.autocast_decrement_nesting()]
        out.append(T.autocast_increment_nesting())
        out.append(T.autocast_decrement_nesting())
        return out
    same(f)


def test_grad_scaler_at_top_level():
    assert ember.GradScaler is ember.amp.GradScaler
    assert torch.GradScaler is torch.amp.GradScaler


# ----------------------------------------------------------------------------- storages
def test_storage_classes():
    def f(T):
        out = [T.Storage.__name__, issubclass(T.UntypedStorage, T.StorageBase),
               isinstance(T.ones(2).untyped_storage(), T.StorageBase)]
        T.set_default_dtype(T.float64)
        try:
            out.append(T.Storage.__name__)
        finally:
            T.set_default_dtype(T.float32)
        return out
    same(f)


def test_tensor_storage():
    def f(T):
        a = T.arange(6.).reshape(2, 3)
        (s, caught) = warnings_of(lambda: a[1].storage())
        out = [caught, type(s).__name__, s.dtype, s.size(), len(s), s[4], s.tolist(),
               str(s.device), s.data_ptr() == a.data_ptr(), s.element_size(), s.nbytes(),
               type(s.untyped()).__name__, s.is_shared(), list(s)]
        s[0] = 5.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shown = repr(T.tensor([1, 2]).storage())
        out += [a, shown,
                a.storage_type().__name__, T.arange(3).storage_type().__name__,
                T.ones(2, dtype=T.bool).storage_type().__name__]
        return out
    same(f)


def test_typed_storage_warning_once_per_process():
    """The typed-storage warning comes once, again after a reset, and every time when asked."""
    def f(T):
        a = T.arange(3.)
        counts = [len(warnings_of(a.storage)[1]), len(warnings_of(a.storage)[1])]
        T.storage._reset_warn_typed_storage_removal()
        counts.append(len(warnings_of(a.storage)[1]))
        T.storage._set_always_warn_typed_storage_removal(True)
        try:
            counts += [len(warnings_of(a.storage)[1]), len(warnings_of(a.storage)[1]),
                       T.storage._get_always_warn_typed_storage_removal()]
        finally:
            T.storage._set_always_warn_typed_storage_removal(False)
        return counts + [T.storage._get_always_warn_typed_storage_removal(),
                         catch(lambda: T.storage._set_always_warn_typed_storage_removal(1))]
    same(f)


# ----------------------------------------------------------------------------- Tensor methods
def test_const_data_ptr_and_is_set_to():
    def f(T):
        a = T.arange(6.).reshape(2, 3)
        return [a.const_data_ptr() == a.data_ptr(), a.is_set_to(a), a.is_set_to(a.view(6)),
                a.is_set_to(a.detach()), a[1].is_set_to(a), a.is_set_to(a.clone()),
                catch(a.is_set_to, 1)]
    same(f)


def test_resize_as():
    def f(T):
        r, w = warnings_of(lambda: T.arange(4.).resize_as(T.ones(2, 2)))
        return [r, w, warnings_of(lambda: catch(T.ones(3).resize_as, T.ones(2, 2)))]
    same(f)


def test_resize_as_gradient():
    def f(T):
        a = T.arange(4., requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = a.resize_as(T.ones(2, 2))
        (r * T.arange(4.).reshape(2, 2)).sum().backward()
        return [r, a.grad]
    same(f)


def test_map2_():
    def f(T):
        a = T.arange(6.).reshape(2, 3)
        r = a.map2_(T.ones(3), T.full((2, 1), 2.0), lambda x, y, z: x * 10 + y + z)
        g = T.ones(2, requires_grad=True)
        return [r is a, a, catch(g.map2_, T.ones(2), T.ones(2), lambda x, y, z: x),
                catch(T.ones(2).map2_, g, T.ones(2), lambda x, y, z: x),
                catch(T.ones(2).map2_, T.ones(3), T.ones(2), lambda x, y, z: x)]
    same(f)


def test_module_load():
    def f(T):
        b, a = T.zeros(3), T.ones(3)
        r = b.module_load(a)
        r2 = b.module_load(a * 2, assign=True)
        p = T.nn.Parameter(T.zeros(2))
        return [r, r is a, r is b, b, r2, b, catch(p.module_load, T.ones(2)),
                type(p.module_load(T.ones(2), assign=True)).__name__,
                catch(T.zeros(3).module_load, T.ones(4))]
    same(f)


def test_record_stream_on_cpu():
    def f(T):
        kind, typ, msg = catch(T.ones(2).record_stream, T.Stream())
        return [kind, typ, msg.split(" backend.")[0]]
    same(f)


def test_grad_dtype():
    def f(T):
        a = T.ones(2, requires_grad=True)
        b = T.ones(2, dtype=T.int64)
        out = [a.grad_dtype, b.grad_dtype, catch(lambda: (a * 1).grad_dtype)]
        a.grad_dtype = None
        a.grad_dtype = T.float32
        (a * 2).sum().backward()
        out += [a.grad_dtype, a.grad]
        out.append(catch(setattr, a, "grad_dtype", 1))
        return out
    same(f)


def test_grad_dtype_other_than_own_is_refused():
    a = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad_dtype other than"):
        a.grad_dtype = ember.float64


def test_tensor_name():
    def f(T):
        a = T.ones(2)
        return [a.name, catch(setattr, a, "name", "x")[1]]
    same(f)


# ----------------------------------------------------------------------------- nn native forms
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("offsets,last,padding", [([0, 2], False, None), ([0, 2, 5], True, None),
                                                  ([0, 2, 2], False, None), ([0, 2], False, 3),
                                                  ([0, 3], False, 0)])
def test_embedding_bag_outputs(mode, offsets, last, padding):
    def f(T):
        w = T.tensor([[0., 5, 2], [3, 1, 4], [6, 7, 0], [1, 9, 8]], requires_grad=True)
        i = T.tensor([0, 2, 1, 3, 3])
        out = T.embedding_bag(w, i, T.tensor(offsets), False, mode, False, None, last, padding)
        (out[0] * T.arange(out[0].numel(), dtype=T.float32).reshape(out[0].shape)).sum() \
            .backward()
        return [list(out), w.grad]
    same(f)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("offsets,last,padding", [([0, 2, 5], True, None), ([0, 2], False, 3),
                                                  ([0, 2, 2], False, None)])
def test_embedding_bag_outputs_without_grad(mode, offsets, last, padding):
    def f(T):
        w = T.tensor([[0., 5, 2], [3, 1, 4], [6, 7, 0], [1, 9, 8]])
        i = T.tensor([0, 2, 1, 3, 3])
        return list(T.embedding_bag(w, i, T.tensor(offsets), False, mode, False, None, last,
                                    padding))
    same(f)


def test_embedding_bag_int32_indices_and_weights():
    def f(T):
        w = T.arange(12.).reshape(4, 3)
        i, o = T.tensor([0, 2, 1, 3, 3], dtype=T.int32), T.tensor([0, 2, 2], dtype=T.int32)
        return [list(T.embedding_bag(w, i, o, False, 1, False, None, False, None)),
                list(T.embedding_bag(w, i.long(), o.long(), False, 0, False, T.ones(5), False,
                                     None)),
                list(T.embedding_bag(w, i.long(), o.long()))]
    same(f)


def test_embedding_renorm_():
    def f(T):
        w = T.arange(12.).reshape(4, 3)
        r = T.embedding_renorm_(w, T.tensor([1, 3]), 5.0, 2.0)
        return [r is w, w]
    same(f)


@pytest.mark.parametrize("mode,padding", [(0, 0), (1, 1), (2, 2), (0, 2), (1, 0)])
def test_grid_sampler_2d(mode, padding):
    def f(T):
        gen = np.random.default_rng(0)
        x = T.tensor(gen.standard_normal((2, 3, 4, 5)), requires_grad=True)
        g = T.tensor(gen.uniform(-1.2, 1.2, (2, 3, 2, 2)), requires_grad=True)
        out = T.grid_sampler_2d(x, g, mode, padding, mode == 1)
        (out * out).sum().backward()
        return [out, x.grad, g.grad if mode != 1 else None]
    same(f, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("mode,padding", [(0, 0), (1, 1), (0, 2)])
def test_grid_sampler_3d(mode, padding):
    def f(T):
        gen = np.random.default_rng(1)
        x = T.tensor(gen.standard_normal((1, 2, 3, 4, 3)), requires_grad=True)
        g = T.tensor(gen.uniform(-1.1, 1.1, (1, 2, 2, 3, 3)), requires_grad=True)
        out = T.grid_sampler_3d(x, g, mode, padding, False)
        (out * out).sum().backward()
        return [out, x.grad, g.grad if mode != 1 else None]
    same(f, rtol=1e-7, atol=1e-9)


def test_grid_sampler_rank_errors():
    def f(T):
        x, g = T.zeros(1, 2, 3, 3, 3), T.zeros(1, 2, 2, 2, 3)
        return [catch(T.grid_sampler_2d, x, g, 0, 0, False),
                catch(T.grid_sampler_3d, x[..., 0], g[..., 0, :2], 0, 0, False),
                catch(T.grid_sampler_3d, x, g, 2, 0, False)]
    same(f)


SEGMENTS = [("sum", dict(lengths=[1, 1])), ("max", dict(lengths=[2, 0])),
            ("mean", dict(lengths=[2, 0])), ("min", dict(lengths=[2, 0], initial=0.0)),
            ("prod", dict(offsets=[0, 1, 2])), ("amax", dict(lengths=[1, 1, 0])),
            ("sum", dict(lengths=[1, 1], initial=2)), ("prod", dict(lengths=[0, 2])),
            ("mean", dict(lengths=[1, 1], initial=3.0)), ("sum", dict(offsets=[1, 2])),
            ("amin", dict(lengths=[1, 1], unsafe=True)), ("max", dict(lengths=[1, 1]))]


@pytest.mark.parametrize("reduce,kw", SEGMENTS)
def test_segment_reduce(reduce, kw):
    def f(T):
        x = T.tensor([[1., -2, 3], [4, 5, -6]], requires_grad=True)
        kwargs = {k: T.tensor(v) if k in ("lengths", "offsets") else v for k, v in kw.items()}
        out = T.segment_reduce(x, reduce, **kwargs)
        finite = T.where(out.isfinite(), out, T.zeros(()))
        (finite * T.arange(1., out.numel() + 1).reshape(out.shape)).sum().backward()
        return [out, x.grad]
    same(f)


def test_segment_reduce_batched_lengths():
    def f(T):
        x = T.arange(24.).reshape(2, 3, 4)
        return [T.segment_reduce(x, "sum", lengths=T.tensor([[1, 2], [3, 0]]), axis=1),
                T.segment_reduce(x, "max", lengths=T.tensor([[1, 2], [3, 0]]), axis=1)]
    same(f)


def test_segment_reduce_errors():
    def f(T):
        x = T.tensor([[1., -2, 3], [4, 5, -6]])
        ln = T.tensor([1, 1])
        return [catch(T.segment_reduce, x, "sum", lengths=T.tensor([2, 1]), axis=1),
                catch(T.segment_reduce, x, "sum", lengths=T.tensor([1, 2])),
                catch(T.segment_reduce, x, "sum"),
                catch(T.segment_reduce, x, "foo", lengths=ln),
                catch(T.segment_reduce, x, "sum", indices=ln),
                catch(T.segment_reduce, x, "sum", lengths=T.tensor([-1, 3])),
                catch(T.segment_reduce, x, "sum", lengths=T.tensor([1, 1.])),
                catch(T.segment_reduce, x.int(), "sum", lengths=ln),
                T.segment_reduce(x, "sum", lengths=ln.int())]
    same(f)


# ----------------------------------------------------------------------------- nn constructors
def test_hardtanh_old_keyword_names():
    def f(T):
        a, wa = warnings_of(lambda: T.nn.Hardtanh(min_value=-2.0))
        b, wb = warnings_of(lambda: T.nn.Hardtanh(-1, 1, max_value=3.0))
        c, wc = warnings_of(lambda: T.nn.Hardtanh(-1, 1, min_value=-2.0, max_value=2.0))
        x = T.tensor([-5., -1.5, 0.5, 2.5])
        return [repr(a), wa, repr(b), wb, repr(c), wc, a(x), b(x), c(x)]
    same(f)


@pytest.mark.parametrize("cls", ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"])
def test_instance_norm_bias_switch(cls):
    def f(T):
        m = getattr(T.nn, cls)(3, affine=True, bias=False)
        n = getattr(T.nn, cls)(3, bias=True)
        return [repr(m), m.bias, m.weight, n.bias, sorted(dict(m.named_parameters())),
                catch(getattr(T.nn, cls), 3, 1e-5, 0.1, True, False, None, None, False)[0]]
    same(f)


def test_instance_norm_without_bias_forward():
    def f(T):
        m = T.nn.InstanceNorm1d(2, affine=True, bias=False)
        with T.no_grad():
            m.weight.copy_(T.tensor([2.0, -1.0]))
        return m(T.arange(12.).reshape(2, 2, 3))
    same(f)


def test_deprecated_containers_warn_in_new():
    def f(T):
        c, wc = warnings_of(lambda: T.nn.Container(a=T.nn.ReLU()))
        n, wn = warnings_of(lambda: T.nn.NLLLoss2d(ignore_index=1))
        return [repr(c), wc, repr(n), wn, n.ignore_index, isinstance(n, T.nn.NLLLoss)]
    same(f)


def test_rnn_cell_base_num_chunks():
    def f(T):
        c = T.nn.RNNCellBase(3, 4, True, 2)
        d = T.nn.RNNCellBase(3, 4, False, num_chunks=3)
        return [repr(c), c.weight_ih.shape, c.weight_hh.shape, c.bias_ih.shape,
                sorted(dict(c.named_parameters())), d.weight_ih.shape, d.bias_ih,
                T.nn.LSTMCell(2, 3).weight_ih.shape, T.nn.GRUCell(2, 3).weight_hh.shape,
                T.nn.RNNCell(2, 3).bias_hh.shape]
    same(f)


# ----------------------------------------------------------------------------- nn.parallel
def test_parallel_pieces_refuse_the_cpu_as_torch():
    def f(T):
        P = T.nn.parallel
        x = T.arange(6.).reshape(3, 2)
        lin = T.nn.Linear(2, 2)
        return [catch(P.scatter, x, ["cpu"]), catch(P.gather, [x, x], "cpu"),
                catch(P.gather, [x, x], -1), catch(P.gather, [(x, x)], "cpu", dim=1),
                catch(P.replicate, lin, ["cpu"]), catch(P.replicate, lin, [0]),
                catch(P.parallel_apply, [lin], [(x,)]),
                catch(P.parallel_apply, [lin], [(x,)], devices=["cpu"])]
    same(f)


def test_scatter_and_gather_structure(monkeypatch):
    # the splitting and joining themselves, on CPU tensors (torch runs them on GPUs only):
    # pieces are torch.chunk's, joined back by cat
    from ember.nn.parallel import scatter_gather as SG
    monkeypatch.setattr(SG, "check_not_cpu", lambda devices, what=None: [ember.device("cpu")]
                        * len(devices))
    x = ember.arange(10.).reshape(5, 2)
    parts = SG.scatter((x, {"k": x, "n": 3}, [x]), [0, 1, 2], dim=0)
    expected = torch.arange(10.).reshape(5, 2).chunk(3, 0)
    assert len(parts) == 3
    for part, e in zip(parts, expected):
        a, d, lst = part
        np.testing.assert_array_equal(a._data, e.numpy())
        np.testing.assert_array_equal(d["k"]._data, e.numpy())
        assert d["n"] == 3
        np.testing.assert_array_equal(lst[0]._data, e.numpy())
    inputs, kwargs = SG.scatter_kwargs((x,), {"y": x}, [0, 1], dim=1)
    assert len(inputs) == len(kwargs) == 2 and inputs[0][0].shape == (5, 1)
    monkeypatch.setattr(ember.Tensor, "device", property(lambda self: ember.device("cuda", 0)))
    joined = SG.gather([(x, {"a": x}), (x, {"a": x})], "cpu", dim=1)
    assert joined[0].shape == (5, 4) and joined[1]["a"].shape == (5, 4)


def test_module_registration_hooks():
    def f(T):
        M = T.nn.modules.module
        seen = []

        def on_param(module, name, value):
            seen.append(("param", type(module).__name__, name, tuple(value.shape)))
            if name == "bias":
                return T.nn.Parameter(T.zeros(value.shape))

        def on_buffer(module, name, value):
            seen.append(("buffer", type(module).__name__, name, value is None))
            return None if value is None else value * 2

        def on_module(module, name, value):
            seen.append(("module", type(module).__name__, name, type(value).__name__))

        handles = [M.register_module_parameter_registration_hook(on_param),
                   M.register_module_buffer_registration_hook(on_buffer),
                   M.register_module_module_registration_hook(on_module)]
        try:
            lin = T.nn.Linear(2, 3)
            bn = T.nn.BatchNorm1d(2)
            seq = T.nn.Sequential()
            seq.add_module("a", lin)
            seq.b = T.nn.ReLU()
            seq.b = None
            bn.running_mean = T.ones(2)
            bn.register_buffer("extra", T.ones(1))
            lin.register_parameter("nothing", None)
        finally:
            for h in handles:
                h.remove()
        after = T.nn.Linear(1, 1)
        return [seen, lin.bias.shape, bn.running_mean, bn.running_var, bn.extra,
                after.bias.shape, len(seen)]
    same(f)


# ----------------------------------------------------------------------------- nn helpers
def test_factory_kwargs():
    def f(T):
        fk = T.nn.factory_kwargs
        return [fk({"device": "cpu"}), fk(None), fk({}),
                fk({"factory_kwargs": {"dtype": T.float64}, "device": None}),
                catch(fk, {"foo": 1}),
                catch(fk, {"device": "cpu", "factory_kwargs": {"device": "cpu"}})]
    same(f)


def test_modules_utils_tuple_helpers():
    def f(T):
        U = importlib.import_module(f"{T.__name__}.nn.modules.utils")
        return [U._single(3), U._pair(3), U._pair((1, 2)), U._triple([1, 2, 3]), U._quadruple(0),
                U._pair("ab"), U._pair.__name__, U._reverse_repeat_tuple((1, 2), 2),
                U._list_with_default([None, 3], [5, 6, 7]), U._list_with_default(4, [1, 2]),
                catch(U._list_with_default, [None], [1]),
                catch(U._list_with_default, [None, None], [1, 2]), U.__all__]
    same(f)


def test_consume_prefix_in_state_dict_if_present():
    def f(T):
        U = importlib.import_module(f"{T.__name__}.nn.modules.utils")
        sd = collections.OrderedDict([("module.a", 1), ("module.b.c", 2), ("x", 3)])
        sd._metadata = {"": {"v": 1}, "module": {"v": 2}, "module.b": {"v": 3}}
        U.consume_prefix_in_state_dict_if_present(sd, "module.")
        plain = {"m.w": 1}
        U.consume_prefix_in_state_dict_if_present(plain, "m.")
        return [list(sd.items()), list(sd._metadata.items()), plain]
    same(f)


def test_consume_prefix_lets_a_bare_model_load_a_wrapped_state_dict():
    def f(T):
        T.manual_seed(0)
        wrapped = T.nn.Sequential(T.nn.Linear(2, 2))
        sd = T.nn.DataParallel(wrapped).state_dict()
        T.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
        bare = T.nn.Sequential(T.nn.Linear(2, 2))
        return [sorted(sd), str(bare.load_state_dict(sd))]
    same(f)


def test_linear_cross_entropy_module_is_importable():
    def f(T):
        return importlib.import_module(f"{T.__name__}.nn.modules.linear_cross_entropy").__all__
    same(f)


# ----------------------------------------------------------------------------- nn.functional
def test_functional_helpers():
    def f(T):
        F = T.nn.functional

        def t(x, flag=False):
            "true doc"
            return ("t", x, flag)

        def f_(x, flag=False):
            return ("f", x, flag)

        def doc(d):
            def fn(x, flag=False):
                return 0
            fn.__doc__ = d
            return fn
        g = F.boolean_dispatch("flag", 1, False, t, f_, "mymod", "myfn")
        g2 = F.boolean_dispatch("flag", 1, True, lambda x, flag=False: ("t2", flag),
                                lambda x, flag=False: ("f2", flag), "mymod", "myfn")
        shared = [t.__doc__, f_.__doc__]
        docs = [catch(lambda: F.boolean_dispatch("flag", 1, False, doc(a), doc(b), "m", "n")
                      .__doc__) for a, b in [(None, None), (None, "B"), ("A", None),
                                             ("A", "B"), ("", None)]]
        return [g(1), g(1, True), g(1, flag=True), g(1, flag=None), g(1, 0), g(x=1), g2(1),
                g.__name__, g.__module__, g.__doc__, docs, shared,
                catch(F.boolean_dispatch, "flag", 1, False, t, f_, "m", "n"),
                [catch(F.assert_int_or_pair, x, "kernel", "{} must be int or pair")
                 for x in (1, (1, 2), [1, 2, 3], "ab", "a")],
                F.GRID_SAMPLE_INTERPOLATION_MODES, F.GRID_SAMPLE_PADDING_MODES,
                F.has_torch_function(()), F.has_torch_function_unary(T.ones(1)),
                F.has_torch_function_variadic(1, 2),
                F.handle_torch_function is T.overrides.handle_torch_function,
                F.native_channel_shuffle(T.arange(8.).reshape(1, 4, 2), 2)]
    same(f)


def _i32(T, *v):
    return T.tensor(v, dtype=T.int32)


GROUPED = {
    "2d-3d": lambda T, g: (g((4, 8)), g((2, 8, 4)), _i32(T, 1, 4)),
    "2d-3d-tail": lambda T, g: (g((4, 8)), g((2, 8, 4)), _i32(T, 2, 4)),
    "3d-3d": lambda T, g: (g((2, 4, 8)), g((2, 8, 4)), None),
    "3d-2d": lambda T, g: (g((2, 4, 8)), g((8, 8)), _i32(T, 4, 8)),
    "2d-2d": lambda T, g: (g((4, 8)), g((8, 4)), _i32(T, 4, 8)),
    "2d-2d-uneven": lambda T, g: (g((4, 8)), g((8, 4)), _i32(T, 3, 8)),
}


@pytest.mark.parametrize("case", list(GROUPED))
def test_grouped_mm_values_and_gradients(case):
    def f(T):
        rng = np.random.default_rng(0)
        g = lambda s: T.tensor(rng.standard_normal(s), dtype=T.float32,  # noqa: E731
                               requires_grad=True)
        a, b, offs = GROUPED[case](T, g)
        out = T.nn.functional.grouped_mm(a, b, offs=offs)
        (out * out).sum().backward()
        return [out, a.grad, b.grad]
    same(f, rtol=1e-5, atol=1e-5)


def test_grouped_mm_dtypes_and_errors():
    def f(T):
        F = T.nn.functional
        a, b = T.ones(4, 8), T.ones(2, 8, 8)
        offs = _i32(T, 2, 4)
        return [F.grouped_mm(a.half(), b.half(), offs=offs).dtype,
                F.grouped_mm(a, b, offs=offs, out_dtype=T.float32).dtype,
                catch(F.grouped_mm, a.double(), b.double(), offs=offs),
                catch(F.grouped_mm, a, b.half(), offs=offs),
                catch(F.grouped_mm, a.half(), b, offs=offs),
                catch(F.grouped_mm, a, b[:, :4], offs=offs),
                catch(F.grouped_mm, a, b, offs=_i32(T, 2, 4, 4)),
                catch(F.grouped_mm, a[0], b, offs=offs),
                catch(F.grouped_mm, T.ones(2, 4, 8), T.ones(3, 8, 4)),
                catch(F.grouped_mm, a, b, offs=offs.reshape(1, 2)),
                catch(F.grouped_mm, a, b, offs=offs.long()),
                catch(F.grouped_mm, a, b),
                catch(F.grouped_mm, T.ones(2, 4, 8), T.ones(2, 8, 4), offs=offs),
                catch(F.grouped_mm, a, b, offs=offs, bias=T.zeros(2, 8)),
                catch(F.grouped_mm, a, b, offs=offs, out_dtype=T.float16),
                catch(F.grouped_mm, T.ones(4, 8), T.ones(2, 8, 3), offs=offs),
                F.grouped_mm(a, b.transpose(1, 2), offs=offs).shape,
                F.grouped_mm(a.t(), b[0], offs=offs).shape]
    same(f)


# ----------------------------------------------------------------------------- control flow
@pytest.fixture
def keep_torch_distribution_validation():
    # torch.cond imports torch's compiler stack, which turns torch.distributions' default
    # argument validation off for the rest of the process: restore it for later tests
    before = torch.distributions.Distribution._validate_args
    yield
    torch.distributions.Distribution.set_default_validate_args(before)


def test_cond_and_while_loop(keep_torch_distribution_validation):
    def f(T):
        x = T.ones(2, requires_grad=True)
        r = T.cond(T.tensor(True), lambda v: v * 3, lambda v: v - 1, (x,))
        r.sum().backward()
        return [r, x.grad,
                T.cond(False, lambda v: v + 1, lambda v: v - 1, (T.ones(2),)),
                T.cond(1, lambda v: v + 1, lambda v: v - 1, (T.ones(2),)),
                T.cond(T.tensor(1.), lambda: 1, lambda: 2),
                T.cond(True, lambda v: [v, 1], lambda v: [v, 2], (T.ones(1),)),
                catch(T.cond, T.tensor([True, False]), lambda v: v, lambda v: v, (T.ones(1),)),
                T.while_loop(lambda i: i < 3, lambda i: i + 1, (0,)),
                T.while_loop(lambda i: i < 3, lambda i: (i + 1,), (T.tensor(0),)),
                T.while_loop(lambda i: i < 3, lambda i: i + 1, (T.tensor(0),)),
                T.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2),
                             [T.tensor(0), T.ones(2)])]
    same(f)


def test_fork_and_wait():
    def f(T):
        fut = T.fork(lambda v, k=1: v * 2 + k, T.ones(2), k=3)
        return [isinstance(fut, T.Future), T.wait(fut), fut.wait()]
    same(f)


# ----------------------------------------------------------------------------- ormqr
@pytest.mark.parametrize("shape,other,left,transpose", [
    ((5, 3), (5, 2), True, False), ((5, 3), (5, 2), True, True), ((4, 4), (3, 4), False, False),
    ((4, 2), (3, 4), False, True), ((2, 5, 3), (2, 5, 4), True, False)])
def test_ormqr(shape, other, left, transpose):
    def f(T):
        rng = np.random.default_rng(0)
        a = T.tensor(rng.standard_normal(shape))
        q, tau = T.geqrf(a)
        q.requires_grad_()
        tau.requires_grad_()
        c = T.tensor(rng.standard_normal(other), requires_grad=True)
        out = T.ormqr(q, tau, c, left, transpose)
        m = q.ormqr(tau, c, left=left, transpose=transpose)
        (out * out.detach().sign()).sum().backward()
        return [out, m, q.grad, tau.grad, c.grad]
    same(f, rtol=1e-8, atol=1e-10)


def test_ormqr_complex_and_errors():
    def f(T):
        rng = np.random.default_rng(1)
        a = T.tensor(rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3)))
        q, tau = T.geqrf(a)
        c = T.tensor(rng.standard_normal((4, 2)) + 0j)
        return [T.ormqr(q, tau, c), T.ormqr(q, tau, c, True, True),
                catch(T.ormqr, q, tau, T.ones(3, 2, dtype=T.complex128)),
                catch(T.ormqr, q, tau[:2], c),
                catch(T.ormqr, q, tau, c, False)]
    same(f, rtol=1e-8, atol=1e-10)


# ----------------------------------------------------------------------------- from_file
def test_from_file(tmp_path):
    def f(T):
        path = str(tmp_path / f"{T.__name__}.bin")
        np.arange(10, dtype=np.float64).tofile(path)
        out = [T.from_file(path, shared=False, size=10, dtype=T.float64),
               T.from_file(path, size=4, dtype=T.float64), T.from_file(path),
               T.from_file(path, size=2, dtype=T.int64), T.from_file(path, size=2).dtype]
        t = T.from_file(path, shared=True, size=3, dtype=T.float64)
        t[0] = 42
        out.append(np.fromfile(path)[:3].tolist())
        p = T.from_file(path, shared=False, size=3, dtype=T.float64)
        p[1] = 7
        out += [p, np.fromfile(path)[:3].tolist()]
        out.append(catch(T.from_file, path, shared=False, size=11, dtype=T.float64))
        missing = str(tmp_path / "nope.bin")
        out.append(catch(T.from_file, missing, shared=False, size=2))
        new = str(tmp_path / f"{T.__name__}-new.bin")
        out += [T.from_file(new, shared=True, size=3, dtype=T.float32),
                os.path.getsize(new)]
        return [o.replace(T.__name__, "X") if isinstance(o, str) else
                tuple(x.replace(T.__name__, "X") if isinstance(x, str) else x for x in o)
                if isinstance(o, tuple) else o for o in out]
    same(f)


def test_disable_torch_function():
    def f(T):
        class O:
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return "O"
        out = [T.overrides.has_torch_function((O(),))]
        with T.DisableTorchFunction():
            out.append(T.overrides.has_torch_function((O(),)))
            out.append(T.overrides.has_torch_function_unary(O()))
        with T.DisableTorchFunctionSubclass():
            out.append(T.overrides.has_torch_function_variadic(O(), 1))
        out.append(T.overrides.has_torch_function((O(),)))
        return out
    same(f)


def test_thread_safe_generator_outside_workers():
    same(lambda T: T.thread_safe_generator())


def test_native_norm_of_sparse_tensors():
    def f(T):
        s = T.tensor([[3., 0], [0, 4]]).to_sparse()
        dense = T.tensor([[3., 0], [0, 4]])
        return [T.native_norm(s), T.native_norm(s, 1), T.native_norm(s, 2, [0, 1], False, None),
                T.native_norm(s, None, [], False, None), T.native_norm(s, float("inf")),
                T.native_norm(s, 0), catch(T.native_norm, s, 2, [0, 1], False, T.float64),
                catch(T.native_norm, s, 2, [0, 1], True, T.float64),
                catch(T.native_norm, s, 2, [1], False, None),
                catch(T.native_norm, dense)[:2]]
    same(f)


# ----------------------------------------------------------------------------- optim
@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_swap_in_optimizer_params_and_state(opt):
    def f(T):
        model = T.nn.Linear(2, 2)
        with T.no_grad():
            model.weight.copy_(T.tensor([[1., 2.], [3., 4.]]))
            model.bias.copy_(T.tensor([0.5, -0.5]))
        kw = {"momentum": 0.9} if opt == "SGD" else {}
        o = getattr(T.optim, opt)(model.parameters(), lr=0.1, **kw)
        model(T.ones(1, 2)).sum().backward()
        o.step()                                      # the live state exists
        live = [p.detach().clone() for p in model.parameters()]
        sd = o.state_dict()
        copy_state = {"state": {k: {n: v.clone() if isinstance(v, T.Tensor) else v
                                    for n, v in s.items()} for k, s in sd["state"].items()},
                      "param_groups": [dict(g) for g in sd["param_groups"]]}
        swap = {n: p.detach().clone().requires_grad_() for n, p in model.named_parameters()}
        for p in swap.values():
            p.grad = T.ones_like(p)
        with T.optim.swap_in_optimizer_params_and_state(o, swap, copy_state):
            inside = [len(o.param_groups[0]["params"]),
                      o.param_groups[0]["params"][0] is swap["weight"]]
            o.step()
        return [inside, [swap[n] for n in swap], [p.detach() for p in model.parameters()], live,
                o.param_groups[0]["params"][0] is model.weight,
                sorted(copy_state["state"][0]), [v for v in copy_state["state"][0].values()]]
    same(f)


# ----------------------------------------------------------------------------- orthogonal
def _orth(T):
    return importlib.import_module(f"{T.__name__}.nn.utils.parametrizations").orthogonal


@pytest.mark.parametrize("orth_map,trivial", [("matrix_exp", True), ("cayley", True),
                                              ("householder", True), ("matrix_exp", False),
                                              ("cayley", False), ("householder", False)])
def test_orthogonal_maps_values_and_gradients(orth_map, trivial):
    # a square weight: assigning the identity makes the base the identity (no random part)
    def f(T):
        rng = np.random.default_rng(0)
        m = _orth(T)(T.nn.Linear(3, 3, dtype=T.float64), orthogonal_map=orth_map,
                     use_trivialization=trivial)
        original = m.parametrizations.weight.original
        with T.no_grad():
            if trivial:
                m.weight = T.eye(3, dtype=T.float64)
            original.copy_(T.tensor(rng.standard_normal((3, 3))))
        w = m.weight
        (w * T.tensor(rng.standard_normal((3, 3)))).sum().backward()
        return [w, original.grad, (w @ w.T - T.eye(3, dtype=T.float64)).abs().max() < 1e-12]
    same(f, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_orthogonal_householder_assignment_without_trivialization(shape):
    def f(T):
        rng = np.random.default_rng(1)
        q = T.linalg.qr(T.tensor(rng.standard_normal(shape[:-2] + (max(shape[-2:]),) * 2)))[0]
        q = q[..., :shape[-2], :shape[-1]] if shape[-2] <= shape[-1] else q[..., :shape[-1]]
        mod = T.nn.Module()
        mod.w = T.nn.Parameter(T.zeros(*shape, dtype=T.float64))
        _orth(T)(mod, "w", "householder", use_trivialization=False)
        mod.w = q
        return [mod.w, mod.parametrizations.w.original]
    same(f, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("orth_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_orthogonal_structure(orth_map, shape):
    # the weight starts from a random orthogonal base: compare structure, not values
    def f(T):
        m = _orth(T)(T.nn.Linear(shape[1], shape[0]), orthogonal_map=orth_map)
        w = m.weight
        p = m.parametrizations.weight[0]
        small = min(shape)
        gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
        return [repr(m), p.orthogonal_map.name, sorted(m.state_dict()), tuple(p.base.shape),
                m.parametrizations.weight.original, tuple(w.shape),
                (gram - T.eye(small)).abs().max().item() < 1e-5]
    same(f)


def test_orthogonal_keeps_an_orthogonal_weight():
    def f(T):
        m = T.nn.Linear(3, 3, dtype=T.float64)
        q = T.linalg.qr(T.tensor(np.random.default_rng(2).standard_normal((3, 3))))[0]
        with T.no_grad():
            m.weight.copy_(q)
        _orth(T)(m)
        return [m.weight, m.parametrizations.weight[0].base]
    same(f, rtol=1e-9, atol=1e-11)


def test_orthogonal_errors():
    def f(T):
        orth = _orth(T)
        m = orth(T.nn.Linear(4, 3))
        out = [catch(orth, T.nn.Linear(3, 3), "bias"),
               catch(orth, T.nn.Linear(3, 3), "weight", "foo"),
               catch(orth, T.nn.Linear(3, 3), "nothing"),
               catch(setattr, m, "weight", T.eye(2))]
        m2 = orth(T.nn.Linear(3, 3), use_trivialization=False)
        out.append(catch(setattr, m2, "weight", T.eye(3)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(catch(orth, T.nn.Linear(3, 3).to(T.cfloat), "weight", "householder"))
        return [o if isinstance(o, tuple) and "Module '" not in o[2] else o[:2] for o in out]
    same(f)


# ----------------------------------------------------------------------------- unsigned dtypes
UNSIGNED = ["uint16", "uint32", "uint64"]


@pytest.mark.parametrize("name", UNSIGNED)
def test_barebones_unsigned_dtypes(name):
    def f(T):
        dt = getattr(T, name)
        t = T.tensor([1, 2, 300], dtype=dt)
        return [repr(dt), dt.is_signed, dt.is_floating_point, dt.is_complex, dt.itemsize,
                t, repr(t), t.dtype, t.type(), t.numpy().dtype.name, t.float(), t.long(),
                T.zeros(2, dtype=dt), T.ones(2, dtype=dt), T.empty(0, dtype=dt).shape,
                T.full((2,), 7, dtype=dt), t == 2, t * 2, t.sum(), t.sum().dtype,
                T.tensor([70000, -1]).to(dt), T.tensor([2.7, 65535.0]).to(dt),
                T.from_numpy(np.array([5, 6], dtype=name)), str(T.iinfo(dt)),
                T.promote_types(dt, dt), T.promote_types(dt, T.float32),
                T.promote_types(T.float64, dt), T.promote_types(dt, T.float16),
                T.promote_types(T.bfloat16, dt), catch(T.promote_types, dt, T.complex64),
                catch(T.promote_types, dt, T.int64), catch(T.promote_types, T.bool, dt),
                catch(T.promote_types, dt, T.uint8), catch(lambda: t + T.tensor([1, 2, 3]))]
    same(f)


def test_barebones_unsigned_dtypes_together():
    def f(T):
        return [catch(T.promote_types, T.uint16, T.uint32),
                catch(T.promote_types, T.uint64, T.int8),
                T.tensor([1, 2], dtype=T.uint16).to(T.uint64),
                T.tensor([1, 2], dtype=T.uint64).to(T.uint16)]
    same(f)


# ----------------------------------------------------------------------------- float8 dtypes
FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]


@pytest.mark.parametrize("name", FLOAT8)
def test_float8_dtypes(name):
    def f(T):
        dt = getattr(T, name)
        x = T.tensor([400., 1000., -0.3, 1e-4, 3.3, float("nan"), float("inf"), 0.1, 5e5])
        t = x.to(dt)
        out = [repr(dt), dt.is_floating_point, dt.is_signed, dt.itemsize, t.dtype, t.type(),
               t.float(), x.double().to(dt).float(), x.half().to(dt).float(),
               T.tensor([1.5, -2.0, 0.25], dtype=dt).float(), T.zeros(2, dtype=dt).float(),
               T.ones(2, dtype=dt).float(), str(T.finfo(dt)),
               T.promote_types(dt, dt), catch(T.promote_types, dt, T.float32),
               catch(T.promote_types, T.int64, dt), catch(T.promote_types, dt, T.uint16)]
        if name != "float8_e8m0fnu":           # (torch prints e8m0 in fixed notation)
            out += [repr(t), repr(T.tensor([1.5, -2.0], dtype=dt))]
        return out
    same(f)


def test_hash_tensor():
    def f(T):
        x = T.tensor([[1.5, -2., 3.], [4., 5., 0.]], requires_grad=True)
        return [T.hash_tensor(x), T.hash_tensor(x, 1), T.hash_tensor(x, 0, keepdim=True),
                T.hash_tensor(x, (0, 1)), T.hash_tensor(x.half()), T.hash_tensor(x.int()),
                T.hash_tensor(T.tensor([True, False])), T.hash_tensor(T.tensor(-1)),
                T.hash_tensor(T.tensor([1, 2], dtype=T.uint8)), T.hash_tensor(x, None),
                x.hash_tensor(1, keepdim=True), T.hash_tensor(x).requires_grad,
                T.hash_tensor(T.tensor([-0.0])), catch(T.hash_tensor, T.zeros(0, 2), 0),
                T.hash_tensor(T.zeros(0, 2), 1),
                catch(T.hash_tensor, T.tensor([1 + 2j])), catch(T.hash_tensor, T.zeros(0)),
                catch(T.hash_tensor, x, mode=1),
                catch(T.hash_tensor, T.tensor([1, 2], dtype=T.uint16))]
    same(f)


# ----------------------------------------------------------------------------- scaled_mm
def test_scaling_enums():
    def f(T):
        F = T.nn.functional
        scaling = ["TensorWise", "RowWise", "BlockWise1x16", "BlockWise1x32", "BlockWise1x128",
                   "BlockWise128x128"]
        return [[(getattr(F.ScalingType, n).name, getattr(F.ScalingType, n).value,
                  repr(getattr(F.ScalingType, n))) for n in scaling],
                [(getattr(F.SwizzleType, n).name, getattr(F.SwizzleType, n).value)
                 for n in ("NO_SWIZZLE", "SWIZZLE_32_4_4")]]
    same(f)


@pytest.mark.parametrize("recipe", ["TensorWise", "RowWise"])
@pytest.mark.parametrize("out_dtype", [None, "float32", "float16"])
def test_scaled_mm(recipe, out_dtype):
    def f(T):
        F = T.nn.functional
        rng = np.random.default_rng(0)
        a = T.tensor(rng.standard_normal((16, 32)), dtype=T.float32).to(T.float8_e4m3fn)
        b = T.tensor(rng.standard_normal((32, 16)), dtype=T.float32).to(T.float8_e5m2)
        if recipe == "TensorWise":
            sa, sb = T.tensor(2.0), T.tensor(0.5)
        else:
            sa = T.tensor(rng.uniform(0.5, 1.5, (16, 1)), dtype=T.float32)
            sb = T.tensor(rng.uniform(0.5, 1.5, (1, 16)), dtype=T.float32)
        kind = getattr(F.ScalingType, recipe)
        kw = {} if out_dtype is None else {"output_dtype": getattr(T, out_dtype)}
        r = F.scaled_mm(a, b, sa, kind, sb, kind, **kw)
        rl = F.scaled_mm(a, b, [sa], [kind], [sb], [kind], **kw)
        rb = F.scaled_mm(a, b, sa, kind, sb, kind, bias=T.ones(16), **kw)
        return [r.float(), rl.float(), rb.float(), r.dtype]
    same(f, rtol=1e-2, atol=1e-2)


def test_scaled_mm_errors():
    def f(T):
        F = T.nn.functional
        a = T.ones(16, 32).to(T.float8_e4m3fn)
        b = T.ones(32, 16).to(T.float8_e4m3fn)
        tw, rw = F.ScalingType.TensorWise, F.ScalingType.RowWise
        one = T.tensor(1.0)
        kind, typ, msg = catch(F.scaled_mm, a, b, one, F.ScalingType.BlockWise1x32, one,
                               F.ScalingType.BlockWise1x32)
        return [catch(F.scaled_mm, a.float(), b, one, tw, one, tw),
                catch(F.scaled_mm, a, b, T.ones(16, 1), tw, T.ones(1, 16), rw),
                catch(F.scaled_mm, a, b, T.ones(16, 1), rw, T.ones(1, 8), rw),
                catch(F.scaled_mm, a, b, one.double(), tw, one, tw), (kind, typ),
                catch(F.scaled_grouped_mm, a, T.stack([b, b]), T.ones(16), rw, T.ones(2, 16), rw,
                      offs=T.tensor([8, 16], dtype=T.int32))[:2]]
    same(f)
