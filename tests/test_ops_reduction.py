"""Reductions, scans and softmax vs torch: values, dtypes, gradients, node names, errors."""
import pytest

from opinfo import REDUCTION_OPS, check_backward, check_forward, table_tests

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
