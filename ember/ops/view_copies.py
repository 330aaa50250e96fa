"""The *_copy ops: each view op's result as a fresh tensor (torch.select_copy, ...)."""
import inspect

from .. import _dtype as D
from .._layout import contiguous_format
from .._tensor import Tensor
from ..autograd import grad_mode
from . import creation, views as V
from ._pointwise_common import _check_out_dtype, warn_resize
from ._utils import wrap_dim, as_shape
from .complex import view_as_real, view_as_complex
from .registry import all_ops, primitive, write_into


# ----------------------------------------------------------------------------- *_copy
# torch.<view>_copy(x, ...) is x.<view>(...) in fresh contiguous memory. Its node is the view's
# node renamed "<Node>_copy" (PermuteBackward0_copy), with the view's derivative. The copy ops
# are made from the view ops at import (end of this module).


def _make_copy_op(view_op):
    """The op computing `view_op`'s result as a contiguous copy (same options, same
    derivative), its node named after the view's node + "_copy"."""
    def forward(xp, *args, **options):
        out = view_op.forward(xp, *args, **options)
        if isinstance(out, (list, tuple)):
            return [xp.array(a, order="C", copy=True) for a in out]
        return xp.array(out, order="C", copy=True)
    forward.__signature__ = inspect.signature(view_op.forward)    # (read by primitive)
    op = primitive(view_op.name + "_copy", node=view_op.node_cls.__name__ + "_copy",
                   n_outputs=view_op.n_outputs)(forward)
    op.derivative(view_op.derivative_fn)
    return op


def _copy_op(view_op):
    return _COPY_OPS[view_op]


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
    return _write_out(_copied(view_as_real(input), input), out)


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
        return creation.zeros(ctx.input_shape(), dtype=grad.dtype, device=grad._device)
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
    return _write_out(_copied(view_as_complex(input), input), out)


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


# every view op's copy, made at import (as every op is: all_ops() lists them); the view ops
# are all made by now (views, complex, and forward_ad, which the registry imports). No copy
# function copies these views: view_copy has its own op, view_as_complex_copy records no
# node, and _reshape_alias and resize are not views of a *_copy function.
_NOT_COPIED = {"view", "_reshape_alias", "resize", "view_as_complex"}
_COPY_OPS = {op: _make_copy_op(op) for op in all_ops() if op.view and op.name not in _NOT_COPIED}


__all__ = ['alias_copy', 'as_strided_copy', 'detach_copy', 'diagonal_copy', 'expand_copy',
               'permute_copy', 'select_copy', 'slice_copy', 'split_copy', 'split_with_sizes_copy',
               'squeeze_copy', 't_copy', 'transpose_copy', 'unbind_copy', 'unfold_copy',
               'unsqueeze_copy', 'view_as_complex_copy', 'view_as_real_copy', 'view_copy',
               'narrow_copy']
