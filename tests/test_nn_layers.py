"""ember.nn layers against torch.nn: same weights, same inputs -> same outputs, input gradients,
parameter gradients, buffers (running stats), reprs and graph node names."""
import warnings

import numpy as np
import pytest
import torch

import ember
from nn_helpers import (compare_module, copy_weights, assert_close, em, rand, node_name,
                        torch_repr, outcome)
from differential import catch, same, warnings_of

R = np.random.default_rng(1)


def ints(high, *shape):
    return np.random.default_rng(3).integers(0, high, shape)


# (id, builder taking the nn namespace, input arrays)
LAYERS = [
    ("linear-2d", lambda nn: nn.Linear(4, 3), [rand(5, 4)]),
    ("linear-1d", lambda nn: nn.Linear(4, 3), [rand(4)]),
    ("linear-3d", lambda nn: nn.Linear(4, 3), [rand(2, 5, 4)]),
    ("linear-nobias", lambda nn: nn.Linear(4, 3, bias=False), [rand(5, 4)]),
    ("linear-nobias-3d", lambda nn: nn.Linear(4, 2, bias=False), [rand(2, 3, 4)]),
    ("bilinear", lambda nn: nn.Bilinear(3, 4, 2), [rand(5, 3), rand(5, 4, seed=2)]),
    ("bilinear-nobias", lambda nn: nn.Bilinear(3, 4, 2, bias=False),
     [rand(5, 3), rand(5, 4, seed=2)]),
    ("identity", lambda nn: nn.Identity(3, foo=1), [rand(2, 3)]),
    ("flatten", lambda nn: nn.Flatten(), [rand(2, 3, 4)]),
    ("flatten-0", lambda nn: nn.Flatten(0, 1), [rand(2, 3, 4)]),
    ("unflatten", lambda nn: nn.Unflatten(1, (2, 3)), [rand(4, 6)]),
    ("bn1d-train", lambda nn: nn.BatchNorm1d(3), [rand(6, 3)]),
    ("bn1d-train-3d", lambda nn: nn.BatchNorm1d(3), [rand(4, 3, 5)]),
    ("bn1d-eval", lambda nn: nn.BatchNorm1d(3).eval(), [rand(6, 3)]),
    ("bn1d-noaffine", lambda nn: nn.BatchNorm1d(3, affine=False), [rand(6, 3)]),
    ("bn1d-momentum-none", lambda nn: nn.BatchNorm1d(3, momentum=None), [rand(6, 3)]),
    ("bn1d-no-track", lambda nn: nn.BatchNorm1d(3, track_running_stats=False), [rand(6, 3)]),
    ("bn1d-no-track-eval", lambda nn: nn.BatchNorm1d(3, track_running_stats=False).eval(),
     [rand(6, 3)]),
    ("bn2d-train", lambda nn: nn.BatchNorm2d(2, eps=1e-3, momentum=0.3), [rand(3, 2, 4, 5)]),
    ("bn2d-eval", lambda nn: nn.BatchNorm2d(2).eval(), [rand(3, 2, 4, 5)]),
    ("layernorm", lambda nn: nn.LayerNorm(4), [rand(3, 4)]),
    ("layernorm-2d-shape", lambda nn: nn.LayerNorm((3, 4), eps=1e-3), [rand(2, 3, 4)]),
    ("layernorm-noaffine", lambda nn: nn.LayerNorm(4, elementwise_affine=False), [rand(2, 4)]),
    ("layernorm-nobias", lambda nn: nn.LayerNorm(4, bias=False), [rand(2, 5, 4)]),
    ("groupnorm", lambda nn: nn.GroupNorm(2, 4), [rand(3, 4, 5)]),
    ("groupnorm-2d", lambda nn: nn.GroupNorm(3, 6, eps=1e-3), [rand(2, 6, 3, 2)]),
    ("groupnorm-noaffine", lambda nn: nn.GroupNorm(1, 4, affine=False), [rand(3, 4)]),
    ("groupnorm-nobias", lambda nn: nn.GroupNorm(2, 4, bias=False), [rand(3, 4, 2)]),
    ("bn1d-nobias", lambda nn: nn.BatchNorm1d(3, bias=False), [rand(5, 3)]),
    ("dropout-eval", lambda nn: nn.Dropout(0.3).eval(), [rand(4, 5)]),
    ("dropout-p0", lambda nn: nn.Dropout(0.0), [rand(4, 5)]),
    ("dropout2d-eval", lambda nn: nn.Dropout2d(0.3).eval(), [rand(2, 3, 4, 5)]),
    ("embedding", lambda nn: nn.Embedding(10, 3), [ints(10, 4, 5)]),
    ("embedding-1d", lambda nn: nn.Embedding(10, 3), [ints(10, 7)]),
    ("embedding-padding", lambda nn: nn.Embedding(10, 3, padding_idx=2),
     [np.array([[2, 1, 2], [0, 2, 9]])]),
    ("embedding-padding-neg", lambda nn: nn.Embedding(10, 3, padding_idx=-1),
     [np.array([9, 1, 9, 3])]),
    ("embedding-scale-freq", lambda nn: nn.Embedding(5, 3, scale_grad_by_freq=True),
     [np.array([1, 1, 1, 3, 4])]),
    ("relu", lambda nn: nn.ReLU(), [rand(3, 4)]),
    ("relu6", lambda nn: nn.ReLU6(), [rand(3, 4, low=-3, high=8)]),
    ("leaky_relu", lambda nn: nn.LeakyReLU(), [rand(3, 4)]),
    ("leaky_relu-0.2", lambda nn: nn.LeakyReLU(0.2), [rand(3, 4)]),
    ("prelu", lambda nn: nn.PReLU(), [rand(3, 4)]),
    ("prelu-channels", lambda nn: nn.PReLU(4, init=0.1), [rand(3, 4, 5)]),
    ("prelu-1d-input", lambda nn: nn.PReLU(), [rand(6)]),
    ("elu", lambda nn: nn.ELU(), [rand(3, 4)]),
    ("elu-alpha", lambda nn: nn.ELU(alpha=0.5), [rand(3, 4)]),
    ("selu", lambda nn: nn.SELU(), [rand(3, 4)]),
    ("celu", lambda nn: nn.CELU(alpha=2.0), [rand(3, 4)]),
    ("gelu", lambda nn: nn.GELU(), [rand(3, 4, low=-4, high=4)]),
    ("gelu-tanh", lambda nn: nn.GELU(approximate="tanh"), [rand(3, 4, low=-4, high=4)]),
    ("silu", lambda nn: nn.SiLU(), [rand(3, 4, low=-6, high=6)]),
    ("mish", lambda nn: nn.Mish(), [rand(3, 4, low=-6, high=6)]),
    ("sigmoid", lambda nn: nn.Sigmoid(), [rand(3, 4)]),
    ("tanh", lambda nn: nn.Tanh(), [rand(3, 4)]),
    ("softplus", lambda nn: nn.Softplus(), [rand(3, 4, low=-30, high=30)]),
    ("softplus-beta", lambda nn: nn.Softplus(beta=2, threshold=5), [rand(3, 4, low=-5, high=5)]),
    ("softsign", lambda nn: nn.Softsign(), [rand(3, 4)]),
    ("hardtanh", lambda nn: nn.Hardtanh(), [rand(3, 4)]),
    ("hardtanh-range", lambda nn: nn.Hardtanh(-0.5, 2.0), [rand(3, 4, low=-3, high=3)]),
    ("hardsigmoid", lambda nn: nn.Hardsigmoid(), [rand(3, 4, low=-5, high=5)]),
    ("hardswish", lambda nn: nn.Hardswish(), [rand(3, 4, low=-5, high=5)]),
    ("softmax", lambda nn: nn.Softmax(dim=1), [rand(3, 4)]),
    ("softmax-0", lambda nn: nn.Softmax(dim=0), [rand(3, 4, 2)]),
    ("log_softmax", lambda nn: nn.LogSoftmax(dim=-1), [rand(3, 4)]),
    ("softmin", lambda nn: nn.Softmin(dim=1), [rand(3, 4)]),
    ("logsigmoid", lambda nn: nn.LogSigmoid(), [rand(3, 4, low=-30, high=30)]),
    ("threshold", lambda nn: nn.Threshold(0.1, 20.0), [rand(3, 4)]),
    ("glu", lambda nn: nn.GLU(), [rand(3, 4)]),
    ("tanhshrink", lambda nn: nn.Tanhshrink(), [rand(3, 4)]),
    ("sequential", lambda nn: nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.LayerNorm(6),
                                            nn.Linear(6, 2), nn.Tanh()), [rand(5, 4)]),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_matches_torch(case, dtype):
    _, build, arrays = case
    tol = {}
    if dtype == torch.float32 and case[0].startswith(("bn", "groupnorm", "layernorm")):
        tol = dict(rtol=1e-4, atol=1e-5)       # statistics are accumulated in another order
    compare_module(build(ember.nn), build(torch.nn), arrays, dtype, **tol)


@pytest.mark.parametrize("case", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_repr_and_state_keys(case):
    _, build, _ = case
    e, t = build(ember.nn), build(torch.nn)
    assert repr(e) == torch_repr(t)
    assert list(e.state_dict().keys()) == list(t.state_dict().keys())
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]


REPRS = [
    lambda nn: nn.ReLU(inplace=True), lambda nn: nn.ReLU6(inplace=True),
    lambda nn: nn.LeakyReLU(0.1, inplace=True), lambda nn: nn.ELU(inplace=True),
    lambda nn: nn.SELU(inplace=True), lambda nn: nn.CELU(inplace=True),
    lambda nn: nn.SiLU(inplace=True), lambda nn: nn.Mish(inplace=True),
    lambda nn: nn.Hardtanh(inplace=True), lambda nn: nn.Hardsigmoid(inplace=True),
    lambda nn: nn.Hardswish(inplace=True), lambda nn: nn.Dropout(0.2, inplace=True),
    lambda nn: nn.Dropout2d(), lambda nn: nn.Softplus(beta=2, threshold=10),
    lambda nn: nn.Softmax(), lambda nn: nn.Embedding(5, 2, max_norm=1.0, norm_type=1.0,
                                                     scale_grad_by_freq=True, sparse=True),
    lambda nn: nn.BatchNorm2d(3, momentum=None, affine=False, track_running_stats=False),
    lambda nn: nn.GroupNorm(2, 4, affine=False), lambda nn: nn.LayerNorm([2, 3]),
    lambda nn: nn.Threshold(0.1, 2, inplace=True),
    lambda nn: nn.BatchNorm1d(3, bias=False), lambda nn: nn.BatchNorm1d(3, affine=False, bias=True),
    lambda nn: nn.GroupNorm(2, 4, bias=False), lambda nn: nn.LayerNorm(3, bias=False),
    lambda nn: nn.LayerNorm(3, elementwise_affine=False, bias=True),
]


@pytest.mark.parametrize("i", range(len(REPRS)))
def test_more_reprs(i):
    assert repr(REPRS[i](ember.nn)) == torch_repr(REPRS[i](torch.nn))


INPLACE = [
    ("relu", lambda nn: nn.ReLU(inplace=True)),
    ("relu6", lambda nn: nn.ReLU6(inplace=True)),
    ("leaky", lambda nn: nn.LeakyReLU(0.1, inplace=True)),
    ("elu", lambda nn: nn.ELU(inplace=True)),
    ("selu", lambda nn: nn.SELU(inplace=True)),
    ("celu", lambda nn: nn.CELU(1.5, inplace=True)),
    ("silu", lambda nn: nn.SiLU(inplace=True)),
    ("mish", lambda nn: nn.Mish(inplace=True)),
    ("hardtanh", lambda nn: nn.Hardtanh(inplace=True)),
    ("hardsigmoid", lambda nn: nn.Hardsigmoid(inplace=True)),
    ("hardswish", lambda nn: nn.Hardswish(inplace=True)),
    ("threshold", lambda nn: nn.Threshold(0.2, -1.0, inplace=True)),
]


@pytest.mark.parametrize("case", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_activation(case):
    """An in-place activation on a non-leaf writes into it (same version bump) and its
    gradient flows to the leaf as torch's does."""
    _, build = case
    x = rand(3, 4, low=-4, high=4)
    results = []
    for lib in (torch, ember):
        leaf = lib.tensor(x, requires_grad=True)
        h = leaf * 1.5
        version = lambda: h._version
        v0 = version()
        out = build(lib.nn)(h)
        assert out is h
        bumped = version() > v0
        (out * lib.tensor(rand(3, 4, seed=5))).sum().backward()
        results.append((out.detach().numpy().copy(), leaf.grad.numpy().copy(), bumped))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12, atol=1e-12)
    assert results[1][2] and results[0][2]


def test_linear_graph_nodes():
    x = ember.randn(5, 4, requires_grad=True)
    lin = ember.nn.Linear(4, 3)
    assert node_name(lin(x)) == "AddmmBackward0"
    assert node_name(ember.nn.Linear(4, 3, bias=False)(x)) == "MmBackward0"
    assert node_name(lin(ember.randn(2, 5, 4))) == "ViewBackward0"
    assert lin(ember.randn(2, 5, 4)).grad_fn.next_functions[0][0].name() == "AddmmBackward0"


def test_linear_default_init_bounds():
    ember.manual_seed(0)
    lin = ember.nn.Linear(16, 300)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    bound = 1 / np.sqrt(16)
    assert w.min() >= -bound and w.max() <= bound and b.min() >= -bound and b.max() <= bound
    # uniform over the whole range, not a narrower one
    assert w.max() > 0.95 * bound and w.min() < -0.95 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.01
    assert lin.weight.dtype == ember.float32 and lin.weight.requires_grad
    d = ember.nn.Linear(2, 3, dtype=ember.float64)
    assert d.weight.dtype == ember.float64 and d.bias.dtype == ember.float64


def test_default_inits_of_layers():
    e = ember.nn.Embedding(2000, 4, padding_idx=3)
    w = e.weight.detach().numpy()
    assert (w[3] == 0).all()
    assert abs(w.std() - 1.0) < 0.05 and abs(w.mean()) < 0.05
    bn = ember.nn.BatchNorm1d(3)
    assert (bn.weight.detach().numpy() == 1).all() and (bn.bias.detach().numpy() == 0).all()
    assert bn.num_batches_tracked.dtype == ember.int64 and bn.num_batches_tracked.item() == 0
    p = ember.nn.PReLU(3, init=0.3)
    np.testing.assert_allclose(p.weight.detach().numpy(), [0.3] * 3, rtol=1e-6)
    bil = ember.nn.Bilinear(50, 3, 40)
    bound = 1 / np.sqrt(50)
    assert np.abs(bil.weight.detach().numpy()).max() <= bound


def test_batchnorm_running_stats_over_steps():
    for momentum in (0.1, None):
        t = torch.nn.BatchNorm2d(3, momentum=momentum)
        e = ember.nn.BatchNorm2d(3, momentum=momentum)
        for step in range(3):
            x = rand(4, 3, 2, 2, seed=step)
            t(torch.tensor(x, dtype=torch.float32))
            e(ember.tensor(x, dtype=ember.float32))
        assert e.num_batches_tracked.item() == t.num_batches_tracked.item() == 3
        assert_close(e.running_mean, t.running_mean, rtol=1e-5, atol=1e-6)
        assert_close(e.running_var, t.running_var, rtol=1e-5, atol=1e-6)
        t.eval(), e.eval()
        x = rand(2, 3, 2, 2, seed=9)
        assert_close(e(ember.tensor(x, dtype=ember.float32)),
                     t(torch.tensor(x, dtype=torch.float32)), rtol=1e-5, atol=1e-6)


def test_batchnorm_errors():
    cases = [
        lambda nn, T: nn.BatchNorm1d(3)(T.ones(1, 3)),
        lambda nn, T: nn.BatchNorm1d(3)(T.ones(2, 3, 4, 5)),
        lambda nn, T: nn.BatchNorm2d(3)(T.ones(2, 3)),
        lambda nn, T: nn.GroupNorm(3, 4),
        lambda nn, T: nn.LayerNorm(4)(T.ones(2, 3)),
        lambda nn, T: nn.Embedding(3, 2)(T.tensor([3])),
        lambda nn, T: nn.Embedding(3, 2, padding_idx=3),
        lambda nn, T: nn.Dropout(1.5),
        lambda nn, T: nn.PReLU(3)(T.ones(2, 4)),
    ]
    for case in cases:
        assert outcome(lambda: case(ember.nn, ember)) == outcome(lambda: case(torch.nn, torch))


def test_batchnorm_load_old_checkpoint_without_num_batches_tracked():
    for lib in (torch, ember):
        bn = lib.nn.BatchNorm1d(2)
        state = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
        assert repr(bn.load_state_dict(state)) == "<All keys matched successfully>"


def test_dropout_training_statistics():
    ember.manual_seed(0)
    x = ember.ones(200, 100, requires_grad=True)
    d = ember.nn.Dropout(0.3)
    y = d(x)
    vals = np.unique(y.detach().numpy())
    np.testing.assert_allclose(vals, [0.0, 1 / 0.7], rtol=1e-6)
    frac = (y.detach().numpy() == 0).mean()
    assert abs(frac - 0.3) < 0.02
    assert node_name(y) == "MulBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy(), rtol=1e-6)
    # p = 1 zeroes everything; eval and p = 0 return the input itself, as torch does
    assert (ember.nn.functional.dropout(x, 1.0).detach().numpy() == 0).all()
    assert d.eval()(x) is x
    assert ember.nn.functional.dropout(x, 0.0) is x


def test_dropout2d_zeroes_whole_channels():
    ember.manual_seed(0)
    x = ember.ones(8, 16, 5, 5)
    y = ember.nn.Dropout2d(0.5)(x).numpy()
    per_channel = y.reshape(8, 16, -1)
    assert (per_channel == per_channel[:, :, :1]).all()
    assert set(np.unique(per_channel)) == {0.0, 2.0}
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y3 = ember.nn.functional.dropout2d(ember.ones(4, 6, 30), 0.5).numpy()
    assert (y3 == y3[:, :, :1]).all()
    assert any("dropout2d: Received a 3D input" in str(m.message) for m in w)
    x = ember.ones(30, 40)
    y1 = ember.nn.functional.dropout1d(x, 0.5).numpy()
    assert (y1 == y1[:, :1]).all()


def test_dropout_inplace():
    ember.manual_seed(0)
    x = ember.ones(50, 20)
    h = x * 1
    y = ember.nn.Dropout(0.5, inplace=True)(h)
    assert y is h and set(np.unique(h.numpy())) == {0.0, 2.0}


def test_embedding_max_norm_renormalizes_weight():
    w = rand(6, 3, low=-3, high=3)
    idx = np.array([[0, 2], [2, 5]])
    outs = []
    for lib in (torch, ember):
        e = lib.nn.Embedding(6, 3, max_norm=1.5)
        with lib.no_grad():
            e.weight.copy_(lib.tensor(w, dtype=lib.float32))
        out = e(lib.tensor(idx))
        out.sum().backward()
        outs.append((out.detach().numpy(), e.weight.detach().numpy(), e.weight.grad.numpy()))
    for a, b in zip(outs[0], outs[1]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_embedding_from_pretrained_and_node():
    w = torch.tensor(rand(4, 3), dtype=torch.float32)
    t = torch.nn.Embedding.from_pretrained(w, padding_idx=1)
    e = ember.nn.Embedding.from_pretrained(em(w), padding_idx=1)
    assert repr(e) == torch_repr(t)
    assert not e.weight.requires_grad
    out = ember.nn.Embedding(4, 3)(ember.tensor([1, 2]))
    assert node_name(out) == "EmbeddingBackward0"


def test_norm_layers_node_names():
    x = ember.randn(4, 3, requires_grad=True)
    assert node_name(ember.nn.BatchNorm1d(3)(x)) == "NativeBatchNormBackward0"
    assert node_name(ember.nn.BatchNorm1d(3).eval()(x)) == "NativeBatchNormBackward0"
    assert node_name(ember.nn.LayerNorm(3)(x)) == "NativeLayerNormBackward0"
    assert node_name(ember.nn.GroupNorm(1, 3)(x)) == "NativeGroupNormBackward0"
    assert node_name(ember.nn.PReLU()(x)) == "PreluKernelBackward0"


def test_modules_to_double_and_back():
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    e = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    e.double()
    assert e[0].weight.dtype == ember.float64 and e[1].running_mean.dtype == ember.float64
    assert e[1].num_batches_tracked.dtype == ember.int64
    e.float()
    assert e[0].weight.dtype == ember.float32
    copy_weights(t, e)
    x = rand(5, 3)
    assert_close(e(ember.tensor(x, dtype=ember.float32)), t(torch.tensor(x, dtype=torch.float32)),
                 rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- layers: errors
def test_feature_dropout_of_a_vector():
    def f(T):
        F = T.nn.functional
        x = T.ones(3)
        return [warnings_of(lambda: catch(lambda: fn(x, 0.5, training=tr).shape))
                for fn in (F.dropout2d, F.dropout3d) for tr in (True, False)]
    same(f)


def test_group_norm_affine_size_errors():
    def f(T):
        F = T.nn.functional
        x = T.ones(2, 6, 3)
        return [catch(F.group_norm, x, 2, w, b) for w, b in [
            (T.ones(4), T.ones(6)), (T.ones(6), T.ones(4)), (None, T.ones(4)),
            (T.ones(2, 3), None), (T.ones(6, 1), None), (T.ones(6), T.ones(6))]] + \
            [catch(T.nn.GroupNorm(2, 4), T.ones(2, 6, 3))]
    same(f)


def _x(T, shape, dtype="float64", seed=0, requires_grad=False):
    data = np.random.default_rng(seed).standard_normal(shape)
    return T.tensor(data, dtype=getattr(T, dtype), requires_grad=requires_grad)


# ----------------------------------------------------------------------------- CrossMapLRN2d
@pytest.mark.parametrize("size", [2, 3, 4, 5, 9])
@pytest.mark.parametrize("channels", [1, 3, 6])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_map_lrn2d(size, channels, dtype):
    def scenario(T):
        m = T.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.6, k=2.0)
        x = _x(T, (2, channels, 3, 4), dtype, requires_grad=True)
        y = m(x)
        y.backward(_x(T, tuple(y.shape), dtype, seed=5))
        return repr(m), y, x.grad, type(y.grad_fn).__name__, m.state_dict()
    same(scenario, rtol=1e-4, atol=1e-5)


def test_cross_map_lrn2d_errors():
    def scenario(T):
        m = T.nn.CrossMapLRN2d(3)
        out = [catch(m, _x(T, s, "float32")) for s in [(5, 4, 4), (2, 5, 4), (2, 5, 4, 4, 3)]]
        # size 1: the forward works, torch's backward fails on its narrow
        x = _x(T, (2, 3, 2, 2), requires_grad=True)
        y = T.nn.CrossMapLRN2d(1, 0.1)(x)
        out += [repr(T.nn.CrossMapLRN2d(4)), y, catch(lambda: y.sum().backward())]
        return out
    same(scenario)


def test_functional_norms_keep_their_checks():
    def scenario(T):
        F = T.nn.functional
        return [catch(F.batch_norm, T.ones(1, 3), None, None, training=True),
                catch(F.batch_norm, T.ones(1, 3, 1), T.zeros(2), T.ones(2), training=True),
                catch(F.batch_norm, T.ones(1), None, None, training=True),
                catch(F.batch_norm, T.ones(3), None, None, training=True),
                catch(F.batch_norm, T.ones(1, 3), T.zeros(3), T.ones(3)),     # eval: fine
                catch(F.instance_norm, T.ones(2, 3, 1)),
                catch(F.instance_norm, T.ones(3)),
                catch(F.instance_norm, T.ones(2, 3, 1), use_input_stats=False),
                catch(T.batch_norm, T.ones(3), None, None, None, None, True, 0.1, 1e-5, False),
                catch(T.instance_norm, T.ones(3), None, None, None, None, True, 0.1, 1e-5,
                      False)]
    same(scenario)


def test_empty_batch_leaves_running_stats():
    def scenario(T):
        rm, rv = T.zeros(3), T.ones(3)
        out = [catch(T.nn.functional.batch_norm, T.ones(0, 3), rm, rv, training=True),
               catch(T.nn.functional.batch_norm, T.ones(2, 3, 0), rm, rv, training=True),
               catch(T.batch_norm, T.ones(0, 3), None, None, rm, rv, True, 0.1, 1e-5, False),
               catch(T.nn.functional.instance_norm, T.ones(0, 3, 2))]
        return out, rm, rv
    same(scenario)
