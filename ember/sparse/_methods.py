"""The sparse tensors' methods of ember.Tensor, as data: ember/ops/tensor_methods.py binds them
with every other method."""
from . import _conversions as C, _csr


METHODS = {
    "to_dense": C.to_dense, "to_sparse": C.to_sparse, "to_sparse_coo": C.to_sparse,
    "coalesce": C.coalesce, "is_coalesced": C.is_coalesced, "_coalesced_": C._coalesced_,
    "indices": C.indices, "values": C.values, "_indices": C._indices, "_values": C._values,
    "sparse_dim": C.sparse_dim, "dense_dim": C.dense_dim, "_nnz": C._nnz,
    "sparse_mask": C.sparse_mask,
    "to_sparse_csr": _csr.to_sparse_csr, "crow_indices": _csr.crow_indices,
    "col_indices": _csr.col_indices,
}

