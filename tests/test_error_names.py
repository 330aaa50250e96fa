"""The name a TypeError gives a function called with an unknown keyword or too many positional
arguments ("exp() got an unexpected keyword argument 'foo'") is torch's (ember/_names.py).

A sweep over torch's namespaces and Tensor methods, generated from torch at collection time:
each function ember also has is called with a made-up keyword, and with twelve positional
tensors, where torch's message for that call names the function ("unexpected keyword argument",
"... positional argument..."). The function's name in the two messages must agree, and an
"unexpected keyword argument" message, which Python words as torch does, must agree in full.
(torch's argument parser words its other messages its own way: it counts a method's arguments
without self, and reports missing arguments before unknown keywords; ember's plain Python
functions count self and report the keyword first. Those are differences of wording, not of
names, and are compared by name only.)
"""
import json
import os
import re
import subprocess
import sys
import warnings

import pytest
import torch

import ember
from differential import same

_SPACES = {"torch": lambda T: T, "torch.nn.functional": lambda T: T.nn.functional,
           "torch.special": lambda T: T.special, "torch.linalg": lambda T: T.linalg,
           "torch.fft": lambda T: T.fft}
_NAMED = ("unexpected keyword argument", "positional argument")

# Calls whose ember error differs from torch's for reasons other than the function's name
_OTHER_DIFFERENCES = {
    ("torch", "permute", "positional"): "ember's permute takes *dims: it reads tensors as dims",
    ("Tensor", "permute", "positional"): "as torch.permute",
    ("Tensor", "repeat", "positional"): "ember's repeat takes *sizes: it reads tensors as sizes",
    ("Tensor", "expand", "positional"): "ember's expand takes *sizes",
    ("Tensor", "sum_to_size", "positional"): "ember's sum_to_size takes *size",
}


def _function(T, space, name):
    return getattr(T.ones(2, 2), name) if space == "Tensor" else getattr(_SPACES[space](T), name)


def _message(T, space, name, call):
    """What calling the function with a made-up keyword or too many arguments raises."""
    f, t = _function(T, space, name), T.ones(2, 2)
    method = space == "Tensor"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if call == "keyword":
                f(zzz_bogus=1) if method else f(t, zzz_bogus=1)
            else:
                f(*[t] * 11) if method else f(*[t] * 12)
        except TypeError as exc:
            return str(exc)
        except Exception as exc:      # noqa: BLE001 - the exception is the observation
            return type(exc).__name__
    return "no error"


def _torch_calls():
    """(space, name, call, torch's message) for each call whose message names the function."""
    spaces = [(space, get(torch)) for space, get in _SPACES.items()] + [("Tensor", torch.Tensor)]
    calls = []
    for space, holder in spaces:
        for name in sorted(dir(holder)):
            obj = getattr(holder, name, None)
            if name.startswith("_") or not callable(obj) or isinstance(obj, type):
                continue
            for call in ("keyword", "positional"):
                message = _message(torch, space, name, call)
                if any(p in message for p in _NAMED):
                    calls.append((space, name, call, message))
    return calls


def _cases():
    """The calls to compare: those of ember's functions; and the names ember lacks. torch's
    messages are read in a child process: some of the calls succeed, and what they leave
    behind (a warn-once spent, ...) must not reach the other tests."""
    child = subprocess.run([sys.executable, __file__], capture_output=True, text=True,
                           check=True, cwd=os.path.dirname(__file__))
    cases, missing = {}, set()
    for space, name, call, message in json.loads(child.stdout.splitlines()[-1]):
        if not hasattr(ember.Tensor if space == "Tensor" else _SPACES[space](ember), name):
            missing.add((space, name))
        elif (space, name, call) not in _OTHER_DIFFERENCES:
            cases[space, name, call] = message
    return cases, missing


# (not in the child process itself)
_CASES, _MISSING = _cases() if __name__ != "__main__" else ({}, set())


def _named(message):
    """The function a TypeError names (the whole message where it names none)."""
    match = re.match(r"([\w.<>]+)\(\) ", message)
    return match.group(1) if match else message


@pytest.mark.parametrize("space,name,call", list(_CASES), ids=lambda x: x)
def test_error_names_the_function_as_torch(space, name, call):
    full = "unexpected keyword argument" in _CASES[space, name, call]

    def f(T):
        message = _message(T, space, name, call)
        return message if full else _named(message)
    same(f)


def test_the_sweep_covers_the_namespaces():
    # every namespace and both calls are swept (a torch change that hid them would show here)
    assert {space for space, _, _ in _CASES} == set(_SPACES) | {"Tensor"}
    assert {call for _, _, call in _CASES} == {"keyword", "positional"}


if __name__ == "__main__":      # (the child process of _cases)
    print(json.dumps(_torch_calls()))
