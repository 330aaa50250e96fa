"""Every class torch.nn has lives in ember at torch's module path, under torch's name.

Differential: the list of classes comes from the installed torch (the public names of torch.nn
and torch.nn.modules, and every class defined in a torch.nn.modules submodule, private bases
included); for each, ember must have a class with the same __qualname__ whose __module__ is
torch's with the `torch.` prefix replaced by `ember.`. The few torch classes ember does not
mirror are listed in EXCEPTIONS, each with the reason.
"""
import importlib
import inspect
import pkgutil

import pytest
import torch
import torch.nn

import ember  # noqa: F401

EXCEPTIONS = {
    "torch.nn.modules._functions.SyncBatchNorm":
        "torch's cross-process autograd function; ember's SyncBatchNorm runs in one process "
        "and needs none",
    "torch.nn.modules._functions.BackwardHookFunction":
        "torch's full-backward-hook plumbing; ember's Module implements backward hooks "
        "without an autograd function",
    "torch.nn.modules.conv._ConvTransposeMixin":
        "a deprecated torch alias kept for old subclasses; ember has no such users",
    "torch.nn.modules.lazy._LazyProtocol":
        "a typing.Protocol for static type checkers only",
    "torch.nn.modules.linear_cross_entropy._ChunkViews":
        "torch's chunked linear_cross_entropy; ember computes the reference (unchunked) form",
    "torch.nn.modules.linear_cross_entropy._ChunkContext":
        "torch's chunked linear_cross_entropy; ember computes the reference (unchunked) form",
    "torch.nn.modules.linear_cross_entropy_options._AutoDefault":
        "torch's sentinel for option defaults; ember's dataclass spells its defaults directly",
}


def _torch_classes():
    """(torch module path, qualname) of every class torch.nn exposes or defines."""
    found = {}

    def add(cls):
        if cls.__module__.startswith("torch.nn."):
            found[f"{cls.__module__}.{cls.__qualname__}"] = (cls.__module__, cls.__qualname__)

    for namespace in (torch.nn, torch.nn.modules):
        for name in dir(namespace):
            value = getattr(namespace, name)
            if inspect.isclass(value):
                add(value)
    for info in pkgutil.iter_modules(torch.nn.modules.__path__):
        module = importlib.import_module(f"torch.nn.modules.{info.name}")
        for value in vars(module).values():
            if inspect.isclass(value) and value.__module__ == module.__name__:
                add(value)
    return found


TORCH_CLASSES = _torch_classes()


def test_the_walk_finds_torch_nn_classes():
    # a guard on the walk itself: it must see the layers and their private bases
    for key in ("torch.nn.modules.linear.Linear", "torch.nn.modules.batchnorm._BatchNorm",
                "torch.nn.modules.activation.MultiheadAttention",
                "torch.nn.parameter.UninitializedParameter"):
        assert key in TORCH_CLASSES
    assert len(TORCH_CLASSES) > 180


def test_exceptions_are_torch_classes():
    # an exception for a class torch no longer has would hide nothing: drop it
    assert set(EXCEPTIONS) <= set(TORCH_CLASSES)


@pytest.mark.parametrize("key", sorted(set(TORCH_CLASSES) - set(EXCEPTIONS)))
def test_class_at_torchs_module_path(key):
    torch_module, qualname = TORCH_CLASSES[key]
    ember_module = "ember." + torch_module[len("torch."):]
    value = importlib.import_module(ember_module)
    for part in qualname.split("."):
        value = getattr(value, part)
    assert inspect.isclass(value)
    assert value.__module__ == ember_module
    assert value.__qualname__ == qualname


@pytest.mark.parametrize("make, module, qualname", [
    (lambda nn: nn.MultiheadAttention(4, 2), "ember.nn.modules.activation", "MultiheadAttention"),
    (lambda nn: nn.MultiheadAttention(4, 2).out_proj, "ember.nn.modules.linear",
     "NonDynamicallyQuantizableLinear"),
    (lambda nn: nn.BatchNorm2d(3), "ember.nn.modules.batchnorm", "BatchNorm2d"),
    (lambda nn: nn.LazyConv2d(3, 2), "ember.nn.modules.conv", "LazyConv2d"),
    (lambda nn: nn.LazyInstanceNorm1d(), "ember.nn.modules.instancenorm", "LazyInstanceNorm1d"),
    (lambda nn: nn.EmbeddingBag(5, 2), "ember.nn.modules.sparse", "EmbeddingBag"),
    (lambda nn: nn.ChannelShuffle(2), "ember.nn.modules.channelshuffle", "ChannelShuffle"),
])
def test_instances_report_torchs_module(make, module, qualname):
    t, e = make(torch.nn), make(ember.nn)
    assert type(t).__module__ == "torch." + module[len("ember."):]
    assert type(e).__module__ == module
    assert type(e).__qualname__ == type(t).__qualname__ == qualname
