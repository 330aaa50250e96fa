"""Anomaly detection: record each node's forward stack, check backward outputs for NaN."""
import threading
import traceback
import warnings


class _AnomalyState(threading.local):
    enabled = False
    check_nan = True


state = _AnomalyState()


def is_anomaly_enabled():
    return state.enabled


def is_anomaly_check_nan_enabled():
    return state.check_nan


class detect_anomaly:
    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self._prev = (state.enabled, state.check_nan)
        state.enabled, state.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        state.enabled, state.check_nan = self._prev


class set_detect_anomaly:
    def __init__(self, mode, check_nan=True):
        self._prev = (state.enabled, state.check_nan)
        state.enabled, state.check_nan = mode, check_nan

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.enabled, state.check_nan = self._prev


def record_trace(node):
    node.extras().trace = "".join(traceback.format_stack()[:-3])


def report_trace(node):
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
                  f"error:\n{node._trace}", UserWarning, stacklevel=2)


def check_nan(node, grads):
    """After a node ran: raise, naming the first of its outputs that holds NaN, as PyTorch."""
    for i, g in enumerate(grads):
        if g is not None and g._dtype._category >= 2 and bool((g != g).any()):
            if node._trace:
                report_trace(node)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output.")
