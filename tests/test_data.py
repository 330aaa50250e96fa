"""ember.utils.data against torch.utils.data.

ember's random numbers are not torch's: unshuffled loading and loading through explicit index
orders are compared with torch batch for batch; shuffling is checked for being a permutation
and for being reproducible under a seed.
"""
import collections
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata
from differential import catch, same, warnings_of


def assert_same(e, t):
    """A batch from ember equals the batch from torch: same structure, dtypes and values."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), type(e)
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    elif isinstance(t, dict):
        assert type(e) is type(t) and list(e) == list(t)
        for k in t:
            assert_same(e[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert type(e).__name__ == type(t).__name__ and len(e) == len(t)
        for a, b in zip(e, t):
            assert_same(a, b)
    else:
        assert e == t


def both_loaders(dataset_e, dataset_t, **kw):
    return list(edata.DataLoader(dataset_e, **kw)), list(tdata.DataLoader(dataset_t, **kw))


Point = collections.namedtuple("Point", "x y")


class MixedDataset:
    """Samples of every kind default_collate knows, as a plain object (duck-typed dataset)."""

    def __init__(self, tensor_mod):
        self.tm = tensor_mod

    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {
            "tensor": self.tm.arange(3, dtype=self.tm.float32) * i,
            "array": np.arange(4, dtype=np.int32).reshape(2, 2) + i,
            "np_scalar": np.float64(i) / 2,
            "float": i * 0.5,
            "int": i,
            "bool": i % 2 == 0,
            "str": f"s{i}",
            "tuple": (i, float(i)),
            "list": [i, i + 1],
            "named": Point(i, np.float32(i)),
        }


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (7, False)])
def test_default_collate_matches_torch(batch_size, drop_last):
    e, t = both_loaders(MixedDataset(ember), MixedDataset(torch), batch_size=batch_size,
                        drop_last=drop_last)
    assert len(e) == len(t)
    for a, b in zip(e, t):
        assert_same(a, b)


def test_collate_errors_match_torch():
    for bad in ([object(), object()], [[1, 2], [3]]):
        with pytest.raises(Exception) as te:
            tdata.default_collate(bad)
        with pytest.raises(type(te.value)) as ee:
            edata.default_collate(bad)
        assert str(ee.value) == str(te.value)


def test_no_batching_converts_like_torch():
    data = [np.array([1, 2]), np.array([3.0])]
    e, t = both_loaders(data, data, batch_size=None)
    for a, b in zip(e, t):
        assert_same(a, b)
    assert_same(edata.default_convert((np.array([1]), 2)),
                tdata.default_convert((np.array([1]), 2)))


def test_tensor_dataset_subset_concat():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10)
    de = edata.TensorDataset(ember.tensor(x), ember.tensor(y))
    dt = tdata.TensorDataset(torch.tensor(x), torch.tensor(y))
    assert len(de) == len(dt) == 10
    idx = [7, 2, 2, 9]
    se, st = edata.Subset(de, idx), tdata.Subset(dt, idx)
    ce, ct = se + de, st + dt
    assert isinstance(ce, edata.ConcatDataset) and len(ce) == len(ct) == 14
    for i in [0, 3, 4, 13, -1, -14]:
        assert_same(ce[i], ct[i])
    for a, b in zip(*both_loaders(ce, ct, batch_size=4)):
        assert_same(a, b)
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        edata.TensorDataset(ember.zeros(3), ember.zeros(4))
    with pytest.raises(ValueError, match="absolute value of index"):
        ce[-15]


def test_explicit_orders_match_torch():
    data = np.arange(100, 120)      # an array also takes a list of indices (batch_size=None)
    order = [5, 3, 19, 0, 0, 7, 11, 2]
    batches = [[1, 2], [19, 18, 17], [0]]
    pairs = [
        ({"sampler": order, "batch_size": 3}, {}),
        ({"sampler": order, "batch_size": 3, "drop_last": True}, {}),
        ({"batch_sampler": batches}, {}),
        ({"sampler": edata.BatchSampler(order, 3, False), "batch_size": None},
         {"sampler": tdata.BatchSampler(order, 3, False), "batch_size": None}),
    ]
    for kw_e, kw_t in pairs:
        e = list(edata.DataLoader(data, **kw_e))
        t = list(tdata.DataLoader(data, **(kw_t or kw_e)))
        assert len(e) == len(t)
        for a, b in zip(e, t):
            assert_same(a, b)
    for n, bs, drop in [(10, 3, False), (10, 3, True), (9, 3, True), (1, 4, False)]:
        assert len(edata.DataLoader(range(n), batch_size=bs, drop_last=drop)) == \
            len(tdata.DataLoader(range(n), batch_size=bs, drop_last=drop))
        assert list(edata.BatchSampler(range(n), bs, drop)) == \
            list(tdata.BatchSampler(range(n), bs, drop))


def test_shuffle_is_a_seeded_permutation():
    data = list(range(50))

    def epoch(seed):
        g = ember.Generator().manual_seed(seed)
        loader = edata.DataLoader(data, batch_size=8, shuffle=True, generator=g)
        return [b.tolist() for b in loader]

    first = epoch(1)
    assert [len(b) for b in first] == [8] * 6 + [2]
    flat = sum(first, [])
    assert sorted(flat) == data and flat != data
    assert epoch(1) == first and epoch(2) != first
    # without a generator: reproducible through ember.manual_seed, different per epoch
    ember.manual_seed(0)
    loader = edata.DataLoader(data, batch_size=50, shuffle=True)
    e1, e2 = next(iter(loader)).tolist(), next(iter(loader)).tolist()
    ember.manual_seed(0)
    assert next(iter(loader)).tolist() == e1 and e1 != e2 and sorted(e2) == data


def test_random_sampler_variants():
    g = ember.Generator().manual_seed(3)
    s = edata.RandomSampler(range(10), num_samples=25, generator=g)
    drawn = list(s)
    assert len(s) == len(drawn) == 25
    assert sorted(drawn[:10]) == list(range(10)) and sorted(drawn[10:20]) == list(range(10))
    assert len(set(drawn[20:])) == 5
    r = list(edata.RandomSampler(range(4), replacement=True, num_samples=200, generator=g))
    assert len(r) == 200 and set(r) == {0, 1, 2, 3}
    sub = list(edata.SubsetRandomSampler([10, 20, 30, 40], generator=g))
    assert sorted(sub) == [10, 20, 30, 40]
    w = list(edata.WeightedRandomSampler([0.0, 1.0, 3.0, 0.0], 400, generator=g))
    assert set(w) == {1, 2} and 0.6 < w.count(2) / 400 < 0.9
    w = list(edata.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False, generator=g))
    assert sorted(w) == [0, 1, 2]
    a = list(edata.RandomSampler(range(30), generator=ember.Generator().manual_seed(9)))
    b = list(edata.RandomSampler(range(30), generator=ember.Generator().manual_seed(9)))
    assert a == b


def test_infinite_random_sampler_draws_lazily():
    # minGPT-style trainers sample "forever": torch draws 32 indices at a time, so the first
    # batches come at once and the whole draw (10**10 indices) is never built
    import itertools
    for T, data in ((torch, tdata), (ember, edata)):
        s = data.RandomSampler(range(7), replacement=True, num_samples=10**10)
        assert len(s) == 10**10
        first = list(itertools.islice(iter(s), 100))
        assert len(first) == 100 and set(first) <= set(range(7))
        loader = data.DataLoader(list(range(7)), batch_size=5, sampler=s)
        batch = next(iter(loader))
        assert tuple(batch.shape) == (5,) and int(batch.max()) < 7


@pytest.mark.parametrize("make", [
    lambda m: m.BatchSampler(range(3), 0, False),
    lambda m: m.BatchSampler(range(3), 2, "x"),
    lambda m: m.BatchSampler([1], True, False),
    lambda m: m.WeightedRandomSampler([[1.0, 2.0]], 2),
    lambda m: m.WeightedRandomSampler([1.0, 2.0], 0),
    lambda m: m.WeightedRandomSampler([1.0, 2.0], 2, "x"),
    lambda m: m.RandomSampler(range(3), replacement=1),
    lambda m: m.RandomSampler(range(3), num_samples=0),
    lambda m: m.DataLoader(range(3), shuffle=True, sampler=[0]),
    lambda m: m.DataLoader(range(3), batch_sampler=[[0]], batch_size=2),
    lambda m: m.DataLoader(range(3), num_workers=-1),
    lambda m: m.DataLoader(range(3), timeout=-1),
    lambda m: m.DataLoader(range(3), prefetch_factor=2),
    lambda m: m.DataLoader(range(3), batch_size=None, drop_last=True),
    lambda m: m.random_split(range(3), [1, 1]),
])
def test_argument_errors_match_torch(make):
    with pytest.raises(Exception) as te:
        make(tdata)
    with pytest.raises(type(te.value)) as ee:
        make(edata)
    assert str(ee.value) == str(te.value)


def test_pin_memory_warns_like_torch():
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        list(tdata.DataLoader(range(4), pin_memory=True))
    with warnings.catch_warnings(record=True) as ew:
        warnings.simplefilter("always")
        batches = list(edata.DataLoader(range(4), pin_memory=True, batch_size=2))
    assert [str(w.message) for w in ew] == [str(w.message) for w in tw]
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3]]


def test_random_split():
    g = ember.Generator().manual_seed(0)
    parts = edata.random_split(range(10), [3, 7], generator=g)
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    again = edata.random_split(range(10), [3, 7], generator=ember.Generator().manual_seed(0))
    assert list(again[0]) == list(parts[0])
    for fracs in ([0.5, 0.3, 0.2], [0.34, 0.33, 0.33], [0.1, 0.9]):
        e = edata.random_split(range(11), fracs, generator=g)
        t = tdata.random_split(range(11), fracs, generator=torch.Generator().manual_seed(0))
        assert [len(p) for p in e] == [len(p) for p in t]
    messages = []
    for mod in (tdata, edata):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            parts = mod.random_split(range(2), [0.1, 0.1, 0.8])
        messages.append(([str(x.message) for x in w], [len(p) for p in parts]))
    assert messages[0] == messages[1]
    assert "Length of split at index 1 is 0" in messages[1][0][0]


class Squares(edata.Dataset):
    def __len__(self):
        return 23

    def __getitem__(self, i):
        return ember.tensor([i * i]), i


class TorchSquares(tdata.Dataset):
    def __len__(self):
        return 23

    def __getitem__(self, i):
        return torch.tensor([i * i]), i


def _record_worker(worker_id):
    import random as pyrandom
    info = edata.get_worker_info()
    assert info.id == worker_id
    pyrandom.seed(info.seed)


@pytest.mark.parametrize("num_workers", [1, 3])
def test_workers_keep_order_and_match_torch(num_workers):
    e = list(edata.DataLoader(Squares(), batch_size=4, num_workers=num_workers,
                              worker_init_fn=_record_worker))
    t = list(tdata.DataLoader(TorchSquares(), batch_size=4))
    assert len(e) == len(t) == 6
    for a, b in zip(e, t):
        assert_same(a, b)
    assert edata.get_worker_info() is None


class WorkerIds(edata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = edata.get_worker_info()
        return info.id, info.num_workers, int(ember.randint(0, 10 ** 9, (1,)))


def test_worker_info_and_distinct_seeds():
    out = list(edata.DataLoader(WorkerIds(), batch_size=2, num_workers=2))
    ids = [b[0].tolist() for b in out]
    assert ids == [[0, 0], [1, 1], [0, 0], [1, 1]]       # round robin over the workers
    assert all(b[1].tolist() == [2, 2] for b in out)
    assert out[0][2].tolist() != out[1][2].tolist()       # each worker has its own seed


class Failing(edata.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise KeyError("bad sample 3")
        return i


def test_worker_error_is_raised_in_main_process():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process"):
        list(edata.DataLoader(Failing(), batch_size=2, num_workers=2))
    with pytest.raises(KeyError, match="bad sample 3"):
        list(edata.DataLoader(Failing(), batch_size=2))


class Crashing(edata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        import os
        os._exit(3)          # a worker that dies without a word


def test_dead_worker_raises_instead_of_hanging():
    with pytest.raises(RuntimeError,
                       match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(edata.DataLoader(Crashing(), num_workers=1))


class Stream(edata.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


class TorchStream(tdata.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_size=3, num_workers=2),
                                dict(batch_size=2, num_workers=2, drop_last=True)])
def test_iterable_dataset_matches_torch(kw):
    e, t = both_loaders(Stream(7), TorchStream(7), **kw)
    assert len(e) == len(t)
    for a, b in zip(e, t):
        assert_same(a, b)
    assert len(edata.DataLoader(Stream(7), **kw)) == len(tdata.DataLoader(TorchStream(7), **kw))
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        edata.DataLoader(Stream(3), shuffle=True)


def test_persistent_workers_serve_several_epochs():
    loader = edata.DataLoader(Squares(), batch_size=5, num_workers=2, persistent_workers=True)
    expected = [b[1].tolist() for b in tdata.DataLoader(TorchSquares(), batch_size=5)]
    first = [b[1].tolist() for b in loader]
    pool = loader._workers_iter
    pids = [w.pid for w in pool._workers]
    assert all(w.is_alive() for w in pool._workers)
    partial = iter(loader)                      # an epoch abandoned half way ...
    next(partial)
    second = [b[1].tolist() for b in loader]    # ... does not leak into the next one
    assert first == second == expected
    assert [w.pid for w in loader._workers_iter._workers] == pids     # the same processes
    stream = edata.DataLoader(Stream(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert [b.tolist() for b in stream] == [b.tolist() for b in stream] == \
        [[0, 1], [0, 1], [2, 3], [2, 3], [4], [4]]
    pool._shutdown()
    stream._workers_iter._shutdown()
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        edata.DataLoader(range(3), persistent_workers=True)


def test_out_of_order_delivery_keeps_every_batch():
    loader = edata.DataLoader(Squares(), batch_size=3, num_workers=2, in_order=False)
    got = sorted(b[1].tolist() for b in loader)
    assert got == [list(range(i, min(i + 3, 23))) for i in range(0, 23, 3)]


class Slow(edata.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        import time
        time.sleep(30)
        return i


def test_timeout_raises_like_torch():
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.5 seconds$"):
        list(edata.DataLoader(Slow(), num_workers=1, timeout=0.5))


# default_collate on random nested samples: the same structure, dtypes and values as torch
from hypothesis import given, settings, strategies as st  # noqa: E402

_leaves = st.one_of(
    st.integers(-5, 5).map(lambda i: ("int", i)),
    st.floats(-2, 2, allow_nan=False, width=32).map(lambda f: ("float", f)),
    st.booleans().map(lambda b: ("bool", b)),
    st.text("ab", max_size=2).map(lambda s: ("str", s)),
    st.sampled_from(["int32", "float32", "float64", "uint8"]).map(lambda d: ("array", d)),
    st.sampled_from(["int64", "float32"]).map(lambda d: ("tensor", d)),
)
_specs = st.recursive(_leaves, lambda inner: st.one_of(
    st.lists(inner, min_size=1, max_size=3).map(lambda xs: ("list", xs)),
    st.lists(inner, min_size=1, max_size=3).map(lambda xs: ("tuple", xs)),
    st.dictionaries(st.sampled_from("xyz"), inner, min_size=1, max_size=3).map(
        lambda d: ("dict", d)),
    st.tuples(inner, inner).map(lambda xy: ("named", xy)),
), max_leaves=6)


def build(spec, mod, i):
    """Sample number i of a spec, with tensors from `mod` (ember or torch)."""
    kind, value = spec
    if kind == "int":
        return value + i
    if kind == "float":
        return value * (i + 1)
    if kind == "bool":
        return value ^ (i % 2 == 1)
    if kind == "str":
        return value + str(i)
    if kind == "array":
        return (np.arange(6).reshape(2, 3) * (i + 1)).astype(value)
    if kind == "tensor":
        return mod.arange(4, dtype=getattr(mod, value)) + i
    if kind == "list":
        return [build(s, mod, i) for s in value]
    if kind == "tuple":
        return tuple(build(s, mod, i) for s in value)
    if kind == "dict":
        return {k: build(s, mod, i) for k, s in value.items()}
    return Point(build(value[0], mod, i), build(value[1], mod, i))


@settings(max_examples=40, deadline=None)
@given(_specs, st.integers(1, 4))
def test_default_collate_random_structures(spec, batch):
    e = edata.default_collate([build(spec, ember, i) for i in range(batch)])
    t = tdata.default_collate([build(spec, torch, i) for i in range(batch)])
    assert_same(e, t)


def batches(T, data, **kw):
    return list(T.utils.data.DataLoader(data, **kw))


def test_default_collate_element_types():
    samples = [{"f": 1.5, "i": 2, "b": True, "s": "a", "np": np.ones(2, np.float16),
                "n32": np.int32(4), "t": (1, 2.0), "pt": Point(1, np.arange(2))}] * 5
    same(lambda T: [(b, type(b["pt"]).__name__, type(b["t"]).__name__)
                    for b in batches(T, samples, batch_size=2)])
    same(lambda T: batches(T, samples, batch_size=None))
    same(lambda T: batches(T, samples, batch_size=2, drop_last=True))


def test_loader_lengths_and_custom_collate():
    same(lambda T: [len(T.utils.data.DataLoader(list(range(7)), **kw)) for kw in
                    [{}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                     {"batch_size": None}, {"batch_sampler": [[0, 1], [4]]}]])
    same(lambda T: batches(T, list(range(5)), batch_size=2, collate_fn=lambda b: b[::-1]))


def test_shuffle_with_generator_is_a_permutation():
    def scenario(T):
        got = batches(T, list(range(10)), batch_size=3, shuffle=True,
                      generator=T.Generator().manual_seed(3))
        again = batches(T, list(range(10)), batch_size=3, shuffle=True,
                        generator=T.Generator().manual_seed(3))
        flat = [v for b in got for v in b.tolist()]
        return [len(b) for b in got], sorted(flat), [b.dtype for b in got], \
            all(a.tolist() == b.tolist() for a, b in zip(got, again))
    same(scenario)


def test_sampler_option_errors():
    def scenario(T):
        DL = T.utils.data.DataLoader
        data = list(range(5))
        return [catch(DL, data, sampler=[0, 1], shuffle=True),
                catch(DL, data, batch_sampler=[[0]], batch_size=2),
                catch(DL, data, batch_sampler=[[0]], shuffle=True),
                catch(DL, data, batch_sampler=[[0]], sampler=[0]),
                catch(DL, data, batch_sampler=[[0]], drop_last=True),
                catch(DL, data, batch_size=None, drop_last=True)]
    same(scenario)


def make_stream(T, n, with_len):
    class Stream(T.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(n))
    if with_len:
        Stream.__len__ = lambda self: n
    return Stream()


def test_iterable_dataset_batches_and_len():
    for kw in [{"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None}]:
        same(lambda T: (batches(T, make_stream(T, 7, False), **kw),
                        len(T.utils.data.DataLoader(make_stream(T, 7, True), **kw)),
                        catch(len, T.utils.data.DataLoader(make_stream(T, 7, False), **kw))))


@pytest.mark.parametrize("n,lengths", [(10, [0.3, 0.7]), (7, [0.5, 0.5]), (3, [0.1, 0.1, 0.8]),
                                       (10, [0.25] * 4), (10, [-0.5, 1.5]), (10, [0.5, 0.6]),
                                       (10, [1.2, -0.2]), (10, [3, 4]), (10, [11, -1])])
def test_random_split_lengths_and_errors(n, lengths):
    def scenario(T):
        def split():
            parts = T.utils.data.random_split(range(n), lengths,
                                              generator=T.Generator().manual_seed(0))
            return [len(p) for p in parts], sorted(i for p in parts for i in p)
        return warnings_of(lambda: catch(split))
    same(scenario)


def test_concat_subset_tensor_dataset():
    def scenario(T):
        D = T.utils.data
        c = D.ConcatDataset([list(range(3)), list(range(10, 14))])
        sub = D.Subset(D.TensorDataset(T.arange(10)), [5, 2, 7])
        return ([catch(lambda i=i: c[i]) for i in (0, 3, 6, -1, -7, -8, 7)], len(c),
                c.cumulative_sizes, sub[1], sub[[0, 2]], len(sub), sub[-1],
                catch(D.TensorDataset, T.ones(3), T.ones(4)),
                catch(D.ConcatDataset, []),
                catch(D.ConcatDataset, [make_stream(T, 2, True)]))
    same(scenario)
