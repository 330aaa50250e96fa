"""ember.set_num_threads / ember.get_num_threads: the threads NumPy's BLAS may use.

ember computes with NumPy, whose heavy ops (matmul, convolution as one GEMM) run in the BLAS
library's thread pool. With threadpoolctl installed (optional) the limit is applied to the
loaded pools at once. Without it, the limit is written to the usual environment variables
(OMP_NUM_THREADS, ...), which only thread pools started afterwards honour.

Thread policy for products (`call_single_threaded`, used by ember's one matrix product): a
product of fewer than SINGLE_THREAD_PRODUCT multiply-adds runs on one BLAS thread whatever the
pool's size. OpenBLAS splits products from about 2^18 multiply-adds on, in fixed shares: on a
busy machine a second thread that waits for a core stalls the whole product. Measured with 2
threads against 1 on a loaded 2-core machine: (20x200)@(200x800) 32 ms vs 75 us,
(1024x128)@(128x512) 20 ms vs 1.0 ms, even (36864x288)@(288x64) (680M multiply-adds, a small
CNN's convolution) 74 ms vs 49 ms. So only products of 2^30 multiply-adds or more (about 0.1 s
on one core) use the pool's threads. Below 2^18 OpenBLAS keeps one thread by itself, so nothing
is switched there (a switch costs a few microseconds).
"""
import os

_ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
_requested = None       # the value last given to set_num_threads

SINGLE_THREAD_PRODUCT = 1 << 30     # multiply-adds; larger products use the pool's threads
BLAS_SPLITS_FROM = 1 << 18          # smaller products OpenBLAS runs on one thread anyway
_pools = None           # [(get_num_threads, set_num_threads)] of the loaded BLAS libraries


def _threadpoolctl():
    try:
        import threadpoolctl  # (optional dependency: threadpoolctl)
    except ImportError:
        return None
    return threadpoolctl


def set_num_threads(num):
    """Limit the threads used for intra-op parallelism (BLAS) to `num`."""
    global _requested
    if isinstance(num, bool) or not isinstance(num, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(num).__name__}")
    if num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _requested = num
    tpc = _threadpoolctl()
    if tpc is not None:
        tpc.threadpool_limits(limits=num)       # applies now and stays (not used as a context)
    else:
        for var in _ENV_VARS:
            os.environ[var] = str(num)


def get_num_threads():
    """The thread limit: as set, else from OMP_NUM_THREADS & co., else the usable CPU count."""
    if _requested is not None:
        return _requested
    for var in _ENV_VARS:
        value = os.environ.get(var, "")
        if value.strip().isdigit() and int(value) > 0:
            return int(value)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:                      # not on Linux
        return os.cpu_count() or 1


def _blas_pools():
    """The loaded BLAS libraries' thread getters and setters (empty without threadpoolctl).
    Looked up once, on the first product big enough to need it (NumPy's BLAS is loaded)."""
    global _pools
    if _pools is None:
        tpc = _threadpoolctl()
        pools = []
        if tpc is not None:
            try:
                for lib in tpc.ThreadpoolController().select(user_api="blas").lib_controllers:
                    # the unguarded setter (~1 us) where this threadpoolctl has it; the public
                    # one also arbitrates between Python threads (~5 us)
                    setter = getattr(lib, "_real_set_num_threads", lib.set_num_threads)
                    pools.append((lib.get_num_threads, setter))
            except Exception:       # an unknown BLAS build: leave the pools alone
                pools = []
        _pools = pools
    return _pools


def call_single_threaded(fn, *args):
    """fn(*args) with every BLAS pool limited to one thread, then restored."""
    pools = _blas_pools()
    counts = [get() or 1 for get, _ in pools]
    if max(counts, default=1) <= 1:
        return fn(*args)
    for (_, set_threads), n in zip(pools, counts):
        if n > 1:
            set_threads(1)
    try:
        return fn(*args)
    finally:
        for (_, set_threads), n in zip(pools, counts):
            if n > 1:
                set_threads(n)


def product_size(a, b):
    """Multiply-adds of the matrix product a @ b (b at least 2-D)."""
    return max(a.size * b.shape[-1], b.size * a.shape[-2] if a.ndim > 1 else b.size)
