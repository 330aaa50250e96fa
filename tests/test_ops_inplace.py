"""In-place ops against torch: in-place ops on non-leaf tensors (their autograd records), the
torch.<name>_ function forms, fill functions, and Tensor-only method arguments. Each scenario
is a case where ember once differed from PyTorch 2.13. (The random in-place fills are in
test_ops_random.py.)"""
import pytest

from differential import catch, same, warnings_of
from differential import grad_fn_name as _node


# ----------------------------------------------------------------------------- in-place autograd
def _inplace_backward(T, method, *args, value=0.5):
    """Backward through `method` applied in place to a non-leaf: its node, what backward
    raises (if anything) and the leaf's gradient."""
    t = T.tensor([value, value / 2], requires_grad=True)
    u = t.clone()
    r = catch(getattr(u, method), *args)
    if isinstance(r, tuple):
        return r
    name = type(u.grad_fn).__name__
    raised = catch(lambda: (u * T.tensor([1., 3.])).sum().backward())
    return name, raised, t.grad


# every in-place pointwise op whose derivative reads its input (or result) must keep what it
# read: square_ once saved self and then overwrote it
_UNARY_INPLACE = ["square_", "sqrt_", "exp_", "exp2_", "expm1_", "sigmoid_", "tanh_",
                  "reciprocal_", "rsqrt_", "log_", "log2_", "log10_", "log1p_", "sin_", "cos_",
                  "tan_", "asin_", "acos_", "atan_", "sinh_", "cosh_", "erf_", "erfc_",
                  "erfinv_", "abs_", "neg_", "relu_", "digamma_", "lgamma_", "i0_", "sinc_",
                  "logit_", "arcsin_", "arccos_", "arctan_", "absolute_", "negative_",
                  "deg2rad_", "rad2deg_", "frac_", "trunc_", "sign_"]


@pytest.mark.parametrize("method", _UNARY_INPLACE)
def test_inplace_on_non_leaf_backward(method):
    same(lambda T: _inplace_backward(T, method), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("args", [(2,), (3.0,), (0.5,), ("tensor",)])
def test_pow_inplace_on_non_leaf_backward(args):
    same(lambda T: _inplace_backward(
        T, "pow_", *[T.tensor([2., 3.]) if a == "tensor" else a for a in args]))


# asinh_/acosh_/atanh_ record their own node, which has no derivative
@pytest.mark.parametrize("method", ["asinh_", "acosh_", "atanh_", "arcsinh_", "arccosh_",
                                    "arctanh_"])
def test_inverse_hyperbolic_inplace_not_differentiable(method):
    same(lambda T: _inplace_backward(T, method, value=1.5 if "cosh" in method else 0.5))


def _inverse_hyperbolic_functions(T):
    t = T.tensor([0.5], requires_grad=True)
    u = t * 1
    T.atanh_(u)
    u.mul_(2)
    return (type(u.grad_fn.next_functions[0][0]).__name__,
            catch(lambda: u.sum().backward()),
            T.asinh_(T.tensor([0.5 + 0.1j])), catch(lambda: T.tensor([0]).atanh_()),
            catch(lambda: T.ones(2, requires_grad=True).acosh_()),
            T.acosh_(T.tensor([2.], dtype=T.float64)))


def test_inverse_hyperbolic_inplace_values_and_errors():
    same(_inverse_hyperbolic_functions)


@pytest.mark.parametrize("dtype", ["int64", "bool", "float16", "complex64", "uint8"])
def test_square_inplace_dtypes(dtype):
    same(lambda T: catch(lambda: T.tensor([2, 3]).to(getattr(T, dtype)).square_()))


def test_square_inplace_function():
    same(lambda T: (T.square_(T.tensor([2., -3.])), type(T.square_(
        T.tensor([1.], requires_grad=True) * 1).grad_fn).__name__))


# ----------------------------------------------------------------------------- Tensor-only args
def test_no_maximum_minimum_inplace():
    same(lambda T: [hasattr(T.Tensor, n) for n in ("maximum_", "minimum_", "fmax_", "fmin_")])


_TENSOR_ONLY = ["maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or",
                "logical_xor", "logical_and_", "logical_or_", "logical_xor_", "hypot", "hypot_",
                "nextafter", "nextafter_", "ldexp", "ldexp_", "logaddexp", "logaddexp2",
                "gcd", "gcd_", "lcm", "lcm_", "atan2", "atan2_", "arctan2", "arctan2_",
                "heaviside", "heaviside_", "dist", "cross", "inner", "kron", "vdot", "matmul",
                "dot", "outer", "mm", "igamma_", "igammac_"]


@pytest.mark.parametrize("method", _TENSOR_ONLY)
@pytest.mark.parametrize("number", [2, 2.5, True])
def test_tensor_only_method_arguments(method, number):
    def scenario(T):
        x = T.tensor([1, 2]) if method.startswith(("gcd", "lcm")) else T.tensor([1., 2.])
        return catch(getattr(x, method), number)
    same(scenario)


@pytest.mark.parametrize("method", ["maximum", "hypot_", "heaviside", "logical_and_"])
def test_tensor_only_methods_still_work(method):
    def scenario(T):
        x, y = T.tensor([1., 0., 3.]), T.tensor([2., 0., 1.])
        kw = {"values": y} if method == "heaviside" else {"other": y}
        return getattr(x.clone(), method)(y), getattr(x.clone(), method)(**kw)
    same(scenario)


_INPLACE = ["abs_", "acos_", "asin_", "atan_", "arccos_", "arcsin_", "arctan_", "ceil_", "cos_",
            "cosh_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_",
            "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_",
            "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinh_", "sqrt_", "tan_",
            "tanh_", "trunc_", "zero_"]


def test_inplace_function_forms():
    def f(T):
        t = T.tensor([0.25, 0.5, 0.75], requires_grad=True)
        outs = []
        for name in _INPLACE:
            u = t.clone()
            v = getattr(T, name)(u)
            e = catch(lambda: v.sum().backward(retain_graph=True))
            outs.append((name, u, v is u, _node(u), e))
        outs += [T.acosh_(T.tensor([1.5, 2.])), T.arccosh_(T.tensor([1.5, 2.])),
                 T.atanh_(T.tensor([0.5])), T.arctanh_(T.tensor([0.5])), T.asinh_(T.tensor([0.5])),
                 T.arcsinh_(T.tensor([0.5])), T.square_(T.tensor([3.])),
                 T.clamp_(T.arange(5.), 1, 3), T.clamp_min_(T.arange(5.), 2),
                 T.clamp_max_(T.arange(5.), 2), T.clip_(T.arange(5.), max=2),
                 T.nan_to_num_(T.tensor([float("nan"), float("inf")]), nan=1.),
                 T.detach_(t.clone()).requires_grad, T.resize_as_(T.ones(2), T.ones(3, 1)).shape,
                 catch(T.sin_, T.ones(2, dtype=T.int64)),
                 catch(T.abs_, T.ones(2, requires_grad=True))]
        return outs, t.grad
    same(f)


# ----------------------------------------------------------------------------- in place, scatter
def test_inplace_functions():
    def f(T):
        a = T.ones(3)
        T.addmv_(a, T.arange(6.).reshape(3, 2), T.tensor([1., 2.]), beta=2, alpha=3)
        b = T.arange(6.)
        r = T.as_strided_(b, (2, 2), (1, 2))
        c = T.zeros(4)
        T.index_put_(c, (T.tensor([0, 2, 0]),), T.tensor([1., 2., 3.]), accumulate=True)
        return a, r is b, b, b.stride(), c
    same(f)


# ----------------------------------------------------------------------------- aliases
def test_aliases_and_in_place_forms():
    def f(T):
        x = T.tensor([1.0, -2.0, 3.0])
        y = T.tensor([2.0, 2.0, -1.0])
        a = x.clone()
        v0 = int(a._version)
        a.multiply_(y).subtract_(y)
        b = x.clone().greater_(y)
        return [x.multiply(y), x.subtract(y, alpha=2), x.divide(y, rounding_mode="floor"),
                T.divide(x, y), x.where(x > 0, y), a, int(a._version) - v0, b,
                x.clone().less_equal_(y), x.clone().not_equal_(y), x.clone().sgn_(),
                T.positive(x), T.ravel(x.view(3, 1)), T.is_nonzero(T.tensor([2])),
                T.is_same_size(x, y), T.is_signed(x), T.is_signed(T.tensor([1], dtype=T.uint8)),
                catch(T.positive, T.tensor([True])), catch(T.is_nonzero, x)]
    same(f)


def test_fill_functions():
    def f(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.fill(x, 3.0)
        z = T.zeros(3)
        T.fill_(z, 2.0)
        return [y, _node(y), x, z]
    same(f)


# ----------------------------------------------------------------------------- in place
@pytest.mark.parametrize("name", ["renorm_", "put_", "scatter_reduce_", "masked_scatter_",
                                  "i0_", "mvlgamma_"])
def test_in_place_graphs(name):
    def f(T):
        calls = {
            "renorm_": lambda t: t.renorm_(2, 0, 0.5),
            "put_": lambda t: t.put_(T.tensor([1, 5]), T.tensor([2.0, 3.0], dtype=T.float64)),
            "scatter_reduce_": lambda t: t.scatter_reduce_(
                1, T.tensor([[0, 0], [2, 1]]), T.ones(2, 2, dtype=T.float64) * 3, "amax"),
            "masked_scatter_": lambda t: t.masked_scatter_(
                T.tensor([True, False, True]), T.arange(6.0, dtype=T.float64)),
            "i0_": lambda t: t.i0_(),
            "mvlgamma_": lambda t: t.mvlgamma_(2),
        }
        call = calls[name]
        leaf = T.tensor([[1.5, 2.0, 0.7], [2.5, 1.1, 3.0]], dtype=T.float64,
                        requires_grad=True)
        y = leaf * 1
        v = int(y._version)
        out = call(y)
        out.sum().backward()
        view_base = leaf * 1
        call(view_base.view(2, 3))              # in place on a view: the base's graph
        (view_base * view_base).sum().backward()
        plain = leaf.detach().clone()
        pv = int(plain._version)
        call(plain)
        return [out is y, int(y._version) - v, _node(y), leaf.grad, _node(view_base),
                plain, int(plain._version) - pv, catch(call, leaf)]
    same(f)
