"""ember.set_num_threads / ember.get_num_threads: the threads NumPy's BLAS may use.

ember computes with NumPy, whose heavy ops (matmul, convolution as one GEMM) run in the BLAS
library's thread pool. With threadpoolctl installed (optional) the limit is applied to the
loaded pools at once. Without it, the limit is written to the usual environment variables
(OMP_NUM_THREADS, ...), which only thread pools started afterwards honour.

Thread policy for products (`call_product`, used by ember's one matrix product and its
LSTM and convolution kernels), when the pool has more than one thread:
- below BLAS_SPLITS_FROM (2^18) multiply-adds OpenBLAS keeps one thread by itself: nothing to do;
- below SINGLE_THREAD_PRODUCT (2^23) the product runs on one thread: OpenBLAS would split it
  in fixed shares, and on a busy machine a second thread that waits for a core stalls the
  whole product (measured, 2 threads against 1 on a loaded 2-core machine: (20x200)@(200x800)
  2.9 ms vs 78 us), while on a quiet one the gain is a few microseconds;
- larger products run on the pool's threads or on one, whichever has been faster here for
  products of about that size (one record per power of two of multiply-adds). The choice
  follows the machine's load: each record keeps a time per multiply-add for both ways (see
  _Record.note: a faster call lowers it at once, a slower one raises it by at most a
  quarter), and the way not taken is tried again now and then (once in 4 calls, then, each
  time it loses, half as often, down to once in 512). On a quiet machine a second thread
  speeds large products up; under load it can double them (measured on a 2-core machine at
  a load average of 10: (36864x288)@(288x64), a small CNN's convolution, 56 ms on one
  thread, 101 ms on two): a fixed size limit is right for only one of these.
"""
import ctypes
import os
import time

_ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
_requested = None       # the value last given to set_num_threads

SINGLE_THREAD_PRODUCT = 1 << 23     # multiply-adds; larger products may use the pool's threads
BLAS_SPLITS_FROM = 1 << 18          # smaller products OpenBLAS runs on one thread anyway
_PROBE_FIRST, _PROBE_MAX = 4, 512   # calls before the way not taken is tried again
_SLOWER_STEP = 1.25                 # the most one slower call raises a record's time
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


THREAD_TIMEOUT = 4      # OPENBLAS_THREAD_TIMEOUT: idle BLAS threads spin 2**4 cycles, then sleep


def quiet_idle_blas_threads():
    """Make OpenBLAS's idle threads sleep at once instead of spinning.

    After each threaded product OpenBLAS's threads spin for 2**28 cycles (~0.1 s) waiting for
    the next one, on the cores that ember's own kernel threads (_parallel.py) need next: the
    MNIST CNN step at 2 threads took 90 ms that way, 69 ms with a timeout of 2**4 cycles
    (LSTM LM 39 -> 33 ms; 1 thread unchanged). OpenBLAS reads OPENBLAS_THREAD_TIMEOUT once,
    when it loads (with NumPy, usually before ember), so ember sets the variable, has each
    loaded OpenBLAS read its environment again (openblas_read_env) and stops its thread
    server (blas_thread_shutdown_, as OpenBLAS does in a forked child): the next threaded
    product starts it again with the short timeout. Called once, from ember/__init__.py.
    Left alone where the user set OPENBLAS_THREAD_TIMEOUT or GOTO_THREAD_TIMEOUT, where
    EMBER_NO_BLAS_TIMEOUT is set, and where no OpenBLAS is loaded (other BLAS libraries,
    other systems). True where it applied."""
    if any(v in os.environ for v in ("OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT",
                                     "EMBER_NO_BLAS_TIMEOUT")):
        return False
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "openblas" in line.lower()}
    except OSError:
        return False
    libraries = []
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
            libraries.append((lib.openblas_read_env, lib.blas_thread_shutdown_))
        except (OSError, AttributeError):
            continue
    if not libraries:
        return False
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = str(THREAD_TIMEOUT)
    for read_env, shutdown in libraries:
        read_env()
        shutdown()
    return True


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


def call_product(fn, a, b, size=None):
    """fn(a, b), a BLAS product of `size` multiply-adds (default: a @ b's), on the threads
    the policy above gives it."""
    if size is None:
        size = product_size(a, b)
    if size < BLAS_SPLITS_FROM:
        return fn(a, b)
    if size < SINGLE_THREAD_PRODUCT:
        return call_single_threaded(fn, a, b)
    pools = _blas_pools()
    counts = [get() or 1 for get, _ in pools]
    if max(counts, default=1) <= 1:
        return fn(a, b)
    key = (size.bit_length(), max(counts))
    record = _RECORDS.get(key)
    if record is None:
        record = _RECORDS[key] = _Record()
    many = record.pick()
    start = time.perf_counter()
    out = fn(a, b) if many else call_single_threaded(fn, a, b)
    record.note(many, (time.perf_counter() - start) / size)
    return out


class _Record:
    """Time per multiply-add of one size class on one thread and on the pool's threads,
    and when to try the slower way again."""
    __slots__ = ("one", "many", "wait", "interval", "probing")

    def __init__(self):
        self.one = self.many = None
        self.wait, self.interval, self.probing = _PROBE_FIRST, _PROBE_FIRST, False

    def pick(self):
        if self.one is None:
            return False
        if self.many is None:
            return True
        best = self.many < self.one
        self.wait -= 1
        self.probing = self.wait <= 0
        return not best if self.probing else best

    def note(self, many, seconds):
        # A faster call is the new time at once; a slower one raises it by at most a quarter
        # per call. A product on two threads stalls whenever either core is taken for a
        # moment (on a shared virtual machine, often), and with a running mean one such
        # call made the pool's threads lose for hundreds of calls (the GPT step at 2
        # threads, its products timed in the step: 67 ms a step with the mean, 52 ms with
        # this). A lasting slowdown (a busy machine) still shows within a few calls.
        old = self.many if many else self.one
        new = seconds if old is None or seconds <= old else min(seconds, old * _SLOWER_STEP)
        if many:
            self.many = new
        else:
            self.one = new
        if self.probing:
            # the tried way still loses: try it less often; it wins: it is now the way taken
            lost = (self.many < self.one) != many
            self.interval = min(self.interval * 2, _PROBE_MAX) if lost else _PROBE_FIRST
            self.wait, self.probing = self.interval, False


_RECORDS = {}   # (size.bit_length(), the pool's threads) -> _Record


def product_size(a, b):
    """Multiply-adds of the matrix product a @ b (b at least 2-D)."""
    return max(a.size * b.shape[-1], b.size * a.shape[-2] if a.ndim > 1 else b.size)
