"""Samplers that go through torch's vectorised CPU math (ember/_sleef_math.py), bit for bit with
torch 2.13: x.pow(tensor) (SLEEF's pow_u10 on 2 vectors at a time, the C library's powf/pow on
each range's leftover elements, one range per thread from 32768 elements), and so
InverseGamma's sample/rsample. VonMises in float64 calls torch.cos, which is Intel MKL's vdCos
on this build (shown below): not reproduced (its algorithm is unpublished), so its samples are
checked to 1e-13 and statistically (tests/test_random_ops.py)."""
import ctypes
import glob
import os

import numpy as np
import pytest
import torch

import ember
from ember import _sleef_math as S

DTYPES = [(torch.float32, ember.float32), (torch.float64, ember.float64)]
SIZES = [1, 15, 16, 17, 31, 32, 33, 63, 1000, 32767, 32769, 100003]


def bits_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.array_equal(a.view(f"i{a.itemsize}"), b.view(f"i{b.itemsize}"))


def positives(kind, n, seed, dt):
    g = torch.Generator().manual_seed(seed)
    if kind == "unit":
        x = torch.rand(n, generator=g, dtype=torch.float64) * 10 + 1e-3
    elif kind == "wide":                          # magnitudes over the whole float range
        x = torch.exp(torch.randn(n, generator=g, dtype=torch.float64) * 20)
    else:                                         # Gamma draws, as InverseGamma inverts
        x = torch._standard_gamma(torch.full((n,), 0.7, dtype=torch.float64), generator=g)
    return x.to(dt)


@pytest.fixture
def threads():
    """Set torch's and ember's thread counts alike (the ranges torch splits a loop into
    depend on it), restored afterwards."""
    before = torch.get_num_threads(), ember.get_num_threads()

    def set_both(k):
        torch.set_num_threads(k)
        ember.set_num_threads(k)
    yield set_both
    torch.set_num_threads(before[0])
    ember.set_num_threads(before[1])


@pytest.mark.parametrize("tdt,edt", DTYPES)
@pytest.mark.parametrize("kind", ["unit", "wide", "gamma"])
@pytest.mark.parametrize("exponent", [-1.0, 0.5, 2.5, -3.3, 1.0 / 3])
@pytest.mark.parametrize("n", SIZES)
def test_pow_with_a_tensor_exponent(tdt, edt, kind, exponent, n):
    x = positives(kind, n, n + 7, tdt)
    y = torch.tensor(exponent, dtype=tdt)
    assert bits_equal(S.pow_tensor(x.numpy(), y.numpy()), x.pow(y).numpy())


@pytest.mark.parametrize("tdt,edt", DTYPES)
def test_pow_elementwise_exponents_and_special_values(tdt, edt):
    g = torch.Generator().manual_seed(3)
    special = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, float("inf"), -float("inf"), float("nan"), 1e-30,
               0.5, -0.5, 3.0, -3.0]
    x = torch.tensor(special, dtype=tdt).repeat_interleave(len(special))
    y = torch.tensor(special, dtype=tdt).repeat(len(special))
    x = torch.cat([x, torch.randn(5000, generator=g, dtype=tdt) * 4])
    y = torch.cat([y, torch.randn(5000, generator=g, dtype=tdt) * 3])
    ours = S.pow_tensor(x.numpy(), y.numpy())
    theirs = x.pow(y).numpy()
    both_nan = np.isnan(ours) & np.isnan(theirs)
    assert bits_equal(np.where(both_nan, 0, ours).astype(ours.dtype),
                      np.where(both_nan, 0, theirs).astype(theirs.dtype))


@pytest.mark.parametrize("tdt,edt", DTYPES)
def test_vector_and_scalar_paths_are_told_apart(tdt, edt):
    """An x whose vectorised pow(x, -1) differs from the C library's, put at each position of
    a 37-element tensor: torch gives the vector's value in the first whole loop steps (two
    vectors: 32 float32 or float64 values with AVX-512, 16 with AVX2) and the C library's in
    what is left over. (With ATEN_CPU_CAPABILITY=default torch has no vector path at all:
    the C library's everywhere, and ember follows.)"""
    if not S.VECTOR_BYTES:
        pytest.skip("ATEN_CPU_CAPABILITY=default: torch has no vector path to tell apart")
    step = 2 * S.VECTOR_BYTES // torch.empty((), dtype=tdt).element_size()
    vectorised = 37 // step * step
    x = positives("unit", 20000, 1, tdt)
    y = torch.tensor(-1.0, dtype=tdt)
    vec = x.pow(y)[:19968]                          # (whole steps: all vectorised)
    odd = x[:19968][vec != 1 / x[:19968]][0]        # an x where the two paths differ
    for pos in range(37):
        z = torch.full((37,), 2.0, dtype=tdt)
        z[pos] = odd
        theirs = z.pow(y).numpy()
        assert bits_equal(S.pow_tensor(z.numpy(), y.numpy()), theirs)
        assert (theirs[pos] == (1 / odd).item()) == (pos >= vectorised)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("n", [32768, 65541, 100003])
def test_pow_ranges_per_thread(threads, k, n):
    threads(k)
    for tdt, _ in DTYPES:
        x = positives("gamma", n, k, tdt)
        y = torch.tensor(-1.0, dtype=tdt)
        assert bits_equal(S.pow_tensor(x.numpy(), y.numpy()), x.pow(y).numpy())


# ----------------------------------------------------------------------------- InverseGamma
def _params(L, dt, shape, seed):
    g = np.random.default_rng(seed)
    c = g.uniform(0.2, 4.0, shape)
    r = g.uniform(0.1, 3.0, shape)
    return L.tensor(c, dtype=dt), L.tensor(r, dtype=dt)


@pytest.mark.parametrize("tdt,edt", DTYPES)
@pytest.mark.parametrize("shape", [(), (7,), (33, 3)])
@pytest.mark.parametrize("sample", [(), (50,), (1000,)])
@pytest.mark.parametrize("seed", [0, 1, 2, 12345])
def test_inverse_gamma_samples_bit_equal(tdt, edt, shape, sample, seed):
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    theirs = torch.distributions.InverseGamma(*_params(torch, tdt, shape, seed)).sample(sample)
    ours = ember.distributions.InverseGamma(*_params(ember, edt, shape, seed)).sample(sample)
    assert bits_equal(ours.numpy(), theirs.numpy())
    assert np.array_equal(np.asarray(ember.get_rng_state()._data), torch.get_rng_state().numpy())


@pytest.mark.parametrize("tdt,edt", DTYPES)
@pytest.mark.parametrize("seed", [0, 5])
def test_inverse_gamma_rsample_values_and_gradients(tdt, edt, seed):
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    tc, tr = _params(torch, tdt, (40,), seed)
    ec, er = _params(ember, edt, (40,), seed)
    tr.requires_grad_()             # (through the rate: the concentration's gradient is
    er.requires_grad_()             # Gamma's own reparameterisation, tested elsewhere)
    theirs = torch.distributions.InverseGamma(tc, tr).rsample((3,))
    ours = ember.distributions.InverseGamma(ec, er).rsample((3,))
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == "PowBackward1"
    assert bits_equal(ours.detach().numpy(), theirs.detach().numpy())
    theirs.sum().backward()
    ours.sum().backward()
    # torch's PowBackward1 takes exponent * x.pow(exponent - 1), again its vectorised pow;
    # ember's backward is NumPy's power (ember's general pow op, left alone): a few ulp
    eps = np.finfo(er.grad.numpy().dtype).eps
    assert np.allclose(er.grad.numpy(), tr.grad.numpy(), rtol=8 * eps, atol=0)


def test_inverse_gamma_statistics():
    ember.manual_seed(0)
    x = ember.distributions.InverseGamma(ember.tensor(5.0, dtype=ember.float64),
                                         ember.tensor(2.0, dtype=ember.float64)).sample((40000,))
    x = x.numpy()
    assert abs(x.mean() - 0.5) < 0.01                        # rate / (c - 1)
    assert abs(x.var() - 0.25 / 3) < 0.01                    # rate^2 / ((c-1)^2 (c-2))


# ----------------------------------------------------------------------------- VonMises's cos
def _mkl_vdcos():
    libs = glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.*"))
    for path in libs:
        lib = ctypes.CDLL(path)
        if hasattr(lib, "vdCos"):
            return lib.vdCos
    return None


def test_torch_float64_cos_is_mkl_not_sleef():
    """Why VonMises's float64 samples are not reproduced: torch.cos of float64 here is MKL's
    vdCos (equal bit for bit, called from torch's own library), which is not published; the
    C library's cos (ember's) differs in the last bit for ~0.2% of the angles the sampler
    takes (pi * u)."""
    vdcos = _mkl_vdcos()
    if vdcos is None:
        pytest.skip("this torch build has no MKL vdCos to compare with")
    x = np.random.default_rng(0).uniform(0, np.pi, 100000)
    mkl = np.empty_like(x)
    vdcos(ctypes.c_int(x.size), x.ctypes.data_as(ctypes.c_void_p),
          mkl.ctypes.data_as(ctypes.c_void_p))
    theirs = torch.cos(torch.from_numpy(x)).numpy()
    assert bits_equal(mkl, theirs)
    assert 0 < np.sum(np.cos(x) != theirs) < 0.01 * x.size
