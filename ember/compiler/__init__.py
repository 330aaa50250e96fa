"""ember.compiler: torch.compiler's controls, for a library that never compiles.

ember runs every program eagerly (ember.compile returns the model itself), so nothing is ever
being compiled or exported, and the decorators that steer a compiler return what they are
given: `disable(fn)` is `fn`, `allow_in_graph(fn)` is `fn`.
"""
import contextlib

from .._compile import compile  # noqa: F401  (torch.compiler.compile is torch.compile)


def is_compiling():
    return False


def is_dynamo_compiling():
    return False


def is_exporting():
    return False


def disable(fn=None, recursive=True, *, reason=None):
    """`fn` unchanged (there is no compiler to keep away from it); without `fn`, a decorator."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)
    if not callable(fn):
        raise AssertionError("fn must be callable")
    return fn


def allow_in_graph(fn):
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(f) for f in fn]
    if not callable(fn):
        raise AssertionError("allow_in_graph expects a callable")
    return fn


def assume_constant_result(fn):
    fn._dynamo_marked_constant = True       # (torch marks the function so; an int raises)
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False,
                        skip_signature_check=False):
    return lambda fn: fn


def nested_compile_region(fn=None, *, options=None, max_reuse_entries=8, reuse_hash_fn=None):
    return (lambda f: f) if fn is None else fn


def reset():
    """Nothing is cached: nothing was compiled."""


def cudagraph_mark_step_begin():
    pass


def list_backends(exclude_tags=("debug", "experimental")):
    return ["cudagraphs", "inductor", "openxla", "tvm"]


class set_stance(contextlib.ContextDecorator):
    """Accepted, and without effect: every stance runs eagerly in ember. Usable as a call, a
    context manager or a decorator, as torch's."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        self.stance = stance

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
