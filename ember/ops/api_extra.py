"""torch's remaining top-level functions: the `*_copy` forms of the view ops, the native entry
points of the nn ops (torch.native_layer_norm, torch.convolution, torch.embedding_bag, ...),
randomised low-rank decompositions, DLPack exchange, and small odds and ends.

Everything here is built on ember's own ops: a `*_copy` op is its view op followed by a
contiguous copy, and the native nn entry points map their arguments onto nn.functional.
"""
import builtins
import inspect

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd import grad_mode
from ._utils import wrap_dim, as_shape, return_type, REQUIRED, require
from . import views as V
from . import complex_views as CV
from . import creation
from .registry import primitive, write_into
from .pointwise import warn_resize, _check_out_dtype


# ----------------------------------------------------------------------------- *_copy
# torch.<view>_copy(x, ...) is x.<view>(...) in fresh contiguous memory. Its node is the view's
# node renamed "<Node>_copy" (PermuteBackward0_copy), with the view's derivative. The copy ops
# are made from the view ops on first use.
_COPY_OPS = {}


def _copy_op(view_op):
    """The op computing `view_op`'s result as a contiguous copy (same options, same
    derivative), its node named after the view's node + "_copy"."""
    key = view_op
    if key not in _COPY_OPS:
        def forward(xp, *args, **options):
            out = view_op.forward(xp, *args, **options)
            if isinstance(out, (list, tuple)):
                return [xp.array(a, order="C", copy=True) for a in out]
            return xp.array(out, order="C", copy=True)
        forward.__signature__ = inspect.signature(view_op.forward)    # (read by primitive)
        op = primitive(view_op.name + "_copy", node=view_op.node_cls.__name__ + "_copy",
                       n_outputs=view_op.n_outputs)(forward)
        op.derivative(view_op.derivative_fn)
        _COPY_OPS[key] = op
    return _COPY_OPS[key]


def _copied(views, input):
    """The views' values as fresh contiguous tensors: with the view's options replayed through
    its copy op where the view recorded a node (so the copy records its own), else plain
    copies."""
    many = isinstance(views, (list, tuple))
    fn = None if many and not views else (views[0] if many else views).grad_fn
    if fn is not None and hasattr(fn, "_op") and fn._op.view:
        return _copy_op(fn._op)(input, **fn._params)
    if many:
        return tuple(_plain_copy(v) for v in views)
    return _plain_copy(views)


def _plain_copy(t):
    from .. import contiguous_format
    with grad_mode.no_grad():
        return creation.clone(t, memory_format=contiguous_format)


def _write_out(result, out, dtype_rule="mm"):
    """A copy op's out=: out's dtype must be the result's (`dtype_rule`, see
    pointwise._check_out_dtype), a mismatched shape is resized with PyTorch's warning."""
    if out is None:
        return result
    if out.shape != result.shape:
        warn_resize(out, result.shape, stacklevel=4)
        out.resize_(result.shape)
    if out._dtype is not result._dtype:
        _check_out_dtype(dtype_rule, None, result._dtype, out._dtype)
    write_into(out, result._data)
    return out


def _write_outs(results, out, name):
    """out= of a copy op returning several tensors: a list of as many tensors."""
    if out is None:
        return results
    if len(out) != len(results):
        raise RuntimeError(f"{name} expected an out= argument of size {len(results)}, got size "
                           f"{len(out)}")
    for r, o in zip(results, out):
        _write_out(r, o)


def as_strided_copy(input, size, stride, storage_offset=None, *, out=None):
    return _write_out(_copied(V.as_strided(input, size, stride, storage_offset), input), out)


def diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None):
    return _write_out(_copied(V.diagonal(input, offset, dim1, dim2), input), out)


def select_copy(input, dim, index, *, out=None):
    return _write_out(_copied(V.select(input, dim, index), input), out)


def squeeze_copy(input, dim=None, *, out=None):
    return _write_out(_copied(V.squeeze(input, dim), input), out)


def t_copy(input, *, out=None):
    return _write_out(_copied(V.t(input), input), out)


def transpose_copy(input, dim0, dim1, *, out=None):
    return _write_out(_copied(V.transpose(input, dim0, dim1), input), out)


def unfold_copy(input, dimension, size, step, *, out=None):
    return _write_out(_copied(V.unfold(input, dimension, size, step), input), out)


def unsqueeze_copy(input, dim, *, out=None):
    return _write_out(_copied(V.unsqueeze(input, dim), input), out)


def view_as_real_copy(input, *, out=None):
    return _write_out(_copied(CV.view_as_real(input), input), out)


def alias_copy(input, *, out=None):
    return _write_out(_copied(V._alias(input), input), out)


def expand_copy(input, size, *, implicit=False, out=None):
    return _write_out(_copied(V.expand(input, size), input), out)


def permute_copy(input, dims, *, out=None):
    return _write_out(_copied(V.permute(input, dims), input), out)


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    view = V.slice_dim(input, wrap_dim(dim, input._data.ndim), start, end, step)
    return _write_out(_copied(view, input), out)


def narrow_copy(input, dim, start, length, *, out=None):
    if length < 0:      # (narrow_copy words this check as the end-of-range one)
        start = start.item() if isinstance(start, Tensor) else start
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({input.shape[wrap_dim(dim, input._data.ndim)]}).")
    if out is not None:
        if input.requires_grad and grad_mode.state.enabled:
            raise RuntimeError("narrow_copy(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires "
                               "grad.")
        if out._dtype is not input._dtype:
            raise RuntimeError("Expected self.dtype() == output.dtype() to be true, but got "
                               "false.  (Could this error message be improved?  If so, please "
                               "report an enhancement request to PyTorch.)")
    start = start.item() if isinstance(start, Tensor) else start
    view = V.narrow(input, dim, start, length)
    fn = view.grad_fn
    if fn is None:
        return _write_out(_plain_copy(view), out)
    # torch's backward slices the gradient as [start, start + length): with a negative start
    # reaching the end that slice is empty, and the input's gradient all zeros
    return _write_out(_narrow_copy(input, **fn._params, zero_grad=start < 0 and start + length == 0),
                      out)


@primitive("narrow_copy", node="NarrowCopyBackward0")
def _narrow_copy(xp, self, *, dim, start, stop, step, zero_grad):
    return xp.array(V._slice.forward(xp, self, dim=dim, start=start, stop=stop, step=step),
                    order="C", copy=True)


@_narrow_copy.derivative
def _(ctx, grad):
    if ctx.zero_grad:
        return creation.zeros(ctx.input_shape(), dtype=grad.dtype)
    return V._slice.derivative_fn(ctx, grad)


def split_copy(input, split_size, dim=0, *, out=None):
    if not isinstance(split_size, (list, tuple)) and split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={split_size}")
    return _write_outs(_copied(V.split(input, split_size, dim), input), out,
                       "split_copy_Tensor_out()")


def split_with_sizes_copy(input, split_sizes, dim=0, *, out=None):
    return _write_outs(_copied(V.split(input, list(split_sizes), dim), input), out,
                       "split_with_sizes_copy_out()")


def unbind_copy(input, dim=0, *, out=None):
    return _write_outs(_copied(V.unbind(input, dim), input), out, "unbind_copy_int_out")


def view_copy(input, size, *, out=None):
    """view's result, also where the input's strides allow no view (a copy needs none)."""
    if isinstance(size, D.dtype):
        with grad_mode.no_grad():       # (a dtype view is not differentiable)
            result = _plain_copy(V._view_dtype(input.detach(), size))
    else:
        shape = V.infer_shape(as_shape((size,)), input.numel())
        result = _view_copy(input, shape=tuple(shape))
    return _write_out(result, out)


@primitive("view_copy", node="ViewBackward0_copy")
def _view_copy(xp, self, *, shape):
    return xp.array(self.reshape(shape), order="C", copy=True)


_view_copy.derivative(V._view.derivative_fn)


def view_as_complex_copy(input, *, out=None):
    if input.requires_grad and grad_mode.state.enabled:
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation for "
                           "outputs with complex dtype.")
    return _write_out(_copied(CV.view_as_complex(input), input), out)


@primitive("detach_copy", node="NotImplemented")
def _detach_copy(xp, self):
    return xp.array(self, order="C", copy=True)


@_detach_copy.derivative
def _(ctx, grad):
    raise RuntimeError("derivative for aten::detach_copy is not implemented")


def detach_copy(input, *, out=None):
    """(PyTorch gives the copy a node whose backward says it has no derivative.)"""
    return _write_out(_detach_copy(input), out)


def _narrow_copy_method(self, dim, start, length):
    return narrow_copy(self, dim, start, length)


Tensor.narrow_copy = _narrow_copy_method


# ----------------------------------------------------------------------------- in-place forms
def _inplace_functions():
    from .more_ops import _inplace_function
    return {name: _inplace_function(name) for name in ("addmv_", "as_strided_", "index_put_")}


globals().update(_inplace_functions())


# ----------------------------------------------------------------------------- as_strided_scatter
@primitive("as_strided_scatter", node="AsStridedScatterBackward0")
def _as_strided_scatter(xp, self, src, *, size, stride, storage_offset):
    out = xp.array(self, order="C", copy=True)
    V.strided_view(out, size, stride, storage_offset)[...] = src
    return out


@_as_strided_scatter.derivative
def _(ctx, grad):
    grad = grad.contiguous()
    window = grad.as_strided(ctx.size, ctx.stride, ctx.storage_offset)
    # the source's gradient is grad inside the window; PyTorch (2.13) gives the input that same
    # window of grad and zeros outside it (not grad outside the window): so does ember
    grad_self = _as_strided_scatter(creation.zeros_like(grad), window, size=ctx.size,
                                    stride=ctx.stride, storage_offset=ctx.storage_offset)
    return grad_self, window.clone()


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    window = V.as_strided(input.contiguous(), size, stride, storage_offset)  # (its checks)
    if tuple(src.shape) != tuple(window.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(window.shape)}")
    return _as_strided_scatter(input, src, size=tuple(window.shape), stride=window.stride(),
                               storage_offset=window.storage_offset())


Tensor.as_strided_scatter = as_strided_scatter


# ----------------------------------------------------------------------------- native nn entries
def constant_pad_nd(input, pad, value=0):
    from ..nn import functional as F
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    return F.pad(input, pad, value=value)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """The convolution torch.nn.functional's convNd/conv_transposeNd all call."""
    from ..nn import functional as F
    from ..nn._toplevel_ops import _type_error
    for position, (name, value) in enumerate((("stride", stride), ("padding", padding),
                                              ("dilation", dilation),
                                              ("output_padding", output_padding)), 4):
        if name == "output_padding":
            position = 8
        if not isinstance(value, (list, tuple)):
            raise _type_error("convolution", name, "tuple of ints", value, position)
    n = weight.dim() - 2
    if transposed:
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        return conv(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return (F.conv1d, F.conv2d, F.conv3d)[n - 1](input, weight, bias, stride, padding,
                                                  dilation, groups)


def _stats(data, axes, eps):
    """(mean, 1 / sqrt(biased variance + eps)) over `axes`, kept as size-one dims."""
    mean = data.mean(axis=axes, keepdims=True)
    var = ((data - mean) ** 2).mean(axis=axes, keepdims=True)
    return mean, 1 / np.sqrt(var + eps)


def _constant(array, like):
    return Tensor._make(np.asarray(array, like._dtype.np), like._dtype, like._device)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd): the statistics over the normalized dims, kept as size-one dims."""
    from ..nn import functional as F
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    axes = tuple(range(input.dim() - len(as_shape((normalized_shape,))), input.dim()))
    mean, rstd = _stats(input._data, axes, eps)
    return out, _constant(mean, input), _constant(rstd, input)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, batch mean, batch 1/std) in training; the statistics are empty in evaluation."""
    from ..nn.functional import normalization as F
    axes = tuple(i for i in range(input.dim()) if i != 1)
    if training:
        mean, rstd = (_constant(s.reshape(-1), input) for s in _stats(input._data, axes, eps))
    else:
        mean = rstd = _constant(np.zeros(0), input)
    out = F._native_batch_norm(input, running_mean, running_var, weight, bias, training,
                               momentum, eps)
    return out, mean, rstd


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd), the statistics per (sample, group): shape (N, group)."""
    from ..nn import functional as F
    out = F.group_norm(input, group, weight, bias, eps)
    mean, rstd = _stats(input._data.reshape(N, group, -1), 2, eps)
    return out, _constant(mean.reshape(N, group), input), _constant(rstd.reshape(N, group), input)


@primitive("native_dropout", node="NativeDropoutBackward0")
def _native_dropout(xp, self, *, mask, scale):
    return self * (mask * self.dtype.type(scale)).astype(self.dtype)


@_native_dropout.derivative
def _(ctx, grad):
    return grad * _constant(ctx.mask * ctx.scale, grad)


def native_dropout(input, p, train):
    """(output, the boolean mask of the elements kept)."""
    from ..nn.functional.dropout import _check_p
    _check_p(p)
    if train is False:
        mask = np.ones(input.shape, bool)
        return _native_dropout(input, mask=mask, scale=1.0), Tensor._make(mask, D.bool_,
                                                                          input._device)
    mask = creation._rng(None).random(input.shape) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return (_native_dropout(input, mask=mask, scale=scale),
            Tensor._make(mask, D.bool_, input._device))


def native_channel_shuffle(input, groups):
    from ..nn import functional as F
    return F.channel_shuffle(input, groups)


_DEPRECATED_NORM = ("at::{} is deprecated and it is just left for JIT compatibility. It will be "
                    "removed in a future PyTorch release. Please use `{}` instead")
_warned_norms = set()


def _warn_norm_once(name, replacement):
    """torch warns once per process (TORCH_WARN_ONCE)."""
    if name not in _warned_norms:
        import warnings
        _warned_norms.add(name)
        warnings.warn(_DEPRECATED_NORM.format(name, replacement), UserWarning, stacklevel=3)


def frobenius_norm(input, dim=REQUIRED, keepdim=False, *, out=None):
    require("frobenius_norm", "dim", dim, 2, "tuple of ints")
    dim = as_shape((dim,))
    _warn_norm_once("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)")
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions "
                           f"instead.")
    from ..nn.functional._utils import _norm         # (torch.norm's node: NormBackward1)
    from .pointwise import _out
    dims = tuple(wrap_dim(d, input.dim()) for d in dim) or tuple(builtins.range(input.dim()))
    return _out(_norm(input, ord=2.0, dims=dims, keepdim=keepdim), out, "frobenius_norm")


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """nuclear_norm(input, keepdim=False) or nuclear_norm(input, dim, keepdim=False)."""
    from .. import linalg
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    _warn_norm_once("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)")
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, out=out)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    """torch's native ctc_loss: `reduction` as an int (1 mean, 2 sum, other none; left out,
    none, as torch.ctc_loss does in practice)."""
    from ..nn import functional as F
    from ..nn._toplevel_ops import _reduction_word
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction_word("ctc_loss", reduction), zero_infinity)


# ----------------------------------------------------------------------------- binomial
@primitive("binomial", node="NotImplemented")
def _binomial(xp, count, prob, *, generator):
    n = np.maximum(np.floor(count), 0).astype(np.int64)
    return creation._rng(generator).binomial(n, np.clip(prob, 0, 1)).astype(count.dtype)


@_binomial.derivative
def _(ctx, grad):
    raise RuntimeError("derivative for aten::binomial is not implemented")


def binomial(count, prob, generator=None):
    """Samples of Binomial(count, prob), elementwise (count rounded down; prob clamped)."""
    from .._printing import scalar_type_name
    if not count._dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{scalar_type_name(count._dtype)}")
    if prob._dtype is not count._dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(prob._dtype)} but expected "
                           f"{scalar_type_name(count._dtype)}")
    if count._dtype not in (D.float32, D.float64):
        raise creation._not_implemented("binomial_cpu", count._dtype)
    return _binomial(count, prob, generator=generator)


# ----------------------------------------------------------------------------- histogramdd
_histogramdd_tuple = return_type("histogramdd", ["hist", "bin_edges"])


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """The histogram of the points input[..., :] (D coordinates each) over a D-dim grid of
    bins: each dim binned as torch.histogram bins its values."""
    from .misc_extra import histogram
    n = input.shape[-1]
    points = input.reshape(-1, n)
    if isinstance(bins, int):
        bins = [bins] * n
    if len(bins) != n:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    edges = [histogram(points[:, d], bins[d], range=None if range is None else
                       range[2 * d:2 * d + 2]).bin_edges for d in builtins.range(n)]
    data = points._data
    inside = np.ones(len(data), bool)
    index = []
    for d, e in enumerate(edges):
        e = e._data
        inside &= (data[:, d] >= e[0]) & (data[:, d] <= e[-1])
        index.append(np.clip(np.searchsorted(e, data[:, d], side="right") - 1, 0, e.size - 2))
    shape = tuple(e.shape[0] - 1 for e in edges)
    flat = np.ravel_multi_index(tuple(i[inside] for i in index), shape) if n else []
    w = None if weight is None else weight._data.reshape(-1)[inside]
    hist = np.bincount(flat, w, minlength=int(np.prod(shape))).reshape(shape)
    if density:
        widths = np.ix_(*[np.diff(e._data) for e in edges])
        hist = hist / (hist.sum() * np.prod(np.broadcast_arrays(*widths), axis=0))
    return _histogramdd_tuple(_constant(hist, input), tuple(edges))


# ----------------------------------------------------------------------------- low-rank
def _approximate_basis(A, q, niter, M=None):
    """An orthonormal (m, q) basis approximately spanning A's columns (A - M when M is given):
    a random projection sharpened by `niter` power iterations (Halko et al., 2009)."""
    from .. import linalg
    from .creation import randn
    X = A if M is None else A - M
    Q = linalg.qr(X @ randn(*A.shape[:-2], A.shape[-1], q, dtype=A.dtype)).Q
    for _ in builtins.range(niter):
        Q = linalg.qr(X.mH @ Q).Q
        Q = linalg.qr(X @ Q).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A ~ U diag(S) V^H, of rank q, from a randomized range finder."""
    from .. import linalg
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:       # (the basis of the smaller side)
        U, S, V = svd_lowrank(A.mH, q, niter, None if M is None else M.mH)
        return V, S, U
    Q = _approximate_basis(A, q, 2 if niter is None else niter, M)
    B = Q.mH @ (A if M is None else A - M)
    U, S, Vh = linalg.svd(B, full_matrices=False)
    return Q @ U, S, Vh.mH


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V): the principal directions (V), of the centered columns when `center`."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (isinstance(q, int) and 0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not (isinstance(niter, int) and niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        return svd_lowrank(A - A.mean(-2, keepdim=True), q, niter)
    return svd_lowrank(A, q, niter)


# ----------------------------------------------------------------------------- creation
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An empty tensor whose memory holds its dims in the order `physical_layout`."""
    size, order = as_shape((size,)), as_shape((physical_layout,))
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    physical = V.contiguous_strides([size[d] for d in order])
    strides = [0] * len(size)
    for d, s in zip(order, physical):
        strides[d] = s
    return creation.empty_strided(size, strides, dtype=dtype, device=device,
                                  requires_grad=requires_grad)


# ----------------------------------------------------------------------------- runtime settings
def set_flush_denormal(mode):
    """Whether the CPU can flush denormals (x86 and ARM can: True). (NumPy arithmetic in ember
    keeps denormals either way.)"""
    return True


_interop_threads = [None]


def get_num_interop_threads():
    """As set, else torch's default: one per usable CPU."""
    import os
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else \
        builtins.range(os.cpu_count())
    return _interop_threads[0] or len(usable)


def set_num_interop_threads(num):
    """Settable once (ember runs no inter-op threads: the number is recorded only)."""
    if isinstance(num, bool) or not isinstance(num, int):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got "
                           f"{type(num).__name__}")
    if num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop_threads[0] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _interop_threads[0] = num


def init_num_threads():
    return None


def is_storage(obj):
    from .._storage import UntypedStorage
    return isinstance(obj, UntypedStorage)


# ----------------------------------------------------------------------------- DLPack
class _Capsule:
    """A bare DLPack capsule (as to_dlpack returns) in the protocol NumPy reads."""
    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)       # kDLCPU


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing the memory of any object exporting DLPack (NumPy's reader)."""
    source = ext_tensor if hasattr(ext_tensor, "__dlpack__") else _Capsule(ext_tensor)
    data = np.from_dlpack(source, copy=copy) if copy is not None else np.from_dlpack(source)
    return Tensor._make(data, D._FROM_NUMPY[data.dtype], creation.as_device(device))


def to_dlpack(tensor):
    return tensor._data.__dlpack__()


Tensor.__dlpack__ = lambda self, **kwargs: self._data.__dlpack__(**kwargs)
Tensor.__dlpack_device__ = lambda self: self._data.__dlpack_device__()


__all__ = [
    "alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy",
    "permute_copy", "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy",
    "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy",
    "view_as_complex_copy", "view_as_real_copy", "view_copy", "narrow_copy",
    "addmv_", "as_strided_", "index_put_", "as_strided_scatter",
    "constant_pad_nd", "convolution", "native_layer_norm", "native_batch_norm",
    "native_group_norm", "native_dropout", "native_channel_shuffle", "frobenius_norm",
    "nuclear_norm", "ctc_loss", "binomial", "histogramdd", "svd_lowrank", "pca_lowrank",
    "empty_permuted", "set_flush_denormal", "get_num_interop_threads", "set_num_interop_threads",
    "init_num_threads", "is_storage", "from_dlpack", "to_dlpack"]
