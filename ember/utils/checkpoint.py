"""ember.utils.checkpoint: activation checkpointing, as torch.utils.checkpoint.

Both of torch's variants recompute the forward during backward, with the random state it first
saw (so dropout draws the same mask); gradients equal those of the plain call.
- use_reentrant=True: an autograd.Function whose forward runs without recording a graph and
  whose backward runs the function again and backpropagates through it (a nested backward,
  accumulating into every leaf the function used). Only the tensor arguments are its inputs.
- use_reentrant=False: the forward records its graph as usual, under saved-tensor hooks that
  keep none of the tensors its ops save; the first time backward reads one, the function runs
  again and hands over what it saved, in the same order. The graph is the plain call's (its
  nodes, every parameter reached however the function reaches it).
"""
import warnings

from ..autograd import Function, backward as _backward
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import saved_tensors_hooks
from .. import random as _random
from .._tensor import Tensor

# torch's two wordings (checkpoint's, checkpoint_sequential's) of one warning
_WARNING = ("{}: the use_reentrant parameter should be passed explicitly. {} use_reentrant=False "
            "is recommended, but if you need to preserve the current default behavior, you can "
            "pass use_reentrant=True. Refer to docs for more details on the differences between "
            "the two variants.")
_WHEN = {"torch.utils.checkpoint": "Starting in PyTorch 2.9, calling checkpoint without "
                                   "use_reentrant will raise an exception.",
         "torch.utils.checkpoint.checkpoint_sequential": "In version 2.9 we will raise an "
                                                          "exception if use_reentrant is not "
                                                          "passed."}


class _Checkpoint(Function):
    """The reentrant variant (see the module's docstring)."""

    @staticmethod
    def forward(ctx, run, preserve_rng_state, *inputs):
        ctx.run, ctx.inputs = run, inputs
        ctx.rng_state = _random.get_rng_state() if preserve_rng_state else None
        return run(*inputs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        args = [x.detach().requires_grad_(x.requires_grad) if isinstance(x, Tensor) else x
                for x in ctx.inputs]
        with _random.fork_rng(enabled=ctx.rng_state is not None), enable_grad():
            if ctx.rng_state is not None:
                _random.set_rng_state(ctx.rng_state)
            outputs = ctx.run(*args)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            # a nested backward, accumulating into every leaf the function used (parameters
            # it closes over included), as torch's reentrant variant
            _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) and x.requires_grad
                                    else None for x in args)


def _choose_variant(use_reentrant, caller):
    if use_reentrant is None:
        warnings.warn(_WARNING.format(caller, _WHEN[caller]), stacklevel=3)
        return True
    return use_reentrant


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), its intermediate results recomputed during backward."""
    reentrant = _choose_variant(use_reentrant, "torch.utils.checkpoint")
    if reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if reentrant and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)
    run = (lambda *a: function(*a, **kwargs)) if kwargs else function
    if not reentrant:
        return _checkpoint_without_reentry(run, args, preserve_rng_state)
    return _Checkpoint.apply(run, preserve_rng_state, *args)


def _checkpoint_without_reentry(run, args, preserve_rng_state):
    rng_state = _random.get_rng_state() if preserve_rng_state else None
    count = [0]                 # how many tensors the forward's ops saved
    recomputed = []             # what the recomputed forward's ops saved, in the same order

    def pack(_):
        count[0] += 1
        return count[0] - 1

    def unpack(index):
        if not recomputed:
            detached = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor)
                        else a for a in args]

            def keep(tensor):
                recomputed.append(tensor)
                return len(recomputed) - 1
            with _random.fork_rng(enabled=rng_state is not None), enable_grad(), \
                    saved_tensors_hooks(keep, recomputed.__getitem__):
                if rng_state is not None:
                    _random.set_rng_state(rng_state)
                run(*detached)
        return recomputed[index]

    with saved_tensors_hooks(pack, unpack):
        return run(*args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run the modules in `segments` chunks, checkpointing all chunks but the last."""
    reentrant = _choose_variant(use_reentrant,
                                "torch.utils.checkpoint.checkpoint_sequential")
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    size = len(functions) // segments

    def run(chunk):
        def forward(x):
            for f in chunk:
                x = f(x)
            return x
        return forward

    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(run(functions[start:end]), input, use_reentrant=reentrant, **kwargs)
    return run(functions[end:])(input)
