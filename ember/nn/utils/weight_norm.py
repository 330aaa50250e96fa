"""The older weight normalisation (torch.nn.utils.weight_norm), deprecated in favour of
nn.utils.parametrizations.weight_norm: the weight is split into parameters `<name>_g` and
`<name>_v`, and a forward pre-hook recomputes the plain attribute `<name>` before each call."""
import warnings

from ..parameter import Parameter, UninitializedParameter
from .parametrizations import norm_except_dim, weight_norm_value

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook of weight_norm (it also does the set-up and the removal)."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return weight_norm_value(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`ember.nn.utils.weight_norm` is deprecated in favor of "
                      "`ember.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        if any(isinstance(h, WeightNorm) and h.name == name
               for h in module._forward_pre_hooks.values()):
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                               f"{name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Weight normalisation by a forward pre-hook (deprecated: FutureWarning)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undo weight_norm: `<name>` becomes a parameter holding the current weight."""
    remove_norm_hook(module, WeightNorm, name, "weight_norm")
    return module


def remove_norm_hook(module, kind, name, what):
    """Remove the forward pre-hook of class `kind` that normalises `<name>` (weight_norm's or
    spectral_norm's), restoring `<name>` as a parameter; PyTorch's error if there is none."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return
    raise ValueError(f"{what} of '{name}' not found in {module}")
