"""torch APIs ember lacked (gradient, stft, random fills, index_reduce, igamma, ...): values,
dtypes, gradients, node names, errors."""
import warnings

import numpy as np
import pytest

from differential import same, catch, warnings_of


def _node(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


# ----------------------------------------------------------------------------- gradient
def test_gradient_values_dtypes_and_graph():
    def f(T):
        t = T.tensor([1., 4, 9, 16, 25], requires_grad=True)
        coords = T.tensor([0., 1, 1.5, 3.5, 4])
        x = T.arange(12.).reshape(3, 4) ** 2
        outs = [T.gradient(t), T.gradient(T.tensor([1, 4, 9, 16, 25])), T.gradient(t, spacing=2.),
                T.gradient(t, spacing=(coords,)), T.gradient(t, edge_order=2),
                T.gradient(t, spacing=(coords,), edge_order=2), T.gradient(x),
                T.gradient(x, dim=1), T.gradient(x, dim=(1, 0), spacing=[1., 2.]),
                T.gradient(x, spacing=T.tensor(2.)), T.gradient(x, dim=-1, edge_order=2),
                T.gradient(T.tensor([1, 2, 4], dtype=T.int32), spacing=2),
                T.gradient(T.tensor([1, 2, 4]), spacing=(T.tensor([0, 1, 3]),)),
                T.gradient(x.half(), spacing=[2, 3]), T.gradient(x.to(T.complex64), dim=1),
                T.gradient(T.tensor(3.))]
        g = T.gradient(t, spacing=(coords,), edge_order=2)[0]
        (g * T.arange(5.)).sum().backward()
        return outs, t.grad, _node(g), _node(T.gradient(t)[0])
    same(f)


def test_gradient_errors():
    def f(T):
        t = T.arange(6.).reshape(2, 3)
        return [catch(T.gradient, T.tensor([1.])), catch(T.gradient, t, edge_order=3),
                catch(T.gradient, t, dim=0, edge_order=2),
                catch(T.gradient, t, spacing=[1., 2., 3.]),
                catch(T.gradient, t, dim=1, spacing=[1., 2.]),
                catch(T.gradient, t, spacing=(T.ones(1, 2), T.arange(3.))),
                catch(T.gradient, t, dim=2), catch(T.gradient, t, dim=(0, 0)),
                catch(T.gradient, T.tensor([True, False]))]
    same(f)


# ----------------------------------------------------------------------------- stft / istft
def _signal(T):
    return T.linspace(-3, 3, 20, dtype=T.float64).sin()


def test_stft_values_and_gradients():
    def f(T):
        x = _signal(T).requires_grad_()
        w = T.hann_window(6, dtype=T.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = [T.stft(x, 8, return_complex=True),
                    T.stft(x, 8, hop_length=3, window=w, win_length=6, return_complex=True,
                           center=False),
                    T.stft(x.detach().float(), 8, return_complex=True, normalized=True,
                           onesided=False),
                    T.stft(x.reshape(2, 10), 4, return_complex=True, pad_mode="constant"),
                    T.stft(x, 8, return_complex=False), T.stft(x * (1 + 1j), 8, return_complex=True),
                    x.stft(8, window=T.ones(8, dtype=T.float64), return_complex=True)]
        s = outs[1]
        (s.abs() ** 2).sum().backward()
        return outs, x.grad, [_node(o) for o in outs]
    same(f)


def test_stft_errors_and_warnings():
    def f(T):
        x = _signal(T)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            errs = [catch(T.stft, x, 8), catch(T.stft, x, 30, center=False, return_complex=True),
                    catch(T.stft, x, 0, return_complex=True),
                    catch(T.stft, x, 8, win_length=9, return_complex=True),
                    catch(T.stft, x, 8, hop_length=0, return_complex=True),
                    catch(T.stft, T.ones(2, 2, 20), 8, return_complex=True),
                    catch(T.stft, x, 8, window=T.ones(5), return_complex=True),
                    catch(T.stft, T.arange(20), 8, return_complex=True),
                    catch(T.stft, x, 100, return_complex=True),
                    catch(T.stft, x * 1j, 8, onesided=True, return_complex=True)]
        # torch warns once per process: after a first call, later ones are silent
        w = T.ones(8, dtype=T.float64)
        warnings_of(lambda: (T.stft(x, 8, return_complex=False), T.istft(T.stft(
            x, 8, window=w, return_complex=True), 8)))
        later = warnings_of(lambda: (T.stft(x, 8, return_complex=False), T.istft(T.stft(
            x, 8, window=w, return_complex=True), 8)))[1]
        return errs, later
    same(f)


def test_istft_values_and_gradients():
    def f(T):
        x = _signal(T)
        w = T.hann_window(8, dtype=T.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = T.stft(x, 8, return_complex=True).requires_grad_()
            sw = T.stft(x, 8, window=w, return_complex=True)
            sb = T.stft(x.reshape(2, 10).float(), 4, return_complex=True, normalized=True)
            sf = T.stft(x, 8, return_complex=True, onesided=False)
            outs = [T.istft(sw, 8, window=w), T.istft(s, 8, hop_length=3),
                    T.istft(s, 8, length=25), T.istft(s, 8, length=10),
                    T.istft(sb, 4, normalized=True), T.istft(sf, 8, onesided=False),
                    T.istft(sf, 8, onesided=False, return_complex=True),
                    T.istft(s, 8, window=w[:4], win_length=4), sw.istft(8, window=w)]
            y = T.istft(s, 8, length=25)
            names = [_node(T.istft(s, 8, length=n)) for n in (25, 10, None)]
        (y * T.arange(25.)).sum().backward()
        return outs, s.grad, names
    same(f)


def test_istft_errors():
    def f(T):
        x = _signal(T)
        w = T.hann_window(8, dtype=T.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = T.stft(x, 8, return_complex=True)
            swc = T.stft(x, 8, window=w, return_complex=True, center=False)
            return [catch(T.istft, s.real, 8), catch(T.istft, s, 8, onesided=False),
                    catch(T.istft, s, 8, win_length=9), catch(T.istft, s, 8, window=T.ones(5)),
                    catch(T.istft, s[None, None], 8), catch(T.istft, s, 6),
                    catch(T.istft, s, 8, hop_length=0), catch(T.istft, s, 8, return_complex=True),
                    catch(T.istft, swc, 8, window=w, center=False),
                    catch(T.istft, swc, 8, window=w * 0)]
    same(f)


# ----------------------------------------------------------------------------- index_reduce
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_values_and_gradients(reduce, include_self):
    def f(T):
        a = T.tensor([[1., 0, 3], [2, 2, 2], [5, 1, 0]], requires_grad=True)
        b = T.tensor([[2., 0, 3], [2, 4, 1], [0, 1, 2], [1, 1, 1]], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = T.index_reduce(a, 0, T.tensor([0, 0, 2, 1]), b, reduce, include_self=include_self)
        (r * T.arange(9.).reshape(3, 3)).sum().backward()
        return r, a.grad, b.grad, _node(r)
    same(f)


def test_index_reduce_forms_and_errors():
    def f(T):
        x, s, i = T.ones(3, 4), T.arange(8.).reshape(2, 4), T.tensor([0, 2])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = [x.index_reduce(0, i, s, "prod"),
                    x.index_reduce(1, T.tensor([0, 0, 1]), T.arange(9.).reshape(3, 3), "amax"),
                    T.ones(3, dtype=T.int64).index_reduce(0, i, T.tensor([5, 7]), "mean"),
                    T.tensor(2.).index_reduce(0, T.tensor([0]), T.tensor(3.), "prod"),
                    x.clone().index_reduce_(0, i, s, "amin"),
                    x.index_reduce(0, T.tensor([0, 0], dtype=T.int32), s, "amin",
                                   include_self=False)]
            errs = [catch(f) for f in [
                lambda: x.index_reduce(0, i, s, "sum"), lambda: x.index_reduce(0, i.float(), s, "prod"),
                lambda: x.index_reduce(0, i, s.double(), "prod"),
                lambda: x.index_reduce(0, T.tensor([0, 5]), s, "prod"),
                lambda: x.index_reduce(0, i, T.ones(3, 4), "prod"),
                lambda: x.index_reduce(0, i[None], s, "prod"), lambda: x.index_reduce(2, i, s, "prod"),
                lambda: x.index_reduce(0, i, T.ones(2, 5), "prod"),
                lambda: x.index_reduce(0, T.tensor([0, -1]), s, "amin"),
                lambda: T.ones(3, requires_grad=True).index_reduce_(0, i, T.ones(2), "amin")]]
        return outs, errs
    same(f)


# ----------------------------------------------------------------------------- random fills
def test_random_fills_distribution_dtype_and_graph():
    def f(T):
        names = []
        for fill in [lambda t: t.cauchy_(), lambda t: t.log_normal_(), lambda t: t.geometric_(0.3)]:
            leaf = T.ones(50, dtype=T.float64, requires_grad=True)
            t = leaf.clone()
            fill(t)
            t.sum().backward()
            names.append((_node(t), leaf.grad))      # the draws do not depend on the input
        g = T.Generator().manual_seed(1)
        a = T.empty(20000, dtype=T.float64).log_normal_(0.5, 0.25, generator=g)
        b = T.empty(20000).geometric_(0.25)
        c = T.empty(20000).cauchy_(2., 0.5)
        stats = [a.dtype, abs(a.log().mean().item() - 0.5) < 0.02,
                 abs(a.log().std().item() - 0.25) < 0.02, b.min().item() >= 1,
                 bool((b == b.round()).all()), abs(b.mean().item() - 4) < 0.2,
                 abs(c.median().item() - 2) < 0.05, T.empty(4, dtype=T.int32).geometric_(0.5).dtype]
        return names, stats
    same(f)


def test_random_fills_errors():
    def f(T):
        x = T.empty(3)
        return [catch(f) for f in [
            lambda: x.log_normal_(1, 0), lambda: x.log_normal_(1, -1.5),
            lambda: T.empty(3, dtype=T.int64).log_normal_(), lambda: x.cauchy_(0, 0),
            lambda: x.cauchy_(0, -1), lambda: T.empty(3, dtype=T.int64).cauchy_(),
            lambda: T.empty(3, dtype=T.uint8).cauchy_(), lambda: x.geometric_(0),
            lambda: x.geometric_(1), lambda: x.geometric_(1.5),
            lambda: T.empty(3, dtype=T.bool).geometric_(0.5),
            lambda: T.empty(2, dtype=T.complex64).cauchy_(),
            lambda: T.ones(3, requires_grad=True).cauchy_(), lambda: T.ones(1).expand(3).cauchy_()]]
    same(f)


# ----------------------------------------------------------------------------- small functions
def test_range_deprecated():
    def f(T):
        r = [warnings_of(lambda: T.range(0, 4))]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r += [T.range(0, 1, 0.25), T.range(1, 4, dtype=T.int64), T.range(3, 1, -1),
                  T.range(0., 3.5), T.range(0, 4, dtype=T.float64, requires_grad=True).requires_grad,
                  catch(T.range, 0, 4, 0), catch(T.range, 0, 4, -1), catch(T.range, 4),
                  catch(T.range, 0, 4, dtype=T.int32, requires_grad=True)]
        return r
    same(f)


def test_igamma_igammac():
    def f(T):
        a = T.tensor([0.5, 1, 2.])
        b = T.tensor([1., 2, 3], requires_grad=True)
        y, z = T.igamma(a, b), T.igammac(a, b)
        (y + 2 * z).sum().backward()
        return [y, z, b.grad, a.igamma(b.detach()), a.igammac(b.detach()),
                a.clone().igamma_(T.tensor(2., dtype=T.float64)), a.clone().igammac_(b.detach()),
                _node(y), _node(z), catch(T.igamma, a, 2.), catch(a.igamma, 2.),
                catch(a.igammac_, 2), catch(T.igammac, 2., a),
                catch(T.igamma, T.tensor([1, 2]), T.tensor([1, 2])),
                catch(lambda: T.igamma(a.clone().requires_grad_(), b).sum().backward())]
    same(f)


def test_nonzero_static_adjoint_get_device():
    def f(T):
        x = T.tensor([0, 1, 0, 3])
        c = T.ones(2, 3, dtype=T.complex64) * (1 + 2j)
        return [T.nonzero_static(x, size=3),
                T.nonzero_static(T.tensor([[0, 1], [2, 3]]), size=2, fill_value=-5),
                T.nonzero_static(x, size=0), T.nonzero_static(T.tensor(5), size=2),
                T.nonzero_static(T.tensor([0., 2.]), size=1),
                x.nonzero_static(size=5, fill_value=7), catch(T.nonzero_static, x, size=-1),
                T.adjoint(c).resolve_conj(), catch(T.adjoint, T.ones(3)), T.get_device(T.ones(2))]
    same(f)


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
