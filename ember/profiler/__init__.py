"""ember.profiler: torch.profiler's API over ember.autograd.profiler's recorder.

`profile(activities=..., record_shapes=..., profile_memory=..., with_stack=...)` records ember's
op calls and `record_function` regions while entered; with a `schedule`, only in the steps it
marks for recording (each such step is an event "ProfilerStep#<n>", averaged as
"ProfilerStep*"), and `on_trace_ready(prof)` is called at the end of each recording cycle.
ember computes on the CPU only (the CUDA backend included: its time is spent in the calls), so
every activity is recorded as CPU time. `with_stack` and `with_flops` are accepted and not
recorded.
"""
import enum

from ..autograd.profiler import (record_function, EventList, _Recorder, _start, _stop,  # noqa: F401
                                 FunctionEvent, FunctionEventAvg, DeviceType, KinetoStepTracker)
import warnings


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5

    def __str__(self):
        return f"ProfilerActivity.{self.name}"


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def kineto_available():
    """Whether torch's Kineto tracing library is here: no, ember's profiler is its own
    recorder (the profile API works without it)."""
    return False


def supported_activities():
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The action at each step: after `skip_first` steps, cycles of `wait` steps doing nothing,
    `warmup` steps, and `active` recorded steps (the last one saved), `repeat` times (0: for
    ever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results")

    def action(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        period = wait + warmup + active
        if repeat > 0 and step // period >= repeat:
            return ProfilerAction.NONE
        at = step % period
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < period - 1 else ProfilerAction.RECORD_AND_SAVE
    return action


def _always_record(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    raise NotImplementedError("ember.profiler.tensorboard_trace_handler: ember does not write "
                              "TensorBoard traces; use prof.export_chrome_trace(path) (open it "
                              "in chrome://tracing or Perfetto) or prof.key_averages().table()")


class profile:
    """Records while entered (or between start() and stop()); step() moves the schedule on."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None):
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.with_flops, self.acc_events = with_stack, with_flops, acc_events
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._recorder = self._step_event = None
        self._events = []
        self._scheduled = schedule is not None

    # ---------------------------------------------------------------- recording
    def _recording(self, action):
        return action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def _begin_step(self):
        if self._recording(self.current_action):
            if self._recorder is None:
                self._recorder = _Recorder(self.record_shapes, self.profile_memory)
                _start(self._recorder)
            if self._scheduled:
                self._step_event = self._recorder.begin(f"ProfilerStep#{self.step_num}")

    def _end_step(self, stopping):
        """Close the step; end the cycle (stop recording, hand the trace over) when the
        schedule saves here or recording stops."""
        if self._step_event is not None:
            self._recorder.end(self._step_event)
            self._step_event = None
        following = None if stopping else self.schedule(self.step_num + 1)
        if self._recorder is not None and (
                stopping or self.current_action is ProfilerAction.RECORD_AND_SAVE or
                not self._recording(following)):
            _stop(self._recorder)
            if not self.acc_events:
                self._events = []
            self._events += self._recorder.events
            self._recorder = None
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def start(self):
        KinetoStepTracker.init_step_count("ProfilerStep")
        self._begin_step()

    def stop(self):
        self._end_step(stopping=True)

    def step(self):
        self._end_step(stopping=False)
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._begin_step()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        KinetoStepTracker.erase_step_count("ProfilerStep")
        return False

    # ---------------------------------------------------------------- results
    def events(self):
        return EventList(self._events, self.profile_memory)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        averages = self.events().key_averages(group_by_input_shape, group_by_stack_n)
        for avg in averages:          # each step is its own event, averaged together
            if avg.key.startswith("ProfilerStep#"):
                avg.key = "ProfilerStep*"
        merged = {}
        for avg in averages:
            key = (avg.key, str(avg.input_shapes))
            merged[key] = merged[key].add(avg) if key in merged else avg
        return EventList(merged.values(), self.profile_memory, group_by_input_shape)

    def export_chrome_trace(self, path):
        self.events().export_chrome_trace(path)

