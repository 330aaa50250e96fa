"""A torch.futures.Future-like result of a collective (`Work.get_future()`), and of comm hooks.

ember has no background thread completing operations, so a future advances when it is asked:
`wait()`, `value()` and `done()` drive the underlying MPI operation (and then run the
callbacks chained with `then` / `add_done_callback`, in order).
"""


class Future:
    """wait() / value() / done() / then(callback) / add_done_callback / set_result /
    set_exception, as torch.futures.Future."""

    def __init__(self, devices=None):
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []
        self._source = None         # what completes this future when asked (a Work or parent)

    @classmethod
    def _of_work(cls, work):
        future = cls()
        future._source = work
        return future

    # -------------------------------------------------------------- completion
    def _advance(self, block):
        """Complete this future if its source is complete (waiting for it when `block`)."""
        source = self._source
        if self._done or source is None:
            return
        if isinstance(source, Future):
            source._advance(block)
            if not source._done:
                return
        elif block:
            source.wait()
        elif not source.is_completed():
            return
        self._source = None
        if isinstance(source, Future):
            callback = self._then_callback
            try:
                self._finish(callback(source), None)
            except Exception as e:      # (torch wraps the callback's error the same way)
                self._finish(None, RuntimeError(
                    f"Got the following error when running the callback: "
                    f"{type(e).__name__}: {e}"))
        else:
            self._finish(list(source._outputs), None)

    def _finish(self, value, error):
        self._done, self._value, self._error = True, value, error
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    # -------------------------------------------------------------- torch's API
    def done(self):
        self._advance(block=False)
        return self._done

    def wait(self):
        self._advance(block=True)
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        return self.wait()

    def then(self, callback):
        """A future holding callback(self)'s result once this one completes."""
        child = Future()
        child._source = self
        child._then_callback = callback
        if self._done:
            child._advance(block=False)
        return child

    def add_done_callback(self, callback):
        if self.done():
            callback(self)
        else:
            self._callbacks.append(callback)

    def set_result(self, result):
        if self._done:
            raise RuntimeError("Attempting to mark a completed Future as complete again. Note "
                               "that a Future can only be marked completed once.")
        self._finish(result, None)

    def set_exception(self, result):
        if not isinstance(result, Exception):
            # (torch asserts it)
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        if self._done:
            raise RuntimeError("Attempting to mark a completed Future as complete again. Note "
                               "that a Future can only be marked completed once.")
        self._finish(None, result)
