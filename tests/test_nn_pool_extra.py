"""More pooling against torch: the *_with_indices functions, 3-d adaptive max pooling, max
unpooling, power-average pooling, pdist, gumbel_softmax and NLLLoss2d: values, dtypes, input
gradients, graph node names, reprs, warnings and errors for bad arguments."""
import numpy as np
import pytest
import torch

import ember
from differential import catch, same, warnings_of
from opinfo import graph_names

RNG = np.random.default_rng(11)


def F(T):
    return T.nn.functional


def _weights(shape, dtype):
    return np.random.default_rng(1).standard_normal(tuple(shape)).astype(dtype)


def _observe(T, fn, *arrays):
    """fn(T, *tensors)'s outputs, the gradient of a random weighting of its first output with
    respect to each float input, and the node names of that output's graph."""
    xs = [T.tensor(a.copy(), requires_grad=a.dtype.kind == "f") for a in arrays]
    out = fn(T, *xs)
    y = out[0] if isinstance(out, tuple) else out
    w = T.tensor(_weights(y.shape, arrays[0].dtype))
    grads = T.autograd.grad((y * w).sum(), [x for x in xs if x.requires_grad])
    return out, grads, graph_names(y.grad_fn)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- *_with_indices, adaptive max
WITH_INDICES = [
    ("max_pool1d", lambda T, x: F(T).max_pool1d_with_indices(x, 3, 2, 1), (2, 3, 9)),
    ("max_pool1d-unbatched", lambda T, x: F(T).max_pool1d_with_indices(x, 2, ceil_mode=True),
     (3, 7)),
    ("max_pool2d", lambda T, x: F(T).max_pool2d_with_indices(x, (2, 3), 1, (1, 1), 2),
     (2, 2, 6, 7)),
    ("max_pool3d", lambda T, x: F(T).max_pool3d_with_indices(x, 2, return_indices=False),
     (1, 2, 4, 4, 5)),
    ("adaptive_max_pool1d", lambda T, x: F(T).adaptive_max_pool1d_with_indices(x, 4), (2, 3, 9)),
    ("adaptive_max_pool2d", lambda T, x: F(T).adaptive_max_pool2d_with_indices(x, (3, None)),
     (2, 2, 7, 5)),
    ("adaptive_max_pool3d", lambda T, x: F(T).adaptive_max_pool3d_with_indices(x, (2, 3, 4)),
     (2, 2, 5, 7, 6)),
    ("adaptive_max_pool3d-fn", lambda T, x: F(T).adaptive_max_pool3d(x, 3), (2, 4, 5, 7)),
    ("adaptive_max_pool3d-none", lambda T, x: F(T).adaptive_max_pool3d(x, (None, 2, 1), True),
     (1, 3, 4, 6, 5)),
    ("adaptive_max_pool3d-larger", lambda T, x: F(T).adaptive_max_pool3d(x, (5, 4, 3)),
     (1, 2, 3, 3, 2)),
    ("AdaptiveMaxPool3d", lambda T, x: T.nn.AdaptiveMaxPool3d((2, None, 3), True)(x),
     (2, 2, 4, 4, 6)),
]


@pytest.mark.parametrize("name,fn,shape", WITH_INDICES, ids=[c[0] for c in WITH_INDICES])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_with_indices_and_adaptive_max(name, fn, shape, dtype):
    x = randn(*shape, dtype=dtype)
    same(lambda T: _observe(T, fn, x))


def test_adaptive_max_pool3d_ties_pick_the_first():
    x = np.zeros((1, 2, 4, 4, 4), dtype=np.float32)
    x[0, 1, 1:3, 1:3, 1:3] = 1.0
    same(lambda T: _observe(T, lambda T, t: F(T).adaptive_max_pool3d(t, 2, True), x))


@pytest.mark.parametrize("shape,size", [((1, 1, 4, 4, 4), 0), ((0, 2, 4, 4, 4), 2),
                                        ((2, 3, 4, 5), (2, 0, 1))])
def test_adaptive_max_pool3d_empty(shape, size):
    x = np.zeros(shape, dtype=np.float32)
    # an empty output has no backward in torch (an error); an empty batch has one
    same(lambda T: (F(T).adaptive_max_pool3d(T.tensor(x), size, True),
                    catch(_observe, T, lambda T, t: F(T).adaptive_max_pool3d(t, size), x)))


@pytest.mark.parametrize("make", [
    lambda T: F(T).adaptive_max_pool3d(T.zeros(1, 4, 4), 2),
    lambda T: F(T).adaptive_max_pool3d(T.zeros(1, 1, 4, 4, 4), (2, 3)),
    lambda T: F(T).adaptive_max_pool3d(T.zeros(1, 1, 4, 0, 4), 2),
    lambda T: F(T).adaptive_max_pool3d(T.zeros(1, 1, 4, 4, 4, dtype=T.int32), 2),
    lambda T: F(T).max_pool1d_with_indices(T.zeros(1, 1, 2, 8), 2),
    lambda T: F(T).adaptive_max_pool1d_with_indices(T.zeros(1, 1, 2, 8), 2),
])
def test_with_indices_and_adaptive_max_errors(make):
    same(lambda T: catch(make, T))


def test_adaptive_max_pool3d_gradgradcheck():
    x = ember.tensor(RNG.standard_normal((1, 2, 3, 4, 5)), requires_grad=True)
    fn = lambda t: ember.nn.functional.adaptive_max_pool3d(t, (2, 3, 2))   # noqa: E731
    assert ember.autograd.gradcheck(fn, (x,))
    assert ember.autograd.gradgradcheck(fn, (x,))


# ---------------------------------------------------------------- max unpooling
def _pool_unpool(d, pool_kw, unpool_kw):
    """max_pool with indices, then max_unpool of the pooled values: gradients flow to x."""
    def fn(T, x):
        values, indices = getattr(F(T), f"max_pool{d}d")(x, return_indices=True, **pool_kw)
        return getattr(F(T), f"max_unpool{d}d")(values, indices, **unpool_kw)
    return fn


UNPOOL = [
    (1, dict(kernel_size=2), dict(kernel_size=2), (2, 3, 8)),
    (1, dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=3, stride=2, padding=1),
     (2, 9)),
    (1, dict(kernel_size=2), dict(kernel_size=2, output_size=(9,)), (2, 3, 9)),
    (1, dict(kernel_size=2), dict(kernel_size=2, output_size=[2, 3, 9]), (2, 3, 9)),
    (2, dict(kernel_size=2), dict(kernel_size=2), (2, 3, 4, 6)),
    (2, dict(kernel_size=(2, 3), stride=(2, 1)), dict(kernel_size=(2, 3), stride=(2, 1)),
     (3, 5, 6)),
    (2, dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=3, stride=2, padding=1,
                                                       output_size=(5, 6)), (1, 2, 5, 6)),
    (2, dict(kernel_size=2), dict(kernel_size=2, output_size=[1, 2, 5, 5]), (1, 2, 5, 5)),
    (3, dict(kernel_size=2), dict(kernel_size=2), (1, 2, 4, 4, 6)),
    (3, dict(kernel_size=2, stride=1), dict(kernel_size=2, stride=1), (2, 3, 3, 4)),
    (3, dict(kernel_size=2), dict(kernel_size=2, output_size=(5, 5, 7)), (1, 1, 5, 5, 7)),
]


@pytest.mark.parametrize("d,pool_kw,unpool_kw,shape", UNPOOL, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_unpool_matches_torch(d, pool_kw, unpool_kw, shape, dtype):
    x = randn(*shape, dtype=dtype)
    same(lambda T: _observe(T, _pool_unpool(d, pool_kw, unpool_kw), x))


def test_max_unpool_gradient_to_its_input_and_torch_size():
    x = randn(2, 2, 4, 4)
    index = RNG.permutation(16)[:4].reshape(2, 2).astype(np.int64)
    index = np.broadcast_to(index, (2, 2, 2, 2)).copy()

    def scenario(T):
        return _observe(T, lambda T, v: F(T).max_unpool2d(
            v, T.tensor(index), 2, output_size=T.Size([2, 2, 4, 4])), x[..., :2, :2].copy())
    same(scenario)


def test_max_unpool_modules():
    x = randn(2, 3, 4, 6)

    def scenario(T):
        pool, unpool = T.nn.MaxPool2d(2, return_indices=True), T.nn.MaxUnpool2d(2)
        pool1, unpool1 = T.nn.MaxPool1d(3, 1, 1, return_indices=True), T.nn.MaxUnpool1d(3, 1, 1)
        pool3, unpool3 = T.nn.MaxPool3d(2, return_indices=True), T.nn.MaxUnpool3d(2)
        return (repr(unpool), repr(unpool1), repr(unpool3), repr(T.nn.MaxUnpool2d((2, 3), 1)),
                _observe(T, lambda T, t: unpool(*pool(t), output_size=(5, 7)), x),
                _observe(T, lambda T, t: unpool1(*pool1(t)), x[0]),
                _observe(T, lambda T, t: unpool3(*pool3(t)), x))
    same(scenario)


def test_max_unpool_empty_batch():
    x = np.zeros((0, 2, 2, 2), dtype=np.float32)
    index = np.zeros((0, 2, 2, 2), dtype=np.int64)
    same(lambda T: _observe(T, lambda T, v: F(T).max_unpool2d(v, T.tensor(index), 2), x))


def test_max_unpool_gradgradcheck():
    index = ember.tensor(np.array([[[[0, 3], [9, 14]]]]))
    v = ember.tensor(RNG.standard_normal((1, 1, 2, 2)), requires_grad=True)
    fn = lambda t: ember.nn.functional.max_unpool2d(t, index, 2)   # noqa: E731
    assert ember.autograd.gradcheck(fn, (v,))
    assert ember.autograd.gradgradcheck(fn, (v,))


def _unpool_call(d, shape=None, index_shift=0, index_dtype=None, value_dtype=None, **kw):
    def make(T):
        values, indices = getattr(F(T), f"max_pool{d}d")(
            T.arange(float(np.prod(shape))).reshape(shape), 2, return_indices=True)
        indices = indices + index_shift * (indices == indices.max())
        if index_dtype:
            indices = indices.to(getattr(T, index_dtype))
        if value_dtype:
            values = values.to(getattr(T, value_dtype))
        return getattr(F(T), f"max_unpool{d}d")(values, indices, 2, **kw)
    return make


UNPOOL_ERRORS = [
    _unpool_call(2, (1, 1, 4, 4), output_size=(2, 2)),
    _unpool_call(2, (1, 1, 4, 4), output_size=(5,)),
    _unpool_call(2, (1, 1, 4, 4), output_size=(1, 1, 3, 3)),      # index past the plane
    _unpool_call(2, (1, 1, 4, 4), index_shift=100),
    _unpool_call(2, (1, 1, 4, 4), index_shift=-100),
    _unpool_call(2, (1, 1, 4, 4), index_dtype="int32"),
    _unpool_call(2, (1, 1, 4, 4), index_dtype="float32"),
    _unpool_call(2, (1, 1, 4, 4), value_dtype="int32"),
    _unpool_call(2, (1, 1, 4, 4), padding=3),
    _unpool_call(2, (1, 1, 4, 4), stride=0),
    _unpool_call(1, (1, 2, 8), output_size=[12]),
    _unpool_call(1, (1, 2, 8), output_size=[1, 9]),
    _unpool_call(1, (1, 2, 8), output_size=9),
    _unpool_call(1, (2, 8), index_shift=50),
    _unpool_call(3, (1, 1, 2, 4, 4), output_size=(2, 9, 9)),
    _unpool_call(3, (1, 1, 2, 4, 4), output_size=(1, 1, 1, 2, 4, 4, 4)),
    _unpool_call(3, (1, 1, 2, 4, 4), index_shift=100),
    _unpool_call(3, (1, 1, 2, 4, 4), index_dtype="int32"),
    _unpool_call(3, (1, 1, 2, 4, 4), stride=0),
    lambda T: F(T).max_unpool2d(T.zeros(2, 2), T.zeros(2, 2, dtype=T.long), 2),
    lambda T: F(T).max_unpool3d(T.zeros(2, 2, 2), T.zeros(2, 2, 2, dtype=T.long), 2),
    lambda T: F(T).max_unpool1d(T.zeros(2), T.zeros(2, dtype=T.long), 2),
    lambda T: F(T).max_unpool2d(T.zeros(1, 2, 2), T.zeros(1, 2, 1, dtype=T.long), 2),
    lambda T: F(T).max_unpool3d(T.zeros(1, 1, 2, 2), T.zeros(1, 1, 2, 1, dtype=T.long), 2),
]


@pytest.mark.parametrize("make", UNPOOL_ERRORS)
def test_max_unpool_errors(make):
    # with several invalid indices torch names the one its threads find last: that depends on
    # its thread count (which other tests change), so compare with torch on one thread
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        same(lambda T: catch(make, T))
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_max_unpool_low_precision(dtype):
    same(lambda T: _unpool_call(2, (1, 2, 4, 4), value_dtype=dtype)(T))


# ---------------------------------------------------------------- LP pooling
LP = [
    ("1d-p2", lambda T, x: F(T).lp_pool1d(x, 2, 3), (2, 3, 8), False),
    ("1d-p1.5-stride-ceil", lambda T, x: F(T).lp_pool1d(x, 1.5, 2, 3, True), (2, 9), True),
    ("2d-p3", lambda T, x: F(T).lp_pool2d(x, 3, 2), (2, 2, 4, 6), False),
    ("2d-p1-rect-stride", lambda T, x: F(T).lp_pool2d(x, 1, (2, 3), stride=1), (1, 3, 4, 5),
     False),
    ("2d-p2.5-unbatched", lambda T, x: F(T).lp_pool2d(x, 2.5, 2, ceil_mode=True), (3, 5, 5),
     True),
    ("3d-p2", lambda T, x: F(T).lp_pool3d(x, 2, 2), (1, 2, 4, 4, 6), False),
    ("3d-p4-rect", lambda T, x: F(T).lp_pool3d(x, 4, (1, 2, 2), (1, 1, 2)), (2, 3, 4, 5),
     False),
    ("LPPool1d", lambda T, x: T.nn.LPPool1d(2, 2)(x), (2, 3, 6), False),
    ("LPPool2d", lambda T, x: T.nn.LPPool2d(1.5, 2, ceil_mode=True)(x), (2, 3, 5, 5), True),
    ("LPPool3d", lambda T, x: T.nn.LPPool3d(3, (2, 1, 2))(x), (1, 2, 4, 3, 4), False),
]


@pytest.mark.parametrize("name,fn,shape,positive", LP, ids=[c[0] for c in LP])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lp_pool_matches_torch(name, fn, shape, positive, dtype):
    # a fractional power of a negative number is NaN in both; positive inputs for those
    x = randn(*shape, dtype=dtype)
    x = np.abs(x) + 0.1 if positive else x
    same(lambda T: _observe(T, fn, x), rtol=1e-4, atol=1e-5)


def test_lp_pool_reprs_and_errors():
    same(lambda T: [repr(T.nn.LPPool2d(2, 3)), repr(T.nn.LPPool1d(1.5, 2, ceil_mode=True)),
                    repr(T.nn.LPPool3d(2, 2, stride=(1, 2, 1))),
                    catch(lambda: F(T).lp_pool3d(T.ones(1, 1, 4, 4, 4), 2, (2, 2))),
                    catch(lambda: F(T).lp_pool2d(T.ones(1, 1, 4, 4), 0, 2))])


def test_lp_pool_gradgradcheck():
    x = ember.tensor(np.abs(RNG.standard_normal((1, 2, 4, 4))) + 0.5, requires_grad=True)
    fn = lambda t: ember.nn.functional.lp_pool2d(t, 3, 2)   # noqa: E731
    assert ember.autograd.gradcheck(fn, (x,))
    assert ember.autograd.gradgradcheck(fn, (x,))


# ---------------------------------------------------------------- double backward
UNPOOL_DOUBLE = [
    ("max_unpool2d", _pool_unpool(2, dict(kernel_size=2), dict(kernel_size=2)), (2, 2, 4, 6)),
    ("max_unpool3d", _pool_unpool(3, dict(kernel_size=2), dict(kernel_size=2)), (1, 2, 4, 4, 2)),
    ("max_unpool1d", _pool_unpool(1, dict(kernel_size=3, stride=2), dict(kernel_size=3, stride=2)),
     (2, 3, 9)),
]


def _grad_of_grad(T, fn, x, wrt_input):
    """The gradient g of a weighted output, and the gradient of a weighting of g*g by the
    upstream weights (and by the input when `wrt_input`)."""
    t = T.tensor(x, requires_grad=True)
    y = fn(T, t)
    w = T.tensor(_weights(y.shape, np.float64), requires_grad=True)
    (g,) = T.autograd.grad((y * w).sum(), t, create_graph=True)
    v = T.tensor(_weights(g.shape, np.float64) + 1)
    gg = T.autograd.grad((g * g * v).sum(), [t, w] if wrt_input else [w])
    return g, gg, graph_names(g.grad_fn)


@pytest.mark.parametrize("name,fn,shape", UNPOOL_DOUBLE, ids=[c[0] for c in UNPOOL_DOUBLE])
def test_double_backward_through_max_unpool_matches_torch(name, fn, shape):
    # values only, by the upstream weights: the max pooling's backward node
    # (nn/functional/pooling.py) has no edge to its input, where torch's has one carrying zeros
    x = randn(*shape, dtype=np.float64)
    same(lambda T: _grad_of_grad(T, fn, x, wrt_input=False)[:2], rtol=1e-7, atol=1e-9)


def test_double_backward_of_adaptive_max_pool3d_matches_torch():
    x = randn(2, 3, 5, 4, dtype=np.float64)
    same(lambda T: _grad_of_grad(T, lambda T, t: F(T).adaptive_max_pool3d(t, (2, 3, 2)), x,
                                 wrt_input=True), rtol=1e-7, atol=1e-9)


def test_double_backward_of_lp_pool_matches_torch():
    # values only: ember's pow derivative builds its graph with other node names than torch's
    x = np.abs(randn(1, 2, 4, 4, dtype=np.float64)) + 0.1
    same(lambda T: _grad_of_grad(T, lambda T, t: F(T).lp_pool2d(t, 3, 2), x, True)[:2],
         rtol=1e-7, atol=1e-9)


# ---------------------------------------------------------------- pdist
PDIST_ROWS = np.array([[1.0, 2, 3], [1, 0, 1], [2, 3, 3], [1, 2, 3], [-1, 0.5, 2]])


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, float("inf")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pdist_matches_torch(p, dtype):
    # the rows have equal rows, equal components and ties for the largest component
    same(lambda T: _observe(T, lambda T, x: F(T).pdist(x, p), PDIST_ROWS.astype(dtype)))
    x = randn(6, 4, dtype=dtype)
    same(lambda T: _observe(T, lambda T, t: T.pdist(t, p), x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(1, 3), (3, 0), (2, 1)])
def test_pdist_degenerate_gradients(shape):
    x = np.ones(shape, dtype=np.float32)
    same(lambda T: _observe(T, lambda T, t: F(T).pdist(t), x))


def test_pdist_double_backward_is_not_implemented_as_in_torch():
    x = randn(4, 3, dtype=np.float64)

    def scenario(T):
        t = T.tensor(x, requires_grad=True)
        (g,) = T.autograd.grad(F(T).pdist(t).sum(), t, create_graph=True)
        return g, graph_names(g.grad_fn), catch(lambda: g.sum().backward())
    same(scenario)


@pytest.mark.parametrize("make", [
    lambda T: F(T).pdist(T.zeros(2, 3, 4)),
    lambda T: F(T).pdist(T.zeros(4, 3), p=-1),
    lambda T: F(T).pdist(T.zeros(4, 3, dtype=T.int32)),
    lambda T: F(T).pdist(T.zeros(4, 3, dtype=T.float16)),
    lambda T: F(T).pdist(T.zeros(4, 3, dtype=T.bfloat16)),
    lambda T: F(T).pdist(T.zeros(4, 3, dtype=T.complex64)),
    lambda T: F(T).pdist(T.zeros(1, 3)),
    lambda T: F(T).pdist(T.zeros(0, 3)),
    lambda T: F(T).pdist(T.zeros(4, 0)),
])
def test_pdist_edge_cases(make):
    same(lambda T: catch(make, T))


# ---------------------------------------------------------------- gumbel_softmax
@pytest.fixture
def fixed_noise(monkeypatch):
    """Make `Tensor.exponential_` fill with the same numbers in both libraries."""
    def patch(array):
        for T in (torch, ember):
            def exponential_(self, lambd=1.0, *, generator=None, T=T):
                return self.copy_(T.tensor(array, dtype=self.dtype))
            monkeypatch.setattr(T.Tensor, "exponential_", exponential_)
    return patch


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("tau,dim", [(1, -1), (0.5, 0), (2.0, 1)])
def test_gumbel_softmax_with_fixed_noise(fixed_noise, hard, tau, dim):
    logits = randn(4, 5, 3)
    fixed_noise(RNG.exponential(size=logits.shape).astype(np.float32))
    same(lambda T: _observe(T, lambda T, x: F(T).gumbel_softmax(x, tau, hard, dim=dim), logits))


def test_gumbel_softmax_structure_with_ember_noise():
    logits = ember.tensor(randn(6, 4), requires_grad=True)
    soft = ember.nn.functional.gumbel_softmax(logits, tau=0.7)
    hard = ember.nn.functional.gumbel_softmax(logits, hard=True)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), np.ones(6), rtol=1e-6)
    assert ((hard == 0) | (hard == 1)).all().item()
    np.testing.assert_array_equal(hard.sum(-1).detach().numpy(), np.ones(6))
    # straight through: the gradient of a one-hot sample is the soft sample's, which sums to
    # zero over each row for a constant upstream gradient
    (g,) = ember.autograd.grad(hard.sum(), logits)
    np.testing.assert_allclose(g.numpy(), np.zeros((6, 4)), atol=1e-6)


def test_gumbel_softmax_eps_warning(fixed_noise):
    fixed_noise(np.ones((2, 3), dtype=np.float32))
    same(lambda T: warnings_of(lambda: F(T).gumbel_softmax(T.zeros(2, 3), eps=1e-3)))


# ---------------------------------------------------------------- NLLLoss2d
def test_nll_loss_2d_deprecated_alias():
    x = randn(2, 3, 4, 5)
    target = RNG.integers(0, 3, (2, 4, 5))

    def scenario(T):
        module, caught = warnings_of(lambda: T.nn.NLLLoss2d(ignore_index=1, reduction="sum"))
        logp = T.tensor(x, requires_grad=True).log_softmax(1)
        loss = module(logp, T.tensor(target))
        return (repr(module), caught, isinstance(module, T.nn.NLLLoss), loss,
                graph_names(loss.grad_fn))
    same(scenario)
