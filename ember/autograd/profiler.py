"""ember.autograd.profiler: time ember's ops and the code regions a program names.

While a profiler records, every call of a registered op (ember/ops/registry.py: its
`profile_ops` hook) is an event named as torch names it ("aten::add", "aten::mm", an in-place
op "aten::add_"), and so is each `record_function(name)` region. Events nest: an event's self
time is its time less its children's. `key_averages()` groups them by name and `table()` prints
torch's table (self/total CPU time, their shares, calls; CPU memory with `profile_memory`,
input shapes when grouped by them).

ember's ops are Python functions over NumPy, so the names and counts are ember's own: where
torch's kernels call other kernels (`aten::ones` calls `aten::empty` and `aten::fill_`), ember
shows the op that was called; composite functions (F.linear) appear as the ops they run.
"""
import bisect
import collections
import contextlib
import enum
import itertools
import json
import os
import threading
import time

from .._tensor import Tensor
from ..ops import registry

_active = []        # the recorders of the profilers now recording (innermost last)
_ids = itertools.count(1)


class DeviceType(enum.Enum):
    """The device an event ran on (torch.profiler.DeviceType); ember's events are all CPU."""
    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    MTIA = 19
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    PrivateUse1 = 20

    def __str__(self):
        return f"DeviceType.{self.name}"

    def __int__(self):
        return self.value

    __index__ = __int__


class FunctionEvent:
    """One timed call: an op or a `record_function` region (times in microseconds)."""

    def __init__(self, name, input_shapes, parent, start_ns):
        self.id = next(_ids)
        self.name = self.key = name
        self.input_shapes = input_shapes
        self.cpu_parent = parent
        self.cpu_children = []
        self.thread = threading.get_ident()
        self._start, self._end = start_ns, start_ns
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.count = 1

    @property
    def time_range(self):
        return self._start / 1e3, self._end / 1e3

    @property
    def cpu_time_total(self):
        return (self._end - self._start) / 1e3

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    cpu_time = cpu_time_total

    device_type = DeviceType.CPU

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time="
                f"{_format_time(self.cpu_time_total)} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them), summed."""

    def __init__(self, key, input_shapes):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0

    def add(self, event):
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time="
                f"{_format_time(self.self_cpu_time_total)} cpu_time="
                f"{_format_time(self.cpu_time_total)} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


def _format_time(us, unit=None):
    if unit == "s" or unit is None and us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if unit == "ms" or unit is None and us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_memory(nbytes):
    for scale, unit in ((1024 ** 3, "GB"), (1024 ** 2, "MB"), (1024, "KB")):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} B"


def _shorten(text, width):
    # what does not fit keeps its first width-3 characters and ends "..."
    return text if len(text) <= width - 4 else text[:width - 3] + "..."


class EventList(list):
    """Events (or their averages), printed as torch's table."""

    def __init__(self, events=(), profile_memory=False, with_shapes=False):
        super().__init__(events)
        self._profile_memory = profile_memory
        self._with_shapes = with_shapes

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        groups = {}
        for event in self:
            shapes = str(event.input_shapes) if group_by_input_shape else None
            key = (event.key, shapes)
            if key not in groups:
                groups[key] = FunctionEventAvg(
                    event.key, event.input_shapes if group_by_input_shape else None)
            groups[key].add(event)
        return EventList(groups.values(), self._profile_memory, group_by_input_shape)

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def total_average(self):
        total = FunctionEventAvg("Total", None)
        for event in self:
            total.add(event)
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """torch's table: a row per event (sorted by the attribute `sort_by`, largest first),
        right-aligned columns two spaces apart, ruled above and below, and the total self CPU
        time at the end."""
        events = list(self)
        if not events:
            return ""
        if top_level_events_only:
            events = [e for e in events if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            events.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        total = sum(e.self_cpu_time_total for e in self)

        def share(t):
            return f"{100 * t / total if total else 0.0:.2f}%"

        name_width = min(max(len(e.key) for e in events) + 4, max_name_column_width)
        columns = [("Name", name_width, lambda e: _shorten(e.key, max_name_column_width)),
                   ("Self CPU %", 12, lambda e: share(e.self_cpu_time_total)),
                   ("Self CPU", 12, lambda e: _format_time(e.self_cpu_time_total, time_unit)),
                   ("CPU total %", 12, lambda e: share(e.cpu_time_total)),
                   ("CPU total", 12, lambda e: _format_time(e.cpu_time_total, time_unit)),
                   ("CPU time avg", 12, lambda e: _format_time(e.cpu_time, time_unit))]
        if self._profile_memory:
            columns += [("CPU Mem", 12, lambda e: _format_memory(e.cpu_memory_usage)),
                        ("Self CPU Mem", 12, lambda e: _format_memory(e.self_cpu_memory_usage))]
        columns.append(("# of Calls", 12, lambda e: str(e.count)))
        if self._with_shapes:
            width = min(max(len(str(e.input_shapes)) for e in events) + 4,
                        max_shapes_column_width)
            columns.append(("Input Shapes", width,
                            lambda e: _shorten(str(e.input_shapes), max_shapes_column_width)))
        rule = "".join("-" * width + "  " for _, width, _ in columns)
        lines = [rule, "".join(title.rjust(width) + "  " for title, width, _ in columns), rule]
        shown = events if row_limit < 0 else events[:row_limit]
        lines += ["".join(cell(e).rjust(width) + "  " for _, width, cell in columns)
                  for e in shown]
        lines += [rule, f"Self CPU time total: {_format_time(total, time_unit)}", ""]
        return "\n".join(lines)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """The events in Chrome's trace format (chrome://tracing, Perfetto)."""
        trace = [{"ph": "X", "cat": "cpu_op", "name": e.name, "pid": os.getpid(),
                  "tid": e.thread, "ts": e._start / 1e3, "dur": e.cpu_time_total,
                  "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}}
                 for e in self]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace}, f)


def _shapes(args):
    return [list(a._data.shape) if isinstance(a, Tensor) else [] for a in args]


def _allocated(result):
    """The bytes an op's result took (a view takes none)."""
    if isinstance(result, Tensor):
        return result._data.nbytes if result._base is None else 0
    if isinstance(result, (tuple, list)):
        return sum(_allocated(r) for r in result)
    return 0


class _Recorder:
    """The events of one profiler, nested by a stack of the ones open."""

    def __init__(self, record_shapes=False, profile_memory=False):
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.events, self._open = [], []

    def begin(self, name, args=()):
        parent = self._open[-1] if self._open else None
        event = FunctionEvent(name, _shapes(args) if self.record_shapes else [], parent,
                              time.perf_counter_ns())
        if parent is not None:
            parent.cpu_children.append(event)
        self.events.append(event)
        self._open.append(event)
        return event

    def end(self, event, result=None):
        event._end = time.perf_counter_ns()
        if self._open and self._open[-1] is event:
            self._open.pop()
        if self.profile_memory and result is not None:
            nbytes = _allocated(result)
            event.self_cpu_memory_usage += nbytes
            while event is not None:        # memory counts in every enclosing event too
                event.cpu_memory_usage += nbytes
                event = event.cpu_parent


class _OpTimer:
    """Given to the op registry's hook: times one op call in every recording profiler."""

    @staticmethod
    def begin(name, args):
        return [(r, r.begin(name, args)) for r in _active]

    @staticmethod
    def end(events, result):
        for recorder, event in reversed(events):
            recorder.end(event, result)


def _start(recorder):
    _active.append(recorder)
    if len(_active) == 1:
        registry.profile_ops(_OpTimer)


def _stop(recorder):
    if recorder in _active:
        _active.remove(recorder)
    if not _active:
        registry.profile_ops(None)


class record_function(contextlib.ContextDecorator):
    """A named region of the program, an event of its own in a recording profiler (a context
    manager or a decorator; nothing is done while no profiler records)."""

    def __init__(self, name, args=None):
        self.name, self.args = name, args
        self._events = None

    def __enter__(self):
        self._events = _OpTimer.begin(self.name, ()) if _active else None
        return self

    def __exit__(self, *exc):
        if self._events:
            _OpTimer.end(self._events, None)
        self._events = None
        return False


class profile:
    """The autograd profiler: records while entered (`enabled=True`)."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        self.enabled = enabled
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack = with_stack
        self._recorder = None
        self._events = []

    def __enter__(self):
        if self.enabled:
            self._recorder = _Recorder(self.record_shapes, self.profile_memory)
            _start(self._recorder)
        return self

    def __exit__(self, *exc):
        if self._recorder is not None:
            _stop(self._recorder)
            self._events += self._recorder.events
            self._recorder = None
        return False

    @property
    def function_events(self):
        return self.events()

    def events(self):
        return EventList(self._events, self.profile_memory)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by=None, row_limit=100, **kwargs):
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def total_average(self):
        return self.events().total_average()

    @property
    def self_cpu_time_total(self):
        return self.events().self_cpu_time_total

    def export_chrome_trace(self, path):
        self.events().export_chrome_trace(path)

    def __str__(self):
        return self.table()


class emit_nvtx(contextlib.nullcontext):
    """Accepted: ember has no NVTX ranges to emit."""

    def __init__(self, enabled=True, record_shapes=False):
        super().__init__()


class emit_itt(emit_nvtx):
    pass



class EnforceUnique:
    """Raises RuntimeError when a key is seen a second time."""

    def __init__(self):
        self.seen = set()

    def see(self, *key):
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


class KinetoStepTracker:
    """The global profiler step, counted per requester ("ProfilerStep", an optimizer's step):
    each requester counts its own steps and the global step is the largest count, so that two
    sources stepping once each advance it by one, not two."""

    _current_step = 0
    _step_dict = collections.defaultdict(int)

    @classmethod
    def init_step_count(cls, requester):
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester):
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester):
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        cls._current_step = max(cls._current_step, max(cls._step_dict.values()))
        return cls._current_step

    @classmethod
    def current_step(cls):
        return cls._current_step


class MemRecordsAcc:
    """Memory records (tuples whose first item has `start_ns()`) looked up by time interval."""

    def __init__(self, mem_records):
        self._mem_records = mem_records
        order = sorted(range(len(mem_records)), key=lambda i: mem_records[i][0].start_ns())
        self._order = order
        self._starts = [mem_records[i][0].start_ns() for i in order]

    def in_interval(self, start_ns, end_ns):
        """The records starting in [start_ns, end_ns], earliest first."""
        lo = bisect.bisect_left(self._starts, start_ns)
        hi = bisect.bisect_right(self._starts, end_ns)
        for k in range(lo, hi):
            yield self._mem_records[self._order[k]]
