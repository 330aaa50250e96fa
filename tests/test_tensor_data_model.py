"""Differential audit of the Tensor data model (construction, factories, memory layout of
copies, number writes, printing, views, conversions) against torch: each test pins down a
discrepancy found in the audit."""
import random
import warnings

import numpy as np
import pytest

from differential import catch, same, warnings_of
import array
import torch
import ember
from differential import grad_fn_name as _node


# ----------------------------------------------------------------------------- from data
def test_numpy_small_int_scalars_into_uint8():
    def f(T):
        return [catch(T.tensor, x, dtype=d) for x in ([np.uint8(1), True], [np.int8(-1)],
                                                       [np.int16(-3), 2],
                                                       [np.uint8(200), np.int8(-1)])
                for d in (None, T.uint8)]
    same(f)


# ----------------------------------------------------------------------------- sizes
SIZE_ARGS = [(2.0,), (2, 3.0), ((2, 3.0),), ([2, 3.0],), ((2.5,),), ([2.5],), ([2, "a"],),
             (2.5, 3), ([],), (np.float64(2),), (True,), ([True],), (2, True), ("a",),
             (None,), (2, None), ((2, 3), 4), (True, 2), (2, (3,)), (np.int64(3),),
             ([np.int32(2), 1],), (np.array([2, 3]),)]


@pytest.mark.parametrize("args", SIZE_ARGS, ids=range(len(SIZE_ARGS)))
def test_factory_size_errors(args):
    def f(T):
        return [catch(lambda: fn(*args).shape)
                for fn in (T.zeros, T.ones, T.empty, T.rand, T.randn)]
    same(f)


def test_factory_size_tensors_and_keyword():
    same(lambda T: [catch(lambda: T.zeros(*a).shape) for a in
                    [(T.tensor(2.),), (T.tensor(2),), ([T.tensor(2)],), (T.tensor([2, 3]),),
                     (2, T.tensor(2.)), ([2, T.tensor(1.)],), (T.Size([2]),)]] +
         [catch(lambda: T.ones(size=[2, 3]).shape), catch(lambda: T.rand(size=(2,)).shape),
          catch(lambda: T.empty(size=(1,)).shape), catch(lambda: T.zeros(2, size=(2,))),
          catch(lambda: T.randn(2, size=(2,)))])


def test_eye_argument_errors():
    def f(T):
        return [catch(lambda: T.eye(*a, **k)) for a, k in [
            ((2.0,), {}), ((2, 3.0), {}), ((2, None), {}), (("a",), {}), ((True,), {}),
            ((2, True), {}), ((np.int64(2),), {}), ((T.tensor(2),), {}), ((2,), {"m": 2.5}),
            ((2.5, 3), {}), ((None,), {}), ((2, 3), {}), ((2,), {"m": 3}), ((), {"n": 2}),
            ((-1,), {}), ((2, -2), {})]]
    same(f)


def test_empty_strided_checks():
    same(lambda T: [catch(T.empty_strided, (2, 3), (3,)),
                    catch(T.empty_strided, (2, -3), (3, 1)),
                    catch(lambda: T.empty_strided((2, 3), (1, 2)).stride())])


# ----------------------------------------------------------------------------- full / fill
def test_full_infers_numpy_bool_and_complex64_as_float():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (NumPy: complex64 -> float drops the imag part)
        same(lambda T: [T.full((2,), v) for v in (np.bool_(True), np.int32(2), np.float16(1.5),
                                                   np.complex64(1 + 2j),
                                                   np.complex128(1 + 2j), True, 3, 2.5)])


FILL_VALUES = [-1, -1.5, 200, 256, -129, -255, -256, 2.7, -2.7, 1e10, float("nan"),
               float("inf"), True, 1 + 0j, 1 + 1j, -1 + 0j, 70000, 1e39, -0.0, 255.9, 127.9,
               -128.9, 3.4028235e38, 9.3e18, 2 ** 63 - 1, complex(1e39, 0), complex(1, 1e39),
               np.float32(2.5), np.int64(-1), np.bool_(True), np.float64(2.5),
               np.complex64(1), np.int32(300)]


@pytest.mark.parametrize("value", FILL_VALUES, ids=range(len(FILL_VALUES)))
def test_number_writes_check_overflow(value):
    """fill_, full and item assignment convert a number with the same checks (uint8 wraps
    negative ints but refuses negative floats; float32 refuses finite overflow; complex only
    with a zero imaginary part into a real dtype); NumPy float32/bool scalars can't be
    assigned."""
    def f(T):
        out = []
        for name in ("uint8", "int8", "int32", "int64", "bool", "float32", "float64",
                     "complex64"):
            dt = getattr(T, name)

            def put(index):
                x = T.zeros(2, dtype=dt)
                x[index] = value
                return x
            out += [catch(lambda: T.zeros(2, dtype=dt).fill_(value)),
                    catch(lambda: T.full((1,), value, dtype=dt)),
                    catch(put, 0), catch(put, T.tensor([0])), catch(put, slice(None))]
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(f)


# ----------------------------------------------------------------------------- ranges
def test_linspace_logspace_complex_and_argument_errors():
    def f(T):
        out = [catch(T.linspace, *a, **k) for a, k in [
            ((1j, 2j, 3), {}), ((0, 1j, 3), {}), ((T.tensor(1j), 2, 3), {}),
            ((1 + 1j, 2, 1), {}), ((1j, 2, 3), {"dtype": T.float32}),
            ((1j, 2, 3), {"dtype": T.complex128}), ((1j, 2, 0), {}), ((-1 - 2j, 3 + 4j, 7), {}),
            ((0, 1, 2.0), {}), ((0, 1, True), {}), ((0, 1, None), {}), ((0, "a", 2), {}),
            ((0, 1), {})]]
        out += [catch(T.logspace, *a, **k) for a, k in [
            ((0, 1j, 2), {}), ((0, 1, 3), {"dtype": T.complex64}), ((0, 1, 2.0), {}),
            ((1j, 2, 3), {"dtype": T.float64})]]
        return out
    same(f)


def test_randint_binding_and_bounds():
    def f(T):
        def shape(x):
            return x if isinstance(x, tuple) else (x.shape, x.dtype)
        return [shape(catch(T.randint, *a, **k)) for a, k in [
            ((3,), {}), ((3, 5), {}), ((3, 5, 6), {}), ((3, (2,), 5), {}), ((2.5, (2,)), {}),
            ((1, 2.5, (2,)), {}), ((3, [2.5]), {}), ((3,), {"size": 2}),
            ((3,), {"size": (2,)}), ((), {"high": 3, "size": (2,)}),
            ((), {"low": 1, "high": 3, "size": (2,)}), ((1, 3), {"size": (2,)}),
            ((0, 2 ** 63, (2,)), {}), ((0, 256, (2,)), {"dtype": T.uint8}),
            ((0, 257, (2,)), {"dtype": T.uint8}), ((-1, 5, (2,)), {"dtype": T.uint8}),
            ((0, 5, (2,)), {"dtype": T.complex64}), ((1, 0, (2,)), {"dtype": T.complex64}),
            ((0, 3, (2,)), {"dtype": T.bool}), ((-1, 1, (2,)), {"dtype": T.bool}),
            ((-129, 0, (1,)), {"dtype": T.int8}), ((0, 2 ** 15 + 1, (1,)), {"dtype": T.int16}),
            ((0, 2 ** 31 + 1, (1,)), {"dtype": T.int32}), ((True, (2,)), {})]]
    same(f)


def test_randperm_dtypes():
    def f(T):
        def shape(x):
            return x if isinstance(x, tuple) else (x.shape, x.dtype)
        return [shape(catch(T.randperm, *a, **k)) for a, k in [
            ((3,), {"dtype": T.bool}), ((0,), {"dtype": T.bool}),
            ((3,), {"dtype": T.complex128}), ((300,), {"dtype": T.uint8}),
            ((256,), {"dtype": T.uint8}), ((129,), {"dtype": T.int8}),
            ((128,), {"dtype": T.int8}), ((2 ** 15 + 1,), {"dtype": T.int16}),
            ((2050,), {"dtype": T.float16}), ((2049,), {"dtype": T.float16}),
            ((300,), {"dtype": T.bfloat16}), ((2.0,), {}), ((True,), {}),
            ((np.int64(3),), {}), ((T.tensor(3),), {})]] + \
            [sorted(T.randperm(2049, dtype=T.float16).tolist())[-2:]]
    same(f)


# ----------------------------------------------------------------------------- layouts
def _random_view(T, seed):
    """A chain of views (permute, narrow, select, step slices, broadcast unsqueezes)."""
    r = random.Random(seed)
    shape = [r.choice([1, 2, 3, 4]) for _ in range(r.randint(1, 4))]
    x = T.arange(float(np.prod(shape))).reshape(shape)
    for _ in range(r.randint(1, 4)):
        op, d = r.randint(0, 4), r.randrange(x.dim())
        if op == 0 and x.dim() > 1:
            perm = list(range(x.dim()))
            r.shuffle(perm)
            x = x.permute(perm)
        elif op == 1 and x.shape[d] > 1:
            x = x.narrow(d, 1, x.shape[d] - 1) if r.random() < .5 else \
                x.select(d, 0).unsqueeze(d)
        elif op == 2:
            x = x[(slice(None),) * d + (slice(None, None, 2),)]
        elif op == 3:
            x = x.unsqueeze(d)
            if r.random() < .5:
                x = x.expand(*x.shape[:d], 3, *x.shape[d + 1:])
        elif op == 4 and x.dim() > 1:
            x = x.transpose(0, -1)
    return x


@pytest.mark.parametrize("seed", range(0, 400, 20))
def test_copies_of_views_keep_their_memory_order(seed):
    """preserve_format: clone/to/*_like keep a dense input's strides and give any other input
    dense strides in its dims' memory order."""
    def f(T):
        out = []
        for s in range(seed, seed + 20):
            x = _random_view(T, s)
            for y in (x.clone(), x.to(T.float64), T.zeros_like(x), T.full_like(x, 2),
                      x.contiguous()):
                out.append((y.stride(), y))
            out.append(T.empty_like(x, dtype=T.int32).stride())
        return out
    same(f)


def test_memory_formats():
    def f(T):
        x = T.arange(120.).reshape(2, 3, 4, 5)
        y = x.to(memory_format=T.channels_last)
        w = T.ones(3, 4).t()
        return [y.stride(), y, y is x, y.to(memory_format=T.channels_last) is y,
                x.to(memory_format=T.contiguous_format) is x, y.to(T.float64).stride(),
                y.to(T.float64, memory_format=T.contiguous_format).stride(),
                w.to(memory_format=T.contiguous_format) is w,
                catch(w.contiguous, memory_format=T.preserve_format), y.clone().stride(),
                y.contiguous().stride(), y.contiguous() is y,
                catch(T.ones(2, 3).to, memory_format=T.channels_last), y.is_contiguous(),
                x.is_contiguous(memory_format=T.channels_last),
                y.is_contiguous(memory_format=T.channels_last),
                T.ones(0, 3, 4, 5).is_contiguous(memory_format=T.channels_last),
                T.ones(2, 1, 1, 1).is_contiguous(memory_format=T.channels_last),
                T.ones(2, 3).is_contiguous(memory_format=T.channels_last),
                T.empty(2, 3, 4, 5, memory_format=T.channels_last).stride(),
                catch(T.zeros, 2, memory_format=T.channels_last),
                T.zeros_like(x, memory_format=T.channels_last).stride(),
                x.clone(memory_format=T.channels_last).stride(),
                x.contiguous(memory_format=T.channels_last),
                x.contiguous(memory_format=T.channels_last).stride(),
                catch(T.zeros_like, T.ones(2, 3), memory_format=T.channels_last),
                y.contiguous(memory_format=T.channels_last) is y,
                T.empty(0, 3, 1, 5, memory_format=T.channels_last).stride(),
                T.ones_like(y).stride(), y.contiguous(memory_format=T.contiguous_format),
                T.ones(2, 3, 1, 1).to(memory_format=T.channels_last).stride(),
                T.ones_like(w, memory_format=T.contiguous_format).stride()]
    same(f)


# ----------------------------------------------------------------------------- views
VIEW_ARGS = [(12.0,), ("a",), (3, 4.0), ((3, 4.0),), ([3.5],), ((3.5,),), ((3.5, 2),), (None,),
             (True,), (3, True), ((3, 4), 1), ([3, "a"],), ((),), (-1,), ([-1, 3],), (3, -1), ()]


@pytest.mark.parametrize("args", VIEW_ARGS, ids=range(len(VIEW_ARGS)))
def test_view_and_reshape_argument_errors(args):
    same(lambda T: [catch(lambda: T.arange(12.).view(*args).shape),
                    catch(lambda: T.arange(12.).reshape(*args).shape),
                    catch(lambda: T.arange(1.).view(*args).shape)])


def test_view_dtype_and_size_mixed():
    same(lambda T: [catch(lambda: T.arange(12.).view(T.float32, 2)),
                    catch(lambda: T.arange(12.).view(T.Size([3, 4])).shape),
                    catch(T.Tensor, (1, 2.5), "x"), catch(T.Tensor, [1.5], 2)])


# ----------------------------------------------------------------------------- conversions
def test_int_float_of_complex_tensors():
    same(lambda T: [catch(f, T.tensor(v)) for f in (int, float, bool)
                    for v in (-2.7 + 1j, -2.7 + 0j, 1j, 0j)])


def test_contains():
    same(lambda T: [catch(lambda: v in T.tensor([1, 3])) for v in
                    (3, 2, 1.0, True, T.tensor([1, 2]), T.tensor([5]), T.tensor(1.),
                     T.tensor([1, 2, 3]), "a", None, [1], (1, 2))] +
         [T.tensor([[1, 2]]) in T.tensor([[1, 3], [0, 0]])])


def test_reversed():
    same(lambda T: [reversed(T.tensor(3.)), reversed(T.arange(6).reshape(2, 3)),
                    reversed(T.tensor([1., 2.], requires_grad=True)).grad_fn.name()])


def test_dtype_to_complex_of_integers():
    same(lambda T: [catch(d.to_complex) for d in (T.bool, T.uint8, T.int64, T.bfloat16,
                                                   T.float32, T.float64, T.complex64,
                                                   T.complex128)] +
         [d.to_real() for d in (T.bool, T.int32, T.float16, T.complex64, T.complex128)])


def test_pickle_keeps_geometry():
    import pickle

    def f(T):
        a = T.tensor([1., 2.], requires_grad=True)
        out = []
        for x in [a, T.tensor([1, 2], dtype=T.int8), T.tensor([1.5], dtype=T.bfloat16),
                  T.tensor([1 + 2j]), T.arange(6.).reshape(2, 3).t(), T.tensor(3.),
                  T.zeros(0, 2), T.arange(5.)[1:3], T.arange(12.).reshape(3, 4)[:, ::2],
                  (a * 2)]:
            y = pickle.loads(pickle.dumps(x))
            out += [y, y.dtype, y.requires_grad, y.stride(), y.is_leaf, y.grad_fn is None,
                    y.storage_offset(), y.is_contiguous()]
        return out
    same(f)


def test_deepcopy_keeps_geometry_and_sharing():
    import copy

    def f(T):
        out = []
        v = T.arange(6.).reshape(2, 3)
        for objs in [(v, v[1:]), (v[1:], v), (v.t(),), (v[:, 1],), (v, v.t(), v[0])]:
            c = copy.deepcopy(objs)
            out += [(x.stride(), x.storage_offset(), x.is_contiguous(), x) for x in c]
            c[-1][..., 0] = 100            # the copies share memory as the originals did
            out += list(c)
        p = T.nn.Parameter(T.ones(2, 3).t())
        q = copy.deepcopy(p)
        out += [q.stride(), type(q).__name__, q.requires_grad, repr(q)]
        a = T.tensor([1., 2.], requires_grad=True)
        out += [catch(copy.deepcopy, a * 2), copy.deepcopy(a).requires_grad]
        return out
    same(f)


def test_view_taken_in_no_grad_requires_grad():
    def f(T):
        w = T.ones(3, requires_grad=True)
        with T.no_grad():
            views = [w[1:], w.view(3), w.t(), w.detach()[1:]]
            computed = w * 2
        return [(v.requires_grad, v.is_leaf, v.grad_fn is None) for v in views] + \
            [computed.requires_grad, (views[0] * 2).requires_grad]
    same(f)


@pytest.mark.parametrize("seed", range(0, 300, 30))
def test_flip_keeps_memory_order(seed):
    def f(T):
        out = []
        for s in range(seed, seed + 30):
            x = _random_view(T, s)
            for dims in [(0,), (-1,), tuple(range(x.dim()))]:
                y = x.flip(dims)
                out.append((y.stride(), y))
        return out
    same(f)


def test_nonzero_static_adjoint_get_device():
    def f(T):
        x = T.tensor([0, 1, 0, 3])
        c = T.ones(2, 3, dtype=T.complex64) * (1 + 2j)
        return [T.nonzero_static(x, size=3),
                T.nonzero_static(T.tensor([[0, 1], [2, 3]]), size=2, fill_value=-5),
                T.nonzero_static(x, size=0), T.nonzero_static(T.tensor(5), size=2),
                T.nonzero_static(T.tensor([0., 2.]), size=1),
                x.nonzero_static(size=5, fill_value=7), catch(T.nonzero_static, x, size=-1),
                T.adjoint(c).resolve_conj(), catch(T.adjoint, T.ones(3)), T.get_device(T.ones(2))]
    same(f)


def test_tensor_utilities():
    def f(T):
        x = T.arange(4.0)
        v = int(x._version)
        x.apply_(lambda e: e * 2 + 1)
        x.map_(T.tensor([1.0, 1.0, 2.0, 2.0]), lambda a, b: a * b)
        r = T.ones(2, requires_grad=True)
        e = T.zeros(2, 3).new_empty_strided((2, 2), (1, 2), dtype=T.int64)
        return [x, int(x._version) - v, x.is_pinned(), x.is_shared(), x.share_memory_() is x,
                x.is_inference(), catch(x.pin_memory), catch(r.apply_, lambda e: e),
                e.shape, e.stride(), e.dtype]
    same(f)


def test_typename_and_predicates():
    def f(T):
        return [T.typename(T.ones(2)), T.typename(T.ones(2, dtype=T.int64)), T.typename(3),
                T.typename(T.nn.Linear(1, 1)), T.is_nonzero(T.tensor([1.5])),
                T.is_same_size(T.ones(2), T.ones(2, 1))]
    same(f)


# ----------------------------------------------------------------------------- frombuffer
def test_frombuffer():
    def f(T):
        buf = bytearray(b"abcdefgh")
        t = T.frombuffer(buf, dtype=T.int16, count=2, offset=2)
        buf[2] = 0                                     # the tensor shares the buffer's memory
        floats = T.frombuffer(array.array("f", [1.5, 2.5, 3.5]), dtype=T.float32)
        return [t, floats, T.frombuffer(bytearray(b"\x01\x02"), dtype=T.uint8,
                                        requires_grad=False),
                catch(T.frombuffer, bytearray(b"abc"), dtype=T.int16),
                catch(T.frombuffer, bytearray(b""), dtype=T.int16),
                catch(T.frombuffer, bytearray(b"abcd"), dtype=T.int16, count=3),
                catch(T.frombuffer, bytearray(b"abcd"), dtype=T.int16, offset=4)]
    same(f)


def test_frombuffer_read_only_warns_once():
    torch_t, torch_caught = warnings_of(lambda: torch.frombuffer(b"abcd", dtype=torch.uint8))
    ember.ops.creation._warned_readonly.clear()         # as in a fresh process
    t, caught = warnings_of(lambda: ember.frombuffer(b"abcd", dtype=ember.uint8))
    _, again = warnings_of(lambda: ember.frombuffer(b"ab", dtype=ember.uint8))
    assert np.array_equal(t.numpy(), torch_t.numpy())
    assert len(caught) == 1 and again == []
    if torch_caught:                  # (torch warns once per process: maybe earlier)
        assert caught == torch_caught


# ----------------------------------------------------------------------------- set_ / subclass
def test_set_():
    def f(T):
        y = T.arange(6.0).view(2, 3)
        x = T.zeros(2)
        v = int(x._version)
        r = x.set_(y)
        y[0, 0] = 7.0                                  # x shares y's memory
        x2 = T.zeros(2).set_(y, 1, (2,), (2,))
        x3 = T.zeros(2).set_(y.t())
        x4 = T.zeros(2)
        x4.set_()
        leaf = T.zeros(2, requires_grad=True)
        return [r is x, x, int(x._version) - v, x2, x3, x3.stride(), x4, x4.shape,
                catch(leaf.set_, y), catch(T.zeros(2).set_, T.zeros(2, dtype=T.int64))]
    same(f)


def test_as_subclass():
    def f(T):
        class Sub(T.Tensor):
            pass
        a = T.ones(2, requires_grad=True)
        b = a * 2
        c = b.as_subclass(Sub)
        (c * 3).sum().backward()
        plain = T.arange(3.0).as_subclass(Sub)
        return [type(c).__name__, _node(c), c.requires_grad, c.data_ptr() == b.data_ptr(),
                a.grad, type(plain).__name__, plain.requires_grad, plain * 1,
                catch(a.as_subclass, int)]
    same(f)
