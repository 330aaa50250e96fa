"""The nn ops torch exposes at its top level (torch.conv2d, torch.dropout, torch.batch_norm, ...).

They are torch's native entry points, so their signatures are not torch.nn.functional's: losses
take `reduction` as an int (1 mean, 2 sum, any other none), dropout's `train` is a required
positional, torch.embedding takes the weight first, batch_norm takes its tensors in native
order. Each one here maps its arguments onto ember.nn.functional, which does the work (so
values, graphs and node names are those of the functional form).
"""
from . import functional as F
from .functional.dropout import _feature_dropout
from .functional.normalization import _native_batch_norm, _native_instance_norm
from .functional.loss import _reduce
from .functional.vision import grid_sampler, affine_grid_generator

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
    "adaptive_avg_pool1d", "adaptive_max_pool1d",
    "dropout", "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout",
    "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
    "batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "embedding",
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
    "prelu", "rrelu", "rrelu_", "selu", "selu_", "celu", "celu_", "relu_", "threshold",
    "threshold_", "hardshrink", "bilinear", "cosine_similarity", "pairwise_distance",
    "kl_div", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
    "hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss",
    "grid_sampler", "affine_grid_generator", "pdist",
]

# ---------------------------------------------------------------------------- same as F
# (torch's functional form calls these with the same arguments)
conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = \
    F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d
avg_pool1d, adaptive_avg_pool1d = F.avg_pool1d, F.adaptive_avg_pool1d
pixel_shuffle, pixel_unshuffle = F.pixel_shuffle, F.pixel_unshuffle
channel_shuffle = F.channel_shuffle
prelu, hardshrink, bilinear = F.prelu, F.hardshrink, F.bilinear
cosine_similarity, pairwise_distance = F.cosine_similarity, F.pairwise_distance
pdist = F.pdist
relu_, selu_, celu_, rrelu_, threshold_ = F.relu_, F.selu_, F.celu_, F.rrelu_, F.threshold_


# ---------------------------------------------------------------------------- argument checks
def _type_error(fn, arg, expected, value, position=None):
    where = f" (position {position})" if position is not None else ""
    return TypeError(f"{fn}(): argument '{arg}'{where} must be {expected}, not "
                     f"{type(value).__name__}")


def _reduction_word(fn, reduction):
    """torch's native reduction enum as F's word: 1 mean, 2 sum, any other int none."""
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise _type_error(fn, "reduction", "int", reduction)
    return {1: "mean", 2: "sum"}.get(reduction, "none")


def _check_shape_arg(fn, normalized_shape):
    if isinstance(normalized_shape, int):
        raise _type_error(fn, "normalized_shape", "tuple of ints", normalized_shape, 2)


def _stride(stride):
    """torch's native pools take stride=() (or None) for "the kernel size": F's None."""
    if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0):
        return None
    return stride


# ---------------------------------------------------------------------------- pooling
def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                        return_indices=True)


def adaptive_max_pool1d(input, output_size):
    """(values, indices), always."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


# ---------------------------------------------------------------------------- dropout
def _check_dropout(fn, p, train):
    # torch's native dropouts check p even when not training, with a RuntimeError
    if not isinstance(train, bool):
        raise _type_error(fn, "train", "bool", train, 3)
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")


def _check_feature(input, train):
    if train and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")


def dropout(input, p, train):
    _check_dropout("dropout", p, train)
    return F.dropout(input, p, train)


def dropout_(input, p, train):
    _check_dropout("dropout_", p, train)
    return F.dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    """Whole channels (dim 1) of each sample (dim 0) are dropped together."""
    _check_dropout("feature_dropout", p, train)
    _check_feature(input, train)
    return _feature_dropout(input, p, train, False, batched=True)


def feature_dropout_(input, p, train):
    _check_dropout("feature_dropout_", p, train)
    _check_feature(input, train)
    return _feature_dropout(input, p, train, True, batched=True)


def alpha_dropout(input, p, train):
    _check_dropout("alpha_dropout", p, train)
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    _check_dropout("alpha_dropout_", p, train)
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    _check_dropout("feature_alpha_dropout", p, train)
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    _check_dropout("feature_alpha_dropout_", p, train)
    return F.feature_alpha_dropout(input, p, train, inplace=True)


# ---------------------------------------------------------------------------- normalization
# the native ops: nn.functional's checks for a single value per channel / spatial element
# are not theirs (torch returns a result there)
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return _native_batch_norm(input, running_mean, running_var, weight, bias, training,
                                momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    return _native_instance_norm(input, running_mean, running_var, weight, bias,
                                   use_input_stats, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    _check_shape_arg("layer_norm", normalized_shape)
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


# ---------------------------------------------------------------------------- embedding
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """F.embedding with the weight first. padding_idx is a row number; -1 (or any number
    that is not a row) means no padding row."""
    padding = padding_idx if 0 <= padding_idx < weight.shape[0] else None
    return F.embedding(indices, weight, padding, scale_grad_by_freq=scale_grad_by_freq,
                       sparse=sparse)


# ---------------------------------------------------------------------------- activations
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return F.rrelu(input, lower, upper, training)


def selu(input):
    return F.selu(input)


def celu(input, alpha=1.0):
    return F.celu(input, alpha)


def threshold(input, threshold, value):
    return F.threshold(input, threshold, value)


# ---------------------------------------------------------------------------- losses
# (torch's Python bindings of these leave the loss unreduced unless `reduction` is given)
def kl_div(input, target, reduction=0, *, log_target=False):
    # unreduced, then reduced here: F's 'mean' would warn, the native op does not
    word = _reduction_word("kl_div", reduction)
    return _reduce(F.kl_div(input, target, reduction="none", log_target=log_target), word)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    word = _reduction_word("binary_cross_entropy_with_logits", reduction)
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=word,
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    word = _reduction_word("cosine_embedding_loss", reduction)
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=word)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    word = _reduction_word("hinge_embedding_loss", reduction)
    return F.hinge_embedding_loss(input, target, margin, reduction=word)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    word = _reduction_word("margin_ranking_loss", reduction)
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=word)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    word = _reduction_word("poisson_nll_loss", reduction)
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=word)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        reduction=0):
    word = _reduction_word("triplet_margin_loss", reduction)
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=word)
