"""ember/_threads.quiet_idle_blas_threads: OpenBLAS's idle threads are told to sleep instead
of spinning (OPENBLAS_THREAD_TIMEOUT, re-read at ember's import), products stay right, and
the user's own setting is left alone. Each case runs in a fresh process (OpenBLAS is set up
once per process)."""
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_PROGRAM = """
import os, sys
import numpy as np
a = np.random.default_rng(0).random((600, 600)).astype(np.float32)
before = a @ a                          # OpenBLAS's threads started with the default timeout
import ember
from ember import _threads
after = a @ a                           # its thread server started again
ember.set_num_threads(2)
again = a @ a
print(os.environ.get("OPENBLAS_THREAD_TIMEOUT"), np.array_equal(before, after),
      np.array_equal(before, again), _threads.quiet_idle_blas_threads())
"""


def _run(**env):
    full = {k: v for k, v in os.environ.items()
            if k not in ("OPENBLAS_THREAD_TIMEOUT", "GOTO_THREAD_TIMEOUT", "EMBER_NO_BLAS_TIMEOUT")}
    full.update(env, PYTHONPATH=REPO)
    done = subprocess.run([sys.executable, "-c", _PROGRAM], env=full, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def _openblas_loaded():
    import numpy  # noqa: F401
    with open("/proc/self/maps") as f:
        return any("openblas" in line.lower() for line in f)


needs_openblas = pytest.mark.skipif(not os.path.exists("/proc/self/maps") or not _openblas_loaded(),
                                    reason="NumPy's BLAS here is not OpenBLAS (nothing to set)")


@needs_openblas
def test_ember_sets_the_short_timeout_and_products_stay_right():
    # (the last field: a second call finds the variable set, as the user's, and does nothing)
    assert _run() == ["4", "True", "True", "False"]


@needs_openblas
def test_the_users_own_timeout_is_left_alone():
    assert _run(OPENBLAS_THREAD_TIMEOUT="20") == ["20", "True", "True", "False"]


@needs_openblas
def test_the_setting_can_be_left_off():
    assert _run(EMBER_NO_BLAS_TIMEOUT="1") == ["None", "True", "True", "False"]
