"""How a sparse gradient joins a leaf's `.grad` (AccumulateGrad's sparse cases, as torch):
a first sparse gradient becomes `.grad` as it is (a dense parameter then holds a sparse
gradient, as nn.Embedding(sparse=True) gives); later ones add to it, in place when no graph
is being built: sparse into sparse keeps it sparse (torch's sparse add, in place), sparse
into dense adds into the dense memory, dense onto sparse gives a dense `.grad`."""
import numpy as np

from .._tensor import Tensor
from ..autograd import grad_mode
from .._backend import of as _backend_of
from ._coo import COOArrays
from ._conversions import is_sparse


def accumulate(variable, old, new):
    if old is None:
        if is_sparse(new):
            # a tensor of its own over the same arrays (the caller may still hold `new`)
            coo = new._data
            new = Tensor._make(COOArrays(coo.indices, coo.values, coo.shape, coo.coalesced),
                               new._dtype, new._device) if not grad_mode.state.enabled else new
            variable._grad = new
        else:
            variable._grad = new if grad_mode.state.enabled else new.detach().clone()
        return
    if grad_mode.state.enabled:
        variable._grad = new + old if is_sparse(old) and not is_sparse(new) else old + new
        return
    if is_sparse(old) and is_sparse(new):
        old._data = np.add(old._data, new._data)       # (the sparse add: ._coo._add)
    elif is_sparse(old):
        variable._grad = new + old
    else:
        coo = new._data
        xp = coo.xp
        if coo.nnz:
            _backend_of(xp).scatter_add(old._data, tuple(coo.indices),
                                        coo.values.astype(old._data.dtype, copy=False))
    old._version_counter.value += 1
