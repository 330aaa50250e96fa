"""Grad modes: whether ops record the graph. Thread-local, as in PyTorch."""
import functools
import inspect
import threading


class _GradState(threading.local):
    enabled = True
    inference = False


state = _GradState()


def is_grad_enabled():
    return state.enabled


def is_inference_mode_enabled():
    return state.inference


class _Mode:
    """Base of the grad-mode context managers; each is also a decorator."""

    def __call__(self, fn):
        if inspect.isclass(fn):
            raise RuntimeError("Decorating classes is deprecated and will be disabled in future "
                               "versions. You should only decorate functions or methods.")
        mode = self

        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                gen = fn(*args, **kwargs)
                value = None
                while True:
                    with mode.clone():
                        try:
                            value = gen.send(value)
                        except StopIteration as stop:
                            return stop.value
                    value = yield value
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with mode.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()

    def __enter__(self):
        self._prev = (state.enabled, state.inference)
        self._set()

    def __exit__(self, *exc):
        state.enabled, state.inference = self._prev
        return False


class no_grad(_Mode):
    def _set(self):
        state.enabled = False


class enable_grad(_Mode):
    def _set(self):
        state.enabled = True


class set_grad_enabled(_Mode):
    """Sets the mode at once (usable as a plain call) and restores it when used with `with`."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._prev = (state.enabled, state.inference)
        state.enabled = self.mode

    def clone(self):
        return set_grad_enabled.__new__(set_grad_enabled)._init_only(self.mode)

    def _init_only(self, mode):
        self.mode = mode
        return self

    def _set(self):
        state.enabled = self.mode

    def __enter__(self):
        # the mode was already applied in __init__; remember what to restore only once
        if not hasattr(self, "_prev"):
            self._prev = (state.enabled, state.inference)
        self._set()


class inference_mode(_Mode):
    def __init__(self, mode=True):
        self.mode = mode

    def clone(self):
        return inference_mode(self.mode)

    def _set(self):
        if self.mode:
            state.enabled = False
            state.inference = True
        else:
            state.inference = False
