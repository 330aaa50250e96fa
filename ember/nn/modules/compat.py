"""Modules PyTorch keeps for older code: SyncBatchNorm and DataParallel (as they behave in one
process with no GPU), CrossMapLRN2d (Lua Torch's cross-channel LRN) and the deprecated
Container."""
import warnings

from .. import _cross_map_lrn as _lrn
from .module import Module
from .normalization import _BatchNorm
from ..parallel.data_parallel import DataParallel  # noqa: F401 (moved to nn/parallel)


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose statistics torch would reduce over a process group. Without an
    initialized process group (ember has none) torch falls back to plain batch norm, in training
    as in eval; this is that fallback. It takes inputs of any rank >= 2."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """`module` with every batch norm in it replaced by a SyncBatchNorm sharing its
        parameters and buffers (the same tensors)."""
        result = module
        if isinstance(module, _BatchNorm):
            result = cls(module.num_features, module.eps, module.momentum, module.affine,
                         module.track_running_stats, process_group,
                         bias=module.bias is not None)
            if module.affine:
                result.weight = module.weight
                result.bias = module.bias
            result.running_mean = module.running_mean
            result.running_var = module.running_var
            result.num_batches_tracked = module.num_batches_tracked
            result.training = module.training
            if hasattr(module, "qconfig"):
                result.qconfig = module.qconfig
        for name, child in module.named_children():
            result.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return result


class Container(Module):
    """Deprecated: a Module holding the modules given as keyword arguments."""

    def __init__(self, **kwargs):
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented "
                      "in `nn.Module`. Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for name, module in kwargs.items():
            self.add_module(name, module)


class CrossMapLRN2d(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return _lrn.CrossMapLRN2d.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
