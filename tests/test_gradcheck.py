"""autograd.gradcheck and gradgradcheck against torch's: defaults, results, exception types,
warnings and failure messages word for word (slow and fast mode)."""
import importlib
import inspect
import re

import torch

import ember
from differential import same, catch, warnings_of
import numpy as np
import pytest


def checked(call):
    """What a gradcheck call observes: its result or exception, and the warnings it gave."""
    result, warned = warnings_of(lambda: catch(call))
    if isinstance(result, tuple):
        result = result[:2] + (_rounded(result[2]),)
    return result, warned


def _rounded(message):
    """Fast mode prints its numbers in full (slow mode prints 4 decimals): those are compared to
    8 significant digits. torch's BLAS and reductions add in another order than NumPy, and the
    finite differences magnify a last-bit difference in a kernel (abs...) by 1 / eps."""
    return re.sub(r"-?\d+\.\d{10,}(?:e-?\d+)?", lambda m: f"{float(m.group()):.8g}", message)


def functions(T):
    """Custom Functions with deliberately wrong or odd backwards, for module T."""
    F = T.autograd.Function

    class TwoOutputs(F):           # right for the first output, wrong for the second
        @staticmethod
        def forward(ctx, a):
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g, h):
            return g * 2 + h * 4

    class TwoInputs(F):            # a * b, whose gradient w.r.t. b is wrong
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g

    class NotReentrant(F):         # each backward differs a little from the last
        calls = 0

        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            NotReentrant.calls += 1
            return g * 2 + NotReentrant.calls * 1e-9

    class FailsOnUndefined(F):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            if g is None:
                raise RuntimeError("no gradient")
            return g * 2

    class OnesForUndefined(F):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return T.ones(2, dtype=T.float64) if g is None else g * 2

    class HandlesUndefined(F):     # two outputs, each gradient possibly None
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g, h):
            if g is None and h is None:
                return None
            if g is None:
                return h * 3
            if h is None:
                return g * 2
            return g * 2 + h * 3

    class WrongShape(F):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return T.cat([g * 2, g[:1]])

    class WrongRank(F):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).reshape(2, 1)

    class WrongDtype(F):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).float()

    class Cube(F):                 # a ** 3, with a wrong second derivative
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 3

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return CubeBackward.apply(g, a)

    class CubeBackward(F):
        @staticmethod
        def forward(ctx, g, a):
            ctx.save_for_backward(g, a)
            return g * 3 * a * a

        @staticmethod
        def backward(ctx, gg):
            g, a = ctx.saved_tensors
            return gg * 3 * a * a, gg * g * 5 * a      # 6 is right

    class NearlyRight(F):          # 100 (x0 - x2), off by 9e-4 relative in one element
        @staticmethod
        def forward(ctx, a):
            return (a * T.tensor([100.0, 0, -100, 0], dtype=T.float64)).sum()

        @staticmethod
        def backward(ctx, g):
            return g * T.tensor([100.09, 0, -100, 0], dtype=T.float64)

    class AbsWrong(F):             # |z|, whose backward forgets to divide by |z|
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z.abs()

        @staticmethod
        def backward(ctx, g):
            z, = ctx.saved_tensors
            return g * z

    class TimesWrong(F):           # z * (1 + 2i), whose backward forgets the conjugate
        @staticmethod
        def forward(ctx, z):
            return z * (1 + 2j)

        @staticmethod
        def backward(ctx, g):
            return g * (1 + 2j)

    return {name: cls for name, cls in locals().items() if isinstance(cls, type)}


def x64(T, values=(0.3, -0.7)):
    return T.tensor(list(values), dtype=T.float64, requires_grad=True)


# ----------------------------------------------------------------------------- the API
def test_defaults_and_signatures_are_torchs():
    for name in ("gradcheck", "gradgradcheck"):
        t = inspect.signature(getattr(torch.autograd, name)).parameters
        e = inspect.signature(getattr(ember.autograd, name)).parameters
        assert list(e) == list(t), name
        for p in t:
            assert (e[p].default, e[p].kind) == (t[p].default, t[p].kind), (name, p)


def test_gradcheck_error_is_a_runtime_error_in_the_gradcheck_module():
    def scenario(T):
        module = importlib.import_module(T.__name__ + ".autograd.gradcheck")
        err = module.GradcheckError
        x = x64(T)
        try:
            T.autograd.gradcheck(functions(T)["TwoOutputs"].apply, (x,))
        except RuntimeError as e:
            caught = e
        return [err.__name__, issubclass(err, RuntimeError), type(caught) is err,
                type(caught).__module__]
    same(scenario)


def test_passing_checks_return_true():
    def scenario(T):
        x, y = x64(T), x64(T, (1.1, 0.4))
        m = T.tensor([[0.5, -1.2, 2.0], [0.3, 0.9, -0.4]], dtype=T.float64).t().requires_grad_()
        c = T.tensor([2.0, 3.0], dtype=T.float64)          # does not require grad

        def f(a, b):
            return (a * b.exp()).sin()
        return [T.autograd.gradcheck(f, (x, y)), T.autograd.gradcheck(f, (x, y), fast_mode=True),
                T.autograd.gradcheck(lambda a, b: (a * b, a.sum()), [x, c]),
                T.autograd.gradcheck(lambda a: (a @ a.t()).tanh(), m),
                T.autograd.gradcheck(lambda a: (a @ a.t()).tanh(), m, fast_mode=True),
                T.autograd.gradcheck(lambda a: a, (x,)),
                T.autograd.gradcheck(lambda a: a.argmax(), (x,)),
                T.autograd.gradcheck(lambda a: a.max(0), (x,)),
                T.autograd.gradgradcheck(f, (x, y)),
                T.autograd.gradgradcheck(f, (x, y), fast_mode=True),
                T.autograd.gradgradcheck(f, (x, y), gen_non_contig_grad_outputs=True)]
    assert same(scenario) == [True] * 11


# ----------------------------------------------------------------------------- mismatches
def test_jacobian_mismatch_names_the_failing_output_and_input():
    def scenario(T):
        fns = functions(T)
        x, y = x64(T), x64(T, (1.5, 2.0))
        return [checked(lambda: T.autograd.gradcheck(fns["TwoOutputs"].apply, (x,))),
                checked(lambda: T.autograd.gradcheck(fns["TwoOutputs"].apply, (x,),
                                                     raise_exception=False)),
                checked(lambda: T.autograd.gradcheck(fns["TwoInputs"].apply, (x, y))),
                # the index counts the inputs that require grad
                checked(lambda: T.autograd.gradcheck(fns["TwoInputs"].apply, (x.detach(), y))),
                checked(lambda: T.autograd.gradcheck(fns["TwoOutputs"].apply, (x,),
                                                     atol=2.0, rtol=0.0))]
    result = same(scenario)
    assert result[0][0][2].startswith("Jacobian mismatch for output 1 with respect to input 0,")
    assert result[1][0] is False


def test_jacobian_mismatch_of_a_transposed_input_and_a_matrix_output():
    def scenario(T):
        fns = functions(T)
        m = T.tensor([[0.5, -1.2], [0.3, 0.9], [2.0, -0.4]], dtype=T.float64)
        m = m.t().requires_grad_()
        return checked(lambda: T.autograd.gradcheck(lambda a: fns["TwoOutputs"].apply(a)[::-1],
                                                    (m,)))
    same(scenario)


def test_non_double_inputs_warn_and_print_their_dtype():
    def scenario(T):
        x = T.tensor([0.3, -0.7], requires_grad=True)
        h = T.tensor([0.5], dtype=T.float64, requires_grad=True)
        # (functions exact in float32: the finite differences then agree to the last bit)
        return [checked(lambda: T.autograd.gradcheck(lambda a: a * 2, (x,))),
                checked(lambda: T.autograd.gradcheck(lambda a, b: a * 2 + b, (h, x))),
                checked(lambda: T.autograd.gradcheck(lambda a: a * 2, (x,), fast_mode=True))]
    same(scenario)


def test_inputs_that_do_not_require_grad_or_overlap_are_refused_even_without_raising():
    def scenario(T):
        x = T.tensor([0.3, -0.7], dtype=T.float64)
        expanded = T.tensor([1.0], dtype=T.float64).expand(3).requires_grad_()
        return [checked(lambda: T.autograd.gradcheck(lambda a: a * 2, (x,))),
                checked(lambda: T.autograd.gradcheck(lambda a: a * 2, (x,),
                                                     raise_exception=False)),
                checked(lambda: T.autograd.gradcheck(lambda a: a * 2, (expanded,),
                                                     raise_exception=False)),
                checked(lambda: T.autograd.gradgradcheck(lambda a: a * 2, (x,), (x,)))]
    same(scenario)


def test_backward_that_is_not_reentrant_or_ignores_grad_output():
    def scenario(T):
        fn = functions(T)["NotReentrant"]
        x = x64(T)
        return [checked(lambda: T.autograd.gradcheck(fn.apply, (x,))),
                checked(lambda: T.autograd.gradcheck(fn.apply, (x,), raise_exception=False)),
                checked(lambda: T.autograd.gradcheck(fn.apply, (x,), fast_mode=True)),
                # tolerated nondeterminism: then a zero grad_output must give zero
                checked(lambda: T.autograd.gradcheck(fn.apply, (x,), nondet_tol=1e-6))]
    same(scenario)


def test_undefined_output_gradients():
    def scenario(T):
        fns = functions(T)
        x = x64(T)
        return [checked(lambda: T.autograd.gradcheck(fns["FailsOnUndefined"].apply, (x,))),
                checked(lambda: T.autograd.gradcheck(fns["FailsOnUndefined"].apply, (x,),
                                                     raise_exception=False)),
                checked(lambda: T.autograd.gradcheck(fns["OnesForUndefined"].apply, (x,))),
                checked(lambda: T.autograd.gradcheck(fns["OnesForUndefined"].apply, (x,),
                                                     check_undefined_grad=False)),
                checked(lambda: T.autograd.gradcheck(fns["HandlesUndefined"].apply, (x,))),
                checked(lambda: T.autograd.gradcheck(
                    lambda a: fns["FailsOnUndefined"].apply(a).exp(), (x,)))]
    result = same(scenario)
    assert result[0][1] and "Backwards compatibility" in result[0][1][0]


def test_gradients_of_the_wrong_shape_or_dtype():
    def scenario(T):
        fns = functions(T)
        x = x64(T)
        return [checked(lambda: T.autograd.gradcheck(fns["WrongShape"].apply, (x,))),
                checked(lambda: T.autograd.gradcheck(fns["WrongRank"].apply, (x,),
                                                     raise_exception=False)),
                # a gradient of another dtype is cast to the input's by the engine
                checked(lambda: T.autograd.gradcheck(fns["WrongDtype"].apply, (x,))),
                checked(lambda: T.autograd.gradcheck(fns["WrongDtype"].apply, (x,),
                                                     check_grad_dtypes=True))]
    same(scenario)


def test_outputs_that_change_shape_or_dtype_when_an_input_moves():
    def scenario(T):
        x = x64(T, (0.3, 0.5, -0.2))
        return [checked(lambda: T.autograd.gradcheck(lambda a: a[a > 0.5] * 2, (x,))),
                checked(lambda: T.autograd.gradcheck(
                    lambda a: a * 2 if a[1] > 0.5 else (a * 2).float(), (x,)))]
    same(scenario)


def test_functions_without_differentiable_outputs():
    def scenario(T):
        x = x64(T)
        return [checked(lambda: T.autograd.gradcheck(lambda a: a.detach() * 2, (x,))),
                checked(lambda: T.autograd.gradcheck(lambda a: a.detach() * 2, (x,),
                                                     fast_mode=True)),
                checked(lambda: T.autograd.gradcheck(lambda a: a.detach() * 0, (x,)))]
    same(scenario)


# ----------------------------------------------------------------------------- fast mode
def test_fast_mode_mismatch_reports_torchs_numbers_and_the_slow_jacobians():
    def scenario(T):
        fns = functions(T)
        x, y = x64(T), x64(T, (1.5, 2.0))
        m = T.tensor([[0.5, -1.2, 2.0], [0.3, 0.9, -0.4]], dtype=T.float64, requires_grad=True)
        return [checked(lambda: T.autograd.gradcheck(fns["TwoOutputs"].apply, (x,),
                                                     fast_mode=True)),
                checked(lambda: T.autograd.gradcheck(fns["TwoInputs"].apply, (x, y),
                                                     fast_mode=True)),
                checked(lambda: T.autograd.gradcheck(fns["TwoOutputs"].apply, (m,),
                                                     fast_mode=True)),
                checked(lambda: T.autograd.gradcheck(fns["TwoOutputs"].apply, (x,),
                                                     fast_mode=True, raise_exception=False))]
    result = same(scenario)
    assert "in fast mode" in result[0][0][2]


def test_fast_mode_failure_that_slow_mode_would_pass_says_so():
    def scenario(T):
        x = x64(T, (0.1, 0.2, 0.3, 0.4))
        return checked(lambda: T.autograd.gradcheck(functions(T)["NearlyRight"].apply, (x,),
                                                    fast_mode=True))
    result = same(scenario)
    assert "Fast gradcheck failed but element-wise differences are small" in result[0][2]


def test_fast_mode_with_float_default_dtype_float64():
    def scenario(T):
        previous = T.get_default_dtype()
        T.set_default_dtype(T.float64)
        try:
            return checked(lambda: T.autograd.gradcheck(functions(T)["TwoOutputs"].apply,
                                                        (x64(T),), fast_mode=True))
        finally:
            T.set_default_dtype(previous)
    same(scenario)


# ----------------------------------------------------------------------------- complex
def test_complex_inputs():
    def scenario(T):
        z = T.tensor([0.3 + 0.2j, -0.7 + 1.1j], dtype=T.complex128, requires_grad=True)
        wrong = functions(T)["AbsWrong"].apply
        return [T.autograd.gradcheck(lambda a: a.abs() * 3, (z,)),
                T.autograd.gradcheck(lambda a: a.abs() * 3, (z,), fast_mode=True),
                T.autograd.gradcheck(lambda a: a.angle(), (z,)),
                checked(lambda: T.autograd.gradcheck(wrong, (z,))),
                checked(lambda: T.autograd.gradcheck(wrong, (z,), fast_mode=True))]
    assert same(scenario)[:3] == [True] * 3


def test_complex_outputs_are_checked_as_imaginary_then_real_part():
    def scenario(T):
        z = T.tensor([0.3 + 0.2j, -0.7 + 1.1j], dtype=T.complex128, requires_grad=True)
        x = x64(T)
        wrong = functions(T)["TimesWrong"].apply
        return [T.autograd.gradcheck(lambda a: (a * 2j).exp(), (z,)),
                T.autograd.gradcheck(lambda a: (a * 2j).exp(), (z,), fast_mode=True),
                T.autograd.gradcheck(lambda a: (a * (1 + 1j), a * 2), (x,)),
                checked(lambda: T.autograd.gradcheck(wrong, (z,))),
                checked(lambda: T.autograd.gradcheck(wrong, (z,), fast_mode=True)),
                checked(lambda: T.autograd.gradcheck(lambda a: (a * 2, wrong(a)), (z,)))]
    result = same(scenario)
    assert result[3][0][2].startswith("While considering the imaginary part of complex outputs "
                                      "only, Jacobian mismatch for output 0")


# ----------------------------------------------------------------------------- gradgradcheck
def test_gradgradcheck_failures():
    def scenario(T):
        cube = functions(T)["Cube"].apply
        x = x64(T)
        go = T.tensor([0.5, -1.0], dtype=T.float64, requires_grad=True)
        return [checked(lambda: T.autograd.gradgradcheck(cube, (x,), (go,))),
                checked(lambda: T.autograd.gradgradcheck(cube, (x,), (go,), fast_mode=True)),
                checked(lambda: T.autograd.gradgradcheck(cube, (x,), (go,),
                                                         raise_exception=False)),
                checked(lambda: T.autograd.gradgradcheck(lambda a: a.sin() * 2, (x,), (go,))),
                checked(lambda: T.autograd.gradgradcheck(cube, (x,), check_rev_over_rev=False)),
                checked(lambda: T.autograd.gradcheck(cube, (x,), check_backward_ad=False))]
    same(scenario)


# ----------------------------------------------------------------------------- gradcheck
def _rand(*shape, positive=False, seed=0):
    values = np.random.default_rng(seed).standard_normal(shape)
    if positive:
        values = np.abs(values) + 0.5
    return ember.tensor(values, dtype=ember.float64, requires_grad=True)


_INDEX = ember.tensor([[0, 1, 0, 2], [1, 1, 0, 0]])


_MASK = ember.tensor([[True, False, True], [False, True, False]])


_GRADCHECK_CASES = {
    "i0": (lambda x: ember.i0(x), [(5,)]),
    "polar": (lambda r, a: ember.view_as_real(ember.polar(r, a)), [(4,), (4,)]),
    "complex": (lambda r, i: ember.view_as_real(ember.complex(r, i)), [(4,), (4,)]),
    "vdot": (lambda a, b: ember.vdot(a, b), [(4,), (4,)]),
    "frexp": (lambda x: ember.frexp(x).mantissa, [(5,)]),
    "renorm2": (lambda x: ember.renorm(x, 2, 0, 0.8), [(3, 4)]),
    "renorm3": (lambda x: ember.renorm(x, 3, 1, 0.8), [(3, 4)]),
    "put": (lambda x, s: ember.put(x, ember.tensor([0, 4, -1]), s), [(2, 3), (3,)]),
    "put_acc": (lambda x, s: ember.put(x, ember.tensor([0, 4, 4]), s, True), [(2, 3), (3,)]),
    "masked_scatter": (lambda x, s: ember.masked_scatter(x, _MASK, s), [(2, 3), (5,)]),
    "scatter_sum": (lambda x, s: x.scatter_reduce(0, _INDEX, s, "sum"), [(3, 4), (2, 4)]),
    "scatter_mean": (lambda x, s: x.scatter_reduce(0, _INDEX, s, "mean", include_self=False),
                     [(3, 4), (2, 4)]),
    "scatter_amax": (lambda x, s: x.scatter_reduce(0, _INDEX, s, "amax"), [(3, 4), (2, 4)]),
    "scatter_prod": (lambda x, s: x.scatter_reduce(0, _INDEX, s, "prod"), [(3, 4), (2, 4)]),
    "select_scatter": (lambda x, s: ember.select_scatter(x, s, 1, -1), [(3, 4), (3,)]),
    "slice_scatter": (lambda x, s: ember.slice_scatter(x, s, 1, 0, 4, 2), [(3, 4), (3, 2)]),
    "diagonal_scatter": (lambda x, s: ember.diagonal_scatter(x, s, 1), [(3, 4), (3,)]),
    "mvlgamma": (lambda x: ember.mvlgamma(x, 3), [(4,)]),
    "unsafe_split": (lambda x: ember.unsafe_split(x, 2)[1] * 2, [(5,)]),
    "trapezoid": (lambda y, x: ember.trapezoid(y, x), [(2, 4), (4,)]),
    "cumulative_trapezoid": (lambda y: ember.cumulative_trapezoid(y, dx=0.3), [(2, 4)]),
}


@pytest.mark.parametrize("name", sorted(_GRADCHECK_CASES))
def test_gradcheck_and_gradgradcheck(name):
    fn, shapes = _GRADCHECK_CASES[name]
    # (polar: torch's gradient for a negative abs is not the derivative, by its definition)
    positive = name in ("mvlgamma", "scatter_prod", "polar")
    inputs = [_rand(*s, positive=positive, seed=k) for k, s in enumerate(shapes)]
    if name == "mvlgamma":
        inputs = [(x.detach() + 1.5).requires_grad_() for x in inputs]
    assert ember.autograd.gradcheck(fn, inputs)
    assert ember.autograd.gradgradcheck(fn, inputs)
