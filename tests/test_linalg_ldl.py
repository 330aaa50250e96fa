"""torch.linalg.ldl_factor / ldl_factor_ex / ldl_solve against torch: LD and pivots
(Bunch-Kaufman's choices, 1x1 and 2x2 blocks), info for a singular D, solves, batches,
errors, and the missing derivative."""
import numpy as np
import pytest

from differential import catch, same


def _sym(T, n, seed, dtype="float64", batch=()):
    a = np.random.default_rng(seed).standard_normal(batch + (n, n))
    a = a + np.swapaxes(a, -1, -2)
    return T.tensor(a, dtype=getattr(T, dtype))


@pytest.mark.parametrize("n,seed", [(1, 0), (2, 1), (3, 2), (5, 3), (8, 4), (12, 5), (20, 6)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_ldl_factor_matches_torch(n, seed, dtype):
    def scenario(T):
        A = _sym(T, n, seed, dtype)
        LD, pivots, info = T.linalg.ldl_factor_ex(A)
        X = T.linalg.ldl_solve(LD, pivots, T.eye(n, dtype=A.dtype))
        return LD, pivots, info, X
    same(scenario, rtol=1e-4 if dtype == "float32" else 1e-9,
         atol=1e-4 if dtype == "float32" else 1e-9)


@pytest.mark.parametrize("case", ["zero_diagonal", "two_by_two", "indefinite", "batch",
                                  "empty", "diagonal"])
def test_ldl_special_matrices(case):
    def scenario(T):
        if case == "zero_diagonal":
            A = T.tensor([[0., 1., 2.], [1., 0., 3.], [2., 3., 1.]])
        elif case == "two_by_two":
            A = T.tensor([[0., 1.], [1., 0.]])
        elif case == "indefinite":
            A = T.tensor([[4., 1., 2.], [1., -3., 0.5], [2., 0.5, 5.]])
        elif case == "batch":
            A = _sym(T, 4, 7, batch=(2, 3))
        elif case == "empty":
            A = T.ones(0, 0)
        else:
            A = T.diag(T.tensor([3.0, -1.0, 2.0]))
        LD, pivots = T.linalg.ldl_factor(A)
        B = T.arange(float(A.shape[-1] * 2), dtype=A.dtype).view(A.shape[-1], 2)
        X = T.linalg.ldl_solve(LD, pivots, B)
        return LD, pivots, X, T.linalg.ldl_factor(A, hermitian=True).LD
    same(scenario, rtol=1e-5, atol=1e-5)


def test_ldl_solve_broadcasts_and_takes_int64_pivots():
    def scenario(T):
        A = _sym(T, 3, 11, batch=(2,))
        LD, pivots = T.linalg.ldl_factor(A)
        B = T.arange(6.0, dtype=T.float64).view(3, 2)
        return T.linalg.ldl_solve(LD, pivots.long(), B), A @ T.linalg.ldl_solve(LD, pivots, B)
    same(scenario, rtol=1e-9, atol=1e-9)


def test_ldl_info_of_a_singular_matrix():
    def scenario(T):
        Z = T.zeros(2, 2)
        ex = T.linalg.ldl_factor_ex(Z)
        return [ex, catch(T.linalg.ldl_factor, Z)[:2],
                catch(T.linalg.ldl_factor_ex, Z, check_errors=True)[:2]]
    same(scenario)


def test_ldl_errors_and_no_derivative():
    def scenario(T):
        L = T.linalg
        piv = T.tensor([1, 2], dtype=T.int32)
        A = T.tensor([[4., 1.], [1., -3.]], requires_grad=True)
        LD, pivots = L.ldl_factor(A)
        X = L.ldl_solve(LD.detach(), pivots, T.ones(2, 1, requires_grad=True))
        return [catch(L.ldl_factor, T.ones(2, 3)), catch(L.ldl_factor, T.ones(3)),
                catch(L.ldl_factor, T.ones(2, 2, dtype=T.long)),
                catch(L.ldl_factor_ex, T.ones(2, 3)),
                catch(L.ldl_solve, T.eye(2), piv, T.ones(3, 1)),
                catch(L.ldl_solve, T.eye(2), piv, T.ones(2)),
                catch(L.ldl_solve, T.eye(2), piv, T.ones(2, 1, dtype=T.float64)),
                LD.grad_fn.name(), catch(LD.sum().backward), X.grad_fn.name(),
                catch(X.sum().backward)]
    same(scenario)


def _complex(T, n, seed, hermitian, dtype="complex128", batch=()):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (n, n)) + 1j * rng.standard_normal(batch + (n, n))
    a = a + (np.conj(np.swapaxes(a, -1, -2)) if hermitian else np.swapaxes(a, -1, -2))
    return T.tensor(a, dtype=getattr(T, dtype))


@pytest.mark.parametrize("n,seed", [(1, 0), (2, 1), (3, 2), (5, 3), (8, 4), (13, 5)])
@pytest.mark.parametrize("hermitian", [True, False])
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_ldl_complex(n, seed, hermitian, dtype):
    def scenario(T):
        A = _complex(T, n, seed, hermitian, dtype)
        LD, pivots, info = T.linalg.ldl_factor_ex(A, hermitian=hermitian)
        X = T.linalg.ldl_solve(LD, pivots, T.eye(n, dtype=A.dtype), hermitian=hermitian)
        return LD, pivots, info, X
    tol = 1e-4 if dtype == "complex64" else 1e-9
    same(scenario, rtol=tol, atol=tol)


def test_ldl_complex_batch():
    def scenario(T):
        A = _complex(T, 4, 9, True, batch=(3,))
        LD, pivots = T.linalg.ldl_factor(A, hermitian=True)
        B = T.arange(8.0, dtype=T.float64).view(4, 2).to(T.complex128)
        return LD, pivots, T.linalg.ldl_solve(LD, pivots, B, hermitian=True)
    same(scenario, rtol=1e-9, atol=1e-9)
