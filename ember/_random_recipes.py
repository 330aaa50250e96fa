"""torch 2.13's CPU sampling recipes: how each distribution turns the generator's 32-bit words
into values, reproduced bit for bit (found by experiment against torch; see
tests/test_random_streams.py). Each function takes an ember._generator.Generator and returns a
NumPy array in the logical (C) order of the output; the caller writes it into the tensor.

Word use, per element:
  float32 / float16 / bfloat16 uniform: one word, its low 24 bits * 2**-24 as float32, then
      fma(x, to - from, from) in float32, then rounded to the dtype; a value that rounds up to
      `to` becomes `from` (possible for half precision and for wide ranges).
  float64 uniform: one 64-bit draw (two words, high half first), low 53 bits * 2**-53, then
      fma(x, to - from, from) in float64.
"""
import numpy as np
import ml_dtypes

M24 = np.uint64((1 << 24) - 1)
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
    """Correctly rounded a * b + c in float32 (the product is exact in float64)."""
    a, b, c = (np.asarray(v, np.float32).astype(np.float64) for v in (a, b, c))
    a, b, c = np.broadcast_arrays(a, b, c)
    return _add_round_odd(a * b, c).astype(np.float32)


# ----------------------------------------------------------------------------- helpers
def _np_dtype(dtype):
    return dtype.np if hasattr(dtype, "np") else np.dtype(dtype)


def _count(shape):
    return int(np.prod(shape, dtype=np.int64)) if isinstance(shape, tuple) else int(shape)


def uniform01_float(gen, n):
    """n float32 uniforms in [0, 1) from one word each."""
    return (gen.words(n) & M24).astype(np.float32) * np.float32(2.0 ** -24)


def uniform01_double(gen, n):
    """n float64 uniforms in [0, 1) from one 64-bit draw each."""
    return (gen.words64(n) & M53).astype(np.float64) * 2.0 ** -53


# ----------------------------------------------------------------------------- uniform_
def uniform(gen, shape, dtype, low=0.0, high=1.0):
    """Tensor.uniform_(low, high) / torch.rand for a floating dtype."""
    n = _count(shape)
    npd = _np_dtype(dtype)
    if npd == np.float64:
        out = fma64(uniform01_double(gen, n), float(high) - float(low), float(low))
    else:
        lo, hi = np.float32(low), np.float32(high)
        out = fma32(uniform01_float(gen, n), hi - lo, lo)
        if npd != np.float32:
            out = out.astype(npd)
        to = np.asarray(high).astype(npd)
        out = np.where(out == to, np.asarray(low).astype(npd), out)
    return out.reshape(shape)


# ----------------------------------------------------------------------------- normal_
def normal_scalar(gen, n):
    """n standard normals from torch's one-at-a-time sampler (float64 Box-Muller).

    Each pair takes two float64 uniforms u1, u2; r = sqrt(-2 log(1 - u2)); the value is
    r cos(2 pi u1) and r sin(2 pi u1) is kept in the generator for the next call."""
    out = np.empty(n, np.float64)
    i = 0
    if n and gen._normal is not None:
        out[0] = gen._normal
        gen._normal = None
        i = 1
    pairs = (n - i + 1) // 2
    if pairs:
        u = uniform01_double(gen, 2 * pairs).reshape(pairs, 2)
        r = np.sqrt(-2.0 * np.log1p(-u[:, 1]))
        theta = 2.0 * np.pi * u[:, 0]
        both = np.stack([r * np.cos(theta), r * np.sin(theta)], 1).reshape(-1)
        out[i:] = both[:n - i]
        if (n - i) % 2:
            gen._normal = float(both[-1])
    return out
