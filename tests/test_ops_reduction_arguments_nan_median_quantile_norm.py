"""The argument parsing of the remaining reductions (nansum, nanmean, aminmax, median,
nanmedian, mode, quantile, nanquantile, cummax, cummin, logcumsumexp) and of norm (a Python
function in torch, over linalg_vector_norm / linalg_matrix_norm) vs torch's: which argument
combinations are accepted, the values, and the exact errors, as function and as method."""
import pytest

from differential import assert_same, catch, same
from test_ops_reduction_arguments import ARGS, _observe

OPS = "nansum nanmean aminmax median nanmedian mode cummax cummin logcumsumexp norm".split()

# quantile's q comes first; these are given to quantile and nanquantile
QUANTILE_ARGS = [
    "0.5", "0.5, 0", "0.5, 0, True", "0.5, 0, 1", "0.5, None, True", "0.5, dim=0",
    "0.5, axis=1", "0.5, 1, keepdims=True", "q=0.5", "q=0.5, dim=-1",
    "0.5, interpolation='lower'", "0.5, 0, interpolation='nearest'", "0.5, interpolation=1",
    "0.5, interpolation=None", "0.5, 0, True, 'lower'", "T.tensor([0.25, 0.5])",
    "T.tensor([0.25, 0.5]), 1", "T.tensor(0.5), 1, True", "2", "1", "True", "np.float32(0.5)",
    "np.float32(1.1)", "1.5", "-0.5", "1.23456789", "1e20", "[0.5]", "(0.5,)", "0.5, 0.5",
    "0.5, 'a'", "0.5, [0]", "0.5, (0,)", "0.5, T.tensor(1)", "0.5, np.int64(1)",
    "0.5, out=T.empty(0)", "0.5, 0, out=T.empty(0, dtype=T.float64)", "0.5, 0, out=1",
    "0.5, foo=1", "0.5, 0, dim=1", "0.5, interpolation='zz'", "1+2j", "np.complex64(1)",
    "T.tensor(0.5, requires_grad=True)", "0.5, dim=None", "0.5, keepdim=None",
    "0.5, None, None", "T.tensor([0.25, 0.5], dtype=T.float64)", "T.tensor(1.5)",
    "T.tensor([2.])", "T.tensor([[0.5]])", "None", "q=None", "2, interpolation='zz'",
    "T.tensor([2.]), 5", "T.tensor([2.]), interpolation='zz'", "0.5, 5",
    "0.5, 5, out=T.empty(0, dtype=T.int64)", "T.tensor([[2]]), out=T.empty(0, dtype=T.int32)",
    "T.tensor([.2], dtype=T.float64), out=T.empty(0, dtype=T.int32)", ""]

# p first (int, float, str, inf, 'nuc', 'fro', None), then dim, keepdim, out, dtype
NORM_ARGS = [
    "'nuc'", "'nuc', 0", "'nuc', 'a'", "'zz'", "'fro', (0,1,1)", "'fro', (0,1,1), True",
    "'nuc', (0,1), 1", "'nuc', dtype=1", "'nuc', dtype=T.float64", "'nuc', keepdim=True",
    "'fro', [0, 1]", "'fro', 1.5", "'fro', [1.5]", "None", "None, 0", "float('inf'), 0",
    "float('-inf'), 1, True", "'2'", "2, T.tensor(0)", "'fro', T.tensor(0)",
    "'fro', T.tensor([0, 1])", "2, T.tensor([0, 1])", "2, 0, False, T.empty(0)",
    "2, 0, False, None, T.float64", "'nuc', out=T.empty(0)",
    "'fro', out=T.empty(0, dtype=T.float64)", "'nuc', out=T.empty(0, dtype=T.float64)",
    "1+2j", "[1]", "1, 0, True, T.float64, 5", "1, 0, True, T.float64",
    "'fro', 0, dtype=T.int64", "p=1", "'nuc', None, out=1", "'nuc', [0, 1, 2]", "-1, []",
    "'fro', []", "'nuc', []", "'fro', (0,1,1), dtype=1", "p='fro', dim=(0,0,1)",
    "'fro', None, True", "3", "0.5, (0, 1)", "0, 1", "-2, 0, True",
    "1, -1, keepdim=True, dtype=T.float64", "p=2, dim=[0], keepdim=True", "np.float64(3)",
    "np.int64(1)", "T.tensor(3.)", "T.tensor(3., requires_grad=True)", "True", "2, True",
    "2, [True]", "2, (0, 'a')", "2, 0, zzz=1", "zzz=1", "2, 0, True, T.empty(0), T.float64, 1",
    "1, 2, 3, 4, 5, 6, 7", "2, 0, p=1", "'nuc', 0, out=T.empty(0)",
    "'fro', 0, out=T.empty(0, dtype=T.float64)", "2, 0, out=T.empty(0, dtype=T.int64)",
    "2, dtype=T.float64, out=T.empty(0, dtype=T.float64)", "'nuc', (0, 0)", "'nuc', (0, 5)",
    "2, (0, 5)", "2, 5", "2, (0, 0)", "-1, (0, 0)", "input=x", "'nuc', (1, 0), True",
    "1, dim=None", "2, dim=0, keepdim=None", "'fro', dtype=T.float16", "'nuc', dtype=T.int32",
    "2, dtype=T.complex64"]


def _compare(op, form, arg_lists):
    import torch
    import ember
    wrong = []
    for a in arg_lists:
        code = f"T.{op}(x{', ' if a else ''}{a})" if form == "function" else f"x.{op}({a})"
        expected, actual = _observe(torch, code), _observe(ember, code)
        try:
            assert_same(expected, actual)
        except AssertionError:
            wrong.append(f"{code}\n  torch: {expected}\n  ember: {actual}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("form", ["function", "method"])
@pytest.mark.parametrize("op", OPS)
def test_arguments_as_torch_reads_them(op, form):
    _compare(op, form, ARGS + (NORM_ARGS if op == "norm" else []))


@pytest.mark.parametrize("form", ["function", "method"])
@pytest.mark.parametrize("op", ["quantile", "nanquantile"])
def test_quantile_arguments(op, form):
    _compare(op, form, QUANTILE_ARGS)


# the differences first reported, one by one
@pytest.mark.parametrize("call", [
    lambda T, x: T.nansum(x, 0, 1),
    lambda T, x: x.nanmean(0, 1),
    lambda T, x: T.aminmax(x, 0),
    lambda T, x: x.aminmax(dim=0.5),
    lambda T, x: T.median(x, None),
    lambda T, x: x.median(0, 1),
    lambda T, x: T.median(x, out=T.empty(0)),
    lambda T, x: x.mode(None),
    lambda T, x: T.mode(x, 0, 1),
    lambda T, x: T.cummax(x),
    lambda T, x: T.cummin(x, 0, 1),
    lambda T, x: x.logcumsumexp(dim=None),
    lambda T, x: T.quantile(x, "a"),
    lambda T, x: x.norm(0, out=T.empty(0)),
    lambda T, x: T.norm(x, 1, 2, 3, 4, 5, 6),
    lambda T, x: x.norm(zzz=1),
])
def test_reported_cases(call):
    same(lambda T: catch(call, T, T.ones(3, 4)))


# out=: each op's own dtype rule and message, and the order of its checks
@pytest.mark.parametrize("code", [
    "T.aminmax(x, dim=0, out=(T.empty(0), T.empty(0)))",
    "T.aminmax(x, dim=0, out=(T.empty(0), T.empty(0, dtype=T.int64)))",
    "T.aminmax(x, dim=0, out=(T.empty(0, dtype=T.int32), T.empty(0)))",
    "T.aminmax(x.cfloat(), dim=0, out=(T.empty(0, dtype=T.int32), T.empty(0)))",
    "T.aminmax(x, dim=5, out=(T.empty(0, dtype=T.int32), T.empty(0)))",
    "T.aminmax(x, out=[T.empty(2), T.empty(2)])",
    "T.median(x, 0, out=(T.empty(0), T.empty(0, dtype=T.int64)))",
    "T.median(x, 0, True, out=(T.empty(5), T.empty(5, dtype=T.int64)))",
    "T.nanmedian(x, 0, out=(T.empty(0), T.empty(0, dtype=T.int64)))",
    "T.median(x, 0, out=(T.empty(0, dtype=T.int32), T.empty(0, dtype=T.int32)))",
    "T.nanmedian(x, 0, out=(T.empty(0), T.empty(0, dtype=T.float64)))",
    "T.median(x.long(), 0, out=(T.empty(0), T.empty(0, dtype=T.int64)))",
    "T.median(x, 0, out=(T.empty(0, dtype=T.bool), T.empty(0, dtype=T.int64)))",
    "T.median(x, 0, out=(T.empty(0, dtype=T.bfloat16), T.empty(0, dtype=T.int64)))",
    "T.median(x, 0, out=(T.empty(0, dtype=T.complex128), T.empty(0, dtype=T.int64)))",
    "T.median(x, 0, out=(T.empty(0, dtype=T.float16), T.empty(0, dtype=T.int64)))",
    "T.median(x.bool(), 0, out=(T.empty(0, dtype=T.bool), T.empty(0, dtype=T.int64)))",
    "T.median(x.cfloat(), 0, out=(T.empty(0, dtype=T.cfloat), T.empty(0, dtype=T.int64)))",
    "T.median(x, 5, out=(T.empty(0, dtype=T.int32), T.empty(0, dtype=T.int32)))",
    "T.median(x[:, :0], 1, out=(T.empty(0, dtype=T.int32), T.empty(0, dtype=T.int32)))",
    "T.median(x.cfloat(), 5)", "T.median(x.bool(), 5)", "T.median(x.cfloat())",
    "T.mode(x, 0, out=(T.empty(0), T.empty(0, dtype=T.int64)))",
    "T.mode(x, 0, out=(T.empty(0, dtype=T.int32), T.empty(0, dtype=T.int32)))",
    "T.mode(x, 0, out=(T.empty(0), T.empty(0, dtype=T.int32)))",
    "T.mode(x, 5, out=(T.empty(0, dtype=T.int32), T.empty(0, dtype=T.int32)))",
    "T.mode(x.cfloat(), 5)", "T.mode(x.cfloat()[:, :0], 1)",
    "T.cummax(x, 0, out=(T.empty(0), T.empty(0, dtype=T.int64)))",
    "T.cummin(x, 1, out=[T.empty(0), T.empty(0, dtype=T.int64)])",
    "T.cummax(x, 0, out=(T.empty(0, dtype=T.float64), T.empty(0, dtype=T.int64)))",
    "T.cummin(x, 0, out=(T.empty(0), T.empty(0, dtype=T.int32)))",
    "T.cummax(x, 5, out=(T.empty(0, dtype=T.int32), T.empty(0, dtype=T.int32)))",
    "T.cummax(x.cfloat(), 5)", "T.cummax(x.cfloat()[:, :0], 1)",
    "T.cummax(x.cfloat(), 1, out=(T.empty(0, dtype=T.cfloat), T.empty(0, dtype=T.int64)))",
    "T.logcumsumexp(x, 0, out=T.empty(0))",
    "T.logcumsumexp(x, 0, out=T.empty(0, dtype=T.float64))",
    "T.logcumsumexp(x.long(), 0, out=T.empty(0))",
    "T.logcumsumexp(x.long(), 0, out=T.empty(0, dtype=T.int64))",
    "T.logcumsumexp(x.cfloat(), 0, out=T.empty(0))", "T.logcumsumexp(x.long(), 5)",
    "T.nansum(x, 0, out=T.empty(0, dtype=T.float64))",
    "T.nanmean(x, 0, out=T.empty(0, dtype=T.float64))",
    "T.nansum(x, 0, out=T.empty(0, dtype=T.int64))",
    "T.nanquantile(x.long(), 0.5)", "T.nanquantile(x[:0], 0.5)",
    "T.nanquantile(x, 0.5, out=T.empty(0, dtype=T.int64))",
    "T.quantile(x, 0.5, 0, out=T.empty(0))", "T.quantile(x.long(), 2)",
    "T.norm(x.long(), 1+2j)", "T.norm(x.long(), 'nuc')",
    "T.norm(x.double(), 'nuc', out=T.empty(0))",
    "T.norm(x.requires_grad_(), 2, out=T.empty(0))",
])
def test_out_and_check_order(code):
    import torch
    import ember
    assert_same(_observe(torch, code), _observe(ember, code))


def test_calls_read_again_by_their_types_give_the_same_answers():
    # the parser remembers a call's reading by its arguments' types: the same types with
    # other values (an int dim, a float q, a str interpolation) must give their own results
    def scenario(T):
        x = T.tensor([[1., 2, 3, 4], [0, 5, -1, 2], [3, 3, 1, 0]])
        r = []
        for dim in (0, 1, -1, 0):
            r += [x.nansum(dim), T.nanmean(x, dim, True), x.aminmax(dim=dim), x.median(dim),
                  T.nanmedian(x, dim), x.mode(dim), x.cummax(dim), T.cummin(x, dim=dim),
                  x.logcumsumexp(dim), x.norm(2, dim), T.norm(x, 1.5, dim, True),
                  catch(x.median, dim, 1)]
        for q, how in ((0.25, "lower"), (0.5, "linear"), (0.75, "nearest"), (1.0, "higher"),
                       (0.3, "midpoint")):
            r += [x.quantile(q, 1, interpolation=how), T.nanquantile(x, q, interpolation=how),
                  x.norm(q * 4)]
        return r
    same(scenario)


def test_norm_values():
    # p as int, float, inf, str, None over dims given as int, tuple, list or None
    def scenario(T):
        x = T.tensor([[1., -2, 3, 4], [0, 5, -1, 2], [3, 3, 1, 0]], dtype=T.float64)
        r = []
        for p in (0, 1, 2, 3, 0.5, -1, float("inf"), float("-inf"), "fro", None):
            for dim in (None, 0, -1, (0, 1), [1]):
                r.append(T.norm(x, p, dim))
                r.append(x.norm(p, dim, True))
        r += [T.norm(x, "nuc"), x.norm("nuc", (1, 0), True), catch(T.norm, x, dtype=T.float32),
              T.norm(x.float(), 2, 1, dtype=T.float64), T.norm(x.cfloat(), 2),
              T.norm(x, 2, 0, False, T.empty(0, dtype=T.float64))]
        return r
    same(scenario)


def test_norm_is_bound_as_a_method():
    same(lambda T: [T.Tensor.norm(T.ones(2, 3), 1), T.ones(2, 3).norm.__self__.shape,
                    T.norm.__name__, T.ones(2).norm.__name__])


@pytest.mark.parametrize("case", range(11))
def test_linalg_vector_norm_reads_its_arguments_as_torch(case):
    def scenario(T):
        x = T.tensor([1.0, -2.0, 2.0])
        call = [lambda: T.linalg.vector_norm(x, True), lambda: T.linalg.vector_norm(x, keepdim=1),
                lambda: T.linalg.vector_norm(x, dtype=float),
                lambda: T.linalg.vector_norm(x, 2, 0, True),
                lambda: T.linalg.vector_norm(x, "fro"), lambda: T.linalg.vector_norm(x, zz=1),
                lambda: T.linalg.vector_norm(x, 2, dim=(0,)), lambda: T.linalg.vector_norm(x, 3j),
                lambda: T.linalg.vector_norm(input=x, ord=1),
                lambda: T.linalg.vector_norm(x, float("inf"), out=T.empty(())),
                lambda: T.linalg.vector_norm(x, 2, 0, True, None)][case]
        return catch(call), catch(call)     # (the second call is read from the parser's memory)
    same(scenario)
