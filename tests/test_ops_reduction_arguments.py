"""The reductions' argument parsing vs torch's: which argument combinations each overload list
accepts, and the exact TypeErrors (with their overload listings) for those it rejects, for the
function (torch.sum(x, ...)) and the method (x.sum(...)) forms."""
import warnings

import numpy as np
import pytest

from differential import _to_plain, assert_same, catch, same

OPS = ("sum mean prod max min amax amin argmax argmin std var std_mean var_mean logsumexp "
       "count_nonzero all any cumsum cumprod softmax log_softmax").split()
METHODLESS = {"std_mean", "var_mean"}

# argument lists (as source text, T the library, x the input) given to every op
ARGS = [
    "", "0", "-1", "(0, 1)", "[0, 1]", "None", "0.5", "'a'", "x", "(0, 0)", "5", "(0, 5)", "[]",
    "()", "0, True", "0, 1", "0, None", "0, 'a'", "(0, 1), True", "(0, 1), 1", "dim=0",
    "dim=(0,)", "dim=None", "dim=0.5", "dim='a'", "0, keepdim=1", "0, keepdim=None",
    "0, keepdim='a'", "keepdim=True", "dtype=T.float64", "0, dtype=T.float64", "dtype=1",
    "0, dtype='float'", "dtype=float", "0, dtype=int", "0, True, 5", "0, True, None, 5",
    "foo=1", "0, foo=1", "0, True, foo=1", "0, dim=1", "axis=0", "0, keepdims=True",
    "[0, 1.5]", "(0, 'a')", "['a']", "[True]", "[0, True]", "True", "T.tensor(0)",
    "T.tensor([0])", "T.tensor(0.)", "np.int64(0)", "np.bool_(True)", "[0, None]",
    "0, out=T.empty(0, dtype=T.int32)", "0, out=1", "0, out=T.empty(0)", "out=T.empty(0)",
    "0, out=(T.empty(0), T.empty(0, dtype=T.int64))", "0, out=(T.empty(0),)",
    "0, out=(T.empty(0), 1)", "0, out=[T.empty(0), T.empty(0, dtype=T.int64)]",
    "unbiased=True, correction=1", "correction=1, unbiased=True", "0, True, True",
    "correction=0.5", "correction='a'", "0, unbiased=False", "0, correction=0, keepdim=True",
    "0, correction=None", "0, True, keepdim=True", "unbiased=None", "correction=T.tensor(1)",
    "other=x", "x, out=T.empty(0)", "x, 0", "0, False, T.float64", "0, T.float64",
    "0, T.float64, 3", "0, dtype=None", "input=x", "2, 0", "0, 1, 2", "keepdim=True, dim=0",
    "0, keepdim=True, dim=1", "(0, 1), keepdim=True, foo=2"]


def _observe(T, code):
    x = T.tensor([[1., 2, 3, 4], [0, 5, -1, 2], [3, 3, 1, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # (out= resizes warn: not what is compared here)
        return _to_plain(catch(lambda: eval(code, {"T": T, "x": x, "np": np})))


@pytest.mark.parametrize("form", ["function", "method"])
@pytest.mark.parametrize("op", OPS)
def test_arguments_as_torch_reads_them(op, form):
    import torch
    import ember
    if form == "method" and op in METHODLESS:
        assert not hasattr(torch.ones(1), op) and not hasattr(ember.ones(1), op)
        return
    wrong = []
    for a in ARGS:
        code = f"T.{op}(x{', ' if a else ''}{a})" if form == "function" else f"x.{op}({a})"
        expected, actual = _observe(torch, code), _observe(ember, code)
        try:
            assert_same(expected, actual)
        except AssertionError:
            wrong.append(f"{code}\n  torch: {expected}\n  ember: {actual}")
    assert not wrong, "\n".join(wrong)


# the differences first reported, one by one
@pytest.mark.parametrize("call", [
    lambda T, x: T.sum(x, 0, 1),
    lambda T, x: T.max(x, (0, 1)),
    lambda T, x: x.max((0, 1)),
    lambda T, x: T.var(x, unbiased=True, correction=1),
    lambda T, x: T.prod(x, (0, 1)),
    lambda T, x: x.prod((0, 1)),
    lambda T, x: T.sum(x, [0, 1.5]),
    lambda T, x: T.amax(x, ["a"]),
    lambda T, x: T.cumsum(x),
    lambda T, x: T.cumsum(),
    lambda T, x: T.count_nonzero(x, 0.5),
    lambda T, x: x.sum(foo=1),
])
def test_reported_cases(call):
    same(lambda T: catch(call, T, T.ones(3, 4)))


def test_the_methods_are_bound():
    # x.sum is the method form (its own messages), Tensor.sum(x, ...) the function called with x
    same(lambda T: [catch(T.ones(2, 3).sum, 0, 1), T.Tensor.sum(T.ones(2, 3), 1),
                    T.ones(2, 3).sum.__self__.shape, T.sum.__name__, T.ones(2).sum.__name__])


def test_scan_with_out_runs_in_out_dtype():
    # with out= and no dtype=, the scan converts the input to out's dtype first
    same(lambda T: [f(T.tensor([0.5, 0.5, 2.5, -1.5]), 0, out=T.empty(0, dtype=T.int32))
                    for f in (T.cumsum, T.cumprod)])


def test_count_nonzero_method_takes_dims_as_arguments():
    same(lambda T: [catch(T.ones(2, 3, 4).count_nonzero, *a) for a in
                    [(0, 1), (0, True), (0, None), (0, 2, 2), ((0, 1), 2)]])


def test_calls_read_again_by_their_types_give_the_same_answers():
    # the parser remembers how it read a call by its arguments' types; a call with the same
    # types but other contents (a tensor, a list) must still be read afresh
    def scenario(T):
        x = T.arange(12.0).view(3, 4)
        r = []
        for _ in range(2):
            r += [x.sum(1), T.sum(x, dim=0, keepdim=True), x.sum(dtype=T.float64),
                  x.max(0), x.max(x), x.max(1, True), T.max(x, dim=-1, keepdim=False),
                  x.sum([0, 1]), catch(x.sum, [0.5]), x.sum(T.tensor(1)),
                  catch(x.sum, T.tensor(1.0)), x.sum((1,)), catch(x.sum, None),
                  x.var(0, unbiased=False), x.var(0, correction=0), x.amax(None),
                  catch(x.sum, 1, 2), x.sum(axis=1)]
        return r
    same(scenario)
