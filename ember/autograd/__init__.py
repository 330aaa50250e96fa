"""ember.autograd: backward, grad, grad modes, custom Functions, and checking tools."""
import warnings
import weakref

from .._backend import backend

from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,
                        is_grad_enabled, is_inference_mode_enabled, set_multithreading_enabled,
                        enforce_grad_layout_policy)
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled
from . import engine, graph, grad_mode
from .function import Function, once_differentiable, FunctionCtx, NestedIOFunction
from .._tensor import Tensor
from ..ops.creation import zeros_like
from ..ops.joining import stack


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, (Tensor, graph.GradientEdge)):
        return (x,)
    return tuple(x)


def _check_tensors(outputs, inputs):
    """PyTorch's type checks of what to differentiate (outputs) and with respect to (inputs)."""
    for t in outputs:
        if not isinstance(t, Tensor):
            raise AssertionError("Expected output to be a torch.Tensor")
    for t in inputs or ():
        if not isinstance(t, (Tensor, graph.GradientEdge)):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__}")


def _roots(tensors):
    """The graph edges backward starts from; each tensor must require grad."""
    roots = []
    for i, t in enumerate(tensors):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               f"a grad_fn")
        roots.append(t._edge())
    return roots


def _make_grads(outputs, grads, is_grads_batched=False):
    """Fill in implicit gradients (ones for scalars) and check given ones, as PyTorch does."""
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if out._requires_grad:
                if out._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out._dtype.is_floating_point:
                    raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                       f"outputs but got {out._dtype}".replace("ember.", "torch."))
                data = out._data
                g = Tensor._make(backend(out._device.type).xp.ones(data.shape, data.dtype),
                                 out._dtype, out._device)
        elif isinstance(g, Tensor):
            if is_grads_batched and g.shape[1:] != out.shape:
                # (PyTorch's message drops the batch dimension twice: shape[2:])
                raise RuntimeError(f"If `is_grads_batched=True`, we interpret the first dimension "
                                   f"of each grad_output as the batch dimension. The sizes of the "
                                   f"remaining dimensions are expected to match the shape of "
                                   f"corresponding output, but a mismatch was detected: "
                                   f"grad_output[{i}] has a shape of {g.shape[2:]} and output[{i}] "
                                   f"has a shape of {out.shape}. If you only want some tensors in "
                                   f"`grad_output` to be considered batched, consider using vmap."
                                   .replace("ember.Size", "torch.Size"))
            if not is_grads_batched and g.shape != out.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{g.shape} and output[{i}] has a shape of {out.shape}."
                                   .replace("ember.Size", "torch.Size"))
            if g._dtype._category >= 2 and out._dtype._category < 2 or \
                    (g._dtype.is_complex != out._dtype.is_complex):
                raise RuntimeError(f"For complex Tensors, both grad_output and output are "
                                   f"required to have the same dtype. Mismatch in dtype: "
                                   f"grad_output[{i}] has a dtype of {g._dtype} and output[{i}] "
                                   f"has a dtype of {out._dtype}.")
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        result.append(g)
    return result


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is None:
            grad_tensors = grad_variables
        else:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both "
                               "passed to `backward()`. Please only use `grad_tensors`.")
    if inputs is not None and len(_as_tuple(inputs)) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = _as_tuple(tensors)
    inputs = _as_tuple(inputs)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
    _check_tensors(tensors, inputs)
    grads = _make_grads(tensors, grads)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        _warn_create_graph_cycle()
    roots = _roots(tensors)
    for t in inputs or ():
        if not t._requires_grad:     # (PyTorch makes each input retain its grad, hence the text)
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    graph.follow_retaining_tensors()        # (retain_grad follows in-place ops, as in PyTorch)
    if not inputs:
        engine.run_backward(roots, grads, retain_graph, create_graph, accumulate=True)
        return
    # As PyTorch, a non-leaf among `inputs` retains its grad from now on. For this backward its
    # .grad is filled from the gradient captured for it (its node may not run at all), so the
    # engine's own retain_grad is set aside meanwhile.
    nonleaf = [t for t in inputs if isinstance(t, Tensor) and t.grad_fn is not None]
    for t in nonleaf:
        t.retain_grad()
        t.grad_fn._extras.retain_grad.pop(t._output_nr, None)
    try:
        captured = engine.run_backward(roots, grads, retain_graph, create_graph, inputs=inputs,
                                       accumulate=True)
    finally:
        for t in nonleaf:
            t.grad_fn._retain_grad_of(t._output_nr, t)
    pending = {id(t) for t in nonleaf}
    with grad_mode.set_grad_enabled(create_graph):
        for t, g in zip(inputs, captured):
            if id(t) in pending:
                pending.discard(id(t))          # (once, if it is listed twice)
                engine._retain_grads({0: weakref.ref(t)}, [g])


_create_graph_warned = []


def _warn_create_graph_cycle():
    """PyTorch warns once per process that backward(create_graph=True) makes a cycle."""
    if not _create_graph_warned:
        _create_graph_warned.append(True)
        warnings.warn("Using backward() with create_graph=True will create a reference cycle "
                      "between the parameter and its gradient which can cause a memory leak. We "
                      "recommend using autograd.grad when creating the graph to avoid this. If "
                      "you have to use this function, make sure to reset the .grad fields of "
                      "your parameters to None after use to break the cycle and avoid the leak. "
                      "(Triggered internally at "
                      "/__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)",
                      UserWarning, stacklevel=3)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads="
                         "True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    _check_tensors(outputs, inputs)
    grads = _make_grads(outputs, grads, is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _roots(outputs)
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    graph.follow_retaining_tensors()
    if is_grads_batched:
        result = _batched_grads(roots, grads, retain_graph, create_graph, inputs)
    else:
        result = engine.run_backward(roots, grads, retain_graph, create_graph, inputs=inputs,
                                     accumulate=False)
    out = []
    for i, (t, g) in enumerate(zip(inputs, result)):
        if g is None:
            if materialize_grads:
                if isinstance(t, graph.GradientEdge):
                    raise RuntimeError("materialize_grads cannot be used when the given input is "
                                       "a GradientEdge")
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   f"been used in the graph. Set allow_unused=True if this is "
                                   f"the desired behavior.")
        elif not create_graph:
            g = g.detach()
        out.append(g)
    return tuple(out)


def _batched_grads(roots, grads, retain_graph, create_graph, inputs):
    """autograd.grad with is_grads_batched: one backward per entry of the grad_outputs' first
    dimension (where PyTorch vmaps), the results stacked; None for an input none reached."""
    n = next(g.shape[0] for g in grads if g is not None)
    if n == 0:
        raise IndexError("index 0 is out of bounds for dimension 0 with size 0")
    per_entry = [engine.run_backward(roots, [None if g is None else g[k] for g in grads],
                                     retain_graph or k < n - 1, create_graph, inputs=inputs,
                                     accumulate=False) for k in range(n)]
    return [None if entry[0] is None else stack(entry) for entry in zip(*per_entry)]


def variable(*args, **kwargs):
    """The pre-0.4 constructor: removed, as in torch; torch.tensor replaces it."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) "
                       "instead")


class VariableMeta(type):
    """Makes `isinstance(t, Variable)` true for every tensor, as in torch 2.x."""

    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)

    def __call__(cls, data, requires_grad=False, volatile=False):
        """The pre-0.4 wrapper: a detached alias of `data` with the requested requires_grad.
        `volatile` only warns, as in torch 2.x."""
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                          "instead.", UserWarning, stacklevel=2)
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out


class Variable(metaclass=VariableMeta):
    """torch.autograd.Variable: calling it wraps a tensor (see VariableMeta.__call__)."""


from . import functional  # noqa: E402
from . import forward_ad  # noqa: E402
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402
