"""The batch-norm building blocks at ember's top level (batch_norm_stats, _elemt,
_gather_stats[_with_counts], _backward_reduce, _backward_elemt, _update_stats).

torch runs batch_norm_update_stats on the CPU, so it is compared directly; torch runs the others
on CUDA only, so they are checked against what they compose to in torch on the CPU: two
"processes" (halves of a batch) computing their statistics, merging them, normalizing and
back-propagating must give F.batch_norm's training output, running statistics and gradients.
"""
import numpy as np
import pytest
import torch

import ember
from differential import same


def _data(T, shape=(6, 3, 4), seed=0):
    rng = np.random.default_rng(seed)
    return T.tensor(rng.standard_normal(shape) * 2 + 1)


@pytest.mark.parametrize("shape", [(6, 3), (6, 3, 4), (2, 3, 2, 5)])
@pytest.mark.parametrize("running", [True, False])
def test_batch_norm_update_stats(shape, running):
    def f(T):
        x = _data(T, shape)
        rm = T.zeros(3, dtype=T.float64) if running else None
        rv = T.ones(3, dtype=T.float64) if running else None
        mean, var = T.batch_norm_update_stats(x, rm, rv, 0.1)
        return [mean, var, rm, rv, mean.requires_grad]
    same(f, rtol=1e-10, atol=1e-12)


def test_batch_norm_update_stats_half_and_float():
    def f(T):
        x = _data(T).float()
        return [T.batch_norm_update_stats(x, None, None, 0.1),
                T.batch_norm_update_stats(x.half(), None, None, 0.1)]
    same(f, rtol=2e-3, atol=2e-3)


def _torch_reference(counts):
    """F.batch_norm in training on the whole batch: output, running stats, gradients."""
    x = _data(torch).requires_grad_()
    w = torch.tensor([0.5, 2.0, -1.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([0.1, 0.0, 3.0], dtype=torch.float64, requires_grad=True)
    rm, rv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    out = torch.nn.functional.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5)
    g = _data(torch, seed=1)
    out.backward(g)
    return [t.detach().numpy() for t in (out, rm, rv, x.grad, w.grad, b.grad)]


def _ember_sync_batch_norm(counts, with_counts):
    """SyncBatchNorm's recipe over the batch split into processes of `counts` samples."""
    E = ember
    x = _data(E)
    w = E.tensor([0.5, 2.0, -1.0], dtype=E.float64)
    b = E.tensor([0.1, 0.0, 3.0], dtype=E.float64)
    g = _data(E, seed=1)
    rm, rv = E.zeros(3, dtype=E.float64), E.ones(3, dtype=E.float64)
    parts = x.split(counts, 0)
    grads = g.split(counts, 0)
    stats = [E.batch_norm_stats(p, 1e-5) for p in parts]
    means = E.stack([s[0] for s in stats])
    invstds = E.stack([s[1] for s in stats])
    per_channel = [c * x.shape[2] for c in counts]
    if with_counts:
        mean, invstd = E.batch_norm_gather_stats_with_counts(
            x, means, invstds, rm, rv, 0.1, 1e-5, E.tensor(per_channel, dtype=E.float64))
    else:
        mean, invstd = E.batch_norm_gather_stats(x, means, invstds, rm, rv, 0.1, 1e-5,
                                                 per_channel[0])
    out = E.cat([E.batch_norm_elemt(p, w, b, mean, invstd, 1e-5) for p in parts])
    reduced = [E.batch_norm_backward_reduce(gp, p, mean, invstd, w, True, True, True)
               for gp, p in zip(grads, parts)]
    sum_dy = sum(r[0] for r in reduced)
    sum_dy_xmu = sum(r[1] for r in reduced)
    grad_w = sum(r[2] for r in reduced)
    grad_b = sum(r[3] for r in reduced)
    count = E.tensor(per_channel, dtype=E.int32)
    grad_x = E.cat([E.batch_norm_backward_elemt(gp, p, mean, invstd, w, sum_dy, sum_dy_xmu,
                                                count) for gp, p in zip(grads, parts)])
    return [t._data for t in (out, rm, rv, grad_x, grad_w, grad_b)]


@pytest.mark.parametrize("counts,with_counts", [([3, 3], False), ([3, 3], True),
                                                 ([2, 4], True), ([1, 2, 3], True)])
def test_sync_batch_norm_recipe_matches_batch_norm(counts, with_counts):
    expected = _torch_reference(counts)
    actual = _ember_sync_batch_norm(counts, with_counts)
    for name, e, a in zip(["out", "running_mean", "running_var", "grad_x", "grad_w", "grad_b"],
                          expected, actual):
        np.testing.assert_allclose(a, e, rtol=1e-9, atol=1e-11, err_msg=name)


def test_batch_norm_stats_and_elemt_match_torch_math():
    def f(T):
        x = _data(T, (4, 3, 2, 2))
        mean, var = x.mean((0, 2, 3)), x.var((0, 2, 3), unbiased=False)
        return [mean, 1 / (var + 1e-3).sqrt()]
    expected = same(f)          # (torch and ember agree on the definition)
    mean, invstd = ember.batch_norm_stats(_data(ember, (4, 3, 2, 2)), 1e-3)
    np.testing.assert_allclose(mean._data, expected[0][1], rtol=1e-12)
    np.testing.assert_allclose(invstd._data, expected[1][1], rtol=1e-12)
    x = _data(ember, (4, 3, 2, 2))
    y = ember.batch_norm_elemt(x, None, None, mean, invstd, 1e-3)
    ref = torch.nn.functional.batch_norm(_data(torch, (4, 3, 2, 2)), None, None, None, None,
                                         True, 0.1, 1e-3)
    np.testing.assert_allclose(y._data, ref.numpy(), rtol=1e-10, atol=1e-12)


def test_backward_reduce_leaves_out_what_is_not_asked():
    x = _data(ember)
    mean, invstd = ember.batch_norm_stats(x, 1e-5)
    w = ember.ones(3, dtype=ember.float64)
    r = ember.batch_norm_backward_reduce(x, x, mean, invstd, w, False, True, False)
    assert r[0] is None and r[1] is None and r[3] is None
    assert r[2].shape == (3,) and r[2].dtype is ember.float64


def test_half_input_keeps_float32_statistics():
    x = _data(ember).half()
    mean, invstd = ember.batch_norm_stats(x, 1e-5)
    assert mean.dtype is ember.float32 and invstd.dtype is ember.float32
    assert ember.batch_norm_elemt(x, None, None, mean, invstd, 1e-5).dtype is ember.float16
    ref = torch.nn.functional.batch_norm(_data(torch).half().float(), None, None, None, None,
                                         True, 0.1, 1e-5)
    y = ember.batch_norm_elemt(x, None, None, mean, invstd, 1e-5)
    np.testing.assert_allclose(y._data.astype(np.float32), ref.numpy(), rtol=2e-3, atol=2e-3)
