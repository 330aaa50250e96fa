"""torch.masked's reductions and normalizations (on plain tensors with a mask) against
torch: fills, fully masked outputs, dims, keepdim, dtype, broadcast masks, errors, and
gradients through the unmasked elements."""
import importlib
import warnings

import pytest
import torch
import torch.masked       # noqa: F401

from differential import catch, same


def _M(T):
    return importlib.import_module(T.__name__ + ".masked")


def _data(T):
    x = T.tensor([[1., -2., 3., 0.5], [4., 5., -6., 2.], [0., 1., 1., -1.]])
    m = T.tensor([[True, False, True, True], [False, False, False, False],
                  [True, True, False, True]])
    return x, m


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


CASES = [
    ("sum", (1,), {}), ("sum", (), {}), ("sum", ((0, 1),), {}), ("sum", (0,), {"keepdim": True}),
    ("sum", (1,), {"dtype": "float64"}), ("prod", (1,), {}), ("prod", ((0, 1),), {}),
    ("amax", (1,), {}), ("amin", (0,), {}), ("amax", ((0, 1),), {}), ("amin", (), {}),
    ("argmax", (1,), {}), ("argmin", (1,), {"keepdim": True}), ("argmax", (), {}),
    ("mean", (1,), {}), ("mean", (), {}), ("mean", (0,), {"keepdim": True}),
    ("cumsum", (1,), {}), ("cumprod", (0,), {}), ("softmax", (1,), {}),
    ("log_softmax", (1,), {}), ("softmin", (0,), {}), ("logsumexp", (1,), {}),
    ("logsumexp", ((0, 1),), {}), ("median", (), {}), ("median", (0,), {"keepdim": True}),
    ("var", (1,), {}), ("var", (1,), {"unbiased": False}), ("var", (), {"correction": 0}),
    ("std", (0,), {}), ("std", (1,), {"keepdim": True}),
    ("norm", (2.0, 1), {}), ("norm", (float("inf"), 1), {}), ("norm", (float("-inf"), 1), {}),
    ("norm", (0, 1), {}), ("norm", (1.0,), {}), ("normalize", (2.0, 1), {}),
    ("normalize", (1.0, 0), {"eps": 0.5}),
]


@pytest.mark.parametrize("name,args,kwargs", CASES)
@pytest.mark.parametrize("masked", [True, False])
def test_masked_op(name, args, kwargs, masked):
    def scenario(T):
        x, m = _data(T)
        kw = dict(kwargs)
        if "dtype" in kw:
            kw["dtype"] = getattr(T, kw["dtype"])
        return _quiet(lambda: getattr(_M(T), name)(x, *args, mask=m if masked else None,
                                                     **kw))
    same(scenario)


@pytest.mark.parametrize("name", ["sum", "amax", "amin", "prod", "argmax"])
def test_masked_integer_and_bool_inputs(name):
    def scenario(T):
        x, m = _data(T)
        return [_quiet(lambda: getattr(_M(T), name)(x.int(), 1, mask=m)),
                _quiet(lambda: getattr(_M(T), name)((x > 0).long(), 0, mask=m))]
    same(scenario)


def test_masked_sum_of_bools_and_broadcast_masks():
    def scenario(T):
        x, m = _data(T)
        M = _M(T)
        return [_quiet(lambda: M.sum(x > 0, 1, mask=m)),
                _quiet(lambda: M.sum(x, 1, mask=T.tensor([True, False, True, True]))),
                _quiet(lambda: M.amax(x, 0, mask=m.int())),
                _quiet(lambda: catch(M.sum, x, 1, mask=T.ones(4, 3, dtype=T.bool))[:2]),
                _quiet(lambda: catch(M.sum, x, 5, mask=m))]
    same(scenario)


def test_masked_logaddexp():
    def scenario(T):
        x, m = _data(T)
        M = _M(T)
        return [_quiet(lambda: M.logaddexp(x, x * 2, input_mask=m, other_mask=~m)),
                _quiet(lambda: M.logaddexp(x, x * 2)),
                _quiet(lambda: M.logaddexp(x, x, input_mask=m, other_mask=m))]
    same(scenario)


@pytest.mark.parametrize("name,args", [("sum", (1,)), ("mean", (1,)), ("softmax", (1,)),
                                       ("amax", (1,)), ("var", (1,)), ("norm", (2.0, 1)),
                                       ("logsumexp", (1,))])
def test_masked_gradients(name, args):
    def scenario(T):
        x, m = _data(T)
        m = m.clone()
        m[1, 0] = True          # (no row without a selected element: finite gradients)
        x = x.clone().requires_grad_()
        out = _quiet(lambda: getattr(_M(T), name)(x, *args, mask=m))
        weights = T.arange(1.0, 1.0 + out.numel()).view(out.shape)
        (out * weights).sum().backward()
        return out, x.grad
    same(scenario)
