"""torch's remaining top-level functions (*_copy ops, native nn entries, ..., ember.signal,
ember.version):
values, dtypes, strides, gradients and node names, errors."""
import warnings

import numpy as np
import pytest
import torch

import ember
from differential import same, catch, warnings_of


def _node(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


def _randn(T, *shape):
    """Normal float64 samples, the same in torch and ember (a seed from the shape)."""
    return T.tensor(np.random.RandomState(hash(shape) % 2 ** 32).randn(*shape))


def _geometry(t):
    return (tuple(t.shape), t.stride(), t._base is None, t.is_contiguous(), _node(t))


# ----------------------------------------------------------------------------- *_copy
_COPIES = [
    ("alias_copy", lambda T, x: T.alias_copy(x)),
    ("as_strided_copy", lambda T, x: T.as_strided_copy(x, (2, 2), (1, 2), 1)),
    ("diagonal_copy", lambda T, x: T.diagonal_copy(x, 1)),
    ("diagonal_copy_kw", lambda T, x: T.diagonal_copy(x, offset=-1, dim1=1, dim2=0)),
    ("expand_copy", lambda T, x: T.expand_copy(x[:1], (2, 3, 4))),
    ("permute_copy", lambda T, x: T.permute_copy(x, (1, 0))),
    ("select_copy", lambda T, x: T.select_copy(x, 1, -1)),
    ("slice_copy", lambda T, x: T.slice_copy(x, 1, 1, None, 2)),
    ("slice_copy_default", lambda T, x: T.slice_copy(x)),
    ("slice_copy_clamped", lambda T, x: T.slice_copy(x, 0, -2, 100)),
    ("split_copy", lambda T, x: T.split_copy(x, 3, 1)),
    ("split_with_sizes_copy", lambda T, x: T.split_with_sizes_copy(x, [1, 2])),
    ("squeeze_copy", lambda T, x: T.squeeze_copy(x[:1])),
    ("squeeze_copy_dims", lambda T, x: T.squeeze_copy(x[:1], (0, 1))),
    ("t_copy", lambda T, x: T.t_copy(x)),
    ("transpose_copy", lambda T, x: T.transpose_copy(x, 0, 1)),
    ("unbind_copy", lambda T, x: T.unbind_copy(x, 1)),
    ("unfold_copy", lambda T, x: T.unfold_copy(x, 1, 2, 1)),
    ("unsqueeze_copy", lambda T, x: T.unsqueeze_copy(x.t(), 1)),
    ("view_copy", lambda T, x: T.view_copy(x, (2, 6))),
    ("view_copy_of_transposed", lambda T, x: T.view_copy(x.t(), (12,))),
    ("view_copy_infer", lambda T, x: T.view_copy(x, [-1, 3])),
    ("narrow_copy", lambda T, x: T.narrow_copy(x, 1, 1, 2)),
    ("narrow_copy_method", lambda T, x: x.narrow_copy(0, -1, 1)),
    ("narrow_copy_tensor_start", lambda T, x: T.narrow_copy(x, 0, T.tensor(1), 2)),
    ("view_as_real_copy", lambda T, x: T.view_as_real_copy(x * (1 + 2j))),
]


@pytest.mark.parametrize("name,call", _COPIES, ids=[c[0] for c in _COPIES])
def test_copy_values_strides_gradients_and_nodes(name, call):
    def f(T):
        x = T.arange(12.).reshape(3, 4).requires_grad_()
        out = call(T, x)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        total = sum((o.abs() * T.arange(float(o.numel())).reshape(o.shape)).sum() for o in outs)
        total.backward()
        plain = call(T, x.detach())        # no graph: plain copies
        plain = list(plain) if isinstance(plain, (list, tuple)) else [plain]
        return (type(out).__name__, outs, [_geometry(o) for o in outs], x.grad,
                [_geometry(o) for o in plain])
    same(f)


def test_copies_are_fresh_memory():
    def f(T):
        x = T.arange(6.).reshape(2, 3)
        y = T.permute_copy(x, (1, 0))
        y.add_(100)
        z = T.unbind_copy(x)[0]
        z.zero_()
        return x, y.data_ptr() != x.data_ptr(), x._version
    same(f)


def test_other_copies():
    def f(T):
        x = T.arange(12.).reshape(3, 2, 2).requires_grad_()
        d = T.detach_copy(x.transpose(0, 1))
        c = T.view_as_complex_copy(x.detach())
        return (d, _geometry(d), d.requires_grad, catch(lambda: d.sum().backward()),
                c, _geometry(c), catch(T.view_as_complex_copy, x),
                T.view_copy(x.detach(), T.int32), T.view_copy(x, T.float32).requires_grad,
                _geometry(T.view_copy(x, T.float32)))
    same(f)


def test_copy_out():
    def f(T):
        x = T.arange(12.).reshape(3, 4)
        o = T.empty(0)
        r = T.permute_copy(x, (1, 0), out=o)
        outs = [T.empty(3, 2), T.empty(3, 2)]
        T.split_copy(x, 2, 1, out=outs)
        ub = [T.empty(3) for _ in range(4)]
        T.unbind_copy(x, 1, out=ub)
        n = T.empty(0)
        T.narrow_copy(x, 0, 1, 2, out=n)
        resized = warnings_of(lambda: T.t_copy(x, out=T.empty(2)))
        return (r is o, o, o.stride(), outs, ub, n, resized[0], len(resized[1]),
                catch(T.split_copy, x, 2, 1, out=[T.empty(3, 2)]),
                catch(T.unbind_copy, x, 1, out=[T.empty(3)] * 3),
                catch(T.unbind_copy, x, 1, out=[T.empty(3, dtype=T.int64)] * 4),
                catch(T.narrow_copy, x, 0, 0, 1, out=T.empty(0, dtype=T.int64)),
                catch(T.narrow_copy, x.requires_grad_(), 0, 0, 1, out=T.empty(1, 4)))
    same(f)


def test_copy_errors():
    def f(T):
        x = T.arange(12.).reshape(3, 4)
        return [catch(T.permute_copy, x, (0,)), catch(T.select_copy, x, 0, 5),
                catch(T.narrow_copy, x, 0, 3, 1), catch(T.narrow_copy, x, 0, 4, 0),
                catch(T.narrow_copy, x, 0, 0, -1), catch(T.narrow_copy, T.tensor(1.), 0, 0, 1),
                catch(T.squeeze_copy, x, 3), catch(T.view_copy, x, (5,)),
                catch(T.as_strided_copy, x, (2, 2), (1, 20)),
                catch(T.slice_copy, x, 0, 0, 2, 0), catch(T.slice_copy, x, 5),
                catch(T.t_copy, T.ones(2, 2, 2)), catch(T.split_copy, x, -1),
                catch(T.split_with_sizes_copy, x, [1, 1]), catch(T.unfold_copy, x, 1, 5, 1),
                catch(T.view_as_real_copy, T.ones(2)),
                catch(T.view_as_complex_copy, T.ones(2, 3)),
                catch(T.expand_copy, x, (2,)), catch(T.diagonal_copy, x, 0, 1, 1)]
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


def test_as_strided_scatter():
    def f(T):
        x = T.zeros(3, 4, requires_grad=True)
        src = T.arange(4.).reshape(2, 2).requires_grad_()
        y = T.as_strided_scatter(x, src, (2, 2), (1, 2), 1)
        z = x.detach().as_strided_scatter(src.detach()[0], (2,), (3,))
        (y * T.arange(12.).reshape(3, 4)).sum().backward()
        return (y, _node(y), z, x.grad, src.grad,
                catch(T.as_strided_scatter, x, T.ones(3), (2, 2), (1, 2)),
                catch(T.as_strided_scatter, x, T.ones(2, 2), (2, 2), (1, 20)))
    same(f)


# ----------------------------------------------------------------------------- native nn entries
def test_constant_pad_nd_and_convolution():
    def f(T):
        x = _randn(T, 2, 3, 5).requires_grad_()
        w = _randn(T, 4, 3, 2).requires_grad_()
        w2 = _randn(T, 2, 3, 2, 2)
        outs = [T.constant_pad_nd(x, (1, 2)), T.constant_pad_nd(x, [1, 1, -1, 0], 2.5),
                T.convolution(x, w, None, [1], [0], [1], False, [0], 1),
                T.convolution(x, w, T.ones(4, dtype=T.float64), [2], [1], [1], False, [0], 1),
                T.convolution(x, w.transpose(0, 1), None, [1], [0], [1], True, [0], 1),
                T.convolution(x.reshape(2, 3, 5, 1).expand(2, 3, 5, 3), w2, None, [1, 1],
                              [0, 0], [1, 1], False, [0, 0], 1)]
        sum(o.sum() for o in outs[:5]).backward()
        return (outs, [_node(o) for o in outs], x.grad, w.grad,
                catch(T.constant_pad_nd, x, (1,)),
                catch(T.convolution, x, w, None, 1, [0], [1], False, [0], 1),
                catch(T.convolution, x, w, None, [1], "same", [1], False, [0], 1))
    same(f)


def test_native_norms():
    def f(T):
        x = _randn(T, 2, 4, 3).requires_grad_()
        ln = T.native_layer_norm(x, (3,), None, None, 1e-5)
        ln2 = T.native_layer_norm(x, [4, 3], T.ones(4, 3, dtype=T.float64),
                                  T.zeros(4, 3, dtype=T.float64), 1e-5)
        rm, rv = T.zeros(4, dtype=T.float64), T.ones(4, dtype=T.float64)
        bn = T.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
        bn_eval = T.native_batch_norm(x, T.ones(4, dtype=T.float64), None, rm, rv, False, 0.1,
                                      1e-5)
        gn = T.native_group_norm(x, None, None, 2, 4, 3, 2, 1e-5)
        (ln[0].sum() + ln2[0].pow(2).sum() + bn[0].pow(3).sum() + bn_eval[0].sum()
         + gn[0].pow(2).sum()).backward()
        return ([type(r).__name__ for r in (ln, bn, gn)], ln, ln2, bn, bn_eval, rm, rv,
                gn[0], [_node(t) for t in ln + bn], _node(gn[0]), x.grad,
                catch(T.native_layer_norm, x, (5,), None, None, 1e-5))
    same(f)


def test_native_dropout_and_channel_shuffle():
    def f(T):
        x = T.ones(200, 50, requires_grad=True)
        out, mask = T.native_dropout(x, 0.3, True)
        out.sum().backward()
        kept = mask.float().mean().item()
        ev, ev_mask = T.native_dropout(x, 0.3, False)
        return (mask.dtype, _node(out), abs(kept - 0.7) < 0.02,
                bool((out == mask.float() / 0.7).all()), bool((x.grad == out).all()),
                ev, ev_mask, _node(ev), T.native_dropout(x, 1.0, True)[0].sum(),
                T.native_channel_shuffle(T.arange(8.).reshape(1, 4, 2), 2),
                catch(T.native_channel_shuffle, T.ones(2, 3, 4), 2))
    same(f)


def test_frobenius_and_nuclear_norm():
    def f(T):
        x = _randn(T, 2, 3, 4).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = [T.frobenius_norm(x, [0, 1]), T.frobenius_norm(x, (1,), True),
                    T.nuclear_norm(x[0]), T.nuclear_norm(x, (0, 1)), T.nuclear_norm(x[0], True),
                    T.nuclear_norm(x), T.nuclear_norm(x, (0, 2), True)]
            errs = [catch(T.frobenius_norm, x, (0, 1, 2)), catch(T.frobenius_norm, x)]
        sum(o.sum() for o in outs).backward()
        # (keepdim nuclear norms left out of the nodes: linalg.matrix_norm's keepdim node
        # differs, reported separately)
        return outs, [_node(o) for o in outs[:4] + outs[5:6]], x.grad, errs
    same(f)


def test_ctc_loss_native_arguments():
    def f(T):
        lp = _randn(T, 5, 2, 4).log_softmax(2).requires_grad_()
        tg = T.tensor([[1, 2], [1, 1]])
        outs = [T.ctc_loss(lp, tg, [5, 5], [2, 2]), T.ctc_loss(lp, tg, [5, 5], [2, 2], 0, 0),
                T.ctc_loss(lp, tg, T.tensor([5, 4]), T.tensor([2, 1]), 0, 2),
                T.ctc_loss(lp, tg, [5, 5], [2, 2], 3, 1, True)]
        sum(o.sum() for o in outs).backward()
        return outs, [_node(o) for o in outs], lp.grad
    same(f)


# ----------------------------------------------------------------------------- binomial
def test_binomial_distribution():
    def f(T):
        T.manual_seed(0)
        count = T.full((20000,), 10.)
        prob = T.full((20000,), 0.3)
        s = T.binomial(count, prob)
        edge = T.binomial(T.tensor([10., 5., 3.], dtype=T.float64),
                          T.tensor([1., 0., 1.5], dtype=T.float64))
        return (s.dtype, s.shape, abs(s.mean().item() - 3.0) < 0.05,
                abs(s.var().item() - 2.1) < 0.1, bool((s == s.round()).all()),
                bool(((s >= 0) & (s <= 10)).all()), edge,
                T.binomial(T.tensor([4.]), T.tensor([.5]), generator=T.Generator()).shape)
    same(f)


def test_binomial_errors_and_graph():
    def f(T):
        r = T.binomial(T.tensor([10.], requires_grad=True), T.tensor([.5]))
        return (r.requires_grad, _node(r), catch(lambda: r.sum().backward()),
                catch(T.binomial, T.tensor([10, 5]), T.tensor([.5, .2])),
                catch(T.binomial, T.tensor([10.]), T.tensor([.5], dtype=T.float64)),
                catch(T.binomial, T.tensor([1.], dtype=T.half), T.tensor([.5], dtype=T.half)))
    same(f)


# ----------------------------------------------------------------------------- histogramdd
def test_histogramdd():
    def f(T):
        x = T.tensor([[0., 1], [1, 1], [2, 0.5], [0.2, 0.9]])
        return [T.histogramdd(x, bins=[2, 2]), T.histogramdd(x, 2, range=[0., 2, 0, 1],
                                                              density=True),
                T.histogramdd(x, [T.tensor([0., 1, 2]), T.tensor([0., .5, 1])],
                              weight=T.tensor([1., 2, 3, 4])),
                T.histogramdd(x.double(), [3, 1], range=[0., 1, 0, 2]),
                catch(T.histogramdd, x, [2]), catch(T.histogramdd, x.long(), 2)]
    same(f)


# ----------------------------------------------------------------------------- low rank
def test_svd_lowrank_full_rank_is_exact():
    def f(T):
        A = _randn(T, 6, 4)
        U, S, V = T.svd_lowrank(A, q=4)
        Ut, St, Vt = T.svd_lowrank(A.t(), q=4)
        P = T.pca_lowrank(A, q=4)
        centered = A - A.mean(0)
        return (S, St, (U @ T.diag(S) @ V.t() - A).abs().max().item() < 1e-10,
                (U.t() @ U - T.eye(4, dtype=T.float64)).abs().max().item() < 1e-10,
                (Ut @ T.diag(St) @ Vt.t() - A.t()).abs().max().item() < 1e-10,
                [t.shape for t in (U, S, V, Ut, Vt)], P[1],
                (P[0] @ T.diag(P[1]) @ P[2].t() - centered).abs().max().item() < 1e-10,
                T.linalg.svdvals(centered))
    same(f)


def test_svd_lowrank_low_rank_approximation():
    def f(T):
        A = _randn(T, 50, 3) @ _randn(T, 3, 40)
        U, S, V = T.svd_lowrank(A, q=5, niter=3)
        U2, S2, V2 = T.pca_lowrank(A, center=False)
        return ([t.shape for t in (U, S, V, U2, S2, V2)], S[:3],
                (U @ T.diag(S) @ V.t() - A).norm().item() / A.norm().item() < 1e-8,
                catch(T.pca_lowrank, A, q=100), catch(T.pca_lowrank, A, niter=-1))
    same(f, rtol=1e-6)


# ----------------------------------------------------------------------------- creation, runtime
def test_empty_permuted():
    def f(T):
        a = T.empty_permuted((2, 3, 4), (0, 2, 1))
        b = T.empty_permuted((2, 3), (1, 0), dtype=T.int64, requires_grad=False)
        return (a.shape, a.stride(), a.dtype, b.stride(), b.dtype,
                T.empty_permuted([2, 3], [0, 1], requires_grad=True).requires_grad,
                catch(T.empty_permuted, (2, 3), (0,)))
    same(f)


def test_runtime_settings():
    def f(T):
        return (T.set_flush_denormal(False), T.init_num_threads(),
                type(T.get_num_interop_threads()).__name__,
                catch(T.set_num_interop_threads, 0), catch(T.set_num_interop_threads, "a"),
                catch(T.set_num_interop_threads, True),
                T.is_storage(T.ones(2).untyped_storage()), T.is_storage(T.ones(2)),
                T.is_storage(3))
    same(f)
    assert ember.get_num_interop_threads() == torch.get_num_interop_threads()


def test_set_num_interop_threads_once():
    # (run in ember only: torch's setting cannot be undone within the process)
    ember.ops.settings._interop_threads[0] = None
    try:
        assert ember.set_num_interop_threads(3) is None
        assert ember.get_num_interop_threads() == 3
        with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
            ember.set_num_interop_threads(2)
    finally:
        ember.ops.settings._interop_threads[0] = None


def test_dlpack_round_trips():
    t = torch.arange(6.).reshape(2, 3)
    e = ember.from_dlpack(t)
    assert e.dtype is ember.float32 and e.tolist() == t.tolist()
    t.add_(1)                                   # shares torch's memory
    assert e.tolist() == t.tolist()
    e2 = ember.arange(4, dtype=ember.int64)
    back = torch.from_dlpack(e2)
    assert back.dtype == torch.int64 and back.tolist() == [0, 1, 2, 3]
    e2.add_(5)
    assert back.tolist() == [5, 6, 7, 8]
    caps = ember.to_dlpack(ember.tensor([1., 2.]))
    assert torch.from_dlpack(caps).tolist() == [1., 2.]
    assert ember.from_dlpack(torch.to_dlpack(torch.tensor([3, 4]))).tolist() == [3, 4]
    assert ember.from_dlpack(np.array([True, False])).dtype is ember.bool
    assert type(ember.to_dlpack(ember.ones(1))).__name__ == type(torch.to_dlpack(
        torch.ones(1))).__name__


def test_version_module():
    v = ember.version
    assert (v.cuda, v.hip, v.debug) == (torch.version.cuda, torch.version.hip,
                                        torch.version.debug)
    assert isinstance(v.git_version, str) and v.__version__ == ember.__version__
    assert type(v.__version__).__name__ == "TorchVersion"
    for T in (torch.torch_version.TorchVersion, ember.torch_version.TorchVersion):
        assert [T("2.10.0") > "2.9", T("2.1.0+cpu") >= (2, 1), T("2.1") == "2.1.0",
                T("1.13") < "2.0", T("2.0.0") <= (2,)] == [True, True, True, True, True]


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


def test_the_package_version_is_a_torch_version():
    def scenario(T):
        v = T.__version__
        return type(v).__name__, v >= (0, 1), v > "0.0.9", str(v) == v
    same(scenario)
