"""complex32 (chalf, torch's ComplexHalf) against torch: the dtype, making and converting
tensors, view_as_real/view_as_complex, printing, reading elements, the ops torch's CPU kernels
serve for it (values rounded to float16 pairs as torch rounds) and torch's errors for the ops
they refuse, and the one warning the first complex32 tensor gives."""
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import ember
from differential import catch, same

pytestmark = pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")

VALUES = [1 + 2j, 3.1 - 4j, -0.3333 + 1e-3j, 65504 - 7.77j]


def _bits(T, t):
    """A complex32 tensor as its float16 pairs (view_as_real): the exact bits to compare."""
    return T.view_as_real(t.resolve_conj()) if t.dtype == T.complex32 else t


def _x(T, values=VALUES):
    return T.tensor(values, dtype=T.complex32)


def _y(T):
    return T.tensor([0.5 + 1j, 2 - 1j, 1.25 + 0.5j, -3 + 0j], dtype=T.complex32)


# ----------------------------------------------------------------------------- the dtype
def test_dtype_properties():
    def f(T):
        d = T.complex32
        return [repr(d), str(d), d.itemsize, d.is_complex, d.is_floating_point, d.is_signed,
                d.to_real(), d.to_complex(), T.chalf is d, T.float16.to_complex(),
                repr(T.finfo(d))]
    same(f)


@pytest.mark.parametrize("other", ["bool", "uint8", "int8", "int64", "float16", "bfloat16",
                                   "float32", "float64", "complex64", "complex128", "uint16",
                                   "float8_e4m3fn"])
def test_promotion(other):
    same(lambda T: [catch(T.promote_types, T.complex32, getattr(T, other)),
                    catch(T.promote_types, getattr(T, other), T.complex32)])


def test_result_types_with_scalars_and_zero_dim_tensors():
    same(lambda T: [(T.ones(2, dtype=T.complex32) + 1.5).dtype,
                    (T.ones(2, dtype=T.complex32) + 2j).dtype,
                    (T.ones(2, dtype=T.complex32) + T.tensor(1.5)).dtype,
                    (T.ones(2, dtype=T.float16) + 1j).dtype,
                    (T.ones(2, dtype=T.float16) + T.tensor(1.5j)).dtype])


# ----------------------------------------------------------------------------- making
@pytest.mark.parametrize("make", [
    lambda T: T.tensor(VALUES, dtype=T.complex32),
    lambda T: T.tensor([[1, 2], [3, 4]], dtype=T.complex32),
    lambda T: T.tensor(2.5, dtype=T.complex32),
    lambda T: T.tensor([1e6 + 1j, -1e-8 - 1e6j], dtype=T.complex32),
    lambda T: T.as_tensor([1j, 2], dtype=T.complex32),
    lambda T: T.zeros(2, 3, dtype=T.complex32),
    lambda T: T.ones(3, dtype=T.complex32),
    lambda T: T.full((2,), 1.5 - 2j, dtype=T.complex32),
    lambda T: T.full((2,), 3, dtype=T.complex32),
    lambda T: T.empty(0, dtype=T.complex32),
    lambda T: T.zeros_like(T.ones(2, dtype=T.complex32)),
    lambda T: T.ones_like(T.ones(2, 2), dtype=T.complex32),
    lambda T: T.full_like(T.ones(2, dtype=T.complex32), 2j),
    lambda T: T.ones(2, dtype=T.complex32).new_ones(3),
    lambda T: T.ones(2, dtype=T.complex32).new_zeros(3),
    lambda T: T.ones(2, dtype=T.complex32).new_full((2,), 3 + 1j),
    lambda T: T.ones(2, dtype=T.complex32).new_tensor([1, 2j]),
    lambda T: T.complex(T.tensor([1.5, 2.0], dtype=T.float16),
                        T.tensor([-1.0, 0.25], dtype=T.float16)),
])
def test_making(make):
    same(lambda T: [_bits(T, make(T)), repr(make(T)), make(T).dtype, make(T).shape])


@pytest.mark.parametrize("source", ["float32", "float64", "float16", "int64", "bool",
                                    "complex64", "complex128"])
def test_conversion_to_complex32_rounds_as_torch(source):
    rng = np.random.default_rng(0)
    values = rng.standard_normal(20) * 100 + 1j * rng.standard_normal(20) * 1e-3
    if source in ("int64", "bool"):
        values = np.array([0, 1, 2, 70000, -3])
    if source in ("float32", "float64", "float16"):
        values = values.real

    def f(T):
        x = T.tensor(values if source != "bool" else values.astype(bool),
                     dtype=getattr(T, source))
        return [_bits(T, x.chalf()), _bits(T, x.to(T.complex32)),
                _bits(T, x.to(dtype=T.chalf)), x.chalf().dtype]
    same(f)


def test_conversion_back():
    def f(T):
        x = _x(T)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [x.to(T.complex64), x.to(T.complex128), x.cfloat(), x.float(), x.half(),
                    x.to(T.float64), x.bool(), x.long(), x.to(T.complex64).dtype]
    same(f)


def test_views_share_memory():
    def f(T):
        x = _x(T)
        r = T.view_as_real(x)
        r[0, 1] = 7.0                   # the imaginary part of x[0]
        y = x[1:3].clone()
        re, im = x.real, x.imag
        im[1] = -1.0
        z = x.reshape(2, 2).t()
        return [_bits(T, x), r.dtype, r.shape, r.stride(), re, im, re.dtype, _bits(T, y),
                _bits(T, z), z.stride(), _bits(T, z.contiguous()), x.element_size(),
                x.nbytes]
    same(f)


def test_view_as_complex_of_half_pairs():
    def f(T):
        h = T.tensor([[1.0, 2.0], [3.0, -4.0], [0.5, 0.25]], dtype=T.float16)
        c = T.view_as_complex(h)
        c[0] = 5 + 6j                   # written through into h
        return [_bits(T, c), c.dtype, c.shape, h, catch(T.view_as_complex, h.t()),
                catch(T.view_as_complex, h[:, :1])]
    same(f)


def test_printing():
    def f(T):
        return [repr(_x(T)), repr(_x(T).reshape(2, 2)), repr(_x(T)[0]), str(_x(T)),
                repr(T.zeros(0, 2, dtype=T.complex32)),
                repr(T.tensor([1e-5 + 1j, 100 + 0j], dtype=T.complex32))]
    same(f)


def test_reading_elements():
    def f(T):
        x = _x(T)
        return [x[0].item(), x[1].item(), x.tolist(), x.reshape(2, 2).tolist(), complex(x[0]),
                bool(x[0]), catch(float, x[0]), catch(int, x[0]),
                float(T.tensor(2.5, dtype=T.complex32)),
                catch(lambda: x.numpy()), catch(lambda: x.numpy(force=True)),
                catch(lambda: np.asarray(x))]
    same(f)


# ----------------------------------------------------------------------------- ops
SERVED = {
    "add": lambda T, x, y: x + y,
    "sub": lambda T, x, y: x - y,
    "mul": lambda T, x, y: x * y,
    "neg": lambda T, x, y: -x,
    "add_scalar": lambda T, x, y: x + 1.5,
    "mul_scalar": lambda T, x, y: x * (2 - 1j),
    "rsub": lambda T, x, y: 1 - x,
    "add_half": lambda T, x, y: x + T.ones(4, dtype=T.float16),
    "add_float": lambda T, x, y: x + T.ones(4),
    "add_cfloat": lambda T, x, y: x + y.to(T.complex64),
    "abs": lambda T, x, y: x.abs(),
    "conj": lambda T, x, y: x.conj(),
    "conj_physical": lambda T, x, y: x.conj_physical(),
    "sgn": lambda T, x, y: x.sgn(),
    "eq": lambda T, x, y: x == y,
    "ne": lambda T, x, y: x != y,
    "eq_scalar": lambda T, x, y: x == (1 + 2j),
    "isnan": lambda T, x, y: x.isnan(),
    "isfinite": lambda T, x, y: (x * 100).isfinite(),
    "isinf": lambda T, x, y: (x * 100).isinf(),
    "isclose": lambda T, x, y: T.isclose(x, y),
    "allclose": lambda T, x, y: T.allclose(x, x),
    "addcmul": lambda T, x, y: T.addcmul(x, x, y),
    "addcmul_value": lambda T, x, y: T.addcmul(y, x, y, value=0.7),
    "addcmul_complex_value": lambda T, x, y: T.addcmul(y, x, y, value=0.1 + 0.3j),
    "outer": lambda T, x, y: T.outer(x, y),
    "kron": lambda T, x, y: T.kron(x, y),
    "norm": lambda T, x, y: x.norm(),
    "vector_norm": lambda T, x, y: T.linalg.vector_norm(y),
    "cat": lambda T, x, y: T.cat([x, y]),
    "cat_mixed": lambda T, x, y: T.cat([x, y.to(T.complex64)]),
    "stack": lambda T, x, y: T.stack([x, y]),
    "where": lambda T, x, y: T.where(T.tensor([True, False, True, False]), x, y),
    "roll": lambda T, x, y: x.roll(1),
    "repeat": lambda T, x, y: x.repeat(2),
    "index": lambda T, x, y: x[[3, 0]],
    "mask": lambda T, x, y: x[T.tensor([True, False, False, True])],
    "index_select": lambda T, x, y: x.index_select(0, T.tensor([2, 1])),
    "masked_fill": lambda T, x, y: x.masked_fill(T.tensor([True, False, True, False]), 2j),
    "index_put": lambda T, x, y: x.index_put((T.tensor([0, 2]),), y[:2]),
    "index_add": lambda T, x, y: x.index_add(0, T.tensor([1]), y[:1]),
    "tril": lambda T, x, y: x.reshape(2, 2).tril(),
    "diag": lambda T, x, y: x.diag(),
    "pad": lambda T, x, y: T.nn.functional.pad(x, (1, 2)),
    "nonzero": lambda T, x, y: x.nonzero(),
    "any": lambda T, x, y: x.any(),
    "count_nonzero": lambda T, x, y: x.count_nonzero(),
    "expand": lambda T, x, y: x[:2].expand(3, 2),
    "unbind": lambda T, x, y: x.unbind(),
    "sum_into_cfloat": lambda T, x, y: x.sum(dtype=T.cfloat),
    "sum_dim_into_cdouble": lambda T, x, y: x.reshape(2, 2).sum(0, dtype=T.cdouble),
    "mean_into_cfloat": lambda T, x, y: y.mean(dtype=T.cfloat),
    "cumsum_into_cfloat": lambda T, x, y: y.cumsum(0, dtype=T.cfloat),
    "flip_outer": lambda T, x, y: x.reshape(2, 2).flip(0),
}


@pytest.mark.parametrize("name", sorted(SERVED))
def test_served_ops(name):
    op = SERVED[name]

    def f(T):
        out = op(T, _x(T), _y(T))
        if isinstance(out, (tuple, list)):
            return [_bits(T, o) for o in out]
        return [_bits(T, out), out.dtype] if isinstance(out, T.Tensor) else out
    same(f, rtol=0, atol=0)


INPLACE = {
    "add_": lambda T, x, y: x.add_(y),
    "sub_": lambda T, x, y: x.sub_(y),
    "mul_": lambda T, x, y: x.mul_(y),
    "mul_scalar_": lambda T, x, y: x.mul_(3),
    "neg_": lambda T, x, y: x.neg_(),
    "fill_": lambda T, x, y: x.fill_(1.1 + 2.2j),
    "zero_": lambda T, x, y: x.zero_(),
    "copy_": lambda T, x, y: x.copy_(y),
    "copy_from_cfloat": lambda T, x, y: x.copy_(T.tensor([1.1 + 1j, 2, 3, 4.4])),
    "copy_into_cfloat": lambda T, x, y: T.zeros(4, dtype=T.complex64).copy_(x),
    "setitem": lambda T, x, y: x.__setitem__(slice(0, 2), 1.1 - 3j) or x,
    "setitem_tensor": lambda T, x, y: x.__setitem__(1, y[0]) or x,
    "abs_": lambda T, x, y: x.abs_(),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_in_place_ops(name):
    def f(T):
        x = _x(T).clone()
        out = catch(INPLACE[name], T, x, _y(T))
        if isinstance(out, tuple):
            return out
        return [_bits(T, out), out.dtype, _bits(T, x)]
    same(f, rtol=0, atol=0)


REFUSED = {
    "div": lambda T, x, y: x / y,
    "div_scalar": lambda T, x, y: x / 2,
    "rdiv": lambda T, x, y: 1 / x,
    "true_divide": lambda T, x, y: x.true_divide(y),
    "angle": lambda T, x, y: x.angle(),
    "exp": lambda T, x, y: x.exp(),
    "log": lambda T, x, y: x.log(),
    "sqrt": lambda T, x, y: x.sqrt(),
    "rsqrt": lambda T, x, y: x.rsqrt(),
    "sin": lambda T, x, y: x.sin(),
    "cos": lambda T, x, y: x.cos(),
    "tanh": lambda T, x, y: x.tanh(),
    "sigmoid": lambda T, x, y: x.sigmoid(),
    "reciprocal": lambda T, x, y: x.reciprocal(),
    "pow": lambda T, x, y: x ** 2,
    "pow_tensor": lambda T, x, y: x ** y,
    "square": lambda T, x, y: x.square(),
    "sum": lambda T, x, y: x.sum(),
    "sum_dim": lambda T, x, y: x.reshape(2, 2).sum(0),
    "mean": lambda T, x, y: x.mean(),
    "prod": lambda T, x, y: x.prod(),
    "cumsum": lambda T, x, y: x.cumsum(0),
    "cumprod": lambda T, x, y: x.cumprod(0),
    "max": lambda T, x, y: x.max(),
    "lt": lambda T, x, y: x < y,
    "matmul": lambda T, x, y: x.reshape(2, 2) @ y.reshape(2, 2),
    "mm": lambda T, x, y: T.mm(x.reshape(2, 2), y.reshape(2, 2)),
    "bmm": lambda T, x, y: T.bmm(x.reshape(1, 2, 2), y.reshape(1, 2, 2)),
    "mv": lambda T, x, y: T.mv(x.reshape(2, 2), y[:2]),
    "dot": lambda T, x, y: x.dot(y),
    "vdot": lambda T, x, y: T.vdot(x, y),
    "flip": lambda T, x, y: x.flip(0),
    "gather": lambda T, x, y: x.gather(0, T.tensor([1])),
    "scatter": lambda T, x, y: x.scatter(0, T.tensor([1]), y),
    "take": lambda T, x, y: x.take(T.tensor([1])),
    "lerp": lambda T, x, y: T.lerp(x, y, 0.5),
    "trace": lambda T, x, y: x.reshape(2, 2).trace(),
    "equal": lambda T, x, y: T.equal(x, y),
    "nan_to_num": lambda T, x, y: x.nan_to_num(),
    "softmax": lambda T, x, y: x.softmax(0),
    "arange": lambda T, x, y: T.arange(3, dtype=T.complex32),
    "linspace": lambda T, x, y: T.linspace(0, 1, 3, dtype=T.complex32),
    "eye": lambda T, x, y: T.eye(2, dtype=T.complex32),
    "polar": lambda T, x, y: T.polar(T.ones(2, dtype=T.float16), T.ones(2, dtype=T.float16)),
    "div_": lambda T, x, y: x.clone().div_(y),
    "sum_into_complex32": lambda T, x, y: x.sum(dtype=T.complex32),
    "fft": lambda T, x, y: T.fft.fft(x),
    "ifft": lambda T, x, y: T.fft.ifft(x),
    "flip_innermost": lambda T, x, y: x.reshape(2, 2).flip(1),
    "exp_": lambda T, x, y: x.clone().exp_(),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_ops_raise_torchs_error(name):
    out = same(lambda T: catch(REFUSED[name], T, _x(T), _y(T)))
    assert out[0] == "raised"


WARNING = ("UserWarning: ComplexHalf support is experimental and many operators don't support "
           "it yet.")
_FIRST_MAKE = """
import warnings, sys
import {lib} as T
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    T.zeros(2, dtype=T.complex32)
    T.ones(2).chalf()
    T.tensor([1j], dtype=T.complex32)
print([f"{{w.category.__name__}}: {{w.message}}" for w in caught])
"""


def test_the_first_complex32_tensor_warns_once():
    outs = []
    for lib in ("torch", "ember"):
        run = subprocess.run([sys.executable, "-c", _FIRST_MAKE.format(lib=lib)],
                             capture_output=True, text=True, check=True)
        outs.append(run.stdout)
    assert outs[0] == outs[1]
    assert outs[1].count(WARNING) == 1 and "EmptyTensor.cpp" in outs[1]


def test_state_dict_with_complex32_round_trips_through_torch(tmp_path):
    path = tmp_path / "c32.pt"
    x = ember.tensor(VALUES, dtype=ember.complex32)
    ember.save({"z": x, "view": x[1:3], "r": ember.view_as_real(x)}, path)
    loaded = torch.load(path)
    expected = torch.tensor(VALUES, dtype=torch.complex32)
    assert loaded["z"].dtype == torch.complex32
    assert torch.equal(torch.view_as_real(loaded["z"]), torch.view_as_real(expected))
    assert torch.equal(torch.view_as_real(loaded["view"]), torch.view_as_real(expected[1:3]))
    assert loaded["r"].dtype == torch.float16
    torch.save({"z": expected, "view": expected[1:3]}, path)
    back = ember.load(path)
    assert back["z"].dtype is ember.complex32
    assert back["z"].tolist() == expected.tolist()
    assert back["view"].tolist() == expected[1:3].tolist()


# wide-ranging values (magnitudes from 1e-4 to 3e3, some products overflowing float16): torch
# computes complex32 arithmetic in complex32 steps, rounding each intermediate (a scalar,
# alpha, value) to float16 pairs; every bit must agree
_RNG = np.random.default_rng(2)
_WIDE = (_RNG.standard_normal(600) + 1j * _RNG.standard_normal(600)) * \
    np.exp(_RNG.uniform(-8, 8, 600))
ROUNDING = {
    "mul": lambda T, a, b: a * b,
    "add": lambda T, a, b: a + b,
    "sub": lambda T, a, b: a - b,
    "abs": lambda T, a, b: a.abs(),
    "sgn": lambda T, a, b: a.sgn(),
    "mul_scalar": lambda T, a, b: a * (0.3 + 0.1j),
    "add_scalar": lambda T, a, b: a + 0.3,
    "rsub": lambda T, a, b: 0.3 - a,
    "rsub_alpha": lambda T, a, b: T.rsub(a, 0.3, alpha=0.7),
    "add_alpha": lambda T, a, b: T.add(a, b, alpha=0.3),
    "sub_alpha": lambda T, a, b: T.sub(a, b, alpha=0.3 + 1j),
    "add_alpha_": lambda T, a, b: a.clone().add_(b, alpha=0.3),
    "addcmul": lambda T, a, b: T.addcmul(a, a, b, value=0.7),
    "masked_fill": lambda T, a, b: a.masked_fill(a.abs() > 1, 0.3 + 0.7j),
    "fill_": lambda T, a, b: a.clone().fill_(0.1 + 0.2j),
    "outer": lambda T, a, b: T.outer(a[:20], b[:20]),
    "mul_float": lambda T, a, b: a * T.ones(300) * 0.7,
    "isclose": lambda T, a, b: T.isclose(a, b, rtol=0.5),
}


@pytest.mark.parametrize("name", sorted(ROUNDING))
def test_values_round_as_torch_bit_for_bit(name):
    def f(T):
        a = T.tensor(_WIDE[:300], dtype=T.complex32)
        b = T.tensor(_WIDE[300:], dtype=T.complex32)
        return _bits(T, ROUNDING[name](T, a, b))
    same(f, rtol=0, atol=0)
