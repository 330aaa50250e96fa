"""The arithmetic of sparse @ dense products, vectorised, in torch's rounding.

torch's CPU kernel walks a sparse matrix's entries in order and adds value * (a row of the
dense operand) into the entry's output row with a fused multiply-add, so each output row is a
chain of roundings in entry order. Here that chain is kept, but many rows step together: the
entries are put in *rounds* (the first entry of every row, then the second, ...), and with
the output rows ordered by how many entries they have (most first), the rows a round touches
are a prefix of them. A round is then one ufunc call on two contiguous slices: a product costs
about one call per entry of its fullest row, nothing per row or per entry. The rows go in
groups of a few hundred, each group's rounds in turn, so that the sums being added to stay in
cache; the products are formed a block at a time for the same reason. They are formed in
float64, exact for float32 operands, and each round rounds its sums once to the output dtype
(a float64 product rounds twice, which can differ from an FMA in the last bit; float16 and
bfloat16 round the product and then the sum in their own dtype, as torch does). Unfused, the
products are rounded to the output's dtype first (MKL's kernels on a CPU other than Intel's).

The order of a pattern (a `RowPlan`) depends only on the index array, so it is made once and
kept in a cache keyed on that array (a weak reference: it goes with the array). The entries'
gradient (`sampled_dot`) is computed at the entries only, never as a dense matrix.

Everything is written with the array module `xp` of the arrays, so CuPy arrays work the same.
"""
import math
import weakref

import numpy as np

from .._backend import cupy_module


def xp_of(array):
    """The array module an array belongs to (NumPy, or CuPy for a GPU array)."""
    if isinstance(array, np.ndarray):
        return np
    return cupy_module()


class RowPlan:
    """How to sum a pattern's entries into output rows in rounds (see the module doc).

    The output rows with entries (`active`), most entries first, go in groups of a few
    hundred; each group runs its rounds (the rows of a round a prefix of the group's) before
    the next group starts, so that the group's sums stay in cache. `layout(width)` gives, per
    width of the summed rows: the entries in that order, the other index of each (for a
    product plan; `cols`, else None) and the steps of the sum, by block of products."""
    # (nothing here refers to the index array the plan is cached for: the cache holds the
    # plan only for as long as that array lives)
    __slots__ = ("nnz", "cols", "rank", "place", "active", "degrees", "_layouts")

    def __init__(self, rows, n_rows, cols=None):
        xp = xp_of(rows)
        nnz = self.nnz = rows.shape[0]
        self.cols, self._layouts = None if cols is None else cols.copy(), {}
        degree = xp.bincount(rows, minlength=n_rows)
        # each entry's rank among the entries of its row (0 for its first, ...)
        # (rows grouped, in entry order: a sort of distinct keys, quicker than a stable one)
        by_row = xp.argsort(rows * nnz + xp.arange(nnz))
        first = xp.cumsum(degree) - degree
        self.rank = xp.empty(nnz, dtype=np.int64)
        self.rank[by_row] = xp.arange(nnz) - first[rows[by_row]]
        # rows by degree, most first, and each row's place in that order
        by_degree = xp.argsort(-degree, kind="stable")
        place = xp.empty(n_rows, dtype=np.int64)
        place[by_degree] = xp.arange(n_rows)
        self.place = place[rows]                    # (each entry's row's place)
        n_active = int((degree > 0).sum())
        self.active = by_degree[:n_active]
        self.degrees = np.array(degree[self.active].tolist(), dtype=np.int64)    # (on the host)

    def layout(self, width):
        if width not in self._layouts:
            self._layouts[width] = _Layout(self, max(1, _GROUP // width),
                                           max(1, _BLOCK // width))
        return self._layouts[width]


class _Layout:
    """A RowPlan's entries ordered for one width of rows (see RowPlan): `order`, `cols` and
    `blocks`: [((start, end), [(slice of the sums, slice of the block's products), ...])], the
    products formed a block at a time and each step one ufunc call on the two slices."""
    __slots__ = ("order", "cols", "blocks")

    def __init__(self, plan, group, per_block):
        xp = xp_of(plan.rank)
        degrees = plan.degrees
        # the segments: one per round of each group: (first row, number of rows)
        seg_row, seg_count, seg_base = [], [], []
        for g0 in range(0, degrees.shape[0], group):
            d = degrees[g0:g0 + group]
            seg_base.append(len(seg_count))
            # rows of the group still summing in round r: those with more than r entries
            counts = np.searchsorted(-d, -np.arange(d[0]), side="left").tolist() if d.size \
                else []
            seg_row += [g0] * len(counts)
            seg_count += counts
        seg_start = np.concatenate([[0], np.cumsum(seg_count)]).astype(np.int64)
        # an entry's slot: its segment's start + its row's place within the group
        place = plan.place
        which = place // group
        segment = xp.asarray(np.array(seg_base, dtype=np.int64))[which] + plan.rank
        slot = xp.asarray(seg_start[:-1])[segment] + place - which * group
        self.order = xp.empty(plan.nnz, dtype=np.int64)
        self.order[slot] = xp.arange(plan.nnz)
        self.cols = None if plan.cols is None else plan.cols[self.order]
        self.blocks = _cut(seg_start.tolist(), seg_row, per_block)


def _cut(bounds, seg_row, per_block):
    """The segments [bounds[s], bounds[s + 1]) (summing into the rows from seg_row[s]) cut
    into blocks of `per_block` entries: [((start, end), [(sums slice, products slice)])]."""
    size = bounds[-1]
    blocks, s = [], 0
    for b in range(0, size, per_block):
        e = min(b + per_block, size)
        steps = []
        while s < len(bounds) - 1 and bounds[s] < e:        # the segments meeting [b, e)
            lo, hi, row = bounds[s], bounds[s + 1], seg_row[s]
            first, last = max(lo, b), min(hi, e)
            steps.append((slice(row + first - lo, row + last - lo), slice(first - b, last - b)))
            if hi > e:
                break                                       # (goes on in the next block)
            s += 1
        blocks.append(((b, e), steps))
    return blocks


# products formed per block of this many elements (in float64: 512 KB), so that they are
# summed while still in cache; output rows summed a group of this many elements at a time
_BLOCK = 1 << 16
_GROUP = 1 << 14


def fma_rows(out, plan, values, dense, fused=True):
    """out[row of entry k] += values[k] * (dense[cols[k]] for a product plan, else dense[k])
    for every entry, each output row's sums in entry order, one rounding per step (see the
    module doc); `values` (and `dense` without cols) in entry order. Not `fused`: each product
    is rounded to the output's dtype before it is added (two roundings per step, as MKL's
    kernels sum on a CPU other than Intel's, see _cpu.mkl_fuses)."""
    xp = xp_of(out)
    if plan.nnz == 0:
        return out
    # float32/float64 products in float64 (the FMA's exact product, for float32); torch's
    # float16 and bfloat16 kernels round the product, then the sum, in their dtype
    wide = np.float64 if fused and out.dtype.kind == "f" and out.dtype.itemsize >= 4 \
        else out.dtype
    layout = plan.layout(max(1, math.prod(dense.shape[1:])))
    at = layout.order if layout.cols is None else layout.cols
    if dense.shape[0] < at.shape[0]:
        # (widen the smaller array once, its rows contiguous for the gathers: dense @ sparse
        # hands a transposed view)
        dense = xp.ascontiguousarray(dense, dtype=wide)
    coef = xp.take(values, layout.order).astype(wide, copy=False)
    coef = coef.reshape((-1,) + (1,) * (dense.ndim - 1))
    sums = out[plan.active]
    add = xp.add
    for (b, e), steps in layout.blocks:
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
    return fma_rows(out, RowPlan(index, out.shape[0]), coef, rows)


# ---------------------------------------------------------------------- the plan cache
# id(index array) -> (weak reference to it, {key: plan}, a copy of its values); an entry leaves
# with its array
_CACHE = {}


def _forget(cache, key, ref):
    entry = cache.get(key)
    if entry is not None and entry[0] is ref:
        del cache[key]


def cached(array, key, make):
    """make(), kept for as long as `array` lives and holds the same values, under `key` (made
    anew where the array cannot be weakly referenced). The values are compared on every use:
    a user may write into a sparse tensor's indices in place (`s.indices()[0, 1] = 2`), and a
    plan of the old pattern would then give a silently wrong product."""
    entry = _CACHE.get(id(array))
    if entry is None or entry[0]() is not array or \
            not xp_of(array).array_equal(entry[2], array):
        try:
            ref = weakref.ref(array, lambda r, k=id(array), cache=_CACHE: _forget(cache, k, r))
        except TypeError:
            return make()
        entry = _CACHE[id(array)] = (ref, {}, array.copy())
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
