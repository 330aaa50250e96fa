"""ember.backends: the flags training scripts set, accepted and reported as torch does on a CPU
build. They configure nothing in ember (there is no cuDNN or cuBLAS behind it); scripts that set
them run unchanged."""
from types import SimpleNamespace

cudnn = SimpleNamespace(enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                        is_available=lambda: False, version=lambda: None)
cuda = SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False,
                                              allow_fp16_reduced_precision_reduction=True,
                                              allow_bf16_reduced_precision_reduction=True),
                       is_built=lambda: False)
mps = SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
mkldnn = SimpleNamespace(is_available=lambda: True, enabled=True)
openmp = SimpleNamespace(is_available=lambda: True)
