"""NumPy kernels for the hot training ops: GELU and sigmoid (forward and backward), softmax
and log_softmax and layer_norm over rows (forward and backward), and the row scatter-add of
embedding's backward.

PyTorch's CPU kernels compute these in float32 for float32 tensors; so do these, instead of a
float64 detour. Elementwise kernels run in blocks that stay in the CPU cache (each NumPy call
is one pass over its operands; a block of 32K-64K floats keeps all the passes of a polynomial
in L2 instead of main memory, about 3x faster on a 0.5M-element tensor), through
_parallel.for_blocks; row kernels take blocks of whole rows (about 64K elements each) the same
way. These blocks are light, so they run on the calling thread (_parallel.py says why); a
block's results never depend on the thread that computes it either way, so the bits are the
same at any thread count (tests/test_parallel_blocks.py).

GELU and layer_norm keep what their backward needs from the forward (_KEPT), and the row
kernels use BLAS for row sums and for outer products (_outer_into): with one NumPy call per
pass, fewer passes is what makes a kernel faster.
"""
import math
import weakref

import numpy as np

from ._parallel import BLOCK, for_blocks, scratch
from ._threads import call_single_threaded

# GELU (exact, erf-based): gelu(x) = x * Phi(x), Phi the standard normal CDF. Written as
# Phi(x) = 1 / (1 + exp(x * P(x^2))): x * P(x^2) = log((1 - Phi) / Phi) is odd and smooth, and
# this form has no cancellation for negative x (1 + erf(x / sqrt 2) would). P is a degree-6
# polynomial fitted (weighted least squares towards minimax, on |x| <= 6) to the absolute
# error of Phi: gelu within 2 ulp of |x| of the exact value, measured on 3M points of [-9, 9]
# (PyTorch's own float32 GELU is within 5 ulp of |x|). The leading coefficient is negative, so
# beyond the fitted range x * P(x^2) keeps the sign that sends Phi to 0 or 1.
_GELU_P = [np.float32(c) for c in (
    -1.5957699921630153, -0.07266563455383758, 6.454414671005583e-05,
    0.00011090626604015467, -7.98741897211228e-06, 2.694663618728278e-07,
    -3.6597091585831574e-09)]


def _one_plus_e_into(x, u, acc):
    """acc = 1 + exp(x * P(x^2)) = 1 / Phi(x) for a block; u = x * x on return. All float32,
    same shape."""
    np.multiply(x, x, out=u)
    np.multiply(u, _GELU_P[-1], out=acc)
    acc += _GELU_P[-2]
    for c in _GELU_P[-3::-1]:
        acc *= u
        acc += c
    acc *= x
    np.exp(acc, out=acc)
    acc += 1


def _in_layout_of(x, result):
    """result (C-contiguous, x's shape) laid out in memory as x is, as NumPy's own
    elementwise results are (a permuted input gives a permuted result, as in PyTorch)."""
    if x.flags.c_contiguous or result.ndim < 2:
        return result
    out = np.empty_like(x, dtype=result.dtype)
    out[...] = result
    return out


def gelu_f32(x, keep=False):
    """gelu(x) = x * Phi(x) for a float32 array. keep: remember 1 / Phi(x) for
    gelu_backward_f32 of the same array (see _KEPT)."""
    return _in_layout_of(x, _gelu_f32(x, keep))


# What a forward keeps for the backward of the same input array (GELU's denominators 1 / Phi(x);
# layer_norm's centred rows and reciprocal deviations), so that the backward need not recompute
# it: keyed by (kernel, id(x)), taken out by the backward that reads it, with a weak reference
# that drops the entry when x is freed first and that tells a recycled id from x itself. An
# input changed in place bumps its tensor's version, and the backward then raises before it
# reads anything. The forwards keep only while grad mode is on.
_KEPT = {}


def _keep(kind, x, value):
    key = (kind, id(x))

    def forget(ref):
        entry = _KEPT.get(key)
        if entry is not None and entry[0] is ref:
            del _KEPT[key]
    _KEPT[key] = (weakref.ref(x, forget), value)


def _kept(kind, x):
    """What the forward kept for x, taken out of the cache (a second backward, after
    retain_graph, recomputes it), or None."""
    entry = _KEPT.pop((kind, id(x)), None)
    if entry is not None and entry[0]() is x:
        return entry[1]
    return None


# GELU: with the forward's denominators the backward is 8 passes with one exp instead of ~22
# with two (it would recompute the polynomial). Its passes run in blocks of 64K elements:
# measured 10% faster than 32K on the 0.5M elements of the GPT's MLP (fewer Python calls; the
# 3-4 arrays of a block still fit in L2).
_GELU_BLOCK = 2 * BLOCK

# Row kernels (softmax, log_softmax, layer_norm) take blocks of whole rows of about 64K
# elements: some 10 calls a block, each with a fixed cost of 1-2 us, so that fewer, larger
# blocks are faster (measured ~10% on softmax's 4096 x 64 rows against 32K blocks).
_ROW_BLOCK = 2 * BLOCK


def _gelu_f32(x, keep):
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(flat)
    denoms = np.empty_like(flat) if keep else None

    def block(s, e):
        u, acc = scratch(2, np.float32, _GELU_BLOCK)
        xs, n = flat[s:e], e - s
        d = denoms[s:e] if keep else acc[:n]
        with np.errstate(all="ignore"):         # exp overflows to inf for very negative x
            _one_plus_e_into(xs, u[:n], d)
            np.divide(xs, d, out=out[s:e])          # x * Phi(x), one pass
    for_blocks(block, flat.size, _GELU_BLOCK)
    if keep:
        _keep("gelu", x, denoms)
    # -inf: x * Phi(x) is -inf * 0 (PyTorch: nan as well; see the tests)
    return out.reshape(np.shape(x))


def gelu_backward_f32(grad, x):
    """grad * gelu'(x) = grad * (Phi(x) + x phi(x)) for float32 arrays of one shape."""
    return _in_layout_of(x, _gelu_backward_f32(grad, x))


_SQRT_HALF = np.float32(math.sqrt(0.5))
_LOG_INV_SQRT_2PI = np.float32(-0.5 * math.log(2 * math.pi))


def _gelu_backward_f32(grad, x):
    flat = np.ascontiguousarray(x).reshape(-1)
    g = np.ascontiguousarray(grad).reshape(-1)
    out = np.empty_like(flat)
    denoms = _kept("gelu", x)

    def block(s, e):
        u, t = scratch(2, np.float32, _GELU_BLOCK)
        xs, gs, o, n = flat[s:e], g[s:e], out[s:e], e - s
        uu, tt = u[:n], t[:n]
        with np.errstate(all="ignore"):
            if denoms is None:
                d = tt
                _one_plus_e_into(xs, uu, d)     # 1 / Phi(x)
            else:
                d = denoms[s:e]
            np.divide(gs, d, out=o)             # grad * Phi(x)
            np.multiply(xs, _SQRT_HALF, out=uu)
            uu *= uu
            np.subtract(_LOG_INV_SQRT_2PI, uu, out=uu)
            np.exp(uu, out=uu)                  # phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
        uu *= xs
        uu *= gs
        o += uu
    for_blocks(block, flat.size, _GELU_BLOCK)
    return out.reshape(np.shape(x))


def sigmoid_f32(x):
    """1 / (1 + exp(-x)) in float32, as PyTorch's CPU kernel: exactly 0 once exp(-x)
    overflows (x < -88.7), 1 for large x."""
    out = np.empty_like(x, dtype=np.float32)         # (x's memory layout)
    if not (x.flags.c_contiguous and out.flags.c_contiguous):
        _sigmoid_into(x, out)
        return out
    flat, flat_out = x.reshape(-1), out.reshape(-1)
    for_blocks(lambda s, e: _sigmoid_into(flat[s:e], flat_out[s:e]), flat.size)
    return out


def sigmoid_backward_into(grad, y):
    """grad * (y * (1 - y)) for C-contiguous float arrays of one shape and dtype (the
    element-wise expression's own roundings), block by block in cache, or None for other
    operands."""
    if not (grad.__class__ is y.__class__ is np.ndarray and grad.shape == y.shape and
            grad.dtype == y.dtype and grad.dtype.kind == "f" and grad.flags.c_contiguous and
            y.flags.c_contiguous and grad.ndim):
        return None
    out = np.empty_like(grad)
    g, yf, o = grad.reshape(-1), y.reshape(-1), out.reshape(-1)
    one = y.dtype.type(1)

    def block(s, e):
        t = scratch(1, y.dtype)[0][:e - s]
        ys = yf[s:e]
        np.subtract(one, ys, out=t)
        t *= ys
        np.multiply(g[s:e], t, out=o[s:e])
    for_blocks(block, g.size)
    return out


def _sigmoid_into(x, out):
    np.negative(x, out=out)
    with np.errstate(over="ignore"):
        np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)


def _for_row_blocks(body, rows, width):
    """body(r0, r1) for consecutive blocks of about _ROW_BLOCK elements of whole rows (at
    least one row each), on the calling thread: every pass of a row kernel over one block runs
    while the block is in cache. Returns the number of blocks; block k covers rows
    [k * per, (k + 1) * per), per = rows_per_block(width, rows)."""
    per = rows_per_block(width, rows)
    step = per * width
    for_blocks(lambda s, e: body(s // width, e // width), rows * width, step)
    return -(-rows // per)


def rows_per_block(width, rows):
    """Rows per block: at most _ROW_BLOCK elements, the rows shared evenly over the blocks
    (1024 rows of 65: two blocks of 512, not 1008 and 16, each block costing as many calls)."""
    per = max(1, _ROW_BLOCK // max(width, 1))
    blocks = max(1, -(-rows // per))
    return -(-rows // blocks) if rows else per


def _row_max(x, offsets):
    """Each row's maximum as a column, NaN where the row has one (argmax finds the first NaN).
    argmax and a flat take (offsets: np.arange(0, rows * n, n) or longer) are ~4x faster than
    NumPy's max (or take_along_axis) on short rows."""
    index = x.argmax(axis=1)
    index += offsets[:len(index)]
    m = x.reshape(-1).take(index)[:, None]
    if not m.min() > -np.inf:           # (one reduction; true for -inf, and for nan)
        # an all -inf row is shifted by 0 (its softmax is then nan, as torch's); a +inf max
        # by +inf (nan too)
        m[m == -np.inf] = 0
    return m


def softmax_rows(x, log=False):
    """softmax (or log_softmax) of each row of a C-contiguous 2-D float array, in x's dtype:
    exp(x - max) * (1 / sum), or x - max - log(sum(exp(x - max)))."""
    out = np.empty_like(x)
    rows, n = x.shape
    offsets = np.arange(0, min(rows, rows_per_block(n, rows)) * n, n)
    one = x.dtype.type(1)

    def block(r0, r1):
        xs, o = x[r0:r1], out[r0:r1]
        np.subtract(xs, _row_max(xs, offsets), out=o)
        if log:
            e = scratch(1, x.dtype, max(_ROW_BLOCK, n))[0][:o.size].reshape(o.shape)
            np.exp(o, out=e)
            o -= np.log(np.einsum("ij->i", e))[:, None]
        else:
            np.exp(o, out=o)
            s = np.einsum("ij->i", o)[:, None]
            o *= np.divide(one, s, out=s)
    _for_row_blocks(block, rows, n)
    return out


def softmax_backward_rows(g, y, log=False):
    """softmax's backward y * (g - sum(g * y)), or log_softmax's g - exp(y) * sum(g), row by
    row of C-contiguous 2-D arrays of one dtype."""
    out = np.empty_like(g)

    def block(r0, r1):
        gs, ys, o = g[r0:r1], y[r0:r1], out[r0:r1]
        if log:
            np.exp(ys, out=o)
            o *= np.einsum("ij->i", gs)[:, None]
            np.subtract(gs, o, out=o)
        else:
            np.subtract(gs, np.einsum("ij,ij->i", gs, ys)[:, None], out=o)
            o *= ys
    _for_row_blocks(block, g.shape[0], g.shape[1])
    return out


def _outer_into(out, col, row, lhs, rhs):
    """out[i, j] = col[i] * row[j] (each product rounded once, as NumPy's multiply) as the
    matrix product [col, 0] @ [row; 0]: BLAS writes this rank-2 product at about the speed of a
    copy, ~3x faster than NumPy's broadcast of a column against a row (or of a column over a
    block), and ~10x faster than a rank-1 product (NumPy's own loop). lhs (rows, 2) and rhs
    (2, n) are the caller's buffers, their second column and row zero.

    The kernels that use BLAS this way (and for row sums) run with BLAS on one thread
    (call_single_threaded): OpenBLAS would split a block's matrix-vector products over its
    threads, in an order that depends on their number, and the handoffs cost more than a
    block's product."""
    lhs[:, 0] = col
    rhs[0] = row
    np.matmul(lhs, rhs, out=out)


class _RowScaler:
    """Outer products col (x) row for the blocks of one row kernel (see _outer_into): the
    operand buffers, the ones vector, and per-block views of a (rows, n) output buffer."""

    def __init__(self, rows, n, dtype):
        self.lhs = np.zeros((rows, 2), dtype)
        self.rhs = np.zeros((2, n), dtype)
        self.ones_n = np.ones(n, dtype)
        self.ones_rows = np.ones(rows, dtype)

    def outer(self, out, col, row=None):
        rows = len(col)
        _outer_into(out, col, self.ones_n if row is None else row, self.lhs[:rows], self.rhs)


def _centre_into(x, xc, scaler, col):
    """xc = x - mean(x) row by row for a 2-D block; returns the mean (1-D, in col). Row sums
    as a matrix-vector product (one pass, ~3x faster than NumPy's mean on short rows)."""
    mean = np.matmul(x, scaler.ones_n, out=col)
    mean /= x.shape[1]
    scaler.outer(xc, mean)
    np.subtract(x, xc, out=xc)
    return mean


def _rstd_into(xc, eps, out):
    """out = 1 / sqrt(mean(xc^2) + eps) for each row of a centred 2-D block (1-D)."""
    var = np.einsum("ij,ij->i", xc, xc, out=out)
    var /= xc.shape[1]
    var += xc.dtype.type(eps)
    np.sqrt(var, out=var)
    return np.reciprocal(var, out=var)


def _tiled(vector, rows, n):
    """A 1-D weight repeated over `rows` rows (or None): adding a same-shaped array to a block
    is ~2x faster in NumPy than broadcasting a row over it (the short inner loop)."""
    if vector is None:
        return None
    out = np.empty((rows, n), vector.dtype)
    out[...] = vector
    return out


def layer_norm_rows(x, weight, bias, eps, keep=None):
    """Layer norm of each row of a C-contiguous 2-D float array (the normalized dims
    flattened), in x's dtype; weight and bias 1-D or None. keep: an array (the op's input) to
    key the centred rows and reciprocal deviations by, for layer_norm_backward_rows (_KEPT).

    y = xc * (rstd (x) w) + b with xc = x - mean: two passes for the statistics, then one
    outer product (a BLAS rank-2 product) and two passes."""
    rows, n = x.shape
    y = np.empty_like(x)
    per = min(rows, rows_per_block(n, rows))
    scaler = _RowScaler(per, n, x.dtype)
    b = _tiled(bias, per, n)
    xc_all = np.empty_like(x) if keep is not None else None
    rstd_all = np.empty(rows, x.dtype)

    def block(r0, r1):
        o, size = y[r0:r1], (r1 - r0) * n
        t, = scratch(1, x.dtype, max(_ROW_BLOCK, n))
        xc = xc_all[r0:r1] if keep is not None else t[:size].reshape(o.shape)
        _centre_into(x[r0:r1], xc, scaler, rstd_all[r0:r1])
        rstd = _rstd_into(xc, eps, rstd_all[r0:r1])
        scaler.outer(o, rstd, weight)
        o *= xc
        if b is not None:
            o += b[:r1 - r0]
    call_single_threaded(_for_row_blocks, block, rows, n)
    if keep is not None:
        _keep("layer_norm", keep, (xc_all, rstd_all, eps))
    return y


def layer_norm_backward_rows(g, x, weight, eps, key=None):
    """(grad of x, grad of weight, grad of bias) of layer_norm_rows, for C-contiguous 2-D g
    and x; key: the array its forward kept its statistics by (else they are recomputed).

    With xc = x - mean, a = rstd and gy = g * weight, as PyTorch's CPU kernel:
    dx = a * gy + b * xc + c, b = -sum(a gy xc) a^2 / n, c = -sum(a gy) / n per row (xc in
    place of x there: no cancellation against the mean). The row sums are matrix-vector
    products: sum(gy xc) = (g xc) @ w and sum(gy) = g @ w; the outer products by BLAS
    (_outer_into). The weight's and bias's gradients are column sums (vector-matrix
    products): each block sums its own rows, then the blocks' sums are added in block
    order (the same bits on any number of threads)."""
    rows, n = x.shape
    gx = np.empty_like(x)
    per = rows_per_block(n, rows)
    nblocks = -(-rows // per)
    scaler = _RowScaler(min(rows, per), n, x.dtype)
    part_w = np.empty((nblocks, n), x.dtype) if weight is not None else None
    part_b = np.empty((nblocks, n), x.dtype)
    kept = _kept("layer_norm", key) if key is not None else None
    if kept is not None and kept[2] != eps:
        kept = None
    w = scaler.ones_n if weight is None else weight
    inv_n = x.dtype.type(1 / n)

    def block(r0, r1):
        k, size = r0 // per, (r1 - r0) * n
        gs, o = g[r0:r1], gx[r0:r1]
        t1, t2, t3 = (a[:size].reshape(o.shape)
                      for a in scratch(3, x.dtype, max(_ROW_BLOCK, n)))
        if kept is None:
            xc, rstd = t3, np.empty(r1 - r0, x.dtype)
            _centre_into(x[r0:r1], xc, scaler, rstd)
            _rstd_into(xc, eps, rstd)
        else:
            xc, rstd = kept[0][r0:r1], kept[1][r0:r1]
        np.matmul(scaler.ones_rows[:r1 - r0], gs, out=part_b[k])
        np.multiply(gs, xc, out=t1)                         # g * xc
        if weight is not None:
            np.matmul(rstd, t1, out=part_w[k])              # sum of g * xhat
        b = np.matmul(t1, w)                                # sum(gy xc)
        b *= rstd
        b *= rstd
        b *= rstd
        b *= -inv_n
        c = np.matmul(gs, w)                                # sum(gy)
        c *= rstd
        c *= -inv_n
        scaler.outer(t2, rstd, weight)
        np.multiply(gs, t2, out=o)                          # a * gy
        scaler.outer(t2, b)
        t2 *= xc
        o += t2
        scaler.outer(t2, c)
        o += t2
    call_single_threaded(_for_row_blocks, block, rows, n)
    gw = part_w.sum(axis=0) if weight is not None else None
    return gx, gw, part_b.sum(axis=0)


def scatter_add_rows(out, index, rows):
    """out[index[k]] += rows[k] for every k, in the order of k (each sum rounded as a
    sequential loop rounds it, as PyTorch's CPU kernel). out: C-contiguous (num, dim);
    rows: (len(index), dim).

    By occurrence: the first occurrence of every index is added (one fancy-indexed add over
    distinct rows), then every second occurrence, and so on: each row of `out` gets its rows
    in their order, as the loop adds them. A few levels (ids repeat a few times in a batch)
    are faster than np.add.at; many repeats take np.add.at on the flattened array, one index
    per element (about 3x faster than on the rows, and in the same order)."""
    index = np.asarray(index).reshape(-1)
    n = index.size
    if n == 0:
        return
    rows = rows.reshape(n, -1)
    order = np.argsort(index, kind="stable")
    ids = index[order]
    first = np.empty(n, bool)
    first[0] = True
    np.not_equal(ids[1:], ids[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    occurrence = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
    levels = int(occurrence.max()) + 1
    if levels <= 8:
        picked = order[starts]
        for level in range(levels):
            if level:
                picked = order[occurrence == level]
            out[index[picked]] += rows[picked]
        return
    dim = out.shape[1]
    flat_index = (index.reshape(-1, 1) * dim + np.arange(dim)).reshape(-1)
    np.add.at(out.reshape(-1), flat_index, np.ascontiguousarray(rows).reshape(-1))
