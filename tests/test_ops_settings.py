"""Global switches against torch: deterministic algorithms, warn_always, the default tensor type, the runtime settings and the interop thread count.
"""
import pytest
import torch
import ember
from differential import same, catch, warnings_of


def test_runtime_settings():
    def f(T):
        return (T.set_flush_denormal(False), T.init_num_threads(),
                type(T.get_num_interop_threads()).__name__,
                catch(T.set_num_interop_threads, 0), catch(T.set_num_interop_threads, "a"),
                catch(T.set_num_interop_threads, True),
                T.is_storage(T.ones(2).untyped_storage()), T.is_storage(T.ones(2)),
                T.is_storage(3))
    same(f)
    assert ember.get_num_interop_threads() == torch.get_num_interop_threads()


def test_set_num_interop_threads_once():
    # (run in ember only: torch's setting cannot be undone within the process)
    ember.ops.settings._interop_threads[0] = None
    try:
        assert ember.set_num_interop_threads(3) is None
        assert ember.get_num_interop_threads() == 3
        with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
            ember.set_num_interop_threads(2)
    finally:
        ember.ops.settings._interop_threads[0] = None


# ----------------------------------------------------------------------------- switches
def test_deterministic_and_warn_always_switches():
    def f(T):
        out = [T.are_deterministic_algorithms_enabled(),
               catch(T.use_deterministic_algorithms, 1)]
        T.use_deterministic_algorithms(True, warn_only=True)
        out += [T.are_deterministic_algorithms_enabled(),
                T.is_deterministic_algorithms_warn_only_enabled()]
        T.use_deterministic_algorithms(False)
        out += [T.are_deterministic_algorithms_enabled(),
                T.is_deterministic_algorithms_warn_only_enabled(),
                catch(T.set_warn_always, 1)]
        T.set_warn_always(True)
        out.append(T.is_warn_always_enabled())
        T.set_warn_always(False)
        out.append(T.is_warn_always_enabled())
        return out
    same(f)


def test_set_default_tensor_type():
    def f(T):
        try:
            result, caught = warnings_of(lambda: T.set_default_tensor_type(T.DoubleTensor))
            after = [T.get_default_dtype(), T.tensor([1.0]).dtype]
            warnings_of(lambda: T.set_default_tensor_type("torch.FloatTensor"))
        finally:
            T.set_default_dtype(T.float32)
        return [result, [w.split(" (Triggered")[0] for w in caught], after,
                T.get_default_dtype()]
    same(f)


_WARN_SEQUENCE = """
import warnings
def count(T):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        T.frombuffer(b"ab", dtype=T.uint8)
    return len(caught)
def sequence(T):
    T.set_warn_always(True)
    out = [count(T), count(T)]
    T.set_warn_always(False)
    return out + [count(T), count(T)]
"""


def test_warn_always_repeats_the_read_only_buffer_warning():
    # torch warns once per process: its sequence is taken in a fresh one
    import subprocess
    import sys
    code = _WARN_SEQUENCE + "import torch\nprint(sequence(torch))"
    expected = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True).stdout.strip()
    namespace = {}
    exec(_WARN_SEQUENCE, namespace)
    ember.ops.creation._warned_readonly.clear()           # as in a fresh process
    assert str(namespace["sequence"](ember)) == expected
