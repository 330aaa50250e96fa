"""Embeddings: embedding, embedding_bag, embedding_renorm_ and one_hot."""
import numpy as np

from ... import _dtype as D, _fast_kernels
from ..._tensor import Tensor
from ..._backend import of as _backend_of
from ...autograd import grad_mode
from ...ops.registry import primitive, xp_of
from ...ops.creation import zeros
from ...sparse._embedding import embedding_sparse_grad, sparse_rows_grad
from ._utils import _const, _xp


# ============================================================================ embedding
@primitive("embedding", node="EmbeddingBackward0")
def _embedding(xp, weight, *, indices, padding_idx, scale_grad_by_freq, sparse=False):
    return weight[indices]


@_embedding.derivative
def _(ctx, g):
    num = ctx.input_shape()[0]
    if ctx.sparse:          # a sparse COO gradient, one entry per lookup (ember/sparse)
        return embedding_sparse_grad(g, ctx.indices, num, ctx.padding_idx,
                                     ctx.scale_grad_by_freq)
    return _embedding_dense_backward(g, indices=ctx.indices, num_weights=num,
                                     padding_idx=ctx.padding_idx,
                                     scale_grad_by_freq=ctx.scale_grad_by_freq)


def _embedding_row_scale(xp, flat, num_weights, padding_idx, scale_grad_by_freq):
    """Per-index factor of the rows in embedding's backward (0 for padding_idx, 1 / count of
    the index with scale_grad_by_freq), or None when every factor is 1."""
    keep = None
    if padding_idx is not None:
        keep = (flat != padding_idx)
    if scale_grad_by_freq:
        counts = xp.bincount(flat, minlength=num_weights)[flat]
        keep = (1.0 / counts) if keep is None else keep / counts
    return keep


@primitive("embedding_dense_backward", node="EmbeddingDenseBackwardBackward0")
def _embedding_dense_backward(xp, grad_output, *, indices, num_weights, padding_idx,
                              scale_grad_by_freq):
    """The weight's gradient: grad_output's rows summed into the rows their indices name."""
    dim = grad_output.shape[-1]
    flat = indices.reshape(-1)
    rows = grad_output.reshape(-1, dim)
    keep = _embedding_row_scale(xp, flat, num_weights, padding_idx, scale_grad_by_freq)
    if keep is not None:
        rows = rows * keep.astype(rows.dtype)[:, None]
    out = xp.zeros((num_weights, dim), grad_output.dtype)
    if xp is np:
        _fast_kernels.scatter_add_rows(out, flat, rows)
    else:
        _backend_of(xp).scatter_add(out, flat, rows)
    return out


@_embedding_dense_backward.derivative
def _(ctx, gg):
    # linear in grad_output: each index's row of gg, zero at padding_idx; PyTorch leaves
    # out the 1 / count factor of scale_grad_by_freq here (measured), so does this
    rows = _embedding(gg, indices=ctx.indices, padding_idx=None, scale_grad_by_freq=False)
    if ctx.padding_idx is None:
        return rows
    keep = (ctx.indices != ctx.padding_idx).astype(gg._dtype.np)[..., None]
    return rows * _const(keep, gg)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if input._dtype not in (D.int64, D.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{input.type().replace('torch.', 'ember.')} instead (while checking "
                           f"arguments for embedding)")
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    indices = input._data
    if indices.size and (indices.min() < 0 or indices.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    return _embedding(weight, indices=indices, padding_idx=padding_idx,
                      scale_grad_by_freq=scale_grad_by_freq, sparse=bool(sparse))


def embedding_renorm_(weight, input, max_norm, norm_type):
    """Rescale (in place, untracked) the referenced rows whose norm exceeds max_norm."""
    xp = _xp(weight)
    rows = xp.unique(input._data.reshape(-1))
    data = weight._data
    # the vector p-norm of each row (max |w| for p = inf)
    norms = xp.linalg.norm(data[rows], ord=float(norm_type), axis=1)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(data.dtype)
    data[rows] = data[rows] * scale[:, None]
    weight._version_counter.bump()
    return weight


def one_hot(tensor, num_classes=-1):
    if tensor._dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    data = tensor._data
    if data.size and data.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if not data.size:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(data.max()) + 1
    elif data.size and data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (data[..., None] == _xp(tensor).arange(num_classes)).astype(np.int64)
    return Tensor._make(out, D.int64, tensor._device)


# F.embedding_bag: the sum, mean or max of bags of embedding rows, without materializing
# the per-entry lookups as a graph.
#
# Bags are runs of the flat index list: bag b holds the entries offsets[b] .. offsets[b + 1]
# (the last bag runs to the end of the input; include_last_offset only drops offsets' last
# number).
# Entries equal to padding_idx take no part (a mean divides by the other entries). The op works
# on the entries that count: their row (`indices`), their bag (`bags`, non-decreasing) and their
# position in the input (`entries`, to read per_sample_weights).
_MODES = ("sum", "mean", "max")


def _bag_sizes(xp, bags, n_bags):
    return xp.bincount(bags, minlength=n_bags)


def _bag_max(xp, rows, bags, n_bags):
    """Per bag and column: the max over the bag's rows (0 for an empty bag), which bags have
    rows, and the position (in `rows`) of the first row holding each max."""
    n, dim = rows.shape
    if n == 0:
        return xp.zeros((n_bags, dim), rows.dtype), bags[:0], xp.zeros((0, dim), np.int64)
    # (bags is non-decreasing: each bag's rows are one run, reduced by reduceat)
    is_start = xp.concatenate([xp.ones(1, bool), bags[1:] != bags[:-1]])
    starts = xp.flatnonzero(is_start)
    maxes = xp.maximum.reduceat(rows, starts, axis=0)
    segment = xp.cumsum(is_start) - 1                 # each row's run
    where_max = xp.where(rows == maxes[segment], xp.arange(n)[:, None], n)
    first = xp.minimum.reduceat(where_max, starts, axis=0)
    out = xp.zeros((n_bags, dim), rows.dtype)
    present = bags[starts]
    out[present] = maxes
    return out, present, first


@primitive("embedding_bag", node="EmbeddingBagBackward0",
           save=("weight", "per_sample_weights"))
def _embedding_bag(xp, weight, per_sample_weights, *, indices, bags, entries, n_bags, mode,
                   sparse=False):
    rows = weight[indices]
    if mode == "max":
        return _bag_max(xp, rows, bags, n_bags)[0]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[entries][:, None]
    out = xp.zeros((n_bags, weight.shape[1]), weight.dtype)
    _backend_of(xp).scatter_add(out, bags, rows)
    if mode == "mean":
        out /= xp.maximum(_bag_sizes(xp, bags, n_bags), 1)[:, None].astype(out.dtype)
    return out


@_embedding_bag.derivative
def _(ctx, g):
    weight, psw = ctx.weight, ctx.per_sample_weights
    needs = ctx.needs_input_grad
    num, dim = weight.shape
    index, bag_index = _const(ctx.indices, g), _const(ctx.bags, g)
    grad_weight = grad_psw = None
    if ctx.mode == "max":
        xp = xp_of(g._device)
        _, present, first = _bag_max(xp, weight._data[ctx.indices], ctx.bags, ctx.n_bags)
        # each column's gradient goes to the row that held the max, in that column
        flat = ctx.indices[first] * dim + xp.arange(dim)
        picked = g.index_select(0, _const(present, g)).reshape(-1)
        grad_weight = zeros(num * dim, dtype=g.dtype, device=g.device) \
            .index_add(0, _const(flat.reshape(-1), g), picked).reshape(num, dim)
        return grad_weight, None
    grads = g.index_select(0, bag_index)                  # each entry's bag gradient
    if needs[0]:
        rows = grads
        if ctx.mode == "mean":
            sizes = _bag_sizes(xp_of(g._device), ctx.bags, ctx.n_bags)
            rows = rows * _const((1.0 / sizes[ctx.bags]).astype(g._dtype.np)[:, None], g)
        if psw is not None:
            rows = rows * psw.index_select(0, _const(ctx.entries, g)).unsqueeze(1)
        if ctx.sparse:      # one sparse entry per looked-up row (ember/sparse)
            grad_weight = sparse_rows_grad(rows, ctx.indices, num)
        else:
            grad_weight = zeros(num, dim, dtype=g.dtype, device=g.device).index_add(0, index,
                                                                                    rows)
    if psw is not None and needs[1]:
        dots = (grads * weight.index_select(0, index)).sum(1)
        grad_psw = zeros(psw.shape[0], dtype=g.dtype, device=g.device) \
            .index_add(0, _const(ctx.entries, g), dots)
    return grad_weight, grad_psw


def _check_index_dtype(t):
    # (torch names the offsets 'indices' too)
    if t._dtype not in (D.int64, D.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{t.type().replace('torch.', 'ember.')} instead (while checking "
                           f"arguments for embedding_bag)")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    xp = xp_of(weight._device)
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        length = input.shape[1]
        if length == 0:
            raise RuntimeError("step must be nonzero")
        starts = xp.arange(0, input.numel(), length)
        offsets_data, input = starts, input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        offsets_data = offsets._data
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if scale_grad_by_freq:
        # torch's CPU kernel scales by counts that are not the rows' frequencies; not matched
        raise NotImplementedError("ember: embedding_bag(scale_grad_by_freq=True) is not "
                                  "supported")
    if max_norm is not None:
        with grad_mode.no_grad():
            embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    _check_index_dtype(input)
    if offsets is not None:
        _check_index_dtype(offsets)
    if per_sample_weights is not None and per_sample_weights.dtype is not weight.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as "
                           f"tensor for argument #1 'per_sample_weights'; but type "
                           f"{weight.type()} does not equal {per_sample_weights.type()} (while "
                           f"checking arguments for embedding_bag)")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        padding_idx %= num
    n = input.numel()
    offsets_data = offsets_data.astype(np.int64)
    if offsets_data.size and offsets_data[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {int(offsets_data[0])}"
                           f"\n[ {offsets.type()}{{}} ]")      # (torch prints the number)
    if offsets_data.size and offsets_data[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {int(offsets_data[-1])}")
    values = input._data.astype(np.int64)
    bad = xp.flatnonzero((values < 0) | (values >= num))
    if bad.size:
        # (the message of torch's float64 and max-mode kernels; its float32 ones vary)
        raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but "
                           f"found idx to be {int(values[bad[0]])}")
    # with include_last_offset, offsets' last number only marks the count of bags: as in
    # torch, the last bag still runs to the end of the input
    n_bags = max(offsets_data.size - 1, 0) if include_last_offset else offsets_data.size
    starts = offsets_data[:n_bags]
    positions = xp.arange(n)
    counts = positions >= 0 if padding_idx is None else values != padding_idx
    entries = positions[counts]
    bags = xp.searchsorted(starts, entries, side="right") - 1
    return _embedding_bag(weight, per_sample_weights, indices=values[entries], bags=bags,
                          entries=entries, n_bags=n_bags, mode=mode, sparse=bool(sparse))
