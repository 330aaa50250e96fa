"""ember.nn.functional: the functional forms of the layers, one module per category.

Each op that PyTorch's graph shows as its own node (GeluBackward0, NllLossBackward0,
NativeBatchNormBackward0, ...) is a primitive: a forward on raw arrays and a derivative written
in ember ops, so gradients of gradients work. Ops that PyTorch shows as a composite (softsign,
l1_loss, kl_div, ...) are written from other ember ops, so the graphs match. This package
re-exports every public name, as torch's single `torch.nn.functional` module has them.
"""
import types as _types

from ...ops import hooks as _hooks
from .activation import (celu, celu_, elu, elu_, gelu, glu, gumbel_softmax, hardshrink,
                         hardsigmoid, hardswish, hardtanh, hardtanh_, leaky_relu, leaky_relu_,
                         log_softmax, logsigmoid, mish, prelu, relu, relu6, relu_, rrelu, rrelu_,
                         selu, selu_, sigmoid, silu, softmax, softmin, softplus, softshrink,
                         softsign, tanh, tanhshrink, threshold, threshold_)
from .dropout import (alpha_dropout, dropout, dropout1d, dropout2d, dropout3d,
                      feature_alpha_dropout)
from .normalization import (batch_norm, group_norm, instance_norm, layer_norm, local_response_norm,
                            rms_norm)
from .linear import bilinear, linear
from .embedding import embedding, embedding_bag, embedding_renorm_, one_hot
from .distance import cosine_similarity, normalize, pairwise_distance, pdist
from .loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss,
                   cross_entropy, gaussian_nll_loss, hinge_embedding_loss, huber_loss, kl_div,
                   l1_loss, linear_cross_entropy, margin_ranking_loss, mse_loss, multi_margin_loss,
                   multilabel_margin_loss, multilabel_soft_margin_loss, nll_loss, poisson_nll_loss,
                   smooth_l1_loss, soft_margin_loss, triplet_margin_loss,
                   triplet_margin_with_distance_loss)
from .ctc_loss import ctc_loss
from .conv import (conv1d, conv2d, conv3d, conv_tbc, conv_transpose1d, conv_transpose2d,
                   conv_transpose3d, fold, unfold)
from .pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
                      adaptive_max_pool1d, adaptive_max_pool1d_with_indices, adaptive_max_pool2d,
                      adaptive_max_pool2d_with_indices, adaptive_max_pool3d,
                      adaptive_max_pool3d_with_indices, avg_pool1d, avg_pool2d, avg_pool3d,
                      fractional_max_pool2d, fractional_max_pool2d_with_indices,
                      fractional_max_pool3d, fractional_max_pool3d_with_indices, lp_pool1d,
                      lp_pool2d, lp_pool3d, max_pool1d, max_pool1d_with_indices, max_pool2d,
                      max_pool2d_with_indices, max_pool3d, max_pool3d_with_indices, max_unpool1d,
                      max_unpool2d, max_unpool3d)
from .padding import pad
from .vision import (affine_grid, channel_shuffle, grid_sample, interpolate, pixel_shuffle,
                     pixel_unshuffle, upsample, upsample_bilinear, upsample_nearest)
from .attention import multi_head_attention_forward, scaled_dot_product_attention
from .. import grad  # noqa: E402,F401  (torch.nn.functional.grad)
from .dispatch import (GRID_SAMPLE_INTERPOLATION_MODES, GRID_SAMPLE_PADDING_MODES,  # noqa: F401
                       assert_int_or_pair, boolean_dispatch, handle_torch_function,
                       has_torch_function, has_torch_function_unary, has_torch_function_variadic)
from .grouped_mm import grouped_mm  # noqa: F401
from .scaled_mm import ScalingType, SwizzleType, scaled_grouped_mm, scaled_mm  # noqa: F401
from .._native_ops import native_channel_shuffle  # noqa: F401  (torch's, re-exported as torch)

# torch's functional ops report one home, torch.nn.functional: so do these, whichever category
# file defines them (pickle finds them here by that name)
for _value in list(globals().values()):
    if isinstance(_value, _types.FunctionType) and _value.__module__.startswith(__name__ + "."):
        _value.__module__ = __name__
del _value

# the ops below nn that are built on these functions find them in ops.hooks
_hooks.register_nn_functions(pad=pad, fold=fold, hardshrink=hardshrink, prelu=prelu)
