"""ember/_threads.py's thread policy for products: which BLAS thread count each product runs
on, with a stand-in BLAS pool and clock (so that nothing here depends on the machine's speed
or load), and that the pool's own setting is always restored."""
import numpy as np
import pytest

from ember import _threads


class FakePool:
    """A BLAS pool of `threads` threads and a clock that a product advances by the time it
    takes on the pool's current setting."""

    def __init__(self, threads, cost):
        self.threads, self.cost, self.now, self.seen = threads, cost, 0.0, []

    def get(self):
        return self.threads

    def set(self, n):
        self.threads = n

    def perf_counter(self):
        return self.now

    def product(self, a, b):
        self.seen.append(self.threads)
        self.now += self.cost[self.threads]
        return a @ b


@pytest.fixture
def pool(monkeypatch):
    def make(threads, cost):
        fake = FakePool(threads, cost)
        monkeypatch.setattr(_threads, "_pools", [(fake.get, fake.set)])
        monkeypatch.setattr(_threads, "_RECORDS", {})
        monkeypatch.setattr(_threads, "time", fake)      # (its perf_counter)
        return fake
    return make


def _run(fake, calls, size=_threads.SINGLE_THREAD_PRODUCT):
    a, b = np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)
    for _ in range(calls):
        out = _threads.call_product(fake.product, a, b, size)
        assert fake.threads == 2                         # the pool's setting is restored
        np.testing.assert_array_equal(out, np.full((2, 2), 3, np.float32))
    return fake.seen


def test_two_threads_chosen_where_they_are_faster(pool):
    fake = pool(2, {1: 1.0, 2: 0.5})
    seen = _run(fake, 40)
    # one of each first; then the pool's threads, with one thread tried again once in 4
    # calls, then (as it keeps losing) once in 8, 16, ... calls
    assert seen[:2] == [1, 2]
    ones = [i for i, n in enumerate(seen) if n == 1]
    assert ones == [0, 5, 13, 29]


def test_one_thread_chosen_where_two_are_slower(pool):
    fake = pool(2, {1: 1.0, 2: 3.0})
    seen = _run(fake, 40)
    assert seen[:2] == [1, 2]
    assert [i for i, n in enumerate(seen) if n == 2] == [1, 5, 13, 29]


def test_the_choice_follows_a_change_of_speed(pool):
    fake = pool(2, {1: 1.0, 2: 0.5})
    _run(fake, 10)
    fake.cost = {1: 1.0, 2: 4.0}          # the machine gets busy: two threads now lose
    fake.seen = []
    seen = _run(fake, 30)
    assert seen[-10:] == [1] * 10


def test_one_slow_call_does_not_flip_the_choice(pool):
    # a product on two threads that stalls once (the other core taken for a moment) leaves
    # the pool's threads the faster way; a lasting slowdown flips it within a few calls
    fake = pool(2, {1: 1.0, 2: 0.5})
    _run(fake, 10)
    fake.cost = {1: 1.0, 2: 20.0}
    _run(fake, 1)
    fake.cost = {1: 1.0, 2: 0.5}
    fake.seen = []
    seen = _run(fake, 10)
    assert seen.count(2) >= 8
    fake.cost = {1: 1.0, 2: 2.0}
    fake.seen = []
    assert _run(fake, 10)[-6:].count(1) >= 5      # (one of them may be a probe of 2)


def test_small_products_run_on_one_thread_and_one_thread_pools_are_left_alone(pool):
    fake = pool(2, {1: 1.0, 2: 0.5})
    assert _run(fake, 3, size=_threads.SINGLE_THREAD_PRODUCT - 1) == [1, 1, 1]
    fake.seen = []
    assert _run(fake, 2, size=_threads.BLAS_SPLITS_FROM - 1) == [2, 2]   # (OpenBLAS's own)
    single = pool(1, {1: 1.0})
    a = np.ones((2, 2), np.float32)
    _threads.call_product(single.product, a, a, 1 << 40)
    assert single.seen == [1] and single.threads == 1


def test_sizes_and_thread_counts_keep_separate_records(pool):
    fake = pool(2, {1: 1.0, 2: 0.5})
    _run(fake, 3, size=1 << 24)
    _run(fake, 3, size=1 << 26)
    assert sorted(_threads._RECORDS) == [(25, 2), (27, 2)]
