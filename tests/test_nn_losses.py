"""Loss functions and loss modules against torch: values, gradients (input and target), node
names, reductions, options, error messages and warnings; gradcheck of the loss primitives."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as EF
from ember.autograd import gradcheck, gradgradcheck
from nn_helpers import (compare_function, rand, node_name, outcome, em,
                        torch_repr, make_inputs, compare_outputs_and_grads)
from differential import catch, same, warnings_of
from opinfo import graph_names

RNG = np.random.default_rng(0)


def labels(high, *shape, seed=0):
    return np.random.default_rng(seed).integers(0, high, shape)


def probs(*shape, seed=0):
    p = np.random.default_rng(seed).uniform(0.05, 1, shape)
    return p / p.sum(axis=1, keepdims=True)


def prob01(*shape, seed=0):
    return np.random.default_rng(seed).uniform(0.02, 0.98, shape)


def run_loss(name, arrays, kwargs, dtype, extra_tensors=(), rtol=None, atol=None):
    """Compare F.<name>(*inputs, **kwargs); kwargs may hold numpy arrays (class weights ...)
    which become tensors of `dtype` on each side."""
    def convert(lib, value):
        if isinstance(value, np.ndarray):
            t = lib.tensor(value)
            return t.to(lib.float64 if dtype == torch.float64 else lib.float32) \
                if value.dtype.kind == "f" else t
        return value
    ekw = {k: convert(ember, v) for k, v in kwargs.items()}
    tkw = {k: convert(torch, v) for k, v in kwargs.items()}
    return compare_function(lambda *a: getattr(EF, name)(*a, **ekw),
                            lambda *a: getattr(TF, name)(*a, **tkw), arrays, dtype, rtol, atol)


REDUCTIONS = ["mean", "sum", "none"]

# (id, function, inputs, kwargs, torch node name for the 'mean' reduction or None)
CASES = [
    ("cross_entropy", "cross_entropy", [rand(5, 4), labels(4, 5)], {}, "NllLossBackward0"),
    ("cross_entropy-1d", "cross_entropy", [rand(4), np.array(2)], {}, "NllLossBackward0"),
    ("cross_entropy-weight", "cross_entropy", [rand(5, 4), labels(4, 5)],
     dict(weight=np.array([0.1, 2.0, 1.0, 0.5])), "NllLossBackward0"),
    ("cross_entropy-ignore", "cross_entropy", [rand(5, 4), np.array([0, 1, -100, 3, 1])], {},
     "NllLossBackward0"),
    ("cross_entropy-ignore-1", "cross_entropy", [rand(5, 4), np.array([0, 1, 1, 3, 1])],
     dict(ignore_index=1, weight=np.array([0.1, 2.0, 1.0, 0.5])), "NllLossBackward0"),
    ("cross_entropy-smooth", "cross_entropy", [rand(5, 4), labels(4, 5)],
     dict(label_smoothing=0.2), "AddBackward0"),
    ("cross_entropy-smooth-weight-ignore", "cross_entropy",
     [rand(5, 4), np.array([0, 2, 2, 3, 1])],
     dict(label_smoothing=0.1, weight=np.array([0.1, 2.0, 1.0, 0.5]), ignore_index=2),
     "AddBackward0"),
    # torch divides by a Python number (DivBackward1); ember's core names every division
    # DivBackward0, so the node is not compared for this composite
    ("cross_entropy-probs", "cross_entropy", [rand(5, 4), probs(5, 4)], {}, False),
    ("cross_entropy-probs-smooth-weight", "cross_entropy", [rand(5, 4), probs(5, 4)],
     dict(label_smoothing=0.3, weight=np.array([0.1, 2.0, 1.0, 0.5])), False),
    ("cross_entropy-4d", "cross_entropy", [rand(2, 3, 4, 5), labels(3, 2, 4, 5)], {},
     "NllLoss2DBackward0"),
    ("cross_entropy-3d", "cross_entropy", [rand(2, 3, 4), labels(3, 2, 4)], {},
     "NllLoss2DBackward0"),
    ("cross_entropy-5d", "cross_entropy", [rand(2, 3, 2, 2, 3), labels(3, 2, 2, 2, 3)], {},
     "NllLoss2DBackward0"),
    ("cross_entropy-4d-weight-ignore", "cross_entropy",
     [rand(2, 3, 2, 2), np.array([[[0, 2], [1, 7]], [[7, 1], [2, 2]]])],
     dict(weight=np.array([1.0, 0.5, 3.0]), ignore_index=7), "NllLoss2DBackward0"),
    ("cross_entropy-4d-smooth-weight", "cross_entropy", [rand(2, 3, 2, 2), labels(3, 2, 2, 2)],
     dict(label_smoothing=0.25, weight=np.array([1.0, 0.5, 3.0])), "AddBackward0"),
    ("cross_entropy-1d-smooth", "cross_entropy", [rand(4), np.array(1)],
     dict(label_smoothing=0.25), "AddBackward0"),
    ("cross_entropy-uint8-target", "cross_entropy", [rand(5, 4), labels(4, 5).astype(np.uint8)],
     {}, "NllLossBackward0"),
    ("cross_entropy-4d-probs", "cross_entropy", [rand(2, 3, 2, 2), probs(2, 3, 2, 2)], {},
     False),
    ("nll_loss", "nll_loss", [rand(5, 4), labels(4, 5)], {}, "NllLossBackward0"),
    ("nll_loss-weight", "nll_loss", [rand(5, 4), labels(4, 5)],
     dict(weight=np.array([0.1, 2.0, 1.0, 0.5])), "NllLossBackward0"),
    ("nll_loss-4d", "nll_loss", [rand(2, 3, 2, 2), labels(3, 2, 2, 2)], {},
     "NllLoss2DBackward0"),
    ("mse_loss", "mse_loss", [rand(3, 4), rand(3, 4, seed=1)], {}, "MseLossBackward0"),
    ("l1_loss", "l1_loss", [rand(3, 4), rand(3, 4, seed=1)], {}, "MeanBackward0"),
    ("smooth_l1_loss", "smooth_l1_loss", [rand(3, 4), rand(3, 4, seed=1)], {},
     "SmoothL1LossBackward0"),
    ("smooth_l1_loss-beta", "smooth_l1_loss", [rand(3, 4), rand(3, 4, seed=1)],
     dict(beta=0.5), "SmoothL1LossBackward0"),
    ("smooth_l1_loss-beta0", "smooth_l1_loss", [rand(3, 4), rand(3, 4, seed=1)],
     dict(beta=0.0), None),
    ("huber_loss", "huber_loss", [rand(3, 4), rand(3, 4, seed=1)], {}, "HuberLossBackward0"),
    ("huber_loss-delta", "huber_loss", [rand(3, 4), rand(3, 4, seed=1)], dict(delta=0.3),
     "HuberLossBackward0"),
    ("bce", "binary_cross_entropy", [prob01(3, 4), prob01(3, 4, seed=1)], {},
     "BinaryCrossEntropyBackward0"),
    ("bce-weight", "binary_cross_entropy", [prob01(3, 4), prob01(3, 4, seed=1)],
     dict(weight=np.array([1.0, 2.0, 0.5, 0.1])), "BinaryCrossEntropyBackward0"),
    ("bce-saturated", "binary_cross_entropy", [np.array([0.0, 1.0, 0.5, 1e-30]),
                                               np.array([1.0, 0.0, 1.0, 1.0])], {}, None),
    ("bce_logits", "binary_cross_entropy_with_logits", [rand(3, 4, low=-30, high=30),
                                                        prob01(3, 4, seed=1)], {},
     "BinaryCrossEntropyWithLogitsBackward0"),
    ("bce_logits-pos_weight", "binary_cross_entropy_with_logits",
     [rand(3, 4, low=-5, high=5), prob01(3, 4, seed=1)],
     dict(pos_weight=np.array([1.0, 3.0, 0.5, 2.0]), weight=np.array([0.5, 1.0, 1.0, 2.0])),
     "BinaryCrossEntropyWithLogitsBackward0"),
    ("kl_div-batchmean", "kl_div", [np.log(probs(3, 4)), probs(3, 4, seed=1)],
     dict(reduction="batchmean"), None),
    ("kl_div-log_target", "kl_div", [np.log(probs(3, 4)), np.log(probs(3, 4, seed=1))],
     dict(log_target=True), None),
    ("kl_div-zero-target", "kl_div", [np.log(probs(2, 3)), np.array([[0.5, 0.5, 0.0],
                                                                     [0.0, 1.0, 0.0]])],
     {}, None),
    ("cosine_embedding", "cosine_embedding_loss", [rand(5, 3), rand(5, 3, seed=1),
                                                   np.array([1, -1, 1, -1, -1])],
     dict(margin=0.2), None),
    # torch's clamp_min node is ClampMinBackward0, ember's core shows ClampBackward1
    ("margin_ranking", "margin_ranking_loss", [rand(5), rand(5, seed=1),
                                               np.array([1.0, -1.0, 1.0, -1.0, 1.0])],
     dict(margin=0.1), False),
    ("hinge_embedding", "hinge_embedding_loss", [rand(5), np.array([1.0, -1, 1, -1, -1])], {},
     None),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_loss_matches_torch(case, reduction, dtype):
    _, name, arrays, kwargs, node = case
    kwargs = dict(kwargs)
    if "reduction" in kwargs:
        if reduction != "mean":
            return  # 'batchmean' case: the reduction is the point of the case
    else:
        kwargs["reduction"] = reduction
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # kl_div's 'mean' warning, compared elsewhere
        e_out, t_out = run_loss(name, arrays, kwargs, dtype)
    if node is not False:
        assert node_name(e_out) == node_name(t_out)
    if node and reduction == "mean":
        assert node_name(t_out) == node


def test_target_gradients():
    """Losses that are differentiable in their target too."""
    for name, arrays in (("mse_loss", [rand(3, 4), rand(3, 4, seed=1)]),
                         ("smooth_l1_loss", [rand(3, 4), rand(3, 4, seed=1)]),
                         ("huber_loss", [rand(3, 4), rand(3, 4, seed=1)]),
                         ("l1_loss", [rand(3, 4), rand(3, 4, seed=1)]),
                         ("binary_cross_entropy", [prob01(3, 4), prob01(3, 4, seed=1)]),
                         ("binary_cross_entropy_with_logits", [rand(3, 4),
                                                               prob01(3, 4, seed=1)]),
                         ("kl_div", [np.log(probs(3, 4)), probs(3, 4, seed=1)])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run_loss(name, arrays, dict(reduction="sum"), torch.float64)


def test_soft_margin_loss():
    x = rand(5)
    y = np.array([1.0, -1, 1, -1, -1])
    for reduction in REDUCTIONS:
        t_x = torch.tensor(x, requires_grad=True)
        e_x = em(t_x, requires_grad=True)
        t_out = TF.soft_margin_loss(t_x, torch.tensor(y), reduction=reduction)
        e_out = EF.soft_margin_loss(e_x, ember.tensor(y), reduction=reduction)
        compare_outputs_and_grads(e_out, t_out, [e_x], [t_x])


def test_all_targets_ignored():
    x = rand(3, 4)
    for reduction in REDUCTIONS:
        for lib, F in ((torch, TF), (ember, EF)):
            X = lib.tensor(x, requires_grad=True)
            loss = F.cross_entropy(X, lib.tensor([-100, -100, -100]), reduction=reduction)
            loss.sum().backward()
            if lib is torch:
                expected = (loss.detach().numpy(), X.grad.numpy())
            else:
                np.testing.assert_array_equal(loss.detach().numpy(), expected[0])
                np.testing.assert_array_equal(X.grad.numpy(), expected[1])


def test_cross_entropy_graph_shape():
    x = ember.randn(3, 4, requires_grad=True)
    loss = EF.cross_entropy(x, ember.tensor([0, 1, 2]))
    assert node_name(loss) == "NllLossBackward0"
    assert loss.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"


def test_mse_broadcast_warning():
    msgs = []
    for F, T in ((EF, ember), (TF, torch)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = F.mse_loss(T.ones(3, 4), T.zeros(4))
        msgs.append(([str(m.message).replace("torch.", "ember.") for m in w], out.item()))
    assert msgs[0] == msgs[1]


def test_kl_div_mean_warning_and_legacy_args():
    for fn in (lambda F, T: F.kl_div(T.zeros(2, 2), T.ones(2, 2)),
               lambda F, T: F.mse_loss(T.zeros(2), T.ones(2), size_average=False),
               lambda F, T: F.l1_loss(T.zeros(2), T.ones(2), reduce=False)):
        seen = []
        for F, T in ((EF, ember), (TF, torch)):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                out = fn(F, T)
            seen.append(([str(m.message) for m in w], out.tolist()))
        assert seen[0] == seen[1]


ERRORS = [
    lambda F, T: F.cross_entropy(T.ones(3, 4), T.rand(3, 5)),
    lambda F, T: F.cross_entropy(T.ones(3, 4), T.rand(3)),
    lambda F, T: F.cross_entropy(T.ones(3, 4), T.tensor([0, 1, 5])),
    lambda F, T: F.nll_loss(T.ones(3, 4), T.tensor([0, 1, 5])),
    lambda F, T: F.nll_loss(T.ones(3, 4), T.tensor([0, 1, -1])),
    lambda F, T: F.cross_entropy(T.ones(3, 4), T.tensor([0, 1])),
    lambda F, T: F.nll_loss(T.ones(3, 4), T.tensor([0.0, 1, 1])),
    lambda F, T: F.cross_entropy(T.ones(1, 3, 4), T.zeros(1, 3, dtype=T.long)),
    lambda F, T: F.cross_entropy(T.ones(1, 3, 2, 2), T.zeros(1, 2, 3, dtype=T.long)),
    lambda F, T: F.nll_loss(T.ones(3, 4), T.tensor([0, 1, 1]), weight=T.ones(3)),
    lambda F, T: F.cross_entropy(T.ones(3, 4), T.tensor([0, 1, 2]), label_smoothing=1.5),
    lambda F, T: F.cross_entropy(T.ones(3, 4), T.tensor([0, 1, 2]).int()),
    lambda F, T: F.nll_loss(T.ones(3, 4), T.tensor(1)),
    lambda F, T: F.mse_loss(T.ones(3, 4), T.ones(5)),
    lambda F, T: F.mse_loss(T.ones(3, 4), T.ones(3, 4), reduction="foo"),
    lambda F, T: F.kl_div(T.ones(3, 4), T.ones(3, 4), reduction="foo"),
    lambda F, T: F.binary_cross_entropy(T.rand(3), T.rand(2)),
    lambda F, T: F.binary_cross_entropy(T.ones(3) * 2, T.rand(3)),
    lambda F, T: F.binary_cross_entropy_with_logits(T.rand(3), T.rand(2)),
    lambda F, T: F.smooth_l1_loss(T.ones(3), T.ones(3), beta=-1.0),
    lambda F, T: F.cross_entropy(T.ones(3, 4).double(), T.tensor([0, 1, 2]), weight=T.ones(4)),
    lambda F, T: F.cross_entropy(T.ones(0, 4), T.zeros(0, dtype=T.long)).item(),
    lambda F, T: F.cross_entropy(T.ones(3, 4), T.tensor([-100, -100, -100])).item(),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_loss_errors(i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert outcome(lambda: ERRORS[i](EF, ember)) == outcome(lambda: ERRORS[i](TF, torch))


# ---------------------------------------------------------------------------- modules
MODULES = [
    ("CrossEntropyLoss", lambda nn, T: nn.CrossEntropyLoss(
        weight=T.tensor([1.0, 2.0, 0.5]), ignore_index=1, label_smoothing=0.1),
     [rand(4, 3), np.array([0, 1, 2, 2])]),
    ("CrossEntropyLoss-sum", lambda nn, T: nn.CrossEntropyLoss(reduction="sum"),
     [rand(4, 3), np.array([0, 1, 2, 2])]),
    ("NLLLoss", lambda nn, T: nn.NLLLoss(), [rand(4, 3), np.array([0, 1, 2, 2])]),
    ("MSELoss", lambda nn, T: nn.MSELoss(reduction="none"), [rand(4, 3), rand(4, 3, seed=1)]),
    ("L1Loss", lambda nn, T: nn.L1Loss(), [rand(4, 3), rand(4, 3, seed=1)]),
    ("SmoothL1Loss", lambda nn, T: nn.SmoothL1Loss(beta=0.5), [rand(4, 3), rand(4, 3, seed=1)]),
    ("HuberLoss", lambda nn, T: nn.HuberLoss(delta=0.5), [rand(4, 3), rand(4, 3, seed=1)]),
    ("BCELoss", lambda nn, T: nn.BCELoss(weight=T.tensor([1.0, 0.5, 2.0])),
     [prob01(4, 3), prob01(4, 3, seed=1)]),
    ("BCEWithLogitsLoss", lambda nn, T: nn.BCEWithLogitsLoss(pos_weight=T.tensor([1.0, 3.0, 2.0])),
     [rand(4, 3), prob01(4, 3, seed=1)]),
    ("KLDivLoss", lambda nn, T: nn.KLDivLoss(reduction="batchmean", log_target=True),
     [np.log(probs(4, 3)), np.log(probs(4, 3, seed=1))]),
    ("CosineEmbeddingLoss", lambda nn, T: nn.CosineEmbeddingLoss(margin=0.1),
     [rand(4, 3), rand(4, 3, seed=1), np.array([1, -1, -1, 1])]),
    ("MarginRankingLoss", lambda nn, T: nn.MarginRankingLoss(margin=0.3),
     [rand(4), rand(4, seed=1), np.array([1.0, -1, -1, 1])]),
]


@pytest.mark.parametrize("case", MODULES, ids=[c[0] for c in MODULES])
def test_loss_modules(case):
    _, build, arrays = case
    e_mod, t_mod = build(ember.nn, ember), build(torch.nn, torch)
    assert repr(e_mod) == torch_repr(t_mod)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    t_in, e_in = make_inputs(arrays, torch.float32)
    compare_outputs_and_grads(e_mod(*e_in), t_mod(*t_in), e_in, t_in)


def test_loss_module_defaults():
    for name in ("CrossEntropyLoss", "BCEWithLogitsLoss", "MSELoss", "KLDivLoss"):
        e, t = getattr(ember.nn, name)(), getattr(torch.nn, name)()
        assert repr(e) == repr(t) and e.reduction == t.reduction
        assert list(e.state_dict()) == list(t.state_dict())
    e, t = ember.nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss()
    assert (e.ignore_index, e.label_smoothing) == (t.ignore_index, t.label_smoothing)


# ---------------------------------------------------------------------------- gradcheck
def _d(*shape, seed=0, low=-2.0, high=2.0):
    return ember.tensor(rand(*shape, seed=seed, low=low, high=high), dtype=ember.float64,
                        requires_grad=True)


def _p(*shape, seed=0):
    return ember.tensor(prob01(*shape, seed=seed), dtype=ember.float64, requires_grad=True)


GRADCHECK = [
    ("nll_loss", lambda x: EF.nll_loss(x, ember.tensor([0, 2, 1]),
                                       weight=ember.tensor([1.0, 2.0, 0.5],
                                                           dtype=ember.float64)), [_d(3, 3)]),
    ("nll_loss-none", lambda x: EF.nll_loss(x, ember.tensor([0, 2, 1]), reduction="none"),
     [_d(3, 3)]),
    ("nll_loss2d", lambda x: EF.nll_loss(x, ember.tensor([[[0, 2], [1, 1]]])), [_d(1, 3, 2, 2)]),
    ("cross_entropy", lambda x: EF.cross_entropy(x, ember.tensor([0, 2, 1]),
                                                 label_smoothing=0.2), [_d(3, 3)]),
    ("mse_loss", lambda x, y: EF.mse_loss(x, y), [_d(2, 3), _d(2, 3, seed=1)]),
    ("smooth_l1", lambda x, y: EF.smooth_l1_loss(x, y, reduction="sum", beta=0.7),
     [_d(2, 3), _d(2, 3, seed=1)]),
    ("huber", lambda x, y: EF.huber_loss(x, y, reduction="none", delta=0.6),
     [_d(2, 3), _d(2, 3, seed=1)]),
    ("bce", lambda x, y: EF.binary_cross_entropy(x, y), [_p(2, 3), _p(2, 3, seed=1)]),
    ("bce_logits", lambda x, y: EF.binary_cross_entropy_with_logits(x, y),
     [_d(2, 3), _p(2, 3, seed=1)]),
    ("bce_logits-pos_weight", lambda x, y: EF.binary_cross_entropy_with_logits(
        x, y, pos_weight=ember.tensor([1.0, 2.0, 0.5], dtype=ember.float64)),
     [_d(2, 3), _p(2, 3, seed=1)]),
]


@pytest.mark.parametrize("case", GRADCHECK, ids=[c[0] for c in GRADCHECK])
def test_loss_gradcheck(case):
    _, fn, inputs = case
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


# ---------------------------------------------------------------------------- property sweep
from hypothesis import given, settings, strategies as st  # noqa: E402
from nn_helpers import param_grads as _grads


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 4), c=st.integers(1, 5), spatial=st.lists(st.integers(1, 3), max_size=3),
       smoothing=st.sampled_from([0.0, 0.3]), weighted=st.booleans(),
       reduction=st.sampled_from(REDUCTIONS), seed=st.integers(0, 1000))
def test_cross_entropy_sweep(n, c, spatial, smoothing, weighted, reduction, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, *spatial))
    target = rng.integers(0, c, (n, *spatial))
    target[rng.random(target.shape) < 0.2] = -100            # some ignored positions
    kwargs = dict(reduction=reduction, label_smoothing=smoothing)
    if weighted:
        kwargs["weight"] = rng.uniform(0.1, 2.0, c)
    run_loss("cross_entropy", [x, target], kwargs, torch.float64)


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- losses
@pytest.mark.parametrize("loss", ["MSELoss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss",
                                  "BCEWithLogitsLoss", "L1Loss", "KLDivLoss"])
def test_mean_loss_of_nothing_is_nan_without_warnings(loss):
    def f(T):
        fn = getattr(T.nn, loss)(reduction="mean" if loss != "KLDivLoss" else "batchmean")
        return warnings_of(lambda: catch(fn, T.zeros(0), T.zeros(0)))
    same(f)


def test_cross_entropy_probability_target_refuses_ignore_index():
    x = randn(3, 4)
    same(lambda T: [catch(T.nn.functional.cross_entropy, T.tensor(x),
                          T.softmax(T.tensor(x), 1), ignore_index=i) for i in (1, -100)])


@pytest.mark.parametrize("smoothing", [-0.1, -1.0, float("nan"), 1.0, 1.5])
def test_cross_entropy_label_smoothing_out_of_range(smoothing):
    x = randn(3, 4)
    same(lambda T: [catch(T.nn.functional.cross_entropy, T.tensor(x), y,
                          label_smoothing=smoothing)
                    for y in (T.tensor([0, 1, 2]), T.softmax(T.tensor(x) * 2, 1))])


def test_binary_cross_entropy_range_and_dtype_errors():
    def f(T):
        F = T.nn.functional
        h = T.full((2,), 0.5)
        return [catch(F.binary_cross_entropy, x, y) for x, y in [
            (T.tensor([0.5, 1.5]), T.tensor([0., 1.])), (T.tensor([0.5, 0.5]), T.tensor([2., -1.])),
            (T.tensor([0.5, float("nan")]), T.tensor([1., 0.])),
            (T.tensor([0.5, 0.5]), T.tensor([float("nan"), 0.])),
            (h.double(), h), (h, h.double()), (h, h.half())]] + \
            [catch(F.binary_cross_entropy, h, h, weight=h.double())]
    same(f)


def test_binary_cross_entropy_weight_broadcast_errors():
    def f(T):
        x = T.full((2, 3), 0.5)
        return [catch(T.nn.functional.binary_cross_entropy, x, x, weight=T.ones(*s))
                for s in [(4,), (2, 1), (1, 3), (3, 2, 3), (2, 2, 3), (3, 1), (5, 3), (5, 4)]]
    same(f)


def test_bce_with_logits_weight_shape_errors_and_result_dtype():
    def f(T):
        F = T.nn.functional
        x, y = T.zeros(2, 3, 4), T.zeros(2, 3, 4)
        out = [catch(F.binary_cross_entropy_with_logits, x, y, pos_weight=T.ones(3)),
               catch(F.binary_cross_entropy_with_logits, x, y, weight=T.ones(3))]
        h = T.full((2,), 0.3)
        for a, b in [(h.double(), h), (h, h.double())]:
            for reduction in ("mean", "none"):
                a, b = a.clone().requires_grad_(), b.clone().requires_grad_()
                loss = F.binary_cross_entropy_with_logits(a, b, pos_weight=T.tensor([2., 3.]),
                                                          reduction=reduction)
                out += [loss, T.autograd.grad(loss.sum(), (a, b))]
        return out
    same(f)


def test_soft_margin_loss_broadcasting():
    same(lambda T: [catch(T.nn.functional.soft_margin_loss, T.zeros(a), T.ones(b)) for a, b in
                    [((3,), (3, 1)), ((3, 1), (3,)), ((3,), (4,)), ((1, 3), (2, 3)),
                     ((2, 3), (3,))]])


RNG_more = np.random.default_rng(11)


def randn_more(*shape, dtype=np.float32):
    return RNG_more.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- NLLLoss2d
def test_nll_loss_2d_deprecated_alias():
    x = randn_more(2, 3, 4, 5)
    target = RNG_more.integers(0, 3, (2, 4, 5))

    def scenario(T):
        module, caught = warnings_of(lambda: T.nn.NLLLoss2d(ignore_index=1, reduction="sum"))
        logp = T.tensor(x, requires_grad=True).log_softmax(1)
        loss = module(logp, T.tensor(target))
        return (repr(module), caught, isinstance(module, T.nn.NLLLoss), loss,
                graph_names(loss.grad_fn))
    same(scenario)


def _x(T, shape, dtype="float64", seed=0, requires_grad=False):
    data = np.random.default_rng(seed).standard_normal(shape)
    return T.tensor(data, dtype=getattr(T, dtype), requires_grad=requires_grad)


def _load_same(T, module, seed=1):
    """Give every parameter and buffer of `module` seeded values (the same under both)."""
    state = {k: _x(T, tuple(v.shape), str(v.dtype).split(".")[-1], seed + i)
             if v.dtype.is_floating_point else v
             for i, (k, v) in enumerate(module.state_dict().items())}
    module.load_state_dict(state)
    return module


# ----------------------------------------------------------------------------- linear_cross_entropy
LCE_CASES = [dict(), dict(reduction="sum"), dict(reduction="none"), dict(ignore_index=1),
             dict(label_smoothing=0.2), dict(weight=True), dict(weight=True, reduction="none"),
             dict(bias=True)]


@pytest.mark.parametrize("kw", LCE_CASES)
@pytest.mark.parametrize("out_features", [(), (2,), (2, 3)])
def test_linear_cross_entropy_loss(kw, out_features):
    def scenario(T):
        kw2 = dict(kw)
        if kw2.pop("weight", False):
            kw2["weight"] = _x(T, (5,), seed=9).abs()
        m = _load_same(T, T.nn.LinearCrossEntropyLoss(4, 5, out_features=out_features,
                                                       dtype=T.float64, **kw2))
        x = _x(T, (3, 4), requires_grad=True)
        t = T.tensor(np.random.default_rng(2).integers(0, 5, (3,) + out_features))
        t[0].fill_(1)
        loss = m(x, t)
        loss.sum().backward()
        # class probabilities
        p = _x(T, (3, 5) + out_features, seed=4).softmax(1)
        probs = catch(m, x, p)
        return repr(m), loss, x.grad, _grads(m), probs, list(m.state_dict())
    same(scenario)


def test_linear_cross_entropy_functional():
    def scenario(T):
        F = T.nn.functional
        x = _x(T, (3, 4), requires_grad=True)
        w = _x(T, (5, 2, 4), seed=1, requires_grad=True)
        b = _x(T, (5, 2), seed=2, requires_grad=True)
        t = T.tensor([[0, 4], [2, 2], [1, 3]])
        y = F.linear_cross_entropy(x, w, t, linear_bias=b)
        y.backward()
        opts = T.nn.LinearCrossEntropyOptions()
        w2 = w.detach()[:, 0]
        out = [y, x.grad, w.grad, b.grad, repr(opts),
               F.linear_cross_entropy(x[0], w2, T.tensor(3)),
               F.linear_cross_entropy(x, w2, t[:, 0], options=opts),
               warnings_of(lambda: F.linear_cross_entropy(x, w, t, options=opts)),
               warnings_of(lambda: F.linear_cross_entropy(x, w2, t[:, 0], options=opts,
                                                          label_smoothing=0.1))]
        bad = [lambda: F.linear_cross_entropy(x[None], w2, t),
               lambda: F.linear_cross_entropy(x, w2[0], t),
               lambda: F.linear_cross_entropy(x, w2[:, :3], t),
               lambda: F.linear_cross_entropy(x, w, t, linear_bias=b[:, 0]),
               lambda: F.linear_cross_entropy(x[0], w, t),
               lambda: F.linear_cross_entropy(x, w2, _x(T, (3, 5)), ignore_index=0),
               lambda: T.nn.LinearCrossEntropyLoss(4, 5, weight=_x(T, (4,))),
               lambda: T.nn.LinearCrossEntropyLoss(4, 5, label_smoothing=1.5),
               lambda: T.nn.LinearCrossEntropyOptions(acc_policy="x"),
               lambda: T.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:0"),
               lambda: T.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
               lambda: T.nn.LinearCrossEntropyOptions(acc_dtype=T.int32)]
        return out, [catch(f) for f in bad], repr(T.nn.LinearCrossEntropyOptions(
            chunking_method="aspect_ratio:2", acc_dtype=T.float32))
    same(scenario)


def f(T):
    return T.nn.functional


def _np(t):
    return t.detach().cpu().numpy()


def test_loss_modules_match_torch():
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-1, 1, (4, 5)), rng.uniform(-1, 1, (4, 5))
    var = rng.uniform(0.5, 2, (4, 5))
    cases = [
        (lambda nn, T: nn.GaussianNLLLoss(full=True, reduction="sum"),
         lambda T: (T.tensor(x, requires_grad=True), T.tensor(y), T.tensor(var))),
        (lambda nn, T: nn.PoissonNLLLoss(log_input=False, eps=0.1),
         lambda T: (T.tensor(np.abs(x), requires_grad=True), T.tensor(np.abs(y)))),
        (lambda nn, T: nn.MultiMarginLoss(p=2, margin=0.3, weight=T.arange(1.0, 6.0,
                                                                          dtype=T.float64)),
         lambda T: (T.tensor(x, requires_grad=True), T.tensor([4, 0, 2, 2]))),
        (lambda nn, T: nn.MultiLabelMarginLoss(reduction="sum"),
         lambda T: (T.tensor(x, requires_grad=True),
                    T.tensor([[1, 2, -1, 0, 0], [4, -1, 1, 1, 1], [0, 1, 2, 3, 4],
                              [-1, 0, 0, 0, 0]]))),
        (lambda nn, T: nn.MultiLabelSoftMarginLoss(weight=T.linspace(0.5, 1.5, 5,
                                                                     dtype=T.float64)),
         lambda T: (T.tensor(x, requires_grad=True), T.tensor((y > 0).astype(np.float64)))),
    ]
    for make_loss, make_args in cases:
        results = []
        for T in (torch, ember):
            args = make_args(T)
            loss = make_loss(T.nn, T)(*args)
            loss.backward()
            results.append((_np(loss), _np(args[0].grad), loss.grad_fn.name()))
        (tl, tg, tn), (el, eg, en) = results
        assert en == tn
        np.testing.assert_allclose(el, tl, rtol=1e-10)
        np.testing.assert_allclose(eg, tg, rtol=1e-10, atol=1e-12)


def test_loss_errors_match_torch():
    def scenario(T):
        F_, x = f(T), T.ones(3, 5)
        t = T.tensor([0, 1, 2])
        return [
            catch(F_.gaussian_nll_loss, x, x, T.ones(3, 4)),
            catch(F_.gaussian_nll_loss, x, x, T.ones(1)),
            catch(F_.gaussian_nll_loss, x, x, -T.ones(3, 5)),
            catch(F_.gaussian_nll_loss, x, x, T.ones(3, 5), reduction="foo"),
            catch(F_.poisson_nll_loss, x, x, reduction="foo"),
            catch(F_.multi_margin_loss, x, t, p=3),
            catch(F_.multi_margin_loss, x, T.tensor([0, 1, 7])),
            catch(F_.multi_margin_loss, x, T.tensor([0, -1, 2])),
            catch(F_.multi_margin_loss, x, T.tensor([0, 1])),
            catch(F_.multi_margin_loss, x, t, weight=T.ones(4)),
            catch(F_.multi_margin_loss, x, t, weight=T.ones(5, 1)),
            catch(F_.multi_margin_loss, T.ones(2, 3, 4), t),
            catch(F_.multi_margin_loss, x, t.float()),
            catch(F_.multi_margin_loss, x, t, reduction="foo"),
            catch(F_.multilabel_margin_loss, x, T.tensor([[0, 1]])),
            catch(F_.multilabel_margin_loss, x, T.full((3, 5), 7)),
            catch(F_.multilabel_margin_loss, x, T.tensor([[0, -1, 7, 0, 0]] * 3)),
            catch(F_.multilabel_margin_loss, x, T.tensor([[-2, -1, 0, 0, 0]] * 3)),
            catch(F_.multilabel_margin_loss, T.ones(2, 3, 4), T.zeros(2, 3, 4, dtype=T.long)),
            catch(F_.multilabel_margin_loss, x, T.zeros(3, 5)),
            catch(F_.multilabel_soft_margin_loss, x, T.ones(3, 4)),
            catch(F_.triplet_margin_with_distance_loss, x, x, x, margin=0.0),
            catch(F_.triplet_margin_with_distance_loss, x, x, x[0]),
            catch(F_.triplet_margin_with_distance_loss, x, x, x, reduction="foo"),
            catch(T.nn.MultiMarginLoss, p=3),
            catch(T.nn.MultiMarginLoss, weight=T.ones(2, 2)),
            catch(T.nn.TripletMarginLoss, margin=0),
            catch(T.nn.TripletMarginWithDistanceLoss, margin=-1),
        ]
    same(scenario)


def test_gaussian_nll_scalar_and_1d_shapes():
    def scenario(T):
        F_ = f(T)
        x = T.linspace(-1, 1, 5, requires_grad=True)
        return [F_.gaussian_nll_loss(x, T.zeros(5), T.full((1,), 0.5)),
                F_.gaussian_nll_loss(x, T.zeros(5), 0.5, reduction="none")]
    same(scenario)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 4), c=st.integers(1, 6), seed=st.integers(0, 1000),
       reduction=st.sampled_from(["none", "mean", "sum"]), p=st.sampled_from([1, 2]))
def test_margin_losses_sweep_float64(n, c, seed, reduction, p):
    """Random targets (repeated classes, -1 anywhere in multilabel lists) give torch's
    losses and gradients."""
    rng = np.random.default_rng(seed)
    data = rng.uniform(-1, 1, (n, c))
    labels = rng.integers(-1, c, (n, c))
    classes = rng.integers(0, c, n)
    weight = rng.uniform(0.5, 2, c)
    outs = []
    for T in (torch, ember):
        x = T.tensor(data, requires_grad=True)
        losses = [f(T).multilabel_margin_loss(x, T.tensor(labels), reduction=reduction),
                  f(T).multi_margin_loss(x, T.tensor(classes), p=p, margin=0.7,
                                         weight=T.tensor(weight), reduction=reduction)]
        grads = [_np(T.autograd.grad(loss.sum(), x)[0]) for loss in losses]
        outs.append([_np(loss) for loss in losses] + grads)
    for e, t in zip(outs[1], outs[0]):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)
