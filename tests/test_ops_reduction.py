"""Reductions, scans and softmax vs torch: values, dtypes, gradients, node names, errors."""
import pytest

from opinfo import REDUCTION_OPS, check_backward, check_forward, table_tests
from differential import catch, same, warnings_of

test_forward, test_backward, test_gradcheck, test_gradgradcheck, test_node_names = \
    table_tests(REDUCTION_OPS)


# ----------------------------------------------------------------------------- errors
import numpy as np  # noqa: E402
import torch  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

import ember  # noqa: E402
from differential import same  # noqa: E402
from opinfo import check_same_error, OpInfo, Sample, make, ALL_FLOATS, INTS  # noqa: E402


def _x(lib, shape=(2, 3, 4), dtype="float32"):
    return lib.ones(shape, dtype=getattr(lib, dtype))


BAD_CALLS = {
    "sum_dim_out_of_range": lambda lib: lib.sum(_x(lib), 3),
    "sum_negative_dim_out_of_range": lambda lib: lib.sum(_x(lib), -4),
    "sum_tuple_dim_out_of_range": lambda lib: lib.sum(_x(lib), (0, 5)),
    "sum_repeated_dim": lambda lib: lib.sum(_x(lib), (1, 1)),
    "sum_repeated_negative_dim": lambda lib: lib.sum(_x(lib), (1, -2)),
    "zero_dim_sum_dim_1": lambda lib: lib.sum(_x(lib, ()), 1),
    "mean_of_int": lambda lib: lib.mean(_x(lib, dtype="int64")),
    "mean_of_bool_dim": lambda lib: lib.mean(_x(lib, dtype="bool"), 0),
    "mean_int_dtype": lambda lib: lib.mean(_x(lib), dtype=lib.int32),
    "std_of_int": lambda lib: lib.std(_x(lib, dtype="int32")),
    "var_of_bool": lambda lib: lib.var(_x(lib, dtype="bool"), 1),
    "max_dim_out_of_range": lambda lib: lib.max(_x(lib), 3),
    "max_of_empty": lambda lib: lib.max(_x(lib, (0, 2))),
    "max_of_empty_dim": lambda lib: lib.max(_x(lib, (0, 2)), 0),
    "amax_of_empty": lambda lib: lib.amax(_x(lib, (0, 2))),
    "argmax_of_empty": lambda lib: lib.argmax(_x(lib, (0, 2))),
    "argmax_dim_out_of_range": lambda lib: lib.argmax(_x(lib), -5),
    "argmin_of_bool": lambda lib: lib.argmin(_x(lib, dtype="bool")),
    "cumsum_dim_out_of_range": lambda lib: lib.cumsum(_x(lib), 3),
    "softmax_of_int": lambda lib: lib.softmax(_x(lib, dtype="int64"), 0),
    "softmax_dim_out_of_range": lambda lib: lib.softmax(_x(lib), 3),
    "logsumexp_dim_out_of_range": lambda lib: lib.logsumexp(_x(lib), 7),
    "norm_of_int": lambda lib: lib.norm(_x(lib, dtype="int64")),
    "prod_dim_out_of_range": lambda lib: lib.prod(_x(lib), 3),
    "all_dim_out_of_range": lambda lib: lib.all(_x(lib), 3),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_errors_match_torch(name):
    check_same_error(lambda: BAD_CALLS[name](ember), lambda: BAD_CALLS[name](torch))


def test_max_min_return_named_tuples():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 5
    for name in ("max", "min"):
        e = getattr(ember.tensor(x), name)(1, keepdim=True)
        t = getattr(torch.tensor(x), name)(1, keepdim=True)
        assert type(e).__name__ == type(t).__name__ == name
        assert isinstance(e, tuple) and len(e) == len(t) == 2
        assert e[0] is e.values and e[1] is e.indices
        np.testing.assert_array_equal(e.values.numpy(), t.values.numpy())
        np.testing.assert_array_equal(e.indices.numpy(), t.indices.numpy())
        assert repr(e).replace("ember", "torch") == repr(t)


# ----------------------------------------------------------------------------- hypothesis sweep
REDUCE_SWEEP = {
    "sum": lambda lib, x, dim, keepdim: lib.sum(x, dim, keepdim),
    "mean": lambda lib, x, dim, keepdim: lib.mean(x, dim, keepdim),
    "amax": lambda lib, x, dim, keepdim: lib.amax(x, dim, keepdim),
    "std": lambda lib, x, dim, keepdim: lib.std(x, dim, keepdim=keepdim),
    "logsumexp": lambda lib, x, dim, keepdim: lib.logsumexp(x, dim, keepdim),
    "vector_norm": lambda lib, x, dim, keepdim: lib.linalg.vector_norm(x, 2, dim, keepdim),
    "any": lambda lib, x, dim, keepdim: lib.any(x, dim, keepdim),
    "max": lambda lib, x, dim, keepdim: lib.max(x, dim[0], keepdim),
    "cumsum": lambda lib, x, dim, keepdim: lib.cumsum(x, dim[0]),
    "softmax": lambda lib, x, dim, keepdim: lib.softmax(x, dim[0]),
}


@settings(max_examples=50, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=0, max_size=3),
       dims=st.lists(st.integers(-4, 3), min_size=1, max_size=3), keepdim=st.booleans(),
       dtype=st.sampled_from(("bool",) + INTS + ALL_FLOATS),
       name=st.sampled_from(sorted(REDUCE_SWEEP)), seed=st.integers(0, 2 ** 16))
def test_reduction_sweep(shape, dims, keepdim, dtype, name, seed):
    """Reductions over random shapes (0-dim and 0-size included), dims (negative, repeated,
    out of range) and dtypes: same values, dtype and shape as torch, or the same error; and
    the same gradient in float."""
    x = make(shape, dtype, np.random.default_rng(seed))
    op = OpInfo(name, lambda lib, t: REDUCE_SWEEP[name](lib, t, tuple(dims), keepdim),
                lambda d, r: iter([Sample(x)]))
    check_forward(op, dtype)
    if dtype in ("float32", "float64"):
        from opinfo import torch_accepts
        # (any: not differentiable; std: no gradient where n <= 1)
        if torch_accepts(op, Sample(x)) and name not in ("any", "std"):
            check_backward(op, dtype)


# ----------------------------------------------------------------------------- var/std dim=[]
@pytest.mark.parametrize("name", ["std", "var", "std_mean", "var_mean"])
@pytest.mark.parametrize("dim", [[], ()], ids=["list", "tuple"])
@pytest.mark.parametrize("kwargs", [{}, {"keepdim": True}, {"correction": 0},
                                    {"unbiased": False, "keepdim": True}, {"correction": 2}],
                         ids=str)
def test_var_std_empty_dim_list(name, dim, kwargs):
    # torch reduces every dim for dim=[], but its derivative takes n = 1 in n - correction
    # (inf / nan gradients by default): ember must give the same values and gradients
    from differential import same, warnings_of

    def scenario(T):
        x = T.tensor([[1., 2., 4.], [3., 5., 9.]], dtype=T.float64, requires_grad=True)
        out, warned = warnings_of(lambda: getattr(T, name)(x, dim, **kwargs))
        outs = out if isinstance(out, tuple) else (out,)
        grads = [T.autograd.grad(o.sum(), x, retain_graph=True)[0] for o in outs]
        both = T.autograd.grad(sum(o.sum() for o in outs), x, create_graph=True)[0]
        gradgrad = T.autograd.grad((both * T.arange(6.).reshape(2, 3)).sum(), x,
                                   allow_unused=True)[0]
        return outs, [o.grad_fn.name() for o in outs], grads, both, gradgrad, warned
    same(scenario, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["std", "var", "std_mean", "var_mean"])
@pytest.mark.parametrize("correction", [2, 3, 4])
def test_var_std_correction_above_count(name, correction):
    # the forward divides by max(n - correction, 0), torch's derivative by n - correction
    from differential import same, warnings_of

    def scenario(T):
        x = T.tensor([1., 2., 4.], dtype=T.float64, requires_grad=True)
        out, warned = warnings_of(lambda: getattr(T, name)(x, 0, correction=correction))
        outs = out if isinstance(out, tuple) else (out,)
        # (torch's warning adds where in its C++ source it was raised)
        return outs, T.autograd.grad(outs[0], x)[0], [w.split(" (Triggered")[0] for w in warned]
    same(scenario, rtol=1e-10, atol=1e-12)


def test_var_std_results_are_contiguous():
    # NumPy's reductions keep a permuted input's memory order; torch's results are contiguous
    from differential import same

    def scenario(T):
        x = T.arange(24.).reshape(2, 3, 4).permute(2, 0, 1)
        outs = [x.var(1, keepdim=True), x.std(1), *T.var_mean(x, 1, keepdim=True),
                *T.std_mean(x, (0, 2)), x.std(), x.half().var(0)]
        return [(o, o.stride()) for o in outs]
    same(scenario, rtol=1e-3)


def test_zero_norm_sends_no_gradient():
    def scenario(T):
        x = T.tensor([1., 0., 2.], requires_grad=True)
        T.linalg.vector_norm(x, 0).backward()
        y = T.tensor([[1., 0.], [3., 4.]], requires_grad=True)
        return x.grad, T.autograd.grad(y.norm(0, dim=1).sum() * 2, y, allow_unused=True)
    assert same(scenario) == (None, (None,))


NAN, INF = float("nan"), float("inf")


def _warned(fn):
    """(result or error, warnings) with PyTorch's '(Triggered internally at ...)' tail cut."""
    result, caught = warnings_of(lambda: catch(fn))
    return result, [w.split(" (Triggered internally at")[0] for w in caught]


def _out_call(T, fn, out):
    """The result of fn(out=out) and out itself afterwards (or the error)."""
    return catch(lambda: (fn(out), out))


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


# ----------------------------------------------------------------------------- reductions
REDUCTIONS_second_round = {
    # var_mean/std_mean's running mean: an infinity followed by another value gives NaN
    **{f"var_mean_{i}": (lambda T, v=v: T.var_mean(T.tensor(v)))
       for i, v in enumerate([[-INF, -INF], [INF, 1.], [1., INF], [INF], [1., INF, 2.],
                              [-INF, INF], [1.] * 10 + [INF], [1.] * 100 + [INF] + [1.] * 50,
                              [1., -INF]])},
    "std_mean_inf_first": lambda T: T.std_mean(T.tensor([INF, 1.])),
    "std_mean_double_keepdim": lambda T: T.std_mean(
        T.tensor([[INF, 1.], [2., -INF]], dtype=T.float64), 1, keepdim=True),
    "var_mean_dim0": lambda T: T.var_mean(T.tensor([[1., INF, 3.], [INF, 2., 5.],
                                                    [4., 4., 4.]]), 0),
    "var_mean_all_dims": lambda T: T.var_mean(T.tensor([[1., 2., 3.], [4., 2., INF]]), (0, 1)),
    "var_mean_all_dims_early": lambda T: T.var_mean(T.tensor([[1., 2., INF], [4., 2., 1.]]),
                                                    (1, 0)),
    "std_mean_3d": lambda T: T.std_mean(T.tensor([[[1., INF], [3., 4.]], [[1., 2.], [3., INF]]]),
                                        (0, 2), keepdim=True),
    "var_mean_half": lambda T: T.var_mean(T.tensor([INF, 1.], dtype=T.float16)),
    "var_mean_complex": lambda T: T.var_mean(T.tensor([1 + 1j, 2.])),
    # ldexp: a float input's exponent may not be bool
    "ldexp_float_bool": lambda T: catch(T.ldexp, T.ones(2), T.tensor([True, False])),
    "ldexp_double_bool_scalar": lambda T: catch(T.ldexp, T.ones(2, dtype=T.float64),
                                                T.tensor(True)),
    "ldexp_inplace_bool": lambda T: catch(lambda: T.ones(2).ldexp_(T.tensor([True, False]))),
    "ldexp_bool_bool": lambda T: T.ldexp(T.tensor([True]), T.tensor([True, False])),
    "ldexp_int_bool": lambda T: T.ldexp(T.tensor([1, 3]), T.tensor([True, False])),
    "ldexp_float_int": lambda T: T.ldexp(T.ones(2), T.tensor([1, 2])),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS_second_round))
def test_reductions_second_round(name):
    same(REDUCTIONS_second_round[name])


def test_long_float32_sums_along_a_leading_dim_are_as_accurate_as_torchs():
    # NumPy adds along a leading dim one term at a time (30,000 terms of 1/30,000 gave 0.9997)
    def scenario(T):
        x = T.full((30000, 2), 1 / 30000)
        l = T.tensor([1., -1.], requires_grad=True)
        g, = T.autograd.grad((l + x).mean(0).sum(), [l])     # (the broadcast's sum_to_size)
        return x.sum(0), x.mean(0), x.sum((0,)), x.reshape(300, 100, 2).sum((0, 1)), g
    same(scenario, rtol=1e-6, atol=0)
