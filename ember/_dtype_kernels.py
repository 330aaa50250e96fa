"""Which ops torch's CPU kernels serve for its limited dtypes, and torch's error for the others.

torch makes, converts, prints, indexes and joins tensors of uint16/uint32/uint64 and complex32
(ComplexHalf), but many of its CPU kernels are not built for them: a call raises
NotImplementedError naming the kernel, e.g. `"add_stub" not implemented for 'UInt16'`. NumPy
would compute them all, so the refusals are listed here, as found by experiment with torch 2.13,
keyed by ember's op names (ops/registry.py); the registry calls `run` for every op whose compute
dtype (or, for an op that does not promote, whose tensor input's dtype) is one of these.

complex32 is stored as float16 pairs (see _dtype.py); an op torch serves for it runs here on
complex64 copies of its operands and its results are rounded back: complex ones to complex32,
float32 ones (abs, norms) to float16. Views run on the pairs themselves, so they share memory.
"""
import numpy as np

from . import _dtype as D
from ._printing import scalar_type_name

# torch's kernel name for each op it refuses on uint16, uint32 and uint64 (CPU)
_UNSIGNED_REFUSED = {
    "add": "add_stub", "add.Scalar": "add_stub", "sub": "add_stub", "sub.Scalar": "add_stub",
    "rsub": "add_stub", "neg": "neg_cpu", "abs": "abs_cpu", "sign": "sign_cpu",
    "remainder": "remainder_cpu", "remainder.scalar": "remainder_cpu", "fmod": "fmod_cpu",
    "fmod.scalar": "fmod_cpu", "pow": "pow", "pow.scalar_base": "pow", "pow.tensor": "pow",
    "max": "max_all", "min": "min_all", "max.dim": "max_cpu", "min.dim": "min_cpu",
    "amax": "max_values_cpu", "argmax": "argmax_cpu", "argmin": "argmin_cpu",
    "maximum": "maximum_cpu", "minimum": "minimum_cpu",
    "lt": "lt_cpu", "le": "le_cpu", "gt": "gt_cpu", "ge": "ge_cpu",
    "clamp": "clamp_scalar_cpu", "clamp.tensor": "clamp_cpu", "clamp_min": "clamp_min_scalar_cpu",
    "clamp_max": "clamp_max_scalar_cpu", "relu": "clamp_min_scalar_cpu",
    "bitwise_left_shift": "lshift_cpu", "bitwise_right_shift": "rshift_cpu",
    "mm": "addmm_impl_cpu_", "addmm": "addmm_impl_cpu_", "bmm": "bmm", "mv": "addmv_impl_cpu",
    "addmv": "addmv_impl_cpu", "dot": "dot", "flip": "flip_cpu", "topk": "topk_cpu",
    # (not registry ops: their functions call check())
    "nonzero": "nonzero_count_cpu", "count_nonzero": "nonzero_count_cpu",
}

# torch's kernel name for each op it refuses on the float8 types (CPU); mul and div with a
# number operand go to torch's "reduced float" kernels (see refusal)
_FLOAT8_REFUSED = {
    **{name: kernel for name, kernel in _UNSIGNED_REFUSED.items()
       if name not in ("abs", "mm", "addmm")},
    "div": "div_cpu", "div.Scalar": "div_cpu_reduced_float", "mul.Scalar":
    "mul_cpu_reduced_float", "sum": "sum_cpu", "sum.dim": "sum_cpu", "mean": "sum_cpu",
    "mean.dim": "sum_cpu", "prod": "prod_out_cpu", "prod.dim": "prod_out_cpu",
    "cumsum": "cumsum_out_cpu", "cumprod": "cumprod_out_cpu",
    "sort": "sorting_kernel_method_name", "exp": "exp_vml_cpu", "sqrt": "sqrt_vml_cpu",
    "floor": "floor_vml_cpu", "round": "round_vml_cpu", "sigmoid": "sigmoid_cpu_reduced_float",
    "bitwise_and": "bitwise_and_cpu", "bitwise_or": "bitwise_or_cpu",
    "bitwise_xor": "bitwise_xor_cpu", "isclose": "mul_cpu_reduced_float",
}

# torch's kernel name (or whole error) for each op it refuses on complex32 (CPU)
_COMPLEX32_REFUSED = {
    "div": "div_cpu", "div.Scalar": "div_cpu", "div.rounding": "div_cpu",
    "reciprocal": "reciprocal_cpu", "rsqrt": "rsqrt_cpu", "angle": "angle_cpu",
    "exp": "exp_vml_cpu", "log": "log_vml_cpu", "log10": "log10_vml_cpu",
    "log1p": "log1p_vml_cpu", "expm1": "expm1_vml_cpu", "sqrt": "sqrt_vml_cpu",
    "sin": "sin_vml_cpu", "cos": "cos_vml_cpu", "tan": "tan_vml_cpu", "tanh": "tanh_vml_cpu",
    "asin": "asin_vml_cpu", "atan": "atan_vml_cpu", "sinh": "sinh_cpu", "cosh": "cosh_cpu",
    "exp2": "exp2", "sigmoid": "sigmoid_cpu", "pow": "pow", "pow.scalar_base": "pow",
    "pow.tensor": "pow", "sum": "sum_cpu", "sum.dim": "sum_cpu", "mean": "sum_cpu",
    "mean.dim": "sum_cpu", "prod": "prod_out_cpu", "prod.dim": "prod_out_cpu",
    "cumsum": "cumsum_out_cpu", "cumprod": "cumprod_out_cpu", "max": "max_all",
    "min": "min_all", "lt": "lt_cpu", "le": "le_cpu", "gt": "gt_cpu", "ge": "ge_cpu",
    "mm": "addmm_impl_cpu_", "addmm": "addmm_impl_cpu_", "bmm": "bmm", "mv": "addmv_impl_cpu",
    "addmv": "addmv_impl_cpu", "dot": "dot", "vdot": "vdot", "trace": "trace",
    "flip": "flip_cpu", "gather": "scatter_gather_tensor_cpu",
    "scatter": "scatter_gather_tensor_cpu", "scatter.value": "scatter_gather_tensor_cpu",
    "scatter_add": "scatter_gather_tensor_cpu", "take": "take_cpu",
    "lerp": "lerp_kernel_scalar", "lerp.tensor": "lerp_kernel_tensor",
    "nan_to_num": "nan_to_num", "softmax": "softmax_lastdim_kernel_impl",
}

# refusals worded otherwise (the op, the dtype) -> torch's error
_ERRORS = {("_fft_c2c", D.complex32): RuntimeError("MKL FFT doesn't support tensors of type: "
                                                   "Half"),
           **{(name, D.float8_e8m0fnu): NotImplementedError(
               f"\"{kernel}\" not implemented for 'Float8_e8m0fnu'")
              for name, kernel in (("abs", "abs_cpu"), ("mm", "addmm_impl_cpu_"),
                                   ("addmm", "addmm_impl_cpu_"))}}
# float8 products torch serves: computed in float32, rounded to the operands' type
_FLOAT8_PRODUCTS = ("mm", "addmm")

# complex32 ops that run on the float16 pairs themselves (they copy or convert elements
# without arithmetic, or handle complex32 on their own: the random fills draw into the
# float16 parts in memory order, ops/random.py)
_COMPLEX32_DIRECT = {"_to_copy", "clone", "view_as_real", "view_as_real_copy", "uniform_",
                     "normal_"}


def _addcmul_complex32(xp, self, tensor1, tensor2, *, value):
    # torch computes in complex32 step by step: value (rounded to it) times tensor1, rounded,
    # times tensor2, rounded, added to self
    value = complex(_round(np.complex64(value)))
    return self + _round(_round(value * tensor1) * tensor2)


def _round(a):
    return D.as_complex64(D.as_complex32(np.asarray(a)))


def _add_complex32(xp, self, other, *, alpha=1):
    return self + (other if alpha == 1 else _round(alpha * other))


def _sub_complex32(xp, self, other, *, alpha=1):
    return self - (other if alpha == 1 else _round(alpha * other))


def _rsub_complex32(xp, self, *, other, alpha=1):
    return other - (self if alpha == 1 else _round(alpha * self))


# complex32 ops whose torch kernels round an intermediate to complex32 (their forward here
# takes the complex64 copies, like the op's own)
_COMPLEX32_FORMS = {"addcmul": _addcmul_complex32, "add": _add_complex32,
                    "sub": _sub_complex32, "rsub": _rsub_complex32}
# the options that are operands' values: torch makes a number given there complex32 first
_VALUE_OPTIONS = ("alpha", "other", "value")


def refusal(name, dtype, params=None):
    """torch's NotImplementedError for op `name` on `dtype`, or None where torch computes it."""
    if dtype is D.complex32:
        kernel = _COMPLEX32_REFUSED.get(name)
    elif dtype in D._BAREBONES_UNSIGNED or dtype in D._FLOAT8:
        kernel = (_UNSIGNED_REFUSED if dtype in D._BAREBONES_UNSIGNED else
                  _FLOAT8_REFUSED).get(name)
        if name == "div.rounding":
            kernel = f"div_{params['rounding_mode']}_cpu"
    else:
        kernel = None
    if kernel is None:
        return None
    return NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dtype)}'")


def check(name, dtype):
    """Raise torch's error if its CPU kernels refuse `name` on `dtype` (for the functions that
    are not registry ops)."""
    if dtype._limited:
        error = refusal(name, dtype)
        if error is not None:
            raise error


def limited_dtype(inputs, dtype):
    """The limited dtype an op computes in: its promoted `dtype`, or (for an op that does not
    promote) its first tensor input's; None when that is an ordinary dtype."""
    if dtype is not None:
        return dtype if dtype._limited else None
    for x in inputs:
        d = getattr(x, "_dtype", None)
        if d is not None:
            return d if d._limited else None
    return None


def run(op, dtype, xp, arrays, params):
    """Op `op`'s forward for operands of the limited dtype `dtype` (see the module's doc)."""
    target = params.get("dtype")
    if dtype is D.complex32 and isinstance(target, D.dtype) and not target._limited:
        # a reduction into another dtype (x.sum(dtype=torch.cfloat)): torch's kernel reads
        # the pairs as that dtype, which it serves
        return op.forward(xp, *[_as_complex64(a) for a in arrays], **params)
    name = op.name
    if name in ("mul", "div") and dtype in D._FLOAT8 and \
            any(not isinstance(a, np.ndarray) for a in arrays):
        name += ".Scalar"           # (a number operand: torch's reduced-float kernel)
    error = _ERRORS.get((name, dtype)) or refusal(name, dtype, params)
    if error is not None and (op.name != "flip" or _flips_innermost(arrays[0], params)):
        raise error
    if dtype in D._FLOAT8 and name in _FLOAT8_PRODUCTS:
        out = op.forward(xp, *arrays, **params)
        return D.as_torch_rounds(out, dtype.np).astype(dtype.np)
    if dtype is not D.complex32 or op.view or op.name in _COMPLEX32_DIRECT:
        return op.forward(xp, *arrays, **params)
    wide = [_as_complex64(a) for a in arrays]
    params = {k: _as_complex64(v) if k in _VALUE_OPTIONS else v for k, v in params.items()}
    out = _COMPLEX32_FORMS.get(op.name, op.forward)(xp, *wide, **params)
    if isinstance(out, (tuple, list)):
        return type(out)(_narrow(o) for o in out)
    return _narrow(out)


def _flips_innermost(a, params):
    # torch flips other dims by a strided copy, which any dtype has; only a dim of element
    # stride 1 needs its flip kernel
    return any(a.strides[d] == a.itemsize for d in params["dims"])


def _as_complex64(a):
    if a.__class__ in (int, float, complex):     # a Python number: torch makes it complex32
        return complex(_round(np.complex64(a)))
    dtype = getattr(a, "dtype", None)
    if dtype is None or dtype.kind in "biu?":
        return a
    if dtype == D.COMPLEX32_NP:
        return D.as_complex64(a)
    if dtype.kind in "fc":      # another operand promoted to complex32: rounded to it first
        return D.as_complex64(D.as_complex32(np.asarray(a)))
    return a


def _narrow(out):
    """A result computed from complex64 copies, in the dtype torch gives it for complex32."""
    dtype = getattr(out, "dtype", None)
    if dtype is None:
        return out
    if dtype.kind == "c":
        return D.as_complex32(np.asarray(out))
    if dtype == np.float32:
        return np.asarray(out).astype(np.float16)
    return out
