"""torch.native_norm: the p-norm of a sparse COO tensor over all its elements (the norm of its
coalesced values; the implicit zeros add nothing, but count for p = 0 only as zeros). torch has
no dense kernel for it: a dense tensor gets torch's error."""

from ..linalg import vector_norm

__all__ = ["native_norm"]


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    if not input.is_sparse:
        name = "aten::native_norm" if dim is None else "aten::native_norm.ScalarOpt_dim_dtype"
        raise NotImplementedError(f"Could not run '{name}' with arguments from the 'CPU' "
                                  f"backend.")
    if dim is not None and len(dim) and sorted(d % input.dim() for d in dim) != \
            list(range(input.dim())):
        raise RuntimeError("norm_sparse currently only supports full reductions, so 'dim' must "
                           "either be empty or contain all dimensions of the input")
    if keepdim:
        raise RuntimeError("norm_sparse currently does not support keepdim=True")
    if dtype is not None:
        raise RuntimeError("norm_sparse currently does not support 'dtype' argument")
    values = input.coalesce().values()
    return vector_norm(values, 2 if p is None else p)


