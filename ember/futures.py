"""torch.futures: Future (a value that arrives later), collect_all and wait_all.

A Future completes once, with a value (`set_result`) or an error (`set_exception`); `wait()`
blocks until then and returns the value or raises the error; callbacks chained with `then` and
`add_done_callback` run, in the order they were added, when it completes. Another thread may
complete a Future a thread waits on.

ember has no background thread completing communication: the Future of a collective
(`Work.get_future()`) has a source, the Work, and advances when asked: `wait()`, `value()` and
`done()` drive the MPI operation (and then run the callbacks). Where torch differs: torch's
`then` returns its base class (`torch.Future`), ember's the same class; `value()` of a
collective's Future that has not completed waits for it here (torch's has usually completed in
the background by then).
"""
import sys
import threading
import traceback

__all__ = ["Future", "collect_all", "wait_all"]

_TWICE = ("Attempting to mark a completed Future as complete again. Note that a Future can only "
          "be marked completed once.")


def _incompatible(function, signature, *args):
    # (torch's pybind binding refuses wrong argument types with this message)
    invoked = ", ".join(repr(a) for a in args)
    return TypeError(f"{function}(): incompatible function arguments. The following argument "
                     f"types are supported:\n    1. {signature}\n\nInvoked with: {invoked}")


def _callback_error(error):
    """torch's wrapping of an error raised by a `then` callback: the message, then the frames
    the error passed through, innermost first."""
    frames = traceback.extract_tb(error.__traceback__)
    where = "".join(f"  {f.filename}({f.lineno}): {f.name}\n" for f in reversed(frames))
    return RuntimeError(f"Got the following error when running the callback: "
                        f"{type(error).__name__}: {error}\n\nAt:\n{where}")


class Future:
    """A value that arrives later: wait / value / done / then / add_done_callback /
    set_result / set_exception, as torch.futures.Future."""

    def __init__(self, *, devices=None):
        for device in devices or ():
            text = str(device)
            if ":" not in text:
                raise ValueError(f"Expected devices to have indices, got {text}")
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []
        # what completes this future when asked: a Work, the parent future of a `then` (whose
        # callback is _then), or the list of a collect_all's futures
        self._source = None
        self._then = None
        self._lock = threading.Condition()

    def __class_getitem__(cls, item):       # Future[int], as torch's Generic Future
        return _GenericAlias(cls, item)

    @classmethod
    def _of_work(cls, work):
        """The Future of a collective's Work: its value is the Work's output tensors."""
        future = cls()
        future._source = work
        return future

    # -------------------------------------------------------------- completion
    def _advance(self, block):
        """Drive this future's source (waiting for it when `block`): a Work completes the
        future itself; a parent future (of `then`) or the parts of a collect_all complete it
        through their callbacks."""
        source = self._source
        if self._done or source is None:
            return
        if isinstance(source, Future):
            if block:
                source._wait_done()
            else:
                source._advance(False)
        elif isinstance(source, list):
            for part in source:
                if block:
                    part._wait_done()
                else:
                    part._advance(False)
        else:
            if block:
                source.wait()
            elif not source.is_completed():
                return
            self._source = None
            self._finish(list(source._outputs), None)

    def _wait_done(self):
        """Block until this future is complete (driven by its source, or by another thread)."""
        self._advance(block=True)
        with self._lock:
            while not self._done:
                self._lock.wait()

    def _finish(self, value, error):
        with self._lock:
            if self._done:
                raise RuntimeError(_TWICE)
            self._done, self._value, self._error = True, value, error
            callbacks, self._callbacks = self._callbacks, []
            self._lock.notify_all()
        for callback in callbacks:
            callback(self)

    def _run_then(self, parent):
        """Complete this `then` child with its callback's result on `parent`."""
        self._source = None
        try:
            value = self._then(parent)
        except Exception as e:
            self._finish(None, _callback_error(e))
        else:
            self._finish(value, None)

    # -------------------------------------------------------------- torch's API
    def done(self):
        """Whether the future has a value or an error (driving a collective's operation)."""
        self._advance(block=False)
        return self._done

    def wait(self):
        """Block until the future completes; its value, or raise its error."""
        self._wait_done()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        """The value of a completed future (or raise its error)."""
        if self._source is not None:
            self._wait_done()
        if not self._done:
            # (torch: its completed() assertion)
            raise RuntimeError("completed() INTERNAL ASSERT FAILED: value() of a Future that "
                               "has not completed; call wait() first")
        if self._error is not None:
            raise self._error
        return self._value

    def then(self, callback):
        """A new future holding callback(self)'s result once this one completes (or, when the
        callback raises, a RuntimeError naming its error)."""
        if not callable(callback):
            raise _incompatible("then", "(self: torch._C.Future, arg0: collections.abc."
                                "Callable) -> torch._C.Future", self, callback)
        child = Future()
        child._source, child._then = self, callback
        self._add(child._run_then)
        return child

    def add_done_callback(self, callback):
        """Run callback(self) when the future completes (now, if it has). An error the callback
        raises is printed and dropped, as torch logs it."""
        if not callable(callback):
            raise _incompatible("add_done_callback", "(self: torch._C.Future, arg0: collections."
                                "abc.Callable) -> None", self, callback)

        def run(future):
            try:
                callback(future)
            except Exception as e:
                sys.stderr.write(f"{_callback_error(e).args[0]}\n")
        self._add(run)

    def _add(self, callback):
        self._advance(block=False)
        with self._lock:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def set_result(self, result):
        """Complete the future with `result` (once only); waiters wake, callbacks run."""
        self._finish(result, None)

    def set_exception(self, result):
        """Complete the future with the error `result`: wait() and value() raise it."""
        if not isinstance(result, Exception):
            # (torch asserts it)
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._finish(None, result)


# torch's Future class says it is torch.jit's (in its repr, and in Future[int]'s)
Future.__module__ = "ember.jit"


class _GenericAlias:
    """Future[T]: the class with a type argument, for annotations (calls make a Future)."""

    def __init__(self, origin, item):
        self.__origin__, self.__args__ = origin, (item,)

    def __call__(self, *args, **kwargs):
        return self.__origin__(*args, **kwargs)

    def __repr__(self):
        item = self.__args__[0]
        name = item.__name__ if isinstance(item, type) else repr(item)
        return f"{self.__origin__.__module__}.{self.__origin__.__qualname__}[{name}]"


def collect_all(futures):
    """A Future completed when every future in the list has: its value is that list of futures
    (or, if some failed, the error of the first of them in the list)."""
    if not isinstance(futures, (list, tuple)) or \
            not all(isinstance(f, Future) for f in futures):
        raise _incompatible("_collect_all", "(arg0: collections.abc.Sequence[torch._C.Future]) "
                            "-> torch._C.Future", futures)
    futures = list(futures)
    combined = Future()
    combined._source = futures          # (waiting on it drives each part's source)
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            remaining[0] -= 1
            if remaining[0]:
                return
        combined._source = None
        failed = [f for f in futures if f._error is not None]
        if failed:
            combined._finish(None, failed[0]._error)
        else:
            combined._finish(futures, None)
    if not futures:
        combined._source = None
        combined.set_result([])
    for f in futures:
        f._add(one_done)
    return combined


def wait_all(futures):
    """Wait for every future in the list; their values (raising the first error)."""
    return [f.wait() for f in collect_all(futures).wait()]
