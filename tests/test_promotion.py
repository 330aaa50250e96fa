"""Type promotion over the whole dtype x dtype table, against torch: promote_types, result_type
(dimensioned tensors, zero-dim tensors and Python numbers), can_cast, and the dtype of a + b."""
import itertools

import numpy as np
import pytest
import torch

import ember
from opinfo import ALL_DTYPES, check_same_error
from differential import catch, same, warnings_of

# torch's own warning when the float16 + complex cases below create a complex32 tensor
pytestmark = pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")

PAIRS = list(itertools.product(ALL_DTYPES, ALL_DTYPES))
SCALARS = [True, 2, -3, 2.5, 1 + 2j]


def same_promotion(got, want):
    # (float16 with a lower-priority complex operand gives complex32 in both)
    return name_of(got) == name_of(want)


def e_dtype(name):
    return getattr(ember, name)


def t_dtype(name):
    return getattr(torch, name)


def name_of(dtype):
    return str(dtype).split(".")[-1]


def operand(lib, dtype, kind):
    """A tensor of `dtype`: kind 'dim' has dimensions, 'zero' is zero-dim."""
    shape = (2,) if kind == "dim" else ()
    return lib.ones(shape, dtype=getattr(lib, dtype))


def test_promote_types_table():
    mismatches = [(a, b) for a, b in PAIRS
                  if name_of(ember.promote_types(e_dtype(a), e_dtype(b))) !=
                  name_of(torch.promote_types(t_dtype(a), t_dtype(b)))]
    assert not mismatches


def test_can_cast_table():
    mismatches = [(a, b) for a, b in PAIRS
                  if ember.can_cast(e_dtype(a), e_dtype(b)) !=
                  torch.can_cast(t_dtype(a), t_dtype(b))]
    assert not mismatches


@pytest.mark.parametrize("kinds", [("dim", "dim"), ("dim", "zero"), ("zero", "dim"),
                                   ("zero", "zero")], ids="-".join)
def test_result_type_tensors(kinds):
    mismatches = []
    for a, b in PAIRS:
        got = ember.result_type(operand(ember, a, kinds[0]), operand(ember, b, kinds[1]))
        want = torch.result_type(operand(torch, a, kinds[0]), operand(torch, b, kinds[1]))
        if not same_promotion(got, want):
            mismatches.append((a, b, got, want))
    assert not mismatches


@pytest.mark.parametrize("kind", ["dim", "zero"])
@pytest.mark.parametrize("scalar_first", [False, True])
def test_result_type_with_python_numbers(kind, scalar_first):
    mismatches = []
    for a in ALL_DTYPES:
        for s in SCALARS:
            e_args = (operand(ember, a, kind), s)
            t_args = (operand(torch, a, kind), s)
            if scalar_first:
                e_args, t_args = e_args[::-1], t_args[::-1]
            got, want = ember.result_type(*e_args), torch.result_type(*t_args)
            if not same_promotion(got, want):
                mismatches.append((a, s, got, want))
    assert not mismatches


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_result_type_follows_default_dtype(default):
    old_e, old_t = ember.get_default_dtype(), torch.get_default_dtype()
    ember.set_default_dtype(e_dtype(default))
    torch.set_default_dtype(t_dtype(default))
    try:
        for a in ALL_DTYPES:
            for s in SCALARS:
                got = ember.result_type(operand(ember, a, "dim"), s)
                want = torch.result_type(operand(torch, a, "dim"), s)
                assert same_promotion(got, want), (a, s)
    finally:
        ember.set_default_dtype(old_e)
        torch.set_default_dtype(old_t)


def _add_case(lib, a, b, kinds):
    x = operand(lib, a, kinds[0])
    y = operand(lib, b, kinds[1]) if kinds[1] != "number" else b
    return lambda: x + y


@pytest.mark.parametrize("kinds", [("dim", "dim"), ("dim", "zero"), ("zero", "zero")],
                         ids="-".join)
def test_add_result_dtype_table(kinds):
    for a, b in PAIRS:
        t_fn, e_fn = _add_case(torch, a, b, kinds), _add_case(ember, a, b, kinds)
        try:
            want = t_fn()
        except Exception as err:
            check_same_error(e_fn, err)
            continue
        got = e_fn()
        assert same_promotion(got.dtype, want.dtype), (a, b)
        np.testing.assert_array_equal(np.asarray(got.to(ember.complex128)._data),
                                      want.to(torch.complex128).numpy())


@pytest.mark.parametrize("number", SCALARS, ids=repr)
def test_add_python_number_result_dtype(number):
    for a in ALL_DTYPES:
        for reflected in (False, True):
            x_t, x_e = operand(torch, a, "dim"), operand(ember, a, "dim")
            t_fn = (lambda: number + x_t) if reflected else (lambda: x_t + number)
            e_fn = (lambda: number + x_e) if reflected else (lambda: x_e + number)
            try:
                want = t_fn()
            except Exception as err:
                check_same_error(e_fn, err)
                continue
            got = e_fn()
            assert same_promotion(got.dtype, want.dtype), (a, number, reflected)
            np.testing.assert_array_equal(np.asarray(got.to(ember.complex128)._data),
                                          want.to(torch.complex128).numpy())


@pytest.mark.parametrize("op", ["add_", "mul_", "sub_", "div_"])
def test_in_place_cast_rules(op):
    """`a.op_(b)` keeps a's dtype; where the result type can't be cast to it, torch's error."""
    for a, b in PAIRS:
        x_t, x_e = operand(torch, a, "dim"), operand(ember, a, "dim")
        y_t, y_e = operand(torch, b, "dim"), operand(ember, b, "dim")
        try:
            want = getattr(x_t, op)(y_t)
        except Exception as err:
            check_same_error(lambda: getattr(x_e, op)(y_e), err)
            continue
        got = getattr(x_e, op)(y_e)
        assert name_of(got.dtype) == name_of(want.dtype) == a
        np.testing.assert_array_equal(np.asarray(got.to(ember.complex128)._data),
                                      want.to(torch.complex128).numpy())


# ----------------------------------------------------------------------------- numbers only
# sub/div take a number `input` as a tensor; pow, remainder, the bitwise ops and rsub refuse
NUMBERS = {
    **{f"{op}_{a}_{b}": (lambda T, op=op, a=a, b=b: catch(getattr(T, op), a, b))
       for op in ("sub", "subtract", "div", "true_divide", "divide", "pow", "float_power",
                  "remainder", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                  "bitwise_right_shift", "rsub")
       for a, b in ((2, 3), (2.5, 3), (2, 3.5), (2j, 1), (True, 3))},
    "sub_alpha": lambda T: T.sub(2, 3, alpha=2),
    "div_floor": lambda T: T.div(7, 2, rounding_mode="floor"),
    "div_out": lambda T: (lambda o: (T.div(2, 3, out=o), o))(T.zeros(())),
}


@pytest.mark.parametrize("name", sorted(NUMBERS))
def test_numbers_only(name):
    same(NUMBERS[name])


# ----------------------------------------------------------------------------- NumPy scalars
# a NumPy scalar given for a Number is read as a Python int (integers) or float (anything else:
# np.bool_ is 1.0, a complex one loses its imaginary part with NumPy's warning)
_NP_SCALARS = {"bool": np.bool_(True), "f64": np.float64(1.5), "f32": np.float32(1.5),
               "i64": np.int64(3), "i8": np.int8(3), "c64": np.complex64(1j)}


def _tci(T):
    return T.tensor([1.5, 2.5]), T.tensor([True, False]), T.tensor([1, 2])


NP_OPS = {
    "where_float": lambda T, t, c, i, v: T.where(c, t, v),
    "where_first": lambda T, t, c, i, v: T.where(c, v, t),
    "where_int": lambda T, t, c, i, v: T.where(c, i, v),
    "where_both": lambda T, t, c, i, v: T.where(c, v, v),
    "where_python": lambda T, t, c, i, v: T.where(c, v, 2),
    "where_method": lambda T, t, c, i, v: i.where(c, v),
    "clamp": lambda T, t, c, i, v: T.clamp(t, v),
    "clamp_int": lambda T, t, c, i, v: T.clamp(i, v),
    "clamp_max": lambda T, t, c, i, v: T.clamp(i, max=v),
    "clip": lambda T, t, c, i, v: T.clip(i, v),
    "clamp_min_fn": lambda T, t, c, i, v: T.clamp_min(i, v),
    "clamp_max_fn": lambda T, t, c, i, v: T.clamp_max(i, v),
    "clamp_inplace": lambda T, t, c, i, v: i.clamp_(v),
    "clamp_inplace_float": lambda T, t, c, i, v: t.clamp_(v),
    "lerp": lambda T, t, c, i, v: T.lerp(t, t * 2, v),
    "lerp_inplace": lambda T, t, c, i, v: t.lerp_(t * 2, v),
    "masked_fill": lambda T, t, c, i, v: t.masked_fill(c, v),
    "masked_fill_int": lambda T, t, c, i, v: i.masked_fill(c, v),
    "masked_fill_inplace": lambda T, t, c, i, v: i.masked_fill_(c, v),
    "masked_fill_complex": lambda T, t, c, i, v: (t * 1j).masked_fill(c, v),
    "where_complex": lambda T, t, c, i, v: T.where(c, t * 1j, v),
    "lerp_complex": lambda T, t, c, i, v: T.lerp(t * 1j, t, v),
    "add_complex": lambda T, t, c, i, v: t * 1j + v,
}


@pytest.mark.parametrize("op", sorted(NP_OPS))
@pytest.mark.parametrize("kind", sorted(_NP_SCALARS))
def test_numpy_scalar_operands(op, kind):
    same(lambda T: warnings_of(lambda: catch(NP_OPS[op], T, *_tci(T), _NP_SCALARS[kind])))
