"""nn.functional composites build the same autograd graph as torch's: the node names reachable
from the output's grad_fn (breadth first along next_functions) equal torch's, and the values and
input gradients still match.

Each case is `fn(T, *tensors)` with T the library (torch or ember) and tensors made from the same
NumPy arrays in both; float arrays require grad unless wrapped in `Const`. Cases with dropout
compare the graph only (the two libraries draw different random masks).

The graphs of hardshrink, softshrink, rrelu, alpha_dropout, local_response_norm, rms_norm,
pixel_shuffle, gaussian_nll_loss, the margin losses, nn.InstanceNorm*d and the area and bicubic
modes of interpolate are compared in test_nn_case_table.py.
"""
import numpy as np
import pytest
import torch

import ember
from differential import catch, same
from opinfo import graph_names

# kl_div's reduction='mean' warns, in both libraries, by design
pytestmark = pytest.mark.filterwarnings("ignore:reduction. 'mean' divides:UserWarning")


class Const:
    """A float array passed as a tensor that does not require grad (a target, a mask)."""

    def __init__(self, array):
        self.array = array


def _tensor(T, a, requires_grad):
    if isinstance(a, Const):
        return T.tensor(a.array.copy())
    if not isinstance(a, np.ndarray):
        return a
    return T.tensor(a.copy(), requires_grad=requires_grad and a.dtype.kind == "f")


def floats(*shape, low=-2.0, high=2.0, dtype=np.float32):
    return lambda rng: rng.uniform(low, high, shape).astype(dtype)


def ints(high, *shape):
    return lambda rng: rng.integers(0, high, shape)


def signs(*shape, dtype=np.float32):
    return lambda rng: Const(np.where(rng.random(shape) < 0.5, -1.0, 1.0).astype(dtype))


def probs(*shape, dim=1, dtype=np.float32):
    def make(rng):
        a = rng.random(shape) + 0.1
        return Const((a / a.sum(dim, keepdims=True)).astype(dtype))
    return make


def unit(*shape, dtype=np.float32):
    return lambda rng: rng.uniform(0.05, 0.95, shape).astype(dtype)


def const(maker):
    def make(rng):
        a = maker(rng)
        return Const(a.array if isinstance(a, Const) else a)
    return make


class Case:
    """One call: fn(T, *tensors), and the makers of its arrays (each takes the shared rng)."""

    def __init__(self, name, fn, *makers, values=True):
        self.name, self.fn, self.makers, self.values = name, fn, makers, values

    def __repr__(self):
        return self.name

    def arrays(self):
        rng = np.random.default_rng(0)
        return [m(rng) if callable(m) else m for m in self.makers]


def _loss_cases(name, fn, *makers):
    return [Case(f"{name}-{r}", (lambda r: lambda T, *a: fn(T, *a, reduction=r))(r), *makers)
            for r in ("mean", "sum", "none")]


def f(T):
    return T.nn.functional


CASES = [
    # ---------------------------------------------------------------- linear
    Case("bilinear", lambda T, a, b, w, c: f(T).bilinear(a, b, w, c),
         floats(4, 3), floats(4, 5), floats(2, 3, 5), floats(2)),
    Case("bilinear-nobias", lambda T, a, b, w: f(T).bilinear(a, b, w),
         floats(4, 3), floats(4, 5), floats(2, 3, 5)),
    Case("bilinear-batched", lambda T, a, b, w, c: f(T).bilinear(a, b, w, c),
         floats(2, 4, 3), floats(2, 4, 5), floats(2, 3, 5), floats(2)),
    Case("bilinear-1d", lambda T, a, b, w, c: f(T).bilinear(a, b, w, c),
         floats(3), floats(5), floats(2, 3, 5), floats(2)),
    Case("bilinear-const-input", lambda T, a, b, w, c: f(T).bilinear(a, b, w, c),
         const(floats(4, 3)), floats(4, 5), floats(2, 3, 5), floats(2)),
    Case("linear-3d", lambda T, x, w, b: f(T).linear(x, w, b),
         floats(2, 4, 3), floats(5, 3), floats(5)),
    Case("linear-nobias", lambda T, x, w: f(T).linear(x, w), floats(4, 3), floats(5, 3)),
    Case("linear-1d", lambda T, x, w, b: f(T).linear(x, w, b), floats(3), floats(5, 3), floats(5)),
    # ---------------------------------------------------------------- distances
    Case("pairwise_distance", lambda T, a, b: f(T).pairwise_distance(a, b),
         floats(4, 3), floats(4, 3)),
    Case("pairwise_distance-p1-keepdim",
         lambda T, a, b: f(T).pairwise_distance(a, b, p=1.0, keepdim=True),
         floats(4, 3), floats(4, 3)),
    Case("pairwise_distance-1d", lambda T, a, b: f(T).pairwise_distance(a, b),
         floats(3), floats(3)),
    Case("pairwise_distance-broadcast", lambda T, a, b: f(T).pairwise_distance(a, b),
         floats(4, 3), floats(3)),
    Case("cosine_similarity", lambda T, a, b: f(T).cosine_similarity(a, b),
         floats(4, 3), floats(4, 3)),
    Case("cosine_similarity-dim0", lambda T, a, b: f(T).cosine_similarity(a, b, dim=0),
         floats(4, 3), floats(4, 3)),
    Case("normalize", lambda T, a: f(T).normalize(a), floats(4, 3)),
    Case("normalize-pinf", lambda T, a: f(T).normalize(a, p=float("inf")), floats(4, 3)),
    Case("cosine_similarity-broadcast", lambda T, a, b: f(T).cosine_similarity(a, b, dim=-1),
         floats(4, 3), floats(3)),
    Case("normalize-p1", lambda T, a: f(T).normalize(a, p=1.0, dim=0), floats(4, 3)),
    # ---------------------------------------------------------------- activations
    Case("gelu-tanh", lambda T, a: f(T).gelu(a, approximate="tanh"), floats(4, 3)),
    Case("hardswish", lambda T, a: f(T).hardswish(a), floats(4, 3, low=-4, high=4)),
    Case("mish", lambda T, a: f(T).mish(a), floats(4, 3)),
    Case("softplus", lambda T, a: f(T).softplus(a, beta=2.0), floats(4, 3)),
    Case("softsign", lambda T, a: f(T).softsign(a), floats(4, 3)),
    Case("tanhshrink", lambda T, a: f(T).tanhshrink(a), floats(4, 3)),
    Case("softmin", lambda T, a: f(T).softmin(a, dim=1), floats(4, 3)),
    Case("glu", lambda T, a: f(T).glu(a, dim=1), floats(4, 6)),
    Case("relu6", lambda T, a: f(T).relu6(a), floats(4, 3, low=-8, high=8)),
    Case("selu", lambda T, a: f(T).selu(a), floats(4, 3)),
    Case("celu", lambda T, a: f(T).celu(a, alpha=0.5), floats(4, 3)),
    Case("logsigmoid", lambda T, a: f(T).logsigmoid(a), floats(4, 3)),
    Case("prelu", lambda T, a, w: f(T).prelu(a, w), floats(4, 3), floats(3)),
    Case("relu", lambda T, a: f(T).relu(a), floats(4, 3)),
    Case("hardtanh", lambda T, a: f(T).hardtanh(a, -0.5, 0.5), floats(4, 3)),
    Case("leaky_relu", lambda T, a: f(T).leaky_relu(a, 0.2), floats(4, 3)),
    Case("elu", lambda T, a: f(T).elu(a), floats(4, 3)),
    Case("silu", lambda T, a: f(T).silu(a), floats(4, 3)),
    Case("gelu", lambda T, a: f(T).gelu(a), floats(4, 3)),
    Case("hardsigmoid", lambda T, a: f(T).hardsigmoid(a), floats(4, 3, low=-4, high=4)),
    Case("threshold", lambda T, a: f(T).threshold(a, 0.1, 2.0), floats(4, 3)),
    Case("sigmoid-tanh", lambda T, a: f(T).sigmoid(f(T).tanh(a)), floats(4, 3)),
    Case("softmax", lambda T, a: f(T).softmax(a, 1), floats(4, 3)),
    Case("log_softmax-dtype", lambda T, a: f(T).log_softmax(a, 0, dtype=T.float64),
         floats(4, 3)),
    Case("relu-inplace-on-nonleaf", lambda T, a: f(T).relu(a * 2, inplace=True), floats(4, 3)),
    # ---------------------------------------------------------------- normalization
    Case("layer_norm", lambda T, a, w, b: f(T).layer_norm(a, (3,), w, b),
         floats(4, 3), floats(3), floats(3)),
    Case("layer_norm-noaffine", lambda T, a: f(T).layer_norm(a, (3,)), floats(4, 3)),
    Case("group_norm", lambda T, a, w, b: f(T).group_norm(a, 2, w, b),
         floats(2, 4, 3), floats(4), floats(4)),
    Case("batch_norm-train", lambda T, a, w, b: f(T).batch_norm(a, None, None, w, b, True),
         floats(4, 3), floats(3), floats(3)),
    Case("batch_norm-eval",
         lambda T, a, m, v, w, b: f(T).batch_norm(a, m, v, w, b, False),
         floats(4, 3), const(floats(3)), const(unit(3)), floats(3), floats(3)),
    Case("layer_norm-2d-shape", lambda T, a, w: f(T).layer_norm(a, (3, 2), w),
         floats(2, 3, 2), floats(3, 2)),
    Case("group_norm-noaffine", lambda T, a: f(T).group_norm(a, 3), floats(2, 3, 4)),
    Case("batch_norm-3d-running",
         lambda T, a, m, v: f(T).batch_norm(a, m, v, training=True),
         floats(2, 3, 4), const(floats(3)), const(unit(3))),
    Case("instance_norm", lambda T, a: f(T).instance_norm(a), floats(2, 3, 4)),
    Case("instance_norm-affine", lambda T, a, w, b: f(T).instance_norm(a, weight=w, bias=b),
         floats(2, 3, 4), floats(3), floats(3)),
    Case("Bilinear-module", lambda T, a, b, w, c: _bilinear_module(T, w, c)(a, b),
         floats(4, 3), floats(4, 5), const(floats(2, 3, 5)), const(floats(2))),
    Case("embedding", lambda T, i, w: f(T).embedding(i, w), ints(5, 4), floats(5, 3)),
    Case("embedding-padding", lambda T, i, w: f(T).embedding(i, w, padding_idx=1),
         ints(5, 4), floats(5, 3)),
    Case("one_hot-times", lambda T, i, w: f(T).one_hot(i, 5).to(w.dtype) @ w,
         ints(5, 4), floats(5, 3)),
    Case("interpolate-nearest", lambda T, a: f(T).interpolate(a, scale_factor=2),
         floats(1, 2, 3, 3)),
    Case("interpolate-bilinear",
         lambda T, a: f(T).interpolate(a, size=(5, 4), mode="bilinear", align_corners=False),
         floats(1, 2, 3, 3)),
    Case("interpolate-linear", lambda T, a: f(T).interpolate(a, size=5, mode="linear"),
         floats(1, 2, 3)),
    Case("unfold", lambda T, a: f(T).unfold(a, 2), floats(1, 2, 3, 3)),
    Case("fold", lambda T, a: f(T).fold(a, (3, 3), 2), floats(1, 8, 4)),
    Case("conv1d", lambda T, a, w, b: f(T).conv1d(a, w, b, padding=1), floats(1, 2, 5),
         floats(3, 2, 3), floats(3)),
    Case("conv2d-nobias", lambda T, a, w: f(T).conv2d(a, w, stride=2), floats(1, 2, 5, 5),
         floats(3, 2, 3, 3)),
    Case("conv_transpose2d", lambda T, a, w, b: f(T).conv_transpose2d(a, w, b),
         floats(1, 2, 3, 3), floats(2, 3, 2, 2), floats(3)),
    Case("max_pool2d", lambda T, a: f(T).max_pool2d(a, 2), floats(1, 2, 4, 4)),
    Case("avg_pool1d", lambda T, a: f(T).avg_pool1d(a, 2), floats(1, 2, 4)),
    Case("adaptive_avg_pool2d", lambda T, a: f(T).adaptive_avg_pool2d(a, 1), floats(1, 2, 4, 4)),
    Case("adaptive_max_pool1d", lambda T, a: f(T).adaptive_max_pool1d(a, 2), floats(1, 2, 4)),
    Case("embedding-scale-grad",
         lambda T, i, w: f(T).embedding(i, w, scale_grad_by_freq=True), ints(5, 6), floats(5, 3)),
    Case("sdpa-4d-float-mask-broadcast",
         lambda T, q, k, v, m: f(T).scaled_dot_product_attention(q, k, v, attn_mask=m),
         floats(2, 2, 3, 4), floats(2, 2, 3, 4), floats(2, 2, 3, 4), const(floats(1, 1, 3, 3))),
    Case("embedding-max_norm", lambda T, i, w: f(T).embedding(i, w, max_norm=1.0),
         ints(5, 4), floats(5, 3)),
    Case("pad-constant", lambda T, a: f(T).pad(a, (1, 2)), floats(2, 3)),
    Case("pad-reflect", lambda T, a: f(T).pad(a, (1, 2), mode="reflect"), floats(1, 2, 4)),
    Case("pad-replicate", lambda T, a: f(T).pad(a, (1, 2), mode="replicate"),
         floats(1, 2, 4)),
    Case("pad-circular-1d", lambda T, a: f(T).pad(a, (1, 2), mode="circular"),
         floats(1, 2, 4)),
    Case("pad-circular-2d", lambda T, a: f(T).pad(a, (1, 2, 2, 1), mode="circular"),
         floats(1, 2, 3, 4)),
    Case("pad-circular-3d", lambda T, a: f(T).pad(a, (1, 0, 0, 1, 1, 1), mode="circular"),
         floats(1, 2, 3, 3, 2)),
    Case("pad-circular-one-side", lambda T, a: f(T).pad(a, (0, 2), mode="circular"),
         floats(1, 2, 4)),
    Case("pad-circular-negative", lambda T, a: f(T).pad(a, (-1, 2), mode="circular"),
         floats(1, 2, 4)),
    # ---------------------------------------------------------------- attention
    Case("sdpa-fused", lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v),
         floats(1, 2, 3, 4), floats(1, 2, 3, 4), floats(1, 2, 3, 4)),
    Case("sdpa-3d", lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v),
         floats(2, 3, 4), floats(2, 3, 4), floats(2, 3, 4)),
    Case("sdpa-3d-causal",
         lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v, is_causal=True),
         floats(2, 3, 4), floats(2, 3, 4), floats(2, 3, 4)),
    Case("sdpa-3d-bool-mask",
         lambda T, q, k, v, m: f(T).scaled_dot_product_attention(q, k, v, attn_mask=m),
         floats(2, 3, 4), floats(2, 3, 4), floats(2, 3, 4),
         lambda rng: np.tril(np.ones((3, 3), bool))),
    Case("sdpa-3d-float-mask",
         lambda T, q, k, v, m: f(T).scaled_dot_product_attention(q, k, v, attn_mask=m),
         floats(2, 3, 4), floats(2, 3, 4), floats(2, 3, 4), const(floats(3, 3))),
    Case("sdpa-3d-grad-mask",
         lambda T, q, k, v, m: f(T).scaled_dot_product_attention(q, k, v, attn_mask=m),
         floats(2, 3, 4), floats(2, 3, 4), floats(2, 3, 4), floats(3, 3)),
    Case("sdpa-4d-grad-mask",
         lambda T, q, k, v, m: f(T).scaled_dot_product_attention(q, k, v, attn_mask=m),
         floats(1, 2, 3, 4), floats(1, 2, 3, 4), floats(1, 2, 3, 4), floats(3, 3)),
    Case("sdpa-4d-causal",
         lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v, is_causal=True),
         floats(1, 2, 3, 4), floats(1, 2, 3, 4), floats(1, 2, 3, 4)),
    Case("sdpa-head-dims-differ",
         lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v),
         floats(1, 2, 3, 4), floats(1, 2, 3, 4), floats(1, 2, 3, 5)),
    Case("sdpa-gqa",
         lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v, enable_gqa=True),
         floats(1, 4, 3, 4), floats(1, 2, 3, 4), floats(1, 2, 3, 4)),
    Case("sdpa-gqa-3d",
         lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v, enable_gqa=True),
         floats(4, 3, 4), floats(2, 3, 4), floats(2, 3, 4)),
    Case("sdpa-gqa-head-dims-differ",
         lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v, enable_gqa=True),
         floats(1, 4, 3, 4), floats(1, 2, 3, 4), floats(1, 2, 3, 5)),
    Case("sdpa-batch-broadcast",
         lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v),
         floats(2, 2, 3, 4), floats(1, 2, 3, 4), floats(1, 2, 3, 4)),
    Case("sdpa-2d-scale",
         lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v, scale=0.3),
         floats(3, 4), floats(5, 4), floats(5, 2)),
    Case("sdpa-4d-kv-longer-bool-mask",
         lambda T, q, k, v, m: f(T).scaled_dot_product_attention(q, k, v, attn_mask=m),
         floats(1, 2, 3, 4), floats(1, 2, 5, 4), floats(1, 2, 5, 4),
         lambda rng: rng.random((3, 5)) < 0.7),
    Case("sdpa-const-key",
         lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v),
         floats(2, 3, 4), const(floats(2, 3, 4)), floats(2, 3, 4)),
    Case("sdpa-dropout",
         lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v, dropout_p=0.5),
         floats(1, 2, 3, 4), floats(1, 2, 3, 4), floats(1, 2, 3, 4), values=False),
    Case("sdpa-gqa-dropout",
         lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v, dropout_p=0.3,
                                                           enable_gqa=True),
         floats(1, 4, 3, 4), floats(1, 2, 3, 4), floats(1, 2, 3, 4), values=False),
    Case("sdpa-3d-causal-dropout",
         lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v, dropout_p=0.3,
                                                           is_causal=True),
         floats(2, 3, 4), floats(2, 3, 4), floats(2, 3, 4), values=False),
    Case("sdpa-3d-dropout",
         lambda T, q, k, v: f(T).scaled_dot_product_attention(q, k, v, dropout_p=0.5),
         floats(2, 3, 4), floats(2, 3, 4), floats(2, 3, 4), values=False),
    Case("dropout", lambda T, a: f(T).dropout(a, 0.5), floats(4, 3), values=False),
    Case("dropout2d", lambda T, a: f(T).dropout2d(a, 0.5), floats(2, 3, 2, 2), values=False),
]

LOSS_CASES = [
    *_loss_cases("l1_loss", lambda T, a, b, **k: f(T).l1_loss(a, b, **k),
                 floats(4, 3), floats(4, 3)),
    *_loss_cases("mse_loss", lambda T, a, b, **k: f(T).mse_loss(a, b, **k),
                 floats(4, 3), floats(4, 3)),
    *_loss_cases("smooth_l1_loss", lambda T, a, b, **k: f(T).smooth_l1_loss(a, b, **k),
                 floats(4, 3), floats(4, 3)),
    *_loss_cases("huber_loss", lambda T, a, b, **k: f(T).huber_loss(a, b, **k),
                 floats(4, 3), floats(4, 3)),
    *_loss_cases("nll_loss", lambda T, a, t, **k: f(T).nll_loss(a, t, **k),
                 floats(4, 3), ints(3, 4)),
    *_loss_cases("cross_entropy", lambda T, a, t, **k: f(T).cross_entropy(a, t, **k),
                 floats(4, 3), ints(3, 4)),
    *_loss_cases("cross_entropy-weight-ignore",
                 lambda T, a, t, w, **k: f(T).cross_entropy(a, t, w, ignore_index=1, **k),
                 floats(4, 3), ints(3, 4), const(unit(3))),
    *_loss_cases("cross_entropy-3d", lambda T, a, t, **k: f(T).cross_entropy(a, t, **k),
                 floats(2, 3, 4), ints(3, 2, 4)),
    *_loss_cases("mse_loss-weight",
                 lambda T, a, b, w, **k: f(T).mse_loss(a, b, weight=w, **k),
                 floats(4, 3), floats(4, 3), const(unit(4, 3))),
    *_loss_cases("l1_loss-weight",
                 lambda T, a, b, w, **k: f(T).l1_loss(a, b, weight=w, **k),
                 floats(4, 3), floats(4, 3), const(unit(4, 3))),
    *_loss_cases("huber_loss-weight",
                 lambda T, a, b, w, **k: f(T).huber_loss(a, b, weight=w, **k),
                 floats(4, 3), floats(4, 3), const(unit(4, 3))),
    *_loss_cases("smooth_l1_loss-beta0",
                 lambda T, a, b, **k: f(T).smooth_l1_loss(a, b, beta=0.0, **k),
                 floats(4, 3), floats(4, 3)),
    *_loss_cases("mse_loss-const-target", lambda T, a, b, **k: f(T).mse_loss(a, b, **k),
                 floats(4, 3), const(floats(4, 3))),
    *_loss_cases("cross_entropy-smoothing",
                 lambda T, a, t, **k: f(T).cross_entropy(a, t, label_smoothing=0.2, **k),
                 floats(4, 3), ints(3, 4)),
    *_loss_cases("cross_entropy-weight-smoothing",
                 lambda T, a, t, w, **k: f(T).cross_entropy(a, t, w, label_smoothing=0.2, **k),
                 floats(4, 3), ints(3, 4), const(unit(3))),
    *_loss_cases("cross_entropy-probs", lambda T, a, t, **k: f(T).cross_entropy(a, t, **k),
                 floats(4, 3), probs(4, 3)),
    *_loss_cases("cross_entropy-probs-grad-target",
                 lambda T, a, t, **k: f(T).cross_entropy(a, t, **k),
                 floats(4, 3), unit(4, 3)),
    *_loss_cases("cross_entropy-probs-smoothing",
                 lambda T, a, t, **k: f(T).cross_entropy(a, t, label_smoothing=0.2, **k),
                 floats(4, 3), probs(4, 3)),
    *_loss_cases("cross_entropy-probs-weight",
                 lambda T, a, t, w, **k: f(T).cross_entropy(a, t, w, **k),
                 floats(4, 3), probs(4, 3), const(unit(3))),
    *_loss_cases("cross_entropy-probs-weight-smoothing",
                 lambda T, a, t, w, **k: f(T).cross_entropy(a, t, w, label_smoothing=0.1, **k),
                 floats(4, 3), probs(4, 3), const(unit(3))),
    *_loss_cases("cross_entropy-probs-1d", lambda T, a, t, **k: f(T).cross_entropy(a, t, **k),
                 floats(3), probs(3, dim=0)),
    *_loss_cases("cross_entropy-probs-3d", lambda T, a, t, **k: f(T).cross_entropy(a, t, **k),
                 floats(2, 3, 4), probs(2, 3, 4)),
    *_loss_cases("binary_cross_entropy",
                 lambda T, a, t, **k: f(T).binary_cross_entropy(a, t, **k),
                 unit(4, 3), const(unit(4, 3))),
    *_loss_cases("binary_cross_entropy_with_logits",
                 lambda T, a, t, **k: f(T).binary_cross_entropy_with_logits(a, t, **k),
                 floats(4, 3), const(unit(4, 3))),
    *_loss_cases("kl_div", lambda T, a, t, **k: f(T).kl_div(a, t, **k),
                 floats(4, 3), unit(4, 3)),
    Case("cross_entropy-smoothing-ignore",
         lambda T, a, t: f(T).cross_entropy(a, t, ignore_index=0, label_smoothing=0.3),
         floats(4, 3), ints(3, 4)),
    Case("poisson_nll_loss-log-full",
         lambda T, a, t: f(T).poisson_nll_loss(a, t, full=True), floats(4, 3),
         floats(4, 3, low=0.5, high=3.0)),
    Case("huber_loss-delta", lambda T, a, b: f(T).huber_loss(a, b, delta=0.5),
         floats(4, 3), floats(4, 3)),
    Case("hinge_embedding_loss-margin",
         lambda T, a, t: f(T).hinge_embedding_loss(a, t, margin=0.3), floats(4, 3),
         signs(4, 3)),
    Case("kl_div-log-target-batchmean",
         lambda T, a, t: f(T).kl_div(a, t, reduction="batchmean", log_target=True),
         floats(4, 3), floats(4, 3)),
    Case("triplet_margin_loss-pinf",
         lambda T, a, p, n: f(T).triplet_margin_loss(a, p, n, p=float("inf")),
         floats(4, 3), floats(4, 3), floats(4, 3)),
    Case("kl_div-batchmean",
         lambda T, a, t: f(T).kl_div(a, t, reduction="batchmean"), floats(4, 3), unit(4, 3)),
    *_loss_cases("kl_div-log-target",
                 lambda T, a, t, **k: f(T).kl_div(a, t, log_target=True, **k),
                 floats(4, 3), floats(4, 3)),
    *_loss_cases("poisson_nll_loss", lambda T, a, t, **k: f(T).poisson_nll_loss(a, t, **k),
                 floats(4, 3), unit(4, 3)),
    *_loss_cases("poisson_nll_loss-full",
                 lambda T, a, t, **k: f(T).poisson_nll_loss(a, t, log_input=False, full=True,
                                                             **k),
                 unit(4, 3), floats(4, 3, low=0.5, high=3.0)),
    *_loss_cases("margin_ranking_loss",
                 lambda T, a, b, t, **k: f(T).margin_ranking_loss(a, b, t, margin=0.1, **k),
                 floats(4), floats(4), signs(4)),
    *_loss_cases("hinge_embedding_loss",
                 lambda T, a, t, **k: f(T).hinge_embedding_loss(a, t, **k),
                 floats(4, 3), signs(4, 3)),
    *_loss_cases("soft_margin_loss", lambda T, a, t, **k: f(T).soft_margin_loss(a, t, **k),
                 floats(4, 3), signs(4, 3)),
    *_loss_cases("cosine_embedding_loss",
                 lambda T, a, b, t, **k: f(T).cosine_embedding_loss(a, b, t, margin=0.1, **k),
                 floats(4, 3), floats(4, 3), signs(4)),
    *_loss_cases("triplet_margin_loss",
                 lambda T, a, p, n, **k: f(T).triplet_margin_loss(a, p, n, **k),
                 floats(4, 3), floats(4, 3), floats(4, 3)),
    *_loss_cases("triplet_margin_loss-swap",
                 lambda T, a, p, n, **k: f(T).triplet_margin_loss(a, p, n, swap=True, p=1, **k),
                 floats(4, 3), floats(4, 3), floats(4, 3)),
    *_loss_cases("binary_cross_entropy-weight",
                 lambda T, a, t, w, **k: f(T).binary_cross_entropy(a, t, w, **k),
                 unit(4, 3), unit(4, 3), const(unit(3))),
    *_loss_cases("binary_cross_entropy_with_logits-weights",
                 lambda T, a, t, w, pw, **k: f(T).binary_cross_entropy_with_logits(
                     a, t, w, pos_weight=pw, **k),
                 floats(4, 3), unit(4, 3), const(unit(4, 3)), const(unit(3))),
    *_loss_cases("soft_margin_loss-grad-input-only",
                 lambda T, a, t, **k: f(T).soft_margin_loss(a, t, **k),
                 floats(4, 3, dtype=np.float64), signs(4, 3, dtype=np.float64)),
    *_loss_cases("nll_loss-3d", lambda T, a, t, **k: f(T).nll_loss(a, t, **k),
                 floats(2, 3, 4), ints(3, 2, 4)),
]


def _bilinear_module(T, weight, bias):
    module = T.nn.Bilinear(3, 5, 2)
    with T.no_grad():
        module.weight.copy_(weight)
        module.bias.copy_(bias)
    return module


def _run(T, case, arrays):
    tensors = [_tensor(T, a, True) for a in arrays]
    out = case.fn(T, *tensors)
    leaves = [t for t in tensors if isinstance(t, T.Tensor) and t.requires_grad]
    return out, leaves


def _numpy(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


@pytest.mark.parametrize("case", CASES + LOSS_CASES, ids=repr)
def test_graph_values_and_grads_match_torch(case):
    arrays = case.arrays()
    t_out, t_leaves = _run(torch, case, arrays)
    e_out, e_leaves = _run(ember, case, arrays)
    assert graph_names(e_out.grad_fn) == graph_names(t_out.grad_fn)
    if not case.values:
        return
    np.testing.assert_allclose(_numpy(e_out), _numpy(t_out), rtol=1e-5, atol=1e-6)
    upstream = np.random.default_rng(1).uniform(-1, 1, tuple(t_out.shape)).astype(
        _numpy(t_out).dtype)
    t_grads = torch.autograd.grad(t_out, t_leaves, torch.tensor(upstream), allow_unused=True)
    e_grads = ember.autograd.grad(e_out, e_leaves, ember.tensor(upstream), allow_unused=True)
    for i, (e, t) in enumerate(zip(e_grads, t_grads)):
        assert (e is None) == (t is None), f"grad {i}"
        if t is not None:
            np.testing.assert_allclose(_numpy(e), _numpy(t), rtol=1e-4, atol=1e-5,
                                       err_msg=f"grad {i}")


# ----------------------------------------------------------------------------- new primitives
# The primitives these graphs needed (TrilinearBackward0, SafeSoftmaxBackward0, the scalar-operand
# nodes, ...) have derivatives written in ember ops: gradients of gradients must be right too.
def _f64(*shapes, low=-1.0, high=1.0):
    rng = np.random.default_rng(2)
    return [ember.tensor(rng.uniform(low, high, s), requires_grad=True) for s in shapes]


EF = ember.nn.functional
SECOND_ORDER = {
    "bilinear": (lambda a, b, w, c: EF.bilinear(a, b, w, c), _f64((3, 2), (3, 4), (2, 2, 4), (2,))),
    "bilinear-batched": (lambda a, b, w: EF.bilinear(a, b, w), _f64((2, 2, 2), (2, 2, 3),
                                                                    (2, 2, 3))),
    "pairwise_distance": (lambda a, b: EF.pairwise_distance(a, b, p=3.0), _f64((3, 2), (3, 2))),
    "triplet_margin_loss": (lambda a, p, n: EF.triplet_margin_loss(a, p, n, margin=2.0),
                            _f64((3, 2), (3, 2), (3, 2))),
    "margin_ranking_loss": (lambda a, b: EF.margin_ranking_loss(
        a, b, ember.tensor([1.0, -1.0, 1.0], dtype=ember.float64), margin=0.5),
        _f64((3,), (3,))),
    "cross_entropy-probs": (lambda a, t: EF.cross_entropy(a, t, label_smoothing=0.1),
                            _f64((3, 4), (3, 4))),
    "soft_margin_loss": (lambda a: EF.soft_margin_loss(
        a, ember.tensor([[1.0, -1.0], [-1.0, 1.0]], dtype=ember.float64)), _f64((2, 2))),
    "normalize": (lambda a: EF.normalize(a), _f64((3, 2))),
    "cosine_embedding_loss": (lambda a, b: EF.cosine_embedding_loss(
        a, b, ember.tensor([1.0, -1.0, -1.0], dtype=ember.float64), margin=-0.5),
        _f64((3, 2), (3, 2))),
    "sdpa-math-masked": (lambda q, k, v, m: EF.scaled_dot_product_attention(q, k, v, m),
                         _f64((2, 3, 2), (2, 3, 2), (2, 3, 2), (3, 3))),
    "sdpa-fused-gqa": (lambda q, k, v: EF.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                       _f64((1, 4, 2, 2), (1, 2, 2, 2), (1, 2, 2, 2))),
    "pad-circular": (lambda a: EF.pad(a, (1, 2, 0, 1), mode="circular"), _f64((1, 1, 2, 3))),
    "instance_norm": (lambda a, w, b: EF.instance_norm(a, weight=w, bias=b),
                      _f64((2, 2, 3), (2,), (2,))),
}


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_gradgradcheck_float64(name):
    fn, inputs = SECOND_ORDER[name]
    assert ember.autograd.gradgradcheck(fn, tuple(inputs))


def test_fused_gqa_gradients_match_torch():
    rng = np.random.default_rng(3)
    arrays = [rng.uniform(-1, 1, s).astype(np.float32) for s in ((1, 4, 3, 2), (1, 2, 3, 2),
                                                                 (1, 2, 3, 2))]
    grads = []
    for T in (torch, ember):
        q, k, v = (T.tensor(a, requires_grad=True) for a in arrays)
        out = T.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        assert out.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
        grads.append([_numpy(g) for g in T.autograd.grad(out.square().sum(), (q, k, v))])
    for e, t in zip(grads[1], grads[0]):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------- weights
# A weight the loss is not differentiable for is an option of its node, not an edge; torch
# refuses one that requires grad (while grad mode is on).
def _weight_errors(T):
    F_ = T.nn.functional
    x = T.tensor([[0.2, 0.7]], requires_grad=True)
    t = T.tensor([[0.0, 1.0]])
    w = T.tensor([[1.0, 2.0]], requires_grad=True)
    out = [catch(F_.binary_cross_entropy, x, t, w),
           catch(F_.binary_cross_entropy_with_logits, x, t, w),
           catch(F_.binary_cross_entropy_with_logits, x, t, None, pos_weight=w),
           catch(F_.soft_margin_loss, x, w)]
    with T.no_grad():
        out += [F_.binary_cross_entropy(x, t, w), F_.soft_margin_loss(x, w)]
    return out


def test_weight_that_requires_grad_is_refused_as_torch_does():
    same(_weight_errors)


def test_loss_weights_must_have_the_input_shape():
    def scenario(T):
        x, t, w = T.ones(4, 3), T.zeros(4, 3), T.ones(3)
        F_ = T.nn.functional
        return [catch(F_.mse_loss, x, t, weight=w), catch(F_.l1_loss, x, t, weight=w),
                catch(F_.huber_loss, x, t, weight=w)]
    same(scenario)


def test_instance_norm_needs_more_than_one_spatial_element():
    same(lambda T: catch(T.nn.functional.instance_norm, T.ones(2, 3, 1)))


def test_bilinear_shape_errors_match_torch():
    def scenario(T):
        def call(*shapes):
            return catch(T.nn.functional.bilinear, *[T.ones(*s) for s in shapes])
        return [call((4, 3), (3, 5), (2, 3, 5)), call((4, 3), (4, 5), (2, 4, 5)),
                call((4, 3), (4, 5), (2, 3, 6)), call((2, 4, 3), (4, 5), (2, 3, 5)),
                call((4, 3), (4, 5), (2, 3, 5), (3,)), call((4, 3), (4, 5), (2, 3, 5), (2,))]
    same(scenario)
