"""Elementwise ops vs torch: values, dtypes, gradients, double gradients, node names, errors."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from opinfo import (POINTWISE_OPS, LOGIC_OPS, check_backward, check_forward, check_same_error,
                    make, table_tests)
from differential import catch, same, warnings_of

test_forward, test_backward, test_gradcheck, test_gradgradcheck, test_node_names = \
    table_tests(POINTWISE_OPS, forward_ops=POINTWISE_OPS + LOGIC_OPS)


# ----------------------------------------------------------------------------- hypothesis sweeps
from hypothesis.extra.numpy import mutually_broadcastable_shapes  # noqa: E402

from opinfo import Sample, OpInfo, ALL_FLOATS, INTS  # noqa: E402

SWEEP_DTYPES = ("bool",) + INTS + ALL_FLOATS
BINARY_SWEEP = {
    "add": lambda lib, a, b: lib.add(a, b), "sub": lambda lib, a, b: a - b,
    "mul": lambda lib, a, b: a * b, "div": lambda lib, a, b: a / b,
    "floor_divide": lambda lib, a, b: a // b, "remainder": lambda lib, a, b: a % b,
    "pow": lambda lib, a, b: a ** b, "maximum": lambda lib, a, b: lib.maximum(a, b),
    "atan2": lambda lib, a, b: lib.atan2(a, b), "eq": lambda lib, a, b: a == b,
    "lt": lambda lib, a, b: a < b, "where": lambda lib, a, b: lib.where(a > b, a, b),
    "logical_xor": lambda lib, a, b: lib.logical_xor(a, b),
}


def _sweep_array(shape, dtype, seed):
    # no zeros in int divisors: integer division by zero raises in both libraries
    return make(shape, dtype, np.random.default_rng(seed), -3, 3, exclude_zero=True)


@settings(max_examples=50, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0,
                                            max_side=3),
       dtypes=st.tuples(st.sampled_from(SWEEP_DTYPES), st.sampled_from(SWEEP_DTYPES)),
       name=st.sampled_from(sorted(BINARY_SWEEP)), seed=st.integers(0, 2 ** 16))
def test_binary_broadcast_sweep(shapes, dtypes, name, seed):
    """Every broadcastable shape pair (0-dim and 0-size included), every dtype pair: same values,
    dtype and shape (or the same error) as torch; and, in float, the same input gradients
    (the broadcast gradient reduced back to each input's shape)."""
    sa, sb = shapes.input_shapes
    a, b = _sweep_array(sa, dtypes[0], seed), _sweep_array(sb, dtypes[1], seed + 1)
    op = OpInfo(name, BINARY_SWEEP[name], lambda d, r: iter([Sample(a, b)]))
    check_forward(op, dtypes[0])
    if dtypes[0] in ("float32", "float64") and dtypes[1] == dtypes[0] and \
            name not in ("eq", "lt", "logical_xor", "floor_divide"):
        check_backward(op, dtypes[0])


@settings(max_examples=40, deadline=None)
@given(sa=st.lists(st.integers(0, 4), min_size=1, max_size=3),
       sb=st.lists(st.integers(0, 4), min_size=1, max_size=3),
       name=st.sampled_from(["add", "mul", "where", "maximum"]))
def test_broadcast_error_matches_torch(sa, sb, name):
    """Shapes that do not broadcast: torch's RuntimeError, word for word."""
    a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
    try:
        np.broadcast_shapes(tuple(sa), tuple(sb))
        return                                   # they broadcast: the sweep above covers it
    except ValueError:
        pass
    fn = BINARY_SWEEP[name]
    check_same_error(lambda: fn(ember, ember.tensor(a), ember.tensor(b)),
                     lambda: fn(torch, torch.tensor(a), torch.tensor(b)))


# ----------------------------------------------------------------------------- errors
def _t(lib, shape=(2, 3), dtype="float32", fill=1):
    return lib.full(shape, fill, dtype=getattr(lib, dtype))


BAD_CALLS = {
    "broadcast_add": lambda lib: _t(lib, (2, 3)) + _t(lib, (4,)),
    "broadcast_mul_3d": lambda lib: lib.mul(_t(lib, (2, 3, 5)), _t(lib, (3, 4, 1))),
    "broadcast_where": lambda lib: lib.where(_t(lib, (3,)) > 0, _t(lib, (2, 1)), _t(lib, (4,))),
    "broadcast_in_place": lambda lib: _t(lib, (2, 1)).add_(_t(lib, (2, 3))),
    "broadcast_addcmul": lambda lib: lib.addcmul(_t(lib, (3,)), _t(lib, (3,)), _t(lib, (4,))),
    "int_floor_divide_by_zero": lambda lib: _t(lib, dtype="int64") // _t(lib, dtype="int64",
                                                                       fill=0),
    "int_remainder_by_zero": lambda lib: _t(lib, dtype="int32") % 0,
    "int_negative_power": lambda lib: _t(lib, dtype="int64") ** -1,
    "bool_sub": lambda lib: _t(lib, dtype="bool") - _t(lib, dtype="bool"),
    "bool_neg": lambda lib: -_t(lib, dtype="bool"),
    "int_add_float_alpha": lambda lib: lib.add(_t(lib, dtype="int64"), 1, alpha=0.5),
    "int_iadd_float": lambda lib: _t(lib, dtype="int64").add_(_t(lib)),
    "int_imul_float_number": lambda lib: _t(lib, dtype="int32").mul_(2.5),
    "int_sqrt_": lambda lib: _t(lib, dtype="int64").sqrt_(),
    "div_bad_rounding_mode": lambda lib: lib.div(_t(lib), 2, rounding_mode="round"),
    "clamp_without_bounds": lambda lib: lib.clamp(_t(lib)),
    "where_int_condition": lambda lib: lib.where(_t(lib, dtype="int64"), _t(lib), _t(lib)),
    "masked_fill_float_mask": lambda lib: _t(lib).masked_fill(_t(lib), 0.0),
    "masked_fill_overflow": lambda lib: _t(lib, dtype="int8").masked_fill(
        _t(lib, dtype="bool"), 1000),
    "masked_fill_broadcast": lambda lib: _t(lib, (3,)).masked_fill(_t(lib, (4,), "bool"), 0.0),
    "masked_fill_1d_value": lambda lib: _t(lib).masked_fill(_t(lib, dtype="bool"), _t(lib, (1,))),
    "addcdiv_ints": lambda lib: lib.addcdiv(_t(lib), _t(lib, dtype="int64"),
                                            _t(lib, dtype="int64")),
    "isclose_dtype_mismatch": lambda lib: lib.isclose(_t(lib), _t(lib, dtype="float64")),
    "logical_and_number": lambda lib: lib.logical_and(_t(lib), 1),
    "eq_number_first": lambda lib: lib.eq(1, _t(lib)),
    "bitwise_and_float": lambda lib: lib.bitwise_and(_t(lib), _t(lib)),
    "bitwise_not_float": lambda lib: lib.bitwise_not(_t(lib)),
    "invert_float": lambda lib: ~_t(lib),
    "relu_bool": lambda lib: lib.relu(_t(lib, dtype="bool")),
    "floor_bool": lambda lib: lib.floor(_t(lib, dtype="bool")),
    "frac_int": lambda lib: lib.frac(_t(lib, dtype="int32")),
    "lerp_int": lambda lib: lib.lerp(_t(lib, dtype="int32"), _t(lib, dtype="int32"), 0.5),
    "leaf_in_place": lambda lib: _t(lib).requires_grad_().mul_(2),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_errors_match_torch(name):
    check_same_error(lambda: BAD_CALLS[name](ember), lambda: BAD_CALLS[name](torch))


INF_GRAD_CALLS = {
    "where": lambda lib, x: lib.where(x > 0, x, 0.0),
    "masked_fill": lambda lib, x: x.masked_fill(x > 0, 1.0),
    "clamp": lambda lib, x: lib.clamp(x, -0.5, 0.5),
    "clamp_tensor": lambda lib, x: lib.clamp(x, min=x.detach() * 0 - 0.5),
    "floor": lambda lib, x: lib.floor(x),
    "round": lambda lib, x: lib.round(x, decimals=1),
    "maximum": lambda lib, x: lib.maximum(x, x.detach() * 0),
    "nan_to_num": lambda lib, x: lib.nan_to_num(lib.log(x)),
    "div_floor": lambda lib, x: lib.div(x, 2, rounding_mode="floor"),
    "pow_zero": lambda lib, x: lib.pow(x, 0),
}


@pytest.mark.parametrize("name", sorted(INF_GRAD_CALLS))
def test_zero_gradients_stay_zero_under_inf_upstream(name):
    """Where a derivative is zero, PyTorch gives exact zeros even for an inf or nan upstream
    gradient (never inf * 0 = nan)."""
    x = np.array([-1.5, -0.2, 0.3, 2.0, 0.0], np.float32)
    up = np.array([np.inf, -np.inf, np.nan, np.inf, 1.0], np.float32)
    grads = []
    for lib in (torch, ember):
        t = lib.tensor(x, requires_grad=True)
        INF_GRAD_CALLS[name](lib, t).backward(lib.tensor(up))
        grads.append(t.grad)
    from opinfo import assert_same
    assert_same(grads[1], grads[0])


NAN, INF = float("nan"), float("inf")


def _out_call(T, fn, out):
    """The result of fn(out=out) and out itself afterwards (or the error)."""
    return catch(lambda: (fn(out), out))


# ----------------------------------------------------------------------------- pointwise
POINTWISE = {
    # sign/sgn are (x > 0) - (x < 0): NaN and -0.0 give +0.0
    "sign_nan_negzero": lambda T: T.sign(T.tensor([-0., NAN, 0., -3., -INF])).tolist(),
    "sgn_nan_negzero": lambda T: T.sgn(T.tensor([-0., NAN, 0., -3.], dtype=T.float64)).tolist(),
    "sign_half": lambda T: T.sign(T.tensor([NAN, -2.], dtype=T.float16)),
    "sgn_bool": lambda T: T.sgn(T.tensor([True, False])),
    # clamp with min > max: every value is max, but NaN stays NaN
    "clamp_min_above_max_nan": lambda T: T.clamp(T.tensor([1., NAN, 9.]), 7, 2),
    "clamp_min_above_max_int": lambda T: T.clamp(T.tensor([1, 5, 9], dtype=T.uint8), 7, 2),
    "clamp_bool_bounds_bool": lambda T: catch(T.clamp, T.tensor([True, False]), False, True),
    "clamp_bool_min_only": lambda T: catch(T.clamp, T.tensor([True, False]), True),
    "clamp_bool_max_only": lambda T: catch(T.clamp, T.tensor([True, False]), None, False),
    "clamp_min_bool": lambda T: catch(T.clamp_min, T.tensor([True]), True),
    "clamp_bool_int_bounds": lambda T: T.clamp(T.tensor([True, False]), 0, 1),
    "clamp_tensor_and_number": lambda T: catch(T.clamp, T.ones(2), T.zeros(2), 3),
    "clamp_number_and_tensor": lambda T: catch(T.clamp, T.ones(2), 0, T.ones(2)),
    "clip_tensor_and_number": lambda T: catch(T.clip, T.ones(2), T.zeros(2), 3),
    # shifts of floats: PyTorch's kernels are lshift/rshift
    "lshift_float": lambda T: catch(lambda: T.tensor([1., 2.]) << 1),
    "rshift_half": lambda T: catch(T.bitwise_right_shift, T.tensor([1.], dtype=T.float16), 1),
    "lshift_int_by_float": lambda T: catch(T.bitwise_left_shift, T.tensor([1]), 2.5),
    # tensor-only binary ops refuse Python numbers
    "maximum_number": lambda T: catch(T.maximum, T.ones(2), 2),
    "maximum_number_first": lambda T: catch(T.maximum, 2., T.ones(2)),
    "minimum_number": lambda T: catch(T.minimum, T.ones(2), 2.5),
    "fmax_number": lambda T: catch(T.fmax, T.ones(2), 2),
    "fmin_number_first": lambda T: catch(T.fmin, 2, T.ones(2)),
    "atan2_number": lambda T: catch(T.atan2, T.ones(2), 2),
    "fmod_number_first": lambda T: catch(T.fmod, 3, T.ones(2)),
    "remainder_number_first": lambda T: catch(T.remainder, 3, T.tensor([2., -2.])),
    "gcd_number": lambda T: catch(T.gcd, T.tensor([4]), 2),
    "lcm_number_first": lambda T: catch(T.lcm, 2, T.tensor([4])),
    "lcm_float_number": lambda T: catch(T.lcm, T.tensor([4]), 2.5),
    # gcd/lcm run in the result dtype: int with bool is fine, float is not
    "lcm_int_bool": lambda T: T.lcm(T.tensor([-7, 3, 0]), T.tensor(True)),
    "gcd_bool_bool": lambda T: catch(T.gcd, T.tensor([True]), T.tensor([True])),
    "gcd_float_int": lambda T: catch(T.gcd, T.tensor([4.]), T.tensor([2])),
    # lerp does not promote
    "lerp_end_double": lambda T: catch(T.lerp, T.ones(1), T.ones(1, dtype=T.float64), 0.5),
    "lerp_end_int": lambda T: catch(T.lerp, T.ones(1), T.tensor([1]), 0.5),
    "lerp_end_half": lambda T: catch(T.lerp, T.ones(1, dtype=T.float16), T.ones(1), 0.5),
    "lerp_weight_double": lambda T: catch(T.lerp, T.ones(1), T.ones(1),
                                          T.ones(1, dtype=T.float64)),
    "lerp_weight_0d_double": lambda T: T.lerp(T.ones(1), T.full((1,), 3.),
                                              T.tensor(0.5, dtype=T.float64)),
    "lerp_end_bfloat16_method": lambda T: catch(lambda: T.ones(1).lerp(
        T.ones(1, dtype=T.bfloat16), 0.5)),
    "lerp_inplace_end_double": lambda T: catch(lambda: T.ones(1).lerp_(
        T.ones(1, dtype=T.float64), 0.5)),
    # float_power_ computes in double: the base must be double already
    "float_power_inplace_float": lambda T: catch(lambda: T.tensor([2.]).float_power_(2)),
    "float_power_inplace_long": lambda T: catch(lambda: T.tensor([2]).float_power_(2)),
    "float_power_inplace_complex": lambda T: catch(lambda: T.tensor([1 + 1j]).float_power_(2)),
    "float_power_inplace_double": lambda T: T.tensor([2.], dtype=T.float64).float_power_(
        T.tensor([3])),
    "float_power_inplace_complex_exp": lambda T: catch(
        lambda: T.tensor([2.], dtype=T.float64).float_power_(2j)),
    # relu takes no out=; square does
    "relu_out": lambda T: catch(T.relu, T.ones(2), out=T.empty(2)),
    "square_out": lambda T: _out_call(T, lambda o: T.square(T.tensor([1, 2]), out=o),
                                      T.empty(2, dtype=T.float64)),
}


@pytest.mark.parametrize("name", sorted(POINTWISE))
def test_pointwise(name):
    same(POINTWISE[name])


# out= dtype rules of one-input ops: those that keep their input's dtype want it exactly
UNARY_OUT_OPS = ["neg", "abs", "floor", "ceil", "trunc", "frac", "round", "sign", "sgn", "fix",
                 "exp", "sin", "sigmoid", "reciprocal", "nan_to_num", "signbit", "isposinf",
                 "isneginf", "square", "logical_not"]


@pytest.mark.parametrize("out_dtype", ["float16", "float64", "int32", "bool"])
@pytest.mark.parametrize("name", UNARY_OUT_OPS)
def test_unary_out_dtype(name, out_dtype):
    same(lambda T: _out_call(T, lambda o: getattr(T, name)(T.tensor([1.5, -2.]), out=o),
                             T.empty(2, dtype=getattr(T, out_dtype))))


def test_bitwise_not_out_dtype():
    same(lambda T: _out_call(T, lambda o: T.bitwise_not(T.tensor([1, 2]), out=o),
                             T.empty(2, dtype=T.int32)))


# ----------------------------------------------------------------------------- add with alpha
def _pair(T, n=1000, dtype="float32"):
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    return T.tensor(a).to(getattr(T, dtype)), T.tensor(b).to(getattr(T, dtype))


ALPHA = {
    # float32 a + alpha * b: PyTorch's kernel is a fused multiply-add (one rounding)
    "reproducer": lambda T: T.tensor([-1.3333332538604736]).add(
        T.tensor([-0.6666667461395264]), alpha=-1.999999761581421),
    **{f"{op}_{alpha}": (lambda T, op=op, alpha=alpha: getattr(T, op)(*_pair(T), alpha=alpha))
       for op in ("add", "sub") for alpha in (-1.999999761581421, 0.1, 3.7)},
    "add_inplace": lambda T: (lambda a, b: a.add_(b, alpha=-0.3))(*_pair(T)),
    "sub_inplace": lambda T: (lambda a, b: a.sub_(b, alpha=0.3))(*_pair(T)),
    # (with a number, PyTorch's scalar tail past the last 32-element block rounds otherwise;
    # 1024 elements have no tail)
    "add_number": lambda T: _pair(T, 1024)[0].add(0.7, alpha=0.3),
    "rsub_number": lambda T: T.rsub(_pair(T)[0], 2., alpha=0.3),
    "add_broadcast": lambda T: (lambda a, b: a.reshape(10, 100).add(b[:100], alpha=0.1))(
        *_pair(T)),
    # float16 below PyTorch's 32-element vector blocks: the product and sum round in float16
    "add_half_small": lambda T: T.add(*_pair(T, 31, "float16"), alpha=3.7),
    "add_alpha_one": lambda T: T.add(*_pair(T), alpha=1),
}


@pytest.mark.parametrize("name", sorted(ALPHA))
def test_add_alpha_rounds_once(name):
    same(ALPHA[name], rtol=0, atol=0)


# (bfloat16's x ** -0.5 is left out: torch's last elements of each thread's chunk take a scalar
# path that rounds after the sqrt, so its bits depend on torch's thread count)
@pytest.mark.parametrize("dtype,exponent", [
    (d, e) for d in ("float32", "float64", "float16", "bfloat16")
    for e in (3, 3.0, -2, -2.0, -0.5, 2.0, -1.0) if (d, e) != ("bfloat16", -0.5)])
def test_pow_special_exponents_bits(dtype, exponent):
    """x ** 3, x ** -2 and x ** -0.5 are torch's products (x * x * x, 1 / (x * x), 1 / sqrt(x)),
    not its general pow: the same values, zero signs and NaN places over 20,000 values and
    the special ones."""
    x = (np.random.default_rng(3).standard_normal(20_000) * 3).astype(np.float32)
    x[:7] = [0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30]
    got = {}
    for lib in (torch, ember):
        t = lib.from_numpy(x).to(getattr(lib, dtype))
        got[lib] = [(t.pow(exponent)).float().numpy(), (t.abs() ** exponent).float().numpy()]
    for a, b in zip(got[torch], got[ember]):
        assert np.array_equal(a, b, equal_nan=True)
        numbers = ~np.isnan(a)
        assert np.array_equal(np.signbit(a[numbers]), np.signbit(b[numbers]))
