"""Where the tests in tests/gpu/ run: a real GPU (CuPy + CUDA), or the CPU stand-in.

EMBER_FAKE_CUDA=1 runs them on tests/fake_cupy.py (NumPy behaving as CuPy towards NumPy, with
its host transfers counted): the plumbing and the script are checked on any machine. Without
it, they need CuPy and a GPU, and skip with the reason otherwise.
"""
import os
import sys

import pytest
import torch

import ember

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)           # opinfo.py and fake_cupy.py live in tests/

import fake_cupy  # noqa: E402

FAKE = os.environ.get("EMBER_FAKE_CUDA") == "1"
# torch's side of each comparison: its GPU when it has one (the GPU machine), else its CPU
TORCH_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def skip_reason():
    """Why the GPU tests cannot run here (None: they can)."""
    if FAKE:
        return None
    try:
        import cupy  # noqa: F401
    except ImportError:
        return "needs CuPy (pip install ember[cuda]) and an NVIDIA GPU; " \
               "EMBER_FAKE_CUDA=1 runs these tests on the CPU stand-in"
    if not ember.cuda.is_available():
        return "CuPy sees no CUDA device; EMBER_FAKE_CUDA=1 runs these tests on the CPU stand-in"
    return None


@pytest.fixture(scope="module")
def cuda_device():
    """The CUDA device the module's tests run on (the stand-in bound for the module's
    duration when EMBER_FAKE_CUDA=1)."""
    if FAKE:
        fake_cupy.install(device_count=1)
        try:
            yield ember.device("cuda", 0)
        finally:
            fake_cupy.uninstall()
    else:
        yield ember.device("cuda", 0)


class counted:
    """Counts the stand-in's host transfers inside the block (nothing on a real GPU)."""

    def __enter__(self):
        if FAKE:
            fake_cupy.reset_transfers()
            fake_cupy.record[0] = []
        return self

    def __exit__(self, *exc):
        if FAKE:
            self.copies = [r for r in fake_cupy.record[0] if r[0] != "scalar_reads"]
            fake_cupy.record[0] = None
        else:
            self.copies = []
