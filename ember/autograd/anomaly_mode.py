"""Anomaly detection, as torch.autograd.detect_anomaly / set_detect_anomaly.

While it is on, every node records the stack of the forward call that created it (registry.py
and function.py call `record_trace`). When a node fails in backward, the engine calls
`report_trace`: a warning that shows that stack. With check_nan (the default) the engine also
calls `check_nan` after each node: a gradient holding NaN raises, naming the node and output.
"""
import os
import sys
import traceback
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class _AnomalyState:
    """Process-wide, as in PyTorch (not per thread)."""
    enabled = False
    check_nan = True


state = _AnomalyState()

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def is_anomaly_enabled():
    return state.enabled


def is_anomaly_check_nan_enabled():
    return state.check_nan


def set_anomaly_enabled(enabled, check_nan=True):
    state.enabled, state.check_nan = enabled, check_nan


class detect_anomaly:
    """Context manager: anomaly detection on inside the block (and a warning that it is slow)."""

    def __init__(self, check_nan=True):
        self.prev = state.enabled
        self.check_nan = check_nan
        self.prev_check_nan = state.check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Switches anomaly detection on or off now; as a context manager, restores it on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = state.enabled
        self.prev_check_nan = state.check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


def record_trace(node):
    """Keep the stack of the forward call creating `node`, up to the caller's last frame outside
    ember. Source lines are read only if the trace is ever reported."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_EMBER_DIR):
        frame = frame.f_back
    trace = traceback.StackSummary.extract(traceback.walk_stack(frame), lookup_lines=False)
    trace.reverse()
    node.extras().trace = trace


def report_trace(node):
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
                  f"error:\n{''.join(node._trace.format())} (Triggered internally at "
                  f"/__w/pytorch/pytorch/torch/csrc/autograd/python_anomaly_mode.cpp:122.)",
                  UserWarning, stacklevel=2)


def check_nan(node, grads):
    """After a node ran: raise, naming the first of its outputs that holds NaN, as PyTorch."""
    for i, g in enumerate(grads):
        if g is not None and g._dtype._category >= 2 and bool(g.isnan().any()):
            if node._trace is not None:
                report_trace(node)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output.")
