"""Grad modes: whether ops record the graph. Thread-local, as in PyTorch."""
import functools
import inspect
import threading
import warnings


class _GradState(threading.local):
    enabled = True
    inference = False


state = _GradState()
# whether any thread has ever entered inference mode: a process-wide flag cheaper to read than
# the thread-local one, so that making a tensor tests it first
inference_used = [False]


def is_grad_enabled():
    return state.enabled


def is_inference_mode_enabled():
    return state.inference


class _Mode:
    """Base of the grad-mode context managers; each is also a decorator."""

    def __call__(self, fn):
        mode = self
        if inspect.isclass(fn):
            warnings.warn("Decorating classes is deprecated and will be disabled in future "
                          "versions. You should only decorate functions or methods. To preserve "
                          "the current behavior of class decoration, you can directly decorate "
                          "the `__init__` method and nothing else.", FutureWarning, stacklevel=2)
            return lambda *args, **kwargs: mode.clone()(fn(*args, **kwargs))

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


class _BareDecorator(_Mode):
    """A mode that also decorates without parentheses: `@no_grad` as well as `@no_grad()`."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_BareDecorator):
    def _set(self):
        state.enabled = False


class enable_grad(_BareDecorator):
    def _set(self):
        state.enabled = True


class set_grad_enabled(_Mode):
    """Sets the mode at once (usable as a plain call) and restores it when used with `with`."""

    def __init__(self, mode):
        if type(mode) is not bool:
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {type(mode).__name__}")
        self.prev = state.enabled
        self.mode = mode
        self._prev = (state.enabled, state.inference)
        state.enabled = mode

    def __call__(self, fn):
        # as a decorator it applies only around the calls: undo what __init__ set
        state.enabled = self.prev
        return super().__call__(fn)

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

    def __repr__(self):
        return f"ember.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


class inference_mode(_Mode):
    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)          # `@inference_mode` without parentheses

    def __init__(self, mode=True):
        self.mode = mode

    def clone(self):
        return inference_mode(self.mode)

    def _set(self):
        # as PyTorch: inference mode turns grad mode off, and inference_mode(False) on
        state.enabled = not self.mode
        state.inference = self.mode
        if self.mode:
            inference_used[0] = True


class _EngineSettings(threading.local):
    # whether .grad must take the layout its variable has (torch's gradient layout contract)
    enforce_grad_layout = True


engine_settings = _EngineSettings()
# torch's engine may run backward on several device threads; this records the setting (ember's
# engine runs backward on the calling thread in either mode)
_multithreading = [True]


def is_multithreading_enabled():
    return _multithreading[0]


class _SetAtOnce(_Mode):
    """A setting applied as soon as it is made (so a plain call works) and restored when a
    `with` block or a decorated call ends."""

    def __init__(self, mode):
        self.prev = self._read()
        self.mode = mode
        self._write(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self._write(self.prev)
        return False

    def clone(self):
        return self.__class__(self.mode)


class set_multithreading_enabled(_SetAtOnce):
    """Context manager (or plain call) turning multithreaded backward on or off."""

    @staticmethod
    def _read():
        return _multithreading[0]

    @staticmethod
    def _write(mode):
        _multithreading[0] = mode


class enforce_grad_layout_policy(_SetAtOnce):
    """Context manager (or plain call): with enable=False a gradient the engine may hand over
    becomes .grad even when its strides differ from its variable's. Thread-local."""

    def __init__(self, enable=True):
        super().__init__(enable)

    @staticmethod
    def _read():
        return engine_settings.enforce_grad_layout

    @staticmethod
    def _write(mode):
        engine_settings.enforce_grad_layout = mode
