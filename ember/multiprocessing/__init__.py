"""ember.multiprocessing: Python's multiprocessing (re-exported whole, as torch.multiprocessing
does) and torch's `spawn`/`start_processes`, which run `fn(i, *args)` in `nprocs` processes.

As with torch, a tensor sent to another process (a Queue, a Pipe, a Process argument under
"spawn") shares its memory with the sender instead of being copied: importing this module (as
`import ember` does) teaches multiprocessing's pickler to send tensors and Parameters as shared
memory (ember._shared_memory), so Hogwild-style training updates one model from many processes.
"""
import multiprocessing
import traceback
from multiprocessing import *  # noqa: F401,F403
from multiprocessing.connection import wait as _wait
from multiprocessing.reduction import ForkingPickler
import signal
import warnings

from .. import _dtype as D
from .._shared_memory import map_received, mark_shared, reduce_tensor, segment_of
from .._tensor import Tensor
from ..nn.parameter import Parameter

__all__ = list(multiprocessing.__all__) + [
    "spawn", "start_processes", "ProcessContext", "ProcessException", "ProcessRaisedException",
    "ProcessExitedException", "get_sharing_strategy", "set_sharing_strategy",
    "get_all_sharing_strategies"]

_sharing = ["file_descriptor"]


def get_all_sharing_strategies():
    return {"file_descriptor", "file_system"}


def get_sharing_strategy():
    return _sharing[0]


def set_sharing_strategy(new_strategy):
    """Recorded only: ember always shares tensors by file descriptor (torch's default)."""
    if new_strategy not in get_all_sharing_strategies():
        raise AssertionError
    _sharing[0] = new_strategy


def _reduce_tensor(tensor):
    """multiprocessing's pickler sends a tensor as shared memory (ember._shared_memory)."""
    shared = reduce_tensor(tensor)
    if shared is None:
        return tensor.__reduce_ex__(2)          # (by value: no sharing off the CPU here)
    return _rebuild_tensor, shared


def _rebuild_tensor(where, what):
    data, segment = map_received(*where)
    dtype_name, requires_grad = what
    tensor = Tensor._make(data, D.ALIASES[dtype_name])
    mark_shared(tensor, segment)
    tensor._requires_grad = requires_grad
    return tensor


def _reduce_parameter(param):
    shared = reduce_tensor(param)
    if shared is None:
        return param.__reduce_ex__(2)
    return _rebuild_parameter, shared


def _rebuild_parameter(where, what):
    data = _rebuild_tensor(where, (what[0], False))
    param = Parameter(data, what[1])
    mark_shared(param, segment_of(data))
    return param


ForkingPickler.register(Tensor, _reduce_tensor)
ForkingPickler.register(Parameter, _reduce_parameter)


class ProcessException(Exception):
    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A process's function raised: the message carries its traceback."""

    @property
    def error_pid(self):
        return self.pid


class ProcessExitedException(ProcessException):
    """A process ended with a non-zero exit code (or a signal)."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    @property
    def error_pid(self):
        return self.pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _run(fn, i, args, errors):
    """A child's body: fn(i, *args), its traceback sent back if it raises."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:       # noqa: BLE001 - reported to the parent, which raises it
        errors.put((i, traceback.format_exc()))
        raise SystemExit(1)


class ProcessContext:
    def __init__(self, processes, error_queue):
        self.processes, self.error_queue = processes, error_queue

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """True once every process has ended; the first failure raises (the others are
        terminated); False if `timeout` passed first."""
        running = {p.sentinel: (i, p) for i, p in enumerate(self.processes) if p.is_alive()}
        while running:
            ready = _wait(list(running), timeout=timeout)
            if not ready:
                return False
            for sentinel in ready:
                i, p = running.pop(sentinel)
                p.join()
                if p.exitcode != 0:
                    self._fail(i, p)
        for i, p in enumerate(self.processes):
            if p.exitcode != 0:
                self._fail(i, p)
        return True

    def _fail(self, i, process):
        for other in self.processes:
            if other.is_alive():
                other.terminate()
                other.join()
        if not self.error_queue.empty():
            index, trace = self.error_queue.get()
            raise ProcessRaisedException(
                f"\n\n-- Process {index} terminated with the following error:\n{trace}",
                index, self.processes[index].pid)
        code = process.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(f"process {i} terminated with signal {name}", i,
                                         process.pid, code, name)
        raise ProcessExitedException(f"process {i} terminated with exit code {code}", i,
                                     process.pid, code)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run fn(i, *args) for i in range(nprocs), each in a process of `start_method`; wait for
    them (join=True, returning None) or return their ProcessContext."""
    context = multiprocessing.get_context(start_method)
    errors = context.SimpleQueue()
    processes = []
    for i in range(nprocs):
        process = context.Process(target=_run, args=(fn, i, args, errors), daemon=daemon)
        process.start()
        processes.append(process)
    processes_context = ProcessContext(processes, errors)
    if not join:
        return processes_context
    processes_context.join()
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """start_processes with the "spawn" start method (another method: torch's FutureWarning,
    and "spawn" all the same)."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      f"To use a different start_method use:\n\t\t "
                      f"torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
