"""F.linear_cross_entropy (cross entropy of a linear layer's logits) and its options.

torch has a chunked implementation (chosen by passing `options`) that never materializes the
whole logits tensor; ember always computes the reference form, linear then cross_entropy, whose
values are the ones the chunked path approximates. `options` are validated and, where torch's
chunked path would refuse them, warned about as torch does.
"""
import dataclasses
import math
import warnings

from .. import _dtype as D


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


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...), where a weight of
    shape (C, d_1, ..., d_K, in_features) gives logits (N, C, d_1, ..., d_K)."""
    from . import functional as F
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batch = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    # a target of the logits' shape holds class probabilities
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None and (out_features or reduction not in {"mean", "sum", "none"} or
                                label_smoothing != 0.0 or target.dtype is not D.int64):
        bias_shape = tuple(linear_bias.shape) if linear_bias is not None else None
        warnings.warn(f"linear_cross_entropy: ``options`` ignored; chunked path needs reduction "
                      f"in {{'mean','sum','none'}}, label_smoothing == 0, target.dtype == int64, "
                      f"out_features == (). Got reduction={reduction!r}, "
                      f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={out_features}, tracing=False, "
                      f"linear_bias.shape={bias_shape}.", stacklevel=2)
    n_out = math.prod(out_features, start=num_classes)
    logits = F.linear(input, linear_weight.reshape(n_out, in_features),
                      None if linear_bias is None else linear_bias.reshape(n_out))
    return F.cross_entropy(logits.reshape(logits_shape), target, weight=weight,
                           reduction=reduction, ignore_index=ignore_index,
                           label_smoothing=label_smoothing)
