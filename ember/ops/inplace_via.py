"""In-place forms computed out of place and written into self (x.tril_(), x.eq_(y), ...): the
Tensor method table binds them, and the comparison ops use them for their plain (no-graph) path.
"""
from .. import _dtype as D
from .._printing import scalar_type_name
from .._tensor import Tensor
from ..autograd import grad_mode
from .registry import check_inplace_allowed, check_inplace_shape, write_into
from .views import CopySlices


def _inplace_via(fn):
    """In-place method for ops whose public function needs argument handling first: compute
    out of place, then copy into self (the copy is the op's node, as PyTorch's graph shows for
    composite in-place ops)."""
    def method(self, *args, **kwargs):
        try:
            result = fn(self, *args, **kwargs)
        except NotImplementedError:     # a dtype without a kernel: PyTorch reports shapes first
            check_inplace_shape(self, (self,) + tuple(a for a in args if isinstance(a, Tensor)))
            raise
        if result._dtype is not self._dtype and not D.can_cast(result._dtype, self._dtype):
            raise RuntimeError(f"result type {scalar_type_name(result._dtype)} can't be cast to "
                               f"the desired output type {scalar_type_name(self._dtype)}")
        return _write_result(self, result)
    return method


def _write_result(self, result):
    """Make `self` hold `result`, with the graph of an in-place op on self."""
    if grad_mode.state.enabled and result._requires_grad:
        check_inplace_allowed(self)
        node = result._grad_fn
        write_into(self, result._data)
        if self._base is None:
            self._grad_fn, self._output_nr, self._requires_grad = node, result._output_nr, True
        else:
            # route through an identity copy so that CopySlices has one op node to call
            CopySlices.rebase(self._base, self, _IdentityFn(node, result._output_nr))
        return self
    write_into(self, result._data)
    return self


class _IdentityFn:
    """Adapter so an out-of-place result's node can serve as CopySlices' `fn`."""

    def __init__(self, node, output_nr):
        self.node, self.output_nr = node, output_nr
        self.next_functions = ((node, output_nr),)

    def apply(self, grads, needs):
        return (None,) + tuple(grads)

    def release(self):
        pass
