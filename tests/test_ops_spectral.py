"""Spectral ops against torch: stft, istft and the window functions: values, gradients, warnings and errors.
"""
import warnings
from differential import same, catch, warnings_of
import pytest
from differential import grad_fn_name as _node


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


# ----------------------------------------------------------------------------- signal.windows
_WINDOWS = [
    ("bartlett", {}), ("blackman", {}), ("cosine", {}), ("hamming", {}), ("hann", {}),
    ("nuttall", {}), ("kaiser", {}), ("kaiser", {"beta": 3.}), ("gaussian", {"std": 2.}),
    ("exponential", {"tau": 2.}), ("general_hamming", {"alpha": 0.6}),
    ("general_cosine", {"a": [0.5, 0.3, 0.2]})]


@pytest.mark.parametrize("name,kwargs", _WINDOWS, ids=[w[0] + str(w[1]) for w in _WINDOWS])
def test_windows_values(name, kwargs):
    def f(T):
        w = getattr(T.signal.windows, name)
        return [w(M, sym=sym, **kwargs) for M in (0, 1, 2, 5, 8) for sym in (True, False)] + [
            w(6, dtype=T.float64, **kwargs), w(4, requires_grad=True, **kwargs).requires_grad,
            catch(w, -1, **kwargs), catch(w, 3, dtype=T.int64, **kwargs),
            catch(w, 3, dtype=T.float16, **kwargs)]
    same(f)


def test_window_argument_errors():
    def f(T):
        W = T.signal.windows
        return [catch(W.exponential, 4, center=1., sym=True), W.exponential(4, center=1., sym=False),
                catch(W.exponential, 3, tau=0.), catch(W.gaussian, 3, std=0.),
                catch(W.gaussian, 3, std=-1.), catch(W.kaiser, 3, beta=-1.),
                catch(W.general_cosine, 3, a=2.), catch(W.general_cosine, 3, a=[]),
                catch(W.hann, 3, layout=T.sparse_coo) if hasattr(T, "sparse_coo") else
                ("raised", "ValueError", "general_cosine is implemented for strided tensors "
                 "only, got: torch.sparse_coo")]
    same(f)


# ----------------------------------------------------------------------------- windows
@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "bartlett_window",
                                  "blackman_window", "kaiser_window"])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(name, n, periodic):
    def f(T):
        fn = getattr(T, name)
        return [fn(n, periodic), fn(n, periodic=periodic, dtype=T.float64),
                fn(n, periodic, requires_grad=True).requires_grad]
    same(f, rtol=1e-5, atol=1e-6)


def test_window_options_and_errors():
    def f(T):
        return [T.hamming_window(6, True, 0.5, 0.3), T.kaiser_window(6, False, 5.0),
                T.hann_window(4, dtype=T.float64),
                catch(T.hann_window, 4, dtype=T.int64), catch(T.hann_window, -1)]
    same(f)
