"""Matrix products (matmul in every rank combination, mm, bmm, mv, dot, outer, addmm, einsum)
and joining (cat, stack) vs torch: values, dtypes, gradients, node names, errors."""
import warnings

import pytest

from opinfo import LINALG_OPS, JOINING_OPS, table_tests
import math
from differential import same, catch, warnings_of

test_forward, test_backward, test_gradcheck, test_gradgradcheck, test_node_names = \
    table_tests(LINALG_OPS + JOINING_OPS)


# matmul decides between folding into mm/mv and a broadcast bmm by which operand needs a
# gradient and by the layout: the graph (and so the memory of the backward) must match torch's
# for each combination.
MATMUL_GRAD_SHAPES = [((3,), (2, 3, 4)), ((2, 3), (2, 3, 4)), ((2, 2, 3), (3, 4)),
                      ((2, 2, 3), (3,)), ((4, 2, 3), (1, 3, 2)), ((1, 2, 3), (5, 3, 2)),
                      ((2, 1, 2, 3), (1, 3, 2)), ((2, 2, 3), (2, 1, 3, 2)), ((3,), (3, 4))]


@pytest.mark.parametrize("shapes", MATMUL_GRAD_SHAPES, ids=str)
@pytest.mark.parametrize("needs", [(True, False), (False, True), (True, True)], ids=str)
def test_matmul_graph_by_requires_grad(shapes, needs):
    import numpy as np
    import torch
    import ember
    from opinfo import graph_names, assert_same
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    t = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, needs)]
    e = [ember.tensor(a, requires_grad=g) for a, g in zip(arrays, needs)]
    t_out, e_out = t[0] @ t[1], e[0] @ e[1]
    assert graph_names(e_out.grad_fn) == graph_names(t_out.grad_fn)
    assert_same(e_out, t_out)
    up = rng.standard_normal(tuple(t_out.shape)).astype(np.float32)
    t_out.backward(torch.tensor(up))
    e_out.backward(ember.tensor(up))
    for et, tt in zip(e, t):
        if tt.requires_grad:
            assert_same(et.grad, tt.grad)


def test_matmul_of_non_contiguous_batch_graph():
    import torch
    import ember
    from opinfo import graph_names
    x_t = torch.ones(3, 2, 2).transpose(0, 2).requires_grad_()
    x_e = ember.ones(3, 2, 2).transpose(0, 2).requires_grad_()
    assert graph_names((x_e @ ember.ones(3, 4)).grad_fn) == \
        graph_names((x_t @ torch.ones(3, 4)).grad_fn)


# ----------------------------------------------------------------------------- keyword forms, out=
import numpy as np  # noqa: E402
import torch  # noqa: E402

import ember  # noqa: E402
from opinfo import assert_same, check_same_error, _warning_texts  # noqa: E402


def _args(lib):
    rng = np.random.default_rng(0)
    a = lib.tensor(rng.standard_normal((2, 3)).astype(np.float32))
    b = lib.tensor(rng.standard_normal((2, 3)).astype(np.float32))
    m = lib.tensor(rng.standard_normal((3, 4)).astype(np.float32))
    v = lib.tensor(rng.standard_normal(3).astype(np.float32))
    return a, b, m, v


KEYWORD_CALLS = {
    "add": lambda lib, a, b, m, v: lib.add(input=a, other=b, alpha=2),
    "sub": lambda lib, a, b, m, v: lib.sub(input=a, other=b, alpha=0.5),
    "mul": lambda lib, a, b, m, v: lib.mul(input=a, other=b),
    "div": lambda lib, a, b, m, v: lib.div(input=a, other=b, rounding_mode="floor"),
    "true_divide": lambda lib, a, b, m, v: lib.true_divide(input=a, other=b),
    "pow": lambda lib, a, b, m, v: lib.pow(input=a.abs(), exponent=b),
    "pow_scalar_base": lambda lib, a, b, m, v: lib.pow(self=2, exponent=b),
    "clamp": lambda lib, a, b, m, v: lib.clamp(input=a, min=-0.5, max=0.5),
    "clamp_tensors": lambda lib, a, b, m, v: lib.clamp(a, min=b),
    "where": lambda lib, a, b, m, v: lib.where(condition=a > 0, input=a, other=b),
    "maximum": lambda lib, a, b, m, v: lib.maximum(input=a, other=b),
    "lerp": lambda lib, a, b, m, v: lib.lerp(input=a, end=b, weight=0.25),
    "addcmul": lambda lib, a, b, m, v: lib.addcmul(input=a, tensor1=a, tensor2=b, value=3),
    "atan2": lambda lib, a, b, m, v: lib.atan2(input=a, other=b),
    "eq": lambda lib, a, b, m, v: lib.eq(input=a, other=b),
    "isclose": lambda lib, a, b, m, v: lib.isclose(input=a, other=b, rtol=1, atol=0),
    "sum": lambda lib, a, b, m, v: lib.sum(input=a, dim=1, keepdim=True),
    "mean": lambda lib, a, b, m, v: lib.mean(input=a, dim=(0, 1)),
    "std": lambda lib, a, b, m, v: lib.std(input=a, dim=1, correction=0),
    "max": lambda lib, a, b, m, v: lib.max(input=a, dim=1),
    "amax": lambda lib, a, b, m, v: lib.amax(input=a, dim=0),
    "argmax": lambda lib, a, b, m, v: lib.argmax(input=a, dim=1, keepdim=True),
    "logsumexp": lambda lib, a, b, m, v: lib.logsumexp(input=a, dim=1),
    "softmax": lambda lib, a, b, m, v: lib.softmax(input=a, dim=1),
    "cumsum": lambda lib, a, b, m, v: lib.cumsum(input=a, dim=1),
    "cat": lambda lib, a, b, m, v: lib.cat(tensors=[a, b], dim=1),
    "stack": lambda lib, a, b, m, v: lib.stack(tensors=[a, b], dim=2),
    "matmul": lambda lib, a, b, m, v: lib.matmul(input=a, other=m),
    "mm": lambda lib, a, b, m, v: lib.mm(input=a, mat2=m),
    "mv": lambda lib, a, b, m, v: lib.mv(input=a, vec=v),
    "dot": lambda lib, a, b, m, v: lib.dot(input=v, tensor=v),
    "addmm": lambda lib, a, b, m, v: lib.addmm(input=m[:2], mat1=a, mat2=m, beta=0.5,
                                               alpha=2),
    "method_add": lambda lib, a, b, m, v: a.add(other=b, alpha=3),
    "method_sum": lambda lib, a, b, m, v: a.sum(dim=0),
    "method_matmul": lambda lib, a, b, m, v: a.matmul(other=m),
}


@pytest.mark.parametrize("name", sorted(KEYWORD_CALLS))
def test_keyword_forms(name):
    """The ops take their arguments by PyTorch's keyword names too."""
    assert_same(KEYWORD_CALLS[name](ember, *_args(ember)),
                KEYWORD_CALLS[name](torch, *_args(torch)))


OUT_CALLS = {
    "add": lambda lib, a, b, m, v, out: lib.add(a, b, alpha=2, out=out),
    "mul": lambda lib, a, b, m, v, out: lib.mul(a, b, out=out),
    "div": lambda lib, a, b, m, v, out: lib.div(a, b, out=out),
    "pow": lambda lib, a, b, m, v, out: lib.pow(a, 2, out=out),
    "exp": lambda lib, a, b, m, v, out: lib.exp(a, out=out),
    "clamp": lambda lib, a, b, m, v, out: lib.clamp(a, 0, out=out),
    "where": lambda lib, a, b, m, v, out: lib.where(a > 0, a, b, out=out),
    "eq": lambda lib, a, b, m, v, out: lib.eq(a, b, out=out),
    "sum": lambda lib, a, b, m, v, out: lib.sum(a, 1, out=out),
    "mean": lambda lib, a, b, m, v, out: lib.mean(a, 0, out=out),
    "amax": lambda lib, a, b, m, v, out: lib.amax(a, 0, out=out),
    "cumsum": lambda lib, a, b, m, v, out: lib.cumsum(a, 1, out=out),
    "cat": lambda lib, a, b, m, v, out: lib.cat([a, b], out=out),
    "stack": lambda lib, a, b, m, v, out: lib.stack([a, b], out=out),
    "matmul": lambda lib, a, b, m, v, out: lib.matmul(a, m, out=out),
    "mm": lambda lib, a, b, m, v, out: lib.mm(a, m, out=out),
    "addmm": lambda lib, a, b, m, v, out: lib.addmm(m[:2], a, m, out=out),
}
OUT_TENSORS = {
    "empty": lambda lib: lib.empty(0),
    "wrong_shape": lambda lib: lib.zeros(5),               # resized, with torch's warning
    "float64": lambda lib: lib.zeros(0, dtype=lib.float64),  # the result is cast into it
    "int64": lambda lib: lib.zeros(0, dtype=lib.int64),      # can't cast float: error
    "bool": lambda lib: lib.zeros(0, dtype=lib.bool),
}


@pytest.mark.parametrize("out_kind", sorted(OUT_TENSORS))
@pytest.mark.parametrize("name", sorted(OUT_CALLS))
def test_out_argument(name, out_kind):
    """out=: the result written into (and returned as) the given tensor, resized as torch does
    (warning included), cast to its dtype, or torch's error when it cannot be."""
    results = {}
    for lib in (torch, ember):
        out = OUT_TENSORS[out_kind](lib)
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            try:
                got = OUT_CALLS[name](lib, *_args(lib), out=out)
            except Exception as err:
                results[lib.__name__] = err
                continue
        assert got is out
        results[lib.__name__] = (out, _warning_texts(warned))
    want, got = results["torch"], results["ember"]
    if isinstance(want, Exception):
        check_same_error(lambda: (_ for _ in ()).throw(got) if isinstance(got, Exception)
                         else None, want)
        return
    assert not isinstance(got, Exception), got
    assert_same(got[0], want[0])
    assert got[1] == want[1]


@pytest.mark.parametrize("name", ["add", "mul", "exp", "sum", "matmul", "cat", "clamp"])
def test_out_refuses_inputs_that_require_grad(name):
    def call(lib):
        a, b, m, v = _args(lib)
        a.requires_grad_()
        return OUT_CALLS[name](lib, a, b, m, v, out=lib.empty(0))
    check_same_error(lambda: call(ember), lambda: call(torch))


def test_max_with_out_tuple():
    results = []
    for lib in (torch, ember):
        a = _args(lib)[0]
        values, indices = lib.empty(0), lib.empty(0, dtype=lib.int64)
        r = lib.max(a, 1, out=(values, indices))
        assert r[0] is values and r[1] is indices
        results.append((type(r).__name__, values, indices))
    assert results[0][0] == results[1][0] == "max_out"
    assert_same(results[1][1], results[0][1])
    assert_same(results[1][2], results[0][2])


# ----------------------------------------------------------------------------- hypothesis sweep
from hypothesis import given, settings, strategies as st  # noqa: E402
from differential import grad_fn_name as _node, leaf_grads as _grads


@settings(max_examples=50, deadline=None)
@given(batch_a=st.lists(st.integers(1, 3), max_size=2), batch_b=st.lists(st.integers(1, 3),
                                                                         max_size=2),
       n=st.integers(0, 3), k=st.integers(0, 3), m=st.integers(0, 3),
       a_vec=st.booleans(), b_vec=st.booleans(), k_off=st.sampled_from([0, 0, 0, 1]),
       needs=st.sampled_from([(True, True), (True, False), (False, True)]),
       seed=st.integers(0, 2 ** 16))
def test_matmul_sweep(batch_a, batch_b, n, k, m, a_vec, b_vec, k_off, needs, seed):
    """matmul over random ranks (1-D to 4-D), batch broadcasting, 0-size dims and mismatched
    inner sizes: torch's values, errors, gradients and graph."""
    from opinfo import graph_names
    shape_a = (k,) if a_vec else tuple(batch_a) + (n, k)
    shape_b = (k + k_off,) if b_vec else tuple(batch_b) + (k + k_off, m)
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    t = [torch.tensor(a, requires_grad=needs[0]), torch.tensor(b, requires_grad=needs[1])]
    e = [ember.tensor(a, requires_grad=needs[0]), ember.tensor(b, requires_grad=needs[1])]
    try:
        t_out = t[0] @ t[1]
    except Exception as err:
        check_same_error(lambda: e[0] @ e[1], err)
        return
    e_out = e[0] @ e[1]
    assert_same(e_out, t_out, {"float64": (1e-12, 1e-12)})
    assert graph_names(e_out.grad_fn) == graph_names(t_out.grad_fn)
    up = rng.standard_normal(tuple(t_out.shape))
    t_out.backward(torch.tensor(up))
    e_out.backward(ember.tensor(up))
    for et, tt in zip(e, t):
        if tt.requires_grad:
            assert_same(et.grad, tt.grad, {"float64": (1e-12, 1e-12)})


X = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0], [2.0, 0.0, 1.0]]


ORDS = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf, 0, 3, 0.5]


DTYPES = ["float16", "float32", "float64", "complex64", "complex128", "int64"]


@pytest.mark.parametrize("ord", ORDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", ["matrix_norm", "norm"])
def test_matrix_norm_dtype_argument(fn, ord, dtype):
    same(lambda T: catch(getattr(T.linalg, fn), T.tensor(X), ord, dtype=getattr(T, dtype)))
    same(lambda T: catch(getattr(T.linalg, fn), T.tensor(X, dtype=T.complex64), ord,
                         dtype=getattr(T, dtype)))


@pytest.mark.parametrize("ord", ORDS)
@pytest.mark.parametrize("make", [
    lambda T: T.ones(3, dtype=T.int64), lambda T: T.ones(2, 2, dtype=T.int64),
    lambda T: T.ones(2, 2, dtype=T.float16), lambda T: T.ones(2, 2, dtype=T.bfloat16),
    lambda T: T.ones(3), lambda T: T.zeros(0, 3), lambda T: T.zeros(3, 0),
    lambda T: T.zeros(2, 0, 0)])
def test_matrix_norm_input_checks_and_empty(make, ord):
    same(lambda T: catch(T.linalg.matrix_norm, make(T), ord))
    same(lambda T: catch(T.linalg.matrix_norm, make(T), ord, dim=(0, 1, 2)))


def test_matrix_norm_empty_keepdim_and_dims():
    for ord in [1, math.inf]:
        same(lambda T: T.linalg.matrix_norm(T.zeros(2, 0, 3), ord, dim=(0, 1), keepdim=True))
        same(lambda T: T.linalg.matrix_norm(T.zeros(3, 0, 2), ord, dim=(2, 1)))


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, "fro", "nuc", math.inf, -math.inf])
@pytest.mark.parametrize("make", [
    lambda T: T.ones(3), lambda T: T.ones(2, 2, dtype=T.int64),
    lambda T: T.ones(2, 2, dtype=T.float16), lambda T: T.tensor([[1., 2., 3.], [0., 1., 4.]]),
    lambda T: T.ones(2, 3, dtype=T.int64), lambda T: T.zeros(0, 0),
    lambda T: T.zeros(2, 0, 0, dtype=T.complex128), lambda T: T.tensor([[1., 2.], [3., 4.]])])
def test_cond_checks_and_empty(make, p):
    same(lambda T: catch(T.linalg.cond, make(T), p))


@pytest.mark.parametrize("make", [
    lambda T: T.ones(2, 2, dtype=T.int64), lambda T: T.ones(2, 2, dtype=T.bool),
    lambda T: T.ones(3), lambda T: T.ones(2, 3)])
@pytest.mark.parametrize("fn", ["svdvals", "eigvalsh", "matrix_rank"])
def test_error_names_of_the_underlying_op(fn, make):
    same(lambda T: catch(getattr(T.linalg, fn), make(T)))


@pytest.mark.parametrize("shapes", [((3,), (4,)), ((3,), (1,)), ((1,), (3,)), ((2, 3), (4, 3)),
                                    ((3,), (2, 4)), ((2, 3), (3,))])
def test_vecdot_size_mismatch(shapes):
    a, b = shapes
    same(lambda T: catch(T.linalg.vecdot, T.ones(a), T.ones(b)))


INF, NAN = math.inf, math.nan


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32", "float64", "float16", "bfloat16",
                                   "complex64", "complex128"])
@pytest.mark.parametrize("make", [
    lambda T: T.ones(3), lambda T: T.ones(3, dtype=T.float64), lambda T: T.ones(3, dtype=T.half),
    lambda T: T.ones(3, dtype=T.complex64), lambda T: T.zeros(3, 0)])
@pytest.mark.parametrize("fn", [lambda T: T.linalg.vector_norm, lambda T: T.linalg.norm,
                                lambda T: T.norm])
def test_vector_norm_dtype_argument(fn, make, dtype):
    same(lambda T: catch(fn(T), make(T), dtype=getattr(T, dtype)))


@pytest.mark.parametrize("dim", [-1, 1, (-1,), (1, -2), (-2, -1), (0, -1), None])
@pytest.mark.parametrize("ord", [-1, INF, -INF, -0.5])
def test_vector_norm_empty_dimension_message(ord, dim):
    same(lambda T: catch(T.linalg.vector_norm, T.zeros(3, 0), ord, dim=dim))
    same(lambda T: catch(T.linalg.vector_norm, T.zeros(0, 2, 0), ord, dim=dim))
    same(lambda T: catch(T.linalg.vector_norm, T.zeros(3, 0), ord, dim=dim, dtype=T.int32))


def _randn(T, *shape):
    """Normal float64 samples, the same in torch and ember (a seed from the shape)."""
    return T.tensor(np.random.RandomState(hash(shape) % 2 ** 32).randn(*shape))


def test_frobenius_and_nuclear_norm():
    def f(T):
        x = _randn(T, 2, 3, 4).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = [T.frobenius_norm(x, [0, 1]), T.frobenius_norm(x, (1,), True),
                    T.nuclear_norm(x[0]), T.nuclear_norm(x, (0, 1)), T.nuclear_norm(x[0], True),
                    T.nuclear_norm(x), T.nuclear_norm(x, (0, 2), True)]
            errs = [catch(T.frobenius_norm, x, (0, 1, 2)), catch(T.frobenius_norm, x)]
        sum(o.sum() for o in outs).backward()
        # (keepdim nuclear norms left out of the nodes: linalg.matrix_norm's keepdim node
        # differs, reported separately)
        return outs, [_node(o) for o in outs[:4] + outs[5:6]], x.grad, errs
    same(f)


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


# ----------------------------------------------------------------------------- products, norms
def _m(T, dtype, shape=(2, 2)):
    return T.ones(shape, dtype=getattr(T, dtype))


PRODUCTS = {
    # addmm checks self against mat2, then mat1 against mat2, before the shapes
    **{f"addmm_{a}_{b}_{c}": (lambda T, a=a, b=b, c=c: catch(T.addmm, _m(T, a), _m(T, b),
                                                              _m(T, c)))
       for a, b, c in [("float32", "float64", "float32"), ("float64", "float32", "float32"),
                       ("float32", "float32", "float64"), ("float64", "int64", "float32"),
                       ("int64", "float64", "int64"), ("float32", "float64", "int64")]},
    "addmm_dtype_before_shape": lambda T: catch(T.addmm, _m(T, "float32"),
                                                _m(T, "float64", (2, 3)), _m(T, "float32")),
    "addmm_dtype_before_ndim": lambda T: catch(T.addmm, _m(T, "float32"), _m(T, "float64", (2,)),
                                               _m(T, "float32")),
    "addmm_method": lambda T: catch(lambda: _m(T, "float32").addmm(_m(T, "float64"),
                                                                   _m(T, "float32"))),
    "addmm_inplace": lambda T: catch(lambda: _m(T, "float32").addmm_(_m(T, "float64"),
                                                                     _m(T, "float32"))),
    "mm": lambda T: catch(T.mm, _m(T, "float64"), _m(T, "float32")),
    "matmul": lambda T: catch(T.matmul, _m(T, "float64"), _m(T, "float32")),
    "bmm": lambda T: catch(T.bmm, _m(T, "float64", (2, 2, 2)), _m(T, "float32", (2, 2, 2))),
    "linear_input_double": lambda T: catch(T.nn.functional.linear, _m(T, "float64"),
                                           _m(T, "float32"), _m(T, "float32", (2,))),
    "linear_weight_double": lambda T: catch(T.nn.functional.linear, _m(T, "float32"),
                                            _m(T, "float64"), _m(T, "float32", (2,))),
    "linear_no_bias": lambda T: catch(T.nn.functional.linear, _m(T, "float64"),
                                      _m(T, "float32")),
    "Linear_double_input": lambda T: catch(T.nn.Linear(2, 2), _m(T, "float64")),
    "Linear_double_input_1d": lambda T: catch(T.nn.Linear(2, 2), _m(T, "float64", (2,))),
    "Linear_double_input_3d": lambda T: catch(T.nn.Linear(2, 2), _m(T, "float64", (2, 2, 2))),
    "addbmm_mat1": lambda T: catch(T.addbmm, _m(T, "float32"), _m(T, "float64", (2, 2, 2)),
                                   _m(T, "float32", (2, 2, 2))),
    "addbmm_self": lambda T: catch(T.addbmm, _m(T, "float64"), _m(T, "float32", (2, 2, 2)),
                                   _m(T, "float32", (2, 2, 2))),
    "baddbmm_batch1": lambda T: catch(T.baddbmm, _m(T, "float32", (2, 2, 2)),
                                      _m(T, "float64", (2, 2, 2)), _m(T, "float32", (2, 2, 2))),
    "baddbmm_names": lambda T: catch(T.baddbmm, _m(T, "float32", (2, 2, 2)),
                                     _m(T, "int64", (2, 2)), _m(T, "float16", (2, 2, 2))),
    "baddbmm_batch2": lambda T: catch(T.baddbmm, _m(T, "float32", (2, 2, 2)),
                                      _m(T, "float32", (2, 2, 2)), _m(T, "int64", (2, 2, 2))),
    "baddbmm__batch2": lambda T: catch(_m(T, "float32", (2, 2, 2)).baddbmm_,
                                       _m(T, "float32", (2, 2, 2)), _m(T, "float64", (2, 2, 2))),
    "addmv": lambda T: catch(T.addmv, _m(T, "float32", (2,)), _m(T, "float64"),
                             _m(T, "float32", (2,))),
    "addmv_self": lambda T: catch(T.addmv, _m(T, "float64", (2,)), _m(T, "float32"),
                                  _m(T, "float32", (2,))),
    # matrix norms need a 2-tuple dim
    "norm_nuc_3d": lambda T: catch(T.norm, T.ones(2, 3, 4), "nuc"),
    "norm_nuc_3d_dims": lambda T: catch(T.norm, T.ones(2, 3, 4), "nuc", dim=(0, 1, 2)),
    "matrix_norm_one_dim": lambda T: catch(T.linalg.matrix_norm, T.ones(2, 3), "fro", dim=(0,)),
    "matrix_norm_three_dims": lambda T: catch(T.linalg.matrix_norm, T.ones(2, 3, 4), 2,
                                              dim=(0, -1, 5)),
    "matrix_norm_1d_first": lambda T: catch(T.linalg.matrix_norm, T.ones(3), "nuc",
                                            dim=(0, 1, 2)),
    "matrix_norm_int_first": lambda T: catch(T.linalg.matrix_norm, T.ones(2, 3, dtype=T.int64),
                                             "fro", dim=(0, 1, 2)),
    "linalg_norm_3d_ord": lambda T: catch(T.linalg.norm, T.ones(2, 3, 4), "nuc"),
    "linalg_norm_3d_fro": lambda T: catch(T.linalg.norm, T.ones(2, 3, 4), "fro"),
    "linalg_norm_1d_fro": lambda T: catch(T.linalg.norm, T.ones(3), "fro"),
    "linalg_norm_three_dims": lambda T: catch(T.linalg.norm, T.ones(2, 3, 4), None,
                                              dim=(0, 1, 2)),
    "linalg_norm_3d_no_ord": lambda T: T.linalg.norm(T.ones(2, 3, 4)),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products(name):
    same(PRODUCTS[name])


# ----------------------------------------------------------------------------- renorm
@pytest.mark.parametrize("p", [2, 1, 3.0, math.inf])
def test_renorm(p):
    def f(T):
        o, node, grads = _grads(T, lambda T, a: T.renorm(a, p, 1, 1.2), (3, 4))
        y = T.tensor([[1.0, 2.0], [0.1, 0.1]])
        y.renorm_(p, 0, 1.0)
        return [o, node, grads, y, T.ones(2, 2, dtype=T.float64).renorm(p, -1, 0.5)]
    same(f, rtol=1e-6)


def test_renorm_errors():
    def f(T):
        x = T.ones(2, 2)
        return [catch(T.renorm, x, 2, 0, -1.0), catch(T.renorm, x, -1, 0, 1.0),
                catch(T.renorm, T.ones(3), 2, 0, 1.0)]
    same(f)
