"""ember.utils.hooks: the handle every register_*hook returns, for code that registers hooks in
its own dictionaries (`handle = RemovableHandle(hooks); hooks[handle.id] = fn`) and for
isinstance checks on the handles ember's tensors and modules return."""
import abc
import weakref

__all__ = ["RemovableHandle", "unserializable_hook"]


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
