"""ember.utils.checkpoint: activation checkpointing, as torch.utils.checkpoint.

The forward runs without recording a graph; the backward runs it again (with the random state it
first saw, so dropout draws the same mask) and differentiates that. Gradients equal those of the
plain call. Both of torch's variants are built on one autograd.Function: with use_reentrant=True
only the tensor arguments are its inputs (as torch: no gradient when none requires grad); with
use_reentrant=False the parameters the function reaches (see _parameters_of) are inputs too, so
that they get gradients, also through autograd.grad. (Parameters reached only through globals are
missed by that variant in ember.) With use_reentrant=True the backward is a nested backward, as
torch's, accumulating into every leaf the function used.
"""
import warnings

from ..autograd import Function, grad as _grad, backward as _backward
from ..autograd.grad_mode import enable_grad
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
    @staticmethod
    def forward(ctx, run, reentrant, preserve_rng_state, n_args, *inputs):
        # (inputs: the call's arguments, then the parameters that are inputs too)
        ctx.run, ctx.reentrant, ctx.n_args, ctx.inputs = run, reentrant, n_args, inputs
        ctx.rng_state = _random.get_rng_state() if preserve_rng_state else None
        return run(*inputs[:n_args])

    @staticmethod
    def backward(ctx, *grad_outputs):
        args = [x.detach().requires_grad_(x.requires_grad) if isinstance(x, Tensor) else x
                for x in ctx.inputs[:ctx.n_args]]
        with _random.fork_rng(enabled=ctx.rng_state is not None), enable_grad():
            if ctx.rng_state is not None:
                _random.set_rng_state(ctx.rng_state)
            outputs = ctx.run(*args)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        inputs = args + list(ctx.inputs[ctx.n_args:])     # (the parameters themselves)
        wanted = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
        if ctx.reentrant:
            # torch's reentrant variant: a nested backward, accumulating into every leaf the
            # function used (parameters it closes over included)
            if pairs:
                _backward([o for o, _ in pairs], [g for _, g in pairs])
            grads = iter(x.grad for x in wanted)
        else:
            grads = iter(_grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                               allow_unused=True) if pairs and wanted else [None] * len(wanted))
        return (None,) * 4 + tuple(
            next(grads) if isinstance(x, Tensor) and x.requires_grad else None for x in inputs)


def _parameters_of(function):
    """The tensors requiring grad that `function` reaches without arguments: an nn.Module's
    parameters, a bound method's module's, those of modules or tensors in its closure."""
    owners = [function, getattr(function, "__self__", None)]
    for cell in getattr(function, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:                                # (a cell not yet filled)
            continue
        owners.extend(value if isinstance(value, (list, tuple)) else [value])
    found = {}
    for owner in owners:
        if isinstance(owner, Tensor):
            tensors = [owner]
        elif callable(getattr(owner, "parameters", None)) and not isinstance(owner, type):
            tensors = list(owner.parameters())
        else:
            continue
        found.update((id(t), t) for t in tensors if t.requires_grad)
    return tuple(found.values())


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
    params = () if reentrant else _parameters_of(function)
    if reentrant and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)
    run = (lambda *a: function(*a, **kwargs)) if kwargs else function
    return _Checkpoint.apply(run, reentrant, preserve_rng_state, len(args), *args, *params)


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
