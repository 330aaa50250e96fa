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
from ._compressed import is_compressed


def accumulate(variable, old, new):
    if is_compressed(new) or old is not None and is_compressed(old) or \
            not is_sparse(new) and (old is None or not is_sparse(old)):
        _accumulate_other(variable, old, new)
        return
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


def _accumulate_other(variable, old, new):
    """The cases without a COO gradient (a compressed leaf's gradients: dense from a product,
    compressed from to_dense): the first becomes .grad; later ones add to it (compressed ones
    of the same pattern by their values)."""
    if old is None:
        variable._grad = new if grad_mode.state.enabled else \
            Tensor._make(new._data, new._dtype, new._device) if is_compressed(new) else \
            new.detach().clone()
        return
    if is_compressed(old) != is_compressed(new):
        old = old.to_dense() if is_compressed(old) else old
        new = new.to_dense() if is_compressed(new) else new
    if is_compressed(old):
        a, b = old._data, new._data
        xp = a.xp
        if a.layout is not b.layout or not xp.array_equal(a.compressed, b.compressed) or \
                not xp.array_equal(a.plain, b.plain):
            raise NotImplementedError("ember: adding compressed gradients of different "
                                      "patterns is not supported")
        values = Tensor._make(a.values, old._dtype, old._device) + \
            Tensor._make(b.values, new._dtype, new._device)
        variable._grad = Tensor._make(a.with_values(values._data), old._dtype, old._device)
        return
    if grad_mode.state.enabled:
        variable._grad = old + new
        return
    old._data += new._data
    old._version_counter.value += 1
