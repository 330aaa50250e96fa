"""The memory layout PyTorch gives the result of an elementwise op.

NumPy's ufuncs also keep their inputs' memory order ('K'), but they settle disagreements and
dims of size one differently. Views (and so the gradients that flow through them, see
views.CopySlices) read a result's strides, so an elementwise result is laid out as PyTorch lays
it out (learned by experiment):

- every operand has the result's shape and is contiguous: a contiguous result;
- ... and every operand (of 4 dims) is channels_last contiguous: channels_last strides;
- ... and every operand has the same dense, non-overlapping strides: those strides, exactly
  (even the arbitrary stride of a dim of size one);
- otherwise the result is dense, with its dims ordered in memory as the operands order them:
  an insertion sort of the dims (innermost first) where, to compare two dims, the first operand
  whose strides for them differ decides (a broadcast dim, stride 0, decides nothing; of two
  equal strides, the larger dim goes outside). A Python number counts as an operand (of no
  dims), so `x * 2.0` takes this way even when `x.exp()` takes the first: the strides of dims
  of size one can differ between the two.

(No ember imports: the op mechanism, registry, uses this.)
"""
import numpy as np

_NUMBERS = (bool, int, float, complex)

# channels_last: the dims innermost first (channels_last_3d has no such rule)
_CHANNELS_LAST = {4: (1, 3, 2, 0)}


def conform_layout(xp, out, arrays):
    """`out` (a fresh result of an elementwise op on `arrays`, which may hold NumPy scalars)
    laid out as PyTorch lays it out: `out` itself when it already is, else a copy."""
    shape = out.shape
    if 1 not in shape:
        # no dims of size one to settle: the common cases need no sorting. Every tensor
        # operand laid out as `out` (x.t() * 2.0), or all of them and `out` contiguous (a
        # broadcast one first: bias + x; its dims of size one are broadcast, so ignored)
        strides, kind = out.strides, out.__class__
        for a in arrays:
            if a.__class__ is kind and a.strides != strides:
                break
        else:
            return out
        if out.flags.c_contiguous and all(a.flags.c_contiguous for a in arrays
                                          if a.__class__ is kind):
            return out
    if out.size < 2:
        return out
    operands = []
    for a in arrays:
        if a.__class__ in _NUMBERS or isinstance(a, np.generic):
            operands.append(((), ()))           # a number: an operand of no dims
        elif hasattr(a, "strides"):
            item = a.itemsize
            operands.append((a.shape, tuple(s // item for s in a.strides)))
    strides = elementwise_strides(shape, operands) or dense_in_order(shape, range(len(shape))[::-1])
    item = out.itemsize
    if tuple(s // item for s in out.strides) == strides:
        return out
    memory = xp.empty(out.size, out.dtype)
    result = xp.lib.stride_tricks.as_strided(memory, shape, tuple(s * item for s in strides))
    result[...] = out
    return result


def elementwise_strides(shape, operands):
    """The element strides of the result (of `shape`) of an elementwise op on `operands`
    ((shape, strides) pairs, in argument order), or None for contiguous ones."""
    n = len(shape)
    if all(s == shape for s, _ in operands):
        if all(_contiguous(shape, st) for _, st in operands):
            return None
        order = _CHANNELS_LAST.get(n)
        if order and all(_contiguous([shape[d] for d in order[::-1]], [st[d] for d in order[::-1]])
                         for _, st in operands):
            return dense_in_order(shape, order)
        first = operands[0][1]
        if all(st == first for _, st in operands) and non_overlapping_and_dense(shape, first):
            return first
    # each operand's strides over the result's dims (a broadcast dim has stride 0)
    aligned = []
    for s, st in operands:
        lead = n - len(s)
        aligned.append([0] * lead + [0 if s[d] == 1 and shape[lead + d] != 1 else st[d]
                                     for d in range(len(s))])
    order = list(range(n))[::-1]             # innermost first
    for i in range(1, n):
        moving = i
        for j in range(i - 1, -1, -1):
            decision = _outer(aligned, shape, order[j], order[moving])
            if decision < 0:
                break
            if decision > 0:
                order[j], order[moving] = order[moving], order[j]
                moving = j
    return dense_in_order(shape, order)


def _outer(aligned, shape, d0, d1):
    """1 when dim d0 (now inside d1) belongs outside it, -1 when inside, 0 when no operand
    tells."""
    for st in aligned:
        s0, s1 = st[d0], st[d1]
        if s0 == 0 or s1 == 0:
            continue
        if s0 != s1:
            return 1 if s0 > s1 else -1
        if shape[d0] > shape[d1]:
            return 1
    return 0


def _contiguous(shape, strides):
    """PyTorch's is_contiguous: C order, ignoring the strides of dims of size one."""
    expected = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if st != expected:
                return False
            expected *= n
    return True


def dense_in_order(shape, order):
    """Dense strides with the dims laid out innermost-first in `order`."""
    strides, step = [0] * len(shape), 1
    for d in order:
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)


def non_overlapping_and_dense(shape, strides):
    expected = 1
    for stride, size in sorted((s, n) for s, n in zip(strides, shape) if n > 1):
        if stride != expected:
            return False
        expected *= size
    return True
