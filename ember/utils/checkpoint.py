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
import contextlib
import enum
import warnings

from ..autograd import Function, backward as _backward
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import saved_tensors_hooks
from .. import cuda, random as _random
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


class CheckpointError(RuntimeError):
    """The recomputation saved different tensors than the forward did."""


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's outputs (the policy's answer)."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class DefaultDeviceType:
    """The device type whose random state checkpoint saves besides the CPU's."""

    _default_device_type = "cpu"

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        return DefaultDeviceType._default_device_type


def check_backward_validity(inputs):
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


def detach_variable(inputs):
    """The tensors of the tuple `inputs` detached, each keeping its requires_grad; other
    items as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            d = x.detach()
            d.requires_grad = x.requires_grad
            out.append(d)
        else:
            out.append(x)
    return tuple(out)


def get_device_states(*args):
    """The accelerator devices among the tensors in `args` and their random states: none on
    the CPU."""
    devices = sorted({x.device.index or 0 for x in args
                      if isinstance(x, Tensor) and x.device.type not in ("cpu", "meta")})
    return devices, [cuda.get_rng_state(d) for d in devices]


def set_device_states(devices, states, *, device_type=None):
    for device, state in zip(devices, states):
        cuda.set_rng_state(state, device)


def noop_context_fn():
    """checkpoint's default context_fn: no context around the forward or the recompute."""
    return contextlib.nullcontext(), contextlib.nullcontext()


_settings = {"early_stop": True, "debug": False}


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether a recomputation may stop once it has rebuilt every tensor backward needs (ember
    always reruns the whole function; what matters here is that, without early stop, a
    recomputation that saves more tensors than the forward is an error)."""
    prev = _settings["early_stop"]
    _settings["early_stop"] = enable
    try:
        yield
    finally:
        _settings["early_stop"] = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Overrides checkpoint's `debug` argument within the block (None: use the argument)."""
    prev = _settings["debug"]
    _settings["debug"] = enabled
    try:
        yield
    finally:
        _settings["debug"] = prev


class GraphExecGroup:
    """Backward calls in this block recompute each checkpointed region at most once (ember's
    non-reentrant checkpoint always does: it keeps what it rebuilt), and must not overlap:
    needing the same saved tensor twice in the block is a CheckpointError."""

    def __init__(self):
        self._unpacked = set()      # (region, index) of the saved tensors used in the block
        self._prev = None

    def __enter__(self):
        self._prev = _group[0]
        _group[0] = self
        return self

    def __exit__(self, *exc):
        _group[0] = self._prev
        return False


_group = [None]     # the innermost GraphExecGroup block

_UNPACKED_TWICE = (
    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked "
    "once. Performing two backward calls that overlap (i.e. require the same saved activation "
    "in order to compute gradients) is not allowed while under the "
    "torch.utils.checkpoint.GraphExecGroup context. If you are calling ctx.saved_tensors in "
    "backward, make sure to do so only once. Otherwise please open an issue with details on "
    "your use case.")


class CheckpointFunction(Function):
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


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), its intermediate results recomputed during backward."""
    reentrant = _choose_variant(use_reentrant, "torch.utils.checkpoint")
    if reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if reentrant and (context_fn is not noop_context_fn or debug is not False):
        raise ValueError("Passing `context_fn` or `debug` is only supported when "
                         "use_reentrant=False.")
    if reentrant and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)
    run = (lambda *a: function(*a, **kwargs)) if kwargs else function
    if not reentrant:
        if determinism_check not in _DETERMINISM_CHECKS:
            raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, "
                             f"but got {determinism_check}")
        forward_context, recompute_context = context_fn()
        return _checkpoint_without_reentry(run, args, preserve_rng_state, forward_context,
                                           recompute_context, determinism_check == "default")
    return CheckpointFunction.apply(run, preserve_rng_state, *args)


_DETERMINISM_CHECKS = ("default", "none")

_TIP = ("\n\nTip: To see a more detailed error message, either pass `debug=True` to\n"
        "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
        "with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
        "enable checkpoint\u2011debug mode globally.\n\n"
        "If this error occurs under torch.compile with automatic_dynamic_shapes enabled,\n"
        "it may be because the recomputation selected a different compiled graph than the\n"
        "forward pass (e.g., a dynamic graph instead of the original static graph).\n"
        "To fix this, either:\n"
        "  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as\n"
        "    dynamic upfront, avoiding the static-to-dynamic transition.\n"
        "  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache\n"
        "    reordering, which can change which graph is checked first between forward\n"
        "    and recompute.\n"
        "See https://github.com/pytorch/pytorch/issues/166926 for more details and\n"
        "workaround examples.\n")


def _metadata(t):
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


def _check_recomputed(saved_meta, recomputed):
    """torch's determinism check: the recomputation saves as many tensors as the forward
    (more is allowed while early stop is on), each with the same shape, dtype and device."""
    if len(recomputed) > len(saved_meta) and not _settings["early_stop"]:
        raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during "
                              "recomputation than during the original forward pass." + _TIP)
    if len(recomputed) < len(saved_meta):
        raise CheckpointError(
            "torch.utils.checkpoint: A different number of tensors was saved during the "
            "original forward and recomputation.\n"
            f"Number of tensors saved during forward: {len(saved_meta)}\n"
            f"Number of tensors saved during recomputation: {len(recomputed)}." + _TIP)
    wrong = [i for i, meta in enumerate(saved_meta) if _metadata(recomputed[i]) != meta]
    if wrong:
        lines = "".join(f"tensor at position {i}:\nsaved metadata: {saved_meta[i]}\n"
                        f"recomputed metadata: {_metadata(recomputed[i])}\n" for i in wrong)
        raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following "
                              "tensors have different metadata than during the forward pass.\n"
                              + lines + "." + _TIP)


def _checkpoint_without_reentry(run, args, preserve_rng_state, forward_context=None,
                                recompute_context=None, check=True):
    rng_state = _random.get_rng_state() if preserve_rng_state else None
    saved_meta = []             # shape, dtype, device of each tensor the forward's ops saved
    recomputed = []             # what the recomputed forward's ops saved, in the same order

    def pack(tensor):
        saved_meta.append(_metadata(tensor))
        return len(saved_meta) - 1

    def unpack(index):
        group = _group[0]
        if group is not None:
            key = (id(recomputed), index)
            if key in group._unpacked:
                raise CheckpointError(_UNPACKED_TWICE)
            group._unpacked.add(key)
        if not recomputed:
            detached = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor)
                        else a for a in args]

            def keep(tensor):
                recomputed.append(tensor)
                return len(recomputed) - 1
            with _random.fork_rng(enabled=rng_state is not None), enable_grad(), \
                    saved_tensors_hooks(keep, recomputed.__getitem__), \
                    recompute_context or contextlib.nullcontext():
                if rng_state is not None:
                    _random.set_rng_state(rng_state)
                run(*detached)
            if check:
                _check_recomputed(saved_meta, recomputed)
        return recomputed[index]

    with saved_tensors_hooks(pack, unpack), forward_context or contextlib.nullcontext():
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
