"""Custom autograd Functions: user-written forward and backward as one graph node.

`MyFn.apply(...)` runs `forward` without recording, then, if an input requires grad, makes a node
of class `MyFnBackward` (which is also the `ctx` that forward saw) the outputs' grad_fn.
"""
import functools
import inspect
import warnings

import numpy as np

from . import anomaly_mode, forward_ad, grad_mode
from .graph import Node, SavedTensor, PackedSaved, FREED_ERROR
from .._tensor import Tensor
from ..ops.creation import zeros
from ..ops.registry import _fit_grads, check_inplace_allowed
from ..ops.views import mark_unwritable_views, MULTI_OUTPUT, CUSTOM_FUNCTION, CopySlices


class FunctionCtx:
    """What `forward` may record for `backward` (mixed into each Function's node class)."""

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self.to_save = tensors

    def mark_dirty(self, *tensors):
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors

    def set_materialize_grads(self, value):
        self._materialize = bool(value)

    @property
    def saved_tensors(self):
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_ERROR)
        return tuple(s.unpack(self) if isinstance(s, (SavedTensor, PackedSaved)) else s
                     for s in saved)

    @property
    def saved_variables(self):
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'",
                      DeprecationWarning, stacklevel=2)
        return self.saved_tensors


class BackwardCFunction(Node, FunctionCtx):
    """Base of every custom Function's node class."""
    # (to_save, dirty_tensors and non_differentiable: PyTorch's names, None when unset)
    __slots__ = ("to_save", "_saved", "dirty_tensors", "non_differentiable", "_materialize",
                 "needs_input_grad", "_input_meta", "_tensor_positions", "_n_outputs")
    _forward_cls = None
    runs_without_grad = True    # as torch: backward is called (with zeros or None) regardless

    def __init__(self):
        Node.__init__(self, ())
        self.to_save = None
        self._saved = ()
        self.dirty_tensors = None
        self.non_differentiable = None
        self._materialize = True
        self.needs_input_grad = ()
        self._input_meta = ()
        self._tensor_positions = ()
        self._n_outputs = 1

    def __repr__(self):
        return f"<ember.autograd.function.{type(self).__name__} object at {hex(id(self))}>"

    def release(self):
        self._saved = None

    def apply(self, grads, needs):
        if self._materialize:
            grads = tuple(g if g is not None else zeros(shape, dtype=dtype)
                          for g, (shape, dtype) in zip(grads, self._output_meta))
        result = self._forward_cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_inputs = len(self.needs_input_grad)
        if len(result) != n_inputs:
            if len(result) > n_inputs and all(r is None for r in result[n_inputs:]):
                result = result[:n_inputs]
            else:
                raise RuntimeError(f"function {type(self).__name__} returned an incorrect number "
                                   f"of gradients (expected {n_inputs}, got {len(result)})")
        for i, r in enumerate(result):
            if r is not None and not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
        positions = set(self._tensor_positions)
        for i, r in enumerate(result):
            if r is not None and i not in positions:
                raise RuntimeError(f"function {type(self).__name__} returned a gradient different "
                                   f"than None at position {i + 1}, but the corresponding forward "
                                   f"input was not a Variable")
        tensor_grads = [result[i] for i in self._tensor_positions]
        for i, (g, (shape, _)) in enumerate(zip(tensor_grads, self._input_meta)):
            # a gradient may be broadcast over the input (it is summed back); nothing else
            if g is not None and g.shape != shape and not _expands_to(shape, g.shape):
                raise RuntimeError(f"Function {type(self).__name__} returned an invalid gradient "
                                   f"at index {i} - got {list(g.shape)} but expected shape "
                                   f"compatible with {list(shape)}")
        return _fit_grads(tensor_grads, self._input_meta)


def _expands_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


class FunctionMeta(type):
    """Gives each Function subclass its node class `<Name>Backward`."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": "ember.autograd.function"})


class Function(metaclass=FunctionMeta):
    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd."
                                  "Function to use it with forward mode AD.")

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      f"are all static, so you should invoke them on the class itself. "
                      f"Instantiating an autograd function will raise an error in a future "
                      f"version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd."
                           "Function)")

    @classmethod
    def apply(cls, *args, **kwargs):
        uses_setup = cls.setup_context is not Function.setup_context
        if uses_setup:
            # as PyTorch: forward's signature binds the arguments, defaults filled in (so that
            # setup_context sees every input)
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        ctx = cls._backward_cls()
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        ctx.needs_input_grad = needs
        record = grad_mode.state.enabled and any(needs)
        tangents = forward_ad._input_tangents(args) if forward_ad._levels else None
        if tangents is not None and cls.jvp is Function.jvp:
            Function.jvp(ctx)       # (torch's error: forward AD needs the function's jvp)
        with grad_mode.no_grad(), forward_ad._suspended():
            # (the forward's own ops give no tangents: the function's jvp does)
            if uses_setup:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        if tangents is not None:
            _set_output_tangents(outputs, cls.jvp(ctx, *tangents))
        if not record:
            return outputs
        is_tuple = isinstance(outputs, tuple)
        outs = outputs if is_tuple else (outputs,)
        ctx._tensor_positions = positions
        ctx._input_meta = tuple((args[i]._data.shape, args[i]._dtype.np) for i in positions)
        Node.__init__(ctx, tuple(args[i]._edge() for i in positions))
        if anomaly_mode.state.enabled:
            anomaly_mode.record_trace(ctx)
        dirty = {id(t) for t in ctx.dirty_tensors or ()}
        if not dirty <= {id(o) for o in outs}:
            raise RuntimeError("Some elements marked as dirty during the forward method were not "
                               "returned as output. The inputs that are modified inplace must all "
                               "be outputs of the Function.")
        non_diff = {id(t) for t in ctx.non_differentiable or ()}
        inputs_by_id = {id(args[i]): args[i] for i in positions}
        wrapped = []
        for nr, o in enumerate(outs):
            if not isinstance(o, Tensor):
                wrapped.append(o)
                continue
            is_dirty, differentiable = id(o) in dirty, id(o) not in non_diff
            if id(o) in inputs_by_id and not is_dirty:
                # an input returned as is: a view of it (an alias if non-differentiable)
                o = o._make_view(o._data[...]) if differentiable else o.detach()
            if is_dirty:
                if o._base is None and o._requires_grad and o._grad_fn is None:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                       "in-place operation.")
                check_inplace_allowed(o)
                o._version_counter.bump()
            if differentiable and (o._dtype.is_floating_point or o._dtype.is_complex):
                o._grad_fn = ctx
                o._output_nr = nr
                o._requires_grad = True
                if o._base is not None and is_dirty:
                    CopySlices.rebase(o._base, o, _AliasFn(ctx, nr))
            wrapped.append(o)
        # views among the outputs: PyTorch refuses writing them in place
        n_tensors = sum(isinstance(o, Tensor) for o in wrapped)
        mark_unwritable_views([o for nr, o in enumerate(wrapped) if id(outs[nr]) not in dirty],
                              MULTI_OUTPUT if n_tensors > 1 else CUSTOM_FUNCTION)
        ctx._n_outputs = len(outs)
        ctx._output_meta = tuple((o._data.shape, o._dtype) if isinstance(o, Tensor)
                                 else ((), None) for o in wrapped)
        out_ids = {id(o): i for i, o in enumerate(wrapped) if isinstance(o, Tensor)}
        saver = PackedSaved if SavedTensor.hooks else SavedTensor   # saved_tensors_hooks
        ctx._saved = tuple(
            (saver(t, True, out_ids[id(t)]) if id(t) in out_ids and t._grad_fn is ctx
             else saver(t)) if isinstance(t, Tensor) else t
            for t in ctx.to_save or ())
        ctx.to_save = ctx.dirty_tensors = ctx.non_differentiable = None
        return tuple(wrapped) if is_tuple else wrapped[0]


class _AliasFn:
    """CopySlices adapter for a custom Function that wrote into a view (mark_dirty)."""

    def __init__(self, node, nr):
        self.next_functions = ((node, nr),)

    def apply(self, grads, needs):
        return (None,) + tuple(grads)

    def release(self):
        pass


def once_differentiable(fn):
    """Run a backward with grad mode off; its result cannot be differentiated again."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not grad_mode.state.enabled:
            return outputs
        requires = any(getattr(a, "_requires_grad", False) for a in args)
        if not requires:
            return outputs
        # mark the results so that differentiating them raises a clear error: as in PyTorch,
        # each gets an error node whose only input is a detached copy made to require grad (so
        # no path leads from the results back to the real inputs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        marked = tuple(_DelayedError.apply(o.detach().requires_grad_(True))
                       if isinstance(o, Tensor) else o for o in outs)
        return marked[0] if single else marked
    return wrapper


class _DelayedError(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


_DelayedError._backward_cls.name = lambda self: "torch::autograd::Error"


def _set_output_tangents(outputs, tangents):
    """A custom Function's jvp results as its outputs' tangents (forward AD)."""
    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    tangents = tangents if isinstance(tangents, tuple) else (tangents,)
    for out, tangent in zip(outs, tangents):
        if isinstance(out, Tensor) and tangent is not None:
            forward_ad._store(out, forward_ad._fit_layout(out, tangent))


class InplaceFunction(Function):
    """A Function that records whether it should work in place (`inplace`); kept, as in
    torch, for programs written against the old API."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """The old instance-style Function with nested inputs and outputs (forward_extended /
    backward_extended). It relied on autograd machinery torch has since removed, so, as in
    torch, it can no longer be run: calling an instance or `apply` fails on the missing state;
    the class remains for programs that only subclass or name it."""

    def __call__(self, *args):
        # (torch's instance call reaches for the removed legacy forward)
        raise AttributeError("'super' object has no attribute '_do_forward'")

    def forward(self, *args):
        nested = self._nested_input     # never set any more: apply fails here, as in torch
        result = self.forward_extended(*nested)
        self._nested_output = result
        return tuple(_flat_tensors(result))

    def backward(self, *gradients):
        result = self.backward_extended(*gradients)
        return tuple(_flat_tensors(result, keep_none=True))

    def save_for_backward(self, *args):
        self.to_save = tuple(_flat_tensors(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self):
        return self._to_save_nested

    def mark_dirty(self, *args, **kwargs):
        self.dirty_tensors = tuple(_flat_tensors((args, kwargs)))

    def mark_non_differentiable(self, *args, **kwargs):
        self.non_differentiable = tuple(_flat_tensors((args, kwargs)))

    def forward_extended(self, *input):
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        raise NotImplementedError


def _flat_tensors(obj, keep_none=False):
    """The tensors (and, with keep_none, the Nones) of nested lists, tuples and dicts."""
    if isinstance(obj, Tensor) or (keep_none and obj is None):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _flat_tensors(v, keep_none)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _flat_tensors(v, keep_none)
