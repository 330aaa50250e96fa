"""Side-by-side timing helpers: ember and torch in one process, medians of repeated runs."""
import os
import statistics
import sys
import time

_PINNED_BLAS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def native_blas():
    """Re-run this script without the OpenBLAS kernel pin some machines set.

    Call it before importing NumPy. Some machines pin OpenBLAS to an older kernel for the sake
    of old builds; that slows a current NumPy (and so ember) but not torch's own BLAS, which
    would make the side-by-side numbers about the pin rather than about ember. Tests and CI
    keep the environment as it is.
    """
    if any(v in os.environ for v in _PINNED_BLAS) and "--keep-blas-env" not in sys.argv:
        env = {k: v for k, v in os.environ.items() if k not in _PINNED_BLAS}
        os.execve(sys.executable, [sys.executable] + sys.argv, env)


def blas_description():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "BLAS: (threadpoolctl not installed)"
    return "BLAS: " + ", ".join(f"{i['internal_api']} {i.get('architecture', '')} "
                                f"{i['num_threads']} threads" for i in threadpool_info()
                                if i.get("user_api") == "blas")


def median_time(fn, repeat=7, number=None, budget=0.2):
    """Median seconds per call of `fn` over `repeat` runs of `number` calls each."""
    fn()                                    # warm up
    if number is None:                      # calibrate so that one run takes about `budget`
        number, t = 1, 0.0
        while t < budget / 4:
            start = time.perf_counter()
            for _ in range(number):
                fn()
            t = time.perf_counter() - start
            number *= 2
        number = max(1, int(number * budget / max(t, 1e-9) / 2))
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - start) / number)
    return statistics.median(runs)


def fmt(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.2f} s "


def report(rows, title):
    """rows: (name, ember seconds, torch seconds, target ratio or None)."""
    print(f"\n{title}\n{blas_description()}")
    print(f"{'benchmark':<34}{'ember':>12}{'torch':>12}{'ember/torch':>13}{'target':>9}")
    for name, e, t, target in rows:
        ratio = e / t
        mark = "" if target is None else ("  ok" if ratio <= target else "  MISS")
        tgt = f"<={target}" if target is not None else ""
        print(f"{name:<34}{fmt(e):>12}{fmt(t):>12}{ratio:>12.2f}x{tgt:>9}{mark}")


_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def set_threads_env(n):
    """Ask every BLAS/OpenMP pool for `n` threads. Call before importing NumPy or torch (the
    pools read these variables once); threadpoolctl and torch.set_num_threads, where they
    exist, are applied on top by `limit_threads` after the imports."""
    for var in _THREAD_VARS:
        os.environ[var] = str(n)


def limit_threads(n, torch=None):
    """After the imports: cap the BLAS pools (threadpoolctl, if installed) and torch's."""
    if torch is not None:
        torch.set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits(n)


def arg_value(flag, default):
    """The value after `flag` on the command line (an int where it reads as one)."""
    if flag in sys.argv:
        value = sys.argv[sys.argv.index(flag) + 1]
        return int(value) if value.isdigit() else value
    return default
