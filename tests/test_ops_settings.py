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
