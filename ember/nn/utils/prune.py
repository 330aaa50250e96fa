"""ember.nn.utils.prune: zeroing parts of a module's parameters through a mask.

Pruning a parameter `name` of a module moves the original values to a parameter `name_orig`,
stores a 0/1 mask as a buffer `name_mask`, and installs the pruning method itself as a
forward pre-hook; the hook recomputes `name = name_mask * name_orig` before each forward, so
gradients reach `name_orig` only where the mask keeps it. Pruning the same parameter again
chains the methods in a PruningContainer: each new method only looks at what earlier ones
kept. `remove` makes the pruning permanent (the masked values become the parameter again).

Random methods draw from ember's generator with the same calls torch makes, so after the
same manual_seed they choose the same entries as torch.
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ..._layout import contiguous_format
from ...ops.creation import ones_like, zeros_like
from ...ops.norms import norm
from ...ops.pointwise import abs
from ...ops.random import rand, rand_like
from ...ops.sorting import kthvalue, topk
from .convert_parameters import parameters_to_vector


class BasePruningMethod(ABC):
    """A way of computing a mask for a tensor; subclasses define `compute_mask` and set
    PRUNING_TYPE to "unstructured", "structured" or "global"."""

    _tensor_name: str

    def __call__(self, module, inputs):
        # the forward pre-hook: refresh the pruned tensor from its original and its mask
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for tensor `t`, given the mask `default_mask` already on it."""

    def apply_mask(self, module):
        """`module`'s original tensor times its mask (the pruned tensor)."""
        assert self._tensor_name is not None, \
            f"Module {module} has to be pruned"
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune `module.<name>` with a new `cls(*args, **kwargs)`; if the tensor is already
        pruned the new method joins the existing one(s) in a PruningContainer."""
        earlier = [(key, hook) for key, hook in module._forward_pre_hooks.items()
                   if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
        assert len(earlier) <= 1, (
            f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
            f"{module}. Use a PruningContainer.")
        for key, _ in earlier:
            del module._forward_pre_hooks[key]
        old = earlier[0][1] if earlier else None

        method = cls(*args, **kwargs)
        method._tensor_name = name
        if isinstance(old, PruningContainer):
            old.add_pruning_method(method)
            method = old
        elif old is not None:
            container = PruningContainer(old)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)
        if importance_scores is not None:
            assert importance_scores.shape == orig.shape, (
                f"importance_scores should have the same shape as parameter {name} of "
                f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig

        first_time = old is None
        if first_time:
            default_mask = ones_like(orig)
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(
                memory_format=contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first_time:      # leave the module as it was
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """`t` with this method's mask applied (the mask computed from `importance_scores`
        when given, else from `t`)."""
        if importance_scores is not None:
            assert importance_scores.shape == t.shape, (
                "importance_scores should have the same shape as tensor t, got "
                f"{importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        if default_mask is None:
            default_mask = ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: `name` becomes a parameter holding the pruned values;
        `name_orig` and `name_mask` go away (the hook itself is removed by the caller)."""
        assert self._tensor_name is not None, \
            f"Module {module} has to be pruned before pruning can be removed"
        pruned = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = pruned.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """Pruning methods applied one after another to the same tensor; each later method only
    sees the entries (or, for structured methods, the channels) the earlier ones kept."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:      # the container takes its tensor name from its first method
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:                   # several need `_tensor_name` set on the container first
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                f"Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. "
                f"Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """Combine `default_mask` (what earlier methods kept) with the newest method's mask,
        computed on the part of `t` that is still unpruned."""
        method = self._pruning_methods[-1]
        kind = method.PRUNING_TYPE
        new_mask = default_mask.clone(memory_format=contiguous_format)
        if kind == "unstructured":
            # only the surviving entries, flattened
            keep = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError(
                    "Pruning methods of PRUNING_TYPE \"structured\" need to have the "
                    "attribute `dim` defined.")
            ndim = t.dim()
            dim = method.dim if method.dim >= 0 else method.dim + ndim
            # the channels along `dim` that still have an unpruned entry
            others = [d for d in range(ndim) if d != dim]
            alive = default_mask.sum(dim=others) != 0
            keep = [slice(None)] * ndim
            keep[dim] = alive
            keep = tuple(keep)
        elif kind == "global":
            keep = tuple([slice(None)] * t.dim())
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[keep], default_mask=default_mask[keep])
        new_mask[keep] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes `amount` entries (a count, or a fraction of the tensor), the ones `_chosen` picks
    out of the flattened tensor."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        n = _amount_to_count(self.amount, t.nelement())
        _check_amount_fits(self.amount, t.nelement())
        mask = default_mask.clone(memory_format=contiguous_format)
        if n != 0:
            mask.view(-1)[self._chosen(t, n)] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes `amount` entries chosen at random."""

    def _chosen(self, t, n):
        # the n entries with the largest random draw go
        return topk(rand_like(t).view(-1), k=n).indices

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the `amount` entries of smallest absolute value."""

    def _chosen(self, t, n):
        return topk(abs(t).view(-1), k=n, largest=False).indices

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` whole channels along `dim`, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t)
        _check_dim(t, self.dim)
        channels = t.shape[self.dim]
        n = _amount_to_count(self.amount, channels)
        _check_amount_fits(self.amount, channels)
        if n == 0:
            return default_mask
        # keep the channels whose random draw is above the n-th smallest
        draw = rand(channels)
        threshold = kthvalue(draw, k=n).values
        mask = zeros_like(t)
        index = [slice(None)] * t.dim()
        index[self.dim] = draw > threshold
        mask[tuple(index)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along `dim` of smallest L`n` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t)
        _check_dim(t, self.dim)
        channels = t.shape[self.dim]
        n_prune = _amount_to_count(self.amount, channels)
        n_keep = channels - n_prune
        _check_amount_fits(self.amount, channels)
        dim = self.dim if self.dim >= 0 else self.dim + t.dim()
        others = [d for d in range(t.dim()) if d != dim]
        norms = norm(t, p=self.n, dim=others)
        if n_prune == 0:
            return default_mask
        kept = topk(norms, k=n_keep, largest=True).indices
        mask = zeros_like(t)
        index = [slice(None)] * t.dim()
        index[dim] = kept
        mask[tuple(index)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given 0/1 mask is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        assert default_mask.shape == self.mask.shape, (
            f"default_mask shape {default_mask.shape} must match self.mask shape "
            f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


# the functional forms: each prunes `module.<name>` in place and returns the module

def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune several (module, name) tensors together, as if they were one flat tensor: e.g.
    the globally smallest entries across all of them with L1Unstructured."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    scores = parameters_to_vector(
        [importance_scores.get((module, name), getattr(module, name))
         for module, name in parameters])
    # entries an earlier pruning removed stay removed
    masks = parameters_to_vector(
        [getattr(module, name + "_mask", ones_like(getattr(module, name)))
         for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found '
            f"method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final = container.compute_mask(scores, masks)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        custom_from_mask(module, name, mask=final[start:start + count].view_as(param))
        start += count


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of `module.<name>` permanent and drop its hook."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether `module` or any submodule carries a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules()
               for hook in sub._forward_pre_hooks.values())


# amount: a count of entries/channels (int >= 0) or a fraction of them (float in [0, 1])

def _check_amount(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or \
            (not isinstance(amount, numbers.Integral) and
             (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _check_amount_fits(amount, size):
    if isinstance(amount, numbers.Integral) and amount > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={size}")


def _amount_to_count(amount, size):
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * size)


def _check_structured(t):
    if t.dim() <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor "
            f"of shape {t.shape} with {t.dim()} dims")


def _check_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
