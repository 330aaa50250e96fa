"""ember.set_num_threads / ember.get_num_threads: the threads NumPy's BLAS may use.

ember computes with NumPy, whose heavy ops (matmul, convolution as one GEMM) run in the BLAS
library's thread pool. With threadpoolctl installed (optional) the limit is applied to the
loaded pools at once. Without it, the limit is written to the usual environment variables
(OMP_NUM_THREADS, ...), which only thread pools started afterwards honour.
"""
import os

_ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
_requested = None       # the value last given to set_num_threads


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
