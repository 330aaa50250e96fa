"""ember/_malloc.py: with glibc, large arrays allocated again after a free reuse the freed pages
(no page faults), unless EMBER_NO_MALLOPT is set."""
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")

# 20 rounds of three 6 MiB arrays written, then freed (glibc by itself gives the heap's top
# back once more than twice the largest freed block is free), after warm-up rounds: the
# page faults
_FAULTS = """
import resource
import numpy as np
import ember
def rounds(n):
    for _ in range(n):
        arrays = [np.empty(3 << 19, np.float32) for _ in range(3)]
        for a in arrays:
            a.fill(1.0)
        del arrays, a
rounds(2)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
rounds(20)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(extra_env):
    env = {k: v for k, v in os.environ.items() if k != "EMBER_NO_MALLOPT"}
    env.update(extra_env)
    out = subprocess.run([sys.executable, "-c", _FAULTS], env=env, capture_output=True,
                         text=True, check=True)
    return int(out.stdout.split()[-1])


def test_freed_large_arrays_are_reused_without_page_faults():
    assert _faults({}) < 100          # without the setting: 20 rounds x 4608 pages


def test_the_setting_can_be_left_off():
    assert _faults({"EMBER_NO_MALLOPT": "1"}) > 20 * 1000


def test_keep_freed_memory_reports_whether_it_applied(monkeypatch):
    from ember import _malloc
    for name in ("EMBER_NO_MALLOPT", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"):
        monkeypatch.delenv(name, raising=False)
    assert _malloc.keep_freed_memory() is True
    monkeypatch.setenv("EMBER_NO_MALLOPT", "1")
    assert _malloc.keep_freed_memory() is False
    monkeypatch.delenv("EMBER_NO_MALLOPT")
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "1000000")    # (the user's own glibc setting)
    assert _malloc.keep_freed_memory() is False
