"""ember.backends.mkldnn: oneDNN's flags, with torch's answers on a CPU build (oneDNN reported
available, as torch's x86 wheels have it; ember computes with NumPy whatever they say)."""
import contextlib

from ._precision import FP32Precision

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2

enabled = True
deterministic = False
allow_tf32 = None           # torch reads None: TF32 on oneDNN exists only for Intel GPUs
fp32_precision = "none"
matmul = FP32Precision("none")
conv = FP32Precision("none")
rnn = FP32Precision("none")

_NAMES = ("enabled", "deterministic", "allow_tf32", "fp32_precision")


def is_available():
    return True


def is_acl_available():
    """The Arm Compute Library backend of oneDNN: not in an x86 build."""
    return False


class verbose:
    """`with mkldnn.verbose(mkldnn.VERBOSE_ON):` turns oneDNN's kernel log on for a block. ember
    runs no oneDNN kernels, so there is nothing to log; the level is kept for inspection."""

    def __init__(self, level):
        self.level = level

    def __enter__(self):
        if self.level == VERBOSE_OFF:
            return None
        return self

    def __exit__(self, *exc):
        return False


def _apply(values):
    g = globals()
    previous = tuple(g[n] for n in _NAMES)
    for name, value in zip(_NAMES, values):
        if value is not None and name != "allow_tf32":     # allow_tf32 stays None on CPU
            g[name] = value
    return previous


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"):
    """Set the given flags (None leaves one as it is); returns all of them as they were."""
    return _apply((_enabled, _deterministic, _allow_tf32, _fp32_precision))


@contextlib.contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    previous = _apply((enabled, deterministic, allow_tf32, fp32_precision))
    try:
        yield
    finally:
        _apply(previous)
