"""Numerical gradient checks (finite differences vs. analytical vector-Jacobian products)."""
import numpy as np


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    from .._tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _differentiable(inputs):
    return [i for i, t in enumerate(inputs) if getattr(t, "_requires_grad", False)]


def _numerical_jacobian(fn, inputs, eps):
    """J[i][j]: d output_j / d input_i, by central differences, one column per input element."""
    jac = []
    # grad mode stays as the caller has it: gradgradcheck differentiates inside `fn`
    if True:
        outputs = _as_tuple(fn(*inputs))
        for i in _differentiable(inputs):
            x = inputs[i]
            flat = x._data.reshape(-1) if x._data.flags.c_contiguous else None
            if flat is None:
                raise GradcheckError("gradcheck needs contiguous inputs")
            cols = []
            for k in range(flat.size):
                orig = flat[k].copy()
                flat[k] = orig + eps
                plus = [o._data.astype(np.float64).copy() for o in _as_tuple(fn(*inputs))]
                flat[k] = orig - eps
                minus = [o._data.astype(np.float64).copy() for o in _as_tuple(fn(*inputs))]
                flat[k] = orig
                cols.append(np.concatenate([((p - m) / (2 * eps)).reshape(-1)
                                            for p, m in zip(plus, minus)]))
            jac.append(np.stack(cols) if cols else np.zeros((0, sum(o._data.size
                                                                    for o in outputs))))
    return jac


def _analytical_jacobian(fn, inputs):
    from . import grad as autograd_grad
    from ..ops.creation import zeros_like
    outputs = [o for o in _as_tuple(fn(*inputs))]
    diff = _differentiable(inputs)
    total = sum(o._data.size for o in outputs)
    jac = [np.zeros((inputs[i]._data.size, total)) for i in diff]
    col = 0
    for n, o in enumerate(outputs):
        for k in range(o._data.size):
            grads_out = [zeros_like(x) for x in outputs]
            grads_out[n]._data.flat[k] = 1          # (zeros_like may keep a permuted layout)
            if not o._requires_grad:
                col += 1
                continue
            gs = autograd_grad(outputs, [inputs[i] for i in diff], grads_out, retain_graph=True,
                               allow_unused=True)
            for j, g in enumerate(gs):
                if g is not None:
                    jac[j][:, col] = g._data.reshape(-1)
            col += 1
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    inputs = _as_tuple(inputs)
    for k, t in enumerate(inputs):
        if getattr(t, "_requires_grad", False) and t._dtype.name not in ("float64",
                                                                          "complex128"):
            import warnings
            warnings.warn(f"Input #{k} requires gradient and is not a double precision "
                          f"floating point or complex. This check will likely fail if all the "
                          f"inputs are not of double precision floating point or complex. ",
                          UserWarning, stacklevel=2)
    numerical = _numerical_jacobian(func, inputs, eps)
    analytical = _analytical_jacobian(func, inputs)
    # columns of the Jacobians are the outputs' elements, output after output; PyTorch
    # reports the first (output, input) pair that disagrees
    sizes = [o._data.size for o in _as_tuple(func(*inputs))]
    start = 0
    for i, size in enumerate(sizes):
        cols = slice(start, start + size)
        start += size
        for j, (n, a) in enumerate(zip(numerical, analytical)):
            if not np.allclose(a[:, cols], n[:, cols], rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {i} with respect to input "
                                     f"{j},\nnumerical:{_as_tensor(n[:, cols])}\nanalytical:"
                                     f"{_as_tensor(a[:, cols])}\n")
    return True


def _as_tensor(jacobian):
    from .._tensor import Tensor
    return Tensor._make(np.ascontiguousarray(jacobian))


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check the second derivative: gradcheck of (inputs, v) -> d(func)/d(inputs) . v."""
    from . import grad as autograd_grad
    from ..ops.creation import randn_like
    inputs = _as_tuple(inputs)
    outputs = _as_tuple(func(*inputs))
    if grad_outputs is None:
        grad_outputs = tuple(randn_like(o, dtype=o._dtype).requires_grad_() for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)
    diff = _differentiable(inputs)

    def first_grad(*args):
        ins, gos = args[:n], args[n:]
        outs = _as_tuple(func(*ins))
        gs = autograd_grad(outs, [ins[i] for i in diff], gos, create_graph=True,
                           allow_unused=True)
        from ..ops.creation import zeros_like
        return tuple(g if g is not None else zeros_like(ins[i]) for g, i in zip(gs, diff))

    return gradcheck(first_grad, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
