"""ember.futures against torch.futures (torch 2.13), in one process: Future's completion,
values, errors, callbacks and their order, then-chains, threads, collect_all and wait_all."""
import threading
import time

import pytest
import torch
import torch.futures

import ember
import ember.futures


def _outcome(call):
    """What a call returns, or its error's type name and first line (torch's messages go on
    with a C++ or Python location that differs between the libraries)."""
    try:
        return ("ok", call())
    except Exception as e:
        message = str(e).split("\n")[0]
        if "INTERNAL ASSERT FAILED" in message:     # (torch's goes on with its source file)
            message = message[:message.index("FAILED") + len("FAILED")]
        return type(e).__name__, message


def _error(future):
    """The error a completed future raises: its type, first line, and whether wait() and
    value() raise the very object given to set_exception."""
    try:
        future.wait()
    except Exception as e:
        return type(e).__name__, str(e).split("\n")[0]
    return None


@pytest.fixture(params=["torch", "ember"])
def lib(request):
    return torch if request.param == "torch" else ember


def _completion(F):
    out = []
    f = F.Future()
    out += [f.done(), _outcome(f.value)]            # value() before completion: torch asserts
    out.append(_outcome(lambda: f.set_result([1, 2])))
    out += [f.done(), f.wait(), f.value(), f.wait() is f.value()]
    out.append(_outcome(lambda: f.set_result(3)))
    out.append(_outcome(lambda: f.set_exception(ValueError("late"))))
    g = F.Future()
    error = KeyError("k")
    g.set_exception(error)
    out.append(g.done())
    for read in (g.wait, g.value):
        try:
            read()
        except KeyError as e:
            out.append(e is error)
    out.append(_outcome(lambda: F.Future().set_exception(5)))
    out.append(_outcome(lambda: F.Future().set_exception(ValueError)))
    n = F.Future()
    n.set_result(None)
    out.append((n.done(), n.wait()))
    out.append(_outcome(lambda: F.Future(devices=["cpu"])))
    out.append(_outcome(lambda: F.Future(["cpu"])))
    return out


def test_completion_values_and_errors():
    assert _completion(ember.futures) == _completion(torch.futures)


def _callbacks(F):
    out = []
    order = []
    f = F.Future()
    f.add_done_callback(lambda fut: order.append(("a", fut.value())))
    doubled = f.then(lambda fut: fut.wait() * 2)
    f.add_done_callback(lambda fut: order.append(("c", fut.value())))
    out.append((doubled.done(), list(order)))
    f.set_result(21)
    out.append((doubled.done(), doubled.wait(), list(order)))
    f.add_done_callback(lambda fut: order.append("late"))       # runs at once
    out.append(list(order))
    out.append(f.then(lambda fut: fut.value() + 1).wait())       # then on a completed future
    # a then-callback's error: the child raises RuntimeError naming it; the parent is fine
    bad = f.then(lambda fut: 1 / 0)
    out += [bad.done(), _error(bad), f.wait()]
    # then on a failed future: the callback runs; it may ignore the error or re-raise it
    failed = F.Future()
    ignoring = failed.then(lambda fut: "fine")
    raising = failed.then(lambda fut: fut.wait())
    failed.set_exception(KeyError("k"))
    out += [ignoring.wait(), _error(raising)]
    # an add_done_callback error is logged and dropped: completion goes on
    quiet = F.Future()
    quiet.add_done_callback(lambda fut: 1 / 0)
    quiet.add_done_callback(lambda fut: order.append("after the error"))
    out += [_outcome(lambda: quiet.set_result(7)), quiet.wait(), order[-1]]
    # a callback returning a Future: the child's value is that Future, not its value
    inner = F.Future()
    outer = F.Future()
    child = outer.then(lambda fut: inner)
    outer.set_result(0)
    out += [child.done(), child.wait() is inner, inner.done()]
    # chains
    head = F.Future()
    tail = head.then(lambda fut: fut.wait() + 1).then(lambda fut: fut.wait() * 10)
    head.set_result(1)
    out.append(tail.wait())
    out.append(_outcome(lambda: F.Future().then(5)))
    out.append(_outcome(lambda: F.Future().add_done_callback(5)))
    return out


def test_callbacks_then_and_their_errors():
    assert _callbacks(ember.futures) == _callbacks(torch.futures)


def _collect(F):
    out = []
    a, b = F.Future(), F.Future()
    both = F.collect_all([a, b])
    out.append(both.done())
    a.set_result(1)
    out.append(both.done())
    b.set_result(2)
    out.append((both.done(), [f.wait() for f in both.wait()]))
    out.append(F.wait_all([a, b]))
    # an error completes collect_all only when every future has completed; the error is the
    # first failed future's in the list, whatever order they failed in
    a, b, c = F.Future(), F.Future(), F.Future()
    failing = F.collect_all((a, b, c))
    c.set_exception(ValueError("third"))
    out.append(failing.done())
    b.set_exception(KeyError("second"))
    a.set_result(0)
    out += [failing.done(), _error(failing)]
    out.append(_outcome(lambda: F.wait_all([a, b, c])))
    out += [F.collect_all([]).wait(), F.wait_all([])]
    done = F.Future()
    done.set_result("x")
    out.append(F.wait_all((done,)))
    for bad in ([1], 3):
        out.append(_outcome(lambda: F.collect_all(bad))[0])
        out.append(_outcome(lambda: F.wait_all(bad))[0])
    return out


def test_collect_all_and_wait_all():
    assert _collect(ember.futures) == _collect(torch.futures)


def test_incompatible_arguments_message():
    for F in (ember.futures, torch.futures):
        kind, message = _outcome(lambda: F.collect_all([1]))
        assert kind == "TypeError"
        assert message == "_collect_all(): incompatible function arguments. The following " \
                          "argument types are supported:"


def test_completed_by_another_thread(lib):
    F = lib.futures
    f = F.Future()
    chained = f.then(lambda fut: fut.wait() + 1)
    threading.Thread(target=lambda: (time.sleep(0.05), f.set_result(41))).start()
    assert chained.wait() == 42 and f.wait() == 41
    futures = [F.Future() for _ in range(3)]

    def complete():
        for k, fut in enumerate(futures):
            time.sleep(0.01)
            fut.set_result(k)
    threading.Thread(target=complete).start()
    assert F.wait_all(futures) == [0, 1, 2]


def test_names_and_types(lib):
    F = lib.futures
    assert F.__all__ == ["Future", "collect_all", "wait_all"]
    assert lib.jit.Future is F.Future
    assert isinstance(F.Future(), lib.Future)
    assert repr(F.Future[int]) == f"{lib.__name__}.jit.Future[int]"
    assert repr(F.Future()).startswith(f"<{lib.__name__}.jit.Future object at ")
    assert isinstance(F.Future().then(lambda f: 0), lib.Future)


def test_value_of_a_tensor():
    for lib in (ember, torch):
        f = lib.futures.Future()
        f.set_result(lib.ones(2))
        assert f.then(lambda fut: fut.value() * 3).wait().tolist() == [3.0, 3.0]
