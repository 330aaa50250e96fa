"""Random draws into complex tensors (complex32 = chalf, complex64, complex128) through ember's
public API, compared bit for bit with torch 2.13, and the generator state afterwards: torch
draws a complex tensor as the real tensor of its 2n parts (rand: uniform_ in the parts' dtype;
randn and normal_: normal_(mean, std / sqrt(2)) there), and refuses the other distributions
with its own errors."""
import warnings

import numpy as np
import pytest
import torch

import ember

DTYPES = [(torch.complex32, ember.complex32), (torch.complex64, ember.complex64),
          (torch.complex128, ember.complex128)]
SIZES = [1, 3, 7, 8, 9, 17, 1000]

pytestmark = pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")


def parts(t):
    """A complex tensor's parts as a real NumPy array (..., 2), raw bits for float16."""
    if isinstance(t, torch.Tensor):
        a = torch.view_as_real(t.contiguous()).numpy()
    else:
        a = np.ascontiguousarray(np.asarray(t._data))
        a = a.view(np.float16 if a.dtype.names else a.real.dtype).reshape(a.shape + (2,))
    return a.view(np.int16) if a.dtype == np.float16 else a


def check_same(ours, theirs):
    assert ours.dtype is getattr(ember, str(theirs.dtype).split(".")[1])
    assert tuple(ours.shape) == tuple(theirs.shape)
    a, b = parts(ours), parts(theirs)
    assert a.dtype == b.dtype and np.array_equal(a, b)


def check_state():
    assert np.array_equal(np.asarray(ember.get_rng_state()._data),
                          torch.get_rng_state().numpy())


def both(fn, seed=0):
    """fn(lib) run under torch and under ember after the same seed."""
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    return fn(ember), fn(torch)


@pytest.mark.parametrize("tdt,edt", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("seed", [0, 12345])
def test_rand_randn(tdt, edt, n, seed):
    for name in ("rand", "randn"):
        ours, theirs = both(lambda lib: getattr(lib, name)(
            n, dtype=edt if lib is ember else tdt), seed)
        check_same(ours, theirs)
        check_state()


@pytest.mark.parametrize("tdt,edt", DTYPES)
@pytest.mark.parametrize("shape", [(3,), (4, 5), (6, 7)])
def test_like_functions(tdt, edt, shape):
    for name in ("rand_like", "randn_like"):
        ours, theirs = both(lambda lib: getattr(lib, name)(
            lib.zeros(shape, dtype=edt if lib is ember else tdt)), 3)
        check_same(ours, theirs)
        check_state()


LAYOUTS = {"contiguous": lambda t: t, "transposed": lambda t: t.t(),
           "sliced": lambda t: t[::2]}


@pytest.mark.parametrize("tdt,edt", DTYPES)
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (8, 4), (40, 30)])
@pytest.mark.parametrize("name,args", [("uniform_", ()), ("uniform_", (-2, 3)),
                                       ("normal_", ()), ("normal_", (0.5, 2))])
def test_in_place_fills(tdt, edt, layout, shape, name, args):
    def run(lib):
        base = lib.zeros(shape, dtype=edt if lib is ember else tdt)
        view = LAYOUTS[layout](base)
        getattr(view, name)(*args)
        return base
    ours, theirs = both(run, 7)
    check_same(ours, theirs)
    check_state()


@pytest.mark.parametrize("tdt,edt", DTYPES)
@pytest.mark.parametrize("n", [3, 20])
def test_normal_overloads(tdt, edt, n):
    rdt = {torch.complex32: torch.float16, torch.complex64: torch.float32,
           torch.complex128: torch.float64}[tdt]
    ours, theirs = both(lambda lib: lib.normal(0.5, 2.0, (n,),
                                                  dtype=edt if lib is ember else tdt))
    check_same(ours, theirs)
    check_state()
    mean = (torch.arange(n) * (1 + 2j)).to(tdt)
    std = torch.linspace(0.5, 3.0, n, dtype=rdt)
    emean = ember.from_numpy(np.asarray(mean.to(torch.complex64).numpy())).to(edt)
    estd = ember.from_numpy(std.numpy().copy())
    for args in [(2.0,), ("std",)]:
        ours, theirs = both(lambda lib: lib.normal(
            emean if lib is ember else mean,
            *[(estd if lib is ember else std) if a == "std" else a for a in args]))
        check_same(ours, theirs)
        check_state()


REFUSED = [
    ("x.random_()", NotImplementedError),
    ("x.random_(0, 5)", RuntimeError),
    ("x.exponential_()", RuntimeError),
    ("x.cauchy_()", RuntimeError),
    ("x.log_normal_()", NotImplementedError),
    ("x.geometric_(0.5)", NotImplementedError),
    ("x.bernoulli_()", NotImplementedError),
    ("x.bernoulli_(lib.rand(3))", NotImplementedError),
    ("lib.bernoulli(x)", NotImplementedError),
    ("lib.bernoulli(x, 0.5)", NotImplementedError),
    ("lib.randint(0, 5, (3,), dtype=x.dtype)", RuntimeError),
    ("lib.randint_like(x, 5)", RuntimeError),
    ("lib.randperm(3, dtype=x.dtype)", NotImplementedError),
    ("lib.poisson(x)", NotImplementedError),
    ("lib.multinomial(x, 1)", RuntimeError),
    ("lib.normal(x, x)", RuntimeError),
    ("lib.normal(1.0, x)", RuntimeError),
]


@pytest.mark.parametrize("tdt,edt", DTYPES)
@pytest.mark.parametrize("call,error", REFUSED)
def test_refused_as_torch(tdt, edt, call, error):
    messages = []
    for lib, dt in ((torch, tdt), (ember, edt)):
        lib.manual_seed(0)
        x = lib.ones(3, dtype=dt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(error) as info:
                eval(call, {"lib": lib, "x": x})
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    check_state()          # nothing drawn by a call that raised
