"""NumPy kernels of the CNN and LSTM paths, in pieces handed to `_parallel.for_blocks`.

Each kernel splits its work into independent pieces (rows of a matrix, samples of a batch).
The heavy pieces (a convolution chunk's GEMMs and copies, a pooling piece) are shared out
over ember's threads, so that with `set_num_threads(n)` up to n threads compute at once
(NumPy releases the GIL inside BLAS calls, copies and ufunc loops); light ones (relu, the
LSTM backward's rows) run in cache-sized blocks on the calling thread (see _parallel.py for
why). Every piece is computed by the same NumPy calls whichever thread takes it, so the
results have the same bits at any thread count.
"""
import numpy as np

from . import _threads
from ._parallel import BLOCK, PARALLEL_FROM, for_blocks, scratch, threads_for
from ._threads import get_num_threads


def parallel_rows(body, rows, row_size, block_elements=2 * BLOCK):
    """body(r0, r1) for consecutive blocks of rows covering range(rows), each block about
    `block_elements` elements (row_size per row), on the calling thread (light blocks)."""
    per_block = max(1, block_elements // max(row_size, 1))
    # (for_blocks counts elements: rows are passed as runs of row_size elements)
    for_blocks(lambda s, e: body(s // row_size, e // row_size), rows * row_size,
               per_block * row_size)


def parallel_samples(body, n, per_sample, chunk):
    """body(s0, s1) for consecutive chunks of `chunk` samples covering range(n) (each
    `per_sample` elements of work), on ember's threads. While more than one thread runs
    them, BLAS keeps to one thread: each chunk's products run on the thread that took it
    (so with fewer chunks than threads, the chunks run in turn and BLAS keeps its threads)."""
    size = n * per_sample
    if threads_for(size, heavy=True) == 1 or -(-n // chunk) < get_num_threads():
        # one thread, or fewer chunks than threads: the chunks in turn, each product on
        # the threads ember's BLAS policy gives it
        for s in range(0, n, chunk):
            body(s, min(s + chunk, n))
        return
    _threads.call_single_threaded(
        lambda: for_blocks(lambda s, e: body(s // per_sample, e // per_sample), size,
                           chunk * per_sample, heavy=True))


def sample_split(n, size):
    """How many samples each piece of a batch of n (size elements in all) takes when a kernel
    runs over the batch on ember's threads; None: run it whole on the calling thread. About
    four pieces per thread: a thread that waits for a core then holds up a small piece."""
    threads = threads_for(size, heavy=True)
    if threads == 1 or n < 2:
        return None
    return max(1, -(-n // (4 * threads)))


def for_sample_pieces(body, n, size, per_piece):
    """body(s0, s1) over pieces of per_piece samples covering range(n), on ember's threads
    (`size`: the batch's elements, as given to sample_split)."""
    per_sample = max(size // n, 1)
    for_blocks(lambda s, e: body(s // per_sample, min(e // per_sample, n)), n * per_sample,
               per_piece * per_sample, heavy=True)


def _flat_pair(a, b=None):
    """a (and b) as flat views when both are C-contiguous float arrays of one shape with
    enough elements to share out over threads; else None. (The choice depends on the size,
    never on the thread count: a kernel's bits must not either.)"""
    if a.dtype.kind != "f" or a.dtype.itemsize < 4 or not a.flags.c_contiguous or \
            a.size < PARALLEL_FROM:
        return None
    if b is not None and (b.shape != a.shape or b.dtype != a.dtype or not b.flags.c_contiguous):
        return None
    return a.reshape(-1), (None if b is None else b.reshape(-1))


def relu(x):
    """max(x, 0) of a large float32/float64 array in cache-sized blocks (NaN stays
    NaN, as np.maximum); None where the array is small, of another dtype or not
    contiguous."""
    flat = _flat_pair(x)
    if flat is None:
        return None
    xf = flat[0]
    out = np.empty_like(xf)
    for_blocks(lambda s, e: np.maximum(xf[s:e], 0, out=out[s:e]), xf.size)
    return out.reshape(x.shape)


def threshold_backward(grad, x, threshold):
    """grad except where x <= threshold (kept where x is NaN), +0 there whatever grad is
    (inf and NaN too), as torch's kernel; in cache-sized blocks. None where not
    applicable (see relu).

    Branch-free and exact: grad's bits ANDed with a mask of all ones (kept) or zeros."""
    flat = _flat_pair(grad, x)
    if flat is None:
        return None
    gf, xf = flat
    bits = np.dtype(f"u{gf.dtype.itemsize}")
    out = np.empty_like(gf)
    g_bits, out_bits = gf.view(bits), out.view(bits)

    def block(s, e):
        mask = scratch(1, bits)[0][:e - s]
        np.less_equal(xf[s:e], threshold, out=mask, casting="unsafe")   # 1: dropped
        mask -= 1                                   # dropped: 0, kept: all ones (wraps)
        np.bitwise_and(g_bits[s:e], mask, out=out_bits[s:e])
    for_blocks(block, gf.size)
    return out.reshape(grad.shape)
