"""ember.nn.functional against torch.nn.functional: values, gradients, node names, errors and
warnings; gradcheck / gradgradcheck of ember's new primitives in float64."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF
from ember.autograd import gradcheck, gradgradcheck
from nn_helpers import compare_function, rand, node_name, outcome, em, assert_close


def fn_pair(name, **kwargs):
    return (lambda *a: getattr(EF, name)(*a, **kwargs),
            lambda *a: getattr(TF, name)(*a, **kwargs))


# (id, function name, kwargs, input arrays, torch's node name)
CASES = [
    ("relu", "relu", {}, [rand(3, 4)], "ReluBackward0"),
    ("relu6", "relu6", {}, [rand(3, 4, low=-2, high=8)], "HardtanhBackward0"),
    ("leaky_relu", "leaky_relu", dict(negative_slope=0.2), [rand(3, 4)], "LeakyReluBackward0"),
    ("elu", "elu", dict(alpha=0.7), [rand(3, 4)], "EluBackward0"),
    ("selu", "selu", {}, [rand(3, 4)], "EluBackward0"),
    ("celu", "celu", dict(alpha=1.5), [rand(3, 4)], "CeluBackward0"),
    ("gelu", "gelu", {}, [rand(3, 4, low=-5, high=5)], "GeluBackward0"),
    ("gelu-tanh", "gelu", dict(approximate="tanh"), [rand(3, 4, low=-5, high=5)],
     "GeluBackward0"),
    ("silu", "silu", {}, [rand(3, 4, low=-8, high=8)], "SiluBackward0"),
    ("mish", "mish", {}, [rand(3, 4, low=-8, high=8)], "MishBackward0"),
    ("softplus", "softplus", {}, [rand(3, 4, low=-25, high=25)], "SoftplusBackward0"),
    ("softplus-beta", "softplus", dict(beta=3.0, threshold=4.0), [rand(3, 4, low=-3, high=3)],
     "SoftplusBackward0"),
    ("softsign", "softsign", {}, [rand(3, 4)], "DivBackward0"),
    ("hardtanh", "hardtanh", dict(min_val=-0.5, max_val=0.7), [rand(3, 4)],
     "HardtanhBackward0"),
    ("hardsigmoid", "hardsigmoid", {}, [rand(3, 4, low=-5, high=5)], "HardsigmoidBackward0"),
    ("hardswish", "hardswish", {}, [rand(3, 4, low=-5, high=5)], "HardswishBackward0"),
    ("sigmoid", "sigmoid", {}, [rand(3, 4)], "SigmoidBackward0"),
    ("tanh", "tanh", {}, [rand(3, 4)], "TanhBackward0"),
    ("logsigmoid", "logsigmoid", {}, [rand(3, 4, low=-20, high=20)], "LogSigmoidBackward0"),
    ("softmax", "softmax", dict(dim=1), [rand(3, 4)], "SoftmaxBackward0"),
    ("softmax-dtype", "softmax", dict(dim=0, dtype=torch.float64), [rand(3, 4)], None),
    ("log_softmax", "log_softmax", dict(dim=-1), [rand(2, 3, 4)], "LogSoftmaxBackward0"),
    ("softmin", "softmin", dict(dim=1), [rand(3, 4)], "SoftmaxBackward0"),
    ("glu", "glu", dict(dim=0), [rand(4, 3)], "GluBackward0"),
    ("glu-last", "glu", {}, [rand(2, 3, 6)], "GluBackward0"),
    ("prelu", "prelu", {}, [rand(3, 4, 2), np.array([0.1, 0.2, -0.3, 0.5])],
     "PreluKernelBackward0"),
    ("prelu-single", "prelu", {}, [rand(3, 4), np.array([0.25])], "PreluKernelBackward0"),
    ("linear", "linear", {}, [rand(5, 4), rand(3, 4, seed=1), rand(3, seed=2)],
     "AddmmBackward0"),
    ("linear-nobias", "linear", {}, [rand(5, 4), rand(3, 4, seed=1)], "MmBackward0"),
    ("linear-3d", "linear", {}, [rand(2, 5, 4), rand(3, 4, seed=1), rand(3, seed=2)],
     "ViewBackward0"),
    ("linear-1d", "linear", {}, [rand(4), rand(3, 4, seed=1), rand(3, seed=2)],
     "ViewBackward0"),
    ("bilinear", "bilinear", {}, [rand(5, 3), rand(5, 2, seed=1), rand(4, 3, 2, seed=2),
                                  rand(4, seed=3)], None),
    ("bilinear-3d", "bilinear", {}, [rand(2, 5, 3), rand(2, 5, 2, seed=1),
                                     rand(4, 3, 2, seed=2)], None),
    ("layer_norm", "layer_norm", dict(normalized_shape=(4,)), [rand(3, 4)],
     "NativeLayerNormBackward0"),
    ("group_norm", "group_norm", dict(num_groups=2), [rand(3, 4, 5)],
     "NativeGroupNormBackward0"),
    ("normalize", "normalize", {}, [rand(3, 4)], "DivBackward0"),
    ("normalize-p1", "normalize", dict(p=1.0, dim=0), [rand(3, 4)], "DivBackward0"),
    ("cosine_similarity", "cosine_similarity", {}, [rand(3, 4), rand(3, 4, seed=1)], None),
    ("cosine_similarity-bcast", "cosine_similarity", dict(dim=-1),
     [rand(3, 4), rand(1, 4, seed=1)], None),
    # torch shows NormBackward1 here; ember's norm is its linalg.vector_norm node
    ("pairwise_distance", "pairwise_distance", {}, [rand(3, 4), rand(3, 4, seed=1)], False),
    ("pairwise_distance-p1", "pairwise_distance", dict(p=1.0, keepdim=True),
     [rand(3, 4), rand(3, 4, seed=1)], False),
    ("threshold", "threshold", dict(threshold=0.3, value=-2.0), [rand(3, 4)], None),
    ("tanhshrink", "tanhshrink", {}, [rand(3, 4)], None),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_functional_matches_torch(case, dtype):
    _, name, kwargs, arrays, node = case
    ekw = {k: (ember.float64 if v is torch.float64 else v) for k, v in kwargs.items()}
    e_out, t_out = compare_function(lambda *a: getattr(EF, name)(*a, **ekw),
                                    lambda *a: getattr(TF, name)(*a, **kwargs), arrays, dtype)
    if node is not False:
        assert node_name(e_out) == node_name(t_out)
    if node:
        assert node_name(t_out) == node


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_batch_norm_functional(dtype):
    x = rand(4, 3, 2)
    w, b = rand(3, seed=1), rand(3, seed=2)
    for training in (True, False):
        t_rm, t_rv = torch.zeros(3, dtype=dtype), torch.ones(3, dtype=dtype) * 2
        e_rm, e_rv = em(t_rm), em(t_rv)
        compare_function(lambda x, w, b: EF.batch_norm(x, e_rm, e_rv, w, b, training, 0.2, 1e-3),
                         lambda x, w, b: TF.batch_norm(x, t_rm, t_rv, w, b, training, 0.2, 1e-3),
                         [x, w, b], dtype, rtol=1e-5 if dtype == torch.float32 else None)
        assert_close(e_rm, t_rm, rtol=1e-5, atol=1e-6)
        assert_close(e_rv, t_rv, rtol=1e-5, atol=1e-6)
    # batch statistics without running stats, and no affine parameters
    compare_function(lambda x: EF.batch_norm(x, None, None, training=True),
                     lambda x: TF.batch_norm(x, None, None, training=True), [x], dtype,
                     rtol=1e-5 if dtype == torch.float32 else None)


def test_layer_and_group_norm_with_affine():
    for dtype in (torch.float32, torch.float64):
        compare_function(lambda x, w, b: EF.layer_norm(x, (3, 4), w, b, 1e-3),
                         lambda x, w, b: TF.layer_norm(x, (3, 4), w, b, 1e-3),
                         [rand(2, 3, 4), rand(3, 4, seed=1), rand(3, 4, seed=2)], dtype,
                         rtol=1e-5 if dtype == torch.float32 else None)
        compare_function(lambda x, w, b: EF.group_norm(x, 3, w, b),
                         lambda x, w, b: TF.group_norm(x, 3, w, b),
                         [rand(2, 6, 2, 2), rand(6, seed=1), rand(6, seed=2)], dtype,
                         rtol=1e-5 if dtype == torch.float32 else None)


def test_embedding_functional():
    idx = np.array([[0, 3, 3], [1, 0, 4]])
    for kwargs in ({}, dict(padding_idx=3), dict(scale_grad_by_freq=True)):
        t_w = torch.tensor(rand(5, 2), requires_grad=True)
        e_w = em(t_w, requires_grad=True)
        t_out = TF.embedding(torch.tensor(idx), t_w, **kwargs)
        e_out = EF.embedding(ember.tensor(idx), e_w, **kwargs)
        assert_close(e_out, t_out)
        assert node_name(e_out) == node_name(t_out) == "EmbeddingBackward0"
        g = rand(2, 3, 2, seed=7)
        t_out.backward(torch.tensor(g))
        e_out.backward(ember.tensor(g))
        assert_close(e_w.grad, t_w.grad)


def test_one_hot():
    for args in ((np.array([0, 2, 1]),), (np.array([[0], [3]]), 5), (np.array([], np.int64), 3)):
        e = EF.one_hot(ember.tensor(args[0]), *args[1:])
        t = TF.one_hot(torch.tensor(args[0]), *args[1:])
        assert_close(e, t)


def test_dropout_functional_modes():
    x = ember.ones(10, 10, requires_grad=True)
    assert EF.dropout(x, 0.5, training=False) is x
    y = EF.dropout(x, 0.25)
    vals = np.unique(y.detach().numpy())
    assert len(vals) == 2
    np.testing.assert_allclose(vals, [0.0, 1 / 0.75], rtol=1e-6)
    assert node_name(y) == "MulBackward0"


ERRORS = [
    lambda F, T: F.layer_norm(T.ones(3, 4), (5,)),
    lambda F, T: F.group_norm(T.ones(3, 4, 1), 3),
    lambda F, T: F.batch_norm(T.ones(3, 4), None, None),
    lambda F, T: F.batch_norm(T.ones(1, 4), None, None, training=True),
    lambda F, T: F.embedding(T.tensor([5]), T.ones(3, 4)),
    lambda F, T: F.embedding(T.tensor([1.0]), T.ones(3, 4)),
    lambda F, T: F.embedding(T.tensor([1]), T.ones(3, 4), padding_idx=5),
    lambda F, T: F.one_hot(T.tensor([1.0])),
    lambda F, T: F.one_hot(T.tensor([-1])),
    lambda F, T: F.one_hot(T.tensor([5]), 3),
    lambda F, T: F.dropout(T.ones(2), 1.5),
    lambda F, T: F.dropout(T.ones(2), -0.1),
    lambda F, T: F.gelu(T.ones(2), approximate="foo"),
    lambda F, T: F.prelu(T.ones(2, 3), T.ones(2)),
    lambda F, T: F.celu(T.ones(2), alpha=0.0),
    lambda F, T: F.hardtanh(T.ones(2), 2.0, 1.0),
    lambda F, T: F.glu(T.ones(3)),
    lambda F, T: F.glu(T.tensor(1.0)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_functional_errors(i):
    assert outcome(lambda: ERRORS[i](EF, ember)) == outcome(lambda: ERRORS[i](TF, torch))


def test_implicit_softmax_dim_warns():
    for ef, tf in ((EF.softmax, TF.softmax), (EF.log_softmax, TF.log_softmax),
                   (EF.softmin, TF.softmin)):
        msgs = []
        outs = []
        for f, lib in ((ef, ember), (tf, torch)):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                outs.append(f(lib.tensor(rand(2, 3))).numpy())
            msgs.append([str(m.message) for m in w])
        assert msgs[0] == msgs[1] and len(msgs[0]) == 1
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)


# ---------------------------------------------------------------------------- gradcheck
def _d(*shape, seed=0, low=-2.0, high=2.0):
    return ember.tensor(rand(*shape, seed=seed, low=low, high=high), dtype=ember.float64,
                        requires_grad=True)


GRADCHECK = [
    ("gelu", lambda x: EF.gelu(x), [_d(3, 4)]),
    ("gelu-tanh", lambda x: EF.gelu(x, approximate="tanh"), [_d(3, 4)]),
    ("silu", EF.silu, [_d(3, 4)]),
    ("mish", EF.mish, [_d(3, 4)]),
    ("softplus", lambda x: EF.softplus(x, 2.0, 3.0), [_d(3, 4)]),
    ("elu", lambda x: EF.elu(x, 0.5), [_d(3, 4)]),
    ("selu", EF.selu, [_d(3, 4)]),
    ("celu", lambda x: EF.celu(x, 2.0), [_d(3, 4)]),
    ("leaky_relu", lambda x: EF.leaky_relu(x, 0.1), [_d(3, 4)]),
    ("hardtanh", EF.hardtanh, [_d(3, 4, low=-3, high=3)]),
    ("hardswish", EF.hardswish, [_d(3, 4, low=-5, high=5)]),
    ("hardsigmoid", EF.hardsigmoid, [_d(3, 4, low=-5, high=5)]),
    ("logsigmoid", EF.logsigmoid, [_d(3, 4)]),
    ("prelu", EF.prelu, [_d(2, 3, 2), _d(3, seed=1)]),
    ("layer_norm", lambda x, w, b: EF.layer_norm(x, (4,), w, b), [_d(3, 4), _d(4, seed=1),
                                                                  _d(4, seed=2)]),
    ("group_norm", lambda x, w, b: EF.group_norm(x, 2, w, b), [_d(2, 4, 3), _d(4, seed=1),
                                                               _d(4, seed=2)]),
    ("batch_norm-train", lambda x, w, b: EF.batch_norm(x, None, None, w, b, True),
     [_d(4, 3), _d(3, seed=1), _d(3, seed=2)]),
    ("batch_norm-eval", lambda x, w, b: EF.batch_norm(
        x, ember.tensor([0.1, 0.2, -0.3], dtype=ember.float64),
        ember.tensor([1.5, 0.5, 2.0], dtype=ember.float64), w, b, False),
     [_d(4, 3, 2), _d(3, seed=1), _d(3, seed=2)]),
    ("embedding", lambda w: EF.embedding(ember.tensor([[0, 2], [2, 1]]), w), [_d(3, 2)]),
    ("glu", lambda x: EF.glu(x, 1), [_d(2, 4)]),
    ("bilinear", EF.bilinear, [_d(2, 3), _d(2, 2, seed=1), _d(2, 3, 2, seed=2)]),
]


@pytest.mark.parametrize("case", GRADCHECK, ids=[c[0] for c in GRADCHECK])
def test_gradcheck_and_gradgradcheck(case):
    name, fn, inputs = case
    assert gradcheck(fn, inputs)
    if name == "hardsigmoid":       # torch has no double backward for it, and says so
        with pytest.raises(RuntimeError, match="derivative for aten::hardsigmoid_backward is "
                                               "not implemented"):
            gradgradcheck(fn, inputs)
        return
    assert gradgradcheck(fn, inputs)


# ---------------------------------------------------------------------------- property sweep
from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4), k=st.integers(1, 3),
       affine=st.booleans(), seed=st.integers(0, 1000))
def test_layer_norm_sweep(shape, k, affine, seed):
    k = min(k, len(shape))
    normalized = tuple(shape[-k:])
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape)]
    if affine:
        arrays += [rng.standard_normal(normalized), rng.standard_normal(normalized)]
    compare_function(lambda *a: EF.layer_norm(a[0], normalized, *a[1:]),
                     lambda *a: TF.layer_norm(a[0], normalized, *a[1:]), arrays, torch.float64)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 4), groups=st.integers(1, 3), per_group=st.integers(1, 3),
       spatial=st.lists(st.integers(1, 3), max_size=2), training=st.booleans(),
       seed=st.integers(0, 1000))
def test_batch_and_group_norm_sweep(n, groups, per_group, spatial, training, seed):
    c = groups * per_group
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, *spatial))
    w, b = rng.standard_normal(c), rng.standard_normal(c)
    compare_function(lambda x, w, b: EF.group_norm(x, groups, w, b),
                     lambda x, w, b: TF.group_norm(x, groups, w, b), [x, w, b], torch.float64)
    t_rm, t_rv = torch.tensor(rng.standard_normal(c)), torch.tensor(rng.uniform(0.5, 2, c))
    e_rm, e_rv = em(t_rm), em(t_rv)
    compare_function(lambda x, w, b: EF.batch_norm(x, e_rm, e_rv, w, b, training, 0.3),
                     lambda x, w, b: TF.batch_norm(x, t_rm, t_rv, w, b, training, 0.3),
                     [x, w, b], torch.float64)
    assert_close(e_rm, t_rm)
    assert_close(e_rv, t_rv)
