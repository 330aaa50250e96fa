"""Random numbers: manual_seed and the RNG state, rand/randn/randint/randperm, normal,
bernoulli, multinomial, poisson, binomial and the in-place random fills (uniform_, normal_,
...). The generator is torch's CPU mt19937 stream (ember/_generator.py) and each op turns its
words into values as torch does (ember/_random_recipes.py), so a seeded program draws torch's
numbers."""
import builtins
import inspect
import math
import warnings

import numpy as np

from .. import _backend, _dtype as D
from .. import _random_recipes as R
from .._device import CPU, _default_device, as_device
from .._generator import Generator, default_generator
from .._tensor import Tensor
from .creation import (_check_sizes, _finish, _on_device, _random_factory_error, _sizes, _is_size,
                       _type_name, empty_like)
from .registry import primitive, check_inplace_allowed
from .._printing import scalar_type_name
from ..autograd import grad_mode


# ----------------------------------------------------------------------------- the global stream
def manual_seed(seed):
    default_generator.manual_seed(int(seed))      # (torch's global one takes any int()-able)
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


def _gen(generator):
    """The generator an op draws from: the one given, else the global one."""
    return default_generator if generator is None else generator


def bernoulli_mask(shape, p, generator=None, like=None):
    """A bool array of `shape`, True with probability p, as bernoulli_(p) fills a fresh tensor
    (dropout's noise): contiguous, or when `like` (an array of that shape) covers its memory
    densely in another order, laid out as empty_like(like) is, and filled in that order."""
    mask = R.bernoulli_scalar(_gen(generator), tuple(shape), p)
    strides = _dense_strides(like) if like is not None and like.shape == mask.shape else None
    if strides is None:
        return mask
    out = np.empty(mask.size, bool)
    out[R.fill_order(mask.shape, strides)] = mask.reshape(-1)
    return out.reshape(mask.shape)


def _dense_strides(a):
    """a's element strides when it is not C-contiguous but covers its memory without gaps
    or overlap (empty_like keeps such a layout); else None. (A NumPy or CuPy array.)"""
    if a.flags.c_contiguous:
        return None
    strides = [st // a.itemsize for st in a.strides]
    expect = 1
    for size, st in sorted(((n, st) for n, st in zip(a.shape, strides) if n != 1),
                           key=lambda pair: pair[1]):
        if st != expect:
            return None
        expect *= size
    return strides


def _not_implemented(kernel, dtype):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dtype)}'")


def _random_factory(fname, kernel, sample, small):
    """rand/randn: floating or complex dtypes only (a complex sample draws both parts).
    small(gen, shape): the plain call's quick path (sizes as ints, nothing else given, the
    default float dtype and the CPU), whose Python overhead matters for small draws."""
    def make(*args, **options):
        # (no keyword arguments: the quick path; a function with keyword-only defaults costs
        # ~0.1 us more per call, a third of a small draw's budget)
        if not options and args and _default_device[0] is CPU:
            for a in args:
                if a.__class__ is not int or a < 0:
                    break
            else:
                dtype = D.get_default_dtype()
                return Tensor._make(small(default_generator, args, dtype.np), dtype)
        return full(*args, **options)

    def full(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
        if size is not None:
            if args:
                got = ", ".join([type(a).__name__ for a in args] +
                                [f"size={type(size).__name__}"])
                raise _random_factory_error(fname, got)
            args = (size,)
        elif not args:
            raise _random_factory_error(fname, "")
        if args and all(type(a) is int and a >= 0 for a in args):
            shape = args                # plain sizes: the common case, checked here quickly
        else:
            shape = _sizes(fname, args)
            _check_sizes(shape)
        dtype = dtype or D.get_default_dtype()
        if dtype._category < 2:
            raise _not_implemented(kernel, dtype)
        device = as_device(device)
        data = sample(_gen(generator), shape, dtype)
        return _finish(_on_device(data, device), dtype, device, requires_grad)
    make.__name__ = full.__name__ = make.__qualname__ = full.__qualname__ = fname
    make.__signature__ = inspect.signature(full)
    return make


rand = _random_factory("rand", "check_uniform_bounds", lambda g, shape, dtype: (
    R.uniform_complex if dtype.is_complex else R.uniform)(g, shape, dtype), R.rand_plain)
randn = _random_factory("randn", "normal_kernel_cpu", lambda g, shape, dtype: (
    R.normal_complex if dtype.is_complex else R.normal)(g, shape, dtype), R.randn_plain)


def _fresh_like(input, dtype, device, memory_format):
    """empty_like(input) as torch's *_like random ops start: laid out like input (its memory
    order, preserve_format by default), so that the in-place draw fills it in that order."""
    return empty_like(input, dtype=dtype, device=device, memory_format=memory_format)


def _requiring_grad(out, requires_grad):
    """The filled tensor as a fresh factory result: version 0 (torch's fill is internal to
    the op; nothing else holds the tensor yet), requiring grad if asked."""
    out._vc = None
    if requires_grad:
        out.requires_grad_(True)
    return out


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
              memory_format=None, layout=None, pin_memory=False):
    """empty_like(input).uniform_(0, 1), as torch does it (so a transposed input's result is
    transposed and drawn in memory order)."""
    out = _fresh_like(input, dtype, device, memory_format)
    return _requiring_grad(uniform_(out, generator=generator), requires_grad)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
               memory_format=None, layout=None, pin_memory=False):
    """empty_like(input).normal_(0, 1): a non-contiguous layout takes the one-at-a-time
    sampler, as normal_ does."""
    out = _fresh_like(input, dtype, device, memory_format)
    return _requiring_grad(normal_(out, generator=generator), requires_grad)


_RANDINT_SIGNATURES = (
    " * (int high, tuple of ints size, *, torch.Generator generator, Tensor out = None, "
    "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool "
    "pin_memory = False, bool requires_grad = False)\n"
    " * (int high, tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, "
    "torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool "
    "requires_grad = False)\n"
    " * (int low, int high, tuple of ints size, *, torch.Generator generator, Tensor out = "
    "None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
    "bool pin_memory = False, bool requires_grad = False)\n"
    " * (int low, int high, tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, "
    "torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool "
    "requires_grad = False)\n")


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, device=None,
            requires_grad=False, out=None, layout=None, pin_memory=False):
    if low is None and high is None and size is None and generator is None and \
            dtype is None and device is None and not requires_grad and \
            _default_device[0] is CPU and 2 <= len(args) <= 3:
        # the plain call randint([low,] high, (sizes...)) with int64 bounds: a quick path
        lo, hi, shape = args if len(args) == 3 else (0,) + args
        if lo.__class__ is int and hi.__class__ is int and shape.__class__ is tuple and \
                -2 ** 63 <= lo < hi < 2 ** 63:
            for k in shape:
                if k.__class__ is not int or k < 0:
                    break
            else:
                return Tensor._make(R.randint_int64(default_generator, shape, lo, hi),
                                    D.int64)
    # randint([low,] high, size): the arguments by position or by name, as PyTorch binds them
    names = ("high", "size") if len(args) + (low is not None) + (high is not None) + \
        (size is not None) == 2 and low is None else ("low", "high", "size")
    given = {"low": low, "high": high, "size": size}
    named = {k: v for k, v in given.items() if v is not None}
    bound = dict(zip(names, args))
    if len(args) > len(names) or set(bound) & set(named) or \
            set(bound) | set(named) != set(names):
        raise _randint_error(args, named)
    bound.update(named)
    if len(names) == 2:
        # one plausible signature: PyTorch names the argument at fault
        if not _is_size(bound["high"], first=True):
            raise TypeError(f"randint(): argument 'high' (position 1) must be int, not "
                            f"{_type_name(bound['high'])}")
        where = "" if size is not None else " (position 2)"
        if not isinstance(bound["size"], (tuple, list)):
            raise TypeError(f"randint(): argument 'size'{where} must be tuple of ints, not "
                            f"{_type_name(bound['size'])}")
        if bound["size"] and not _is_size(bound["size"][0], first=True):
            raise TypeError(f"randint(): argument 'size'{where} must be tuple of ints, but "
                            f"found element of type {_type_name(bound['size'][0])} at pos 0")
    elif not (_is_size(bound["low"], first=True) and _is_size(bound["high"], first=True) and
              isinstance(bound["size"], (tuple, list))):
        raise _randint_error(args, named)
    low, high = bound.get("low", 0).__index__(), bound["high"].__index__()
    shape = _sizes("randint", (bound["size"],))
    _check_sizes(shape)
    if not (-2 ** 63 <= low < 2 ** 63 and -2 ** 63 <= high < 2 ** 63):
        raise ValueError("Overflow when unpacking long long")
    dtype = dtype or D.int64
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    _check_random_bounds(low, high, dtype)
    device = as_device(device)
    data = R.random_range(_gen(generator), shape, dtype, low, high)
    return _finish(_on_device(data, device), dtype, device, requires_grad)


def _randint_error(args, named):
    got = ", ".join([type(a).__name__ for a in args] +
                    [f"{k}={type(v).__name__}" for k, v in named.items()])
    return TypeError(f"randint() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{_RANDINT_SIGNATURES}")


# the C++ type names PyTorch's bounds checks print
_C_TYPE_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
                 "int16": "short int", "int32": "int", "int64": "long int",
                 "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
                 "float64": "double"}
_warned_bounds = set()


def _check_random_bounds(low, high, dtype):
    """random_(from, to)'s checks that the dtype can hold every value drawn: an error for an
    integer dtype; for a floating one a warning (once per process, as PyTorch warns) past the
    range where it holds every integer."""
    if dtype.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    name = _C_TYPE_NAMES[dtype.name]
    if dtype._category < 2:
        lo, hi = (0, 1) if dtype is D.bool_ else (int(np.iinfo(dtype.np).min),
                                                  int(np.iinfo(dtype.np).max))
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {name}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {name}")
        return
    digits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[dtype.name]
    for which, value, line in (("from", low, 110), ("to - 1", high - 1, 111)):
        if abs(value) > 2 ** digits and (which, dtype) not in _warned_bounds:
            _warned_bounds.add((which, dtype))
            warnings.warn(f"{which} is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                          f"precision limitations {name} can support discrete uniform "
                          f"distribution only within this range. This warning will become an "
                          f"error in version 1.7 release, please fix the code in advance "
                          f"(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                          f"DistributionTemplates.h:{line}.)", UserWarning, stacklevel=3)


def randint_like(input, low, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False, memory_format=None, layout=None, pin_memory=False):
    """empty_like(input).random_(low, high) (high alone: [0, high))."""
    if high is None:
        low, high = 0, low
    out = _fresh_like(input, dtype, device, memory_format)
    return _requiring_grad(random_(out, low, high, generator=generator), requires_grad)


# the most elements randperm can number exactly in a floating dtype
_RANDPERM_FLOAT_LIMITS = {"float16": (2049, "2049", "Half"),
                          "float32": (2 ** 24 + 1, "2^24+1", "Float")}


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, out=None,
             layout=None, pin_memory=False):
    if not _is_size(n, first=True):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                        f"{_type_name(n)}")
    n = n.__index__()
    _check_sizes((n,))
    dtype = dtype or D.int64
    if dtype is D.bool_ or dtype.is_complex:
        raise _not_implemented("randperm", dtype)
    if dtype._category == 1 and n - 1 > np.iinfo(dtype.np).max:
        c_name = "int" if dtype is D.int32 else f"{dtype.name}_t"
        raise RuntimeError(f"value cannot be converted to type {c_name} without overflow")
    if dtype.name in _RANDPERM_FLOAT_LIMITS:
        limit, text, name = _RANDPERM_FLOAT_LIMITS[dtype.name]
        if n > limit:
            raise RuntimeError(f"n cannot be greater than {text} for {name} type.")
    device = as_device(device)
    return _finish(_on_device(R.randperm(_gen(generator), n, dtype), device), dtype,
                   device, requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           device=None, requires_grad=False, layout=None, pin_memory=False):
    g = _gen(generator)
    if isinstance(std, Tensor):
        if std._dtype.is_complex:
            raise RuntimeError("normal expects standard deviation to be non-complex")
        if std._data.size and (std._data < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        like = mean if isinstance(mean, Tensor) else std
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        data = R.normal_tensors(g, shape, like._dtype, m, s)
        return Tensor._make(data, like._dtype, like._device)
    if size is None:
        raise TypeError(
            "normal() received an invalid combination of arguments - got (float, float), but "
            "expected one of:\n * (Tensor mean, Tensor std, *, torch.Generator generator = "
            "None, Tensor out = None)\n * (Tensor mean, float std = 1, *, torch.Generator "
            "generator = None, Tensor out = None)\n * (float mean, Tensor std, *, "
            "torch.Generator generator = None, Tensor out = None)\n * (float mean, float std, "
            "tuple of ints size, *, torch.Generator generator = None, Tensor out = None, "
            "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
            "bool pin_memory = False, bool requires_grad = False)\n")
    shape = _sizes("normal", (size,))
    dtype = dtype or D.get_default_dtype()
    device = as_device(device)
    data = (R.normal_complex if dtype.is_complex else R.normal)(g, shape, dtype, mean, std)
    return _finish(_on_device(data, device), dtype, device, requires_grad)


def bernoulli(input, p=None, *, generator=None, out=None):
    if input._dtype.is_complex:
        raise _not_implemented("bernoulli_tensor_cpu_self_" if p is None else
                               "bernoulli_scalar_cpu_", input._dtype)
    if input._dtype._category < 2 and p is None:
        raise _not_implemented("bernoulli_tensor_cpu_p_", input._dtype)
    probs = input._host() if p is None else np.full(input.shape, p)
    if np.any((probs < 0) | (probs > 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    g = _gen(generator)
    drawn = R.bernoulli_tensor(g, probs) if p is None else \
        R.bernoulli_scalar(g, input.shape, p)
    data = drawn.astype(input._dtype.np)
    return Tensor._make(_on_device(data, input._device), input._dtype, input._device)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    if input._dtype._category != 2:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{scalar_type_name(input._dtype)}")
    probs = input._host().astype(np.float64)    # (drawn by the CPU generator, on the host)
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if np.any(probs < 0) or not np.all(np.isfinite(probs)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = probs.reshape(-1, probs.shape[-1])
    if np.any(rows.sum(-1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > rows.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    out = R.multinomial(_gen(generator), input._host(), num_samples, replacement)
    return Tensor._make(_on_device(out, input._device), D.int64, input._device)


def poisson(input, generator=None):
    if input._dtype._category != 2:
        raise _not_implemented("poisson_cpu", input._dtype)
    data = R.poisson(_gen(generator), input._host()).astype(input._dtype.np)
    return Tensor._make(_on_device(data, input._device), input._dtype, input._device)



# ----------------------------------------------------------------------------- random fills
def _place(self, values):
    """values (self.size of them, in the order torch fills self: its memory order) as an
    array of self's logical shape."""
    values = np.asarray(values).reshape(-1)
    if self.ndim <= 1 and (self.ndim == 0 or self.strides[0] >= 0) or self.flags.c_contiguous:
        return values.reshape(self.shape)
    out = np.empty(self.size, values.dtype)
    strides = [st // self.itemsize for st in self.strides]
    out[R.fill_order(self.shape, strides)] = values
    return out.reshape(self.shape)


def _in_fill_order(self, array):
    """An array of self's shape, read in the order torch fills self."""
    array = np.broadcast_to(np.asarray(array), self.shape)
    if self.flags.c_contiguous:
        return array.reshape(-1)
    strides = [st // self.itemsize for st in self.strides]
    return array.reshape(-1)[R.fill_order(self.shape, strides)]


def _parts(a):
    """A complex array's real and imaginary parts as a real array of shape a.shape + (2,)
    over the same memory (for complex32, its float16 pairs), whatever a's strides."""
    re = a["real"] if a.dtype.names else a.real
    return np.lib.stride_tricks.as_strided(re, a.shape + (2,), a.strides + (re.itemsize,))


def _random_fill(name, node, draw, inputs=1):
    """x.<name>_(...): fill x in place with draws from a distribution; a primitive so that
    the graph shows PyTorch's node (whose gradient is zero: the values do not depend on x).
    draw(gen, self, *tensors, *args) gives self.size values in torch's fill order. A complex
    x (uniform_, normal_) is filled as its real view: real and imaginary parts interleaved.
    `inputs`: the tensor operands (x, and bernoulli_'s tensor of probabilities)."""
    def forward(xp, self, *tensors, args, gen):
        # the draws come from the CPU generator (torch's CPU stream) and go over once
        device = _backend.of(xp)
        host = device.to_host(self)
        tensors = [device.to_host(t) if hasattr(t, "shape") else t for t in tensors]
        if host.dtype.kind == "c" or host.dtype.names:   # complex (complex32: float16 pairs)
            real = _parts(host)
            vals = _place(real, draw(gen, real, *tensors, *args)).view(host.dtype)
            return device.from_host(vals.reshape(host.shape))
        return device.from_host(_place(host, draw(gen, host, *tensors, *args)))
    if inputs == 1:
        op = primitive(name, node=node)(lambda xp, self, *, args, gen: forward(
            xp, self, args=args, gen=gen))
    else:
        op = primitive(name, node=node)(lambda xp, self, p, *, args, gen: forward(
            xp, self, p, args=args, gen=gen))

    @op.derivative
    def _(ctx, grad):
        return (grad.new_zeros(grad.shape),) * inputs
    return op


def _draw_random(g, self, low, high):
    """random_(): low None; random_(from, None): high None; else [low, high)."""
    if low is None:
        return R.random_full(g, self.size, self.dtype)
    if high is None:
        return R.random_from(g, self.size, self.dtype, low)
    return R.random_range(g, self.size, self.dtype, low, high)


_cauchy = _random_fill("cauchy_", "CauchyBackward0", lambda g, self, median, sigma:
                       R.cauchy(g, self.size, self.dtype, median, sigma))
_log_normal = _random_fill("log_normal_", "LogNormalBackward0", lambda g, self, mean, std:
                           R.log_normal(g, self.size, self.dtype, mean, std))
_geometric = _random_fill("geometric_", "GeometricBackward0", lambda g, self, p:
                          R.geometric(g, self.size, self.dtype, p))
_uniform = _random_fill("uniform_", "UniformBackward0", lambda g, self, a, b:
                        R.uniform(g, self.size, self.dtype, a, b))
_normal = _random_fill("normal_", "NormalBackward0", lambda g, self, mean, std:
                       R.normal(g, self.size, self.dtype, mean, std,
                                contiguous=self.flags.c_contiguous))
_exponential = _random_fill("exponential_", "ExponentialBackward0", lambda g, self, lambd:
                            R.exponential(g, self.size, self.dtype, lambd))
# random_(from, to) / random_(to) / random_(): PyTorch's three overloads, three node names
_randoms = [_random_fill("random_", f"RandomBackward{k}", _draw_random)
            for k in builtins.range(3)]
_bernoulli = _random_fill("bernoulli_", "BernoulliBackward2", lambda g, self, p:
                          R.bernoulli_scalar(g, self.size, p))
_bernoulli_tensor = _random_fill("bernoulli_", "BernoulliBackward1", lambda g, self, p:
                                 R.bernoulli_tensor(g, _in_fill_order(self, p)), inputs=2)


def _check_fill(self):
    """PyTorch refuses a leaf that requires grad before it looks at the fill's arguments."""
    if grad_mode.state.enabled and self._requires_grad:
        check_inplace_allowed(self)


def _continuous_only(self, kind, name=None):
    """name: how the message names the dtype (Cauchy's: the C++ type name)."""
    if self._dtype._category != 2:
        raise RuntimeError(f"{kind} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{(name or _scalar_type_name)(self._dtype)}")


def _scalar_type_name(dtype):
    return scalar_type_name(dtype)


def _cpp_type_name(dtype):
    return _CPP_TYPE_NAMES.get(dtype.name, dtype.name)


# (the C++ type names PyTorch's message prints)
_CPP_TYPE_NAMES = {"int64": "long int", "int32": "int", "int16": "short int",
                   "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
                   "complex32": "c10::complex<c10::Half>", "complex64": "c10::complex<float>",
                   "complex128": "c10::complex<double>"}


def cauchy_(self, median=0, sigma=1, *, generator=None):
    _check_fill(self)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    _continuous_only(self, "Cauchy", _cpp_type_name)
    return _cauchy.inplace(self, args=(median, sigma), gen=_gen(generator))


def log_normal_(self, mean=1, std=2, *, generator=None):
    _check_fill(self)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    if self._dtype._category != 2:
        raise _not_implemented("log_normal_cpu", self._dtype)
    return _log_normal.inplace(self, args=(mean, std), gen=_gen(generator))


def geometric_(self, p, *, generator=None):
    _check_fill(self)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self._dtype is D.bool_ or self._dtype._category == 3:
        raise _not_implemented("geometric_cpu", self._dtype)
    return _geometric.inplace(self, args=(p,), gen=_gen(generator))


def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    _check_fill(self)
    dtype = self._dtype
    if dtype._category < 2:
        raise _not_implemented("check_uniform_bounds", dtype)
    if dtype._category == 2:
        # the bounds and their distance must be finite in self's dtype
        top = D.finfo(dtype).max
        for which, value in (("from", from_), ("to", to)):
            if not -top <= value <= top:
                raise RuntimeError(f"{which} is out of bounds for "
                                   f"{_C_TYPE_NAMES[dtype.name]}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    if dtype._category == 2 and to - from_ > top:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{_scalar_type_name(dtype)}>::max(), but found to={to:g} and "
                           f"from={from_:g} which result in to-from to exceed the limit")
    return _uniform.inplace(self, args=(from_, to), gen=_gen(generator))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    _check_fill(self)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if self._dtype._category < 2:
        raise _not_implemented("normal_kernel_cpu", self._dtype)
    if self._dtype.is_complex:          # the variance is split between the two parts
        std = std / np.sqrt(2)
    return _normal.inplace(self, args=(mean, std), gen=_gen(generator))


def exponential_(self, lambd=1.0, *, generator=None):
    _check_fill(self)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    _continuous_only(self, "Exponential")
    return _exponential.inplace(self, args=(lambd,), gen=_gen(generator))


def random_(self, *args, generator=None, **bounds):
    """random_(): integers from 0 to the most the dtype holds exactly; random_(to): [0, to);
    random_(from, to): [from, to), or from `from` up to that most when to is None."""
    _check_fill(self)
    args += tuple(bounds[k] for k in ("from", "to") if k in bounds)
    dtype = self._dtype
    if not args and dtype.is_complex:
        raise _not_implemented("random_kernel_cpu", dtype)
    if dtype.is_complex:
        _check_random_bounds(0, 1, dtype)      # (raises for complex)
    low, high = (0, args[0]) if len(args) == 1 else args if args else (None, None)
    if low is not None:
        low = _index(low)
    if high is not None:
        high = _index(high)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={low} >= to={high}")
        _check_random_bounds(low, high, dtype)
    # PyTorch's overloads random_(from, to), random_(to), random_(): three node names
    return _randoms[2 - len(args)].inplace(self, args=(low, high), gen=_gen(generator))


def _index(x):
    return int(x.item()) if isinstance(x, Tensor) else x.__index__()


def bernoulli_(self, p=0.5, *, generator=None):
    _check_fill(self)
    g = _gen(generator)
    if isinstance(p, Tensor):
        if self._dtype.is_complex:
            raise _not_implemented("bernoulli_tensor_cpu_self_", self._dtype)
        if p._dtype._category < 2:
            raise _not_implemented("bernoulli_tensor_cpu_p_", p._dtype)
        probs = p._data
        if np.any((probs < 0) | (probs > 1)):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report "
                               "an enhancement request to PyTorch.)")
        return _bernoulli_tensor.inplace(self, p.expand(self.shape), args=(), gen=g)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    if self._dtype.is_complex:
        raise _not_implemented("bernoulli_scalar_cpu_", self._dtype)
    return _bernoulli.inplace(self, args=(p,), gen=g)


# ----------------------------------------------------------------------------- binomial
@primitive("binomial", node="NotImplemented")
def _binomial(xp, count, prob, *, generator):
    device = _backend.of(xp)
    count, prob = np.broadcast_arrays(device.to_host(count), device.to_host(prob))
    draws = R.binomial(_gen(generator), count.astype(np.float64), prob.astype(np.float64))
    return device.from_host(draws.astype(count.dtype))


@_binomial.derivative
def _(ctx, grad):
    raise RuntimeError("derivative for aten::binomial is not implemented")


def binomial(count, prob, generator=None):
    """Samples of Binomial(count, prob), elementwise: torch's recipe (R.binomial)."""
    if not count._dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{scalar_type_name(count._dtype)}")
    if prob._dtype is not count._dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(prob._dtype)} but expected "
                           f"{scalar_type_name(count._dtype)}")
    if count._dtype not in (D.float32, D.float64):
        raise _not_implemented("binomial_cpu", count._dtype)
    return _binomial(count, prob, generator=generator)


__all__ = ['binomial']
