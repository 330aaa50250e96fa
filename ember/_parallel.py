"""Kernels in cache-sized blocks, the heavy ones shared out over ember's threads (a small pool).

PyTorch runs its elementwise CPU kernels on every intra-op thread; NumPy runs each ufunc on one.
NumPy does release the GIL inside a ufunc's loop over a plain numeric array, so Python threads
that each call ufuncs on their own slices compute at the same time. `for_blocks` splits a
kernel's index range into cache-sized blocks (32K elements: every pass of a many-pass formula
over one block stays in L2, see _fast_kernels.py) and lets the calling thread and up to
`get_num_threads() - 1` pool threads take blocks from one shared iterator until none are left.
Taking blocks one at a time, rather than a fixed half each, matters on a busy machine: a pool
thread that waits for a core holds up at most the block it has taken, never half the work.

Small arrays stay on the calling thread: handing a block to another thread costs some 20-50 us.

Only "heavy" blocks are shared out (heavy=True: each block is a few long calls, a GEMM or a
whole chunk's copy). A block of many short ufunc calls (a polynomial, a row softmax, an
optimizer's update: a few microseconds each) stays on the calling thread: every call
releases and retakes the GIL, and with two threads taking turns the handoffs (a futex wakeup,
slow on a virtual machine) cost more than the second core gives. Measured on the quiet 2-core
machine, `python bench/kernels.py --threads 2`, blocks shared out vs not: GELU 4.7 vs 3.9 ms,
layer_norm 1.5 vs 0.9 ms, softmax 1.5 vs 1.3 ms, sigmoid 2.0 vs 1.6 ms; but conv2d (chunk
GEMMs) 44 vs 75 ms and max_pool2d 8.5 vs 10.0 ms.
"""
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._threads import get_num_threads

BLOCK = 32768               # elements per block
PARALLEL_FROM = 4 * BLOCK   # smaller ranges run on the calling thread alone

_pool = None
_pool_size = 0
_pool_lock = threading.Lock()


def _get_pool(workers):
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < workers:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ember-kernel")
            _pool_size = workers
    return _pool


def threads_for(n, heavy=False):
    """How many threads a kernel over n elements uses (heavy: see the module's docstring)."""
    if not heavy or n < PARALLEL_FROM:
        return 1
    return max(1, min(get_num_threads(), -(-n // BLOCK)))


def for_blocks(body, n, block=BLOCK, heavy=False):
    """Call body(start, stop) for consecutive blocks covering range(n), on up to
    get_num_threads() threads at once when the blocks are heavy (else on the calling thread).
    body must only write its own [start, stop) slice of its outputs; scratch arrays must
    come from `scratch` (one set per thread)."""
    threads = threads_for(n, heavy)
    if threads == 1:
        for start in range(0, n, block):
            body(start, min(start + block, n))
        return
    starts = iter(range(0, n, block))       # shared: next() on it is atomic under the GIL

    def take_blocks():
        for start in starts:
            body(start, min(start + block, n))

    pending = [_get_pool(threads - 1).submit(take_blocks) for _ in range(threads - 1)]
    take_blocks()
    for future in pending:
        future.result()                     # re-raises a pool thread's exception here


_local = threading.local()


def scratch(count, dtype, size=BLOCK):
    """`count` scratch arrays of `size` elements of `dtype`, owned by the calling thread and
    reused by its later calls (allocating 128 KB per block would cost a page-faulting mmap)."""
    key = (count, np.dtype(dtype), size)
    cache = getattr(_local, "buffers", None)
    if cache is None:
        cache = _local.buffers = {}
    arrays = cache.get(key)
    if arrays is None:
        arrays = cache[key] = [np.empty(size, dtype) for _ in range(count)]
    return arrays
