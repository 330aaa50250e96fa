"""ember.fft vs torch.fft: values and dtypes (1-D, 2-D, N-D; every norm; n/s cropping and
zero-padding; several dims), gradients (of real losses and of complex outputs with a given
grad), node names, gradcheck / gradgradcheck verdicts, fftfreq/fftshift, and the errors."""
import numpy as np
import pytest
import torch

import ember
from differential import same, catch

_rng = np.random.default_rng(7)
X = _rng.standard_normal((4, 6))
Z = X + 1j * _rng.standard_normal((4, 6))
X3 = _rng.standard_normal((3, 4, 5))
Z3 = X3 + 1j * _rng.standard_normal((3, 4, 5))

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn",
       "irfftn", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn"}
NORMS = [None, "backward", "forward", "ortho"]
# (atol, rtol) per precision: complex64 close, complex128 tight
TOL = {"float32": (1e-4, 1e-5), "float64": (1e-11, 1e-10)}


def _resolved(x):
    """torch's lazily conjugated results materialised (ember's conj is always materialised)."""
    if isinstance(x, (list, tuple)):
        return type(x)(_resolved(v) for v in x)
    return x.resolve_conj() if isinstance(x, torch.Tensor) else x


def _inputs(name, real):
    return [X if real else Z, X3 if real else Z3]


def _check(name, arr, precision, **kwargs):
    def scenario(T):
        dtype = getattr(T, precision)
        x = T.tensor(arr.real if arr.dtype.kind == "f" else arr).to(
            dtype if arr.dtype.kind == "f" else T.complex64 if precision == "float32"
            else T.complex128).requires_grad_()
        y = getattr(T.fft, name)(x, **kwargs)
        # a real loss, and the complex output's gradient from a given grad
        loss = y.abs().sum() if y.is_complex() else (y * y).sum()
        g1, = T.autograd.grad(loss, x, retain_graph=True)
        up = T.ones_like(y) * (1 + 0.5j if y.is_complex() else 0.5)
        g2, = T.autograd.grad(y, x, up)
        return _resolved((y, g1, g2, y.grad_fn.name()))
    atol, rtol = TOL[precision]
    same(scenario, rtol=rtol, atol=atol)


@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("real", [True, False])
@pytest.mark.parametrize("name", ONE_D)
def test_one_dim_values_and_grads(name, real, norm, precision):
    if not real and name in REAL_ONLY:
        return test_real_only_rejects_complex(name)
    for arr in _inputs(name, real):
        for n in (None, 3, 9):       # as given, cropped, zero-padded
            for dim in (-1, 0, 1):
                _check(name, arr, precision, n=n, dim=dim, norm=norm)


@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("real", [True, False])
@pytest.mark.parametrize("name", N_D)
def test_n_dim_values_and_grads(name, real, norm, precision):
    if not real and name in REAL_ONLY:
        return test_real_only_rejects_complex(name)
    _check(name, X if real else Z, precision, norm=norm)
    arr = X3 if real else Z3
    _check(name, arr, precision, norm=norm)
    _check(name, arr, precision, s=(3, 7), norm=norm)                 # crop one, pad one
    _check(name, arr, precision, s=(2, 6), dim=(0, 2), norm=norm)
    _check(name, arr, precision, s=(-1, 4), dim=(2, 0), norm=norm)    # -1 keeps; any order
    if name.endswith("n"):
        _check(name, arr, precision, dim=(1,), norm=norm)
        _check(name, arr, precision, s=(6,), norm=norm)               # the last len(s) dims
        _check(name, arr, precision, dim=-2, norm=norm)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "fftn", "rfftn", "fftshift"])
def test_integer_and_bool_inputs_promote_to_default_float(name):
    def scenario(T):
        x = T.arange(12).reshape(3, 4)
        out = [getattr(T.fft, name)(x), getattr(T.fft, name)(x > 4)]
        T.set_default_dtype(T.float64)
        try:
            out.append(getattr(T.fft, name)(x))
        finally:
            T.set_default_dtype(T.float32)
        return _resolved(out)
    same(scenario)


def test_irfft_hfft_of_integer_and_real_inputs():
    same(lambda T: [T.fft.irfft(T.arange(6)), T.fft.hfft(T.arange(6.0)),
                    T.fft.irfftn(T.arange(12).reshape(3, 4), s=(3, 5))], atol=1e-5)


def test_node_chains_match_torch():
    def chain(y):
        names, fn = [], y.grad_fn
        while fn is not None:
            names.append(fn.name())
            fn = fn.next_functions[0][0] if fn.next_functions else None
        return names

    def scenario(T):
        x = T.tensor(X, requires_grad=True)
        z = T.tensor(Z, requires_grad=True)
        both = (T.fft.fft, T.fft.ifft, T.fft.irfft, T.fft.hfft, T.fft.fft2, T.fft.irfftn,
                T.fft.ifftn, lambda v: T.fft.fft(v, n=3), lambda v: T.fft.fft(v, n=9),
                lambda v: T.fft.irfft(v, n=20), lambda v: T.fft.hfft(v, n=20),
                lambda v: T.fft.fftn(v, s=(2, 8)), T.fft.fftshift, T.fft.hfftn,
                lambda v: T.fft.hfftn(v, s=(2, 7)), lambda v: T.fft.hfftn(v, dim=1))
        real_only = (T.fft.rfft, T.fft.ihfft, T.fft.rfft2, T.fft.ihfftn,
                     lambda v: T.fft.ihfftn(v, s=(2, 7)), lambda v: T.fft.ihfftn(v, dim=(1,)))
        return [chain(f(v)) for f in both for v in (x, z)] + [chain(f(x)) for f in real_only]
    same(scenario)


# the functions whose verdicts are compared, in float64 / complex128
GRADCHECKED = {
    "fft_real": (lambda T, x: T.fft.fft(x, n=5), X[:2, :4]),
    "fft_complex": (lambda T, z: T.fft.fft(z, norm="ortho"), Z[:2, :4]),
    "ifft_real": (lambda T, x: T.fft.ifft(x), X[:2, :4]),
    "rfft": (lambda T, x: T.fft.rfft(x, n=6), X[:2, :5]),
    "rfft_forward": (lambda T, x: T.fft.rfft(x, norm="forward"), X[:2, :5]),
    "irfft_even": (lambda T, z: T.fft.irfft(z, n=6), Z[:2, :4]),
    "irfft_odd": (lambda T, z: T.fft.irfft(z, n=5, norm="ortho"), Z[:2, :3]),
    "fftn": (lambda T, z: T.fft.fftn(z, s=(3, 3)), Z[:2, :4]),
    "fftn_real": (lambda T, x: T.fft.fftn(x, norm="forward"), X[:2, :3]),
    "rfftn": (lambda T, x: T.fft.rfftn(x, s=(2, 4)), X[:3, :5]),
    "irfftn": (lambda T, z: T.fft.irfftn(z, s=(2, 5)), Z[:2, :3]),
    "hfft": (lambda T, z: T.fft.hfft(z, n=7), Z[:2, :4]),
    "ihfft": (lambda T, x: T.fft.ihfft(x), X[:2, :5]),
    "hfftn": (lambda T, z: T.fft.hfftn(z, s=(3, 5), norm="ortho"), Z[:2, :4]),
    "ihfftn": (lambda T, x: T.fft.ihfftn(x, norm="forward"), X[:3, :4]),
}


@pytest.mark.parametrize("check", ["gradcheck", "gradgradcheck"])
@pytest.mark.parametrize("name", list(GRADCHECKED))
def test_gradcheck_verdicts_match_torch(name, check):
    fn, arr = GRADCHECKED[name]

    def verdict(lib):
        x = lib.tensor(arr, requires_grad=True)
        return getattr(lib.autograd, check)(lambda v: fn(lib, v), [x], raise_exception=False)
    assert verdict(torch) is True
    assert verdict(ember) is True


@pytest.mark.parametrize("name", list(GRADCHECKED))
def test_second_derivatives_match_torch(name):
    fn, arr = GRADCHECKED[name]
    up = _rng.standard_normal(64) + 1j * _rng.standard_normal(64)

    def scenario(T):
        x = T.tensor(arr, requires_grad=True)
        out = fn(T, x)
        g_out = up[:out.numel()].reshape(tuple(out.shape))
        g_out = T.tensor(g_out if out.is_complex() else g_out.real, requires_grad=True)
        g, = T.autograd.grad(out, x, g_out, create_graph=True)
        w = up[:g.numel()].reshape(tuple(g.shape))
        total = (g * T.tensor(w.conj() if g.is_complex() else w.real)).real.sum()
        second = T.autograd.grad(total, [x, g_out], allow_unused=True)
        return _resolved((out, g, second))
    same(scenario, rtol=1e-9, atol=1e-10)


def test_fftfreq_and_rfftfreq():
    def scenario(T):
        return [T.fft.fftfreq(5), T.fft.fftfreq(6, 0.1), T.fft.fftfreq(0), T.fft.fftfreq(1),
                T.fft.rfftfreq(5, d=2), T.fft.rfftfreq(8, 0.3, dtype=T.float64),
                T.fft.fftfreq(7, d=T.tensor(2.5)), T.fft.fftfreq(4, requires_grad=True),
                T.fft.fftfreq(4, requires_grad=True).requires_grad,
                catch(T.fft.fftfreq, 5, dtype=T.int64), catch(T.fft.rfftfreq, 5, dtype=T.int32),
                catch(T.fft.fftfreq, -1)]
    same(scenario, rtol=0, atol=0)


def test_fftshift_and_ifftshift():
    def scenario(T):
        x = T.arange(30).reshape(5, 6)
        v = T.tensor(X3, requires_grad=True)
        y = T.fft.ifftshift(T.fft.fftshift(v, dim=(0, 2)), dim=(0, 2))
        y.backward(T.tensor(X3))
        return [T.fft.fftshift(x), T.fft.ifftshift(x), T.fft.fftshift(x, dim=1),
                T.fft.ifftshift(x, dim=(-1,)), T.fft.fftshift(T.fft.fftfreq(7)),
                T.fft.ifftshift(T.fft.fftshift(x)), y, v.grad, y.grad_fn.name(),
                catch(T.fft.fftshift, x, dim=3)]
    same(scenario, rtol=0, atol=0)


def test_real_only_rejects_complex(name="rfft"):
    same(lambda T: catch(getattr(T.fft, name), T.tensor(Z)))


def test_errors_match_torch():
    def scenario(T):
        x = T.tensor(X)
        z = T.tensor(Z)
        return [catch(T.fft.fft, x, n=0), catch(T.fft.fft, x, n=-1),
                catch(T.fft.fft, x, dim=5), catch(T.fft.ifft, x, dim=-3),
                catch(T.fft.fft, x, norm="bad"), catch(T.fft.rfftn, x, norm="bad"),
                catch(T.fft.fft, x, n=2.0), catch(T.fft.fft, x, dim=(0,)),
                catch(T.fft.irfft, z[:, :1]), catch(T.fft.irfft, z[:, :0]),
                catch(T.fft.hfft, z[:, :1]), catch(T.fft.fft, x[:, :0]),
                catch(T.fft.fft, T.tensor(1.0)), catch(T.fft.rfft, z), catch(T.fft.ihfft, z),
                catch(T.fft.rfft2, z), catch(T.fft.rfftn, z),
                catch(T.fft.fftn, x, dim=(0, 0)), catch(T.fft.fftn, x, s=(2,), dim=(0, 1)),
                catch(T.fft.fftn, x, s=(2, 3, 4)), catch(T.fft.fftn, x, s=(0, 3)),
                catch(T.fft.fftn, x, dim=(0, 4)), catch(T.fft.fft2, T.ones(5)),
                catch(T.fft.rfftn, x, dim=()), catch(T.fft.irfftn, z, dim=()),
                catch(T.fft.hfftn, z, dim=()), catch(T.fft.ihfftn, x, dim=()),
                catch(T.fft.hfft2, z[:, :1]), catch(T.fft.ihfft2, z), catch(T.fft.ihfftn, z),
                catch(T.fft.fft, T.ones(4, dtype=T.float16)),
                catch(T.fft.rfft, T.ones(4, dtype=T.float16)),
                catch(T.fft.fft, T.ones(4, dtype=T.bfloat16)),
                T.fft.irfft(z, n=1), T.fft.hfft(z, n=1), T.fft.fftn(z, dim=()),
                T.fft.fftn(x, dim=()), T.fft.fftn(x, s=(-1, 3))]
    same(lambda T: _resolved(scenario(T)))


@pytest.mark.parametrize("fn", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("n", [None, 0, -1, 3])
@pytest.mark.parametrize("complex_input", [False, True])
def test_one_dim_fft_checks_sizes_and_dtypes_before_norm(fn, n, complex_input):
    def scenario(T):
        x = T.arange(4.0) * (1 + 1j if complex_input else 1)
        return catch(getattr(T.fft, fn), x, n=n, norm="bad")
    same(scenario)


@pytest.mark.parametrize("fn", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n", [-5, -4, -3, -2, -1, 0, 1, 2, 5])
@pytest.mark.parametrize("d", [1.0, -2.0, 0.0])
def test_frequencies_at_small_and_negative_n(fn, n, d):
    same(lambda T: catch(getattr(T.fft, fn), n, d))
    same(lambda T: catch(getattr(T.fft, fn), n, d, dtype=T.float64))
