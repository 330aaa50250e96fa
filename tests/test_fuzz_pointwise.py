"""Regression tests from a randomized differential fuzz of pointwise ops and reductions against
torch: each bucket of discrepancies the fuzz found is a parametrized case below, and a small
derandomized hypothesis test keeps sweeping dtypes, layouts and operands of the binary ops."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from tests.differential import catch, same

NAN, INF = float("nan"), float("inf")


def F(T):
    return T.tensor([[1.0, 2, 3], [4, 5, NAN]])


def I(T):
    return T.tensor([[1, 2, 3], [4, 5, 6]])


def RND(T):
    return T.tensor(np.random.default_rng(7).uniform(-5, 5, (4, 3)).tolist())


def C(T):
    return T.tensor([1 + 1j, 2])


CASES = {
    # nanmean checks dtype= first, and an integer input is refused whatever dtype= says
    "nanmean_int_dtype": lambda T: catch(T.nanmean, F(T), 1, dtype=T.int32),
    "nanmean_int_input_float_dtype": lambda T: catch(T.nanmean, I(T), 1, dtype=T.float64),
    "nanmean_bool_input": lambda T: catch(T.nanmean, T.tensor([True, False]),
                                          dtype=T.bfloat16),
    "nanmean_float_dtype": lambda T: T.nanmean(F(T), 1, dtype=T.float64),
    # a real input summed in a complex dtype: nansum_cpu has no complex kernel
    "nansum_complex_dtype": lambda T: catch(T.nansum, F(T), dtype=T.complex64),
    "nanmean_complex_dtype": lambda T: catch(T.nanmean, F(T), 0, dtype=T.complex128),
    "nansum_complex_input": lambda T: catch(T.nansum, C(T)),
    "aminmax_complex": lambda T: catch(T.aminmax, C(T)),
    "aminmax_complex_dim": lambda T: catch(T.aminmax, C(T), dim=0),
    # cumulative ops have no Bool kernel for dtype=bool (a bool input alone is fine)
    "cumsum_dtype_bool": lambda T: catch(T.cumsum, I(T), 0, dtype=T.bool),
    "cumprod_dtype_bool": lambda T: catch(T.cumprod, T.tensor([True, False]), 0,
                                          dtype=T.bool),
    "cumprod_bool_input": lambda T: T.cumprod(T.tensor([True, False, True]), 0),
    # fmax/fmin: their own names in the complex error, and out=
    "fmax_complex": lambda T: catch(T.fmax, C(T), C(T)),
    "fmin_real_complex": lambda T: catch(T.fmin, F(T)[0, :2], C(T)),
    "fmin_out": lambda T: (lambda o: (T.fmin(F(T), T.tensor(2.5), out=o), o))(T.empty(0)),
    "fmax_out_int": lambda T: (lambda o: (T.fmax(I(T), T.tensor(3), out=o), o))(
        T.empty(0, dtype=T.int64)),
    "fmax_nan": lambda T: T.fmax(F(T), T.tensor([NAN, 0, 7])),
    # isnan/isinf/isfinite have no out=
    "isnan_out": lambda T: catch(T.isnan, F(T), out=T.empty(0, dtype=T.bool)),
    "isinf_out": lambda T: catch(T.isinf, F(T), out=T.empty(0, dtype=T.bool)),
    "isfinite_out": lambda T: catch(T.isfinite, F(T), out=T.empty(0, dtype=T.bool)),
    "isfinite_method": lambda T: (F(T).isfinite(), F(T).isnan(), F(T).isinf()),
    # atan2_ takes only a Tensor
    "atan2__number": lambda T: catch(lambda: T.tensor([1.0, 2]).atan2_(0.5)),
    "atan2__bool": lambda T: catch(lambda: T.tensor([1.0, 2]).atan2_(True)),
    "atan2__tensor": lambda T: T.tensor([1.0, -2]).atan2_(T.tensor([0.5, -1])),
    # |z| is real: no in-place abs of a complex tensor, even an empty one
    "abs__complex": lambda T: catch(lambda: C(T).abs_()),
    "abs__complex_empty": lambda T: catch(lambda: T.zeros(0, dtype=T.complex64).abs_()),
    "abs__float": lambda T: T.tensor([-1.0, 2]).abs_(),
    # bitwise ops: PyTorch reports shapes that do not broadcast before a float dtype
    "bitwise_and_shape_first": lambda T: catch(T.bitwise_and, T.ones(3),
                                               T.zeros(2, 0, dtype=T.uint8)),
    "bitwise_or_float": lambda T: catch(T.bitwise_or, I(T), T.ones(3)),
    # shifts have no Bool kernel, even when both operands are bool
    "lshift_bool_tensors": lambda T: catch(lambda: T.tensor([True, False]) << T.tensor([True])),
    "rshift_bool_number": lambda T: catch(T.bitwise_right_shift, T.tensor([True]), True),
    "lshift_number_first": lambda T: catch(lambda: True << T.tensor([True, False])),
    "lshift_bool_int": lambda T: T.tensor([True, False]) << 1,
    # an integer tensor to a complex Python power
    "pow_int_complex": lambda T: T.pow(T.tensor([[8, 9, 4]], dtype=T.uint8), -1 - 1.5j),
    "pow_int_complex_op": lambda T: T.tensor([2, 3]) ** 1j,
    "pow_int_complex_empty": lambda T: T.pow(T.zeros(2, 0, dtype=T.int8), 0.5 + 2j),
    # a bool tensor to a bool power stays bool; a bool number to a bool tensor's power has no
    # kernel
    "pow_bool_true": lambda T: T.pow(T.tensor([True, False]), True),
    "pow_bool_false": lambda T: T.pow(T.tensor([True, False]), False),
    "pow_bool_int": lambda T: T.pow(T.tensor([True, False]), 2),
    "pow__bool": lambda T: (lambda t: (t.pow_(False), t)[1])(T.tensor([True, False])),
    "pow_true_bool_tensor": lambda T: catch(T.pow, True, T.tensor([True, False])),
    "pow_int_bool_tensor": lambda T: T.pow(2, T.tensor([True, False])),
    # a narrower float dtype= rounds each element before the sum / product
    "sum_dtype_bfloat16": lambda T: T.sum(RND(T), 0, dtype=T.bfloat16),
    "sum_all_dtype_float16": lambda T: T.sum(RND(T), dtype=T.float16),
    "prod_dtype_bfloat16": lambda T: T.prod(RND(T), 1, dtype=T.bfloat16),
    "prod_float16_dim": lambda T: T.prod(RND(T).half(), 0),
    "prod_bfloat16_dim_long": lambda T: T.prod(
        T.tensor(np.random.default_rng(1).uniform(0.5, 1.5, (5, 40)).tolist()).bfloat16(), 1),
    "prod_all_dtype_bfloat16": lambda T: T.prod(RND(T)[:, 0], dtype=T.bfloat16),
    # nanmean checks the input before dtype=; nansum of integers in a complex dtype is a sum
    "nanmean_bool_input_int_dtype": lambda T: catch(T.nanmean, T.tensor([True]),
                                                    dtype=T.uint8),
    "nansum_int_complex_dtype": lambda T: T.nansum(I(T), 0, dtype=T.complex128),
    # float32 variance accumulates in double: no overflow of 1e38 squared
    "std_float32_huge": lambda T: T.std(T.tensor([-2.9, 1e38])),
    "var_float32_huge": lambda T: T.var(T.tensor([[1e30, 3e30], [1.0, 2.0]]), 1),
    "var_complex64_huge": lambda T: T.var(T.tensor([1e30j, 1e20 + 3e30j])),
    # std of half precision: the square root of the wide variance, rounded once
    "std_bfloat16": lambda T: T.std(T.tensor([[-4.95], [-1.03], [2.31]], dtype=T.bfloat16),
                                    0, keepdim=True),
    "std_mean_bfloat16": lambda T: T.std_mean(
        T.tensor([[-4.954341197906519], [-1.0313676928937765], [2.3096380820149065]],
                 dtype=T.bfloat16), -2, keepdim=True),
    "std_float16": lambda T: T.std(T.tensor([0.1, 0.7, 3.3, -2.9, 1.23], dtype=T.float16)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bucket(name):
    same(CASES[name], rtol=0, atol=0)


# ---------------------------------------------------------------- a derandomized sweep
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]
BINARY = ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "maximum", "minimum",
          "fmax", "fmin", "atan2", "hypot", "copysign", "logaddexp", "eq", "lt", "ge",
          "logical_and", "logical_xor", "bitwise_and", "bitwise_xor", "bitwise_left_shift"]
SPECIALS = [NAN, INF, -INF, -0.0, 0.0, 1e30, 127, -128, 255]


def _values(draw, n):
    return draw(st.lists(st.one_of(st.integers(-20, 20).map(float), st.sampled_from(SPECIALS),
                                   st.floats(-5, 5, allow_nan=False)), min_size=n, max_size=n))


def _tensor(T, values, shape, dtype, layout):
    t = T.tensor(np.array(values, dtype=np.float64).reshape(shape)).to(getattr(T, dtype))
    if layout == "transposed" and t.dim() == 2:
        t = t.t().contiguous().t()
    elif layout == "stepped" and t.dim() >= 1:
        t = T.cat([t, t])[::2]
    return t


@st.composite
def binary_case(draw):
    shape_a = draw(st.sampled_from([(), (3,), (2, 3), (0,), (2, 0)]))
    shape_b = draw(st.sampled_from([shape_a, shape_a[-1:], ()]))
    return (draw(st.sampled_from(BINARY)),
            (_values(draw, int(np.prod(shape_a))), shape_a, draw(st.sampled_from(DTYPES)),
             draw(st.sampled_from(["contiguous", "transposed", "stepped"]))),
            (_values(draw, int(np.prod(shape_b))), shape_b, draw(st.sampled_from(DTYPES)),
             draw(st.sampled_from(["contiguous", "stepped"]))))


@settings(derandomize=True, max_examples=150, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(binary_case())
def test_binary_sweep(case):
    name, a, b = case

    def scenario(T):
        with np.errstate(all="ignore"):
            return catch(getattr(T, name), _tensor(T, *a), _tensor(T, *b))
    same(scenario, rtol=2e-3, atol=1e-5)


UNARY = ["abs", "neg", "sign", "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "sin", "cos",
         "tanh", "sigmoid", "floor", "ceil", "round", "trunc", "frac", "reciprocal", "square",
         "isnan", "isinf", "isfinite", "nan_to_num", "logical_not", "bitwise_not"]


@settings(derandomize=True, max_examples=120, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(UNARY), st.sampled_from(DTYPES),
       st.sampled_from(["contiguous", "transposed", "stepped"]), st.data())
def test_unary_sweep(name, dtype, layout, data):
    values = _values(data.draw, 6)

    def scenario(T):
        with np.errstate(all="ignore"):
            return catch(getattr(T, name), _tensor(T, values, (2, 3), dtype, layout))
    same(scenario, rtol=2e-3, atol=1e-5)


REDUCTIONS = ["sum", "prod", "mean", "amax", "amin", "argmax", "argmin", "all", "any", "std",
              "var", "logsumexp", "count_nonzero", "nansum", "nanmean"]


@settings(derandomize=True, max_examples=120, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(REDUCTIONS), st.sampled_from(DTYPES),
       st.sampled_from(["contiguous", "transposed", "stepped"]),
       st.sampled_from([0, 1, -1, (0, 1)]), st.booleans(), st.data())
def test_reduction_sweep(name, dtype, layout, dim, keepdim, data):
    values = _values(data.draw, 6)
    if name in ("argmax", "argmin") and isinstance(dim, tuple):
        dim = 0
    kw = {} if name == "count_nonzero" else {"keepdim": keepdim}

    def scenario(T):
        with np.errstate(all="ignore"):
            return catch(getattr(T, name), _tensor(T, values, (2, 3), dtype, layout), dim, **kw)
    same(scenario, rtol=2e-3, atol=1e-5)


NUMBER_OPS = ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "eq", "lt",
              "bitwise_and", "bitwise_left_shift", "clamp_min", "clamp_max"]


@settings(derandomize=True, max_examples=120, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.sampled_from(NUMBER_OPS), st.sampled_from(DTYPES),
       st.sampled_from([True, False, 0, 2, -3, 300, 2 ** 40, 0.5, -2.5, NAN, INF, 1.5j]),
       st.booleans(), st.data())
def test_number_operand_sweep(name, dtype, number, in_place, data):
    """A Python number as the second operand (its promotion category, not its size, counts),
    out of place and in place."""
    values = _values(data.draw, 3)

    def scenario(T):
        t = _tensor(T, values, (3,), dtype, "stepped")
        with np.errstate(all="ignore"):
            if in_place:
                return catch(lambda: (getattr(t, name + "_")(number), t)[1])
            return catch(getattr(T, name), t, number)
    same(scenario, rtol=2e-3, atol=1e-5)
