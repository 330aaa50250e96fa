"""F.grouped_mm: many matrix products in one call, for mixture-of-experts layers. Groups are
the batch entries when both operands are 3-D, or runs of one operand's free or contraction
dimension cut at the cumulative `offs` (int32) when one or both are 2-D:
  2-D x 3-D: rows offs[g-1]:offs[g] of mat_a times mat_b[g]          -> (M, N)
  3-D x 2-D: mat_a[g] times columns offs[g-1]:offs[g] of mat_b        -> (M, N)
  2-D x 2-D: mat_a[:, k0:k1] times mat_b[k0:k1, :] for each group      -> (G, M, N)
Rows (columns) past the last offset are zeros (torch leaves them unwritten). Computed with
ember's matmul on slices, so it is differentiable.
"""
from ... import _dtype as D
from ..._printing import scalar_type_name
from ...ops.creation import zeros
from ...ops.joining import cat, stack

__all__ = ["grouped_mm"]

_DTYPES = (D.float32, D.bfloat16, D.float16)


def _check(mat_a, mat_b, offs, bias, out_dtype):
    if mat_a.dtype not in _DTYPES:
        raise RuntimeError(f"Expected mat_a to be Float32, BFloat16 or Float16 matrix, got "
                           f"{scalar_type_name(mat_a.dtype)}")
    if mat_b.dtype is not mat_a.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_c10(mat_a.dtype)} != {_c10(mat_b.dtype)}")
    if mat_a.dim() not in (2, 3):
        raise RuntimeError("mat_a has to be 2 or 3d")
    if mat_b.dim() not in (2, 3):
        raise RuntimeError("mat_b has to be 2 or 3d")
    both_3d = mat_a.dim() == 3 and mat_b.dim() == 3
    if both_3d == (offs is not None):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None:
        if offs.dim() != 1:
            raise RuntimeError("offs has to be 1D")
        if offs.dtype is not D.int32:
            raise RuntimeError("Offsets have to be int32")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if (mat_a.dim() == 3 or mat_b.dim() == 3) and mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if both_3d and mat_a.shape[0] != mat_b.shape[0]:
        raise RuntimeError("batched dimension has to match")
    groups = offs.shape[0] if offs is not None else None
    if mat_a.dim() == 3 and not both_3d and mat_a.shape[0] != groups or \
            mat_b.dim() == 3 and not both_3d and mat_b.shape[0] != groups:
        raise RuntimeError("matrix batch sizes have to match")
    if out_dtype is not None and out_dtype is not mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    for m in (mat_a, mat_b):
        strides = m.stride()[-2:]
        lead = max(strides)
        if (lead * m.dtype.itemsize) % 16:
            raise RuntimeError("strides should be multiple of 16 bytes")


def _c10(dtype):
    return {D.float32: "float", D.float16: "c10::Half", D.bfloat16: "c10::BFloat16"}.get(
        dtype, scalar_type_name(dtype))


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    _check(mat_a, mat_b, offs, bias, out_dtype)
    if offs is None:
        return mat_a.matmul(mat_b)
    ends = [int(v) for v in offs.tolist()]
    starts = [0] + ends[:-1]
    if mat_a.dim() == 2 and mat_b.dim() == 3:
        return _cut(mat_a, 0, starts, ends, lambda g, rows: rows.matmul(mat_b[g]),
                    (mat_a.shape[0], mat_b.shape[-1]), mat_a)
    if mat_a.dim() == 3 and mat_b.dim() == 2:
        return _cut(mat_b, 1, starts, ends, lambda g, cols: mat_a[g].matmul(cols),
                    (mat_a.shape[1], mat_b.shape[1]), mat_a)
    products = []           # (2-D x 2-D: the offsets cut the contraction dim of both)
    for s, e in zip(starts, ends):
        e = min(e, mat_a.shape[1], mat_b.shape[0])
        if e > s:
            products.append(mat_a[:, s:e].matmul(mat_b[s:e]))
        else:
            products.append(zeros(mat_a.shape[0], mat_b.shape[1], dtype=mat_a.dtype,
                                  device=mat_a.device))
    return stack(products, 0)


def _cut(mat, dim, starts, ends, product, shape, like):
    """The products of each group's slice of `mat` along dim, joined along dim, with zeros for
    what lies past the last offset."""
    size = shape[dim]
    pieces, done = [], 0
    for g, (s, e) in enumerate(zip(starts, ends)):
        s, e = max(s, done), min(e, size)
        if e <= s:
            continue
        pieces.append(product(g, mat.narrow(dim, s, e - s)))
        done = e
    if done < size:
        rest = list(shape)
        rest[dim] = size - done
        pieces.append(zeros(*rest, dtype=like.dtype, device=like.device))
    return cat(pieces, dim)
