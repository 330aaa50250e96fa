"""Run one Python expression with `t` bound to torch and to ember, and compare what comes out.

The expression's result is compared through its repr (tensors print the same in both libraries,
with 'ember.' where torch prints 'torch.'); an exception is compared by type and message; the
warnings raised on the way are compared by category and message. This is the spec check of the
data-model tests: torch's behaviour is the expected value, never a hand-written constant.
"""
import re
import warnings

import numpy as np
import torch

import ember

_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)\.?")


def normalise(text):
    """Library-neutral text: 'torch.' -> 'ember.', C++ context and source paths dropped."""
    text = text.split("\nException raised from")[0]
    text = _TRIGGERED.sub("", text)
    return text.replace("torch.", "ember.").strip()


def outcome(lib, src, env=None):
    """('ok', repr) or ('error', type name, message) of `src`, plus the warnings raised."""
    scope = {"t": lib, "np": np, **(env or {})}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = eval(src, scope)
            result = ("ok", normalise(repr(value)))
        except Exception as err:                        # the error is part of the behaviour
            result = ("error", type(err).__name__, normalise(str(err)))
    seen = [(w.category.__name__, normalise(str(w.message))) for w in caught]
    return result, seen


def check(src, env=None, warns=True):
    """`src` behaves in ember as in torch (same repr or same error, same warnings)."""
    expected, t_warnings = outcome(torch, src, env)
    got, e_warnings = outcome(ember, src, env)
    assert got == expected, f"{src}\n torch: {expected}\n ember: {got}"
    if warns:
        assert e_warnings == t_warnings, f"{src}\n torch warns {t_warnings}\n ember warns " \
                                         f"{e_warnings}"


def same_error(fn_torch, fn_ember):
    """Both callables raise the same exception type with the same message."""
    errors = []
    for fn in (fn_torch, fn_ember):
        try:
            fn()
        except Exception as err:
            errors.append((type(err).__name__, normalise(str(err))))
        else:
            errors.append(None)
    assert errors[0] is not None, "torch did not raise"
    assert errors[1] == errors[0], f"torch: {errors[0]}\nember: {errors[1]}"


def fresh_process_output(code):
    """What `code` (with {lib} for the module name) prints in a fresh interpreter under torch
    and under ember: for warnings PyTorch gives once per process."""
    import subprocess
    import sys
    return [normalise(subprocess.run([sys.executable, "-c", code.format(lib=lib)],
                                     capture_output=True, text=True, check=True).stdout)
            for lib in ("torch", "ember")]
