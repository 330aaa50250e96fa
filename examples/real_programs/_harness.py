"""Run a third-party PyTorch program unchanged, under real torch or under ember.

Usage (from any runner in this folder):

    python examples/real_programs/<name>/run.py --backend {torch,ember} [--sync DIR] PROGRAM_DIR [args...]

What the harness does, and nothing more:
- ``--backend ember`` makes every ``import torch`` / ``import torch.x.y`` / ``from torch.x import y``
  resolve to ``ember`` / ``ember.x.y`` (an import-system alias; the program's files are untouched);
- puts ``_standins/`` (a tiny ``torchvision`` with synthetic data sets) and the program's folder on
  ``sys.path``, and runs the program in a scratch working folder that the runner fills with
  synthetic stand-in data, so nothing is downloaded;
- ``--sync DIR`` makes the two runs comparable: the torch run saves the state_dict of every module
  at its first outermost call, the ember run loads those same weights at the same point, and both
  record the first scalar losses that reach ``.backward()`` in ``DIR/losses_<backend>.json``.
Random streams (dropout masks, shuffling, sampling) still differ between the two libraries.
"""
import argparse
import importlib
import importlib.abc
import importlib.util
import json
import os
import random
import runpy
import sys
import tempfile
import threading

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_LOSSES = 20


class _TorchToEmber(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``torch`` and ``torch.<sub>`` to the matching ember module."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        target = "ember" + spec.name[len("torch"):]
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as e:
            if e.name == target:
                raise ModuleNotFoundError(f"ember has no module for {spec.name!r} ({target!r})",
                                          name=spec.name) from None
            raise
        self._saved = (module, module.__spec__, getattr(module, "__loader__", None))
        return module

    def exec_module(self, module):
        # the import system stamped the alias spec on the real module: put its own back
        saved_module, spec, loader = self._saved
        if saved_module is module:
            module.__spec__ = spec
            module.__loader__ = loader


def use_backend(name):
    if name == "ember":
        repo_root = os.path.dirname(os.path.dirname(HERE))
        if repo_root not in sys.path:
            sys.path.insert(0, repo_root)
        import ember
        if not any(isinstance(f, _TorchToEmber) for f in sys.meta_path):
            sys.meta_path.insert(0, _TorchToEmber())
        sys.modules["torch"] = ember
        # processes the program spawns take this sys.path: their `import torch` finds _alias/
        alias = os.path.join(HERE, "_alias")
        if alias not in sys.path:
            sys.path.insert(0, alias)
    import torch  # the real one, or ember through the alias
    return torch


class _Sync:
    """Copies torch's initial weights into the ember run and records the first losses."""

    def __init__(self, torch, backend, folder):
        self.torch, self.backend, self.folder = torch, backend, folder
        self.depth = threading.local()
        self.seen = {}
        self.synced = set()   # ids of the parameters already saved or loaded
        self.losses = []
        self.notes = []

    def install(self):
        Module = self.torch.nn.Module
        sync = self
        original_call = Module.__call__

        def call(module, *args, **kwargs):
            depth = getattr(sync.depth, "n", 0)
            if depth == 0 and id(module) not in sync.seen:
                sync.first_call(module)
            sync.depth.n = depth + 1
            try:
                return original_call(module, *args, **kwargs)
            finally:
                sync.depth.n = depth

        Module.__call__ = call
        Tensor = self.torch.Tensor
        original_backward = Tensor.backward

        def backward(tensor, *args, **kwargs):
            if len(sync.losses) < MAX_LOSSES and tensor.numel() == 1:
                sync.losses.append(float(tensor.detach().reshape(()).item()))
                sync.dump()
            return original_backward(tensor, *args, **kwargs)

        Tensor.backward = backward

    def first_call(self, module):
        index = len(self.seen)
        self.seen[id(module)] = module
        params = [id(p) for p in module.parameters()]
        if not params or any(p in self.synced for p in params):
            return       # loss modules (their buffers come from the program), or a part of a
        self.synced.update(params)   # model already synced, called on its own later
        state = module.state_dict()
        path = os.path.join(self.folder, f"weights_{index}_{type(module).__name__}.npz")
        if self.backend == "torch":
            arrays = {k: v.detach().cpu().numpy() for k, v in state.items()}
            np.savez(path, **{k.replace(".", "/"): a for k, a in arrays.items()})
        elif os.path.exists(path):
            with np.load(path) as data:
                loaded = {k.replace("/", "."): self.torch.tensor(data[k]) for k in data.files}
            try:
                module.load_state_dict(loaded)
                self.notes.append(f"loaded torch weights into {type(module).__name__} #{index}")
            except Exception as e:  # a mismatch is a finding: report it, keep running
                self.notes.append(f"could not load weights into {type(module).__name__}: {e!r}")
        else:
            self.notes.append(f"no saved torch weights for {type(module).__name__} #{index}")

    def dump(self):
        with open(os.path.join(self.folder, f"losses_{self.backend}.json"), "w") as f:
            json.dump({"losses": self.losses, "notes": self.notes}, f, indent=1)


def _switch_off_randomness(torch):
    """Dropout (also MultiheadAttention's) becomes the identity and RandomSampler yields 0..n-1, in both libraries alike,
    so that two runs from the same weights and data must give the same losses."""
    identity = lambda input, *args, **kwargs: input  # noqa: E731
    torch.nn.functional.dropout = identity
    for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout"):
        cls = getattr(torch.nn, name, None)
        if cls is not None:
            cls.forward = lambda self, input: input
    mha_forward = torch.nn.MultiheadAttention.forward

    def mha_without_dropout(self, *args, **kwargs):   # its attention-weight dropout
        self.dropout = 0.0
        return mha_forward(self, *args, **kwargs)

    torch.nn.MultiheadAttention.forward = mha_without_dropout
    torch.utils.data.RandomSampler.__iter__ = lambda self: iter(range(len(self.data_source)))


def run_program(script, args=(), prepare=None, extra_paths=()):
    """Run ``PROGRAM_DIR/script`` with ``args`` (or ``args(program_dir)``), then the command
    line's own extra args.

    ``prepare(workdir, program_dir)`` writes stand-in data into the scratch working folder.
    ``extra_paths``: folders under PROGRAM_DIR to put on sys.path as well.
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["torch", "ember"], required=True)
    parser.add_argument("--sync", help="folder shared by the torch and the ember run")
    parser.add_argument("--workdir", help="scratch folder (default: a new temporary one)")
    parser.add_argument("--no-random", action="store_true",
                        help="for exact comparisons: dropout off and data loaders unshuffled")
    parser.add_argument("program_dir")
    ns, rest = parser.parse_known_args()
    program_dir = os.path.abspath(ns.program_dir)
    workdir = ns.workdir or tempfile.mkdtemp(prefix="real_program_")
    os.makedirs(workdir, exist_ok=True)

    torch = use_backend(ns.backend)
    sys.path[:0] = [os.path.join(HERE, "_standins")] + [
        os.path.join(program_dir, p) for p in extra_paths] + [
        os.path.dirname(os.path.join(program_dir, script))]
    if prepare is not None:
        prepare(workdir, program_dir)
    sync = None
    if ns.sync:
        os.makedirs(ns.sync, exist_ok=True)
        sync = _Sync(torch, ns.backend, ns.sync)
        sync.install()
    if ns.no_random:
        _switch_off_randomness(torch)
    os.chdir(workdir)
    random.seed(0)          # programs that use these unseeded see the same draws in both runs
    np.random.seed(0)
    if ns.no_random:
        torch.manual_seed(0)    # and torch's: ember draws torch's numbers from the same seed
    if callable(args):
        args = args(program_dir)
    sys.argv = [os.path.join(program_dir, script), *args, *rest]
    try:
        runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            raise
    finally:
        if sync is not None:
            sync.dump()
