"""torch's top-level native forms of nn ops, on ember's functional ops: torch.embedding_bag (the
op behind F.embedding_bag, with its four outputs and numbered modes), torch.embedding_renorm_,
torch.grid_sampler_2d / grid_sampler_3d (grid_sampler for one rank of input) and
torch.segment_reduce (reductions over consecutive segments of an axis).
"""
import itertools

import numpy as np

from .. import _dtype as D
from .._printing import scalar_type_name
from ..ops.creation import full, tensor, zeros
from ..ops.joining import stack
from .functional.embedding import embedding_bag as _F_embedding_bag, embedding_renorm_
from .functional.vision import grid_sampler

__all__ = ["embedding_bag", "embedding_renorm_", "grid_sampler_2d", "grid_sampler_3d",
           "segment_reduce"]

_BAG_MODES = {0: "sum", 1: "mean", 2: "max"}


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """(output, offset2bag, bag_size, max_indices): the bags' sum (mode 0), mean (1) or max (2)
    as F.embedding_bag computes them, then what torch's kernel keeps for its backward: each
    entry's bag (empty for sum), each bag's count of entries other than padding_idx (zeros for
    sum), and, for max, the row that gave each column's max (for mean: the counts again; for
    sum: zeros)."""
    name = _BAG_MODES[mode]
    out = _F_embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq, name, sparse,
                           per_sample_weights, include_last_offset, padding_idx)
    idx = indices._data.astype(np.int64).reshape(-1)
    starts = offsets._data.astype(np.int64)
    n_bags = out.shape[0]
    n_slots = n_bags
    index_dtype = indices.dtype
    bag_of = np.searchsorted(starts[:n_bags], np.arange(idx.size), side="right") - 1
    counted = np.ones(idx.size, bool) if padding_idx is None else \
        idx != padding_idx % weight.shape[0]
    if name == "sum":
        # torch's sum kernel keeps the bags only for padding_idx, and sizes its (zero) counts
        # by the offsets when no gradient is needed
        offset2bag = zeros(0, dtype=index_dtype) if padding_idx is None else \
            tensor(bag_of, dtype=index_dtype)
        none = zeros(n_bags if weight.requires_grad else starts.size, dtype=index_dtype)
        return out, offset2bag, none, none.clone()
    sizes = np.bincount(bag_of[counted], minlength=n_slots)[:n_slots] if idx.size else \
        np.zeros(n_slots, np.int64)
    offset2bag = tensor(bag_of, dtype=index_dtype)
    bag_size = tensor(sizes, dtype=index_dtype)
    if name == "mean":
        return out, offset2bag, bag_size, bag_size.clone()
    rows = weight._data
    max_idx = np.zeros((n_bags, weight.shape[1]), np.int64)
    for b in range(n_bags):
        members = idx[(bag_of == b) & counted]
        if members.size:
            max_idx[b] = members[np.argmax(rows[members], axis=0)]
    return out, offset2bag, bag_size, tensor(max_idx, dtype=index_dtype)


def _grid_sampler_rank(rank):
    def op(input, grid, interpolation_mode, padding_mode, align_corners):
        if input.dim() != rank + 2 or grid.dim() != rank + 2:
            raise RuntimeError(f"grid_sampler(): expected {rank + 2}D input and grid with same "
                               f"number of dimensions, but got input with sizes "
                               f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
        return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)
    op.__name__ = op.__qualname__ = f"grid_sampler_{rank}d"
    op.__doc__ = f"torch.grid_sampler_{rank}d: grid_sampler for {rank + 2}-D input and grid."
    return op


grid_sampler_2d = _grid_sampler_rank(2)
grid_sampler_3d = _grid_sampler_rank(3)

_SEGMENT_REDUCTIONS = {"sum": "sum", "prod": "prod", "mean": "mean", "max": "amax",
                       "amax": "amax", "min": "amin", "amin": "amin"}
_EMPTY = {"sum": 0.0, "prod": 1.0, "mean": float("nan"), "amax": -float("inf"),
          "amin": float("inf")}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduce consecutive segments of `data` along `axis` (their lengths, or their offsets,
    per leading index of lengths/offsets): sum, prod, mean, max or min, each segment starting
    from `initial` when given; an empty segment gives `initial`, or the reduction's identity
    (nan for mean)."""
    if reduce not in _SEGMENT_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    kind = _SEGMENT_REDUCTIONS[reduce]
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    bounds = lengths if lengths is not None else offsets
    axis = axis % data.dim() if data.dim() else 0
    if axis != bounds.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of lengths "
                           f"but got {axis}.")
    if bounds.dtype not in (D.int64, D.int32):
        raise NotImplementedError(f'"_segment_reduce_lengths_cpu_kernel1" not implemented for '
                                  f"'{_type_word(bounds.dtype)}'")
    if not data.dtype.is_floating_point:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for "
                                  f"'{_type_word(data.dtype)}'")
    b = bounds._data.astype(np.int64)
    if lengths is not None:
        if (b < 0).any():
            raise RuntimeError("lengths contains negative value!")
        if not unsafe and (b.sum(-1) != data.shape[axis]).any():
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                               "to data.size(lengths.dim()-1) when !unsafe.")
        starts = np.concatenate([np.zeros(b.shape[:-1] + (1,), np.int64),
                                 np.cumsum(b, -1)[..., :-1]], -1)
        ends = starts + b
    else:
        starts, ends = b[..., :-1], b[..., 1:]
    rows = []
    for lead in itertools.product(*(range(n) for n in b.shape[:-1])):
        piece = data[lead] if lead else data
        segments = [_reduce_segment(piece, int(s), int(e), kind, initial)
                    for s, e in zip(starts[lead], ends[lead])]
        rows.append(stack(segments, 0))
    out = stack(rows, 0).reshape(b.shape[:-1] + rows[0].shape) if b.ndim > 1 else rows[0]
    return out


def _reduce_segment(piece, start, end, kind, initial):
    part = piece[start:end]
    rest = tuple(piece.shape[1:])
    if end <= start:
        value = _EMPTY[kind] if initial is None else float(initial)
        return full(rest, value, dtype=piece.dtype, device=piece.device)
    if kind == "mean":
        total = part.sum(0)
        if initial is not None:
            total = total + initial
        return total / (end - start)
    result = getattr(part, kind)(0)
    if initial is None:
        return result
    if kind == "sum":
        return result + initial
    if kind == "prod":
        return result * initial
    bound = full(rest, float(initial), dtype=piece.dtype, device=piece.device)
    return result.maximum(bound) if kind == "amax" else result.minimum(bound)


def _type_word(dtype):
    return scalar_type_name(dtype)
