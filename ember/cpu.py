"""ember.cpu: the CPU's device module (what ember.get_device_module("cpu") returns), with the
same functions as ember.cuda's for code written against any device module. The CPU runs work
in order as it is issued: there is one stream and synchronizing is immediate."""
import contextlib

from ._build_info import Event, Stream

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream",
           "stream", "set_device", "device_count", "Stream", "StreamContext", "Event"]

_default_stream = Stream()


def is_available():
    return True


def is_initialized():
    return True


def synchronize(device=None):
    pass


def current_device():
    return "cpu"


def current_stream(device=None):
    return _default_stream


def set_device(device):
    pass


def device_count():
    return 1


class StreamContext(contextlib.nullcontext):
    """Running under a CPU stream changes nothing."""


def stream(stream):
    return StreamContext(stream)
