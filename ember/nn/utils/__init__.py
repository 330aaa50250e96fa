"""ember.nn.utils: gradient clipping, flattening parameters into one vector, and `rnn`
(packed and padded variable-length sequences),
parametrizations (parametrize, parametrizations) and the older weight_norm and spectral_norm."""
from .clip_grad import clip_grad_norm_, clip_grad_norm, clip_grad_value_, get_total_norm, \
    clip_grads_with_norm_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from . import rnn, parametrize, parametrizations
from .weight_norm import weight_norm, remove_weight_norm
from .spectral_norm import spectral_norm, remove_spectral_norm
# (prune is not imported here: as in torch, `import ember.nn.utils.prune` makes it reachable)
from . import fusion, memory_format, stateless, init
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, \
    fuse_linear_bn_weights
from .memory_format import convert_conv2d_weight_memory_format, \
    convert_conv3d_weight_memory_format
from .init import skip_init
