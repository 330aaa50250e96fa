"""torch 2.13's CPU sampling recipes: how each distribution turns the generator's 32-bit words
into values, reproduced bit for bit (found by experiment against torch; see
tests/test_random_streams.py). Each function takes an ember._generator.Generator and returns a
NumPy array in the logical (C) order of the output (for a strided output, place it with
fill_order); each docstring says which words it uses and how.

Exact except: von_mises in float64 (stream right, values to ~1e-14: torch's float64 cos is
Intel MKL's vdCos, whose algorithm is not published). (The callers add their own: Wishart's
matrix products; InverseGamma's pow is torch's, ember/_sleef_math.py.)
"""
import math

import numpy as np
import ml_dtypes

from ._dtype import as_complex32 as _as_complex32, as_complex64 as _as_complex64

# draws of up to this many words are served from a block of words drawn ahead (_generator.py);
# the recipes take a Python-level path for them
SMALL = 64

M24 = np.uint64((1 << 24) - 1)
M24_32 = np.uint32((1 << 24) - 1)
M53 = np.uint64((1 << 53) - 1)


# ----------------------------------------------------------------------------- exact fma
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_prod(a, b):
    p = a * b
    c = 134217729.0                      # 2**27 + 1: Veltkamp's split
    ah = a * c
    ah = ah - (ah - a)
    al = a - ah
    bh = b * c
    bh = bh - (bh - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _add_round_odd(a, b):
    """a + b rounded to float64 'to odd': exact, or the odd one of its two neighbours."""
    s, e = _two_sum(a, b)
    even = (s.view(np.int64) & 1) == 0
    bump = (e != 0) & even
    if bump.any():
        s = s.copy()
        s[bump] = np.nextafter(s[bump], np.where(e[bump] > 0, np.inf, -np.inf))
    return s


def fma64(a, b, c):
    """Correctly rounded a * b + c in float64 (Boldo and Melquiond's emulation)."""
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    a, b, c = np.broadcast_arrays(a, b, c)
    uh, ul = _two_prod(a, b)
    th, tl = _two_sum(c, uh)
    return th + _add_round_odd(tl, ul)


def fma32(a, b, c):
    """Correctly rounded a * b + c in float32. The product of two float32 numbers is exact in
    float64, so the float64 sum rounds once; rounding that to float32 again is right unless
    the float64 sum was inexact and landed exactly halfway between two float32 numbers (its
    low 29 bits 1000...0), or is below float32's normal range: those few are redone exactly."""
    a, b, c = (np.asarray(v, np.float32) for v in (a, b, c))
    s = np.multiply(a, b, dtype=np.float64)
    s += c
    bits = s.view(np.uint64) & LOW29
    risky = bits == HALF29
    risky |= np.abs(s) < 2.0 ** -125
    if risky.any():
        a, b, c = np.broadcast_arrays(a, b, c)
        s[risky] = _add_round_odd(a[risky].astype(np.float64) * b[risky],
                                  c[risky].astype(np.float64))
    return s.astype(np.float32)


LOW29 = np.uint64((1 << 29) - 1)
HALF29 = np.uint64(1 << 28)


# ----------------------------------------------------------------------------- helpers
class _Libm:
    """A C library function over a float64 array, as torch calls it one element at a time.
    NumPy's own version is used where it gives the C library's bits (checked once, on first
    use, against Python's math over a sample of the domain: NumPy's float64 cos and sin call
    the C library, its log, log1p, tan and exp are SIMD versions that round differently);
    otherwise Python's math function is mapped over the elements."""

    def __init__(self, math_fn, np_fn, low, high):
        self.math_fn, self.np_fn, self.domain = math_fn, np_fn, (low, high)
        self.fast = None

    def _mapped(self, x):
        x = np.asarray(x, np.float64)
        return np.fromiter(map(self.math_fn, x.ravel().tolist()), np.float64,
                           x.size).reshape(x.shape)

    def __call__(self, x):
        if self.fast is None:
            probe = np.linspace(*self.domain, 20011)[1:-1]
            self.fast = bool(np.array_equal(self.np_fn(probe), self._mapped(probe)))
        if self.fast:
            return self.np_fn(np.asarray(x, np.float64))
        return self._mapped(x)


_log = _Libm(math.log, np.log, 0.0, 1.0)
_log1p = _Libm(math.log1p, np.log1p, -1.0, 0.0)
_cos = _Libm(math.cos, np.cos, 0.0, 2 * np.pi)
_sin = _Libm(math.sin, np.sin, 0.0, 2 * np.pi)
_tan = _Libm(math.tan, np.tan, -np.pi / 2, np.pi / 2)
_exp = _Libm(math.exp, np.exp, -20.0, 20.0)


def _np_dtype(dtype):
    return dtype.np if hasattr(dtype, "np") else np.dtype(dtype)


def _count(shape):
    return math.prod(shape) if isinstance(shape, tuple) else int(shape)


def fill_order(shape, strides):
    """The logical (C-order) flat indices of a strided output in the order torch fills them:
    memory order, i.e. by increasing storage offset (the same for every distribution). Put a
    recipe's flat values v into the output as out.reshape(-1)[fill_order(...)] = v."""
    idx = np.indices(shape).reshape(len(shape), -1)
    offsets = (idx * np.asarray(strides, np.int64).reshape(-1, 1)).sum(0) if len(shape) else \
        np.zeros(1, np.int64)
    return np.argsort(offsets, kind="stable")


# (the in-place steps below matter for speed: fresh large temporaries cost page faults)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
SCALE24 = np.float32(2.0 ** -24)


def uniform01_float(gen, n):
    """n float32 uniforms in [0, 1) from one word each: its low 24 bits * 2**-24. A large n
    goes a block at a time (the words' temporaries stay in cache), a small one comes from the
    generator's block of uniforms."""
    if n <= SMALL:
        return gen.uniform_floats(n)
    if n <= UNIFORM_BLOCK:
        w = gen.words32(n)
        w &= M24_32
        out = w.astype(F32)
        out *= SCALE24
        return out
    out = np.empty(n, F32)
    for i in range(0, n, UNIFORM_BLOCK):
        w = gen.words32(min(UNIFORM_BLOCK, n - i))
        w &= M24_32
        part = out[i:i + len(w)]
        part[...] = w
        part *= SCALE24
    return out


UNIFORM_BLOCK = 1 << 16


M21 = np.uint64((1 << 21) - 1)


def uniform01_double(gen, n):
    """n float64 uniforms in [0, 1) from one 64-bit draw each (first word high): its low 53
    bits * 2**-53."""
    w = gen.words(2 * n).reshape(n, 2)
    bits = w[:, 0] & M21
    bits <<= np.uint64(32)
    bits |= w[:, 1]
    out = bits.astype(np.float64)
    out *= 2.0 ** -53
    return out


# ----------------------------------------------------------------------------- uniform_
def uniform(gen, shape, dtype, low=0.0, high=1.0):
    """Tensor.uniform_(low, high) / torch.rand for a floating dtype."""
    n = _count(shape)
    npd = _np_dtype(dtype)
    if low == 0 and high == 1:               # fma(x, 1, 0) is x: torch.rand's fast case
        if npd is F32:
            return uniform01_float(gen, n).reshape(shape)
        out = uniform01_double(gen, n) if npd == F64 else uniform01_float(gen, n)
        if npd != F64:
            out = out.astype(npd)
            out[out == 1] = 0
    elif npd == np.float64:
        out = fma64(uniform01_double(gen, n), float(high) - float(low), float(low))
    else:
        lo, hi = np.float32(low), np.float32(high)
        out = fma32(uniform01_float(gen, n), hi - lo, lo)
        if npd != np.float32:
            out = out.astype(npd)
        to = np.asarray(high).astype(npd)
        out = np.where(out == to, np.asarray(low).astype(npd), out)
    return out.reshape(shape)


def rand_plain(gen, shape, npd):
    """torch.rand(*sizes) in the default float dtype (float32, float64 or half): uniform()
    with its checks skipped, for the quick path of small draws."""
    n = 1
    for k in shape:
        n *= k
    if npd is F32 and n <= SMALL:
        out = gen.uniform_floats(n)
    elif npd is F32:
        out = uniform01_float(gen, n)
    else:
        out = uniform(gen, (n,), npd)
    return out.reshape(shape) if len(shape) != 1 else out


# ----------------------------------------------------------------------------- normal_
def normal_scalar(gen, n, as_list=False):
    """n standard normals from torch's one-at-a-time sampler (float64 Box-Muller).

    Each pair takes two float64 uniforms u1, u2; r = sqrt(-2 log(1 - u2)); the value is
    r cos(2 pi u1) and r sin(2 pi u1) is kept in the generator for the next call. The C
    library's log1p/cos/sin (not NumPy's SIMD versions) give torch's bits. as_list: return a
    list of Python floats (for small n)."""
    out = [] if as_list else np.empty(n, np.float64)
    i = 0
    if n and gen._normal is not None:
        out[:1] = [gen._normal]
        gen._normal = None
        i = 1
    pairs = (n - i + 1) // 2
    if pairs <= 8:                      # small draws: plain Python floats are quickest
        w = gen.word_list(4 * pairs)
        both = []
        for k in range(0, 4 * pairs, 4):
            u1 = (((w[k] & 0x1FFFFF) << 32) | w[k + 1]) * 2.0 ** -53
            u2 = (((w[k + 2] & 0x1FFFFF) << 32) | w[k + 3]) * 2.0 ** -53
            r = math.sqrt(-2.0 * math.log1p(-u2))
            theta = 2.0 * math.pi * u1
            both += (r * math.cos(theta), r * math.sin(theta))
    else:
        u = uniform01_double(gen, 2 * pairs).reshape(pairs, 2)
        r = np.sqrt(-2.0 * _log1p(-u[:, 1]))
        theta = 2.0 * np.pi * u[:, 0]
        both = np.stack([r * _cos(theta), r * _sin(theta)], 1).reshape(-1)
    out[i:] = both[:n - i]
    if pairs and (n - i) % 2:
        gen._normal = float(both[-1])
    return out


def _box_muller_blocks(u, f64):
    """torch's 16-wide Box-Muller, in place over rows of 16 uniforms: u1 = 1 - u[:8],
    u2 = u[8:], r = sqrt(-2 log u1), theta = 2 pi u2, giving r cos(theta) then r sin(theta).
    float64 uses the C library's log/cos/sin (not NumPy's SIMD versions); float32 torch's
    vectorised single-precision log and sincos (_log_f32, _sincos_f32)."""
    if f64:
        r = _log(1.0 - u[:, :8])
        th = 2.0 * np.pi * u[:, 8:]
        r *= -2
        np.sqrt(r, out=r)
        c, s = _cos(th), _sin(th)
    else:
        r = _log_f32(np.float32(1) - u[:, :8])
        r *= np.float32(-2)
        np.sqrt(r, out=r)
        th = u[:, 8:] * np.float32(2 * np.pi)
        s, c = _sincos_f32(th)
    c *= r
    u[:, :8] = c
    s *= r
    u[:, 8:] = s
    return u


# torch's float32 normals (16 or more contiguous elements) come from a vectorised logf and
# sincosf of the Cephes kind (range reduction, then short polynomials), evaluated in float32
# with some multiply-adds fused. Which ones are fused was found by experiment: the variants
# were compared with torch's randn over millions of values, and the few inputs where the
# remaining variants disagree were fed to torch through a crafted generator state
# (tests/test_random_streams.py). A fused a * b + c is done as float64 a * b (exact) + c,
# rounded to float32: double rounding could in principle differ from fma's single rounding,
# but over all 2**24 inputs each function can get here (u1 = 1 - k 2**-24, theta =
# float32(2 pi) k 2**-24) the results equal those with an exact fma (fma32), checked once.
# Speed: each fused step costs four NumPy passes (widen, multiply, add, round back), and the
# two functions take 16 such steps besides ~40 plain passes: about 8x torch's time for
# randn(1e6), where torch's AVX kernel does each step in one instruction. (Fused steps whose
# product is exact in float32 are done as a float32 product and sum; the rewrite was checked
# equal to the step-by-step version over all 2**24 inputs of each function.)
_LOG_POLY = tuple(np.float32(c) for c in (
    7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
    -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1))
_F32 = np.float32


class _Fused:
    """float32 a * b + c with one float64 rounding, then float32's (see above), written into
    a float32 array. Two float64 scratch arrays are reused for every step, and float32 array
    operands are widened into them first (NumPy's mixed-type loops are several times slower)."""

    def __init__(self, shape):
        self.tmp = np.empty(shape, np.float64)
        self.wide = np.empty(shape, np.float64)

    def _widened(self, v):
        if isinstance(v, np.ndarray) and v.dtype != np.float64:
            np.copyto(self.wide, v)
            return self.wide
        return v

    def __call__(self, a, b, c, out=None):
        tmp = self.tmp
        np.copyto(tmp, a)
        tmp *= self._widened(b)
        tmp += self._widened(c)
        if out is None:
            out = np.empty(tmp.shape, _F32)
        np.copyto(out, tmp, casting="same_kind")
        return out


def _log_f32(x):
    """log of float32 x in (0, 1]: x = m * 2**e with m in [sqrt(1/2), sqrt(2)); with t = m - 1,
    log x = t + t**3 P(t) - t**2 / 2 + e log 2, log 2 split in a short and a tiny part.
    (A fused step whose product is exact in float32, z * -0.5 and e * 0.693359375, is the
    float32 product and sum: one rounding either way.)"""
    fma = _Fused(x.shape)
    bits = x.view(np.int32)
    e = (bits >> 23).astype(_F32)
    e -= _F32(126)
    m = (bits & np.int32(0x007FFFFF) | np.int32(0x3F000000)).view(_F32)  # m in [1/2, 1)
    low = m < _F32(0.707106781186547524)
    e -= low                                     # (m doubled where it is below sqrt(1/2))
    t = m - _F32(1)
    m *= low
    t += m
    z = t * t
    t64 = t.astype(np.float64)                   # (widened once for the polynomial's steps)
    y = fma(t64, _LOG_POLY[0], _LOG_POLY[1])
    for coef in _LOG_POLY[2:]:
        fma(y, t64, coef, out=y)
    y *= t
    fma(y, z.astype(np.float64), e * _F32(-2.12194440e-4), out=y)
    m = np.multiply(z, _F32(-0.5), out=m)
    y += m
    t += y
    e *= _F32(0.693359375)
    t += e
    return t


_SIN_POLY = tuple(np.float32(c) for c in (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1))
_COS_POLY = tuple(np.float32(c) for c in (2.443315711809948e-5, -1.388731625493765e-3,
                                          4.166664568298827e-2))


def _sincos_f32(x_in):
    """(sin x, cos x) of float32 x >= 0: j = the even integer nearest to x / (pi/4), rounded up
    from truncation; x - j pi/4 (pi/4 in three parts, fused steps) lands in [-pi/4, pi/4],
    where one polynomial gives the sine and another the cosine; j's bits pick which is which
    and the signs."""
    fma = _Fused(x_in.shape)
    j = (x_in * _F32(1.27323954473516)).astype(np.int32)
    j += 1
    j &= ~np.int32(1)
    y = j.astype(_F32)
    # (y is an even integer up to 8: its products with the first two parts of pi/4, of 8
    # and 11 bits, are exact in float32, so those fused steps are a product and a sum)
    x = y * _F32(-0.78515625)
    x += x_in
    p = np.multiply(y, _F32(-2.4187564849853515625e-4))
    x += p
    fma(y, _F32(-3.77489497744594108e-8), x, out=x)
    z = x * x
    z64 = z.astype(np.float64)                   # (widened once for the polynomials' steps)
    pc = fma(z64, _COS_POLY[0], _COS_POLY[1])
    fma(pc, z64, _COS_POLY[2], out=pc)
    pc *= z
    np.multiply(z, _F32(-0.5), out=p)
    fma(pc, z64, p, out=pc)
    pc += _F32(1)
    ps = fma(z64, _SIN_POLY[0], _SIN_POLY[1])
    fma(ps, z64, _SIN_POLY[2], out=ps)
    ps *= z
    fma(ps, x.astype(np.float64), x, out=ps)
    # j's bit 1 swaps the two polynomials; bit 2 flips the sine's sign, and the cosine's
    # when bit 2 of j - 2 is clear (selected and flipped with bit operations: NumPy's where
    # is many times slower here)
    pick = (j & 2) << 30 >> 31                   # all ones where the two swap
    pcb, psb = pc.view(np.int32), ps.view(np.int32)
    sin = (pcb & pick) | (psb & ~pick)
    cos = (psb & pick) | (pcb & ~pick)
    sin ^= (j & 4) << 29
    cos ^= (~(j - 2) & 4) << 29
    return sin.view(_F32), cos.view(_F32)


BLOCK = 1 << 14      # values per step of the large fills (their temporaries stay in cache)


def _uniform_rows_into(gen, out, f64):
    """Fill out (a contiguous float array, a multiple of 16 long) with uniforms and turn
    them into normals 16 at a time, a block at a time (the same words in the same order as
    all at once)."""
    for i in range(0, len(out), BLOCK):
        part = out[i:i + BLOCK]
        if f64:
            part[:] = uniform01_double(gen, len(part))
        else:
            w = gen.words32(len(part))
            w &= M24_32
            part[:] = w
            part *= np.float32(2.0 ** -24)
        _box_muller_blocks(part.reshape(-1, 16), f64)


def normal_fill(gen, n, f64):
    """torch's path for 16 or more contiguous elements: n uniforms (float64 or float32 ones),
    turned into normals 16 at a time in place; a ragged tail redraws the last 16 positions
    (overlapping the previous block) and transforms them again."""
    u = np.empty(n, np.float64 if f64 else np.float32)
    full = n // 16 * 16
    _uniform_rows_into(gen, u[:full], f64)
    if n % 16:
        gen.words((n - full) * (2 if f64 else 1))    # drawn as uniforms, then overwritten
        tail = uniform01_double(gen, 16) if f64 else uniform01_float(gen, 16)
        u[n - 16:] = _box_muller_blocks(tail.reshape(1, 16), f64).reshape(-1)
    return u


def normal_fill_half(gen, n):
    """float16 / bfloat16 with 16 or more elements: float32 uniforms for n rounded up to a
    multiple of 16, transformed 16 at a time; a ragged tail takes the last transformed block's
    16 values as the output's last 16 (overwriting the overlap)."""
    p = -(-n // 16) * 16
    z = np.empty(p, np.float32)
    _uniform_rows_into(gen, z, False)
    out = z[:n].copy()
    out[n - 16:] = z[p - 16:]
    return out


def normal(gen, shape, dtype, mean=0.0, std=1.0, contiguous=True):
    """Tensor.normal_(mean, std) / torch.randn for a floating dtype. Only a contiguous output
    of 16 or more elements takes the 16-wide path; any other output (a transposed or sliced
    view, however large) takes the one-at-a-time sampler, in memory order (fill_order)."""
    n = _count(shape)
    npd = _np_dtype(dtype)
    if n < 16 and std == 1 and (npd is F32 or npd is F64):
        # small draws: fma(z, 1, mean) is z + mean rounded once (z + 0.0 + mean: the same),
        # from the block's values as an array, else in Python floats
        out = gen.normal_array(n, _box_muller_rows, F64 if mean else npd) if n else None
        if out is not None:
            if mean:
                out += float(mean)
                out = out.astype(npd, copy=False)
            return out.reshape(shape)
        z = normals_small(gen, n)
        mean = float(mean)
        return np.array([v + mean for v in z], np.float64).astype(npd).reshape(shape)
    if not contiguous:
        z = normal_scalar(gen, n)
    elif n >= 16 and npd in (np.float16, ml_dtypes.bfloat16):
        z = normal_fill_half(gen, n)
    elif n >= 16:
        z = normal_fill(gen, n, npd == np.float64)
    else:
        z = normal_scalar(gen, n)
    wide = npd == np.float64 or n < 16 or not contiguous
    if float(std) == 1:
        # fma(z, 1, mean) is z + mean rounded once (and turns -0 into +0 when mean is 0)
        z += float(mean) if wide else np.float32(mean)
        out = _cast(z, dtype, (n,)) if wide else z.astype(npd, copy=False)
    elif wide:
        out = _cast(fma64(z, float(std), float(mean)), dtype, (n,))
    else:
        out = fma32(z, np.float32(std), np.float32(mean)).astype(npd, copy=False)
    return out.reshape(shape)


def randn_plain(gen, shape, npd):
    """torch.randn(*sizes) in the default float dtype: normal() with its checks skipped; a
    small float32/float64 draw takes the scalar sampler's Python floats straight."""
    if len(shape) == 1:
        n = shape[0]
    else:
        n = 1
        for k in shape:
            n *= k
    if n >= 16 or not (npd is F32 or npd is F64):
        return normal(gen, shape, npd)
    if n:                                # the quick way: the block's values as an array
        out = gen.normal_array(n, _box_muller_rows, npd)
        if out is not None:
            return out if len(shape) == 1 else out.reshape(shape)
    z = normals_small(gen, n)
    if 0.0 in z:                         # (fma(z, 1, 0) turns -0 into +0)
        z = [v + 0.0 for v in z]
    out = np.array(z, npd)
    return out.reshape(shape) if len(shape) != 1 else out


def _box_muller_rows(w):
    """The scalar sampler's pairs over rows of 4 words (two float64 uniforms u1, u2):
    r cos(2 pi u1), r sin(2 pi u1) with r = sqrt(-2 log1p(-u2)), flat in row order."""
    u = (w[:, 0::2] & M21) << np.uint64(32)          # (u1 and u2 together: columns 0, 1)
    u |= w[:, 1::2]
    u = u.astype(np.float64)
    u *= 2.0 ** -53
    r = _log1p(-u[:, 1])
    r *= -2.0
    np.sqrt(r, out=r)
    theta = 2.0 * np.pi * u[:, 0]
    out = np.empty((len(w), 2))
    np.multiply(r, _cos(theta), out=out[:, 0])
    np.multiply(r, _sin(theta), out=out[:, 1])
    return out.reshape(-1)


def normals_small(gen, n):
    """normal_scalar(gen, n) as a list, for a few: the cached normal first, then Box-Muller
    pairs in Python floats, the last sine kept when n leaves one over."""
    out = []
    if n and gen._normal is not None:
        out.append(gen._normal)
        gen._normal = None
    pairs = (n - len(out) + 1) // 2
    block = gen.normal_pairs(pairs, _box_muller_rows)
    if block is not None:
        out += block
        if len(out) > n:
            gen._normal = out.pop()
        return out
    w = gen.word_list(4 * pairs)
    log1p, sqrt, cos, sin = math.log1p, math.sqrt, math.cos, math.sin
    for k in range(0, 4 * pairs, 4):
        u1 = (((w[k] & 0x1FFFFF) << 32) | w[k + 1]) * 2.0 ** -53
        u2 = (((w[k + 2] & 0x1FFFFF) << 32) | w[k + 3]) * 2.0 ** -53
        r = sqrt(-2.0 * log1p(-u2))
        theta = 2.0 * math.pi * u1
        out.append(r * cos(theta))
        out.append(r * sin(theta))
    if len(out) > n:
        gen._normal = out.pop()
    return out


# ----------------------------------------------------------------------------- random_ / randint
WIDE_RANGE = 2 ** 28     # ranges from here on take 64-bit draws


def _float_bounds(npd, low, high):
    """For a floating dtype, bounds the dtype can't hold are pulled inwards first: when
    high - 1 rounds (in the dtype) to high or above, high becomes the representable value just
    below that rounding; when low + 1 rounds below low, low becomes the one just above it.
    The rounded value is read back as an int64 the way x86 converts: one at or past 2**63 (or
    inf) reads as -2**63, so a high whose high - 1 rounds up to 2**63 is left as it is."""
    top = _from_int(np.asarray(high - 1, np.int64), npd)
    if _as_int64(top) >= high:
        high = int(np.nextafter(top, np.asarray(-np.inf, npd)).astype(np.float64))
    bottom = _from_int(np.asarray(low + 1, np.int64), npd)
    if _as_int64(bottom) < low:
        low = int(np.nextafter(bottom, np.asarray(np.inf, npd)).astype(np.float64))
    return low, high


def _as_int64(x):
    """A floating scalar to int64 as x86's truncating conversion does: out of range (or not
    a number) gives -2**63."""
    v = float(np.asarray(x).astype(np.float64))
    return int(v) if math.isfinite(v) and -2.0 ** 63 <= v < 2.0 ** 63 else -2 ** 63


def _from_int(vals, npd):
    """int64 values to the dtype; half precision via float32 (as c10 builds them)."""
    if npd in (np.float16, ml_dtypes.bfloat16):
        vals = vals.astype(np.float32)
    return vals.astype(npd)


def random_range(gen, shape, dtype, low, high):
    """Tensor.random_(low, high) / torch.randint: one word modulo the range, or one 64-bit
    draw modulo the range when the range is 2**28 or wider; then low is added (and the sum
    rounded to the dtype). Floating dtypes first pull unrepresentable bounds inwards."""
    n = _count(shape)
    npd = _np_dtype(dtype)
    low, high = int(low), int(high)
    if npd.kind == "f" or npd == ml_dtypes.bfloat16:
        low, high = _float_bounds(npd, low, high)
    span = high - low
    draws = gen.words64(n) if span >= WIDE_RANGE else gen.words(n)
    vals = (draws % np.uint64(span)).astype(np.int64) + np.int64(low)
    return _from_int(vals, npd).reshape(shape)


def randint_int64(gen, shape, low, high):
    """random_range for int64 with low < high (the plain randint call's quick path)."""
    n = 1
    for k in shape:
        n *= k
    span = high - low
    if n <= SMALL and span < WIDE_RANGE:          # a few: in Python ints
        vals = np.array([w % span + low for w in gen.word_list(n)], np.int64)
    else:
        draws = gen.words64(n) if span >= WIDE_RANGE else gen.words(n)
        vals = (draws % np.uint64(span)).astype(np.int64) + np.int64(low)
    return vals.reshape(shape) if len(shape) != 1 else vals


def _random_top(npd):
    """random_()'s exclusive upper end: the dtype's largest value + 1, or for floating dtypes
    2**mantissa_digits + 1 (every integer in [0, 2**digits] is exact)."""
    if npd == np.bool_:
        return 2
    if npd.kind in "iu":
        return int(np.iinfo(npd).max) + 1
    return 2 ** {np.dtype(np.float64): 53, np.dtype(np.float32): 24,
                 np.dtype(np.float16): 11}.get(npd, 8) + 1


def random_full(gen, shape, dtype):
    """Tensor.random_() with no bounds: one word (a 64-bit draw for int64 and float64) modulo
    the dtype's top."""
    npd = _np_dtype(dtype)
    n = _count(shape)
    draws = gen.words64(n) if npd in (np.int64, np.float64) else gen.words(n)
    vals = (draws % np.uint64(_random_top(npd))).astype(np.int64)
    return _from_int(vals, npd).reshape(shape)


def random_from(gen, shape, dtype, low):
    """Tensor.random_(low, None): [low, the dtype's top)."""
    return random_range(gen, shape, dtype, low, _random_top(_np_dtype(dtype)))


# ----------------------------------------------------------------------------- randperm
RANDPERM_WIDE = (2 ** 32 - 1) // 20     # 214748364: torch's shuffle changes here
RANDPERM_CHUNK = 1 << 22                # draws per step of the large shuffle


def randperm(gen, n, dtype):
    """torch.randperm(n). Below RANDPERM_WIDE: a forward Fisher-Yates shuffle of 0..n-1; step
    i swaps position i with j[i] = i + word % (n - i), one word per step for i < n - 1
    (checked up to n = 5e7). From RANDPERM_WIDE on: the inside-out shuffle
    (randperm_inside_out), one 64-bit draw per element (found by experiment at
    n = RANDPERM_WIDE: the positions of the last values and the stream position afterwards
    are torch's; tests/test_random_streams.py)."""
    n = int(n)
    npd = _np_dtype(dtype)
    if n <= 1:
        return np.arange(n, dtype=np.int64).astype(npd)
    if n >= RANDPERM_WIDE:
        return randperm_inside_out(gen, n).astype(npd, copy=False)
    draws = gen.words(n - 1)
    offs = draws % np.arange(n, 1, -1, dtype=np.uint64)
    if n <= 64:                          # a short loop is quicker than the array steps
        perm = list(range(n))
        for i, z in enumerate(offs.tolist()):
            perm[i], perm[i + z] = perm[i + z], perm[i]
        return np.array(perm, np.int64).astype(npd, copy=False)
    j = np.arange(n, dtype=np.int64)
    j[:-1] += offs.astype(np.int64)
    return _apply_swaps(j).astype(npd, copy=False)


def randperm_inside_out(gen, n):
    """The inside-out Fisher-Yates shuffle: for i = 0 .. n - 1, z = (64-bit draw) % (i + 1),
    then out[i] = out[z] and out[z] = i. The draws go a chunk at a time straight into the
    mirrored targets of inside_out_from_offsets (memory: n is 214748364 or more here)."""
    it = np.int32 if n < 2 ** 31 else np.int64
    j = np.empty(n, it)
    top = np.uint64(n - 1)
    for s in range(0, n, RANDPERM_CHUNK):
        k = min(RANDPERM_CHUNK, n - s)
        d = gen.words64(k)
        d %= np.arange(s + 1, s + k + 1, dtype=np.uint64)
        j[n - s - k:n - s] = (top - d)[::-1]
    return _unmirror(_apply_swaps(j))


def inside_out_from_offsets(z):
    """The inside-out shuffle's result for offsets z (z[i] <= i), without the sequential loop.

    Its steps swap positions i and z[i] of the identity, in order of i. The inverse
    permutation is the same swaps applied in the reverse order, and read with positions
    (and values) mirrored, p -> n - 1 - p, that is a forward shuffle: step q swaps q with
    n - 1 - z[n - 1 - q] >= q, which _apply_swaps does. Invert and mirror back."""
    n = len(z)
    j = z[::-1] * -1                       # (a fresh array: z is left as it is)
    j += n - 1
    return _unmirror(_apply_swaps(j))


def _unmirror(s):
    """The permutation whose inverse is p -> n - 1 - s[n - 1 - p] (int64)."""
    n = len(s)
    inv = s[::-1] * -1
    inv += n - 1
    out = np.empty(n, np.int64)
    for c in range(0, n, RANDPERM_CHUNK):
        out[inv[c:c + RANDPERM_CHUNK]] = np.arange(c, min(c + RANDPERM_CHUNK, n))
    return out


def _apply_swaps(j):
    """The result of swapping position i with j[i] (j[i] >= i) for i = 0, 1, ..., n - 1 in
    turn on 0..n-1, without the sequential loop.

    Position i is final after step i (later steps touch only later positions), so out[i] is
    what position j[i] holds just before step i. A position p >= i holds p itself until some
    step k < i targets it (j[k] = p), and then what position k held just before step k: call
    that A[k]. So out[i] = A[k] for the last k < i with j[k] = j[i], else j[i]; and A[k]
    likewise = A[k'] for the last k' < k with j[k'] = k, else k: A[k] is the end of a chain of
    such k', found by pointer doubling. (Temporaries are freed as soon as they are done
    with, and built a chunk at a time: randperm reaches n = 2**28 and more.)"""
    n = len(j)
    it = np.int32 if n < 2 ** 31 else np.int64     # (smaller indices: faster gathers)
    # steps grouped by target, in step order within a group: sort the unique keys j * n + k
    key = j.astype(np.int64)
    key *= n
    for c in range(0, n, RANDPERM_CHUNK):
        key[c:c + RANDPERM_CHUNK] += np.arange(c, min(c + RANDPERM_CHUNK, n))
    key.sort()
    step = np.empty(n, it)
    for c in range(0, n, RANDPERM_CHUNK):
        step[c:c + RANDPERM_CHUNK] = key[c:c + RANDPERM_CHUNK] % n
    key //= n
    tgt = key.astype(it)
    del key
    j = j.astype(it, copy=False)
    same = tgt[1:] == tgt[:-1]
    pred = np.full(n, -1, it)          # the previous step with the same target
    pred[step[1:]] = np.where(same, step[:-1], -1)
    # prev[p]: the last step k < p targeting position p (a step p targeting itself is the
    # last of its group, so its predecessor is that step)
    ends = np.append(~same, True)
    del same
    prev = np.full(n, -1, it)
    prev[tgt[ends]] = step[ends]
    del tgt, step, ends
    idx = np.arange(n, dtype=it)
    self_swap = j == idx
    prev[self_swap] = pred[self_swap]
    del self_swap
    # A[k]: follow prev to the chain's end, doubling; only the unfinished entries are redone
    linked = prev >= 0
    a = np.where(linked, prev, idx)
    del prev, idx
    todo = np.flatnonzero(linked).astype(it)
    del linked
    while todo.size:
        nxt = a[a[todo]]
        moved = nxt != a[todo]
        a[todo] = nxt
        todo = todo[moved]
    return np.where(pred >= 0, a[pred], j)


# ----------------------------------------------------------------------------- bernoulli
def bernoulli_scalar(gen, shape, p):
    """Tensor.bernoulli_(p) with a number p (also dropout's mask): one float64 uniform per
    element (a 64-bit draw), 1 where it is below p. Returns a bool array."""
    p = float(p)
    if not 0.0 <= p <= 1.0:
        return (uniform01_double(gen, _count(shape)) < p).reshape(shape)
    # u = bits * 2**-53 < p  <=>  bits < p * 2**53 (a power-of-two scaling: exact)  <=>
    # bits < ceil(p * 2**53): the same mask without the float64 conversion (half the time)
    n = _count(shape)
    w = gen.words(2 * n).reshape(n, 2)
    bits = w[:, 0] & M21
    bits <<= np.uint64(32)
    bits |= w[:, 1]
    return (bits < np.uint64(math.ceil(p * 2.0 ** 53))).reshape(shape)


def bernoulli_tensor(gen, p):
    """torch.bernoulli(p) / Tensor.bernoulli_(p_tensor): p already broadcast to the output's
    shape. One uniform per element in p's own precision (float64 p: 64-bit draws; float32 and
    half p: single words as float32), 1 where it is below p. Returns a bool array."""
    p = np.asarray(p)
    n = p.size
    if p.dtype == np.float64:
        u = uniform01_double(gen, n)
    else:
        u = uniform01_float(gen, n)
        p = p.astype(np.float32)
    return (u < p.reshape(-1)).reshape(p.shape)


def normal_tensors(gen, shape, dtype, mean, std):
    """torch.normal(mean, std) with a tensor mean and/or std (NumPy arrays or numbers,
    broadcastable to `shape`). With a tensor std: normal_(0, 1) on the output, then
    z * std + mean in the output dtype (not fused). With a number std (tensor mean):
    normal_(0, std), then + mean."""
    npd = _np_dtype(dtype)
    if npd.kind == "c" or npd.names:
        return _normal_tensors_complex(gen, shape, npd, mean, std)
    mean = np.asarray(mean).astype(npd)
    if np.ndim(std) == 0:
        return (normal(gen, shape, dtype, 0.0, float(std)) + mean).astype(npd)
    return (normal(gen, shape, dtype) * np.asarray(std).astype(npd) + mean).astype(npd)


def _normal_tensors_complex(gen, shape, npd, mean, std):
    """normal_tensors with a complex mean (std is real): the complex normal_(0, std) for a
    number std, else normal_(0, 1) times std; then + mean, each step rounded to the dtype
    (complex32's in complex64, rounded back to float16 pairs)."""
    half = bool(npd.names)
    wide = np.complex64 if half else npd

    def rounded(a):
        return _as_complex64(_as_complex32(a)) if half else a.astype(wide)
    scalar_std = np.ndim(std) == 0
    z = normal_complex(gen, shape, npd, 0.0, float(std) if scalar_std else 1.0)
    z = _as_complex64(z) if half else z
    if not scalar_std:
        z = rounded(z * np.asarray(std).astype(np.float32 if half else z.real.dtype))
    mean = np.asarray(mean)
    z = rounded(z + (_as_complex64(mean) if mean.dtype.names else mean.astype(wide)))
    return _as_complex32(z) if half else z


# ----------------------------------------------------------------------------- other distributions
# Each takes one float64 uniform u (a 64-bit draw) per element, computes in float64 with the C
# library's functions, and rounds once to the output dtype.
def _cast(x, dtype, shape):
    """float64 results to the dtype; half precision goes through float32 (as c10's Half and
    BFloat16 are built from a double), which rounds twice."""
    npd = _np_dtype(dtype)
    x = np.asarray(x, np.float64)
    if npd in (np.float16, ml_dtypes.bfloat16):
        x = x.astype(np.float32)
    return x.astype(npd).reshape(shape)


def exponential(gen, shape, dtype, lambd=1.0):
    """Tensor.exponential_(lambd): (-1 / lambd) * log1p(-u) (the reciprocal first)."""
    u = uniform01_double(gen, _count(shape))
    return _cast((-1.0 / float(lambd)) * _log1p(-u), dtype, shape)


def geometric(gen, shape, dtype, p):
    """Tensor.geometric_(p): ceil(log(u) / log(1 - p)) (the number of trials to a success)."""
    u = uniform01_double(gen, _count(shape))
    with np.errstate(divide="ignore"):
        logu = np.where(u > 0, _log(np.where(u > 0, u, 1.0)), -np.inf)
    return _cast(np.ceil(logu / math.log1p(-float(p))), dtype, shape)


def cauchy(gen, shape, dtype, median=0.0, sigma=1.0):
    """Tensor.cauchy_(median, sigma): fma(sigma, tan(pi * (u - 1/2)), median)."""
    u = uniform01_double(gen, _count(shape))
    t = _tan(np.pi * (u - 0.5))
    return _cast(fma64(float(sigma), t, float(median)), dtype, shape)


def log_normal(gen, shape, dtype, mean=1.0, std=2.0):
    """Tensor.log_normal_(mean, std): exp of the scalar normal sampler's fma(z, std, mean), one
    element at a time whatever the size (so the cached second normal is used and left)."""
    n = _count(shape)
    z = fma64(normal_scalar(gen, n), float(std), float(mean))
    return _cast(_exp(z), dtype, shape)


# ----------------------------------------------------------------------------- multinomial
def multinomial(gen, probs, num_samples, replacement=False):
    """torch.multinomial on a 1-D or 2-D array of non-negative weights -> int64 indices.

    Without replacement, or with a single sample: q = exponential_(1) over the weights (in
    their dtype), and the indices of the num_samples largest weights / q, largest first.
    With replacement and more than one sample: per row, the cumulative sums (float32 for
    float32 and half weights, float64 for float64) divided by their total, and for each sample
    one float64 uniform u, rows first; the sample is the first index whose cumulative value
    is >= u."""
    probs = np.asarray(probs)
    rows = probs.reshape(-1, probs.shape[-1])
    k = int(num_samples)
    if rows.shape[0] == 0:                # no rows: nothing drawn
        return np.empty(probs.shape[:-1] + (k,), np.int64)
    if not replacement or k == 1:
        q = exponential(gen, rows.shape, rows.dtype, 1.0)
        order = np.argsort(-(rows / q), axis=1, kind="stable")[:, :k]
    else:
        acc = np.float64 if rows.dtype == np.float64 else np.float32
        cdf = np.cumsum(rows.astype(acc), axis=1, dtype=acc)
        cdf = cdf / cdf[:, -1:]
        u = uniform01_double(gen, rows.shape[0] * k).reshape(rows.shape[0], k)
        order = np.stack([np.searchsorted(c, uu.astype(acc), side="left")
                          for c, uu in zip(cdf, u)])
    return order.astype(np.int64).reshape(probs.shape[:-1] + (k,))


# ----------------------------------------------------------------------------- poisson
class _Uniforms:
    """torch's one-at-a-time float64 uniforms (and normals) for the samplers that take a
    varying number of draws per element: taken from a block of words drawn ahead; finish()
    leaves the generator exactly after the words used (the draw-ahead is undone from a
    snapshot) and with the normal cache as torch leaves it."""

    def __init__(self, gen, block=512):
        self.gen, self.block = gen, block
        self.snap = gen.get_state()
        self.cached = gen._normal           # the scalar sampler's second normal, or None
        self.words, self.pos, self.used = [], 0, 0

    def _pair(self):
        if self.pos + 2 > len(self.words):
            self.words = self.words[self.pos:] + self.gen.words(self.block).tolist()
            self.pos = 0
        hi, lo = self.words[self.pos], self.words[self.pos + 1]
        self.pos += 2
        self.used += 2
        return (((hi & 0x1FFFFF) << 32) | lo) * 2.0 ** -53

    def __call__(self):
        """A float64 uniform in [0, 1) (one 64-bit draw)."""
        return self._pair()

    def normal(self):
        """A standard normal from torch's scalar sampler: the cached one if there is one,
        else Box-Muller on two uniforms, caching the sine half."""
        if self.cached is not None:
            z, self.cached = self.cached, None
            return z
        u1, u2 = self._pair(), self._pair()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        self.cached = r * math.sin(theta)
        return r * math.cos(theta)

    def finish(self):
        self.gen.set_state(self.snap)
        self.gen.words(self.used)
        self.gen._normal = self.cached


def _poisson_one(lam, uniform):
    if lam >= 10:
        # transformed rejection with squeeze (Hormann's PTRS)
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = uniform() - 0.5
            v = uniform()
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1)):
                return k
    if lam == 0:
        return 0
    # multiply uniforms until the product drops to exp(-lam) or below
    enlam, x, prod = math.exp(-lam), 0, 1.0
    while True:
        prod *= uniform()
        if prod > enlam:
            x += 1
        else:
            return x


def poisson(gen, rates):
    """torch.poisson(rates): one sample per rate, in order, each using as many float64
    uniforms as its method needs. Returns float64 values (the caller casts)."""
    rates = np.asarray(rates)
    uniform = _Uniforms(gen)
    out = np.array([_poisson_one(float(r), uniform) for r in rates.reshape(-1)], np.float64)
    uniform.finish()
    return out.reshape(rates.shape)


# ----------------------------------------------------------------------------- binomial
# log(k!) - (k + 1/2) log(k + 1) + (k + 1) - log(2 pi)/2 for k < 10 (Stirling's series'
# remainder, as Hormann's BTRS tabulates it); from 10 on its series in 1/(k + 1)
_STIRLING_TAIL = (0.08106146679532726, 0.04134069595540929, 0.02767792568499834,
                  0.02079067210376509, 0.01664469118982119, 0.01387612882307075,
                  0.01189670994589177, 0.01041126526197209, 0.009255462182712733,
                  0.008330563433362871)


def _stirling_tail(k):
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(count, prob, draw):
    """Count the geometric waiting times (ceil(log u / log(1 - p))) that fit in count."""
    logq = math.log1p(-prob)
    total, k = 0.0, 0.0
    while True:
        u = draw()
        total += math.ceil(math.log(u) / logq) if u > 0 else math.inf
        if total > count:
            return k
        k += 1


def _binomial_btrs(count, prob, draw):
    """Hormann's transformed rejection with squeeze (BTRS) for count * prob >= 10."""
    spq = math.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    vr = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * spq
    m = math.floor((count + 1) * prob)
    while True:
        u = draw() - 0.5
        v = draw()
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + c)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= vr:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * math.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= bound:
            return k


def _binomial_one(count, prob, draw):
    if math.isnan(count) or math.isnan(prob):
        return math.nan
    if count <= 0 or prob <= 0:
        return 0.0
    if prob >= 1:
        return count
    flip = prob > 0.5
    p = 1.0 - prob if flip else prob
    k = _binomial_btrs(count, p, draw) if count * p >= 10 else \
        _binomial_inversion(count, p, draw)
    return count - k if flip else k


def binomial(gen, count, prob):
    """torch.binomial(count, prob) (float64 arrays of one shape): per element in order, with
    float64 uniforms: 0 when count or prob is not positive, count when prob >= 1; otherwise
    with q the smaller of prob and 1 - prob (counting failures when q = 1 - prob), BTRS when
    count * q >= 10, else geometric inversion."""
    draw = _Uniforms(gen)
    out = np.array([_binomial_one(c, p, draw) for c, p in
                    zip(count.reshape(-1).tolist(), prob.reshape(-1).tolist())], np.float64)
    draw.finish()
    return out.reshape(count.shape)


# ----------------------------------------------------------------------------- gamma
_THIRD_F = float(np.float32(1) / np.float32(3))    # the constants are float literals in torch
_C0331_F = float(np.float32(0.0331))


def _gamma_one(alpha, draw, single):
    """One Gamma(alpha, 1) draw, Marsaglia and Tsang's rejection in float64 (with float32
    constants 1/3 and 0.0331); alpha below 1 is boosted to alpha + 1 and the draw scaled by
    (1 - u)**(1/alpha), u drawn first. `single`: alpha is float32, so alpha + 1, 1/alpha and
    d = alpha - 1/3 are float32 sums (then widened)."""
    f32 = np.float32
    scale = 1.0
    if alpha < 1:
        if alpha == 0:
            return 0.0
        inv = float(f32(1) / f32(alpha)) if single else 1.0 / alpha
        scale *= (1 - draw()) ** inv
        alpha = float(f32(alpha) + f32(1)) if single else alpha + 1.0
    d = float(f32(alpha) - f32(_THIRD_F)) if single else alpha - _THIRD_F
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = draw.normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1 - draw()
        xx = x * x
        if u < 1.0 - _C0331_F * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def standard_gamma(gen, alpha):
    """torch._standard_gamma(alpha) (float32 or float64 array): one draw per element in
    order, each taking the normals and float64 uniforms its rejection loop needs; the result
    rounded to alpha's dtype and kept at or above its smallest normal number."""
    alpha = np.asarray(alpha)
    single = alpha.dtype == np.float32
    draw = _Uniforms(gen)
    out = np.array([_gamma_one(a, draw, single) for a in alpha.reshape(-1).tolist()],
                   np.float64).astype(alpha.dtype)
    draw.finish()
    return np.maximum(out, np.finfo(alpha.dtype).tiny).reshape(alpha.shape)


# ----------------------------------------------------------------------------- von Mises
def von_mises(gen, loc, kappa):
    """VonMises(loc, kappa).sample() as torch draws it, in float64 (loc, kappa: float64 arrays
    of the sample's shape): Best and Fisher's rejection from a wrapped Cauchy envelope
    (r = (1 + rho**2) / (2 rho)), every round drawing 3 float64 uniforms u1, u2, u3 for every
    element (u1's for all, then u2's, then u3's) until each has been accepted once; an element
    accepted again in a later round takes the later angle. Then shifted by loc and wrapped
    into [-pi, pi)."""
    shape = kappa.shape
    n = kappa.size
    with np.errstate(all="ignore"):
        tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
        rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
        r = (1 + rho ** 2) / (2 * rho)
    r = np.where(kappa < 1e-5, 1 / kappa + kappa, r)   # (its Taylor form for a tiny kappa)
    x = np.zeros(shape)
    done = np.zeros(shape, bool)
    while not done.all():
        u1, u2, u3 = uniform01_double(gen, 3 * n).reshape((3,) + shape)
        # (torch's float64 log and acos here give NumPy's bits; its float64 cos is MKL's
        # vdCos, not the C library's nor NumPy's nor SLEEF's: about 1 value in 500 differs in
        # the last bit, so float64 angles are torch's to a few ulp, float32 ones exactly)
        z = np.cos(math.pi * u1)
        with np.errstate(all="ignore"):
            f = (1 + r * z) / (r + z)
            c = kappa * (r - f)
            accept = (c * (2 - c) - u2 > 0) | (np.log(c / u2) + 1 - c >= 0)
            x = np.where(accept, np.sign(u3 - 0.5) * np.arccos(f), x)
        done |= accept
    return np.mod(x + math.pi + loc, 2 * math.pi) - math.pi


# ----------------------------------------------------------------------------- complex dtypes
def _real_of(npd):
    """The dtype of a complex dtype's parts (complex32 is a structured pair of float16)."""
    npd = np.dtype(npd)
    if npd.names:
        return np.float16
    return np.float64 if npd == np.complex128 else np.float32


def uniform_complex(gen, shape, dtype):
    """torch.rand for complex32/complex64/complex128: uniform_ over the 2n real numbers (real,
    imag interleaved) in the parts' dtype."""
    real = _real_of(_np_dtype(dtype))
    flat = uniform(gen, (2 * _count(shape),), real)
    return flat.view(_np_dtype(dtype)).reshape(shape)


def normal_complex(gen, shape, dtype, mean=0.0, std=1.0):
    """torch.randn / normal_(mean, std) for complex32/complex64/complex128: normal_(mean,
    std / sqrt(2)) over the 2n real numbers in the parts' dtype (so the 16-wide path starts
    at 8 complex elements)."""
    real = _real_of(_np_dtype(dtype))
    flat = normal(gen, (2 * _count(shape),), real, mean, std / math.sqrt(2))
    return flat.view(_np_dtype(dtype)).reshape(shape)
