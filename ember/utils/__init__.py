"""ember.utils: data loading (ember.utils.data), safetensors files (ember.utils.safetensors) and
hook handles (ember.utils.hooks)."""
import weakref

from .._tensor import Tensor

from . import data, hooks, safetensors  # noqa: F401


def set_module(obj, mod):
    """Set obj.__module__ (for nicer printing), as torch.utils.set_module does."""
    if not isinstance(mod, str):
        raise TypeError("The mod argument should be a string")
    obj.__module__ = mod


def swap_tensors(t1, t2):
    """Exchange everything two tensor objects hold (data, dtype, device, autograd state,
    .grad, Python attributes, class), so that every reference to `t1` now sees what `t2` was
    and the other way round: a module's parameter can be replaced in place this way."""
    for name, t in (("t1", t1), ("t2", t2)):
        if not isinstance(t, Tensor):
            raise AttributeError(f"'{type(t).__name__}' object has no attribute '_use_count'")
        if weakref.getweakrefcount(t):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
    cls1, cls2 = type(t1), type(t2)
    t1.__class__, t2.__class__ = cls2, cls1
    for slot in Tensor.__slots__:
        if slot not in ("__dict__", "__weakref__"):
            a, b = getattr(t1, slot), getattr(t2, slot)
            setattr(t1, slot, b)
            setattr(t2, slot, a)
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    # a leaf's gradient accumulator sends gradients to its tensor object: follow the swap
    for t in (t1, t2):
        ref = (t._extra or {}).get("accumulator")
        acc = ref() if ref is not None else None
        if acc is not None:
            acc.variable = t
