"""Differential audit of torch.linalg / torch.fft edge cases against torch: norm dtype= checks
and their order, empty matrices in norms and cond, the op names PyTorch's errors carry,
vecdot of mismatched vectors, the order of the 1-D FFTs' argument checks, and fftfreq /
rfftfreq at n <= 0."""
import math

import pytest

from differential import same, catch

X = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0], [2.0, 0.0, 1.0]]
ORDS = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf, 0, 3, 0.5]
DTYPES = ["float16", "float32", "float64", "complex64", "complex128", "int64"]


@pytest.mark.parametrize("ord", ORDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", ["matrix_norm", "norm"])
def test_matrix_norm_dtype_argument(fn, ord, dtype):
    same(lambda T: catch(getattr(T.linalg, fn), T.tensor(X), ord, dtype=getattr(T, dtype)))
    same(lambda T: catch(getattr(T.linalg, fn), T.tensor(X, dtype=T.complex64), ord,
                         dtype=getattr(T, dtype)))


@pytest.mark.parametrize("ord", ORDS)
@pytest.mark.parametrize("make", [
    lambda T: T.ones(3, dtype=T.int64), lambda T: T.ones(2, 2, dtype=T.int64),
    lambda T: T.ones(2, 2, dtype=T.float16), lambda T: T.ones(2, 2, dtype=T.bfloat16),
    lambda T: T.ones(3), lambda T: T.zeros(0, 3), lambda T: T.zeros(3, 0),
    lambda T: T.zeros(2, 0, 0)])
def test_matrix_norm_input_checks_and_empty(make, ord):
    same(lambda T: catch(T.linalg.matrix_norm, make(T), ord))
    same(lambda T: catch(T.linalg.matrix_norm, make(T), ord, dim=(0, 1, 2)))


def test_matrix_norm_empty_keepdim_and_dims():
    for ord in [1, math.inf]:
        same(lambda T: T.linalg.matrix_norm(T.zeros(2, 0, 3), ord, dim=(0, 1), keepdim=True))
        same(lambda T: T.linalg.matrix_norm(T.zeros(3, 0, 2), ord, dim=(2, 1)))


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, "fro", "nuc", math.inf, -math.inf])
@pytest.mark.parametrize("make", [
    lambda T: T.ones(3), lambda T: T.ones(2, 2, dtype=T.int64),
    lambda T: T.ones(2, 2, dtype=T.float16), lambda T: T.tensor([[1., 2., 3.], [0., 1., 4.]]),
    lambda T: T.ones(2, 3, dtype=T.int64), lambda T: T.zeros(0, 0),
    lambda T: T.zeros(2, 0, 0, dtype=T.complex128), lambda T: T.tensor([[1., 2.], [3., 4.]])])
def test_cond_checks_and_empty(make, p):
    same(lambda T: catch(T.linalg.cond, make(T), p))


@pytest.mark.parametrize("make", [
    lambda T: T.ones(2, 2, dtype=T.int64), lambda T: T.ones(2, 2, dtype=T.bool),
    lambda T: T.ones(3), lambda T: T.ones(2, 3)])
@pytest.mark.parametrize("fn", ["svdvals", "eigvalsh", "matrix_rank"])
def test_error_names_of_the_underlying_op(fn, make):
    same(lambda T: catch(getattr(T.linalg, fn), make(T)))


@pytest.mark.parametrize("shapes", [((3,), (4,)), ((3,), (1,)), ((1,), (3,)), ((2, 3), (4, 3)),
                                    ((3,), (2, 4)), ((2, 3), (3,))])
def test_vecdot_size_mismatch(shapes):
    a, b = shapes
    same(lambda T: catch(T.linalg.vecdot, T.ones(a), T.ones(b)))


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
