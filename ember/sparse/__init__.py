"""ember.sparse: torch.sparse's COO tensors and compressed (CSR, CSC, BSR, BSC) matrices.

A sparse tensor is an ember Tensor whose `_data` is a `COOArrays` (indices, values, size;
ember/sparse/_coo.py), so it rides on the same registry, autograd graph and engine as a dense
one (docs/architecture.md); a compressed matrix's `_data` is a `CompressedArrays`
(_compressed.py). _conversions.py
makes and unpacks them (sparse_coo_tensor, to_sparse, to_dense, coalesce, values),
_products.py holds the products with a sparse operand (mm/matmul either side, sparse.mm/addmm),
_kernels.py their arithmetic (torch's row sums, vectorised in rounds), _reductions.py
sparse.sum/softmax/log_softmax, _methods.py binds the Tensor methods, _optim.py the
optimizers' sparse updates, _autograd.py how sparse gradients accumulate, _embedding.py the
sparse gradient of an embedding, _legacy_types.py torch.sparse.FloatTensor and its kin.
"""
import functools

from ._conversions import _invariants_checked
from ._products import mm, addmm
from ._reductions import sum, softmax, log_softmax
from ._legacy_types import (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor,  # noqa: F401
                            LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor)


__all__ = ["addmm", "check_sparse_tensor_invariants", "log_softmax", "mm", "softmax", "sum"]


class check_sparse_tensor_invariants:
    """Turn the invariant checks of the sparse constructors on or off (globally, or within a
    `with`). Any of these sets the switch explicitly, which silences torch's warning that the
    checks are implicitly off (`_invariants_checked[1]`, ember/sparse/_compressed.py)."""

    def __init__(self, enable=True):
        self.state = enable
        self.saved = None

    @staticmethod
    def is_enabled():
        return _invariants_checked[0]

    @staticmethod
    def enable():
        _invariants_checked[:] = [True, True]

    @staticmethod
    def disable():
        _invariants_checked[:] = [False, True]

    def __enter__(self):
        self.saved = _invariants_checked[0]
        _invariants_checked[:] = [bool(self.state), True]

    def __exit__(self, *exc):
        _invariants_checked[0] = self.saved

    def __call__(self, function):
        """As a decorator: the function runs with the checks on (or off)."""
        state = self.state

        @functools.wraps(function)
        def checked(*args, **kwargs):
            with check_sparse_tensor_invariants(state):
                return function(*args, **kwargs)
        return checked
