"""LinearCrossEntropyOptions: the options of F.linear_cross_entropy (and the loss module).

torch has a chunked implementation (chosen by passing `options`) that never materializes the
whole logits tensor; ember always computes the reference form, linear then cross_entropy, whose
values are the ones the chunked path approximates. The options are validated here; the
functional warns where torch's chunked path would refuse them.
"""
import dataclasses

from ... import _dtype as D


@dataclasses.dataclass
class LinearCrossEntropyOptions:
    allow_retain_graph: bool = False
    batch_chunk_size: int = None
    chunking_method: str = "auto"
    acc_policy: str = "auto"
    acc_dtype: D.dtype = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            # "aspect_ratio" or "aspect_ratio:N" with N a positive integer
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (D.float16, D.bfloat16,
                                                                 D.float32, D.float64):
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, "
                             f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                             f"acc_dtype=None to let the op pick automatically.")
