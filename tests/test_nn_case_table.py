"""One table of torch.nn functions and modules (shrink activations, rrelu, alpha dropout,
instance / RMS / local response norm, pixel and channel shuffles, the margin and Gaussian NLL
losses, Softmax2d, the 'area' and 'bicubic' modes of interpolate), run case by case; plus the
module reprs/attributes, the shuffles' errors and edge cases. (The per-topic tests of the same
functions live in test_nn_activation/dropout/normalization/losses/interpolate.py.)

Each case is compared with torch 2.13: values, dtypes, input gradients, the node names of the graph,
module reprs and the errors for bad arguments; the new primitives' derivatives are checked
again by gradgradcheck in float64. Random ops (rrelu while training, alpha dropout) are
compared by their structure and statistics, since the two libraries draw different numbers.
"""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from differential import catch, same, warnings_of
from nn_helpers import compare_module, torch_repr
from opinfo import graph_names


def f(T):
    return T.nn.functional


def floats(*shape, low=-2.0, high=2.0):
    return lambda rng: rng.uniform(low, high, shape)


class Const:
    """An array passed as a tensor that does not require grad (a target, a variance)."""

    def __init__(self, maker):
        self.maker = maker


def longs(array):
    return Const(lambda rng: np.asarray(array, dtype=np.int64))


class Case:
    """fn(T, *tensors) with tensors made from the same arrays in torch and ember; float arrays
    require grad unless wrapped in Const."""

    def __init__(self, name, fn, *makers, atol32=1e-6):
        # atol32: float32's absolute tolerance (bicubic sums 16 taps in another order)
        self.name, self.fn, self.makers, self.atol32 = name, fn, makers, atol32

    def __repr__(self):
        return self.name

    def run(self, T, dtype):
        rng = np.random.default_rng(0)
        tensors = []
        for m in self.makers:
            const = isinstance(m, Const)
            a = (m.maker if const else m)(rng)
            t = T.tensor(a.astype(dtype) if a.dtype.kind == "f" else a)
            if not const:
                t.requires_grad_(True)
            tensors.append(t)
        out = self.fn(T, *tensors)
        return out, [t for t in tensors if t.requires_grad]


def _gaussian_target(rng):
    return rng.uniform(-2, 2, (4, 3))


CASES = [
    # ---------------------------------------------------------------- activations
    Case("hardshrink", lambda T, x: f(T).hardshrink(x, 0.7), floats(4, 5)),
    Case("hardshrink-negative-lambd", lambda T, x: f(T).hardshrink(x, -0.5), floats(4, 5)),
    Case("softshrink", lambda T, x: f(T).softshrink(x), floats(4, 5)),
    Case("tanhshrink", lambda T, x: f(T).tanhshrink(x), floats(4, 5)),
    Case("logsigmoid", lambda T, x: f(T).logsigmoid(x), floats(4, 5)),
    Case("rrelu-eval", lambda T, x: f(T).rrelu(x, 0.1, 0.3), floats(4, 5)),
    Case("rrelu-eval-inplace", lambda T, x: f(T).rrelu(x * 1, 0.1, 0.3, inplace=True),
         floats(4, 5)),
    Case("threshold-inplace", lambda T, x: f(T).threshold(x * 1, 0.1, 2.0, inplace=True),
         floats(4, 5)),
    Case("threshold_", lambda T, x: f(T).threshold_(x * 1, 0.1, 2.0), floats(4, 5)),
    Case("softmax2d", lambda T, x: T.nn.Softmax2d()(x), floats(2, 3, 4, 2)),
    Case("glu", lambda T, x: f(T).glu(x, 0), floats(4, 5)),
    Case("celu", lambda T, x: f(T).celu(x, 0.7), floats(4, 5)),
    # ---------------------------------------------------------------- shuffles
    Case("pixel_shuffle", lambda T, x: f(T).pixel_shuffle(x, 2), floats(2, 8, 3, 2)),
    Case("pixel_shuffle-3d", lambda T, x: f(T).pixel_shuffle(x, 3), floats(9, 2, 2)),
    Case("pixel_shuffle-5d", lambda T, x: f(T).pixel_shuffle(x, 2), floats(2, 3, 4, 2, 3)),
    Case("pixel_unshuffle", lambda T, x: f(T).pixel_unshuffle(x, 2), floats(2, 3, 4, 6)),
    Case("channel_shuffle", lambda T, x: f(T).channel_shuffle(x, 3), floats(2, 6, 2, 2)),
    Case("channel_shuffle-3d", lambda T, x: f(T).channel_shuffle(x, 2), floats(2, 4, 3)),
    Case("ChannelShuffle", lambda T, x: T.nn.ChannelShuffle(2)(x), floats(2, 4, 3, 1)),
    # ---------------------------------------------------------------- normalization
    Case("local_response_norm-3d", lambda T, x: f(T).local_response_norm(x, 3),
         floats(2, 5, 4)),
    Case("local_response_norm-4d", lambda T, x: f(T).local_response_norm(x, 4, 0.1, 0.6, 2.0),
         floats(2, 5, 3, 4)),
    Case("local_response_norm-5d", lambda T, x: f(T).local_response_norm(x, 2, 0.3),
         floats(2, 4, 3, 2, 2)),
    Case("rms_norm", lambda T, x, w: f(T).rms_norm(x, (4,), w), floats(3, 4), floats(4)),
    Case("rms_norm-2dims-eps", lambda T, x: f(T).rms_norm(x, [3, 4], eps=0.1),
         floats(2, 3, 4)),
    Case("instance_norm", lambda T, x, w, b: f(T).instance_norm(x, weight=w, bias=b),
         floats(2, 3, 4, 5), floats(3), floats(3)),
    Case("instance_norm-running-stats",
         lambda T, x: f(T).instance_norm(x, T.zeros(3), T.ones(3), momentum=0.3),
         floats(2, 3, 6)),
    Case("instance_norm-eval",
         lambda T, x, w: f(T).instance_norm(x, T.linspace(-1, 1, 3), T.linspace(0.5, 2, 3),
                                            weight=w, use_input_stats=False),
         floats(2, 3, 6), floats(3)),
    # ---------------------------------------------------------------- losses
    Case("gaussian_nll", lambda T, x, t, v: f(T).gaussian_nll_loss(x, t, v),
         floats(4, 3), Const(_gaussian_target), floats(4, 3, low=0.1, high=2)),
    Case("gaussian_nll-full-sum", lambda T, x, t, v: f(T).gaussian_nll_loss(
        x, t, v, full=True, reduction="sum"),
         floats(4, 3), Const(_gaussian_target), floats(4, 1, low=0.1, high=2)),
    Case("gaussian_nll-var-without-last-dim-none", lambda T, x, t, v: f(T).gaussian_nll_loss(
        x, t, v, reduction="none"),
         floats(4, 3), Const(_gaussian_target), floats(4, low=0.1, high=2)),
    Case("gaussian_nll-clamped-var", lambda T, x, t, v: f(T).gaussian_nll_loss(x, t, v, eps=0.5),
         floats(4, 3), Const(_gaussian_target), floats(4, 3, low=0.0, high=1)),
    Case("gaussian_nll-float-var", lambda T, x, t: f(T).gaussian_nll_loss(x, t, 0.7),
         floats(4, 3), Const(_gaussian_target)),
    Case("poisson_nll", lambda T, x, t: f(T).poisson_nll_loss(x, t),
         floats(4, 3), Const(floats(4, 3, low=0, high=3))),
    Case("poisson_nll-full-nolog", lambda T, x, t: f(T).poisson_nll_loss(
        x, t, log_input=False, full=True, reduction="sum"),
         floats(4, 3, low=0.1, high=3), Const(floats(4, 3, low=0, high=3))),
    Case("multi_margin", lambda T, x, t: f(T).multi_margin_loss(x, t),
         floats(4, 5, low=-1, high=1), longs([0, 3, 4, 1])),
    Case("multi_margin-p2-weight-margin-none", lambda T, x, t: f(T).multi_margin_loss(
        x, t, p=2, margin=0.5, weight=T.tensor([1.0, 2.0, 0.5, 1.5, 3.0], dtype=x.dtype),
        reduction="none"),
         floats(4, 5, low=-1, high=1), longs([0, 3, 4, 1])),
    Case("multi_margin-sum", lambda T, x, t: f(T).multi_margin_loss(x, t, reduction="sum"),
         floats(4, 5, low=-1, high=1), longs([2, 2, 0, 1])),
    Case("multi_margin-1d", lambda T, x, t: f(T).multi_margin_loss(x, t, reduction="none"),
         floats(5, low=-1, high=1), longs(3)),
    Case("multilabel_margin", lambda T, x, t: f(T).multilabel_margin_loss(x, t),
         floats(3, 4, low=-1, high=1), longs([[3, 0, -1, 1], [0, 1, 2, 3], [-1, 1, 0, 0]])),
    Case("multilabel_margin-none", lambda T, x, t: f(T).multilabel_margin_loss(
        x, t, reduction="none"),
         floats(3, 4, low=-1, high=1), longs([[3, 3, -1, 1], [1, -1, 2, 3], [2, 1, 0, -1]])),
    Case("multilabel_margin-1d-sum", lambda T, x, t: f(T).multilabel_margin_loss(
        x, t, reduction="sum"),
         floats(5, low=-1, high=1), longs([4, 1, -1, 0, 0])),
    Case("multilabel_soft_margin", lambda T, x, t: f(T).multilabel_soft_margin_loss(x, t),
         floats(3, 4), Const(lambda rng: (rng.random((3, 4)) < 0.5).astype(np.float64))),
    Case("multilabel_soft_margin-weight-none",
         lambda T, x, t: f(T).multilabel_soft_margin_loss(
             x, t, weight=T.tensor([1.0, 0.5, 2.0, 1.0], dtype=x.dtype), reduction="none"),
         floats(3, 4), Const(lambda rng: (rng.random((3, 4)) < 0.5).astype(np.float64))),
    Case("triplet_margin_with_distance", lambda T, a, p, n:
         f(T).triplet_margin_with_distance_loss(a, p, n), floats(4, 3), floats(4, 3),
         floats(4, 3)),
    Case("triplet_margin_with_distance-fn-swap", lambda T, a, p, n:
         f(T).triplet_margin_with_distance_loss(
             a, p, n, distance_function=lambda u, v: (u - v).abs().sum(1), swap=True,
             margin=2.0, reduction="sum"), floats(4, 3), floats(4, 3), floats(4, 3)),
    Case("TripletMarginWithDistanceLoss", lambda T, a, p, n:
         T.nn.TripletMarginWithDistanceLoss(reduction="none")(a, p, n), floats(4, 3),
         floats(4, 3), floats(4, 3)),
    Case("TripletMarginLoss", lambda T, a, p, n:
         T.nn.TripletMarginLoss(margin=0.5, p=1.0, swap=True)(a, p, n), floats(4, 3),
         floats(4, 3), floats(4, 3)),
    # ---------------------------------------------------------------- interpolate
    Case("area-2d", lambda T, x: f(T).interpolate(x, size=(3, 4), mode="area"),
         floats(2, 2, 6, 7)),
    Case("area-2d-scale", lambda T, x: f(T).interpolate(x, scale_factor=0.5, mode="area"),
         floats(1, 2, 6, 5)),
    Case("area-1d", lambda T, x: f(T).interpolate(x, size=4, mode="area"), floats(2, 3, 9)),
    Case("area-3d", lambda T, x: f(T).interpolate(x, size=(2, 3, 2), mode="area"),
         floats(1, 2, 4, 5, 3)),
    Case("area-upsample", lambda T, x: T.nn.Upsample(size=(5, 7), mode="area")(x),
         floats(1, 2, 3, 4)),
    Case("bicubic-up", lambda T, x: f(T).interpolate(x, size=(9, 7), mode="bicubic"),
         floats(2, 2, 4, 5), atol32=1e-5),
    Case("bicubic-up-align", lambda T, x: f(T).interpolate(
        x, size=(9, 7), mode="bicubic", align_corners=True), floats(2, 2, 4, 5), atol32=1e-5),
    Case("bicubic-down", lambda T, x: f(T).interpolate(x, size=(3, 2), mode="bicubic"),
         floats(1, 2, 7, 6), atol32=1e-5),
    Case("bicubic-down-align", lambda T, x: f(T).interpolate(
        x, size=(3, 1), mode="bicubic", align_corners=True), floats(1, 2, 7, 6), atol32=1e-5),
    Case("bicubic-scale", lambda T, x: f(T).interpolate(x, scale_factor=(1.7, 1.1),
                                                        mode="bicubic"),
         floats(1, 1, 5, 6), atol32=1e-5),
    Case("bicubic-upsample-module", lambda T, x: T.nn.Upsample(
        scale_factor=2.5, mode="bicubic", align_corners=False)(x),
         floats(1, 2, 3, 4), atol32=1e-5),
    Case("upsampling-bilinear2d", lambda T, x: T.nn.UpsamplingBilinear2d(scale_factor=2)(x),
         floats(1, 2, 3, 4)),
    Case("upsampling-nearest2d", lambda T, x: T.nn.UpsamplingNearest2d(size=(5, 7))(x),
         floats(1, 2, 3, 4)),
    Case("linear-upsample-module", lambda T, x: T.nn.Upsample(scale_factor=3, mode="linear")(x),
         floats(1, 2, 4)),
    Case("trilinear-align", lambda T, x: f(T).interpolate(
        x, size=(3, 4, 2), mode="trilinear", align_corners=True), floats(1, 1, 2, 3, 4)),
]


def _np(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_values_grads_and_graph_match_torch(case, dtype):
    t_out, t_leaves = case.run(torch, dtype)
    e_out, e_leaves = case.run(ember, dtype)
    assert graph_names(e_out.grad_fn) == graph_names(t_out.grad_fn)
    assert str(e_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1]
    assert tuple(e_out.shape) == tuple(t_out.shape)
    tol = dict(rtol=1e-5, atol=case.atol32) if dtype is np.float32 else \
        dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_np(e_out), _np(t_out), **tol)
    upstream = np.random.default_rng(1).uniform(-1, 1, tuple(t_out.shape)).astype(dtype)
    t_grads = torch.autograd.grad(t_out, t_leaves, torch.tensor(upstream))
    e_grads = ember.autograd.grad(e_out, e_leaves, ember.tensor(upstream))
    for i, (e, t) in enumerate(zip(e_grads, t_grads)):
        np.testing.assert_allclose(_np(e), _np(t), err_msg=f"grad {i}", **tol)


# ----------------------------------------------------------------------------- second order
def _f64(*shapes, low=-1.0, high=1.0, seed=2):
    rng = np.random.default_rng(seed)
    return [ember.tensor(rng.uniform(low, high, s), requires_grad=True) for s in shapes]


def _away_from_kinks(x, kinks, gap=0.05):
    """Move entries of a float64 leaf off the points where the op is not differentiable."""
    data = x.detach()._data
    for k in kinks:
        near = np.abs(data - k) < gap
        data[near] = k + np.where(data[near] >= k, gap, -gap)
    return x


EF = ember.nn.functional
T_ML = ember.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [-1, 1, 0, 0]])
SECOND_ORDER = {
    "hardshrink": (lambda x: EF.hardshrink(x, 0.5) ** 2,
                   [_away_from_kinks(_f64((3, 4))[0], (0.5, -0.5))]),
    "softshrink": (lambda x: EF.softshrink(x, 0.3) ** 2,
                   [_away_from_kinks(_f64((3, 4))[0], (0.3, -0.3))]),
    "rrelu-eval": (lambda x: EF.rrelu(x) ** 2, [_away_from_kinks(_f64((3, 4))[0], (0,))]),
    "pixel_shuffle": (lambda x: EF.pixel_shuffle(x, 2) ** 2, _f64((1, 4, 2, 3))),
    "pixel_unshuffle": (lambda x: EF.pixel_unshuffle(x, 2) ** 2, _f64((1, 2, 2, 4))),
    "channel_shuffle": (lambda x: EF.channel_shuffle(x, 2) ** 2, _f64((1, 6, 2))),
    # (multi_margin_loss: torch has no double backward; test_double_backward_sweep.py)
    "multilabel_margin": (lambda x: EF.multilabel_margin_loss(x, T_ML, reduction="none") ** 2,
                          _f64((3, 4), seed=3)),
    "bicubic": (lambda x: EF.interpolate(x, size=(5, 3), mode="bicubic") ** 2,
                _f64((1, 1, 3, 4))),
    "area": (lambda x: EF.interpolate(x, size=(2, 3), mode="area") ** 2, _f64((1, 1, 3, 4))),
    "instance_norm": (lambda x, w: EF.instance_norm(x, ember.zeros(2, dtype=ember.float64),
                                                    ember.ones(2, dtype=ember.float64),
                                                    weight=w),
                      _f64((2, 2, 3), (2,))),
    "rms_norm": (lambda x, w: EF.rms_norm(x, (3,), w), _f64((2, 3), (3,))),
    "local_response_norm": (lambda x: EF.local_response_norm(x, 3, alpha=0.5),
                            _f64((1, 4, 3))),
    "gaussian_nll": (lambda x, v: EF.gaussian_nll_loss(x, ember.zeros(2, 3, dtype=x.dtype), v),
                     _f64((2, 3), (2, 3), low=0.2, high=1.0)),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_gradgradcheck_float64(name):
    fn, inputs = SECOND_ORDER[name]
    assert ember.autograd.gradcheck(fn, tuple(inputs))
    assert ember.autograd.gradgradcheck(fn, tuple(inputs))


# ----------------------------------------------------------------------------- modules
REPRS = [
    lambda nn: nn.Hardshrink(0.3), lambda nn: nn.Softshrink(), lambda nn: nn.Tanhshrink(),
    lambda nn: nn.RReLU(), lambda nn: nn.RReLU(0.1, 0.2, True), lambda nn: nn.Softmax2d(),
    lambda nn: nn.Threshold(0.1, 20), lambda nn: nn.LogSigmoid(), lambda nn: nn.GLU(0),
    lambda nn: nn.AlphaDropout(0.2), lambda nn: nn.FeatureAlphaDropout(0.2, True),
    lambda nn: nn.Dropout3d(), lambda nn: nn.LocalResponseNorm(3),
    lambda nn: nn.LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2.0),
    lambda nn: nn.RMSNorm(6), lambda nn: nn.RMSNorm([4, 6], eps=1e-3, elementwise_affine=False),
    lambda nn: nn.InstanceNorm1d(4), lambda nn: nn.InstanceNorm2d(4, affine=True),
    lambda nn: nn.InstanceNorm3d(4, momentum=None, track_running_stats=True),
    lambda nn: nn.PixelShuffle(2), lambda nn: nn.PixelUnshuffle(3), lambda nn: nn.ChannelShuffle(2),
    lambda nn: nn.GaussianNLLLoss(), lambda nn: nn.PoissonNLLLoss(),
    lambda nn: nn.MultiMarginLoss(),
    lambda nn: nn.MultiLabelMarginLoss(), lambda nn: nn.MultiLabelSoftMarginLoss(),
    lambda nn: nn.TripletMarginLoss(), lambda nn: nn.TripletMarginWithDistanceLoss(),
    lambda nn: nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(p=1.0)),
    lambda nn: nn.PairwiseDistance(), lambda nn: nn.CosineSimilarity(),
    lambda nn: nn.Upsample(scale_factor=2), lambda nn: nn.Upsample(scale_factor=(2, 3)),
    lambda nn: nn.Upsample(size=(3, 4), mode="bicubic", align_corners=True),
    lambda nn: nn.UpsamplingNearest2d(scale_factor=2), lambda nn: nn.UpsamplingBilinear2d(size=5),
    lambda nn: nn.Sequential(nn.PixelShuffle(2), nn.InstanceNorm2d(3), nn.RReLU()),
]


@pytest.mark.parametrize("i", range(len(REPRS)))
def test_module_repr(i):
    assert repr(REPRS[i](ember.nn)) == torch_repr(REPRS[i](torch.nn))


def test_module_attributes_and_state():
    def scenario(T):
        nn = T.nn
        mods = [nn.MultiMarginLoss(p=2, margin=0.5, weight=T.ones(3)), nn.RMSNorm([2, 3]),
                nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
                nn.Upsample(scale_factor=2, mode="bilinear"), nn.PoissonNLLLoss(full=True),
                nn.TripletMarginWithDistanceLoss(swap=True)]
        return ([sorted(m.state_dict().keys()) for m in mods],
                [mods[0].p, mods[0].margin, mods[1].normalized_shape, mods[1].eps,
                 mods[3].scale_factor, mods[3].align_corners, mods[4].eps, mods[5].swap])
    same(scenario)


@pytest.mark.parametrize("make", [lambda nn: nn.LocalResponseNorm(3, k=2.0),
                                  lambda nn: nn.PixelShuffle(2), lambda nn: nn.PixelUnshuffle(2),
                                  lambda nn: nn.Hardshrink(), lambda nn: nn.Softshrink(0.2),
                                  lambda nn: nn.Tanhshrink(), lambda nn: nn.Softmax2d()])
def test_parameterless_modules_match_torch(make):
    rng = np.random.default_rng(6)
    compare_module(make(ember.nn), make(torch.nn), [rng.uniform(-2, 2, (2, 4, 4, 6))])


def test_shuffle_errors_match_torch():
    def scenario(T):
        F_ = f(T)
        return [catch(F_.pixel_shuffle, T.ones(2, 3, 4, 4), 2),
                catch(F_.pixel_shuffle, T.ones(4, 4), 2),
                catch(F_.pixel_shuffle, T.ones(4, 4, 4), 0),
                catch(F_.pixel_unshuffle, T.ones(2, 3, 5, 4), 2),
                catch(F_.pixel_unshuffle, T.ones(2, 3, 4, 5), 2),
                catch(F_.pixel_unshuffle, T.ones(4, 4), 2),
                catch(F_.pixel_unshuffle, T.ones(4, 4, 4), 0),
                catch(F_.channel_shuffle, T.ones(2, 3, 4, 4), 2),
                catch(F_.channel_shuffle, T.ones(2, 4, 4), 0),
                catch(F_.channel_shuffle, T.ones(2, 4), 2),
                catch(F_.channel_shuffle, T.ones(2, 3), -1)]
    same(scenario)


def test_edge_cases_match_torch():
    def scenario(T):
        F_ = f(T)
        x0 = T.tensor(0.3, requires_grad=True)
        ramp = T.arange(16.0).reshape(1, 1, 4, 4)
        return [
            catch(F_.multi_margin_loss, x0, T.tensor(0)),
            catch(F_.multi_margin_loss, x0, T.tensor([0])),
            catch(F_.multi_margin_loss, T.ones(0, 5), T.zeros(0, dtype=T.long), reduction="none"),
            catch(F_.multi_margin_loss, T.ones(0), T.zeros(0, dtype=T.long)),
            catch(F_.multi_margin_loss, T.ones(2, 5), T.zeros(2, dtype=T.int32)),
            catch(F_.multi_margin_loss, T.ones(2, 5), T.zeros(2, 1, dtype=T.long)),
            catch(F_.multilabel_margin_loss, x0, T.tensor(0)),
            catch(F_.multilabel_margin_loss, T.ones(5), T.zeros(1, 5, dtype=T.long)),
            catch(F_.multilabel_margin_loss, T.ones(1, 5), T.zeros(5, dtype=T.long)),
            catch(F_.multilabel_margin_loss, T.ones(2, 5), T.zeros(2, 5, dtype=T.uint8)),
            catch(F_.gaussian_nll_loss, T.ones(2, 5), T.ones(2, 5), T.ones(2, 5, 1)),
            catch(F_.pixel_shuffle, T.ones(1, 4, 0, 3), 2),
            catch(F_.rms_norm, T.ones(3), 3),
            catch(F_.rms_norm, T.ones(3, dtype=T.float64), [3]),
            catch(F_.hardshrink, T.ones(3, dtype=T.float64) * 0.5),
            catch(F_.softshrink, T.tensor([0.5, -0.5, 0.6, -0.7]), 0.5),
            catch(F_.interpolate, T.ones(1, 1, 4, 4), size=(1, 1), mode="bicubic",
                  align_corners=True),
            catch(F_.interpolate, ramp, size=(1, 1), mode="bicubic"),
            catch(F_.interpolate, ramp, size=(1, 1), mode="area"),
            catch(F_.interpolate, ramp[:, :, :1], size=(3, 7), mode="bicubic"),
            catch(F_.local_response_norm, T.arange(24.0).reshape(1, 4, 6), 1),
            catch(F_.local_response_norm, T.arange(24.0).reshape(1, 4, 6), 7),
            catch(F_.channel_shuffle, T.arange(6.0).reshape(1, 6, 1), 1),
            catch(F_.channel_shuffle, T.arange(6.0).reshape(1, 6, 1), 6),
            catch(F_.threshold, T.tensor([1, 2, 3]), 1, 5),
        ]
    same(scenario)
