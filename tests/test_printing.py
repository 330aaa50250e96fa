"""repr of tensors must match PyTorch's exactly (with ``ember.`` in place of ``torch.``).

Most tests build a minimal stand-in tensor from a NumPy array, so that printing can be checked
independently of the rest of ember, and compare with ``repr`` of the same values in torch.
"""
import math

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ember import _dtype as edt
from ember._printing import (get_printoptions, legacy_type_name, printoptions,
                             scalar_type_name, set_printoptions, tensor_repr)
from differential import catch, same, warnings_of

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
               "float32", "float64", "complex64", "complex128"]
FLOAT_NAMES = ["float16", "bfloat16", "float32", "float64"]


# ----------------------------------------------------------------------------- helpers
class FakeDevice:
    def __init__(self, type_="cpu", index=None):
        self.type = type_
        self.index = index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class FakeNode:
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


class FakeTensor:
    """Only the attributes _printing reads from an ember Tensor."""

    def __init__(self, data, dtype_name, requires_grad=False, grad_fn=None, device=None):
        self._dtype = edt.ALIASES[dtype_name]
        self._data = np.asarray(data).astype(self._dtype.np)
        self._device = device or FakeDevice()
        self._requires_grad = requires_grad or grad_fn is not None
        self.grad_fn = FakeNode(grad_fn) if grad_fn else None
        self.is_leaf = grad_fn is None

    def _host(self):
        return self._data.copy()


def torch_from(data):
    """The torch tensor holding exactly the values of a NumPy array (bfloat16 included)."""
    if data.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(data.astype(np.float32)).bfloat16()
    return torch.from_numpy(np.array(data, order="C", copy=True))


def expected_repr(fake):
    t = torch_from(fake._data)
    if fake.grad_fn is not None:
        t = t.requires_grad_()
        name = fake.grad_fn.name()
        # An op that keeps the values and gives the requested grad_fn.
        t = {"CloneBackward0": t.clone, "ViewBackward0": lambda: t.view(t.shape)}[name]()
        assert type(t.grad_fn).__name__ == name
    elif fake._requires_grad:
        t = t.requires_grad_()
    return repr(t).replace("torch.", "ember.")


def check(data, dtype_name, **kwargs):
    fake = FakeTensor(data, dtype_name, **kwargs)
    ours = tensor_repr(fake)
    theirs = expected_repr(fake)
    assert ours == theirs, f"\nember:\n{ours}\ntorch:\n{theirs}"
    return ours


def both_set_printoptions(**kwargs):
    torch.set_printoptions(**kwargs)
    set_printoptions(**kwargs)


@pytest.fixture(autouse=True)
def restore_state():
    """Every test starts and ends with default print options and default dtype."""
    both_set_printoptions(profile="default")
    yield
    both_set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    edt.set_default_dtype(edt.float32)


def values_for(dtype_name, values):
    """Coerce Python values to something valid for the dtype (e.g. abs for uint8)."""
    arr = np.asarray(values)
    if dtype_name == "bool":
        return arr != 0
    if dtype_name == "uint8":
        return np.abs(arr.real).astype(np.int64) % 256
    if dtype_name in ("int8", "int16", "int32", "int64"):
        info = np.iinfo(dtype_name)
        return np.clip(arr.real.astype(np.int64), info.min, info.max)
    return arr


# ----------------------------------------------------------------------------- fixed cases
inf, nan = math.inf, math.nan

FLOAT_CASES = [
    [1.0, 2.0], [1e-5, 1e3], [0.1, 1.5], [-0.0, 1.5], [-0.0, 1.0], [0.0, nan], [inf, 1.0],
    [-inf, 1.0], [inf, 1.0, 100.0], [nan, inf, -inf], [nan, 1e10], [1e8, 1.0], [1e9],
    [1.5e8], [1e-4], [1.1e-4], [9e-5], [123456.7, 1.0], [1e8, 1.5], [1e8 + 1, 1.5],
    [0.0, 0.0], [-1.5, 2.25, -3.125], [1000.0, 1.0], [1001.0, 1.0], [999.0, 0.5],
    [1e-3, 1.0], [1.0001e-3, 1.0], [3.14159, -2.71828, 1e-2], [65504.0, -65504.0],
    [1e-7, 1e-7], [-1e20, 3.0], [0.5, nan, -inf], [12345678.0], [0.3333333],
]


@pytest.mark.parametrize("dtype_name", FLOAT_NAMES)
@pytest.mark.parametrize("values", FLOAT_CASES, ids=str)
def test_float_vectors(values, dtype_name):
    check(np.array(values), dtype_name)


@pytest.mark.parametrize("dtype_name", FLOAT_NAMES)
@pytest.mark.parametrize("value", [3.0, -0.0, 0.0, nan, inf, -inf, 1.5, 1e-5, 1e10, 123.456,
                                   -7.0, 1e-30])
def test_float_scalars(value, dtype_name):
    check(np.array(value), dtype_name)


@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0), (3, 0, 2), (0, 0)], ids=str)
def test_empty(shape, dtype_name):
    check(np.zeros(shape), dtype_name)


@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
@pytest.mark.parametrize("values", [[1, 2], [0], [-128, 5, 127], [0, 1, 0, 1], 7, 0,
                                    list(range(-20, 30)), [[1, 0], [3, 4]]], ids=str)
def test_every_dtype(values, dtype_name):
    check(values_for(dtype_name, values), dtype_name)


def test_int64_extremes():
    check(np.array([2**62, -5, np.iinfo(np.int64).min]), "int64")
    check(np.array([np.iinfo(np.int32).min, 0]), "int32")


def test_bool():
    assert check(np.array([True, False]), "bool") == "tensor([ True, False])"
    assert check(np.array([True, True]), "bool") == "tensor([True, True])"
    assert check(np.array(False), "bool") == "tensor(False)"


COMPLEX_CASES = [
    [1 + 2j, -1j], [1.5 + 2j, -1j], [1e10 + 1j, 0j], [complex(nan, nan)], [complex(inf, 1)],
    [0.5j, 100.25 + 0j], [complex(1, -inf), complex(-0.0, -0.0)], [1e-5 + 1e5j, 3 - 4j],
    [complex(0, nan), 2 + 0j], list(np.arange(30) * (1 - 1e6j)), list(np.arange(30) * 1.5 + 1j),
]


@pytest.mark.parametrize("dtype_name", ["complex64", "complex128"])
@pytest.mark.parametrize("values", COMPLEX_CASES, ids=str)
def test_complex(values, dtype_name):
    check(np.array(values), dtype_name)


@pytest.mark.parametrize("dtype_name", ["complex64", "complex128"])
def test_complex_scalar(dtype_name):
    check(np.array(1 + 2j), dtype_name)
    check(np.array(complex(-0.0, 1e-9)), dtype_name)


def test_examples_from_docs():
    assert check(np.array([1e-5, 1e3]), "float32") == "tensor([1.0000e-05, 1.0000e+03])"
    assert check(np.array(3.0), "float32") == "tensor(3.)"
    assert check(np.array([1 + 2j, 0 - 1j]), "complex64") == "tensor([1.+2.j, 0.-1.j])"
    assert check(np.array([1.0, 2.0]), "float16") == "tensor([1., 2.], dtype=ember.float16)"


@pytest.mark.parametrize("shape", [(2, 2, 3), (2, 3, 1, 2), (1, 1, 1), (3, 1), (1, 3),
                                   (2, 1, 2, 1, 2), (4, 13), (2, 40), (3, 3, 3, 3)], ids=str)
@pytest.mark.parametrize("dtype_name", ["float32", "int32", "bool", "complex64"])
def test_nd_layout(shape, dtype_name):
    rng = np.random.default_rng(sum(shape))
    data = rng.normal(size=shape) * 10 + 1j * rng.normal(size=shape)
    check(values_for(dtype_name, data if dtype_name == "complex64" else data.real),
          dtype_name)


@pytest.mark.parametrize("n", [1, 13, 14, 18, 19, 70, 100, 101])
@pytest.mark.parametrize("dtype_name", ["int32", "float64", "int64", "float32"])
def test_line_wrapping_and_suffix_wrapping(n, dtype_name):
    check(np.arange(n) + 10, dtype_name)
    check((np.arange(n) * 1.5).reshape(1, n), dtype_name)


@pytest.mark.parametrize("linewidth", range(20, 90))
def test_suffix_wrap_boundaries(linewidth):
    both_set_printoptions(linewidth=linewidth)
    check(np.arange(13) + 10, "int32")
    check((np.arange(26) + 10).reshape(2, 13), "int32")
    check(np.arange(12) * 1.5, "float64", requires_grad=True)
    check(np.arange(9) * 1.5, "float16", grad_fn="CloneBackward0")
    check(np.array([1.0]), "float64", requires_grad=True)
    check(np.zeros((0, 4)), "int16")
    check(np.array([1.5 + 1j]), "complex128", grad_fn="ViewBackward0")


# ----------------------------------------------------------------------------- summarising
@pytest.mark.parametrize("shape", [(2000,), (1001,), (2, 1000), (20, 20, 20), (1001, 1),
                                   (1, 1001), (1, 1, 1001), (7, 1, 1, 1, 200), (1000, 2),
                                   (10, 101), (6, 200), (7, 200)], ids=str)
@pytest.mark.parametrize("dtype_name", ["float32", "int64", "bool", "complex128", "bfloat16"])
def test_summarised(shape, dtype_name):
    n = int(np.prod(shape))
    data = (np.arange(n) * 1.25 - 7).reshape(shape)
    if dtype_name == "complex128":
        data = data + 1j * data[::-1]
    check(values_for(dtype_name, data), dtype_name)


def test_summary_uses_only_edge_values():
    # The 1e-9 in the hidden middle must not switch the formatter to scientific notation.
    data = np.ones(2001)
    data[1000] = 1e-9
    assert check(data, "float64") == \
        "tensor([1., 1., 1.,  ..., 1., 1., 1.], dtype=ember.float64)"


@pytest.mark.parametrize("edgeitems", [0, 1, 2, 4])
@pytest.mark.parametrize("threshold", [0, 5, 10, 1000])
def test_edgeitems_and_threshold(edgeitems, threshold):
    both_set_printoptions(edgeitems=edgeitems, threshold=threshold)
    for shape in [(), (2,), (7,), (20, 100), (2, 2), (3, 9, 2)]:
        data = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 1.5
        check(data, "float32")
        check(data.astype(np.int64), "int64")
        check(data.astype(np.int64), "int16")
        check(data, "float32", requires_grad=True)


def test_large_tensor_is_fast():
    import time
    data = np.random.default_rng(0).normal(size=10**7).astype(np.float32)
    start = time.perf_counter()
    text = tensor_repr(FakeTensor(data, "float32"))
    assert time.perf_counter() - start < 2.0
    assert text == expected_repr(FakeTensor(data, "float32"))
    check(data.reshape(1000, 100, 100), "float32")


# ----------------------------------------------------------------------------- options
@pytest.mark.parametrize("sci_mode", [True, False, None])
@pytest.mark.parametrize("values", [[1e-5, 1e3], [1e-5, 1.5], [1e10, 1.0], [1.0, 2.0],
                                    [1.0, 2.0, inf, nan], [0.0, 0.0], 3.0, [1 + 1j],
                                    [0.25, -0.5]], ids=str)
def test_sci_mode(values, sci_mode):
    both_set_printoptions(sci_mode=sci_mode)
    dtype_name = "complex64" if np.iscomplexobj(values) else "float32"
    check(np.array(values), dtype_name)


@pytest.mark.parametrize("precision", [0, 1, 2, 6, 10])
def test_precision(precision):
    both_set_printoptions(precision=precision)
    check(np.array([1.123456789, 2.0]), "float32")
    check(np.array([1.123456789, 2.0]), "float64")
    check(np.array([0.1]), "bfloat16")
    check(np.array([1e-6, 5.5]), "float64")
    check(np.array([0.5 + 1.25j]), "complex128")


@pytest.mark.parametrize("profile", ["default", "short", "full"])
def test_profiles(profile):
    both_set_printoptions(profile=profile)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    check(np.arange(1500) / 3, "float32")
    check(np.arange(1500).reshape(30, 50), "int64")


def test_set_printoptions_semantics():
    for kwargs in [dict(sci_mode=True), dict(precision=2), dict(profile="short"),
                   dict(profile="full", precision=6), dict(profile="bogus", linewidth=100),
                   dict(threshold=5, edgeitems=1), dict(), dict(profile="default")]:
        both_set_printoptions(**kwargs)
        assert get_printoptions() == torch._tensor_str.get_printoptions(), kwargs


def test_printoptions_context_manager():
    with printoptions(precision=2, sci_mode=True):
        assert get_printoptions()["precision"] == 2
        assert get_printoptions()["sci_mode"] is True
    assert get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3,
                                  "linewidth": 80, "sci_mode": None}


@pytest.mark.parametrize("linewidth", [10, 20, 33, 120, 200])
def test_linewidth(linewidth):
    both_set_printoptions(linewidth=linewidth)
    check(np.arange(50) * 1.5, "float32")
    check(np.arange(60).reshape(3, 4, 5), "int8")
    check(np.arange(20) * (1 + 2j), "complex64")
    check(np.arange(40) * 1.5, "float64", grad_fn="CloneBackward0")


# ----------------------------------------------------------------------------- suffixes
@pytest.mark.parametrize("dtype_name", FLOAT_NAMES + ["complex64", "complex128"])
def test_requires_grad_and_grad_fn(dtype_name):
    check(np.array([1.0, 2.0]), dtype_name, requires_grad=True)
    check(np.array(2.0), dtype_name, requires_grad=True)
    check(np.zeros((0, 2)), dtype_name, requires_grad=True)
    check(np.array([[1.0, 2.0]]), dtype_name, grad_fn="CloneBackward0")
    check(np.array([1.0, 2.0]), dtype_name, grad_fn="ViewBackward0")


@pytest.mark.parametrize("default", ["float64", "float16", "bfloat16", "float32"])
@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
def test_default_dtype_changes_suffix(default, dtype_name):
    torch.set_default_dtype(getattr(torch, default))
    edt.set_default_dtype(edt.ALIASES[default])
    check(values_for(dtype_name, [1.0, 2.0]), dtype_name)
    check(np.zeros(0), dtype_name)


def test_non_cpu_device():
    cuda = FakeDevice("cuda", 0)
    assert tensor_repr(FakeTensor([1.0, 2.0], "float32", device=cuda)) == \
        "tensor([1., 2.], device='cuda:0')"
    assert tensor_repr(FakeTensor([1, 2], "int32", device=cuda)) == \
        "tensor([1, 2], device='cuda:0', dtype=ember.int32)"
    assert tensor_repr(FakeTensor([1.0], "float64", device=cuda, requires_grad=True)) == \
        "tensor([1.], device='cuda:0', dtype=ember.float64, requires_grad=True)"
    assert tensor_repr(FakeTensor(np.zeros((0, 2)), "float32", device=cuda)) == \
        "tensor([], device='cuda:0', size=(0, 2))"
    assert tensor_repr(FakeTensor([2.0], "float32", device=cuda, grad_fn="MulBackward0")) == \
        "tensor([2.], device='cuda:0', grad_fn=<MulBackward0>)"


# ----------------------------------------------------------------------------- type names
@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
def test_type_names(dtype_name):
    d = edt.ALIASES[dtype_name]
    legacy = torch.empty(0, dtype=getattr(torch, dtype_name)).type()
    assert "torch." + legacy_type_name(d, FakeDevice()) == legacy
    assert legacy_type_name(d, FakeDevice("cuda", 0)) == "cuda." + legacy[len("torch."):]
    # ScalarType names are what torch's error messages use, e.g. "... scalar type Float".
    assert legacy.endswith(scalar_type_name(d) + "Tensor")


# ----------------------------------------------------------------------------- property tests
_MAGNITUDES = [0.0, 1e-9, 1e-5, 1e-4, 1e-3, 0.1, 1.0, 10.0, 999.0, 1e3, 1e5, 1e8, 1e9, 1e12,
               1e30]
_SPECIALS = [0.0, -0.0, nan, inf, -inf]


@st.composite
def float_arrays(draw):
    shape = draw(st.lists(st.integers(0, 5), min_size=0, max_size=4))
    n = int(np.prod(shape))
    scale = draw(st.sampled_from(_MAGNITUDES))
    integral = draw(st.booleans())
    base = draw(st.lists(st.floats(-1000, 1000, allow_nan=False), min_size=n, max_size=n))
    data = np.array(base, dtype=np.float64) * scale
    if integral:
        data = np.round(data)
    if n and draw(st.booleans()):
        idx = draw(st.lists(st.integers(0, n - 1), max_size=3))
        data[idx] = draw(st.sampled_from(_SPECIALS))
    return data.reshape(shape)


@st.composite
def print_options(draw):
    return dict(precision=draw(st.integers(0, 8)), linewidth=draw(st.integers(15, 160)),
                threshold=draw(st.sampled_from([1000, 0, 3, 10, 50])),
                edgeitems=draw(st.integers(0, 4)),
                sci_mode=draw(st.sampled_from([None, True, False])))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(float_arrays(), st.sampled_from(DTYPE_NAMES), st.booleans(), print_options())
def test_hypothesis_values(data, dtype_name, requires_grad, options):
    both_set_printoptions(**options)
    try:
        if dtype_name.startswith("complex"):
            data = data + 1j * np.roll(data, 1)
        data = values_for(dtype_name, data)
        grad = requires_grad and dtype_name in FLOAT_NAMES + ["complex64", "complex128"]
        with np.errstate(all="ignore"):
            check(data, dtype_name, requires_grad=grad)
    finally:
        both_set_printoptions(profile="default")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=4),
       st.sampled_from(["float32", "int64", "complex64", "bool", "float16"]),
       st.integers(0, 4), st.integers(0, 40))
def test_hypothesis_summarised_shapes(shape, dtype_name, edgeitems, threshold):
    both_set_printoptions(edgeitems=edgeitems, threshold=threshold)
    try:
        n = int(np.prod(shape))
        data = (np.arange(n, dtype=np.float64) * 0.75 - n / 3).reshape(shape)
        if dtype_name == "complex64":
            data = data - 2j * data
        check(values_for(dtype_name, data), dtype_name)
    finally:
        both_set_printoptions(profile="default")


# ----------------------------------------------------------------------------- real ember
# The same expression is evaluated with m=ember and m=torch; the reprs must agree.
REAL_CASES = [
    lambda m: m.tensor([1.0, 2.0]),
    lambda m: m.tensor(3.0),
    lambda m: m.tensor([[1.5, -2.0], [1e-5, 1e3]]),
    lambda m: m.tensor([1, 2], dtype=m.int32),
    lambda m: m.tensor([1.0, 2.0], dtype=m.float64),
    lambda m: m.tensor([1.0, 2.0], dtype=m.float16),
    lambda m: m.tensor([0.1, 2.0], dtype=m.bfloat16),
    lambda m: m.tensor([1 + 2j, -1j]),
    lambda m: m.tensor([True, False]),
    lambda m: m.tensor([], dtype=m.int64),
    lambda m: m.zeros(0, 3),
    lambda m: m.arange(12).reshape(3, 4),
    lambda m: m.arange(24.0).reshape(2, 3, 4) / 7,
    lambda m: m.arange(2000.0),
    lambda m: m.arange(8000).reshape(20, 20, 20),
    lambda m: m.ones(2, requires_grad=True),
    lambda m: m.ones(2, requires_grad=True) * 2,
    lambda m: (m.ones(2, requires_grad=True) + 1).sum(),
    lambda m: m.ones(2, 3, requires_grad=True) @ m.ones(3, 2),
    lambda m: m.ones(2, requires_grad=True).exp(),
    lambda m: m.ones(2, 2, requires_grad=True).t(),
    lambda m: m.ones(2, requires_grad=True)[0],
    lambda m: m.ones(12, dtype=m.float64, requires_grad=True) * 1.5,
]


@pytest.mark.parametrize("case", range(len(REAL_CASES)))
def test_real_ember_tensors(case):
    import ember
    make = REAL_CASES[case]
    expected = repr(make(torch)).replace("torch.", "ember.")
    assert repr(make(ember)) == expected
    assert str(make(ember)) == str(make(torch)).replace("torch.", "ember.")


def test_real_ember_print_options_and_default_dtype():
    import ember
    assert ember.set_printoptions is set_printoptions
    assert ember.get_printoptions is get_printoptions
    both_set_printoptions(precision=2, sci_mode=True, linewidth=40)
    for make in REAL_CASES:
        assert repr(make(ember)) == repr(make(torch)).replace("torch.", "ember.")
    both_set_printoptions(profile="default")
    torch.set_default_dtype(torch.float64)
    ember.set_default_dtype(ember.float64)
    for make in REAL_CASES:
        assert repr(make(ember)) == repr(make(torch)).replace("torch.", "ember.")


def test_real_ember_huge_tensor_is_fast():
    import time

    import ember
    x = ember.arange(10**7, dtype=ember.float32)
    start = time.perf_counter()
    text = repr(x)
    assert time.perf_counter() - start < 2.0
    assert text == repr(torch.arange(10**7, dtype=torch.float32))


# ----------------------------------------------------------------------------- printing, nodes
def _stale_no_grad_view(T):
    """A view made in no_grad whose base is then changed in place with grad on: reading its
    grad_fn raises, and its repr says grad_fn=<Invalid>."""
    x = T.ones(3, requires_grad=True).clone()
    with T.no_grad():
        u = x[1:]
    x.add_(1)
    return u


def _nodes(T):
    class MyFn(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g
    x = T.ones(3, requires_grad=True)
    z = x.clone()
    z[0] = 5
    return {"accumulate": (x * 2).grad_fn.next_functions[0][0], "copy_slices": z.grad_fn,
            "mul": (x * 2).grad_fn, "custom": MyFn.apply(x).grad_fn}


GRAPH_PRINTS = {
    "stale_view_repr": lambda T: repr(_stale_no_grad_view(T)),
    "stale_view_grad_fn": lambda T: catch(lambda: _stale_no_grad_view(T).grad_fn),
    **{f"node_type_{k}": (lambda T, k=k: (str(type(_nodes(T)[k])), type(_nodes(T)[k]).__module__,
                                          _nodes(T)[k].name()))
       for k in ("accumulate", "copy_slices", "mul", "custom")},
}


@pytest.mark.parametrize("name", sorted(GRAPH_PRINTS))
def test_graph_prints(name):
    same(GRAPH_PRINTS[name])
