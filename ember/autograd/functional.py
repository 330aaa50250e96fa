"""Higher-level derivatives built on autograd.grad: jacobian, hessian, vjp, jvp, hvp, vhp.

As in PyTorch, inputs are cut from their graph (unless create_graph keeps it), results are
detached unless create_graph, and strict=True turns "independent of the input" (where zeros
would be returned) into an error. Forward-mode products (jvp, hvp) use the double-backward trick.
"""
from . import grad as _grad
from .grad_mode import enable_grad, set_grad_enabled, is_grad_enabled
from .._tensor import Tensor
from ..ops.creation import zeros_like
from ..ops.joining import stack

_STRATEGY_ERROR = ('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If '
                   'your function has more outputs than inputs, "forward-mode" tends to be more '
                   'performant. Otherwise, prefer to use "reverse-mode".')


def _as_tuple(value, arg_name, fn_name):
    """(tuple of tensors, whether `value` was a tuple), with PyTorch's type errors."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"the value at index {i} has" if is_tuple else f"the given {arg_name} has"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple "
                            f"of Tensors but {where} type {type(el)}.")
    return items, is_tuple


def _unpack(values, is_tuple):
    """`values` as the user passed them: the tuple, or its only element."""
    return values if is_tuple else values[0]


def _unpack2(values, outer_is_tuple, inner_is_tuple):
    """A nested (per output, per input) result unpacked on both levels."""
    if not inner_is_tuple:
        values = tuple(v[0] for v in values)
    return _unpack(values, outer_is_tuple)


def _prepare(tensors, create_graph, need_graph):
    """Inputs cut from the caller's graph; under create_graph one requiring grad stays linked
    (through a view) so that the results can be differentiated with respect to it."""
    return tuple(t.view_as(t) if create_graph and t._requires_grad
                 else t.detach().requires_grad_(need_graph) for t in tensors)


def _finish(values, create_graph):
    """Results detached unless create_graph (nested tuples as well)."""
    if create_graph:
        return values
    if isinstance(values, tuple):
        return tuple(_finish(v, create_graph) for v in values)
    return values.detach()


def _check_v(v, others, others_is_tuple):
    if len(v) != len(others):
        if others_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(others)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (vi, other) in enumerate(zip(v, others)):
        if vi.shape != other.shape:
            where = f"Entry {i} in " if others_is_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {other.shape} but got "
                               f"{vi.shape}.".replace("ember.Size", "torch.Size"))


def _check_requires_grad(tensors, kind, strict):
    """strict mode: every tensor of `kind` must exist and depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if t._requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(f"The hessian of the user-provided function with respect to input "
                               f"{i} is independent of the input. This is not allowed in strict "
                               f"mode. You should ensure that your function is thrice "
                               f"differentiable and that the hessian depends on the inputs.")
        if kind == "jacobian":
            raise RuntimeError(f"While computing the hessian, found that the jacobian of the "
                               f"user-provided function with respect to input {i} is independent "
                               f"of the input. This is not allowed in strict mode. You should "
                               f"ensure that your function is twice differentiable and that the "
                               f"jacobian depends on the inputs (this would be violated by a "
                               f"linear function for example).")
        if kind == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {i} is independent of the "
                               f"inputs of the user-provided function. This is not allowed in "
                               f"strict mode.")
        raise RuntimeError(f"Output {i} of the user-provided function does not require "
                           f"gradients. The outputs must be computed in a differentiable manner "
                           f"from the input when running in strict mode.")


def _grads(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad; None where an input is unused."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
             if o is not None and o._requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                 create_graph=create_graph, allow_unused=True)


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This "
                   "is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Zeros where a gradient is None (an error in strict mode, as is, under create_graph, a
    gradient that cannot be differentiated further)."""
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = zeros_like(ref)
        elif strict and create_graph and not g._requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               f"create_graph=True.")
        out.append(g)
    return tuple(out)


_OUTPUTS = "outputs of the user-provided function"


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        inputs, inputs_is_tuple = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, True)
        outputs, outputs_is_tuple = _as_tuple(func(*inputs), _OUTPUTS, "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            v = _prepare(_as_tuple(v, "v", "vjp")[0], create_graph, False)
            _check_v(v, outputs, outputs_is_tuple)
        elif len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grads(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), outputs_is_tuple),
            _unpack(_finish(result, create_graph), inputs_is_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        inputs, inputs_is_tuple = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, True)
        if v is not None:
            v = _prepare(_as_tuple(v, "v", "jvp")[0], create_graph, False)
            _check_v(v, inputs, inputs_is_tuple)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        outputs, outputs_is_tuple = _as_tuple(func(*inputs), _OUTPUTS, "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # the double-backward trick: u -> J^T u is linear in u, its vjp with v is J v
        us = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grads(outputs, inputs, us, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grads(grad_inputs, us, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, outputs, strict, create_graph, "back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_is_tuple),
            _unpack(_finish(result, create_graph), outputs_is_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_STRATEGY_ERROR)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` "
                                      "and `strategy=\"forward-mode\"` are not supported together "
                                      "(yet). Please either set `create_graph=False` or "
                                      "`strategy=\"reverse-mode\"`.")
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-"
                                      "reverse Hessian isonly implemented for `vectorize=True`.")
    # vectorize and forward-mode only change how PyTorch computes the same numbers: here the
    # Jacobian is always built row by row with reverse mode
    with enable_grad():
        inputs, inputs_is_tuple = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, True)
        outputs, outputs_is_tuple = _as_tuple(func(*inputs), _OUTPUTS, "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either set "
                               "`strict=False` or `vectorize=False`.")
        result = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]     # per input: d out.flat[k] / d input, for each k
            flat = out.reshape(-1)
            for k in range(flat.shape[0]):
                row = _grads((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, x) in enumerate(zip(row, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {j}. This is not allowed "
                                               f"in strict mode.")
                        g = zeros_like(x)
                    elif strict and create_graph and not g._requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is "
                                           f"independent of input {j}. This is not allowed in "
                                           f"strict mode when create_graph=True.")
                    rows[j].append(g)
            result.append(tuple(stack(r).view(tuple(out.shape) + tuple(x.shape))
                                for r, x in zip(rows, inputs)))
        result = _finish(tuple(result), create_graph)
    return _unpack2(result, outputs_is_tuple, inputs_is_tuple)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    inputs, inputs_is_tuple = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*xs):
        out = func(*xs)
        outs, is_tuple = _as_tuple(out, _OUTPUTS, "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if is_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def gradient(*xs):
        jac = jacobian(single_output, xs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack2(result, inputs_is_tuple, inputs_is_tuple)


def _scalar_function_gradient(func, inputs, v, create_graph, strict, name):
    """What vhp and hvp share: the checked inputs, v, the output and its gradient (a graph)."""
    inputs, inputs_is_tuple = _as_tuple(inputs, "inputs", name)
    inputs = _prepare(inputs, create_graph, True)
    if v is not None:
        v = _prepare(_as_tuple(v, "v", name)[0], create_graph, False)
        _check_v(v, inputs, inputs_is_tuple)
    elif len(inputs) != 1 or inputs[0].numel() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    outputs, outputs_is_tuple = _as_tuple(func(*inputs), _OUTPUTS, name)
    _check_requires_grad(outputs, "outputs", strict)
    if outputs_is_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain "
                           f"a single element")
    jac = _grads(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return inputs, inputs_is_tuple, v, outputs, outputs_is_tuple, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        inputs, inputs_is_tuple, v, outputs, outputs_is_tuple, jac = \
            _scalar_function_gradient(func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grads(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    return (_unpack(_finish(outputs, create_graph), outputs_is_tuple),
            _unpack(_finish(result, create_graph), inputs_is_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        inputs, inputs_is_tuple, v, outputs, outputs_is_tuple, jac = \
            _scalar_function_gradient(func, inputs, v, create_graph, strict, "hvp")
        # the double-backward trick again: u -> H u through the vjp of u -> u^T H
        us = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        double_back = _grads(jac, inputs, us, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grads(double_back, us, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_is_tuple),
            _unpack(_finish(result, create_graph), inputs_is_tuple))
