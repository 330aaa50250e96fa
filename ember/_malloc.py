"""Freed array memory stays in the process for the next arrays (glibc only), set once at import.

NumPy takes each array's data from malloc. glibc serves blocks of 128 KiB and up (from 32K
float32 values) with fresh mappings, and gives the top of its heap back to the system once
more than a threshold of it is free; either way the next step of a training loop writes its
large temporaries into pages the kernel must map and zero again, one fault per 4 KiB page.
Measured on the LSTM language model of bench/train_steps.py: ~5000 faults (20 MB) per step,
a sixth of its time (63 ms -> 54 ms per step without them; torch's step has none). So blocks
up to 32 MiB come from the heap (M_MMAP_THRESHOLD, glibc's own ceiling for its adaptive
threshold) and up to 64 MiB of free heap is kept (M_TRIM_THRESHOLD): the peak memory stays
what it was (freed memory is reused, not given back between steps).

EMBER_NO_MALLOPT=1 in the environment leaves glibc's settings as they are, and so do glibc's own
MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ when the user set them.
"""
import ctypes
import os
import platform

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20


def keep_freed_memory():
    """Apply the settings above; False where they do not apply (not glibc, or opted out)."""
    if os.environ.get("EMBER_NO_MALLOPT") or platform.libc_ver()[0] != "glibc" or any(
            v in os.environ for v in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) and
                mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
