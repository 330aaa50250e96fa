"""ember.backends: the flags training scripts set, accepted and reported as torch does on a CPU
build. They configure nothing in ember (there is no cuDNN, oneDNN or cuBLAS behind it); scripts
that set or read them run unchanged. Each backend with a torch submodule is a submodule here
too (cudnn, mkldnn, mps, openmp), so `import torch.backends.cudnn` style imports work."""
import contextlib
from types import SimpleNamespace

# the global fp32 precision setting ("none": no reduced-precision fp32 math anywhere)
fp32_precision = "none"
_frozen = [False]


def flags_frozen():
    """True once disable_global_flags() was called: backend flags may then change only inside
    their flags() context managers."""
    return _frozen[0]


def disable_global_flags():
    _frozen[0] = True


def set_flags(_fp32_precision="none"):
    """Set the global fp32 precision; returns the previous settings as a tuple."""
    global fp32_precision
    previous = (fp32_precision,)
    fp32_precision = _fp32_precision
    return previous


@contextlib.contextmanager
def flags(fp32_precision="none"):
    previous = set_flags(fp32_precision)
    try:
        yield
    finally:
        set_flags(*previous)


cuda = SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False,
                                              allow_fp16_reduced_precision_reduction=True,
                                              allow_bf16_reduced_precision_reduction=True),
                       is_built=lambda: False)

# the submodules read flags_frozen() from this package, so they load after it is defined
from . import cudnn, mkldnn, mps, openmp  # noqa: E402
