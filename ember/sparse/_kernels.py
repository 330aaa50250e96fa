"""The arithmetic of sparse @ dense products, vectorised, in torch's rounding.

torch's CPU kernel walks a sparse matrix's entries in order and adds value * (a row of the
dense operand) into the entry's output row with a fused multiply-add, so each output row is a
chain of roundings in entry order. Here that chain is kept, but all rows step together: the
entries are put in *rounds* (the first entry of every row, then the second, ...), and with
the output rows ordered by how many entries they have (most first), the rows a round touches
are a prefix of them. A round is then one ufunc call on two contiguous slices; a product costs
one call per entry of its fullest row, nothing per row or per entry. The products are formed
once in float64, exact for float32 operands, and each round rounds its sums once to the
output dtype (a float64 product rounds twice, which can differ from an FMA in the last bit;
float16 and bfloat16 round the product and then the sum in their own dtype, as torch does).

The order of a pattern (a `RowPlan`) depends only on the index array, so it is made once and
kept in a cache keyed on that array (a weak reference: it goes with the array). The entries'
gradient (`sampled_dot`) is computed at the entries only, never as a dense matrix.

Everything is written with the array module `xp` of the arrays, so CuPy arrays work the same.
"""
import math
import weakref

import numpy as np


def xp_of(array):
    """The array module an array belongs to (NumPy, or CuPy for a GPU array)."""
    if isinstance(array, np.ndarray):
        return np
    import cupy         # (only reached for a GPU array: CuPy is optional)
    return cupy


class RowPlan:
    """How to sum a pattern's entries into output rows in rounds (see the module doc).

    order: the entries in round order (round by round; in a round, rows most-entries first);
    active: the output rows that have entries, most entries first (a round's rows are a prefix);
    bounds: where each round starts and ends in `order` (a Python list);
    cols: the entries' other index in round order (for a product plan), else None."""
    __slots__ = ("order", "active", "bounds", "cols", "_blocks")

    def __init__(self, rows, n_rows, cols=None):
        self._blocks = {}
        xp = xp_of(rows)
        nnz = rows.shape[0]
        if nnz == 0:
            self.order = self.active = xp.zeros(0, dtype=np.int64)
            self.bounds, self.cols = [0], None if cols is None else cols[:0]
            return
        degree = xp.bincount(rows, minlength=n_rows)
        # each entry's rank among the entries of its row (0 for its first, ...)
        # (rows grouped, in entry order: a sort of distinct keys, quicker than a stable one)
        by_row = xp.argsort(rows * nnz + xp.arange(nnz))
        first = xp.cumsum(degree) - degree
        rank = xp.empty(nnz, dtype=np.int64)
        rank[by_row] = xp.arange(nnz) - first[rows[by_row]]
        # rows by degree, most first, and each row's place in that order
        by_degree = xp.argsort(-degree, kind="stable")
        place = xp.empty(n_rows, dtype=np.int64)
        place[by_degree] = xp.arange(n_rows)
        most = int(degree.max())
        # rows still summing in round r: those with more than r entries, places 0, 1, ...
        counts = n_rows - xp.cumsum(xp.bincount(degree, minlength=most + 1))[:most]
        starts = xp.cumsum(counts) - counts
        self.bounds = [0] + xp.cumsum(counts).tolist()
        # an entry's slot: its round's start + its row's place
        self.order = xp.empty(nnz, dtype=np.int64)
        self.order[starts[rank] + place[rows]] = xp.arange(nnz)
        self.active = by_degree[:int(counts[0])]
        self.cols = None if cols is None else cols[self.order]

    def blocks(self, per_block):
        """The entries in blocks of `per_block`, each with the parts of the rounds that fall
        in it: [((start, end), [(slice of the rows, slice of the block's products), ...])]
        (made once per block size: the products loop then does nothing but add)."""
        if per_block not in self._blocks:
            bounds, size = self.bounds, self.bounds[-1]
            blocks, r = [], 0
            for b in range(0, size, per_block):
                e = min(b + per_block, size)
                steps = []
                while r < len(bounds) - 1 and bounds[r] < e:       # the rounds meeting [b, e)
                    lo, hi = bounds[r], bounds[r + 1]
                    first, last = max(lo, b), min(hi, e)
                    steps.append((slice(first - lo, last - lo), slice(first - b, last - b)))
                    if hi > e:
                        break                               # (goes on in the next block)
                    r += 1
                blocks.append(((b, e), steps))
            self._blocks[per_block] = blocks
        return self._blocks[per_block]


# products formed per block of this many elements (in float64: 512 KB), so that they are
# summed while still in cache
_BLOCK = 1 << 16


def fma_rows(out, plan, coef, dense, at):
    """out[row of entry k] += coef[k] * dense[at[k]] for every entry, each output row's sums
    in entry order, one rounding per step (see the module doc). `coef` and `at` are in the
    plan's round order. The entries go in blocks: a block's products, then the parts of the
    rounds that fall in it (RowPlan.blocks)."""
    xp = xp_of(out)
    bounds = plan.bounds
    if len(bounds) < 2:
        return out
    # float32/float64 products in float64 (the FMA's exact product, for float32); torch's
    # float16 and bfloat16 kernels round the product, then the sum, in their dtype
    wide = np.float64 if out.dtype.kind == "f" and out.dtype.itemsize >= 4 else out.dtype
    if dense.shape[0] < at.shape[0]:
        dense = dense.astype(wide, copy=False)             # (widen the smaller array once)
    coef = coef.astype(wide, copy=False).reshape((-1,) + (1,) * (dense.ndim - 1))
    sums = out[plan.active]
    add = xp.add
    for (b, e), steps in plan.blocks(max(1, _BLOCK // max(1, math.prod(dense.shape[1:])))):
        # (take: a fresh gathered array; quicker than fancy indexing for rows)
        products = xp.take(dense, at[b:e], axis=0).astype(wide, copy=False)
        products *= coef[b:e]
        for rows, span in steps:
            step = sums[rows]
            add(step, products[span], out=step, casting="unsafe")
    out[plan.active] = sums
    return out


def scatter_fma(out, index, coef, rows):
    """out[index[k]] += coef[k] * rows[k] for each entry k in turn, each step one fused
    multiply-add rounded once, as torch's CPU kernels accumulate sparse products (axpy), for
    an index used once (no cached plan)."""
    if index.shape[0] == 0:
        return out
    plan = RowPlan(index, out.shape[0])
    return fma_rows(out, plan, coef[plan.order], rows, plan.order)


# ---------------------------------------------------------------------- the plan cache
# id(index array) -> (weak reference to it, {key: plan}); an entry leaves with its array
_CACHE = {}


def _forget(key, ref):
    entry = _CACHE.get(key)
    if entry is not None and entry[0] is ref:
        del _CACHE[key]


def cached(array, key, make):
    """make(), kept for as long as `array` lives, under `key` (made anew where the array
    cannot be weakly referenced)."""
    entry = _CACHE.get(id(array))
    if entry is None or entry[0]() is not array:
        try:
            ref = weakref.ref(array, lambda r, k=id(array): _forget(k, r))
        except TypeError:
            return make()
        entry = _CACHE[id(array)] = (ref, {})
    plans = entry[1]
    if key not in plans:
        plans[key] = make()
    return plans[key]


# ---------------------------------------------------------------------- entries' gradient
# gathered elements per chunk of sampled_dot (bounds its temporary memory to ~64 MB)
_CHUNK = 1 << 22


def sampled_dot(left, right, rows, cols):
    """out[k] = left[rows[k]] . right[cols[k]] for each entry k: (left @ right.T) read at the
    entries, without forming it. Summed in float64 and rounded once for float operands (the
    dense product rounds its own way; this is within its rounding)."""
    xp = xp_of(left)
    dtype = np.result_type(left.dtype, right.dtype)
    wide = np.float64 if dtype.kind == "f" else dtype
    n, width = rows.shape[0], max(left.shape[1], 1)
    out = xp.empty(n, dtype=dtype)
    step = max(1, _CHUNK // width)
    for lo in range(0, n, step):
        a = left[rows[lo:lo + step]].astype(wide, copy=False)
        b = right[cols[lo:lo + step]].astype(wide, copy=False)
        out[lo:lo + step] = xp.einsum("ij,ij->i", a, b)
    return out
