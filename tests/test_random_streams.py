"""torch's CPU random streams, bit for bit: ember._generator.Generator (mt19937 seeding, the
5056-byte state, round trips with torch) and ember._random_recipes (each distribution's use of
the words), compared with torch 2.13's values and its generator state afterwards."""
import copy
import os
import pickle
import subprocess
import sys
import warnings

import ml_dtypes
import numpy as np
import pytest
import torch

import ember
from ember import _random_recipes as R
from ember._generator import Generator, default_generator

SEEDS = [0, 1, 12345, 2 ** 32 + 7, 2 ** 63 + 3]
SIZES = [1, 2, 15, 16, 17, 1000]
FLOATS = [(torch.float32, ember.float32), (torch.float64, ember.float64),
          (torch.float16, ember.float16), (torch.bfloat16, ember.bfloat16)]


def pair(seed):
    """An ember generator and a torch generator seeded alike."""
    g = Generator()
    g.manual_seed(seed)
    tg = torch.Generator()
    tg.manual_seed(seed)
    return g, tg


def bits(a):
    """The raw bits of an array (NumPy) or tensor (torch), for exact comparison."""
    if isinstance(a, torch.Tensor):
        if a.dtype in (torch.float16, torch.bfloat16):
            a = a.view(torch.int16)
        elif a.dtype == torch.bool:
            a = a.to(torch.uint8)
        a = a.numpy()
    a = np.asarray(a)
    if a.dtype in (np.float16, ml_dtypes.bfloat16):
        return a.view(np.int16)
    if a.dtype == np.bool_:
        return a.astype(np.uint8)
    return a


def same(ours, theirs):
    a, b = bits(ours), bits(theirs)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)


def state_of(g):
    return np.asarray(g.get_state()._data)


def same_state(g, tg):
    return np.array_equal(state_of(g), tg.get_state().numpy())


def ember_state(arr):
    return ember.from_numpy(np.array(arr, dtype=np.uint8))


# ----------------------------------------------------------------------------- Generator
@pytest.mark.parametrize("seed", SEEDS + [-1, -2 ** 63, 2 ** 64 - 1])
def test_seeded_state_bytes_match(seed):
    g, tg = pair(seed)
    assert g.initial_seed() == tg.initial_seed()
    assert state_of(g).dtype == np.uint8 and state_of(g).shape == (5056,)
    assert same_state(g, tg)


def test_fresh_generator_and_default_seed():
    g, tg = Generator(), torch.Generator()
    assert g.initial_seed() == tg.initial_seed() == 67280421310721
    assert same_state(g, tg)
    assert str(g.device) == str(tg.device) == "cpu"
    # the global generator of a fresh process is seeded from the OS, 64 bits wide
    code = "import torch; print(torch.initial_seed())"
    seeds = {int(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                text=True).stdout) for _ in range(2)}
    assert len(seeds) == 2 and 67280421310721 not in seeds
    assert default_generator.initial_seed() != 67280421310721
    assert 0 <= default_generator.initial_seed() < 2 ** 64


def test_seed_returns_a_fresh_64_bit_seed():
    g = Generator()
    draws = {g.seed() for _ in range(8)}
    assert len(draws) == 8 and all(0 <= s < 2 ** 64 for s in draws)
    assert max(draws) >= 2 ** 32                       # not 32-bit seeds
    s = g.seed()
    assert g.initial_seed() == s
    tg = torch.Generator()
    tg.manual_seed(s)
    assert same_state(g, tg)


@pytest.mark.parametrize("seed", [0, 5, 2 ** 32 + 5])
@pytest.mark.parametrize("words", [0, 1, 2, 623, 624, 625, 1247, 1248, 5000])
def test_words_and_state_follow_torch(seed, words):
    """After k words (drawn here as k float32 uniforms) both the values and the bytes match."""
    g, tg = pair(seed)
    ours = R.uniform(g, (words,), ember.float32)
    theirs = torch.rand(words, generator=tg)
    assert same(ours, theirs)
    assert same_state(g, tg)


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("prefix", [0, 1, 3, 700])
def test_state_round_trip_torch_ember_torch(seed, prefix):
    """A torch state (mid-stream, with a cached normal when prefix is odd) set in ember
    continues identically, and ember's state set back in torch continues identically."""
    tg = torch.Generator()
    tg.manual_seed(seed)
    torch.randn(prefix, generator=tg, dtype=torch.float64)
    g = Generator()
    g.set_state(ember_state(tg.get_state().numpy()))
    assert g.initial_seed() == tg.initial_seed()
    assert same_state(g, tg)
    assert same(R.normal(g, (3,), ember.float64), torch.randn(3, generator=tg, dtype=torch.float64))
    assert same(R.uniform(g, (50,), ember.float32), torch.rand(50, generator=tg))
    assert same_state(g, tg)
    # and back: ember's state into a fresh torch generator
    tg2 = torch.Generator()
    tg2.set_state(torch.from_numpy(state_of(g).copy()))
    assert same(R.normal(g, (5,), ember.float64),
                torch.randn(5, generator=tg2, dtype=torch.float64))
    assert same_state(g, tg2)


@pytest.mark.parametrize("left,nxt", [(624, 0), (5, 0), (1, 0), (1, 624), (300, 100), (2, 623)])
def test_hand_made_states(left, nxt):
    """States where left + next != 625 (torch serves key words until left runs out)."""
    tg = torch.Generator()
    tg.manual_seed(11)
    torch.rand(10, generator=tg)
    raw = tg.get_state().numpy().copy()
    raw[8:12] = np.frombuffer(np.int32(left).tobytes(), np.uint8)
    raw[16:24] = np.frombuffer(np.uint64(nxt).tobytes(), np.uint8)
    raw[28] = 7                                  # high key bits are ignored
    tg.set_state(torch.from_numpy(raw.copy()))
    g = Generator()
    g.set_state(ember_state(raw))
    theirs = torch.rand(700, generator=tg, dtype=torch.float64)
    assert same(R.uniform(g, (700,), ember.float64), theirs)
    assert same_state(g, tg)


def test_cached_normal_in_state():
    """The scalar sampler's second normal is kept at bytes 5024..5031, flagged at 5040."""
    g, tg = pair(0)
    R.normal(g, (1,), ember.float32)
    torch.randn(1, generator=tg)
    st = state_of(g)
    assert st[5040] == 1 and np.frombuffer(st[5024:5032].tobytes(), np.float64)[0] != 0
    assert same_state(g, tg)
    R.normal(g, (1,), ember.float32)
    torch.randn(1, generator=tg)
    assert state_of(g)[5040] == 0 and same_state(g, tg)
    # manual_seed drops the cached value
    R.normal(g, (1,), ember.float32)
    g.manual_seed(0)
    assert state_of(g)[5040] == 0


def _error(fn):
    try:
        fn()
    except Exception as e:   # noqa: BLE001 - the type and text are what is compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize("make", [
    lambda m: m.zeros(10, dtype=m.uint8),
    lambda m: m.zeros(5048, dtype=m.uint8),
    lambda m: m.zeros(5056, dtype=m.int8),
    lambda m: m.zeros(5056, dtype=m.float32),
    lambda m: [1, 2],
    lambda m: m.zeros(5056, dtype=m.uint8),                 # seeded flag 0: invalid
    lambda m: m.zeros(2, 2528, dtype=m.uint8),
])
def test_set_state_errors(make):
    theirs = _error(lambda: torch.Generator().set_state(make(torch)))
    ours = _error(lambda: Generator().set_state(make(ember)))
    assert theirs is not None and ours == theirs


@pytest.mark.parametrize("field,value", [(12, 0), ("left", 0), ("left", 625), ("next", 625)])
def test_set_state_invalid_fields(field, value):
    tg = torch.Generator()
    raw = tg.get_state().numpy().copy()
    if field == "left":
        raw[8:12] = np.frombuffer(np.int32(value).tobytes(), np.uint8)
    elif field == "next":
        raw[16:24] = np.frombuffer(np.uint64(value).tobytes(), np.uint8)
    else:
        raw[field] = value
    theirs = _error(lambda: tg.set_state(torch.from_numpy(raw.copy())))
    ours = _error(lambda: Generator().set_state(ember_state(raw)))
    assert theirs == (RuntimeError, "Invalid mt19937 state") and ours == theirs


@pytest.mark.parametrize("seed", [2 ** 64, -2 ** 63 - 1, 1.5, True, "3", None])
def test_manual_seed_errors(seed):
    theirs = _error(lambda: torch.Generator().manual_seed(seed))
    ours = _error(lambda: Generator().manual_seed(seed))
    assert theirs is not None and ours == theirs


def test_offset_and_graphsafe_errors():
    for name, args in [("get_offset", ()), ("set_offset", (3,)), ("graphsafe_get_state", ()),
                       ("graphsafe_set_state", (None,))]:
        theirs = _error(lambda: getattr(torch.Generator(), name)(*args))
        if name == "graphsafe_set_state":
            theirs = _error(lambda: torch.Generator().graphsafe_set_state(torch.Generator()))
        ours = _error(lambda: getattr(Generator(), name)(*args))
        assert theirs is not None and ours == theirs


def test_pickle_and_deepcopy_keep_the_stream():
    g = Generator().manual_seed(3)
    R.normal(g, (3,), ember.float64)                 # leaves a cached normal
    for h in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert h.initial_seed() == 3 and np.array_equal(state_of(h), state_of(g))
        assert same(R.normal(h, (5,), ember.float64),
                    R.normal(g.clone_state(), (5,), ember.float64))


def test_clone_state_is_independent():
    g = Generator().manual_seed(9)
    h = g.clone_state()
    assert same(R.uniform(g, (5,), ember.float32), R.uniform(h, (5,), ember.float32))
    assert np.array_equal(state_of(g), state_of(h))


# ----------------------------------------------------------------------------- uniform_
@pytest.mark.parametrize("tdt,edt", FLOATS)
@pytest.mark.parametrize("n", SIZES + [1000003])
@pytest.mark.parametrize("seed", [0, 12345])
def test_rand(tdt, edt, n, seed):
    g, tg = pair(seed)
    assert same(R.uniform(g, (n,), edt), torch.rand(n, generator=tg, dtype=tdt))
    assert same_state(g, tg)


@pytest.mark.parametrize("tdt,edt", FLOATS)
@pytest.mark.parametrize("low,high", [(-3.7, 2.2), (0.5, 7.25), (-1e-3, 1e3), (0, 2), (-1, 1)])
def test_uniform_bounds(tdt, edt, low, high):
    """fma(x, high - low, low) in the dtype's math type; half results that round to `high`
    become `low`."""
    g, tg = pair(4)
    theirs = torch.empty(100000, dtype=tdt).uniform_(low, high, generator=tg)
    assert same(R.uniform(g, (100000,), edt, low, high), theirs)
    assert same_state(g, tg)


def test_uniform_2d_shape():
    g, tg = pair(8)
    assert same(R.uniform(g, (3, 7), ember.float32), torch.rand(3, 7, generator=tg))


# ----------------------------------------------------------------------------- normal_
@pytest.mark.parametrize("tdt,edt", [FLOATS[1]])
@pytest.mark.parametrize("n", SIZES + [100003])
@pytest.mark.parametrize("seed", [0, 1, 2 ** 40])
@pytest.mark.parametrize("mean,std", [(0, 1), (0.3, 2.7)])
def test_normal_float64(tdt, edt, n, seed, mean, std):
    g, tg = pair(seed)
    theirs = torch.empty(n, dtype=tdt).normal_(mean, std, generator=tg)
    assert same(R.normal(g, (n,), edt, mean, std), theirs)
    assert same_state(g, tg)


@pytest.mark.parametrize("tdt,edt", [FLOATS[0], FLOATS[2], FLOATS[3]])
@pytest.mark.parametrize("n", [1, 2, 3, 15])
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mean,std", [(0, 1), (0.3, 2.7)])
def test_normal_small_exact(tdt, edt, n, seed, mean, std):
    """Below 16 elements every dtype samples in float64, one value at a time (with the
    generator's cached second value)."""
    g, tg = pair(seed)
    for _ in range(2):            # the second call starts from the cached value when n is odd
        theirs = torch.empty(n, dtype=tdt).normal_(mean, std, generator=tg)
        assert same(R.normal(g, (n,), edt, mean, std), theirs)
        assert same_state(g, tg)


@pytest.mark.parametrize("tdt,edt", [FLOATS[0], FLOATS[2], FLOATS[3]])
@pytest.mark.parametrize("n", [16, 17, 31, 1000, 100003, 1000003])
@pytest.mark.parametrize("seed", [0, 1, 2 ** 40 + 7])
def test_normal_large_float32_and_half(tdt, edt, n, seed):
    """16 and more: torch's vectorised float32 Box-Muller (its own logf and sincosf), bit for
    bit, and the stream position."""
    g, tg = pair(seed)
    for mean, std in ((0.0, 1.0), (-1.5, 0.3)):
        theirs = torch.empty(n, dtype=tdt).normal_(mean, std, generator=tg)
        assert same(R.normal(g, (n,), edt, mean, std), theirs)
        assert same_state(g, tg)


def _crafted_state(words):
    """A torch state whose next len(words) (< 624) words are `words`: the key holds them
    untempered, with next = 0 and left = 624 (each word is key[next] tempered)."""
    words = np.asarray(words, np.uint64)
    y = words.copy()
    for _ in range(2):                              # undo y ^= y >> 18 (twice is enough)
        y = words ^ (y >> np.uint64(18))
    x = y
    for _ in range(3):                              # undo y ^= (y << 15) & 0xEFC60000
        x = y ^ ((x << np.uint64(15)) & np.uint64(0xEFC60000))
    y = x & np.uint64(0xFFFFFFFF)
    x = y
    for _ in range(5):                              # undo y ^= (y << 7) & 0x9D2C5680
        x = y ^ ((x << np.uint64(7)) & np.uint64(0x9D2C5680))
    y = x & np.uint64(0xFFFFFFFF)
    x = y
    for _ in range(3):                              # undo y ^= y >> 11
        x = y ^ (x >> np.uint64(11))
    st = torch.Generator().manual_seed(0).get_state().numpy().copy()
    key = np.frombuffer(st[24:5016].tobytes(), np.uint64).copy()
    key[:len(words)] = x
    st[24:5016] = np.frombuffer(key.tobytes(), np.uint8)
    st[8:12] = np.frombuffer(np.int32(624).tobytes(), np.uint8)
    st[16:24] = np.frombuffer(np.uint64(0).tobytes(), np.uint8)
    return st


def test_crafted_state_gives_the_words():
    words = (np.arange(50, dtype=np.uint64) * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
    st = _crafted_state(words)
    tg = torch.Generator()
    tg.set_state(torch.from_numpy(st))
    # (a range below 2**28 takes one word each: its low 27 bits here)
    assert torch.randint(0, 2 ** 27, (50,), generator=tg).tolist() == \
        (words & np.uint64(2 ** 27 - 1)).tolist()
    g = Generator().set_state(ember_state(st))
    assert g.words(50).tolist() == words.tolist()


# inputs (24-bit uniforms, k * 2**-24) where the candidate float32 recipes disagree: the
# angle reduction's multiply-adds fused or not (k = 12582909, 12582912, 12582913), an angle
# near pi/4 steps apart, the log near 1/2, sqrt(1/2), 1 and its smallest input
EDGE_UNIFORMS = [12582909, 12582912, 12582913, 2097152, 2097151, 6291456, 6291457, 0, 1,
                 (1 << 24) - 1, 8388608, 8388607, 4913933, 4913934, 11863283, 1 << 23 | 1]


@pytest.mark.parametrize("std", [1.0, 2.5])
def test_normal_float32_edge_inputs(std):
    """Each edge value as u1 and as u2 of torch's 16-wide Box-Muller, through a crafted
    state: the values and the state afterwards."""
    k = np.array(EDGE_UNIFORMS, np.uint64)
    rows = []
    for a in range(0, len(k), 8):
        part = np.resize(k[a:a + 8], 8)
        rows += [part, part[::-1]]                 # as u1 (first 8), then as u2
        rows += [part[::-1], part]
    words = np.concatenate(rows) | np.uint64(0xAB000000)   # (the top 8 bits are ignored)
    st = _crafted_state(words)
    tg = torch.Generator()
    tg.set_state(torch.from_numpy(st))
    g = Generator().set_state(ember_state(st))
    n = len(words)
    theirs = torch.empty(n).normal_(0.25, std, generator=tg)
    assert same(R.normal(g, (n,), ember.float32, 0.25, std), theirs)
    assert same_state(g, tg)


def test_normal_half_pads_to_sixteen():
    """Half precision takes n rounded up to a multiple of 16 words."""
    for n in (17, 33, 1000):
        g, tg = pair(0)
        R.normal(g, (n,), ember.float16)
        torch.randn(n, generator=tg, dtype=torch.float16)
        assert same_state(g, tg)
        h = Generator().manual_seed(0)
        h.words(-(-n // 16) * 16)
        assert np.array_equal(state_of(g), state_of(h))


@pytest.mark.parametrize("n", [1, 5, 15, 16, 40])
@pytest.mark.parametrize("tdt,edt", [FLOATS[0], FLOATS[1]])
@pytest.mark.parametrize("form", ["TT", "Tf", "fT"])
def test_normal_tensor_overloads(n, tdt, edt, form):
    src = torch.Generator().manual_seed(99)
    mean = torch.randn(n, generator=src, dtype=tdt) * 3
    std = torch.rand(n, generator=src, dtype=tdt) + 0.5
    m = mean if form[0] == "T" else 1.5
    s = std if form[1] == "T" else 2.5
    g, tg = pair(3)
    theirs = torch.normal(m, s, generator=tg)
    ours = R.normal_tensors(g, (n,), edt, m.numpy() if form[0] == "T" else m,
                            s.numpy() if form[1] == "T" else s)
    assert same_state(g, tg)
    assert same(ours, theirs)


# ----------------------------------------------------------------------------- random_ / randint
INTS = [(torch.int64, ember.int64), (torch.int32, ember.int32), (torch.int16, ember.int16),
        (torch.int8, ember.int8), (torch.uint8, ember.uint8), (torch.bool, ember.bool)]
ALL = INTS + FLOATS


@pytest.mark.parametrize("low,high", [(0, 10), (-5, 5), (0, 2), (3, 100), (0, 2 ** 32),
                                      (0, 2 ** 32 + 1), (-2 ** 40, 2 ** 40),
                                      (-2 ** 63, 2 ** 63 - 1), (0, 2 ** 63 - 1),
                                      (-2 ** 62, 2 ** 62),
                                      (2 ** 60, 2 ** 63 - 1), (0, 2 ** 31 - 1), (0, 2 ** 28 - 1),
                                      (0, 2 ** 28), (0, 2 ** 28 + 1), (-7, 2 ** 28 + 1),
                                      (0, 1000), (-300, 5000), (0, 2 ** 25), (0, 2 ** 25 + 7),
                                      (0, 2 ** 26 + 5), (-2 ** 25 - 3, 100), (-1000, 2 ** 25 + 1),
                                      (-2 ** 26 - 1, 2 ** 24), (-259, 300), (0, 2 ** 32 - 5)])
@pytest.mark.parametrize("tdt,edt", ALL)
@pytest.mark.parametrize("n", [1, 17, 1000])
def test_randint(low, high, tdt, edt, n):
    g, tg = pair(2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")           # torch warns on float ranges past 2**24
            theirs = torch.randint(low, high, (n,), dtype=tdt, generator=tg)
    except RuntimeError:
        return                       # out of the dtype's range: the ops layer raises torch's error
    assert same(R.random_range(g, (n,), edt, low, high), theirs)
    assert same_state(g, tg)


@pytest.mark.parametrize("tdt,edt", ALL)
def test_random_unbounded(tdt, edt):
    g, tg = pair(2)
    assert same(R.random_full(g, (2000,), edt),
                torch.empty(2000, dtype=tdt).random_(generator=tg))
    assert same_state(g, tg)


@pytest.mark.parametrize("tdt,edt", ALL)
@pytest.mark.parametrize("low", [0, 3, -3, -2 ** 31])
def test_random_from(tdt, edt, low):
    g, tg = pair(2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")           # torch warns on float ranges past 2**24
            theirs = torch.empty(500, dtype=tdt).random_(low, None, generator=tg)
    except RuntimeError:
        return
    assert same(R.random_from(g, (500,), edt, low), theirs)
    assert same_state(g, tg)


@pytest.mark.parametrize("tdt,edt", [INTS[0], INTS[1], FLOATS[0]])
def test_random_to(tdt, edt):
    """random_(to) is random_(0, to)."""
    g, tg = pair(6)
    assert same(R.random_range(g, (300,), edt, 0, 77),
                torch.empty(300, dtype=tdt).random_(77, generator=tg))
    assert same_state(g, tg)


# ----------------------------------------------------------------------------- randperm
@pytest.mark.parametrize("n", [0, 1, 2, 3, 15, 16, 17, 64, 65, 1000, 100003, 1_000_000])
@pytest.mark.parametrize("seed", [0, 7])
def test_randperm(n, seed):
    g, tg = pair(seed)
    assert same(R.randperm(g, n, ember.int64), torch.randperm(n, generator=tg))
    assert same_state(g, tg)


def _swaps_by_loop(j):
    perm = list(range(len(j)))
    for i, t in enumerate(j.tolist()):
        perm[i], perm[t] = perm[t], perm[i]
    return perm


@pytest.mark.parametrize("n", [1, 2, 5, 70, 1000])
def test_apply_swaps_matches_the_sequential_shuffle(n):
    """randperm's vectorised swaps give the loop's result, for random targets and for the
    extreme ones (no moves, everything to the end, each to the next: one long chain)."""
    rng = np.random.default_rng(n)
    cases = [np.arange(n) + rng.integers(0, 2 ** 32, n) % np.arange(n, 0, -1) for _ in range(5)]
    cases += [np.arange(n), np.full(n, n - 1), np.minimum(np.arange(n) + 1, n - 1)]
    for j in cases:
        assert R._apply_swaps(j.astype(np.int64)).tolist() == _swaps_by_loop(j)


def _inside_out_by_loop(z):
    out = [0] * len(z)
    for i, k in enumerate(z.tolist()):
        out[i] = out[k]
        out[k] = i
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 8, 70, 1000, 4099])
def test_inside_out_shuffle_matches_the_sequential_loop(n):
    """The vectorised inside-out shuffle (torch's randperm from n = 214748364) gives the
    loop's result: random offsets, and the extremes (each stays: z = i; each to the front:
    z = 0; each one back: z = i - 1)."""
    rng = np.random.default_rng(n)
    i = np.arange(n)
    cases = [rng.integers(0, 2 ** 62, n) % (i + 1) for _ in range(5)]
    cases += [i, np.zeros(n, np.int64), np.maximum(i - 1, 0)]
    for z in cases:
        z = z.astype(np.int64)
        keep = z.copy()
        assert R.inside_out_from_offsets(z).tolist() == _inside_out_by_loop(z)
        assert np.array_equal(z, keep)


def test_inside_out_shuffle_takes_one_64_bit_draw_per_element(monkeypatch):
    """randperm_inside_out: z[i] = draw_i % (i + 1), draws a chunk at a time (a small chunk
    here, so that several are taken), 2n words in all."""
    monkeypatch.setattr(R, "RANDPERM_CHUNK", 7)
    n = 50
    g, ref = Generator().manual_seed(3), Generator().manual_seed(3)
    z = (ref.words64(n) % np.arange(1, n + 1, dtype=np.uint64)).astype(np.int64)
    assert R.randperm_inside_out(g, n).tolist() == _inside_out_by_loop(z)
    assert np.array_equal(g.get_state().numpy(), ref.get_state().numpy())


# torch's randperm(214748364) after manual_seed(0) (82 s and 1.7 GB in torch, ~40 s and 5.5 GB
# here): its first and last 8 values, and where the values n - 8 .. n - 1 lie
_BIG_N = 214748364
_BIG_HEAD = [180140102, 136514640, 18739608, 22357822, 33761584, 3964423, 190519392, 171944721]
_BIG_TAIL = [132226193, 67771934, 186011132, 117299213, 60523199, 10659741, 142775043, 79202631]
_BIG_POS = [86015663, 3033663, 129679294, 71390560, 84312737, 93109770, 200594085, 179603580]


@pytest.mark.skipif(not os.environ.get("EMBER_BIG_TESTS"),
                    reason="randperm(214748364) needs ~5.5 GB and a minute: EMBER_BIG_TESTS=1")
def test_randperm_from_the_wide_threshold_matches_torch():
    """From n = 214748364 torch shuffles inside out with 64-bit draws: its values (recorded
    above from torch 2.13) and the stream position after it (2n words), here recomputed."""
    g = Generator().manual_seed(0)
    p = R.randperm(g, _BIG_N, ember.int64)
    assert p[:8].tolist() == _BIG_HEAD and p[-8:].tolist() == _BIG_TAIL
    assert [int(p[k]) for k in _BIG_POS] == list(range(_BIG_N - 8, _BIG_N))
    ref = Generator().manual_seed(0)
    for _ in range(2 * _BIG_N // 10 ** 7):
        ref.words(10 ** 7)
    ref.words(2 * _BIG_N % 10 ** 7)
    assert np.array_equal(g.get_state().numpy(), ref.get_state().numpy())


@pytest.mark.parametrize("tdt,edt", [INTS[1], FLOATS[0], FLOATS[2], INTS[4]])
def test_randperm_dtypes(tdt, edt):
    g, tg = pair(1)
    assert same(R.randperm(g, 200, edt), torch.randperm(200, generator=tg, dtype=tdt))
    assert same_state(g, tg)


# ----------------------------------------------------------------------------- bernoulli
@pytest.mark.parametrize("p", [0.0, 1e-8, 0.3, 0.5, 0.999, 1.0])
@pytest.mark.parametrize("tdt,edt", [FLOATS[0], FLOATS[1], INTS[0], INTS[5]])
@pytest.mark.parametrize("n", [1, 16, 5000])
def test_bernoulli_scalar_p(p, tdt, edt, n):
    g, tg = pair(1)
    theirs = torch.empty(n, dtype=tdt).bernoulli_(p, generator=tg)
    assert same(R.bernoulli_scalar(g, (n,), p).astype(edt.np), theirs)
    assert same_state(g, tg)


@pytest.mark.parametrize("pdt", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("out", [None, torch.float64, torch.float32, torch.int64])
def test_bernoulli_tensor_p(pdt, out):
    p = torch.rand(3000, generator=torch.Generator().manual_seed(5), dtype=pdt)
    pn = p.view(torch.int16).numpy().view(ml_dtypes.bfloat16 if pdt == torch.bfloat16
                                          else np.float16) if pdt in (torch.float16,
                                                                      torch.bfloat16) else p.numpy()
    g, tg = pair(1)
    if out is None:
        theirs = torch.bernoulli(p, generator=tg)
        npd = pn.dtype
    else:
        theirs = torch.empty(3000, dtype=out).bernoulli_(p, generator=tg)
        npd = ember.float64.np if out == torch.float64 else (
            ember.float32.np if out == torch.float32 else np.int64)
    assert same(R.bernoulli_tensor(g, pn).astype(npd), theirs)
    assert same_state(g, tg)


def test_bernoulli_broadcast_p():
    p = torch.rand(3, 1, generator=torch.Generator().manual_seed(5))
    g, tg = pair(2)
    theirs = torch.empty(3, 4).bernoulli_(p, generator=tg)
    ours = R.bernoulli_tensor(g, np.broadcast_to(p.numpy(), (3, 4)))
    assert same(ours.astype(np.float32), theirs)
    assert same_state(g, tg)


def test_dropout_is_bernoulli_of_keep_probability():
    """F.dropout(x, p) draws bernoulli_(1 - p) on a tensor like x, then scales by 1/(1 - p)."""
    torch.manual_seed(4)
    x = torch.ones(1000)
    theirs = torch.nn.functional.dropout(x, 0.3)
    after = torch.get_rng_state().numpy()
    g = Generator().manual_seed(4)
    mask = R.bernoulli_scalar(g, (1000,), 1 - 0.3)
    ours = mask.astype(np.float32) * np.float32(1 / (1 - 0.3))
    assert same(ours, theirs)
    raw = state_of(g)
    assert np.array_equal(raw[8:5016], after[8:5016])


# ----------------------------------------------------------------------------- other distributions
def _check(recipe, edt, tdt, method, args, n=4000, seed=0):
    g, tg = pair(seed)
    theirs = getattr(torch.empty(n, dtype=tdt), method)(*args, generator=tg)
    assert same(recipe(g, (n,), edt, *args), theirs)
    assert same_state(g, tg)


@pytest.mark.parametrize("tdt,edt", FLOATS)
@pytest.mark.parametrize("lambd", [2.0, 3.0, 0.7, 1e-3])
def test_exponential(tdt, edt, lambd):
    _check(R.exponential, edt, tdt, "exponential_", (lambd,))


@pytest.mark.parametrize("tdt,edt", FLOATS + [INTS[0], INTS[1]])
@pytest.mark.parametrize("p", [0.3, 1e-5, 0.9, 0.5])
def test_geometric(tdt, edt, p):
    _check(R.geometric, edt, tdt, "geometric_", (p,))


@pytest.mark.parametrize("tdt,edt", FLOATS)
@pytest.mark.parametrize("median,sigma", [(0.0, 1.0), (0.5, 2.0), (-3.3, 0.1)])
def test_cauchy(tdt, edt, median, sigma):
    _check(R.cauchy, edt, tdt, "cauchy_", (median, sigma))


@pytest.mark.parametrize("tdt,edt", FLOATS)
@pytest.mark.parametrize("mean,std", [(1.0, 2.0), (0.0, 1.0), (-0.7, 0.3)])
@pytest.mark.parametrize("n", [1, 3, 16, 1001])
def test_log_normal(tdt, edt, mean, std, n):
    _check(R.log_normal, edt, tdt, "log_normal_", (mean, std), n=n)


# ----------------------------------------------------------------------------- multinomial
@pytest.mark.parametrize("tdt", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("shape", [(5,), (30,), (4, 50), (3, 7)])
@pytest.mark.parametrize("k,replacement", [(1, False), (1, True), (3, False), (3, True),
                                           (400, True), ("all", False)])
@pytest.mark.parametrize("zeros", [False, True])
def test_multinomial(tdt, shape, k, replacement, zeros):
    p = torch.rand(*shape, generator=torch.Generator().manual_seed(1), dtype=tdt)
    if zeros:
        p[..., ::3] = 0
    nonzero = shape[-1] - (len(range(0, shape[-1], 3)) if zeros else 0)
    k = nonzero if k == "all" else k
    if not replacement and k > nonzero:
        return
    g, tg = pair(0)
    theirs = torch.multinomial(p, k, replacement, generator=tg)
    pn = p.view(torch.int16).numpy().view(np.float16) if tdt == torch.float16 else p.numpy()
    assert same(R.multinomial(g, pn, k, replacement), theirs)
    assert same_state(g, tg)


# ----------------------------------------------------------------------------- poisson
@pytest.mark.parametrize("tdt", [torch.float32, torch.float64])
@pytest.mark.parametrize("rate", [0.0, 0.5, 3.0, 9.99, 10.0, 37.5, 1e4, "mixed"])
def test_poisson(tdt, rate):
    if rate == "mixed":
        rates = torch.rand(700, generator=torch.Generator().manual_seed(2), dtype=tdt) * 40
    else:
        rates = torch.full((700,), rate, dtype=tdt)
    g, tg = pair(0)
    theirs = torch.poisson(rates, generator=tg)
    assert same(R.poisson(g, rates.numpy()).astype(rates.numpy().dtype), theirs)
    assert same_state(g, tg)


# ----------------------------------------------------------------------------- strided outputs
VIEWS = [lambda: torch.empty(4, 5).t(), lambda: torch.empty(6, 8)[:, ::2],
         lambda: torch.empty(3, 4, 5).permute(2, 0, 1), lambda: torch.empty(2, 3).t(),
         lambda: torch.empty(8, 6)[::2], lambda: torch.empty(40)[::2]]
FILLS = [
    (lambda x, tg: x.uniform_(generator=tg), lambda g, n, c: R.uniform(g, (n,), ember.float32)),
    (lambda x, tg: x.normal_(generator=tg),
     lambda g, n, c: R.normal(g, (n,), ember.float32, contiguous=c)),
    (lambda x, tg: x.bernoulli_(0.5, generator=tg),
     lambda g, n, c: R.bernoulli_scalar(g, (n,), 0.5).astype(np.float32)),
    (lambda x, tg: x.exponential_(generator=tg),
     lambda g, n, c: R.exponential(g, (n,), ember.float32)),
    (lambda x, tg: x.random_(0, 100, generator=tg),
     lambda g, n, c: R.random_range(g, (n,), ember.float32, 0, 100)),
]


@pytest.mark.parametrize("view", range(len(VIEWS)))
@pytest.mark.parametrize("fill", range(len(FILLS)))
def test_strided_outputs_fill_in_memory_order(view, fill):
    """Values go out in memory order; normal_ on a non-contiguous output, however large, takes
    the one-at-a-time sampler."""
    x = VIEWS[view]()
    g, tg = pair(0)
    FILLS[fill][0](x, tg)
    flat = FILLS[fill][1](g, x.numel(), x.is_contiguous())
    ours = np.empty(x.numel(), np.float32)
    ours[R.fill_order(tuple(x.shape), x.stride())] = flat
    assert same(ours.reshape(tuple(x.shape)), x.contiguous())
    assert same_state(g, tg)


# ----------------------------------------------------------------------------- call chains
def test_linear_and_conv_init_are_uniform_draws():
    """nn.Linear / nn.Conv2d: kaiming_uniform_(a=sqrt(5)) on the weight, i.e.
    uniform_(-b, b) with b = sqrt(2 / (1 + 5)) * sqrt(3 / fan_in), then the bias
    uniform_(-1/sqrt(fan_in), 1/sqrt(fan_in)), both from the global generator."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(7, 5)
    conv = torch.nn.Conv2d(3, 4, 3)
    g = Generator().manual_seed(0)
    for mod, shape, fan_in in [(lin, (5, 7), 7), (conv, (4, 3, 3, 3), 27)]:
        bound = np.sqrt(2.0 / 6) * np.sqrt(3.0 / fan_in)
        assert same(R.uniform(g, shape, ember.float32, -bound, bound), mod.weight.detach())
        b = 1 / np.sqrt(fan_in)
        assert same(R.uniform(g, shape[:1], ember.float32, -b, b), mod.bias.detach())
    assert same_state(g, torch.default_generator)


def test_dataloader_shuffle_chain():
    """A DataLoader iterator first draws its base seed (random_() on an int64 scalar), then
    RandomSampler draws its own seed the same way, seeds a fresh generator with it and takes
    randperm(n) from that."""
    torch.manual_seed(5)
    batches = [b.tolist() for b in torch.utils.data.DataLoader(list(range(10)), batch_size=4,
                                                                  shuffle=True)]
    g = Generator().manual_seed(5)
    R.random_full(g, (), ember.int64)                    # the iterator's base seed
    seed = int(R.random_full(g, (), ember.int64))        # the sampler's generator seed
    perm = R.randperm(Generator().manual_seed(seed), 10, ember.int64).tolist()
    assert sum(batches, []) == perm
    assert same_state(g, torch.default_generator)


# ----------------------------------------------------------------------------- complex dtypes
@pytest.mark.parametrize("tdt,edt", [(torch.complex64, ember.complex64),
                                     (torch.complex128, ember.complex128)])
@pytest.mark.parametrize("n", [1, 3, 7, 8, 20, 1001])
def test_complex_rand_and_randn(tdt, edt, n):
    g, tg = pair(0)
    assert same(R.uniform_complex(g, (n,), edt), torch.rand(n, generator=tg, dtype=tdt))
    theirs = torch.randn(n, generator=tg, dtype=tdt)
    ours = R.normal_complex(g, (n,), edt)
    assert same_state(g, tg)
    assert same(ours, theirs)


# ----------------------------------------------------------------------------- gamma
GAMMA_ALPHAS = [0.0, 1e-3, 0.01, 0.3, 0.5, 0.999, 1.0, 1.5, 2.5, 7.0, 30.0, 1000.0, 1e6]


@pytest.mark.parametrize("tdt", [torch.float32, torch.float64])
@pytest.mark.parametrize("seed", [0, 1, 2 ** 40 + 7])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 1000])
def test_standard_gamma(tdt, seed, n):
    """torch._standard_gamma: Marsaglia-Tsang per element with torch's scalar normals (and
    their cache, left odd by a first randn(3)) and float64 uniforms; values and state."""
    g, tg = pair(seed)
    R.normal(g, (3,), ember.float64)
    torch.randn(3, generator=tg, dtype=torch.float64)
    alpha = torch.tensor((GAMMA_ALPHAS * (n // len(GAMMA_ALPHAS) + 1))[:n], dtype=tdt)
    theirs = torch._standard_gamma(alpha, generator=tg)
    assert same(R.standard_gamma(g, alpha.numpy()), theirs)
    assert same_state(g, tg)


def test_standard_gamma_strided_alpha():
    """A transposed alpha: the draws go in the output's (C) order, as torch's iterator runs
    over a fresh contiguous output."""
    g, tg = pair(4)
    alpha = (torch.rand(6, 5, generator=torch.Generator().manual_seed(1)) * 4).t()
    theirs = torch._standard_gamma(alpha, generator=tg)
    assert same(R.standard_gamma(g, alpha.numpy()), theirs)
    assert same_state(g, tg)


def test_standard_gamma_statistics():
    """Large samples have Gamma's mean and variance (alpha both sides of 1)."""
    g = Generator().manual_seed(0)
    for a in (0.4, 3.0):
        x = R.standard_gamma(g, np.full(20000, a))
        assert abs(x.mean() - a) < 4 * np.sqrt(a / 20000)
        assert abs(x.var() / a - 1) < 0.08


# ----------------------------------------------------------------------------- binomial
@pytest.mark.parametrize("tdt", [torch.float32, torch.float64])
@pytest.mark.parametrize("seed", [0, 1, 2 ** 40 + 7])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 1000])
def test_binomial(tdt, seed, n):
    """torch.binomial: inversion below count * q = 10, BTRS from there (q the smaller of p
    and 1 - p), the edge cases (count 0, p 0 or 1, a fractional count); values and state."""
    counts = [0.0, 1.0, 2.5, 5.0, 10.0, 20.0, 37.0, 100.0, 1000.0, 1e5, 3.0]
    src = torch.Generator().manual_seed(seed + 10)
    count = torch.tensor((counts * (n // len(counts) + 1))[:n], dtype=tdt)
    prob = torch.rand(n, generator=src, dtype=tdt)
    prob[:3] = torch.tensor([0.0, 1.0, 0.5], dtype=tdt)[:n]
    g, tg = pair(seed)
    theirs = torch.binomial(count, prob, generator=tg)
    ours = R.binomial(g, count.numpy().astype(np.float64), prob.numpy().astype(np.float64))
    assert same(ours.astype(count.numpy().dtype), theirs)
    assert same_state(g, tg)


def test_binomial_statistics():
    g = Generator().manual_seed(0)
    for count, p in ((20.0, 0.3), (500.0, 0.9), (4.0, 0.05)):
        x = R.binomial(g, np.full(20000, count), np.full(20000, p))
        assert abs(x.mean() - count * p) < 4 * np.sqrt(count * p * (1 - p) / 20000)
        assert abs(x.var() / (count * p * (1 - p)) - 1) < 0.08


@pytest.mark.parametrize("n", [65535, 65536, 65537, 1000003])
def test_rand_float32_across_blocks(n):
    """float32 uniforms of a large n are made a block of words at a time: the same values
    and stream as all at once (and as torch)."""
    g, tg = pair(9)
    assert same(R.uniform(g, (n,), ember.float32), torch.rand(n, generator=tg))
    assert same_state(g, tg)


@pytest.mark.parametrize("seed", range(8))
def test_small_draws_served_by_blocks_keep_torch_stream(seed):
    """Small draws are served from a block drawn ahead to the end of NumPy's twist block
    (as words, word lists, float32 uniforms and Box-Muller pairs; large uint32 draws come
    from NumPy's uint32 integers of the same twister): random interleavings of
    them with large draws, state reads and state round trips give torch's words, uniforms,
    normals and state."""
    rng = np.random.default_rng(seed)
    g, tg = pair(seed)
    for _ in range(40):
        kind = int(rng.integers(0, 6))
        n = int(rng.choice([0, 1, 3, 4, 15, 63, 64, 65, 600, 624, 2000]))
        if kind == 0:
            words = np.concatenate([g.words(n), np.array(g.word_list(n), np.uint64),
                                    g.words32(n).astype(np.uint64)])
            ref = torch.empty(3 * n, dtype=torch.int64).random_(0, 2 ** 28 - 1, generator=tg)
            assert np.array_equal(words % np.uint64(2 ** 28 - 1), ref.numpy().astype(np.uint64))
        elif kind == 1 and n <= 64:
            assert same(g.uniform_floats(n), torch.rand(n, generator=tg))
        elif kind == 2 and n < 16:
            assert same(R.normals_small(g, n), torch.randn(n, generator=tg, dtype=torch.float64))
        elif kind == 3:
            assert same(R.normal(g, (n,), ember.float32), torch.randn(n, generator=tg))
        elif kind == 4:
            g2 = Generator()
            g2.set_state(g.get_state())
            g = g2
        assert same_state(g, tg)
