"""ember._parallel: kernels split into blocks over several threads give the same bits as on
one thread, and a failing block's exception reaches the caller."""
import threading

import numpy as np
import pytest

import ember
from ember import _fast_kernels, _parallel


@pytest.fixture
def two_threads():
    before = ember.get_num_threads()
    ember.set_num_threads(2)
    yield
    ember.set_num_threads(before)


def test_every_block_is_visited_once(two_threads):
    n = _parallel.PARALLEL_FROM * 3 + 17          # several blocks and a short last one
    assert _parallel.threads_for(n, heavy=True) == 2
    seen = np.zeros(n, np.int64)

    def body(s, e):
        seen[s:e] += 1
    _parallel.for_blocks(body, n, heavy=True)
    assert (seen == 1).all()


def test_small_ranges_stay_on_the_calling_thread(two_threads):
    assert _parallel.threads_for(_parallel.PARALLEL_FROM - 1, heavy=True) == 1


def test_light_blocks_stay_on_the_calling_thread(two_threads):
    # blocks of short ufunc calls lose more to GIL handoffs than a second core gives
    n = _parallel.PARALLEL_FROM * 4
    assert _parallel.threads_for(n) == 1
    idents = set()
    _parallel.for_blocks(lambda s, e: idents.add(threading.get_ident()), n)
    assert idents == {threading.get_ident()}


def test_a_block_that_raises_reaches_the_caller(two_threads):
    def body(s, e):
        if s >= _parallel.BLOCK * 3:
            raise ValueError("block failed")
    with pytest.raises(ValueError, match="block failed"):
        _parallel.for_blocks(body, _parallel.PARALLEL_FROM * 2, heavy=True)


@pytest.mark.parametrize("kernel", ["gelu", "gelu_backward", "sigmoid", "sigmoid_backward"])
def test_threaded_kernels_give_the_single_thread_bits(kernel):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(_parallel.PARALLEL_FROM * 2 + 5) * 4).astype(np.float32)
    g = rng.standard_normal(x.size).astype(np.float32)
    run = {"gelu": lambda: _fast_kernels.gelu_f32(x),
           "gelu_backward": lambda: _fast_kernels.gelu_backward_f32(g, x),
           "sigmoid": lambda: _fast_kernels.sigmoid_f32(x),
           "sigmoid_backward": lambda: _fast_kernels.sigmoid_backward_into(g, x)}[kernel]
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = run()
        ember.set_num_threads(2)
        two = run()
    finally:
        ember.set_num_threads(before)
    assert one.dtype == two.dtype == np.float32
    np.testing.assert_array_equal(one.view(np.uint32), two.view(np.uint32))


def _bits_at_one_and_two_threads(run, size):
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = run()
        ember.set_num_threads(2)
        # (these kernels' blocks are light: they stay on the calling thread, in blocks)
        assert size is None or _parallel.threads_for(size) == 1
        two = run()
    finally:
        ember.set_num_threads(before)
    one, two = (one if isinstance(one, tuple) else (one,)), (two if isinstance(two, tuple)
                                                             else (two,))
    assert len(one) == len(two)
    for a, b in zip(one, two):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


ROW_KERNELS = ["softmax", "log_softmax", "softmax_backward", "log_softmax_backward",
               "layer_norm", "layer_norm_backward", "layer_norm_backward_no_weight"]


@pytest.mark.parametrize("shape", [(3001, 65), (5, 40000)])   # short rows; one row a block
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", ROW_KERNELS)
def test_threaded_row_kernels_give_the_single_thread_bits(kernel, dtype, shape):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    w, b = rng.standard_normal(shape[1]).astype(dtype), rng.standard_normal(shape[1]).astype(dtype)
    y = _fast_kernels.softmax_rows(x)
    logy = _fast_kernels.softmax_rows(x, log=True)
    run = {"softmax": lambda: _fast_kernels.softmax_rows(x),
           "log_softmax": lambda: _fast_kernels.softmax_rows(x, log=True),
           "softmax_backward": lambda: _fast_kernels.softmax_backward_rows(g, y),
           "log_softmax_backward": lambda: _fast_kernels.softmax_backward_rows(g, logy, log=True),
           "layer_norm": lambda: _fast_kernels.layer_norm_rows(x, w, b, 1e-5),
           "layer_norm_backward": lambda: _fast_kernels.layer_norm_backward_rows(g, x, w, 1e-5),
           "layer_norm_backward_no_weight":
               lambda: _fast_kernels.layer_norm_backward_rows(g, x, None, 1e-5)[::2]}[kernel]
    _bits_at_one_and_two_threads(run, x.size)


def test_row_kernels_agree_with_torch_on_many_blocks():
    # the blocked kernels against torch's, where rows span several blocks (float32 tolerance)
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((3001, 65)) * 3).astype(np.float32)
    x[7] = -np.inf                                  # an all -inf row: nan, as in torch
    x[8, 3] = np.nan
    x[9, :5] = -np.inf
    g = rng.standard_normal(x.shape).astype(np.float32)
    tx = torch.tensor(x)
    for log, fn in ((False, torch.softmax), (True, torch.log_softmax)):
        y = _fast_kernels.softmax_rows(x, log=log)
        np.testing.assert_allclose(y, fn(tx, -1).numpy(), rtol=1e-5, atol=1e-6)
        fine = np.isfinite(y).all(axis=1)            # torch's backward on the finite rows
        tg, ty = torch.tensor(g[fine]), fn(tx, -1)[torch.tensor(fine)]
        want = (torch.ops.aten._log_softmax_backward_data if log else
                torch.ops.aten._softmax_backward_data)(tg, ty, -1, torch.float32)
        np.testing.assert_allclose(_fast_kernels.softmax_backward_rows(g[fine], y[fine], log),
                                   want.numpy(), rtol=1e-5, atol=1e-5)
    x = x[10:]
    w, b = rng.standard_normal(65).astype(np.float32), rng.standard_normal(65).astype(np.float32)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    out = torch.nn.functional.layer_norm(tx, (65,), tw, tb)
    np.testing.assert_allclose(_fast_kernels.layer_norm_rows(x, w, b, 1e-5),
                               out.detach().numpy(), rtol=1e-5, atol=1e-5)
    out.backward(torch.tensor(g[10:]))
    for mine, theirs in zip(_fast_kernels.layer_norm_backward_rows(g[10:], x, w, 1e-5),
                            (tx.grad, tw.grad, tb.grad)):
        np.testing.assert_allclose(mine, theirs.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("repeats", [1, 3, 20])     # by occurrence levels; np.add.at beyond 8
def test_scatter_add_rows_adds_in_the_loops_order(repeats):
    rng = np.random.default_rng(3)
    index = np.concatenate([rng.integers(0, 50, 300), np.full(repeats, 7)])
    rng.shuffle(index)
    rows = (rng.standard_normal((index.size, 5)) * 10 ** rng.uniform(-3, 3, (index.size, 1))
            ).astype(np.float32)
    rows[0] = -0.0                                  # 0 + -0 is +0, as the loop gives
    out = np.zeros((50, 5), np.float32)
    out[3] = 1.5
    want = out.copy()
    for k, i in enumerate(index):
        want[i] += rows[k]
    _fast_kernels.scatter_add_rows(out, index, rows)
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clip_grad_norm_total_is_the_same_at_one_and_two_threads(dtype):
    # long gradients: BLAS dot products over chunks short enough to run on one thread
    from ember.nn.utils import clip_grad
    rng = np.random.default_rng(4)
    grads = [rng.standard_normal(s).astype(dtype) for s in [(300, 128), (128,), (1,), (70001,)]]

    def run():
        ps = [ember.tensor(np.zeros_like(g), requires_grad=True) for g in grads]
        for p, g in zip(ps, grads):
            p.grad = ember.tensor(g.copy())
        return ember.nn.utils.clip_grad_norm_(ps, 1e9).numpy()
    _bits_at_one_and_two_threads(run, None)            # (BLAS's threads: 2 here)
    want = np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads))
    np.testing.assert_allclose(run(), want, rtol=1e-6 if dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_backward_kernel_is_the_expressions_bits(dtype):
    rng = np.random.default_rng(6)
    y = rng.uniform(0, 1, (300, 1000)).astype(dtype)
    g = rng.standard_normal(y.shape).astype(dtype)
    want = g * (y * (1 - y))
    got = _fast_kernels.sigmoid_backward_into(g, y)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    assert _fast_kernels.sigmoid_backward_into(g.T.copy(), y.T) is None   # (strided: None)


@pytest.mark.parametrize("kw", [dict(lr=0.01), dict(lr=0.01, weight_decay=0.3, amsgrad=True),
                                dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)])
def test_adam_over_many_blocks_is_the_per_parameter_update_at_one_and_two_threads(kw):
    # the flat update runs in blocks over the threads; its bits are the per-parameter
    # update's (a parameter skipping a step makes the bias corrections per-element arrays)
    from ember.optim.optimizer import Optimizer
    rng = np.random.default_rng(7)
    shapes = [(400, 300), (300,), (70001,), (1,)]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(3)]

    def run():
        ps = [ember.tensor(a.copy(), requires_grad=True) for a in init]
        opt = ember.optim.Adam(ps, **kw)
        for step, gs in enumerate(grads):
            for i, (p, g) in enumerate(zip(ps, gs)):
                p.grad = None if step == 1 and i == 2 else ember.tensor(g.copy())
            opt.step()
        return tuple(p.detach().numpy().copy() for p in ps) + tuple(
            opt.state[p][k].numpy().copy() for p in ps for k in ("exp_avg", "exp_avg_sq"))
    _bits_at_one_and_two_threads(run, sum(int(np.prod(s)) for s in shapes))
    flat = run()
    original = Optimizer._flat_for
    Optimizer._flat_for = lambda self, group: None          # the per-parameter update
    try:
        each = run()
    finally:
        Optimizer._flat_for = original
    for a, b in zip(flat, each):
        np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))
