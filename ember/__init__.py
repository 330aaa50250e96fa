"""ember: a PyTorch-compatible tensor library with define-by-run autograd, on NumPy.

    import ember as torch
"""
import numpy as _np

# PyTorch never warns about floating-point exceptions (1/0 -> inf, log(0) -> -inf); ember
# computes through NumPy, so its warnings for them are silenced once, here.
_np.seterr(all="ignore")

from . import _dtype
from ._dtype import (dtype, bool_ as bool, uint8, int8, int16, int32, int64, float16,
                     bfloat16, float32, float64, complex64, complex128, get_default_dtype,
                     set_default_dtype, promote_types, can_cast, finfo, iinfo)
from ._dtype import (int16 as short, int32 as int, int64 as long, float16 as half,
                     float32 as float, float64 as double, complex64 as cfloat,
                     complex128 as cdouble)
from ._device import device, set_default_device, get_default_device
from ._tensor import Tensor, Size
from .ops import methods as _methods  # noqa: F401  (binds Tensor methods and operators)
from .ops.creation import (tensor, as_tensor, asarray, from_numpy, zeros, ones, empty, full,
                           zeros_like, ones_like, empty_like, full_like, empty_strided, eye,
                           arange, linspace, logspace, clone, scalar_tensor)
from .ops.random import (rand_like, randn_like, randint_like, rand, randn, randint, randperm,
                         normal, bernoulli, multinomial, poisson, manual_seed, seed, initial_seed,
                         get_rng_state, set_rng_state, Generator, default_generator)
from .ops.arithmetic import (add, sub, mul, div, true_divide, floor_divide, remainder, fmod, pow,
                             float_power, atan2, arctan2, maximum, minimum, fmax, fmin, square,
                             rsub)
from .ops.pointwise import (neg, negative, abs, absolute, sign, sgn, reciprocal, sqrt, rsqrt, exp,
                            exp2, expm1, log, log2, log10, log1p, sin, cos, tan, asin, acos, atan,
                            sinh, cosh, tanh, asinh, acosh, atanh, arcsin, arccos, arctan, arcsinh,
                            arccosh, arctanh, sigmoid, erf, erfc, erfinv, relu, floor, ceil, trunc,
                            fix, frac, round, logit, nan_to_num, clamp, clip, clamp_min, clamp_max,
                            where, masked_fill, lerp, addcmul, addcdiv, isnan, isinf, isfinite,
                            isposinf, isneginf, signbit)
from .ops.comparison import (eq, ne, lt, le, gt, ge, less, less_equal, greater, greater_equal,
                             not_equal, isclose, allclose, equal)
from .ops.logical import (logical_and, logical_or, logical_xor, logical_not, bitwise_and,
                          bitwise_or, bitwise_xor, bitwise_not, bitwise_left_shift,
                          bitwise_right_shift)
from .ops.reduction import (sum, mean, prod, max, min, amax, amin, argmax, argmin, var, std,
                            var_mean, std_mean, logsumexp, all, any, count_nonzero)
from .ops.norms import norm
from .ops.softmax import softmax, log_softmax
from .ops.scan import cumsum, cumprod
from .ops.views import (reshape, flatten, unflatten, squeeze, unsqueeze, permute, movedim,
                        transpose, t, narrow, select, unbind, split, chunk, tensor_split, diagonal,
                        as_strided)
from .ops.views import transpose as swapaxes, transpose as swapdims, movedim as moveaxis
from .ops.joining import (cat, concat, concatenate, stack, hstack, vstack, dstack,
                          column_stack, row_stack)
from .ops.scatter_gather import gather, scatter, scatter_add
from .ops.indexing import index_select, masked_select, nonzero, index_add, index_put, argwhere
from .ops.sorting import sort, argsort, topk, kthvalue, msort
from .ops.shape import flip, fliplr, flipud, roll, tile, tril, triu
from .ops.blas import matmul, mm, bmm, mv, dot, outer, ger, addmm, einsum
from .ops.complex import real, imag, conj, view_as_real, view_as_complex
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode
from .autograd.grad_mode import is_grad_enabled, is_inference_mode_enabled
from .autograd.anomaly_mode import (is_anomaly_enabled, is_anomaly_check_nan_enabled,
                                    set_anomaly_enabled)
from . import autograd, cuda, linalg, backends
from . import special
from . import optim
from ._printing import set_printoptions, get_printoptions
from .ops.creation import make_legacy_types as _make_legacy_types

globals().update(_make_legacy_types())

from ._tensor import layout, memory_format  # noqa: E402
strided = layout("torch.strided")
contiguous_format = memory_format("torch.contiguous_format")
preserve_format = memory_format("torch.preserve_format")
channels_last = memory_format("torch.channels_last")
channels_last_3d = memory_format("torch.channels_last_3d")
inf = _np.inf
nan = _np.nan
pi = 3.141592653589793
e = 2.718281828459045
newaxis = None

Tensor.__module__ = "ember"
__version__ = "0.1.0"


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input._dtype.is_floating_point


def is_complex(input):
    return input._dtype.is_complex


def numel(input):
    return input.numel()


def result_type(tensor1, tensor2):
    return _dtype.result_dtype([tensor1, tensor2])


import builtins as _builtins  # noqa: E402


def broadcast_shapes(*shapes):
    """The broadcast of the shapes, merged right to left one shape at a time, with PyTorch's
    errors (they name the first shape that does not fit what the earlier ones made)."""
    # (`int` is ember.int, a dtype, in this module: a plain number is told by __index__)
    sized = []
    for s in shapes:
        if isinstance(s, (tuple, list)):
            sized.append(s)
        elif hasattr(s, "__index__") and not isinstance(s, Tensor):
            sized.append((s,))
        else:
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {s}")
    result = [1] * _builtins.max((len(s) for s in sized), default=0)   # (max: ember's)
    for i, (given, shape) in enumerate(zip(shapes, sized)):
        for j in _builtins.range(-1, -len(shape) - 1, -1):
            n = shape[j]
            if n == 1 or n == result[j]:
                continue
            if result[j] != 1:
                shown = given if isinstance(given, (tuple, list)) else tuple(shape)
                raise RuntimeError(f"Attempting to broadcast a dimension of length {n} at {j}! "
                                   f"Mismatching argument at index {i} had {shown}; but "
                                   f"expected shape should be broadcastable to {result}")
            if n < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            result[j] = n
    return Size(result)


def broadcast_tensors(*tensors):
    from .ops.registry import check_broadcast
    check_broadcast(tensors)                        # (PyTorch's message for tensors)
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t.expand(shape) for t in tensors)


def detach(input):
    return input.detach()


subtract = sub
multiply = mul
divide = div

# checkpoints, data loading (ember.utils)
from .serialization import save, load  # noqa: E402
from . import utils  # noqa: E402,F401
from ._threads import set_num_threads, get_num_threads  # noqa: E402
from . import amp  # noqa: E402
from .amp import (autocast, is_autocast_enabled, get_autocast_dtype,  # noqa: E402
                  set_autocast_enabled, set_autocast_dtype, is_autocast_available)
from . import nn  # noqa: E402,F401
from .nn.utils.parametrizations import (norm_except_dim,  # noqa: E402
                                      weight_norm_value as _weight_norm)
from .nn._toplevel_ops import *  # noqa: E402,F401,F403  (torch.conv2d, torch.dropout, ...)
from . import vision  # noqa: E402,F401  (ember.vision.models: torchvision's ResNets)
from . import viz  # noqa: E402,F401  (pictures of the backward graph)
from . import distributions  # noqa: E402,F401  (torch.distributions' core)
from . import fft  # noqa: E402,F401  (ember.fft: discrete Fourier transforms)
from .ops.linalg_solvers import (inverse, det, logdet, slogdet,  # noqa: E402
                                 pinverse, cholesky_solve, cholesky_inverse, triangular_solve)
from .ops.linalg_decompositions import (cholesky, svd_old as svd, qr_old as qr,  # noqa: E402
                                        matrix_exp, lu_old as lu, lu_unpack,
                                        lu_solve_old as lu_solve, geqrf, orgqr)
from .ops.reduction import trace  # noqa: E402
from .ops.indexing import diag  # noqa: E402
from .ops.blas import cross, chain_matmul  # noqa: E402


_float32_matmul_precision = ["highest"]


def get_float32_matmul_precision():
    return _float32_matmul_precision[0]


def set_float32_matmul_precision(precision):
    """Accepted as in torch; ember's float32 products are always computed in full precision."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid float32 matmul precision: {precision}")
    _float32_matmul_precision[0] = precision
from .ops.arithmetic import *  # noqa: E402,F401,F403
from .ops.special import *  # noqa: E402,F401,F403
from .ops.pointwise_math import *  # noqa: E402,F401,F403
from .ops.statistics import *  # noqa: E402,F401,F403
from .ops.reduction import *  # noqa: E402,F401,F403
from .ops.scan import *  # noqa: E402,F401,F403
from .ops.calculus import *  # noqa: E402,F401,F403
from .ops.sorting import *  # noqa: E402,F401,F403
from .ops.shape import *  # noqa: E402,F401,F403
from .ops.indexing import *  # noqa: E402,F401,F403
from .ops.blas import *  # noqa: E402,F401,F403
from .ops.norms import *  # noqa: E402,F401,F403
from .ops.special_bessel import *  # noqa: E402,F401,F403
from .ops.complex import *  # noqa: E402,F401,F403
from .ops.scatter_gather import *  # noqa: E402,F401,F403
from .ops.spectral import *  # noqa: E402,F401,F403
from .ops.settings import *  # noqa: E402,F401,F403
from .ops.tensor_info import *  # noqa: E402,F401,F403
from .ops.creation import *  # noqa: E402,F401,F403
from .ops.range import *  # noqa: E402,F401,F403
from .ops.inplace_functions import *  # noqa: E402,F401,F403
from .ops.creation import fill_  # noqa: E402,F401
from . import random, testing  # noqa: E402,F401  (torch.random, torch.testing)
from .utils import checkpoint as _checkpoint  # noqa: E402,F401  (ember.utils.checkpoint)
from ._compile import compile  # noqa: E402,F401  (a no-op, as documented there)
from .func import vmap  # noqa: E402,F401  (ember.func: torch.func's transforms; torch.vmap)
from .nn.functional import conv_tbc  # noqa: E402,F401
from .ops.view_copies import *  # noqa: E402,F401,F403
from .nn._native_ops import *  # noqa: E402,F401,F403
from .ops.random import *  # noqa: E402,F401,F403
from .ops.linalg_decompositions import *  # noqa: E402,F401,F403
from .ops.dlpack import *  # noqa: E402,F401,F403
from . import signal, version  # noqa: E402,F401  (ember.signal.windows; ember.version)
from . import version as torch_version  # noqa: E402,F401  (TorchVersion)
__version__ = version.__version__  # noqa: E402  (a TorchVersion, as torch.__version__)
from . import jit, profiler, mps, xpu, accelerator, distributed, compiler  # noqa: E402,F401
from . import multiprocessing  # noqa: E402,F401  (Python's, with torch's spawn)
from .autograd import profiler as _autograd_profiler  # noqa: E402,F401  (autograd.profiler)
from ._storage import UntypedStorage  # noqa: E402,F401
from ._typed_storage import *  # noqa: E402,F401,F403  (TypedStorage, FloatStorage, ...: names)
from . import hub, onnx, overrides, types  # noqa: E402,F401  (torch.hub, .onnx, .overrides, .types)
from . import _names; _names.apply()  # noqa: E402,E702  (torch's names in TypeErrors; last)
