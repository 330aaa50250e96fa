"""torch.lobpcg against torch: the signature and defaults, the eigenvalues (largest and
smallest, ortho and basic, with B, X, iK, batches, float32 with torch's random start), the
eigenvectors (up to sign), the gradient through A (and torch's error for one through B), the
tracker's view of the iteration, and the errors."""
import inspect

import numpy as np
import pytest
import torch

import ember
from differential import catch, same


def _spd(m, seed=0, spectrum=None):
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((m, m)))[0]
    values = np.arange(1, m + 1, dtype=float) if spectrum is None else np.asarray(spectrum)
    return (Q * values) @ Q.T


def _start(m, n, seed=1):
    return np.random.default_rng(seed).standard_normal((m, n))


def _aligned(T, X):
    """Eigenvectors with a fixed sign (largest-magnitude entry positive): torch's and ember's
    iterations may end on either sign."""
    V = X.numpy()
    idx = np.abs(V).argmax(axis=-2)
    signs = np.sign(np.take_along_axis(V, idx[..., None, :], axis=-2))
    return T.tensor(V * signs)


def test_signature_matches_torch():
    ours = inspect.signature(ember.lobpcg).parameters
    theirs = inspect.signature(torch.lobpcg).parameters
    assert list(ours) == list(theirs)
    assert [p.default for p in ours.values()] == [p.default for p in theirs.values()]


@pytest.mark.parametrize("kwargs", [
    dict(k=2), dict(k=2, largest=False), dict(k=3, method="basic"),
    dict(k=2, largest=False, method="basic"), dict(k=1), dict(k=4, tol=1e-10),
    dict(k=2, niter=-1), dict(k=2, method="another name"),
])
def test_eigenpairs(kwargs):
    A0 = _spd(15)
    X0 = _start(15, kwargs["k"])

    def f(T):
        E, X = T.lobpcg(T.tensor(A0), X=T.tensor(X0), **kwargs)
        return [E, _aligned(T, X), E.dtype, X.shape]
    same(f, rtol=1e-6, atol=1e-6)


def test_n_extra_columns_and_the_default_k():
    A0 = _spd(18, seed=3)
    X0 = _start(18, 4)

    def f(T):
        E, X = T.lobpcg(T.tensor(A0), X=T.tensor(X0))          # k: X's columns
        E2, X2 = T.lobpcg(T.tensor(A0), k=2, X=T.tensor(X0))   # two of four columns
        return [E, E2, X.shape, X2.shape, _aligned(T, X2)]
    same(f, rtol=1e-6, atol=1e-6)


def test_generalized_problem_with_B():
    A0 = _spd(14, seed=4)
    rng = np.random.default_rng(5)
    M = rng.standard_normal((14, 14))
    B0 = M @ M.T / 14 + np.eye(14)
    X0 = _start(14, 2)

    def f(T):
        out = []
        for largest in (True, False):
            E, X = T.lobpcg(T.tensor(A0), k=2, B=T.tensor(B0), X=T.tensor(X0), largest=largest)
            out += [E, _aligned(T, X)]
        return out
    same(f, rtol=1e-5, atol=1e-6)


def test_preconditioner():
    A0 = _spd(16, seed=6, spectrum=np.linspace(1, 50, 16))
    iK0 = np.linalg.inv(A0 + np.eye(16))
    X0 = _start(16, 2)
    same(lambda T: T.lobpcg(T.tensor(A0), k=2, X=T.tensor(X0), iK=T.tensor(iK0),
                            largest=False)[0], rtol=1e-6)


def test_batch():
    A0 = np.stack([_spd(12, seed=s) * (s + 1) for s in range(3)])
    X0 = np.stack([_start(12, 2, seed=s) for s in range(3)])

    def f(T):
        E, X = T.lobpcg(T.tensor(A0), k=2, X=T.tensor(X0))
        return [E, _aligned(T, X), X.shape]
    same(f, rtol=1e-6, atol=1e-6)


def test_float32_with_the_random_start():
    A0 = _spd(20, seed=7).astype(np.float32)

    def f(T):
        T.manual_seed(0)
        E, X = T.lobpcg(T.tensor(A0), k=3)
        return [E, E.dtype, X.dtype, X.shape]
    same(f, rtol=1e-3)


@pytest.mark.parametrize("largest", [True, False])
def test_gradient_through_A(largest):
    A0 = _spd(12, seed=8, spectrum=np.arange(1, 13) ** 1.3)
    X0 = _start(12, 2)
    W = np.random.default_rng(9).standard_normal((12, 2))

    def f(T):
        A = T.tensor(A0, requires_grad=True)
        E, X = T.lobpcg(A, k=2, X=T.tensor(X0), largest=largest)
        # the eigenvectors' sign is free: the loss reads them through X X^T
        loss = (E * T.tensor([1.0, -2.0], dtype=T.float64)).sum() + \
            ((X @ X.mT) * T.tensor(W @ W.T)).sum()
        loss.backward()
        return [A.grad, type(E.grad_fn).__name__, type(X.grad_fn).__name__]
    # (the eigenvectors are as exact as the iteration's tolerance, about 1e-8)
    same(f, rtol=1e-5, atol=1e-6)


def test_gradient_of_the_eigenvalues_alone_is_symmetric():
    A0 = _spd(10, seed=10)

    def f(T):
        A = T.tensor(A0, requires_grad=True)
        E, _ = T.lobpcg(A, k=2, X=T.tensor(_start(10, 2)))
        E.sum().backward()
        return [A.grad, T.allclose(A.grad, A.grad.mT)]
    same(f, rtol=1e-6, atol=1e-8)


def test_no_gradient_through_a_B():
    A0 = _spd(10, seed=11)

    def f(T):
        A = T.tensor(A0, requires_grad=True)
        E, _ = T.lobpcg(A, k=2, B=T.eye(10, dtype=T.float64) * 2, X=T.tensor(_start(10, 2)))
        return catch(lambda: E.sum().backward())
    same(f)


def test_tracker_sees_the_iteration():
    A0 = _spd(15, seed=12)
    X0 = _start(15, 2)

    def f(T):
        steps = []

        def tracker(worker):
            steps.append((worker.ivars["istep"], worker.ivars["converged_count"],
                          worker.ivars["iterations_left"], tuple(worker.X.shape),
                          tuple(worker.E.shape), tuple(worker.tvars["rerr"].shape)))
        T.lobpcg(T.tensor(A0), k=2, X=T.tensor(X0), tracker=tracker)
        return [len(steps), steps[0], steps[-1][:3], [s[0] for s in steps]]
    same(f)


def test_tracker_can_stop_the_iteration():
    A0 = _spd(15, seed=13)
    X0 = _start(15, 2)

    def f(T):
        seen = []

        def stop(worker):
            seen.append(worker.E.clone())
            worker.bvars["force_stop"] = True
        E, X = T.lobpcg(T.tensor(A0), k=2, X=T.tensor(X0), tracker=stop)
        return [E, seen, X.shape]
    same(f)


@pytest.mark.parametrize("niter", [1, 2, 3, 0, -1])
def test_niter_bounds_the_steps(niter):
    A0 = _spd(40, seed=14, spectrum=np.linspace(1, 1.5, 40))
    X0 = _start(40, 2)

    def f(T):
        steps = []
        E, _ = T.lobpcg(T.tensor(A0), k=2, X=T.tensor(X0), niter=niter,
                        tracker=lambda w: steps.append(w.ivars["istep"]))
        # (0 and -1 run until converged; the step counts of two iterations may differ there)
        return steps if niter > 0 else E
    same(f, rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda T: T.lobpcg(T.tensor(_spd(12)), k=5),
    lambda T: T.lobpcg(T.tensor(_spd(12)), k=1, n=5),
    lambda T: T.lobpcg(T.tensor(_spd(12)), X=T.tensor(_start(12, 5))),
    lambda T: T.lobpcg(T.ones(5, 4), k=1),
    lambda T: T.lobpcg(T.ones(5, 5, dtype=T.long), k=1),
])
def test_errors(call):
    out = same(lambda T: catch(call, T))
    assert out[0] == "raised"
