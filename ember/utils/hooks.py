"""ember.utils.hooks: the handle every register_*hook returns, for code that registers hooks in
its own dictionaries (`handle = RemovableHandle(hooks); hooks[handle.id] = fn`) and for
isinstance checks on the handles ember's tensors and modules return."""
import abc
import warnings
import weakref

from ..autograd.graph import tensor_hooks

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


class RemovableHandle(abc.ABC):
    """A handle that removes its hook (the entry under `self.id`) from `hooks_dict`, and from
    each of `extra_dict` (one dict or a list of them), on remove() or at the end of a `with`.
    The handle holds its dictionaries weakly, so it never keeps their owner alive (which is
    why they must be weak-referenceable, such as OrderedDicts; a plain dict is a TypeError)."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extras = [] if extra_dict is None else \
            extra_dict if isinstance(extra_dict, list) else [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self):
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()

    @classmethod
    def __subclasshook__(cls, other):
        # the handles ember's modules (ember.nn.modules.module) and tensors
        # (ember.autograd.graph) return are classes of their own, older than this one; they
        # count as RemovableHandles, as torch's handles are all one class
        if cls is RemovableHandle and other.__name__ == "RemovableHandle" \
                and other.__module__ in ("ember.nn.modules.module", "ember.autograd.graph"):
            return True
        return NotImplemented


def unserializable_hook(f):
    """Mark a tensor hook as one that is not expected to survive serialization."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn about each backward hook on `tensor` that saving it would lose (those not marked
    with @unserializable_hook)."""
    for hook in tensor_hooks(tensor):
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                          "is expected, you can decorate the function with "
                          "@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)


def __getattr__(name):
    # BackwardHook is ember.nn's full-backward-hook runner, which imports this package
    if name == "BackwardHook":
        from ..nn.modules.module import _BackwardHook  # (ember.nn imports this package)

        class BackwardHook(_BackwardHook):
            """Runs a module's full backward hooks (`user_hooks`, called with the module,
            grad_input, grad_output) and pre-hooks (`user_pre_hooks`, with the module and
            grad_output) for one call: pass the call's positional arguments through
            setup_input_hook and its result through setup_output_hook."""

            def __init__(self, module, user_hooks, user_pre_hooks):
                super().__init__(module, user_hooks, user_pre_hooks)
                self.user_hooks, self.user_pre_hooks = user_hooks, user_pre_hooks

            def setup_input_hook(self, args):
                return self.wrap_inputs(args)

            def setup_output_hook(self, args):
                return self.wrap_outputs(args)

        BackwardHook.__module__, BackwardHook.__qualname__ = __name__, "BackwardHook"
        globals()["BackwardHook"] = BackwardHook
        return BackwardHook
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
