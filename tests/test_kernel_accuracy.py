"""The float32 kernels of ember/_fast_kernels.py against torch and against the exact values.

GELU and sigmoid compute float32 in float32 (as PyTorch's CPU kernels do) with their own
approximations, so they are not bit-equal to torch; the tolerances below are in float32 ulps
and were measured on these inputs (ember / torch / exact, the exact value being torch's
float64 result):

    gelu forward     ember-exact <= 2.2 ulp(x)   torch-exact <= 4.7 ulp(x)   ember-torch <= 5
    gelu backward    ember-exact <= 3.6 ulp(g)   torch-exact <= 4.0 ulp(g)   ember-torch <= 6
    sigmoid          ember-exact <= 3.0 ulp(y)   torch-exact <= 2.0 ulp(y)   ember-torch <= 4

GELU's errors are measured in ulps of |x| (and of |grad|), not of the result: near its zeros
(and for x -> -inf) gelu is tiny and neither torch nor ember is accurate relative to it.
The embedding's weight gradient adds in the same order as torch's, so it is bit-equal.
"""
import numpy as np
import pytest
import torch

import ember


def _inputs():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(100000) * 3, np.linspace(-10, 10, 40001),
                        [0.0, -0.0, 1e-30, -1e-30, 20.0, -20.0, 100.0, -100.0]])
    return x.astype(np.float32), rng.standard_normal(x.size).astype(np.float32)


def _ulps(a, b, unit):
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)) / unit))


def test_gelu_forward_and_backward_float32_within_ulps_of_torch_and_exact():
    x, g = _inputs()
    tx = torch.from_numpy(x).requires_grad_()
    ty = torch.nn.functional.gelu(tx)
    tg, = torch.autograd.grad(ty, tx, torch.from_numpy(g))
    x64 = torch.from_numpy(x).double().requires_grad_()
    y64 = torch.nn.functional.gelu(x64)
    g64, = torch.autograd.grad(y64, x64, torch.from_numpy(g).double())
    ex = ember.tensor(x, requires_grad=True)
    ey = ember.nn.functional.gelu(ex)
    eg, = ember.autograd.grad(ey, ex, ember.tensor(g))
    assert ey.dtype == ember.float32 and eg.dtype == ember.float32
    ulp_x, ulp_g = np.spacing(np.abs(x)), np.spacing(np.abs(g))
    assert _ulps(ey.detach().numpy(), y64.detach().numpy(), ulp_x) <= 3
    assert _ulps(ey.detach().numpy(), ty.detach().numpy(), ulp_x) <= 6
    assert _ulps(eg.numpy(), g64.numpy(), ulp_g) <= 4
    assert _ulps(eg.numpy(), tg.numpy(), ulp_g) <= 8


@pytest.mark.parametrize("value", [float("nan"), float("-inf"), -1e30, -200.0, -0.0, 0.0])
def test_gelu_float32_special_values_as_torch(value):
    t = torch.nn.functional.gelu(torch.tensor([value]))
    e = ember.nn.functional.gelu(ember.tensor([value]))
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert np.signbit(e.numpy()) == np.signbit(t.numpy())


def test_gelu_double_backward_matches_torch():
    out = []
    for T in (torch, ember):
        x = T.tensor([-3.0, -1.0, -0.2, 0.0, 0.5, 2.0], requires_grad=True)
        g = T.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
        gx, = T.autograd.grad(T.nn.functional.gelu(x), x, g, create_graph=True)
        a, b = T.autograd.grad((gx * gx).sum(), (x, g))
        out.append((gx.grad_fn.name(), gx.detach().numpy(), a.numpy(), b.numpy()))
    (tn, *tv), (en, *ev) = out
    assert en == tn == "GeluBackwardBackward0"
    for t, e in zip(tv, ev):
        np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-6)


def test_gelu_float64_and_half_keep_their_paths():
    x = np.linspace(-5, 5, 1001)
    np.testing.assert_allclose(ember.nn.functional.gelu(ember.tensor(x)).numpy(),
                               torch.nn.functional.gelu(torch.from_numpy(x)).numpy(),
                               rtol=1e-12, atol=1e-300)
    # half precision: computed in float32 and rounded once (as torch); the two float32
    # kernels differ by a few float32 ulps, which can round to neighbouring half values
    for dt, eps in (("float16", 2.0 ** -10), ("bfloat16", 2.0 ** -7)):
        e = ember.nn.functional.gelu(ember.tensor(x).to(getattr(ember, dt)))
        t = torch.nn.functional.gelu(torch.from_numpy(x).to(getattr(torch, dt)))
        assert e.dtype == getattr(ember, dt)
        diff = np.abs(e.float().numpy() - t.float().numpy())
        assert (diff <= eps * np.maximum(np.abs(x), 1e-3)).all()


def test_sigmoid_float32_within_ulps_of_torch_and_exact():
    x, _ = _inputs()
    x = np.concatenate([x, [-88.0, -88.7, -89.0, -104.0, 88.0, float("inf"),
                            float("-inf")]]).astype(np.float32)
    t = torch.sigmoid(torch.from_numpy(x)).numpy()
    exact = torch.sigmoid(torch.from_numpy(x).double()).numpy()
    e = ember.sigmoid(ember.tensor(x)).numpy()
    assert e.dtype == np.float32
    unit = np.spacing(t)
    assert _ulps(e, t, unit) <= 4
    kept = t != 0                   # (below, float32's exp(-x) overflows: 0, as torch)
    assert _ulps(e[kept], exact[kept], unit[kept]) <= 3.5
    np.testing.assert_array_equal(e == 0, t == 0)      # where exp(-x) overflows: exactly 0
    nan = ember.sigmoid(ember.tensor([float("nan")])).numpy()
    assert np.isnan(nan).all()


@pytest.mark.parametrize("vocab", [65, 1000])
def test_embedding_weight_gradient_bit_equal_to_torch(vocab):
    rng = np.random.default_rng(1)
    idx = rng.integers(0, vocab, (16, 64))
    w = rng.standard_normal((vocab, 128)).astype(np.float32)
    g = rng.standard_normal((16, 64, 128)).astype(np.float32)
    grads = []
    for T in (torch, ember):
        wt = T.tensor(w, requires_grad=True)
        out = T.nn.functional.embedding(T.tensor(idx), wt)
        out.backward(T.tensor(g))
        grads.append(wt.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 1}, {"scale_grad_by_freq": True},
                                {"padding_idx": 2, "scale_grad_by_freq": True}])
def test_embedding_double_backward_as_torch(kw):
    out = []
    for T in (torch, ember):
        w = T.zeros(10, 3, requires_grad=True)
        idx = T.tensor([[1, 2, 1], [0, 1, 9]])
        g = T.arange(18.0).reshape(2, 3, 3).requires_grad_()
        gw, = T.autograd.grad(T.nn.functional.embedding(idx, w, **kw), w, g,
                              create_graph=True)
        gg, = T.autograd.grad((gw * T.arange(30.0).reshape(10, 3)).sum(), g)
        out.append((gw.grad_fn.name(), gw.detach().numpy(), gg.numpy()))
    assert out[1][0] == out[0][0] == "EmbeddingDenseBackwardBackward0"
    np.testing.assert_array_equal(out[1][1], out[0][1])
    np.testing.assert_array_equal(out[1][2], out[0][2])


def _node_names(fn):
    seen, stack, names = set(), [fn], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name())
        stack.extend(n for n, _ in node.next_functions)
    return names


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_steps_come_from_one_unbind_not_one_index_per_step(bidirectional):
    # indexing x_proj[t] per step would give L nodes whose backward each makes a full-size
    # gradient; one unbind per layer and direction stacks the step gradients once. (In
    # float64: float32 records each layer as one node, as PyTorch's oneDNN path does.)
    ember.manual_seed(0)
    m = ember.nn.LSTM(5, 4, 2, bidirectional=bidirectional).double()
    x = ember.randn(7, 3, 5, dtype=ember.float64, requires_grad=True)
    names = _node_names(m(x)[0].grad_fn)
    assert names.count("UnbindBackward0") == 2 * (2 if bidirectional else 1)
    assert "SelectBackward0" not in names


def test_packed_lstm_steps_come_from_one_split():
    ember.manual_seed(0)
    m = ember.nn.LSTM(5, 4)
    x = ember.randn(6, 3, 5, requires_grad=True)
    packed = ember.nn.utils.rnn.pack_padded_sequence(x, [6, 4, 2])
    out = m(packed)[0]
    names = _node_names(out.data.grad_fn)
    assert names.count("SplitWithSizesBackward0") == 1      # one layer, one direction


def test_layer_norm_float32_fast_path_close_to_torch():
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((64, 32, 48)) * 3 + 1).astype(np.float32)
    w = rng.standard_normal((32, 48)).astype(np.float32)
    b = rng.standard_normal((32, 48)).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    res = []
    for T in (torch, ember):
        xt, wt, bt = (T.tensor(a, requires_grad=True) for a in (x, w, b))
        y = T.nn.functional.layer_norm(xt, (32, 48), wt, bt)
        grads = T.autograd.grad(y, (xt, wt, bt), T.tensor(g))
        res.append([y.detach().numpy()] + [a.numpy() for a in grads])
    for t, e in zip(*res):
        assert e.dtype == np.float32
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=2e-5 * np.abs(t).max())


def test_mid_size_products_run_on_one_blas_thread_and_restore_the_pool():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from ember import _threads
    seen = []
    pools = _threads._blas_pools()
    if not pools:
        pytest.skip("no BLAS pool that threadpoolctl can control")
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = [get() for get, _ in pools]

        def product(a, b):
            seen.append([get() for get, _ in pools])
            return a @ b
        a, b = np.ones((20, 200), np.float32), np.ones((200, 800), np.float32)
        out = _threads.call_single_threaded(product, a, b)
        assert [get() for get, _ in pools] == before
    assert seen == [[1] * len(pools)]
    np.testing.assert_array_equal(out, np.full((20, 800), 200, np.float32))
    assert _threads.product_size(a, b) == 20 * 200 * 800
    # the policy is applied to products of this size (and the result is torch's)
    x, w = np.random.default_rng(3).standard_normal((2, 20, 200)).astype(np.float32), \
        np.random.default_rng(4).standard_normal((200, 800)).astype(np.float32)
    assert _threads.BLAS_SPLITS_FROM <= _threads.product_size(x, w) < \
        _threads.SINGLE_THREAD_PRODUCT
    np.testing.assert_allclose((ember.tensor(x) @ ember.tensor(w)).numpy(),
                               (torch.from_numpy(x) @ torch.from_numpy(w)).numpy(),
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("op", ["gelu", "sigmoid"])
def test_float32_kernels_keep_the_input_memory_layout(op):
    x = np.random.default_rng(5).standard_normal((3, 4, 5)).astype(np.float32)
    strides = []
    for T in (torch, ember):
        fn = T.nn.functional.gelu if op == "gelu" else T.sigmoid
        t = T.tensor(x).permute(2, 0, 1).requires_grad_()
        y = fn(t)
        g, = T.autograd.grad(y, t, T.ones(3, 4, 5).permute(2, 0, 1))
        strides.append((y.stride(), g.stride(), fn(T.tensor(x)[:, ::2]).stride()))
    assert strides[1] == strides[0]


def test_gelu_backward_without_the_forwards_kept_denominators_within_ulps():
    # a pack hook that copies the saved input hands the backward another array: it then
    # recomputes 1 / Phi(x) instead of reading the forward's (the same tolerances)
    x, g = _inputs()
    x64 = torch.from_numpy(x).double().requires_grad_()
    g64, = torch.autograd.grad(torch.nn.functional.gelu(x64), x64, torch.from_numpy(g).double())
    ulp_g = np.spacing(np.abs(g))
    grads = []
    for copy in (False, True):
        ex = ember.tensor(x, requires_grad=True)
        if copy:
            with ember.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
                ey = ember.nn.functional.gelu(ex)
        else:
            ey = ember.nn.functional.gelu(ex)
        eg, = ember.autograd.grad(ey, ex, ember.tensor(g))
        assert _ulps(eg.numpy(), g64.numpy(), ulp_g) <= 4
        grads.append(eg.numpy())
    assert _ulps(grads[0], grads[1], ulp_g) <= 2


def test_gelu_keeps_its_denominators_only_while_the_input_lives_and_grad_is_on():
    from ember import _fast_kernels
    before = len(_fast_kernels._KEPT)
    x = ember.randn(1000, requires_grad=True)
    with ember.no_grad():
        ember.nn.functional.gelu(x)
    assert len(_fast_kernels._KEPT) == before
    h = x * 2
    y = ember.nn.functional.gelu(h)
    assert len(_fast_kernels._KEPT) == before + 1
    y.sum().backward()
    t = torch.tensor(x.detach().numpy(), requires_grad=True)
    torch.nn.functional.gelu(t * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
    del h, y        # the graph (and so h's array) is freed: the entry goes with it
    assert len(_fast_kernels._KEPT) == before


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_backward_with_and_without_the_forwards_kept_statistics(affine):
    # the forward keeps its centred rows and deviations for the backward of the same input;
    # a pack hook that copies the saved input makes the backward recompute them: both match
    # torch (float32 tolerance), and the entry goes when the graph is freed
    from ember import _fast_kernels
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((6, 50, 96)) * 3 + 5).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    w, b = rng.standard_normal(96).astype(np.float32), rng.standard_normal(96).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    tw, tb = (torch.tensor(a, requires_grad=True) for a in (w, b)) if affine else (None, None)
    ty = torch.nn.functional.layer_norm(tx, (96,), tw, tb)
    want = torch.autograd.grad(ty, [tx] + ([tw, tb] if affine else []), torch.tensor(g))
    before = len(_fast_kernels._KEPT)
    for copy in (False, True):
        ex = ember.tensor(x, requires_grad=True)
        ew, eb = (ember.tensor(a, requires_grad=True) for a in (w, b)) if affine else (None, None)
        if copy:
            with ember.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
                ey = ember.nn.functional.layer_norm(ex, (96,), ew, eb)
        else:
            ey = ember.nn.functional.layer_norm(ex, (96,), ew, eb)
            assert len(_fast_kernels._KEPT) == before + 1
        np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
        for _ in range(2):      # the second backward (retain_graph) recomputes them
            got = ember.autograd.grad(ey, [ex] + ([ew, eb] if affine else []),
                                      ember.tensor(g), retain_graph=True)
            for e, t in zip(got, want):
                np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-4, atol=1e-4)
            assert len(_fast_kernels._KEPT) == before + copy   # (unread: kept while x lives)
        del ey, ex, got
        assert len(_fast_kernels._KEPT) == before
