"""The CNN and LSTM kernels that share their work out over ember's threads (ember/_nn_kernels.py:
convolution chunks, max pooling, the fused LSTM layer, Adadelta's blocks) give the same bits
with 2 threads as with 1, and agree with torch (values and gradients)."""
import numpy as np
import pytest
import torch

import ember
from ember import _nn_kernels, _parallel


@pytest.fixture
def threads():
    """Runs a function at 1 and at 2 threads; restores the thread count."""
    before = ember.get_num_threads()

    def at(n, fn):
        ember.set_num_threads(n)
        return fn()
    yield at
    ember.set_num_threads(before)


def _same_bits(one, two):
    assert len(one) == len(two)
    for a, b in zip(one, two):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def _close_to_scale(mine, ref, tol):
    """Equal up to tol times the reference's largest magnitude (sums in another order)."""
    np.testing.assert_allclose(mine, ref, rtol=tol, atol=tol * float(np.abs(ref).max()))


def _rand(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _conv_run(T, x, w, b, g, **kw):
    xt, wt, bt = (T.tensor(a, requires_grad=True) for a in (x, w, b))
    y = T.nn.functional.conv2d(xt, wt, bt, **kw)
    y.backward(T.tensor(g))
    return [y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()]


@pytest.mark.parametrize("kw", [{}, {"padding": 1}, {"stride": 2}, {"groups": 2}])
def test_conv2d_same_bits_at_two_threads_and_torch_values(threads, kw):
    rng = np.random.default_rng(0)
    # 40 samples of 16x20x20: several chunks of the batch, enough work to use 2 threads
    x, w, b = _rand(rng, (40, 16, 20, 20)), _rand(rng, (24, 16 // kw.get("groups", 1), 3, 3),
                                                   0.1), _rand(rng, 24)
    out = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), **kw).shape
    g = _rand(rng, tuple(out))
    one = threads(1, lambda: _conv_run(ember, x, w, b, g, **kw))
    two = threads(2, lambda: _conv_run(ember, x, w, b, g, **kw))
    _same_bits(one, two)
    for mine, ref in zip(one, _conv_run(torch, x, w, b, g, **kw)):
        # float32 sums of up to 40*20*20 terms in another order than torch's: a few ulps of
        # the largest value
        _close_to_scale(mine, ref, 1e-5)


def test_conv2d_inf_input_does_not_leak_into_other_channels(threads):
    # the im2col's wide windows read past each channel's image: an inf at the start of a
    # channel must not turn the weight gradient of the previous channel into nan
    rng = np.random.default_rng(1)
    x, w, b = _rand(rng, (4, 3, 9, 9)), _rand(rng, (5, 3, 3, 3)), _rand(rng, 5)
    x[:, 1, 0, :2] = np.inf
    g = _rand(rng, (4, 5, 7, 7))
    mine = threads(2, lambda: _conv_run(ember, x, w, b, g))
    ref = _conv_run(torch, x, w, b, g)
    for a, r in zip(mine, ref):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(r))
        np.testing.assert_array_equal(np.isinf(a), np.isinf(r))


def _pool_run(T, x, g):
    xt = T.tensor(x, requires_grad=True)
    y, idx = T.nn.functional.max_pool2d(xt, 2, return_indices=True)
    y.backward(T.tensor(g))
    return [y.detach().numpy(), idx.numpy(), xt.grad.numpy()]


def test_max_pool2d_same_bits_at_two_threads_and_torch_values(threads):
    rng = np.random.default_rng(2)
    x = _rand(rng, (32, 16, 24, 24))
    x[0, 0, :2, :2] = 1.0                   # a tie: the first maximum wins
    x[3, 2, 4, 5] = np.nan                  # a NaN window
    g = _rand(rng, (32, 16, 12, 12))
    one = threads(1, lambda: _pool_run(ember, x, g))
    two = threads(2, lambda: _pool_run(ember, x, g))
    _same_bits(one, two)
    for mine, ref in zip(one, _pool_run(torch, x, g)):
        np.testing.assert_array_equal(mine, ref)


def test_pooling_splits_the_batch_only_with_threads_and_work(threads):
    size = _parallel.PARALLEL_FROM * 4
    assert threads(1, lambda: _nn_kernels.sample_split(64, size)) is None
    assert threads(2, lambda: _nn_kernels.sample_split(64, size)) == 8
    assert threads(2, lambda: _nn_kernels.sample_split(1, size)) is None
    assert threads(2, lambda: _nn_kernels.sample_split(64, _parallel.PARALLEL_FROM - 1)) is None


def _lstm_run(T, x, h0, c0, g):
    T.manual_seed(0)
    m = T.nn.LSTM(48, 40, 2)
    xt = T.tensor(x, requires_grad=True)
    out, (hn, cn) = m(xt, (T.tensor(h0), T.tensor(c0)))
    (out * T.tensor(g)).sum().backward()
    return [out.detach().numpy(), hn.detach().numpy(), cn.detach().numpy(), xt.grad.numpy()] + \
        [p.grad.numpy() for p in m.parameters()]


def test_lstm_same_bits_at_two_threads_and_torch_values(threads):
    rng = np.random.default_rng(3)
    # 80 steps x 30 batch: the backward's factors (80*30 rows of 6*40) run in several blocks
    x, g = _rand(rng, (80, 30, 48)), _rand(rng, (80, 30, 40))
    h0, c0 = _rand(rng, (2, 30, 40)), _rand(rng, (2, 30, 40))
    one = threads(1, lambda: _lstm_run(ember, x, h0, c0, g))
    two = threads(2, lambda: _lstm_run(ember, x, h0, c0, g))
    _same_bits(one, two)
    for mine, ref in zip(one, _lstm_run(torch, x, h0, c0, g)):
        _close_to_scale(mine, ref, 1e-5)


def _adadelta_run(T, shapes):
    rng = np.random.default_rng(4)
    params = [T.tensor(_rand(rng, s), requires_grad=True) for s in shapes]
    opt = T.optim.Adadelta(params, lr=1.0)
    for step in range(3):
        for p in params:
            p.grad = T.tensor(_rand(rng, tuple(p.shape), 0.1))
        opt.step()
    return [p.detach().numpy() for p in params]


def test_adadelta_same_bits_at_two_threads_and_torch_values(threads):
    shapes = [(300, 700), (700,), (64, 9)]          # over PARALLEL_FROM elements in all
    one = threads(1, lambda: _adadelta_run(ember, shapes))
    two = threads(2, lambda: _adadelta_run(ember, shapes))
    _same_bits(one, two)
    for mine, ref in zip(one, _adadelta_run(torch, shapes)):
        np.testing.assert_allclose(mine, ref, rtol=1e-6, atol=1e-7)


def test_parallel_rows_visits_every_row_once(threads):
    rows, row_size = 5000, 130
    seen = np.zeros(rows, np.int64)

    def body(r0, r1):
        seen[r0:r1] += 1
    threads(2, lambda: _nn_kernels.parallel_rows(body, rows, row_size))
    assert (seen == 1).all()
    seen[:] = 0
    threads(1, lambda: _nn_kernels.parallel_rows(body, rows, row_size))
    assert (seen == 1).all()


def test_parallel_samples_keeps_blas_on_one_thread_while_threads_run(threads):
    from ember import _threads
    pools = _threads._blas_pools()
    if not pools:
        pytest.skip("threadpoolctl cannot see NumPy's BLAS here")
    seen = []

    def body(s0, s1):
        seen.append((s0, s1, max(get() for get, _ in pools)))
    # 4 chunks of 8 samples, each sample PARALLEL_FROM elements of work
    threads(2, lambda: _nn_kernels.parallel_samples(body, 32, _parallel.PARALLEL_FROM, 8))
    assert sorted((a, b) for a, b, _ in seen) == [(0, 8), (8, 16), (16, 24), (24, 32)]
    assert all(n == 1 for _, _, n in seen)


def test_parallel_samples_with_fewer_chunks_than_threads_runs_them_in_turn(threads):
    # a single large sample (or two chunks on more threads): BLAS keeps its own threads
    from ember import _threads
    pools = _threads._blas_pools()
    seen = []

    def body(s0, s1):
        seen.append((s0, s1, max((get() for get, _ in pools), default=None)))
    threads(2, lambda: _nn_kernels.parallel_samples(body, 1, _parallel.PARALLEL_FROM * 4, 1))
    assert seen == [(0, 1, 2 if pools else None)]


@pytest.mark.parametrize("shape", [(64, 32, 26, 26), (3, 5)])     # threaded and not
def test_relu_same_bits_at_two_threads_and_torch_values_with_nan_and_inf(threads, shape):
    rng = np.random.default_rng(5)
    x, g = _rand(rng, shape), _rand(rng, shape)
    x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
    g.reshape(-1)[3:6] = [np.nan, np.inf, -np.inf]     # inf/nan gradients where x is finite

    def run(T):
        xt = T.tensor(x, requires_grad=True)
        y = T.relu(xt)
        y.backward(T.tensor(g))
        return [y.detach().numpy(), xt.grad.numpy()]
    one = threads(1, lambda: run(ember))
    two = threads(2, lambda: run(ember))
    _same_bits(one, two)
    for mine, ref in zip(one, run(torch)):
        # the gradient passes where x is NaN (torch: zero only where x <= 0)
        np.testing.assert_array_equal(mine, ref)
