"""Winograd F(2x2, 3x3): 3x3 stride-1 convolutions (forward and both gradients) in fewer
multiply-adds than im2col + GEMM.

A 2x2 block of outputs of a 3x3 correlation reads a 4x4 tile d of the padded input. With the
transforms of F(2, 3) along each axis (input B^T, weight G, output A^T),

    y_tile = A^T [ (G w G^T) (.) (B^T d B) ] A       ((.): elementwise over the 4x4 positions)

and summed over input channels, the elementwise product becomes, for each of the 16 positions
k, one matrix product U[k] (O x C) @ V[k] (C x tiles): 16*C multiply-adds per 4 outputs
instead of 36*C. F(2, 3)'s input and output transforms only add and subtract (the weight
transform, with its halves, is computed in float64), so in float32 it stays about as close to
the exact result as torch's own kernel (tests/test_conv_winograd.py); F(4, 3) (4x fewer
products) was measured 20x less accurate on the MNIST CNN's layer (5e-5 against 2e-6 of a
result of 9), beyond torch's float32 tolerance, and is not used.

The backward passes are the adjoints of the same three linear steps:
    dM[k] = A dY A^T  (per tile),   dU[k] = sum over tiles dM[k] V[k]^T,   dV[k] = U[k]^T dM[k],
    dx = the adjoint of the input transform, overlapping tiles summed;  dw = G^T dU G.

Layout. The padded input is split into its four phase planes (even/odd rows x even/odd
columns), each (C, R, S) with R = tile rows + 1, S = tile columns + 1; a tile's 4x4 inputs are
then the four planes at the tile's own position and the next one along a row, a column or
both: contiguous runs shifted by 1, S or S+1 in the flat planes, so every transform is a few
whole-array adds and subtracts. The extra row and column of tiles ("wide" positions) are
computed and dropped (their gradients are zero). The batch runs in chunks of a few samples
(everything a chunk touches stays within a core's L2 cache), each chunk's products one small
GEMM per sample and position, on ember's threads (_nn_kernels.parallel_samples); the weight
gradient keeps each sample's products in its own slot, added up in sample order at the end:
the same bits at any thread count and chunk size.

Inputs with inf or NaN (or finite ones large enough that a transform overflows) can give NaN
where the direct sum gives inf: every result is checked and None returned where it is not all
finite, and the caller then uses the direct path.
"""
import threading
from functools import partial

import numpy as np

from ._nn_kernels import parallel_samples
from ._threads import get_num_threads

_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
_CHUNK_BYTES = 1 << 21      # a chunk's working set (within a core's L2 cache)
# Where it is faster than the direct GEMM (measured on the 2-core machine, forward+backward
# through ember.nn.functional.conv2d, 1 thread): 10-20% on 16 to 128 channels over images of
# 24 to 28 pixels; break-even at 14x14 (32 channels) and 20x20 (256 channels); slower on
# 8 channels and on small images (16 to 64% on 8x8 and 14x14 with 64 and 128 channels),
# where the GEMMs get too narrow and the wide tiles a larger share.
MIN_CHANNELS = 16           # input and output channels
MIN_PLANE = 144             # tile positions per channel plane, wide ones included (22x22 out)


def applies(x, w, stride, padding, dilation, groups, bias=None):
    """Whether a convolution of NumPy arrays x (N, C, H, W) and w (O, C, 3, 3) takes this path
    (it depends on the shapes and dtypes only, never on the thread count)."""
    if w.ndim != 4 or w.shape[2:] != (3, 3) or groups != 1 or tuple(stride) != (1, 1) or \
            tuple(dilation) != (1, 1):
        return False
    if x.dtype != w.dtype or x.dtype not in (np.float32, np.float64) or \
            (bias is not None and bias.dtype != x.dtype):
        return False
    n, c, h, wd = x.shape
    if n == 0 or c < MIN_CHANNELS or w.shape[0] < MIN_CHANNELS:
        return False
    if h + 2 * padding[0] < 3 or wd + 2 * padding[1] < 3:
        return False
    geo = _geometry(h, wd, padding)
    return geo.plane >= MIN_PLANE


class _Geometry:
    """Tiles and phase planes of one input size and padding (see the module's docstring)."""

    def __init__(self, h, w, padding):
        ph, pw = padding
        self.out = (h + 2 * ph - 2, w + 2 * pw - 2)
        th, tw = -(-self.out[0] // 2), -(-self.out[1] // 2)
        self.rows, self.cols = th + 1, tw + 1             # plane size R x S
        self.plane = self.rows * self.cols
        # for phase p (q): the input rows (columns) it holds, and where they start in the plane
        self.in_rows = [self._phase(p, ph, h) for p in (0, 1)]
        self.in_cols = [self._phase(q, pw, w) for q in (0, 1)]
        # the output rows (columns) of tile position a (b): how many there are
        self.out_rows = [(self.out[0] - a + 1) // 2 for a in (0, 1)]
        self.out_cols = [(self.out[1] - b + 1) // 2 for b in (0, 1)]

    @staticmethod
    def _phase(p, pad, n):
        """(first input index, its plane index, count) of the inputs with padded index % 2 == p."""
        first = (p - pad) % 2
        return first, (first + pad) // 2, max(0, (n - first + 1) // 2)


_GEOMETRIES = {}


def _geometry(h, w, padding):
    key = (h, w, tuple(padding))
    geo = _GEOMETRIES.get(key)
    if geo is None:
        if len(_GEOMETRIES) > 256:
            _GEOMETRIES.clear()
        geo = _GEOMETRIES[key] = _Geometry(h, w, padding)
    return geo


_local = threading.local()


def _chunk(n, per_sample_bytes, budget=_CHUNK_BYTES):
    """Samples per chunk: a working set within `budget`, and at least 8 chunks."""
    return max(1, min(budget // max(per_sample_bytes, 1), -(-n // 8)))


# Chunks on more than one thread take 4x the working set: each chunk is some 30 NumPy calls
# whatever its size, and two threads running one-sample chunks hand the GIL back and forth at
# each (MNIST's conv2 forward at 2 threads: 14.3 ms with 2 MB chunks, 12.5 with 4 MB, 11.6
# with 8 MB; 1 thread 16.1 ms, 19.6 with 8 MB). Each sample's output (and each sample's part
# of the weight gradient) is its own products, so the bits do not depend on the chunking.
_THREADED_BYTES = 4 * _CHUNK_BYTES


def _chunk_for_threads(n, per_sample):
    return _chunk(n, per_sample, _THREADED_BYTES if get_num_threads() > 1 else _CHUNK_BYTES)


def _weight_transform(w):
    """U = G w G^T for each (o, c), as (16, O, C) (computed in float64: exact halves)."""
    u = np.einsum("ik,ockl,jl->ijoc", _G, w.astype(np.float64), _G, optimize=True)
    return np.ascontiguousarray(u.reshape(16, w.shape[0], w.shape[1]), dtype=w.dtype)


def _plan(geo, ns, c, o, dtype):
    """The calling thread's _Plan for chunks of ns samples of this geometry (cached: a chunk
    then costs its NumPy calls only, not the slicing that sets them up)."""
    plans = getattr(_local, "plans", None)
    if plans is None:
        plans = _local.plans = {}
    key = (geo, ns, c, o, np.dtype(dtype))
    plan = plans.get(key)
    if plan is None:
        if len(plans) > 16:
            plans.clear()
        plan = plans[key] = _Plan(geo, ns, c, o, np.dtype(dtype))
    return plan


class _Plan:
    """One thread's buffers for chunks of ns samples, and the NumPy calls of each transform
    over them (as argument-free partials). The buffers start as zeros; each chunk rewrites
    the same parts, and the rest stays zero (the planes' padding, the gradient's wide tile
    positions)."""

    def __init__(self, geo, ns, c, o, dtype):
        self.geo, self.ns = geo, ns
        s, q = geo.cols, geo.plane
        length = ns * c * q
        sub, add = np.subtract, np.add

        # input transform (see the module's docstring): phase planes, then rows, then columns
        self.planes = planes = np.zeros((2, 2, length + s + 2), dtype)
        self.plane_in = [(planes[p, qq, :length].reshape(ns, c, geo.rows, geo.cols)
                          [:, :, r0:r0 + nr, c0:c0 + nc], i0, j0)
                         for p, (i0, r0, nr) in enumerate(geo.in_rows)
                         for qq, (j0, c0, nc) in enumerate(geo.in_cols)]
        self.t = t = np.zeros((4, 2, length + 1), dtype)
        p0, p0s = planes[0, :, :length + 1], planes[0, :, s:s + length + 1]
        p1, p1s = planes[1, :, :length + 1], planes[1, :, s:s + length + 1]
        self.v = v = np.zeros((4, 4, length), dtype)
        t0, t0s, t1, t1s = t[:, 0, :length], t[:, 0, 1:], t[:, 1, :length], t[:, 1, 1:]
        self.input_ops = [
            # rows: the tile's rows 0..3 are the even/odd planes here and one row down
            partial(sub, p0, p0s, out=t[0]), partial(add, p1, p0s, out=t[1]),
            partial(sub, p0s, p1, out=t[2]), partial(sub, p1, p1s, out=t[3]),
            # columns: the tile's columns 0..3 are the even/odd columns here and one right
            partial(sub, t0, t0s, out=v[:, 0]), partial(add, t1, t0s, out=v[:, 1]),
            partial(sub, t0s, t1, out=v[:, 2]), partial(sub, t1, t1s, out=v[:, 3])]
        self.v16 = v.reshape(16, ns, c, q)
        self.c, self.o, self.dtype = c, o, dtype
        self._forward = self._backward = None

    def input_transform(self, x):
        """V = B^T d B of every tile of x (ns, C, H, W): (16, ns, C, R*S)."""
        for dst, i0, j0 in self.plane_in:
            dst[...] = x[:, :, i0::2, j0::2]
        for op in self.input_ops:
            op()
        return self.v16

    def forward_parts(self):
        """(M, M's position (1, 1), the output steps, the outputs (for the finite check), and
        (a, b, view) of the outputs to copy into place)."""
        if self._forward is None:
            geo, ns, o, dtype = self.geo, self.ns, self.o, self.dtype
            m = np.zeros((16, ns, o, geo.plane), dtype)
            mf = m.reshape(4, 4, -1)
            z = np.zeros((2, 4, mf.shape[2]), dtype)
            out = m[:4].reshape(2, 2, -1)        # (M is spent: its buffer takes the outputs)
            sub, add = np.subtract, np.add
            ops = [
                # rows (A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]), then columns
                partial(add, mf[0], mf[1], out=z[0]), partial(add, z[0], mf[2], out=z[0]),
                partial(sub, mf[1], mf[2], out=z[1]), partial(sub, z[1], mf[3], out=z[1]),
                partial(add, z[:, 0], z[:, 1], out=out[:, 0]),
                partial(add, out[:, 0], z[:, 2], out=out[:, 0]),
                partial(sub, z[:, 1], z[:, 2], out=out[:, 1]),
                partial(sub, out[:, 1], z[:, 3], out=out[:, 1])]
            tiles = out.reshape(2, 2, ns, o, geo.rows, geo.cols)
            copies = [(a, e, tiles[a, e, :, :, :geo.out_rows[a], :geo.out_cols[e]])
                      for a in (0, 1) for e in (0, 1)]
            self._forward = (m, m[5], ops, out, copies)
        return self._forward

    def backward_parts(self):
        """(dM, the places the output gradient's phases go, dM's steps, the input adjoint's
        steps, and (view, i0, j0) of the input gradient's phase planes)."""
        if self._backward is None:
            geo, ns, c, o, dtype = self.geo, self.ns, self.c, self.o, self.dtype
            s, length = geo.cols, ns * c * geo.plane
            sub, add = np.subtract, np.add
            # dM = A dY A^T of every tile, up to the signs _DM_SIGNS. With the gradient's
            # phases g_ab (a: row, b: column in the 2x2 output tile), dY A^T has the rows
            # (g_a0, g_a0 + g_a1, g_a0 - g_a1, -g_a1), and dM's rows are row0, row0 + row1,
            # row0 - row1, -row1 of that. Made of copies, sums and differences only (the
            # signs go to the GEMMs): rows S0 = (g00, g00 + g01, g00 - g01, g01) and S3
            # likewise from g10 and g11, then S0 + S3 and S0 - S3.
            dm = np.zeros((4, 4, ns, o, geo.rows, geo.cols), dtype)
            r0, r1 = geo.out_rows
            c0, c1 = geo.out_cols
            dm_in = [(dm[0, 0, :, :, :r0, :c0], 0, 0), (dm[0, 3, :, :, :r0, :c1], 0, 1),
                     (dm[3, 0, :, :, :r1, :c0], 1, 0), (dm[3, 3, :, :, :r1, :c1], 1, 1)]
            flat = dm.reshape(4, 4, -1)
            ends = flat[0::3]                               # rows 0 and 3
            dm_ops = [partial(add, ends[:, 0], ends[:, 3], out=ends[:, 1]),
                      partial(sub, ends[:, 0], ends[:, 3], out=ends[:, 2]),
                      partial(add, flat[0], flat[3], out=flat[1]),
                      partial(sub, flat[0], flat[3], out=flat[2])]
            # the adjoint of the input transform, from dV in V's buffer: columns, then rows
            dv = self.v
            dv0, dv1, dv2, dv3 = dv[:, 0], dv[:, 1], dv[:, 2], dv[:, 3]
            dt = self.t                 # (T's buffer: the input transform is done with it)
            dt0, dt1 = dt[:, 0], dt[:, 1]
            tmp = np.zeros((4, length), dtype)
            dp = np.zeros((2, 2, length + s + 2), dtype)
            tmp2 = tmp.reshape(-1)[:2 * (length + 1)].reshape(2, length + 1)
            n1 = length + 1
            adjoint_ops = [
                # columns: V[:, 0] = t0 - t0s, V[:, 1] = t1 + t0s, V[:, 2] = t0s - t1,
                # V[:, 3] = t1 - t1s
                partial(add, dv1, dv2, out=tmp), partial(sub, tmp, dv0, out=tmp),
                partial(np.copyto, dt0[:, 0], dv0[:, 0]),
                partial(add, dv0[:, 1:], tmp[:, :-1], out=dt0[:, 1:length]),
                partial(np.copyto, dt0[:, length], tmp[:, -1]),
                partial(sub, dv1, dv2, out=dt1[:, :length]),
                partial(add, dt1[:, :length], dv3, out=dt1[:, :length]),
                partial(np.copyto, dt1[:, length], 0),
                partial(sub, dt1[:, 1:], dv3, out=dt1[:, 1:]),
                # rows: t0 = p0 - p0s, t1 = p1 + p0s, t2 = p0s - p1, t3 = p1 - p1s
                partial(add, dt[1], dt[2], out=tmp2), partial(sub, tmp2, dt[0], out=tmp2),
                partial(np.copyto, dp[0, :, :s], dt[0][:, :s]),
                partial(add, dt[0][:, s:], tmp2[:, :n1 - s], out=dp[0, :, s:n1]),
                partial(np.copyto, dp[0, :, n1:n1 + s], tmp2[:, n1 - s:]),
                partial(np.copyto, dp[:, :, n1 + s:], 0),
                partial(np.copyto, dp[1, :, n1:], 0),
                partial(sub, dt[1], dt[2], out=dp[1, :, :n1]),
                partial(add, dp[1, :, :n1], dt[3], out=dp[1, :, :n1]),
                partial(sub, dp[1, :, s:s + n1], dt[3], out=dp[1, :, s:s + n1])]
            dp_out = [(dp[p, qq, :length].reshape(ns, c, geo.rows, geo.cols)
                       [:, :, r0_:r0_ + nr, c0_:c0_ + nc], i0, j0)
                      for p, (i0, r0_, nr) in enumerate(geo.in_rows)
                      for qq, (j0, c0_, nc) in enumerate(geo.in_cols)]
            self._backward = (dm.reshape(16, ns, o, geo.plane), dm_in, dm_ops, adjoint_ops,
                              dp, dp_out)
        return self._backward


def forward(x, w, bias, padding):
    """The convolution of x (N, C, H, W) with w (O, C, 3, 3) (+ bias), stride 1; None where
    the result is not all finite (see the module's docstring)."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    geo = _geometry(h, wd, padding)
    u = _weight_transform(w)[:, None]                             # 16, 1, O, C
    b = None if bias is None else bias.reshape(o, 1)
    y = np.empty((n, o) + geo.out, dtype=x.dtype)
    per_sample = (28 * c + 24 * o) * geo.plane * x.itemsize
    step = _chunk_for_threads(n, per_sample)
    finite = [True] * -(-n // step)

    def chunk(s0, s1):
        plan = _plan(geo, s1 - s0, c, o, x.dtype)
        v = plan.input_transform(x[s0:s1])
        m, m5, ops, out, copies = plan.forward_parts()
        np.matmul(u, v, out=m)                                    # 16, ns, O, R*S
        if b is not None:
            np.add(m5, b, out=m5)   # position (1, 1) enters each of the four outputs once
        for op in ops:
            op()
        finite[s0 // step] = bool(np.isfinite(out.sum()))
        # into place: copies (a ufunc writing into these strided views is 3x slower)
        ys = y[s0:s1]
        for a, e, src in copies:
            ys[:, :, a::2, e::2] = src
    parallel_samples(chunk, n, max(per_sample // x.itemsize, 1), step)
    return y if all(finite) else None


def backward(x, w, g, padding, need_input=True, need_weight=True):
    """(input gradient, weight gradient) of the convolution of x with w given the output
    gradient g (N, O, Ho, Wo); each None unless needed. None where a result is not all
    finite."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    geo = _geometry(h, wd, padding)
    u = _weight_transform(w) * _DM_SIGNS.astype(x.dtype)[:, None, None]
    ut = u.transpose(0, 2, 1)[:, None]                            # 16, 1, C, O
    gi = np.empty(x.shape, dtype=x.dtype) if need_input else None
    per_sample = (28 * c + 24 * o) * geo.plane * x.itemsize
    step = _chunk_for_threads(n, per_sample)
    # each sample's dM V^T (16, O, C), summed over the samples in order at the end
    slots = np.empty((16, n, o, c), dtype=x.dtype) if need_weight else None
    finite = [True] * -(-n // step)

    def chunk(s0, s1):
        ns = s1 - s0
        plan = _plan(geo, ns, c, o, x.dtype)
        v = plan.input_transform(x[s0:s1])
        dm, dm_in, dm_ops, adjoint_ops, dp, dp_out = plan.backward_parts()
        gs = g[s0:s1]
        for dst, a, e in dm_in:
            dst[...] = gs[:, :, a::2, e::2]
        for op in dm_ops:
            op()
        ok = True
        if need_weight:
            # (checked once summed: a non-finite product makes the sum non-finite)
            np.matmul(dm, v.transpose(0, 1, 3, 2), out=slots[:, s0:s1])
        if need_input:
            np.matmul(ut, dm, out=v)        # dV, in V's buffer: 16, ns, C, R*S
            for op in adjoint_ops:
                op()
            ok = ok and np.isfinite(dp.sum())     # (dp: the gradient's planes)
            xs = gi[s0:s1]
            for src, i0, j0 in dp_out:
                xs[:, :, i0::2, j0::2] = src
        finite[s0 // step] = bool(ok)
    parallel_samples(chunk, n, max(per_sample // x.itemsize, 1), step)
    if not all(finite):
        return None
    if not need_weight:
        return gi, None
    du = slots.sum(axis=1) * _DM_SIGNS[:, None, None]
    gw = np.einsum("ik,ijoc,jl->ockl", _G, du.reshape(4, 4, o, c).astype(np.float64), _G,
                   optimize=True)
    gw = gw.astype(x.dtype)
    if not np.isfinite(gw.sum()):
        return None
    return gi, gw


# the dM that backward's chunks make, position by position, is this sign times the true dM
# (the GEMMs take the sign: U's rows in dV = U^T dM, and dU's at the end)
_DM_SIGNS = np.array([[1, 1, 1, -1]] * 3 + [[-1, -1, -1, 1]], dtype=np.float64).reshape(16)
