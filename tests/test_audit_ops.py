"""Differential audit of the ops against torch: each scenario is a case where ember once differed
from PyTorch 2.13 (values, dtypes, errors or warnings), kept so that it stays fixed."""
import numpy as np
import pytest

from differential import catch, same, warnings_of

NAN, INF = float("nan"), float("inf")


def _warned(fn):
    """(result or error, warnings) with PyTorch's '(Triggered internally at ...)' tail cut."""
    result, caught = warnings_of(lambda: catch(fn))
    return result, [w.split(" (Triggered internally at")[0] for w in caught]


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


# ----------------------------------------------------------------------------- reductions
def _x3(T):
    return T.arange(24.).reshape(2, 3, 4)


REDUCTIONS = {
    # error texts name the op
    "std_mean_int": lambda T: catch(T.std_mean, T.tensor([1, 2])),
    "var_mean_bool": lambda T: catch(T.var_mean, T.tensor([True, False]), 0),
    "std_int_still_std_and_var": lambda T: catch(T.std, T.tensor([1, 2]), 0),
    "median_bool": lambda T: catch(T.median, T.tensor([True, False])),
    "median_bool_dim": lambda T: catch(T.median, T.tensor([True, False]), 0),
    "nanmedian_bool": lambda T: catch(T.nanmedian, T.tensor([True, False])),
    "histc_bool": lambda T: catch(T.histc, T.tensor([True, False])),
    "histc_int": lambda T: catch(T.histc, T.tensor([1, 2])),
    # all/any over an empty dim list reduce nothing; count_nonzero's counts over everything
    "all_empty_dims": lambda T: (T.all(_x3(T), ()), T.any(_x3(T), []),
                                 T.all(T.tensor([[0, 2]], dtype=T.uint8), ())),
    "any_empty_dims_keepdim": lambda T: T.any(_x3(T) - 3, (), keepdim=True),
    "count_nonzero_empty_dims": lambda T: (T.count_nonzero(_x3(T), ()),
                                           T.count_nonzero(_x3(T), [])),
    "count_nonzero_0d_dim_out_of_range": lambda T: catch(T.count_nonzero, T.tensor(3), 1),
    # logsumexp: dim is required (no None); dim=() fails in PyTorch unless keepdim
    "logsumexp_dim_none": lambda T: catch(T.logsumexp, _x3(T), None),
    "logsumexp_empty_dims": lambda T: catch(T.logsumexp, _x3(T), ()),
    "logsumexp_empty_dims_1d": lambda T: catch(T.logsumexp, T.tensor([1., 2.]), []),
    "logsumexp_empty_dims_keepdim": lambda T: T.logsumexp(_x3(T), (), True),
    "logsumexp_empty_dims_0d": lambda T: T.logsumexp(T.tensor(1.), ()),
    "logsumexp_empty_dims_empty": lambda T: T.logsumexp(T.ones(0, 2), ()),
    # norms
    "norm_nuc": lambda T: T.norm(T.tensor([[1., -2.], [0., 3.]]), "nuc"),
    "norm_nuc_dims": lambda T: T.norm(T.ones(2, 3, 4), "nuc", (0, 2)),
    "norm_nuc_1d": lambda T: catch(T.norm, T.ones(3), "nuc"),
    "norm_bad_string": lambda T: catch(T.norm, T.ones(2, 2), "abc"),
    "norm_fro_dims": lambda T: T.norm(_x3(T), "fro", (0, 2)),
    "norm_p_tuple": lambda T: catch(T.norm, _x3(T), (0, 2)),
    "vector_norm_ord_str": lambda T: catch(T.linalg.vector_norm, T.ones(2), "fro"),
    "vector_norm_ord_list": lambda T: catch(T.linalg.vector_norm, T.ones(2), [1]),
    **{f"vector_norm_empty_{o}": (lambda T, o=o: [
        catch(T.linalg.vector_norm, T.ones(0, 3), o),
        catch(T.linalg.vector_norm, T.ones(0, 3), o, 0),
        catch(T.linalg.vector_norm, T.ones(0, 3), o, 1),
        catch(T.norm, T.ones(0), o)]) for o in (INF, -INF, -1, -0.5, 0, 0.5, 2)},
    # half-precision softmax is computed in float
    "softmax_half": lambda T: T.softmax(T.tensor([1., 2., 3.], dtype=T.float16), 0),
    "softmax_half_lastdim": lambda T: T.softmax(T.tensor(
        np.random.default_rng(0).standard_normal((40, 7)).tolist(), dtype=T.float16) * 3, 1),
    "log_softmax_half_dim0": lambda T: T.log_softmax(T.tensor(
        np.random.default_rng(1).standard_normal((40, 7)).tolist(), dtype=T.float16) * 3, 0),
    "log_softmax_bfloat16_dim0": lambda T: T.log_softmax(T.tensor(
        np.random.default_rng(2).standard_normal((40, 7)).tolist(), dtype=T.bfloat16) * 3, 0),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name):
    same(REDUCTIONS[name])


def test_degrees_of_freedom_warning_names_the_op():
    for name in ("std", "var", "var_mean", "std_mean"):
        same(lambda T: _warned(lambda: getattr(T, name)(T.tensor([1., 2., 4.]), correction=5)))


REDUCTION_OUT = {
    "max_dim_indices_float": lambda T: catch(T.max, T.ones(2, 3), 1,
                                             out=(T.empty(2), T.empty(2))),
    "min_dim_values_double": lambda T: catch(T.min, T.ones(2, 3), 1, out=(
        T.empty(2, dtype=T.float64), T.empty(2, dtype=T.int64))),
    "argmax_out_int32": lambda T: catch(T.argmax, T.ones(2), out=T.empty((), dtype=T.int32)),
    "argmin_out": lambda T: _out_call(T, lambda o: T.argmin(T.tensor([[3., 1.]]), 1, out=o),
                                      T.empty(1, dtype=T.int64)),
    "all_out_float": lambda T: catch(T.all, T.ones(2), out=T.empty((), dtype=T.float32)),
    "any_out_long": lambda T: catch(T.any, T.ones(2, dtype=T.uint8),
                                    out=T.empty((), dtype=T.int64)),
    "any_float_out_uint8": lambda T: T.any(T.ones(2), out=T.empty((), dtype=T.uint8)),
    "all_uint8_out_bool": lambda T: T.all(T.ones(2, dtype=T.uint8), out=T.empty((),
                                                                               dtype=T.bool)),
    "logsumexp_out_long": lambda T: catch(T.logsumexp, T.ones(2), 0,
                                          out=T.empty((), dtype=T.int64)),
    "prod_dim_out_long": lambda T: _out_call(T, lambda o: T.prod(T.full((2, 3), 2.), 1, out=o),
                                             T.empty(2, dtype=T.int64)),
    "nansum_out_double": lambda T: _out_call(T, lambda o: T.nansum(T.tensor([1., NAN]), out=o),
                                             T.empty((), dtype=T.float64)),
    "nansum_out_long": lambda T: catch(T.nansum, T.ones(2), out=T.empty((), dtype=T.int64)),
    "nanmean_out_half": lambda T: _out_call(T, lambda o: T.nanmean(T.tensor([[1., NAN]]), 1,
                                                                   out=o),
                                            T.empty(1, dtype=T.float16)),
    "nanmean_out_long": lambda T: catch(T.nanmean, T.ones(2), out=T.empty((), dtype=T.int64)),
    "softmax_out": lambda T: _out_call(T, lambda o: T.softmax(T.ones(2), 0, out=o), T.empty(2)),
    "softmax_out_double": lambda T: catch(T.softmax, T.ones(2), 0,
                                          out=T.empty(2, dtype=T.float64)),
    "log_softmax_out_half": lambda T: catch(T.log_softmax, T.ones(2), 0,
                                            out=T.empty(2, dtype=T.float16)),
    "norm_out_double": lambda T: catch(T.norm, T.ones(2), out=T.empty((), dtype=T.float64)),
    "vector_norm_out": lambda T: _out_call(T, lambda o: T.linalg.vector_norm(T.ones(4), out=o),
                                           T.empty(())),
    "vector_norm_out_double": lambda T: catch(T.linalg.vector_norm, T.ones(2),
                                              out=T.empty((), dtype=T.float64)),
}


@pytest.mark.parametrize("name", sorted(REDUCTION_OUT))
def test_reduction_out(name):
    same(REDUCTION_OUT[name])


# ----------------------------------------------------------------------------- joining
JOINING = {
    "cat_zero_dim_later": lambda T: catch(T.cat, [T.ones(2, 3), T.ones(3), T.tensor(1.)]),
    "cat_zero_dim_after_empty": lambda T: catch(T.cat, [T.tensor([]), T.tensor(1.)]),
    "cat_nothing": lambda T: catch(T.cat, []),
    "cat_out_is_input": lambda T: _warned(lambda: (lambda a: T.cat([a, a], out=a))(T.ones(2))),
    "cat_out_overlaps_input": lambda T: catch(
        lambda: (lambda o: T.cat([o[:2], T.ones(2)], out=o))(T.zeros(4))),
    "cat_out": lambda T: _out_call(T, lambda o: T.cat([T.ones(2), T.zeros(2)], out=o),
                                   T.empty(4)),
    **{f"{f}_empty_list": (lambda T, f=f: catch(getattr(T, f), []))
       for f in ("hstack", "vstack", "dstack", "column_stack")},
    "dstack_0d": lambda T: T.dstack([T.tensor(1.), T.tensor(2.)]),
    "scatter_reduce_max_min": lambda T: [
        T.scatter_reduce(T.tensor([1., 5.]), 0, T.tensor([0, 1]), T.tensor([3., 2.]), r,
                         include_self=s) for r in ("max", "min") for s in (True, False)],
    "scatter_reduce_max_backward": lambda T: catch(lambda: T.scatter_reduce(
        T.tensor([1., 5.], requires_grad=True), 0, T.tensor([0, 1]), T.tensor([3., 2.]),
        "max").sum().backward()),
    "scatter_reduce_bad": lambda T: catch(T.scatter_reduce, T.tensor([1.]), 0, T.tensor([0]),
                                          T.tensor([1.]), "add"),
}


@pytest.mark.parametrize("name", sorted(JOINING))
def test_joining(name):
    same(JOINING[name])


# ----------------------------------------------------------------------------- linalg
def _i(T, *shape):
    return T.arange(int(np.prod(shape))).reshape(shape)


LINALG = {
    "outer_2d_self": lambda T: catch(T.outer, T.ones(2, 1), T.ones(3)),
    "outer_0d_vec2": lambda T: catch(T.outer, T.ones(2), T.tensor(1.)),
    "ger_2d": lambda T: catch(T.ger, T.ones(2), T.ones(2, 1)),
    # integer addmm-like ops truncate float factors (addr refuses them)
    "addmm_int_beta_half": lambda T: T.addmm(_i(T, 2, 2), _i(T, 2, 3), _i(T, 3, 2), beta=0.5),
    "addmm_int_alpha": lambda T: T.addmm(_i(T, 2, 2), _i(T, 2, 3), _i(T, 3, 2), alpha=2.5),
    "addmm_int_negative": lambda T: T.addmm(_i(T, 2, 2), _i(T, 2, 3), _i(T, 3, 2), alpha=-0.5,
                                            beta=1.9),
    "addmm_int_inplace": lambda T: _i(T, 2, 2).addmm_(_i(T, 2, 3), _i(T, 3, 2), beta=0.5),
    "addmv_int_beta": lambda T: T.addmv(_i(T, 2), _i(T, 2, 3), _i(T, 3), beta=0.5),
    "baddbmm_int_beta": lambda T: T.baddbmm(_i(T, 1, 2, 2), _i(T, 1, 2, 3), _i(T, 1, 3, 2),
                                            beta=0.5),
    "addbmm_int_alpha": lambda T: T.addbmm(_i(T, 2, 2), _i(T, 1, 2, 3), _i(T, 1, 3, 2),
                                           alpha=0.5),
    "addr_int_beta": lambda T: catch(T.addr, _i(T, 2, 3), _i(T, 2), _i(T, 3), beta=0.5),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg(name):
    same(LINALG[name])


# ----------------------------------------------------------------------------- more ops
_SORTED = np.sort(np.random.default_rng(0).integers(0, 20, 37)).tolist()
_VALUES = np.random.default_rng(1).integers(-2, 22, (5, 7)).tolist()
_SORTED_ROWS = np.sort(np.random.default_rng(2).standard_normal((3, 2, 9)), -1).tolist()
_ROW_VALUES = np.random.default_rng(3).standard_normal((3, 2, 4)).tolist()

MORE = {
    # searchsorted bisects as PyTorch does, so NaNs land where PyTorch puts them
    **{f"searchsorted_{name}_{right}": (lambda T, f=f, right=right: f(T, right))
       for right in (False, True) for name, f in {
           "nan": lambda T, r: T.searchsorted(T.tensor([1., 3., NAN]), T.tensor([NAN, 2., 5.]),
                                              right=r),
           "nan_inside": lambda T, r: T.searchsorted(T.tensor([1., NAN, 3., 4., NAN, NAN]),
                                                     T.tensor([NAN, 2., 3., 5., 0.]), right=r),
           "ints": lambda T, r: T.searchsorted(T.tensor(_SORTED), T.tensor(_VALUES), right=r),
           "rows": lambda T, r: T.searchsorted(T.tensor(_SORTED_ROWS), T.tensor(_ROW_VALUES),
                                               right=r),
           "empty_boundaries": lambda T, r: T.searchsorted(T.tensor([]), T.tensor([1.]),
                                                           right=r),
           "empty_rows": lambda T, r: T.searchsorted(T.ones(0, 3), T.ones(0, 2), right=r),
           "scalar": lambda T, r: T.searchsorted(T.tensor([1., 2., 2.]), 2, right=r),
           "sorter": lambda T, r: T.searchsorted(T.tensor([3., 1., 2.]), T.tensor([2.]),
                                                 right=r, sorter=T.tensor([1, 2, 0])),
           "bucketize_nan": lambda T, r: T.bucketize(T.tensor([[NAN, 1.], [3., 9.]]),
                                                     T.tensor([1., 3., NAN]), right=r)}.items()},
    # diff: prepend/append must be tensors with input's dims
    "diff_prepend_fewer_dims": lambda T: catch(T.diff, T.ones(2, 3), prepend=T.ones(3)),
    "diff_prepend_0d": lambda T: catch(T.diff, T.ones(3), prepend=T.tensor(5.)),
    "diff_prepend_shape": lambda T: catch(T.diff, T.ones(2, 3), prepend=T.ones(3, 3)),
    "diff_append_shape_dim0": lambda T: catch(T.diff, T.ones(2, 3), dim=0,
                                              append=T.ones(2, 2)),
    "diff_append_number": lambda T: catch(T.diff, T.ones(3), append=5),
    "diff_append_prepend": lambda T: T.diff(T.ones(2, 3), dim=0, append=T.zeros(1, 3),
                                            prepend=T.full((2, 3), 5.)),
    # dist is norm(input - other)
    "dist_int": lambda T: catch(T.dist, T.ones(2, dtype=T.int64), T.ones(2, dtype=T.int64)),
    "dist_int_float": lambda T: T.dist(T.ones(2, dtype=T.int64), T.tensor([3., 4.])),
    "dist_bool": lambda T: catch(T.dist, T.ones(2, dtype=T.bool), T.ones(2)),
    "inner_dtypes": lambda T: catch(T.inner, T.ones(3, dtype=T.float64), T.ones(3)),
    "inner_0d_mixed": lambda T: T.inner(T.tensor(2), T.ones(2, 2)),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_ops(name):
    same(MORE[name])


METHODS = {
    # reflected and in-place shifts
    "rlshift": lambda T: (3 << T.tensor([0, 1, 3]), 100 >> T.tensor([0, 1, 3]),
                          True << T.tensor([1, 2])),
    "rlshift_float": lambda T: catch(lambda: 2.5 << T.tensor([1])),
    "ilshift": lambda T: (lambda t: (t.__ilshift__(2), t))(T.tensor([1, 2])),
    "irshift_float": lambda T: catch(lambda: T.tensor([1., 2.]).__irshift__(2)),
    # in-place bitwise ops check the cast before the kernel's dtype
    "irshift_int_by_float": lambda T: catch(lambda: T.tensor([1, 2]).__irshift__(T.ones(2))),
    "bitwise_and_int_float": lambda T: catch(lambda: T.tensor([1, 2]).bitwise_and_(T.ones(2))),
    "bitwise_or_bool_int": lambda T: catch(lambda: T.tensor([True]).bitwise_or_(T.tensor([2]))),
    "bitwise_or_int_bool": lambda T: (lambda t: (t.bitwise_or_(T.tensor([True, False])), t))(
        T.tensor([1, 2])),
    # cumsum_/cumprod_ scan in self's dtype
    "cumsum_bool": lambda T: catch(lambda: T.tensor([True, False]).cumsum_(0)),
    "cumprod_bool": lambda T: catch(lambda: T.tensor([True, False]).cumprod_(0)),
    "cumsum_int8_wraps": lambda T: (lambda t: (t.cumsum_(0), t))(T.tensor([100, 100],
                                                                            dtype=T.int8)),
    "cumsum_dtype_mismatch": lambda T: catch(lambda: T.tensor([1, 2], dtype=T.int8).cumsum_(
        0, dtype=T.int64)),
    "cumsum_same_dtype": lambda T: (lambda t: (t.cumsum_(0, dtype=T.float32), t))(
        T.tensor([1., 2.])),
    # (torch's zero gradient is a ZeroTensor: + 0 makes it a plain one)
    "sgn_inplace_grad": lambda T: (lambda a: (lambda b: (b.sgn_().sum().backward(), a.grad + 0,
                                                         b.grad_fn.name()))(a * 1))(
        T.tensor([1., -2.], requires_grad=True)),
    "cumprod_grad": lambda T: (lambda a: (lambda b: (b.cumprod_(0).sum().backward(), a.grad))(
        a * 1))(T.tensor([1., 2., 3.], requires_grad=True)),
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_methods(name):
    same(METHODS[name])


# ----------------------------------------------------------------------------- arguments
ARGUMENTS = {
    **{f"{f}_{case}": (lambda T, f=f, call=call: catch(call, T, f))
       for f in ("softmax", "log_softmax", "cumsum", "cumprod", "logsumexp")
       for case, call in {
           "missing_dim": lambda T, f: getattr(T, f)(T.ones(2)),
           "dim_none": lambda T, f: getattr(T, f)(T.ones(2), None),
           "method_missing_dim": lambda T, f: getattr(T.ones(2), f)(),
           "dim_given": lambda T, f: getattr(T, f)(T.ones(2), 0)}.items()},
    **{f"{f}_dim_{kind}": (lambda T, f=f, bad=bad: catch(getattr(T, f), _x3(T), bad))
       for f in ("argmax", "argmin", "median", "nanmedian", "mode", "softmax", "cumsum")
       for kind, bad in {"tuple": (1,), "bool": True, "float": 1.0, "none": None}.items()
       if not (kind == "none" and f in ("argmax", "argmin"))},
    "argmax_dim_numpy_int": lambda T: T.argmax(_x3(T), np.int64(1)),
    "median_no_dim": lambda T: (T.median(_x3(T)), T.nanmedian(_x3(T))),
    "functional_softmax_implicit_dim": lambda T: _warned(
        lambda: T.nn.functional.softmax(T.ones(2, 3))),
    "tensor_has_no_rsub": lambda T: hasattr(T.ones(1), "rsub"),
    "rsub_function": lambda T: T.rsub(T.ones(2), T.full((2,), 3.), alpha=2),
}


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_arguments(name):
    same(ARGUMENTS[name])


# ----------------------------------------------------------------------------- complex inputs
def _z(T):
    return T.tensor([1 + 2j, -3 + 0j, 0j, complex(NAN, 1)])


COMPLEX = {
    "softmax": lambda T: catch(T.softmax, _z(T), 0),
    "softmax_not_last_dim": lambda T: catch(T.softmax, _z(T).reshape(4, 1), 0),
    "log_softmax": lambda T: catch(T.log_softmax, _z(T), 0),
    "softmax_empty": lambda T: T.softmax(T.ones(0, dtype=T.complex64), 0),
    "nansum": lambda T: catch(T.nansum, _z(T)),
    "nanmean": lambda T: catch(T.nanmean, _z(T)),
    "signbit": lambda T: catch(T.signbit, _z(T)),
    "unique": lambda T: catch(T.unique, _z(T)),
    "unique_dim": lambda T: catch(T.unique, _z(T), dim=0),
    "unique_consecutive": lambda T: catch(T.unique_consecutive, _z(T)),
    "logcumsumexp": lambda T: T.logcumsumexp(T.tensor([1 + 2j, 1000 + 1j, -5 + 3j, 1000 - 1j]),
                                             0),
    "logcumsumexp_2d": lambda T: T.logcumsumexp(T.tensor([[1 + 2j, 3 + 1j], [-5 + 3j, 2 - 1j]],
                                                         dtype=T.complex128), 1),
    "logcumsumexp_grad": lambda T: (lambda x: (T.logcumsumexp(x, 0).abs().sum().backward(),
                                               x.grad.resolve_conj()))(
        T.tensor([1 + 2j, 3 + 1j, -5 + 3j, 2 - 1j], requires_grad=True)),
    "logcumsumexp_real_grad": lambda T: (lambda x: (T.logcumsumexp(x, 0).sum().backward(),
                                                    x.grad))(
        T.tensor([1., 3., -5.], requires_grad=True)),
}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex(name):
    same(COMPLEX[name])
