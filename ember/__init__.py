"""ember: a PyTorch-compatible tensor library with define-by-run autograd, on NumPy.

    import ember as torch
"""
import sys as _sys

import numpy as _np

# PyTorch never warns about floating-point exceptions (1/0 -> inf, log(0) -> -inf); ember
# computes through NumPy, so its warnings for them are silenced once, here.
_np.seterr(all="ignore")

# large temporaries reuse freed memory instead of faulting in fresh pages (see _malloc.py)
from . import _malloc
_malloc.keep_freed_memory()
# OpenBLAS's idle threads sleep instead of spinning on the cores ember's threads need
from . import _threads
_threads.quiet_idle_blas_threads()

from . import _dtype
from ._dtype import (dtype, bool_ as bool, uint8, uint16, uint32, uint64, int8, int16, int32,
                     int64, float16, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
                     float8_e5m2fnuz, float8_e8m0fnu,
                     bfloat16, float32, float64, complex32, complex64, complex128,
                     get_default_dtype,
                     set_default_dtype, promote_types, can_cast, finfo, iinfo)
from ._dtype import (int16 as short, int32 as int, int64 as long, float16 as half,
                     float32 as float, float64 as double, complex32 as chalf,
                     complex64 as cfloat,
                     complex128 as cdouble)
from ._device import device, set_default_device, get_default_device
# autograd before the Tensor class: its graph and grad-mode modules (which the Tensor class
# and the op registry build on) then load first, and its modules built on Tensor load once
# the class exists
from . import autograd
from ._tensor import Tensor, Size
from .ops import tensor_methods as _tensor_methods  # noqa: F401  (binds Tensor's methods)
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
from .ops.creation import LEGACY_TYPES as _LEGACY_TYPES

globals().update(_LEGACY_TYPES)

from ._layout import (layout, memory_format, strided, sparse_coo, sparse_csr,  # noqa: E402
                      sparse_csc, sparse_bsr, sparse_bsc,
                      contiguous_format, preserve_format, channels_last, channels_last_3d)
from .ops.registry import check_broadcast
inf = _np.inf
nan = _np.nan
pi = 3.141592653589793
e = 2.718281828459045
newaxis = None

Tensor.__module__ = "ember"


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
from . import futures  # noqa: E402,F401
from ._threads import set_num_threads, get_num_threads  # noqa: E402
from . import amp  # noqa: E402
from .amp import (autocast, is_autocast_enabled, get_autocast_dtype,  # noqa: E402
                  set_autocast_enabled, set_autocast_dtype, is_autocast_available)
from . import nn  # noqa: E402,F401
from .nn.utils.parametrizations import (norm_except_dim,  # noqa: E402
                                      weight_norm_value as _weight_norm)
from .nn._toplevel_ops import (  # noqa: E402,F401  (torch.conv2d, torch.dropout, ...)
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, max_pool1d,
    max_pool2d, max_pool3d, max_pool1d_with_indices, avg_pool1d, adaptive_avg_pool1d,
    adaptive_max_pool1d, dropout, dropout_, feature_dropout, feature_dropout_, alpha_dropout,
    alpha_dropout_, feature_alpha_dropout, feature_alpha_dropout_, batch_norm, instance_norm,
    layer_norm, group_norm, rms_norm, embedding, pixel_shuffle, pixel_unshuffle, channel_shuffle,
    prelu, rrelu, rrelu_, selu, selu_, celu, celu_, relu_, threshold, threshold_, hardshrink,
    bilinear, cosine_similarity, pairwise_distance, kl_div, binary_cross_entropy_with_logits,
    cosine_embedding_loss, hinge_embedding_loss, margin_ranking_loss, poisson_nll_loss,
    triplet_margin_loss, grid_sampler, affine_grid_generator, pdist)
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
from .ops.arithmetic import (  # noqa: E402,F401
    gcd, gcd_, lcm, lcm_, logaddexp, logaddexp2, hypot, copysign, heaviside, nextafter, ldexp,
    ldexp_)
from .ops.special import mvlgamma, igamma, igammac, xlogy, xlogy_, polygamma  # noqa: E402,F401
from .ops.pointwise_math import (  # noqa: E402,F401
    frexp, positive, lgamma, digamma, deg2rad, deg2rad_, rad2deg, rad2deg_, sinc, sinc_, angle)
from .ops.statistics import (  # noqa: E402,F401
    histogramdd, histogram, median, nanmedian, mode, quantile, nanquantile, bincount, histc, cov,
    corrcoef)
from .ops.reduction import nanmean, nansum, aminmax  # noqa: E402,F401
from .ops.scan import cummax, cummin, logcumsumexp  # noqa: E402,F401
from .ops.calculus import trapezoid, trapz, cumulative_trapezoid, gradient, diff  # noqa: E402,F401
from .ops.sorting import (  # noqa: E402,F401
    unique, unique_consecutive, searchsorted, bucketize, isin)
from .ops.shape import (  # noqa: E402,F401
    combinations, vander, unsafe_split, unsafe_split_with_sizes, unsafe_chunk, ravel,
    split_with_sizes, adjoint, broadcast_to, atleast_1d, atleast_2d, atleast_3d, meshgrid,
    repeat_interleave, rot90, block_diag, cartesian_prod, triu_indices, tril_indices, diag_embed,
    diagflat, hsplit, vsplit, dsplit)
from .ops.indexing import (  # noqa: E402,F401
    unravel_index, nonzero_static, take, take_along_dim, index_fill, index_copy)
from .ops.blas import (  # noqa: E402,F401
    kron, tensordot, inner, addmv, addr, baddbmm, addbmm, matrix_power)
from .ops.norms import frobenius_norm, nuclear_norm, renorm, cdist, dist  # noqa: E402,F401
from .ops.special_bessel import i0, i0_  # noqa: E402,F401
from .ops.complex import (  # noqa: E402,F401
    complex, polar, vdot, conj_physical, conj_physical_, isreal, is_conj, is_neg, resolve_conj,
    resolve_neg)
from .ops.scatter_gather import (  # noqa: E402,F401
    as_strided_scatter, put, masked_scatter, scatter_reduce, select_scatter, slice_scatter,
    diagonal_scatter, index_reduce)
from .ops.spectral import (  # noqa: E402,F401
    hann_window, hamming_window, bartlett_window, blackman_window, kaiser_window, stft, istft)
from .ops.settings import (  # noqa: E402,F401
    set_flush_denormal, get_num_interop_threads, set_num_interop_threads, init_num_threads,
    use_deterministic_algorithms, are_deterministic_algorithms_enabled,
    is_deterministic_algorithms_warn_only_enabled, set_warn_always, is_warn_always_enabled,
    set_default_tensor_type, set_deterministic_debug_mode, get_deterministic_debug_mode)
from .ops.tensor_info import (  # noqa: E402,F401
    is_storage, typename, is_nonzero, is_same_size, is_signed, is_inference, get_device)
from .ops.creation import empty_permuted, frombuffer, fill  # noqa: E402,F401
from .ops.range import range  # noqa: E402,F401
from .ops.inplace_functions import (  # noqa: E402,F401
    addmv_, as_strided_, index_put_, abs_, acos_, acosh_, asin_, asinh_, atan_, atanh_, arccos_,
    arccosh_, arcsin_, arcsinh_, arctan_, arctanh_, ceil_, clamp_, clamp_max_, clamp_min_, clip_,
    cos_, cosh_, erf_, erfc_, exp2_, exp_, expm1_, fix_, floor_, frac_, log10_, log1p_, log2_,
    log_, logit_, nan_to_num_, neg_, negative_, reciprocal_, round_, rsqrt_, sigmoid_, sin_, sinh_,
    sqrt_, square_, tan_, tanh_, trunc_, zero_, detach_, resize_as_)
from .ops.creation import fill_  # noqa: E402,F401
from . import random, testing  # noqa: E402,F401  (torch.random, torch.testing)
from .utils import checkpoint as _checkpoint  # noqa: E402,F401  (ember.utils.checkpoint)
from ._compile import compile  # noqa: E402,F401  (a no-op, as documented there)
from .func import vmap  # noqa: E402,F401  (ember.func: torch.func's transforms; torch.vmap)
from .nn.functional import conv_tbc  # noqa: E402,F401
from .ops.view_copies import (  # noqa: E402,F401
    alias_copy, as_strided_copy, detach_copy, diagonal_copy, expand_copy, permute_copy,
    select_copy, slice_copy, split_copy, split_with_sizes_copy, squeeze_copy, t_copy,
    transpose_copy, unbind_copy, unfold_copy, unsqueeze_copy, view_as_complex_copy,
    view_as_real_copy, view_copy, narrow_copy)
from .nn._native_ops import (  # noqa: E402,F401
    constant_pad_nd, convolution, native_layer_norm, native_batch_norm, native_group_norm,
    native_dropout, native_channel_shuffle, ctc_loss)
from .ops.random import binomial  # noqa: E402,F401
from .ops.linalg_decompositions import svd_lowrank, pca_lowrank  # noqa: E402,F401
from .linalg_lobpcg import lobpcg  # noqa: E402,F401
from .ops.dlpack import from_dlpack, to_dlpack  # noqa: E402,F401
from . import signal, version  # noqa: E402,F401  (ember.signal.windows; ember.version)
from . import version as torch_version  # noqa: E402,F401  (TorchVersion)
__version__ = version.__version__  # noqa: E402  (a TorchVersion, as torch.__version__)
from . import jit, profiler, mps, xpu, accelerator, distributed, compiler  # noqa: E402,F401
from . import multiprocessing  # noqa: E402,F401  (Python's, with torch's spawn)
from .autograd import profiler as _autograd_profiler  # noqa: E402,F401  (autograd.profiler)
from ._storage import UntypedStorage  # noqa: E402,F401
from ._typed_storage import (  # noqa: E402,F401  (TypedStorage, FloatStorage, ...: names)
    TypedStorage, FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage, LongStorage,
    IntStorage, ShortStorage, CharStorage, ByteStorage, BoolStorage, ComplexFloatStorage,
    ComplexDoubleStorage)
from . import hub, onnx, overrides, types  # noqa: E402,F401  (torch.hub, .onnx, .overrides, .types)
from . import storage  # noqa: E402,F401  (torch.storage: the typed-storage warning's switches)
from . import sparse  # noqa: E402,F401  (torch.sparse: COO tensors)
from .sparse._conversions import sparse_coo_tensor  # noqa: E402,F401
from .sparse._compressed import (sparse_csr_tensor, sparse_csc_tensor,  # noqa: E402,F401
                                 sparse_bsr_tensor, sparse_bsc_tensor, sparse_compressed_tensor)
spmm = mm  # noqa: E402  (torch.spmm: mm with a sparse first operand)
from ._storage import StorageBase  # noqa: E402,F401
from ._build_info import (  # noqa: E402,F401  (build flags, accelerator errors, CPU streams)
    has_lapack, has_mkl, has_openmp, has_spectral, compiled_with_cxx11_abi, is_vulkan_available,
    is_distributed, get_device_module, AcceleratorError, OutOfMemoryError, FatalError, Stream,
    Event)
from ._autocast_legacy import (  # noqa: E402,F401  (torch's per-device autocast functions)
    get_autocast_cpu_dtype, get_autocast_gpu_dtype, set_autocast_cpu_dtype,
    set_autocast_gpu_dtype, is_autocast_cpu_enabled, set_autocast_cpu_enabled,
    is_autocast_cache_enabled, set_autocast_cache_enabled, clear_autocast_cache,
    autocast_increment_nesting, autocast_decrement_nesting)
from .ops.removed import eig, lstsq, solve, symeig, matrix_rank  # noqa: E402,F401
from .amp import GradScaler  # noqa: E402,F401
legacy_contiguous_format = contiguous_format  # noqa: E402  (its old name, as in torch)


def __getattr__(name):
    # torch.Storage is the legacy storage class of the default dtype, which may change
    if name == "Storage":
        return _typed_storage_class(get_default_dtype())
    raise AttributeError(f"module 'ember' has no attribute '{name}'")


from ._typed_storage import storage_class as _typed_storage_class  # noqa: E402
from . import cpu  # noqa: E402,F401  (the CPU device module)
from .ops.ormqr import ormqr  # noqa: E402,F401
from .ops.hashing import hash_tensor  # noqa: E402,F401
from .ops.file_tensors import from_file  # noqa: E402,F401
from ._torch_function_switch import (  # noqa: E402,F401
    DisableTorchFunction, DisableTorchFunctionSubclass)
from .random import thread_safe_generator  # noqa: E402,F401
from .sparse._native_norm import native_norm  # noqa: E402,F401
from ._control_flow import cond, while_loop, fork, wait, Future  # noqa: E402,F401
from .nn._native_forms import (  # noqa: E402,F401  (torch.embedding_bag, grid_sampler_2d, ...)
    embedding_bag, embedding_renorm_, grid_sampler_2d, grid_sampler_3d, segment_reduce)
from .nn._batch_norm_ops import (  # noqa: E402,F401  (SyncBatchNorm's building blocks)
    batch_norm_stats, batch_norm_elemt, batch_norm_gather_stats,
    batch_norm_gather_stats_with_counts, batch_norm_backward_reduce, batch_norm_backward_elemt,
    batch_norm_update_stats)
from .nn._rnn_ops import (  # noqa: E402,F401  (torch.lstm, torch.gru_cell, ...)
    lstm, gru, rnn_tanh, rnn_relu, lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell)
from . import masked, library  # noqa: E402,F401  (torch.masked, torch.library)
from . import _names  # noqa: E402  (torch's names in TypeErrors; last)
_names.apply(_sys.modules[__name__])
