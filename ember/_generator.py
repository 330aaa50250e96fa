"""torch's CPU random generator: a 32-bit Mersenne Twister (mt19937) with torch's seeding,
state layout and cached normal sample, so that seeded programs draw torch's very numbers.

The words come from NumPy's MT19937 bit generator (the same twist), which is kept live between
draws so that a draw costs one random_raw call. torch keeps the twister as (key[624], left,
next): each word first counts `left` down and, when it reaches 0, twists the key and restarts
at next = 0; otherwise it returns key[next] and steps next. NumPy keeps (key, pos) and twists
when pos reaches 624. The two agree whenever left + next == 625. After seeding or set_state the
words still due before the next twist (key[next : next + left - 1]) are served from the key
directly (a state set by hand may have any left and next), and NumPy takes over from the twist;
get_state reads NumPy's (key, pos) back once it has produced a word. Small draws (up to SMALL
words) are served the same way: the words up to the end of NumPy's block are drawn ahead and
kept as due words (also converted once per block for rand's and randn's small draws), and
get_state counts the ones not served yet back from NumPy's position.

The state as a ByteTensor (5056 bytes, little-endian, natural C alignment):
  0    uint64  initial seed
  8    int32   left
  12   int32   seeded (must be non-zero)
  16   uint64  next
  24   uint64  key[624] (low 32 bits used)
  5016 double  normal_x          (unused by the CPU kernels; kept as given)
  5024 double  normal_y          the cached second Box-Muller normal of the scalar sampler
  5032 double  normal_rho        (unused; kept)
  5040 int32   normal_is_valid   whether normal_y is waiting to be used
  5044 float   next_float_normal_sample and 5048 bool its flag (unused on CPU; kept)
"""
import secrets

import numpy as np

from . import _dtype as D
from ._device import as_device
from ._random_recipes import SMALL
from ._tensor import Tensor

N = 624
STATE_SIZE = 5056
DEFAULT_SEED = 67280421310721          # a fresh torch.Generator()'s seed


def _seeded_key(seed):
    """mt19937's standard init_genrand from the low 32 bits of the seed."""
    key = np.empty(N, np.uint32)
    x = seed & 0xFFFFFFFF
    key[0] = x
    for i in range(1, N):
        x = (1812433253 * (x ^ (x >> 30)) + i) & 0xFFFFFFFF
        key[i] = x
    return key


def _temper(y):
    """mt19937's output tempering of key words (uint64 arrays holding 32-bit values)."""
    y = y ^ (y >> np.uint64(11))
    y = y ^ ((y << np.uint64(7)) & np.uint64(0x9D2C5680))
    y = y ^ ((y << np.uint64(15)) & np.uint64(0xEFC60000))
    return (y ^ (y >> np.uint64(18))) & np.uint64(0xFFFFFFFF)


class Generator:
    """torch.Generator for the CPU: torch's mt19937 stream, seed and state bytes."""

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self._mt = np.random.MT19937()
        self._gen32 = np.random.Generator(self._mt)    # (the same twister: 32-bit words)
        self._set_seed(DEFAULT_SEED)

    # -- seeding
    def _set_seed(self, seed):
        self._seed = seed
        self._sync(_seeded_key(seed), 1, 0)
        self._normal = None            # the cached second normal (a Python float) or None
        self._extra = bytes(STATE_SIZE - 5016)   # the tail fields, rebuilt on get_state

    def _sync(self, key, left, nxt):
        """Start from torch's (key, left, next): the words due before the twist are tempered
        now and served first; NumPy's twister holds the key for the twist after them."""
        self._key, self._left, self._next = key, left, nxt
        self._serve(_temper(key[nxt:nxt + left - 1].astype(np.uint64)))
        self._live = False             # whether NumPy's twister has produced a word since
        self._pos = N                  # NumPy's position in its block (N: twist next)
        self._mt.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": N}}

    def _serve(self, block):
        """Words drawn ahead (up to the end of a block), served before NumPy's twister."""
        self._due = block
        self._used = 0                 # how many of the due words were taken
        self._due_list = None          # the same as Python ints, made on demand
        self._due_floats = None        # and as float32 uniforms (rand's small draws)
        self._due_normals = {}         # and as normal pairs, by where the pairs start (and
                                       # as arrays, by that and the dtype)
        self._last_normals = None      # the arrays normal_array used last (_normal_values)

    def _torch_state(self):
        """(key, left, next) as torch would hold them now."""
        if self._live:
            # NumPy's twister is at its position; the due words not taken yet lie before it
            # in the same block
            st = self._mt.state["state"]
            nxt = int(st["pos"]) - (len(self._due) - self._used)
            return st["key"], N + 1 - nxt, nxt
        return self._key, self._left - self._used, self._next + self._used

    def manual_seed(self, seed):
        if isinstance(seed, bool) or not hasattr(type(seed), "__index__"):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = seed.__index__()
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        self._set_seed(seed % 2 ** 64)  # (a negative seed is kept as its uint64 bits)
        return self

    def seed(self):
        """Seed from the operating system's randomness (64 bits, as torch) and return it."""
        s = secrets.randbits(64)
        self._set_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    # -- state bytes
    def get_state(self):
        buf = bytearray(STATE_SIZE)
        mv = memoryview(buf)
        mv[0:8] = np.uint64(self._seed).tobytes()
        key, left, nxt = self._torch_state()
        mv[8:12] = np.int32(left).tobytes()
        mv[12:16] = np.int32(1).tobytes()
        mv[16:24] = np.uint64(nxt).tobytes()
        mv[24:5016] = key.astype(np.uint64).tobytes()
        tail = bytearray(self._extra)
        tail[8:16] = np.float64(self._normal if self._normal is not None else 0.0).tobytes()
        tail[24:28] = np.int32(self._normal is not None).tobytes()
        mv[5016:] = tail
        return Tensor._make(np.frombuffer(bytes(buf), np.uint8).copy(), D.uint8)

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state._dtype is not D.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.ascontiguousarray(np.asarray(new_state._data)).reshape(-1)
        if raw.size != STATE_SIZE:
            raise RuntimeError("Expected a CPUGeneratorImplState of size 5056 but found the "
                               f"input RNG state size to be {raw.size}")
        b = raw.tobytes()
        left = int(np.frombuffer(b, np.int32, 1, 8)[0])
        seeded = int(np.frombuffer(b, np.int32, 1, 12)[0])
        nxt = int(np.frombuffer(b, np.uint64, 1, 16)[0])
        if not (seeded and 0 < left <= N and nxt <= N):
            raise RuntimeError("Invalid mt19937 state")
        self._seed = int(np.frombuffer(b, np.uint64, 1, 0)[0])
        self._sync(np.frombuffer(b, np.uint64, N, 24).astype(np.uint32), left, nxt)
        valid = int(np.frombuffer(b, np.int32, 1, 5040)[0])
        self._normal = float(np.frombuffer(b, np.float64, 1, 5024)[0]) if valid else None
        self._extra = b[5016:]
        return self

    def clone_state(self):
        g = Generator(self.device)
        g.set_state(self.get_state())
        return g

    def __deepcopy__(self, memo):
        return self.clone_state()

    def __reduce__(self):
        # (as torch: the class, its device, then (seed, offset, state bytes) for __setstate__)
        return (Generator, (self.device,), (self._seed, None, self.get_state()))

    def __setstate__(self, st):
        self.set_state(st[2])

    def get_offset(self):
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset):
        raise RuntimeError("CPU Generator does not use offset")

    def graphsafe_get_state(self):
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state):
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    # -- the word source
    def _advance(self, n):
        """Count n words taken from NumPy's twister (its position in its block)."""
        self._live = True
        total = self._pos + n
        self._pos = total if total <= N else (total - 1) % N + 1

    def _draw(self, n):
        """n words from NumPy's twister (uint64)."""
        self._advance(n)
        return self._mt.random_raw(n)

    def words32(self, n):
        """words(n) as uint32, for large draws: NumPy's full-range uint32 integers are the
        twister's words themselves, half the memory of random_raw's and a little quicker."""
        used = self._used
        if used + n <= len(self._due) or n <= SMALL:
            return self.words(n).astype(np.uint32)
        head = self._due[used:]
        self._used = len(self._due)
        rest = n - len(head)
        self._advance(rest)
        tail = self._gen32.integers(0, 1 << 32, size=rest, dtype=np.uint32)
        return np.concatenate([head.astype(np.uint32), tail]) if len(head) else tail

    def _refill(self, n):
        """Draw ahead to the end of the block in which the next n words end, for small
        draws: they are then served from the due words (and get_state counts back)."""
        rem = N - self._pos
        k = rem if rem >= n else rem + -(-(n - rem) // N) * N
        self._serve(self._draw(k))

    def words(self, n):
        """The next n 32-bit words of the stream, as a uint64 array (low 32 bits set)."""
        used = self._used
        if used + n <= len(self._due):
            self._used = used + n
            return self._due[used:used + n].copy()
        head = self._due[used:]
        self._used = len(self._due)
        rest = n - len(head)
        if rest <= SMALL:
            self._refill(rest)
            self._used = rest
            tail = self._due[:rest]
        else:
            tail = self._draw(rest)
        return np.concatenate([head, tail]) if len(head) else tail.copy()

    def word_list(self, n):
        """words(n) as a list of Python ints (quicker for a few)."""
        used = self._used
        if used + n > len(self._due):
            return self.words(n).tolist()
        if self._due_list is None:
            self._due_list = self._due.tolist()
        self._used = used + n
        return self._due_list[used:used + n]

    def uniform_floats(self, n):
        """n float32 uniforms from one word each (low 24 bits * 2**-24), for a small draw:
        from the due words, converted a block at a time."""
        used = self._used
        if used + n > len(self._due):
            w = self.words(n)
            w &= np.uint64(0xFFFFFF)
            f = w.astype(np.float32)
            f *= np.float32(2.0 ** -24)
            return f
        if self._due_floats is None:
            f = (self._due & np.uint64(0xFFFFFF)).astype(np.float32)
            f *= np.float32(2.0 ** -24)
            self._due_floats = f
        self._used = used + n
        return self._due_floats[used:used + n].copy()

    def normal_pairs(self, pairs, transform):
        """The Box-Muller pairs (cos, sin values, flat) of the next 4 * pairs words as a list,
        from the due words, or None when they run past them. transform(words (m, 4)) gives a
        block's 2m values: done once per block and alignment of the pairs."""
        used, k = self._used, 4 * pairs
        if used + k > len(self._due):
            return None
        start = used % 4
        values = self._due_normals.get(start)
        if values is None:
            m = (len(self._due) - start) // 4
            values = transform(self._due[start:start + 4 * m].reshape(m, 4)).tolist()
            self._due_normals[start] = values
        self._used = used + k
        i = (used - start) // 2
        return values[i:i + 2 * pairs]

    def normal_array(self, n, transform, npd):
        """The scalar normal sampler's next n values (0 < n, the cached normal first) plus 0.0
        (fma(z, 1, 0) turns -0 into +0), as a new float32 or float64 array, from the due
        words' pairs (normal_pairs' values, converted once per block, alignment and dtype);
        the last sine is cached when the pairs leave one over. None when the pairs run past
        the due words (nothing is taken then). (Quick for randn's small draws: the cached
        normal is most often the value just before the pairs taken, so one slice serves.)"""
        cached = self._normal
        k = n if cached is None else n - 1          # values taken from new pairs
        used = self._used
        end = used + ((k + 1) >> 1 << 2)
        if end > len(self._due):
            return None
        start = used & 3
        last = self._last_normals
        if last is None or last[0] != start or last[1] is not npd:
            last = self._normal_values(start, npd, transform)
        self._used = end
        i = (used - start) >> 1
        _, _, values, raw = last
        self._normal = raw[i + k] if k & 1 else None
        if cached is None:
            return values[i:i + n].copy()
        if i and raw[i - 1] is cached:              # (the sine cached by the call before)
            return values[i - 1:i + k].copy()
        out = np.empty(n, npd)
        out[0] = cached + 0.0
        out[1:] = values[i:i + k]
        return out

    def _normal_values(self, start, npd, transform):
        """(start, npd, values, raw): the due words' normal pairs from word `start` on, as
        Python floats (raw, shared with normal_pairs) and plus 0.0 as an array of npd."""
        m = (len(self._due) - start) >> 2
        both = transform(self._due[start:start + 4 * m].reshape(m, 4))
        raw = self._due_normals.get(start)
        if raw is None:
            raw = self._due_normals[start] = both.tolist()
        both += 0.0
        self._last_normals = last = (start, npd, both.astype(npd, copy=False), raw)
        return last

    def random(self):
        """One 32-bit word."""
        return int(self.words(1)[0])

    def random64(self):
        """One 64-bit draw: the first word is the high half, the second the low half."""
        w = self.words(2)
        return (int(w[0]) << 32) | int(w[1])

    def words64(self, n):
        """n 64-bit draws (pairs of words, high half first) as a uint64 array."""
        w = self.words(2 * n).reshape(n, 2)
        return (w[:, 0] << np.uint64(32)) | w[:, 1]


default_generator = Generator()
default_generator.seed()               # torch seeds its global generator from the OS at start
