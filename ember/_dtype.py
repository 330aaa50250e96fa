"""dtype objects and PyTorch's type-promotion rules.

A dtype pairs ember's name for a type with the NumPy dtype that stores it. Promotion follows
PyTorch: tensors with dimensions outrank zero-dim tensors, which outrank Python scalars, but a
lower-priority operand still wins when it belongs to a higher *category*
(bool < integer < floating < complex).
"""
import builtins
import warnings

import ml_dtypes
import numpy as np
from ._printing import scalar_type_name

__all__ = []  # the public names are re-exported by ember/__init__.py


class dtype:
    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "_category", "_rank", "_half", "_limited", "_float_kernels", "__weakref__")

    def __init__(self, name, np_dtype, category, rank):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        self.is_signed = name not in ("bool", "uint8", "uint16", "uint32", "uint64",
                                      "float8_e8m0fnu")
        self._category = category   # 0 bool, 1 integer, 2 floating, 3 complex
        self._rank = rank           # order by width inside a category
        # float16/bfloat16: PyTorch's kernels compute these in float32 ("opmath")
        self._half = category == 2 and self.itemsize == 2
        # one of LIMITED_DTYPES (set below): ops go through _dtype_kernels.py
        self._limited = False
        # a floating or complex type NumPy computes in directly (the registry's fast paths)
        self._float_kernels = category >= 2

    def __repr__(self):
        return "ember." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    def to_real(self):
        return {complex32: float16, complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        if self._category < 2:
            raise RuntimeError(f"Unknown Complex ScalarType for {scalar_type_name(self)}")
        return {float16: complex32, complex32: complex32, float64: complex128,
                complex128: complex128}.get(self, complex64)

    @property
    def is_integer(self):
        return self._category == 1


bool_ = dtype("bool", np.bool_, 0, 0)
uint8 = dtype("uint8", np.uint8, 1, 1)
int8 = dtype("int8", np.int8, 1, 1)
int16 = dtype("int16", np.int16, 1, 2)
int32 = dtype("int32", np.int32, 1, 3)
int64 = dtype("int64", np.int64, 1, 4)
float16 = dtype("float16", np.float16, 2, 1)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, 2, 1)
float32 = dtype("float32", np.float32, 2, 2)
float64 = dtype("float64", np.float64, 2, 3)
complex64 = dtype("complex64", np.complex64, 3, 2)
complex128 = dtype("complex128", np.complex128, 3, 3)

# torch's "barebones" unsigned types: tensors of them can be made, converted, compared and
# printed, but torch promotes them with no other type (see _promote_uncached)
uint16 = dtype("uint16", np.uint16, 1, 2)
uint32 = dtype("uint32", np.uint32, 1, 3)
uint64 = dtype("uint64", np.uint64, 1, 4)
_BAREBONES_UNSIGNED = (uint16, uint32, uint64)

# the 8-bit floating types (ml-dtypes stores them): torch makes, converts and prints them but
# promotes them with no other type
float8_e4m3fn = dtype("float8_e4m3fn", ml_dtypes.float8_e4m3fn, 2, 0)
float8_e5m2 = dtype("float8_e5m2", ml_dtypes.float8_e5m2, 2, 0)
float8_e4m3fnuz = dtype("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, 2, 0)
float8_e5m2fnuz = dtype("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, 2, 0)
float8_e8m0fnu = dtype("float8_e8m0fnu", ml_dtypes.float8_e8m0fnu, 2, 0)
_FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)

# complex32 ("chalf", torch's ComplexHalf). NumPy has no complex32: an element is stored as a
# pair of float16 in a structured dtype with the fields "real" and "imag" (4 bytes, the layout
# of torch's c10::complex<Half>), so views, indexing, joins and view_as_real share memory as in
# torch. Arithmetic reads the pairs as complex64 and rounds the results back to float16 pairs
# (see as_complex64 and as_complex32 below); which ops torch's CPU kernels serve for it is
# listed in _dtype_kernels.py.
COMPLEX32_NP = np.dtype([("real", np.float16), ("imag", np.float16)])
complex32 = dtype("complex32", COMPLEX32_NP, 3, 1)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128)
# the types torch makes, converts and prints but computes little with (kept out of ALL_DTYPES,
# the types ember's kernels serve)
LIMITED_DTYPES = (uint16, uint32, uint64) + _FLOAT8 + (complex32,)
for _d in LIMITED_DTYPES:
    _d._limited = True
    _d._float_kernels = False

ALIASES = {
    "bool": bool_, "uint8": uint8, "int8": int8, "int16": int16, "short": int16,
    "int32": int32, "int": int32, "int64": int64, "long": int64, "float16": float16,
    "half": float16, "bfloat16": bfloat16, "float32": float32, "float": float32,
    "float64": float64, "double": float64, "complex64": complex64, "cfloat": complex64,
    "complex128": complex128, "cdouble": complex128, "complex32": complex32,
    "chalf": complex32, "uint16": uint16, "uint32": uint32,
    "uint64": uint64, **{d.name: d for d in _FLOAT8},
}


def _dtype_by_name(name):
    return ALIASES[name]


_FROM_NUMPY = {d.np: d for d in ALL_DTYPES + LIMITED_DTYPES}


def from_numpy_dtype(np_dtype):
    """The ember dtype of a NumPy dtype; PyTorch's errors for types ember has no tensor of."""
    try:
        return _FROM_NUMPY[np_dtype]
    except KeyError:
        pass
    np_dtype = np.dtype(np_dtype)
    if not np_dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported.")
    raise TypeError(
        f"can't convert np.ndarray of type numpy.{np_dtype.type.__name__}. The only "
        "supported types are: float64, float32, float16, complex64, complex128, int64, "
        "int32, int16, int8, uint64, uint32, uint16, uint8, and bool.")


_warned_complex32 = []


def warn_complex32():
    """torch's one warning per process when the first complex32 tensor is made."""
    if not _warned_complex32:
        _warned_complex32.append(True)
        warnings.warn("ComplexHalf support is experimental and many operators don't support it "
                      "yet. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/"
                      "EmptyTensor.cpp:54.)", UserWarning, stacklevel=3)


def as_complex64(a):
    """A complex32 array (float16 pairs) as a new complex64 array of the same values."""
    out = np.empty(a.shape, np.complex64)
    out.real = a["real"]
    out.imag = a["imag"]
    return out


def as_complex32(a):
    """Array `a` (any numeric type) as a new complex32 array: each part rounded to float16 as
    torch rounds (through float32)."""
    out = np.empty(a.shape, COMPLEX32_NP)
    if a.dtype == COMPLEX32_NP:
        out[...] = a
        return out
    if a.dtype == np.bool_:
        a = a.astype(np.float32)
    if a.dtype.kind == "c":
        out["real"] = as_torch_rounds(a.real, np.float16)
        out["imag"] = as_torch_rounds(a.imag, np.float16)
    else:
        out["real"] = as_torch_rounds(a, np.float16)
        out["imag"] = 0
    return out


def as_torch_rounds(a, np_dtype):
    """Array `a` ready to be cast to `np_dtype` as PyTorch rounds: it makes a half (float16 or
    bfloat16) from a float32, so float64 and wide integers reach a half through float32. NumPy
    and ml-dtypes may round once, directly (ml-dtypes 0.7 does for bfloat16); the two differ
    just beside a half-way point between halves, so the detour is explicit here. complex32
    (which NumPy cannot cast) is converted here, both ways."""
    if a.dtype.kind == "V" and a.dtype == COMPLEX32_NP:     # (kind V: structured or ml-dtypes)
        if np.dtype(np_dtype) == COMPLEX32_NP:
            return a
        a = as_complex64(a)
    elif np.dtype(np_dtype) == COMPLEX32_NP:
        return as_complex32(a)
    if a.dtype in _ROUND_VIA_FLOAT32 and np.dtype(np_dtype) in _HALF_NP:
        return a.astype(np.float32)
    target = np.dtype(np_dtype)
    if target == _E4M3FN_NP and a.dtype.kind == "f":
        # torch saturates: what overflows float8_e4m3fn (infinities too) becomes +-448
        return np.where(np.isnan(a), a, np.clip(a, -448.0, 448.0))
    if target == _E8M0_NP and a.dtype.kind in "fiu":
        return np.abs(a)      # float8_e8m0fnu is an exponent only: torch drops the sign
    return a


_HALF_NP = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
_E4M3FN_NP = np.dtype(ml_dtypes.float8_e4m3fn)
_E8M0_NP = np.dtype(ml_dtypes.float8_e8m0fnu)
_ROUND_VIA_FLOAT32 = (np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.int32))


# ----------------------------------------------------------------------------- default dtype
_default = [float32]


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
    if not isinstance(d, dtype) or d not in (float32, float64, float16, bfloat16):
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def default_complex_dtype():
    return complex128 if _default[0] is float64 else complex64


# ----------------------------------------------------------------------------- promotion
_INT_BY_RANK = {1: int8, 2: int16, 3: int32, 4: int64}


def _promote_uncached(a, b):
    if a is b:
        return a
    if a in _FLOAT8 or b in _FLOAT8:
        return _FLOAT8_REFUSED                # (torch refuses: see promote_types)
    if complex32 in (a, b):
        other = b if a is complex32 else a
        if other in (uint16, uint32, uint64):
            return None
        if other in (bool_, float16) or other._category == 1:
            return complex32
        return other.to_complex()         # float32, bfloat16 -> complex64, float64 -> ...
    if a in _BAREBONES_UNSIGNED or b in _BAREBONES_UNSIGNED:
        other = b if a in _BAREBONES_UNSIGNED else a
        if other._category == 2:
            return other                  # a floating type holds them
        return None                       # (torch refuses: see promote_types)
    if a._category < b._category:
        a, b = b, a                       # a now has the higher category
    if b is bool_:
        return a
    cat = a._category
    if cat == 1:                          # two integer types
        if uint8 in (a, b):
            other = b if a is uint8 else a
            return _INT_BY_RANK[builtins.max(other._rank, 2)]
        return a if a._rank >= b._rank else b
    if cat == 2:
        if b._category == 1:
            return a
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a._rank >= b._rank else b
    # complex with anything: keep at least the other's precision
    if b._category == 3:
        return a if a._rank >= b._rank else b
    if b._category == 2 and b is float64:
        return complex128
    return a


class _PromotionTable(dict):
    """(a, b) -> the promoted dtype; a pair torch refuses to promote raises torch's error."""

    def __missing__(self, key):
        a, b = key
        kind = "Float8 Types" if a in _FLOAT8 or b in _FLOAT8 else "uint16, uint32, uint64 types"
        raise RuntimeError(f"Promotion for {kind} is not supported, attempted to promote "
                           f"{scalar_type_name(a)} and {scalar_type_name(b)}")


_FLOAT8_REFUSED = None
_PROMOTE = _PromotionTable(
    ((a, b), p) for a in ALL_DTYPES + LIMITED_DTYPES for b in ALL_DTYPES + LIMITED_DTYPES
    if (p := _promote_uncached(a, b)) is not None)


def promote_types(type1, type2):
    return _PROMOTE[(type1, type2)]


def _combine(higher, lower):
    """Merge the result of a higher-priority operand group with a lower one (may be None)."""
    if lower is None:
        return higher
    if higher is None:
        return lower
    if higher._category == 3:
        return higher
    if lower._category == 3:
        return higher.to_complex() if higher._category == 2 else lower
    if higher._category == 2:
        return higher
    if higher is bool_ or lower._category == 2:
        return _PROMOTE[(higher, lower)]
    return higher


def scalar_dtype(value):
    """The dtype a bare Python number takes when it is an operand (a "wrapped number")."""
    cls = type(value)
    if cls is bool:
        return bool_
    if cls is int:
        return int64
    if cls is float:
        return _default[0]
    if cls is complex:
        return default_complex_dtype()
    if isinstance(value, (np.bool_, bool)):
        return bool_
    if isinstance(value, np.integer):
        return int64
    if isinstance(value, np.floating):
        return _default[0]
    if isinstance(value, np.complexfloating):
        return default_complex_dtype()
    raise TypeError(f"unsupported scalar type {cls.__name__}")


def result_dtype(operands):
    """PyTorch's result type over tensors and Python scalars (import-free: duck-typed on .ndim)."""
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "_dtype", None)
        if d is None:
            s = scalar_dtype(x)
            wrapped = s if wrapped is None else _PROMOTE[(wrapped, s)]
        elif x._data.ndim:
            dim = d if dim is None else _PROMOTE[(dim, d)]
        else:
            zero = d if zero is None else _PROMOTE[(zero, d)]
    return _combine(_combine(dim, zero), wrapped)


def can_cast(from_, to):
    """Whether PyTorch's casting rules allow writing `from_` into `to` (same-kind rule)."""
    return from_._category <= to._category


class finfo:
    """Machine limits of a floating-point dtype (of its real part for a complex one)."""

    def __init__(self, type=None):
        type = type or _default[0]
        if not (type.is_floating_point or type.is_complex):
            # PyTorch's message names the function where one expects the dtype
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        info = ml_dtypes.finfo(type.to_real().np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = float(info.tiny)
        self.smallest_normal = self.tiny
        self.resolution = float(f"1e-{int(info.precision)}")   # exactly 10**-precision
        if type in _FLOAT8:
            self.resolution = 1.0                               # (as torch reports them)
        if type is float8_e5m2fnuz:
            self.eps = 0.125                                    # (torch's value)
        self.dtype = type.to_real().name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype."""

    def __init__(self, type):
        if type is bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type._category > 1:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits = type.itemsize * 8
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = type.name

    def __repr__(self):
        # PyTorch prints the limits as floats in %g style
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
