"""ember.backends.cudnn: cuDNN's flags, with the answers torch gives where cuDNN is absent.

is_available() is False and version() None; the flags (enabled, benchmark, deterministic,
allow_tf32, ...) hold what scripts set and change nothing: ember has no cuDNN kernels."""
import contextlib

from .. import _dtype as D
from . import flags_frozen
from ._precision import FP32Precision

CUDNN_TENSOR_DTYPES = {D.float16, D.float32, D.float64}

enabled = True
benchmark = False
benchmark_limit = None
deterministic = False
allow_tf32 = True
fp32_precision = "none"
depthwise_kernel = "auto"
conv = FP32Precision("tf32")
rnn = FP32Precision("tf32")

# the order of set_flags' arguments and of the tuple it returns
_NAMES = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32",
          "fp32_precision", "depthwise_kernel")


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    """Would torch hand this tensor to cuDNN? Never without cuDNN."""
    return False


def _apply(values):
    g = globals()
    previous = tuple(g[n] for n in _NAMES)
    for name, value in zip(_NAMES, values):
        # benchmark_limit reads None whatever is set: torch keeps it only where cuDNN is
        if value is not None and name != "benchmark_limit":
            g[name] = value
    return previous


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None,
              _allow_tf32=None, _fp32_precision="none", _depthwise_kernel=None):
    """Set the given flags (None leaves one as it is); returns all of them as they were."""
    if flags_frozen():
        raise RuntimeError("not allowed to set torch.backends.cudnn flags after "
                           "disable_global_flags; please use flags() context manager instead")
    return _apply((_enabled, _benchmark, _benchmark_limit, _deterministic, _allow_tf32,
                   _fp32_precision, _depthwise_kernel))


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True, fp32_precision="none", depthwise_kernel="auto"):
    """Set the flags for a `with` block (allowed even after disable_global_flags)."""
    previous = _apply((enabled, benchmark, benchmark_limit, deterministic, allow_tf32,
                       fp32_precision, depthwise_kernel))
    try:
        yield
    finally:
        _apply(previous)
