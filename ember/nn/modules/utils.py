"""torch.nn.modules.utils: the tuple helpers layers use for their size arguments (_pair(3) is
(3, 3)) and consume_prefix_in_state_dict_if_present, which strips a wrapper's prefix
("module." from DataParallel/DDP) off a state_dict's keys so a bare model can load it."""
import collections.abc
from itertools import repeat

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """Each element of t, last first, repeated n times: F.pad's order for a conv's padding."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """out_size with each None replaced by the matching trailing entry of defaults."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d
            for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip `prefix` from the keys (and the `_metadata` keys) that start with it, in place."""
    for key in [k for k in state_dict if k.startswith(prefix)]:
        state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata):
        # a module's metadata key is its name without the trailing dot ("module")
        if not key:
            continue
        if key == prefix.rstrip(".") or key.startswith(prefix):
            metadata[key[len(prefix):] if key.startswith(prefix) else ""] = metadata.pop(key)
