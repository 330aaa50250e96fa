"""ember._parallel: kernels split into blocks over several threads give the same bits as on
one thread, and a failing block's exception reaches the caller."""
import numpy as np
import pytest

import ember
from ember import _fast_kernels, _parallel


@pytest.fixture
def two_threads():
    before = ember.get_num_threads()
    ember.set_num_threads(2)
    yield
    ember.set_num_threads(before)


def test_every_block_is_visited_once(two_threads):
    n = _parallel.PARALLEL_FROM * 3 + 17          # several blocks and a short last one
    assert _parallel.threads_for(n) == 2
    seen = np.zeros(n, np.int64)

    def body(s, e):
        seen[s:e] += 1
    _parallel.for_blocks(body, n)
    assert (seen == 1).all()


def test_small_ranges_stay_on_the_calling_thread(two_threads):
    assert _parallel.threads_for(_parallel.PARALLEL_FROM - 1) == 1


def test_a_block_that_raises_reaches_the_caller(two_threads):
    def body(s, e):
        if s >= _parallel.BLOCK * 3:
            raise ValueError("block failed")
    with pytest.raises(ValueError, match="block failed"):
        _parallel.for_blocks(body, _parallel.PARALLEL_FROM * 2)


@pytest.mark.parametrize("kernel", ["gelu", "gelu_backward", "sigmoid"])
def test_threaded_kernels_give_the_single_thread_bits(kernel):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(_parallel.PARALLEL_FROM * 2 + 5) * 4).astype(np.float32)
    g = rng.standard_normal(x.size).astype(np.float32)
    run = {"gelu": lambda: _fast_kernels.gelu_f32(x),
           "gelu_backward": lambda: _fast_kernels.gelu_backward_f32(g, x),
           "sigmoid": lambda: _fast_kernels.sigmoid_f32(x)}[kernel]
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        one = run()
        ember.set_num_threads(2)
        two = run()
    finally:
        ember.set_num_threads(before)
    assert one.dtype == two.dtype == np.float32
    np.testing.assert_array_equal(one.view(np.uint32), two.view(np.uint32))
