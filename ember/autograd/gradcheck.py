"""gradcheck and gradgradcheck: finite differences against backward, as PyTorch checks them.

Same defaults, order of checks, return values, exceptions and messages as torch.autograd.

Slow mode builds both Jacobians in full, J[input element, output element]: the numerical one a row
at a time (central differences around each input element), the analytical one a column at a time
(a one-hot backward per output element). Fast mode compares one number per (input, output) pair
instead, v^T J u for random unit vectors u and v, drawn exactly as torch draws them so that the
numbers in its messages are torch's.

Then, as PyTorch does: backward must be reentrant (same result twice), give zero for a zero
grad_output, and (check_undefined_grad) cope with undefined output gradients.

check_forward_ad compares forward AD (autograd.forward_ad) with the same finite differences, after
the backward checks: slow mode builds its Jacobian a row at a time from one-hot tangents, fast
mode compares J u itself (a vector per (input, output), no v). A complex input is checked as its
imaginary part, then its real part, each a real input (the other part held constant).

Not supported: batched gradients (check_batched_grad / check_batched_forward_grad are accepted
and ignored).
Inputs are dense: `masked` only changes the zero-gradient test to allclose, as in PyTorch.
"""
import warnings

import numpy as np

from .. import _dtype as D, _random_recipes as R
from .. import _tensor      # (its Tensor is not defined yet when this module loads)
from .function import Function
from . import grad as autograd_grad, forward_ad as fwAD
from ..ops.creation import zeros
from ..ops.random import rand
from .._generator import Generator


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


_NONDET_NOTE = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

_FAST_FAIL_SLOW_OK = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()

_UNDEFINED_NOTES = 'Please look at "Notes about undefined output gradients" in ' \
                   '"tools/autograd/derivatives.yaml"'


# ----------------------------------------------------------------------------- entry points
def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """True if backward's gradients of `func` at `inputs` match finite differences.

    A failed check raises GradcheckError (a RuntimeError) saying what failed, or returns False
    with raise_exception=False; misuse (no input requires grad...) raises regardless.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be "
                             "True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad "
                             "to be True")
    try:
        return _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol,
                          check_undefined_grad, check_grad_dtypes, fast_mode, masked,
                          check_forward_ad, check_backward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the first derivative: (inputs, grad_outputs) -> d func/d inputs . grad_outputs.

    grad_outputs default to random tensors in [-1, 1) that require grad (ember's random stream,
    so not torch's numbers).
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev "
                             "to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to "
                             "be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be "
                             "True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        grad_outputs = tuple(_random_grad_output(o, gen_non_contig_grad_outputs)
                             for o in _differentiable_outputs(func(*inputs)))
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n = len(grad_outputs)
    # the arguments that are differentiated (and must require grad whatever gradcheck passes)
    diff_inputs = {i for i, x in enumerate(inputs)
                   if isinstance(x, _tensor.Tensor) and x.requires_grad}
    diff_grad_outputs = {i for i, g in enumerate(grad_outputs) if g.requires_grad}

    def first_derivative(*args):
        ins = tuple(x.requires_grad_() if i in diff_inputs else x
                    for i, x in enumerate(args[:-n]))
        outs = _differentiable_outputs(func(*ins))
        gos = tuple(g.requires_grad_() if i in diff_grad_outputs else g
                    for i, g in enumerate(args[-n:]))
        grads = autograd_grad(outs, tuple(x for i, x in enumerate(ins) if i in diff_inputs),
                              gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, fast_mode, masked, check_forward_ad, check_backward_ad):
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    check = _fast_check if fast_mode else _slow_check
    if check_backward_ad:
        _backward_checks(check, func, func_out, inputs, outputs, eps, rtol, atol,
                         check_grad_dtypes, nondet_tol)
    if check_forward_ad:
        _forward_checks(check, func, func_out, inputs, outputs, eps, rtol, atol,
                        check_grad_dtypes, nondet_tol, check_undefined_grad)
    if not check_backward_ad:
        return True             # (the checks below are of backward)
    _check_zero_grad_output(outputs, inputs, masked)
    if check_undefined_grad:
        _check_undefined_grad_outputs(func, outputs, inputs)
    return True


def _backward_checks(check, func, func_out, inputs, outputs, eps, rtol, atol,
                     check_grad_dtypes, nondet_tol):
    if any(o.is_complex() for o in _as_tuple(func_out)):
        # a complex output's gradient is checked as those of its imaginary and real parts
        complex_indices = [i for i, o in enumerate(outputs) if o.is_complex()]
        for part in ("imag", "real"):
            part_fn = _complex_part(func, part)
            part_out = part_fn(*inputs)
            check(part_fn, part_out, inputs, _differentiable_outputs(part_out), eps, rtol, atol,
                  check_grad_dtypes, nondet_tol, complex_indices, part)
    else:
        check(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol,
              None, None)


def _forward_checks(check, func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, check_undefined_grad):
    complex_indices = [i for i, x in enumerate(inputs)
                       if isinstance(x, _tensor.Tensor) and x.is_complex()]
    if not complex_indices:
        check(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol,
              None, None, forward=True)
        if check_undefined_grad:
            _check_undefined_tangents(func, inputs)
        return
    # forward AD takes real inputs: each part of a complex input in turn, the other held fixed
    parts = []
    for part in ("imag", "real"):
        part_fn = _complex_input_part(func, inputs, complex_indices, part)
        part_inputs = tuple(getattr(x, part) if i in complex_indices else x
                            for i, x in enumerate(inputs))
        part_out = part_fn(*part_inputs)
        check(part_fn, part_out, part_inputs, _differentiable_outputs(part_out), eps, rtol, atol,
              check_grad_dtypes, nondet_tol, complex_indices, part, forward=True)
        parts.append((part_fn, part_inputs))
    if check_undefined_grad:
        for part_fn, part_inputs in parts:
            _check_undefined_tangents(part_fn, part_inputs)


# ----------------------------------------------------------------------------- helpers
def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(func_out):
    return tuple(o for o in _as_tuple(func_out) if o.requires_grad)


def _diff_inputs(inputs):
    return [x for x in inputs if isinstance(x, _tensor.Tensor) and x.requires_grad]


def _is_float_or_complex(x):
    return isinstance(x, _tensor.Tensor) and (x.is_floating_point() or x.is_complex())


def _complex_input_part(func, inputs, complex_indices, part):
    """func of the real (or imaginary) parts of its complex inputs, the other parts fixed."""
    def part_fn(*args):
        args = list(args)
        for i in complex_indices:
            if part == "real":
                args[i] = args[i] + inputs[i].imag * 1j
            else:
                args[i] = inputs[i].real + args[i] * 1j
        return _as_tuple(func(*args))
    return part_fn


def _complex_part(func, part):
    def part_fn(*inputs):
        return tuple(getattr(o, part) if o.is_complex() else o for o in _as_tuple(func(*inputs)))
    return part_fn


def _check_inputs(inputs):
    any_requires_grad = False
    for idx, x in enumerate(inputs):
        if isinstance(x, _tensor.Tensor) and x.requires_grad:
            if x.dtype not in (D.float64, D.complex128):
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision "
                              f"floating point or complex. This check will likely fail if all "
                              f"the inputs are not of double precision floating point or "
                              f"complex. ", UserWarning, stacklevel=4)
            # perturbing one element of an overlapping input would move others with it
            if not all(st > 0 or sz <= 1 for st, sz in zip(x.stride(), x.shape)):
                raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck "
                                   f"only supports inputs that are non-overlapping to be able to "
                                   f"compute the numerical gradients correctly. You should call "
                                   f".contiguous on the input before passing it to gradcheck.")
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")


def _as_ember(array, dtype):
    return _tensor.Tensor._make(array, dtype)


def _zeros_like(t):
    return zeros(t.shape, dtype=t.dtype, device=t.device)     # contiguous, whatever t's layout


def _allclose(a, b, rtol, atol):
    """torch.allclose(a, b) on arrays of any two dtypes: |a - b| <= atol + rtol * |b|."""
    return bool(np.allclose(a, b, rtol=rtol, atol=atol))


def _mismatch_message(analytical, numerical, output_idx, input_idx, complex_indices, part,
                      forward=False):
    # (backward splits complex outputs into parts, forward AD complex inputs)
    prefix = ""
    if complex_indices and (input_idx if forward else output_idx) in complex_indices:
        prefix = (f"While considering the {'imaginary' if part == 'imag' else 'real'} part of "
                  f"complex {'inputs' if forward else 'outputs'} only, ")
    mode = "computed with forward mode " if forward else ""
    return (f"{prefix}Jacobian {mode}mismatch for output {output_idx:d} with respect to input "
            f"{input_idx:d},\nnumerical:{numerical}\nanalytical:{analytical}\n")


# ----------------------------------------------------------------------------- numerical
def _outputs_copy(fn, inputs):
    return tuple(o.detach().clone() for o in _as_tuple(fn(*inputs)))


def _central_difference(fn, inputs, data, at, delta, eps, index=None):
    """(fn(x + delta) - fn(x - delta)) / (2 eps) per output, flattened, where `delta` moves
    `data[at]` (the array of one input, written in place as torch writes `.data`)."""
    orig = data[at].copy()
    data[at] = orig - delta
    before = _outputs_copy(fn, inputs)
    data[at] = orig + delta
    after = _outputs_copy(fn, inputs)
    data[at] = orig
    on_index = f"on index {index} " if index is not None else ""
    for a, b in zip(before, after):
        if a.shape != b.shape:
            raise AssertionError(f"Expected `func` to return outputs with the same shape when "
                                 f"inputs are perturbed {on_index}by {eps}, but got: shapes "
                                 f"{a.shape} and {b.shape}.")
        if a.dtype != b.dtype:
            raise AssertionError(f"Expected `func` to return outputs with the same dtype when "
                                 f"inputs are perturbed {on_index}by {eps}, but got: dtypes "
                                 f"{a.dtype} and {b.dtype}.")
    return [((b - a) / (2 * eps)).reshape(-1) for a, b in zip(before, after)]


def _directional_derivatives(fn, inputs, x, at, direction, eps, index=None):
    """d fn / d x along `direction` (times eps); for a complex x, the conjugate Wirtinger
    derivative d/d re + i d/d im, with `direction` a (real part, imaginary part) pair."""
    if not x.is_complex():
        return _central_difference(fn, inputs, x._data, at, direction, eps, index)
    re, im = direction
    d_re = _central_difference(fn, inputs, x._data, at, re, eps, index)
    d_im = _central_difference(fn, inputs, x._data, at, im * 1j, eps, index)
    return [a + b * 1j for a, b in zip(d_re, d_im)]


def _numerical_jacobians(fn, inputs, func_out, eps):
    """[k][m]: the Jacobian of the m-th floating point or complex output with respect to the
    k-th input that requires grad, (input numel, output numel), a row per input element."""
    is_float = [_is_float_or_complex(o) for o in _as_tuple(func_out)]
    float_outputs = [o for o, f in zip(_as_tuple(func_out), is_float) if f]
    result = []
    for x in _diff_inputs(inputs):
        dtypes = [x.dtype if x.is_complex() else o.dtype for o in float_outputs]
        jacobians = [np.zeros((x.numel(), o.numel()), dtype.np)
                     for o, dtype in zip(float_outputs, dtypes)]
        for k in range(x.numel()):
            at = tuple(int(i) for i in np.unravel_index(k, x.shape))
            step = (eps, eps) if x.is_complex() else eps
            columns = _directional_derivatives(fn, inputs, x, at, step, eps, at)
            for jacobian, column in zip(jacobians, (c for c, f in zip(columns, is_float) if f)):
                jacobian[k] = column._data
        result.append([_as_ember(j, dtype) for j, dtype in zip(jacobians, dtypes)])
    return result


def _numerical_jacobians_of_outputs(fn, inputs, func_out, eps):
    """[m][k]: as _numerical_jacobians, for the m-th output that requires grad."""
    per_input = _numerical_jacobians(fn, inputs, func_out, eps)
    float_outputs = [o for o in _as_tuple(func_out) if _is_float_or_complex(o)]
    return [[jacobians[m] for jacobians in per_input]
            for m, o in enumerate(float_outputs) if o.requires_grad]


# ----------------------------------------------------------------------------- analytical
def _vjp_columns(output, diff_inputs, v):
    """[k]: (input numel, columns) from backward of `output`: one-hot grad_outputs, or `v`."""
    n_columns = output.numel() if v is None else 1
    jacobians = [np.zeros((x.numel(), n_columns), x.dtype.np) for x in diff_inputs]
    sizes_ok = types_ok = True
    if v is None:
        grad_output = _zeros_like(output)
        one_hot = grad_output._data.reshape(-1)        # a view: one element set per column
    else:
        grad_output = v.reshape(output.shape)
    for j in range(n_columns):
        if v is None:
            one_hot[:] = 0
            one_hot[j] = 1
        grads = autograd_grad(output, diff_inputs, grad_output, retain_graph=True,
                              allow_unused=True)
        for jacobian, x, g in zip(jacobians, diff_inputs, grads):
            if g is None:
                continue
            if g.shape != x.shape:
                sizes_ok = False
            elif g.dtype != x.dtype:
                types_ok = False
            jacobian[:, j] = g._data.reshape(-1)
    return jacobians, sizes_ok, types_ok


def _analytical_jacobians(inputs, output, nondet_tol, check_grad_dtypes, v=None):
    """[k]: the Jacobian of `output` w.r.t. the k-th input that requires grad (fast mode: its
    v^T J). Computed twice: a backward must give the same values again, within nondet_tol."""
    diff_inputs = _diff_inputs(inputs)
    first, sizes_ok, types_ok = _vjp_columns(output, diff_inputs, v)
    second, _, _ = _vjp_columns(output, diff_inputs, v)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if any(a.size and np.abs(a - b).max() > nondet_tol for a, b in zip(first, second)):
        raise GradcheckError(
            f"Backward is not reentrant, i.e., running backward with same input and grad_output "
            f"multiple times gives different values, although analytical gradient matches "
            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
            + _NONDET_NOTE)
    return [_as_ember(j, x.dtype) for j, x in zip(first, diff_inputs)]


def _forward_jacobians(func, inputs, check_grad_dtypes=False, all_u=None):
    """[k][m]: by forward AD, the Jacobian of the m-th floating point or complex output with
    respect to the k-th input that requires grad, (input numel, output numel): a row per one-hot
    tangent; with `all_u`, the one row J u_k (flattened), from the tangent u_k."""
    diff = [i for i, x in enumerate(inputs) if isinstance(x, _tensor.Tensor) and x.requires_grad]
    if any(inputs[i].is_complex() for i in diff):
        raise ValueError("Expected inputs to be non-complex for "
                         "_get_analytical_jacobian_forward_ad.")
    result = []
    with fwAD.dual_level():
        duals = list(inputs)
        for i in diff:
            duals[i] = fwAD.make_dual(inputs[i].detach(), _zeros_like(inputs[i]))
        for k, i in enumerate(diff):
            tangent = fwAD.unpack_dual(duals[i]).tangent._data   # (written in place)
            if all_u is None:
                settings = [np.unravel_index(n, tangent.shape) for n in range(tangent.size)]
            else:
                settings = [Ellipsis]
            rows = []
            for at in settings:
                tangent[at] = 1 if all_u is None else all_u[k].reshape(tangent.shape)
                rows.append(_output_tangents(func(*duals), check_grad_dtypes))
                tangent[at] = 0
            # rows[r][m] -> [m]: (rows, output numel), or one flat row with all_u
            jacobians = []
            for column in zip(*rows):
                jacobian = np.stack(column)
                jacobians.append(_as_ember(jacobian[0] if all_u is not None else jacobian,
                                           D.from_numpy_dtype(jacobian.dtype)))
            result.append(jacobians)
    return result


def _output_tangents(out, check_grad_dtypes):
    """The flattened tangent (zeros without one) of each floating point or complex output."""
    tangents = []
    for o in _as_tuple(out):
        if not _is_float_or_complex(o):
            continue
        primal, tangent = fwAD.unpack_dual(o)
        if tangent is None:
            tangents.append(np.zeros(o.numel(), o.dtype.np))
            continue
        if check_grad_dtypes and primal.is_complex() != tangent.is_complex():
            raise GradcheckError("Forward AD gradient has dtype mismatch.")
        tangents.append(np.asarray(tangent._data, o.dtype.np).reshape(-1))
    return tangents


def _check_undefined_tangents(func, inputs):
    """An input with no tangent must act as one with a zero tangent: each output's tangent the
    same both ways (where both have one), the others' tangents random unit vectors."""
    rng = _TorchRandom()
    diff = [i for i, x in enumerate(inputs) if isinstance(x, _tensor.Tensor) and x.requires_grad]
    with fwAD.dual_level():
        duals = list(inputs)
        for i in diff:
            u = _as_ember(_unit_vector(rng, inputs[i], True).reshape(inputs[i].shape),
                          inputs[i].dtype)
            duals[i] = fwAD.make_dual(inputs[i].detach(), u)
        for i in diff:
            dual = duals[i]
            duals[i] = fwAD.make_dual(inputs[i].detach(), _zeros_like(inputs[i]))
            with_zero = [o for o in _as_tuple(func(*duals)) if _is_float_or_complex(o)]
            duals[i] = inputs[i].detach()
            without = [o for o in _as_tuple(func(*duals)) if _is_float_or_complex(o)]
            duals[i] = dual
            for m, (a, b) in enumerate(zip(with_zero, without)):
                got, expected = fwAD.unpack_dual(a).tangent, fwAD.unpack_dual(b).tangent
                if got is not None and expected is not None and \
                        not _allclose(got._data, expected._data, 1e-05, 1e-08):
                    raise GradcheckError("Mismatch in tangent values for output with index: ", m,
                                         " when input: ", inputs[i], " has an undefined tangent "
                                         "value. ", " Got: ", got, " but expected: ", expected)


# ----------------------------------------------------------------------------- slow mode
def _slow_check(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                nondet_tol, complex_indices, part, forward=False):
    if not outputs:
        for jacobians in _numerical_jacobians(func, inputs, func_out, eps):
            if any(bool((j._data != 0).any()) for j in jacobians):
                raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    numerical = _numerical_jacobians_of_outputs(func, inputs, func_out, eps)
    if forward:
        # (indexed by floating point output, as PyTorch does, while `numerical` is by output
        # requiring grad)
        by_input = _forward_jacobians(func, inputs, check_grad_dtypes)
    for i, o in enumerate(outputs):
        if forward:
            analytical = [jacobians[i] for jacobians in by_input]
        else:
            analytical = _analytical_jacobians(inputs, o, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            if not _allclose(a._data, n._data, rtol, atol):
                raise GradcheckError(_mismatch_message(a, n, i, j, complex_indices, part,
                                                       forward))


# ----------------------------------------------------------------------------- fast mode
class _TorchRandom:
    """torch.rand(n, generator=torch.Generator()): PyTorch's CPU mt19937 stream from its default
    seed. Fast mode draws its random vectors from such a generator."""

    def __init__(self):
        self._gen = Generator()                 # a fresh generator: torch's default seed

    def rand(self, n):
        """n uniform numbers in [0, 1) of the default dtype, as a float64 array."""
        if D.get_default_dtype() is D.float64:
            return R.uniform01_double(self._gen, n)
        return R.uniform01_float(self._gen, n).astype(np.float64)


def _unit_vector(rng, t, real):
    """A random unit vector with t's numel, of t's dtype (its real dtype if `real`)."""
    dtype = t.dtype.to_real() if real and t.is_complex() else t.dtype
    vec = rng.rand(t.numel()).astype(dtype.np)
    return vec / np.linalg.norm(vec)


def _fast_check(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                nondet_tol, complex_indices, part, forward=False):
    if forward:
        return _fast_forward_check(func, func_out, inputs, eps, rtol, atol, check_grad_dtypes,
                                   complex_indices, part)
    diff_inputs = _diff_inputs(inputs)
    rng = _TorchRandom()
    all_u = [(_unit_vector(rng, x, True), _unit_vector(rng, x, True)) if x.is_complex()
             else _unit_vector(rng, x, True) for x in diff_inputs]
    all_v = [_unit_vector(rng, o, False) for o in outputs]
    float_out = [_is_float_or_complex(o) for o in _as_tuple(func_out)]
    diff_float = [o.requires_grad for o, f in zip(_as_tuple(func_out), float_out) if f]

    # J u by finite differences along u; then v^T (J u) for each output
    numerical = []
    for x, u in zip(diff_inputs, all_u):
        direction = tuple(p.reshape(x.shape) * eps for p in u) if isinstance(u, tuple) else \
            u.reshape(x.shape) * eps
        ju = _directional_derivatives(func, inputs, x, Ellipsis, direction, eps)
        if not outputs:
            for column in ju:
                if column.numel() and float(np.abs(column._data).max()) > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        ju = [c for c, f in zip(ju, float_out) if f]
        ju = [c for c, d in zip(ju, diff_float) if d]
        numerical.append([np.sum(v * c._data) for v, c in zip(all_v, ju)])

    # (v^T J) u from one backward of v per output
    analytical = []
    for o, v in zip(outputs, all_v):
        vjs = _analytical_jacobians(inputs, o, nondet_tol, check_grad_dtypes,
                                    v=_as_ember(v, o.dtype))
        scalars = []
        for vj, u in zip(vjs, all_u):
            vj = vj._data[:, 0]
            if isinstance(u, tuple):
                scalars.append(vj.real.dot(u[0]) + 1j * vj.imag.dot(u[1]))
            else:
                scalars.append(vj.dot(u))
        analytical.append(scalars)

    for i, per_output in enumerate(numerical):
        u = all_u[i]
        u_sum = float(u[0].sum()) + float(u[1].sum()) if isinstance(u, tuple) else float(u.sum())
        for j, n in enumerate(per_output):
            a = analytical[j][i]
            # atol bounds each element's difference: scaled by sum(u) sum(v) for v^T J u
            if not _allclose(a, n, rtol, atol * u_sum * float(all_v[j].sum())):
                raise GradcheckError(
                    _mismatch_message(a.item(), n.item(), j, i, complex_indices, part)
                    + _slow_mode_report(func, inputs, func_out, outputs, i, j, rtol, atol, eps))


def _fast_forward_check(func, func_out, inputs, eps, rtol, atol, check_grad_dtypes,
                        complex_indices, part):
    """J u by finite differences against J u by forward AD (real inputs: no v needed)."""
    diff_inputs = _diff_inputs(inputs)
    rng = _TorchRandom()
    all_u = [_unit_vector(rng, x, True) for x in diff_inputs]
    float_out = [_is_float_or_complex(o) for o in _as_tuple(func_out)]
    analytical = _forward_jacobians(func, inputs, check_grad_dtypes, all_u)
    for i, (x, u) in enumerate(zip(diff_inputs, all_u)):
        ju = _directional_derivatives(func, inputs, x, Ellipsis, u.reshape(x.shape) * eps, eps)
        ju = [c for c, f in zip(ju, float_out) if f]
        for j, (a, n) in enumerate(zip(analytical[i], ju)):
            # atol bounds each element's difference: scaled by sum(u) for J u
            if not _allclose(a._data, n._data, rtol, atol * float(u.sum())):
                raise GradcheckError(
                    _mismatch_message(a, n, j, i, complex_indices, part, forward=True)
                    + _slow_mode_report(func, inputs, func_out, _differentiable_outputs(func_out),
                                        i, j, rtol, atol, eps, forward=True))


def _slow_mode_report(func, inputs, func_out, outputs, input_idx, output_idx, rtol, atol, eps,
                      forward=False):
    """The slow-mode Jacobians of a failed fast check (of forward AD if `forward`)."""
    if forward:
        # (output_idx counts the floating point outputs here, but PyTorch's report first takes
        # that output out of the differentiable ones: an IndexError where there are fewer)
        outputs[output_idx]
        numerical = _numerical_jacobians(func, inputs, func_out, eps)[input_idx][output_idx]
        analytical = _forward_jacobians(func, inputs)[input_idx][output_idx]
    else:
        numerical = _numerical_jacobians_of_outputs(func, inputs, func_out,
                                                    eps)[output_idx][input_idx]
        analytical = _analytical_jacobians(inputs, outputs[output_idx], float("inf"),
                                           False)[input_idx]
    diff = numerical._data - analytical._data
    # (the modulus of a complex difference as PyTorch's abs: np.abs can differ in the last bit)
    max_diff = (np.hypot(diff.real, diff.imag) if diff.dtype.kind == "c" else np.abs(diff)).max()
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed "
           "\nin fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more "
           "background \nabout fast mode. Below, we recompute numerical and analytical "
           "jacobians in slow mode:\n\n"
           f"Numerical:\n {numerical}\n"
           f"Analytical:\n{analytical}\n\n"
           f"The max per-element difference (slow mode) is: {max_diff.item()}.\n")
    if _allclose(analytical._data, numerical._data, rtol, atol):
        msg += _FAST_FAIL_SLOW_OK
    return msg


# ----------------------------------------------------------------------------- after the Jacobians
def _check_zero_grad_output(outputs, inputs, masked):
    """A zero grad_output must give zero gradients, of the inputs' dtype, device and size."""
    if not outputs:
        return
    diff_inputs = _diff_inputs(inputs)
    grads = autograd_grad(outputs, diff_inputs, [_zeros_like(o) for o in outputs],
                          allow_unused=True)
    for g, x in zip(grads, diff_inputs):
        if g is None:
            continue
        zero = _allclose(g._data, 0, 1e-05, 1e-08) if masked else not bool(g._data.any())
        if not zero:
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype != x.dtype:
            raise GradcheckError("grad is incorrect type")
        if g.device != x.device:
            raise GradcheckError("grad is incorrect device")
        if g.shape != x.shape:
            raise GradcheckError("grad is incorrect size")


class _UndefinedGrad(Function):
    """The identity, whose backward passes on no gradient at all (an undefined one)."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        return None


def _check_undefined_grad_outputs(func, outputs, inputs):
    """Backward must take undefined output gradients (all of them, then one at a time) and
    give undefined or zero input gradients."""
    diff_inputs = _diff_inputs(inputs)

    def check(backward):
        try:
            grads = backward()
        except RuntimeError as e:
            _warn_undefined_grad_check()
            raise GradcheckError("Expected backward function to handle undefined output grads. "
                                 + _UNDEFINED_NOTES) from e
        if any(g is not None and bool(g._data.any()) for g in grads):
            _warn_undefined_grad_check()
            raise GradcheckError("Expected all input grads to be undefined or zero when all "
                                 "output grads are undefined or zero. " + _UNDEFINED_NOTES)

    def backward_of(outs):
        return lambda: autograd_grad(outs, diff_inputs, [_zeros_like(o) for o in outs],
                                     allow_unused=True)

    first = _differentiable_outputs(func(*inputs))
    to_check = [[_UndefinedGrad.apply(o) for o in first]]
    if len(first) > 1:
        for k in range(len(outputs)):
            to_check.append([_UndefinedGrad.apply(o) if i == k else o
                             for i, o in enumerate(_differentiable_outputs(func(*inputs)))])
    for outs in to_check:
        check(backward_of(outs))


def _warn_undefined_grad_check():
    warnings.warn("Backwards compatibility: New undefined gradient support checking feature is "
                  "enabled by default, but it may break existing callers of this function. If "
                  "this is true for you, you can call this function with "
                  "\"check_undefined_grad=False\" to disable the feature", UserWarning,
                  stacklevel=3)


def _random_grad_output(output, noncontiguous):
    """torch.testing.make_tensor(low=-1, high=1, requires_grad=True) for gradgradcheck."""
    dtype = output.dtype if output.is_floating_point() or output.is_complex() else D.float64
    g = rand(output.shape, dtype=dtype, device=output.device) * 2 - 1
    if noncontiguous and g.numel() > 1:
        g = g.repeat_interleave(2, dim=-1)[..., ::2]
    return g.detach().requires_grad_()
