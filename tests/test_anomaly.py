"""Anomaly detection against torch's: the NaN error, the warning that carries the forward
traceback of the failing node, check_nan=False, the flags and the warning on entering."""
import threading
import warnings

from differential import same, catch


def observed(fn):
    """(result or exception, warnings) of fn; an 'Error detected' warning is reduced to its
    first line, the frames of this file (the user's code: the same lines under torch and ember;
    the frames of torch's or ember's own files differ) and its last line."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = catch(fn)
    messages = []
    for w in caught:
        text = str(w.message)
        if text.startswith("Error detected in "):
            lines = text.split("\n")
            frames = [(lines[i].strip(), lines[i + 1].strip()) for i in range(1, len(lines) - 1)
                      if lines[i].startswith("  File ") and __file__ in lines[i]]
            text = [lines[0], frames, lines[-1]]
        messages.append([w.category.__name__, text])
    return result, messages


def nan_in_backward(T):
    x = T.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt() * 0
    (y / y).sum().backward()        # 0/0: the gradient w.r.t. the divisor is NaN
    return x.grad


def raising_function(T):
    class Fails(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")
    return Fails


def test_nan_in_backward_raises_and_warns_with_the_forward_trace():
    def scenario(T):
        def run():
            with T.autograd.detect_anomaly():
                return nan_in_backward(T)
        return observed(run)
    result, messages = same(scenario)
    assert result == ("raised", "RuntimeError",
                      "Function 'DivBackward0' returned nan values in its 1th output.")
    header, frames, last = messages[1][1]
    assert header == "Error detected in DivBackward0. Traceback of forward call that caused " \
                     "the error:"
    assert frames[-1][1] == "(y / y).sum().backward()        # 0/0: the gradient w.r.t. the " \
                            "divisor is NaN"
    assert last.startswith(" (Triggered internally at ")


def test_nan_of_a_custom_function_names_its_output():
    def scenario(T):
        class NanForSecond(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, g):
                return g, g * float("nan")

        def run():
            with T.autograd.detect_anomaly():
                a, b = T.ones(2, requires_grad=True), T.ones(2, requires_grad=True)
                NanForSecond.apply(a, b).sum().backward()
        return observed(run)
    same(scenario)


def test_an_error_in_backward_warns_with_the_forward_trace_of_the_failing_node():
    def scenario(T):
        fails = raising_function(T)

        def run():
            with T.autograd.detect_anomaly():
                x = T.tensor([1.0, 2.0], requires_grad=True)
                y = fails.apply(x)
                y.exp().sum().backward()

        def run_with_set_detect_anomaly():
            T.autograd.set_detect_anomaly(True)
            try:
                x = T.tensor([1.0, 2.0], requires_grad=True)
                fails.apply(x).exp().sum().backward()
            finally:
                T.autograd.set_detect_anomaly(False)

        def run_off():           # without anomaly detection: no trace
            x = T.tensor([1.0, 2.0], requires_grad=True)
            fails.apply(x).exp().sum().backward()
        return [observed(run), observed(run_with_set_detect_anomaly), observed(run_off)]
    with_detect, with_set, off = same(scenario)
    (_, enabled_warning), (_, (header, frames, _)) = with_detect[1]
    assert header.startswith("Error detected in FailsBackward.")
    assert frames[-1][1] == "y = fails.apply(x)"       # the user's forward call, last
    assert with_set[1][0][1][1][-1][1] == "fails.apply(x).exp().sum().backward()"
    assert off == (("raised", "ValueError", "boom"), [])


def test_engine_errors_under_anomaly_detection_name_the_node_that_failed():
    def scenario(T):
        def backward_twice():
            with T.autograd.detect_anomaly():
                a = T.ones(2, requires_grad=True)
                s = (a * 2).exp().sum()
                s.backward()
                s.backward()
        return observed(backward_twice)
    same(scenario)


def test_inplace_error_under_anomaly_detection_gives_torchs_other_hint():
    def scenario(T):
        def modified_then_backward():
            with T.autograd.detect_anomaly():
                a = T.ones(3, requires_grad=True)
                b = a.exp()
                b.add_(1)
                b.sum().backward()
        (kind, name, message), messages = observed(modified_then_backward)
        # ember adds a line naming the in-place call's file:line: compare torch's part
        return kind, name, message.split("\n(ember)")[0], messages
    same(scenario)


def test_check_nan_false_lets_nan_through():
    def scenario(T):
        def run():
            with T.autograd.detect_anomaly(check_nan=False):
                flags = [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
                return flags, nan_in_backward(T)
        return observed(run), [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
    same(scenario)


def test_flags_and_set_detect_anomaly_as_function_and_context_manager():
    def scenario(T):
        def run():
            seen = [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
            T.autograd.set_detect_anomaly(True, check_nan=False)
            seen += [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
            T.autograd.set_detect_anomaly(False)
            seen += [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
            with T.autograd.set_detect_anomaly(True):
                seen.append(T.is_anomaly_enabled())
                with T.autograd.detect_anomaly(check_nan=False):
                    seen += [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
                seen += [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
            seen.append(T.is_anomaly_enabled())
            T.set_anomaly_enabled(True, False)
            seen += [T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled()]
            T.set_anomaly_enabled(False)
            # the mode is process-wide, not per thread
            with T.autograd.detect_anomaly(check_nan=False):
                t = threading.Thread(target=lambda: seen.append(
                    (T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled())))
                t.start()
                t.join()
            return seen
        return observed(run), sorted(T.autograd.anomaly_mode.__all__)
    same(scenario)
