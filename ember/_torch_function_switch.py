"""torch.DisableTorchFunction and torch.DisableTorchFunctionSubclass: context managers under
which no object takes part in the __torch_function__ protocol (ember.overrides'
has_torch_function* checks answer False). ember's own ops never consult the protocol, so the
two differ in nothing here (torch's Subclass form still honours modes, which ember lacks)."""
import threading

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass", "is_disabled"]


class _State(threading.local):
    depth = 0


_state = _State()


def is_disabled():
    return _state.depth > 0


class DisableTorchFunction:
    def __enter__(self):
        _state.depth += 1
        return self

    def __exit__(self, *exc):
        _state.depth -= 1
        return False


class DisableTorchFunctionSubclass(DisableTorchFunction):
    pass


DisableTorchFunction.__module__ = DisableTorchFunctionSubclass.__module__ = "ember"
