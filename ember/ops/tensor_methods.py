"""Tensor's method table: every method and operator of Tensor that its class body does not
define is declared here, once, as data, and bound by one binder.

The kinds (each a table below, each with one idiom):
  * OP_METHODS / OTHER_METHODS: x.op(...) is the op's function (or a method form of it, when the
    method's arguments differ from the function's); the one-input pointwise ops take their
    op's fast path first (registry.Op.unary_method);
  * INPLACE_VIA: x.op_(...) computes op out of place and writes the result into x;
    INPLACE_OWN: the in-place forms that are an op's own (their node saves x as it was);
  * OPERATORS / REFLECTED / INPLACE_OPERATORS: a + b, 2 - a, a += b;
  * PROPERTIES: x.T, x.real, ...;
  * TENSOR_ONLY / CAST_CHECKED: argument checks PyTorch makes before the op (they wrap the
    method declared above them).
`_bind` refuses a name bound twice (here, or in the class body): import fails.
"""
import warnings

import numpy as np

from .. import _dtype as D
from . import hooks as _hooks
from ..autograd import forward_ad
from .._names import _PYTHON_METHODS, _named_function, _renamed
from .._tensor import Tensor
from ..sparse._methods import METHODS as SPARSE_METHODS   # (to_dense, indices, coalesce, ...)
from .removed import METHODS as REMOVED_METHODS     # (eig, lstsq, ...: torch's removal errors)
from .legacy_methods import METHODS as LEGACY_METHODS    # (storage, map2_, module_load, ...)
from . import (_pointwise_common as _PC, arithmetic as A, blas, calculus, comparison as CMP,
               complex as CV, creation, indexing, linalg_decompositions as LD,
               linalg_solvers as LS, logical as LG, norms, pointwise as P, pointwise_inplace as PI,
               pointwise_math as PM, random, reduction as R, scan, scatter_gather as SG, shape,
               softmax, sorting, special, special_bessel, spectral, statistics, tensor_info,
               view_copies, views as V)
from ._pointwise_common import CPP_NAMES
from ._utils import wrap_dim
from .creation import _sizes, _check_sizes
from .registry import check_inplace_allowed
from .inplace_via import _inplace_via


# ============================================================================= method forms
# (the functions the tables below bind, where a method is not an op's function itself)
def _sort(self, dim=-1, descending=False, stable=False):
    sorting.check_sort_dim("sort", dim, descending, method=True)
    return sorting.sort(self, dim, descending, stable)


def _argsort(self, dim=-1, descending=False, stable=False):
    sorting.check_sort_dim("argsort", dim, descending, method=True)
    return sorting.argsort(self, dim, descending, stable)


# ----------------------------------------------------------------------------- in-place methods
def _unsqueeze_(self, dim):
    return _set_view_shape(self, V.unsqueeze(self, dim))


def _squeeze_(self, dim=None):
    return _set_view_shape(self, V.squeeze(self, dim))


def _t_(self):
    return _set_view_shape(self, V.t(self))


def _transpose_(self, d0, d1):
    return _set_view_shape(self, V.transpose(self, d0, d1))


# PyTorch's node names for the in-place forms (the overloads after the out-of-place ones)
_INPLACE_VIEW_NODE_NAMES = {
    "SqueezeBackward0": "SqueezeBackward3", "SqueezeBackward1": "SqueezeBackward4",
    "SqueezeBackward2": "SqueezeBackward5", "UnsqueezeBackward0": "UnsqueezeBackward1",
    "TBackward0": "TBackward1", "TransposeBackward0": "TransposeBackward1",
    "AsStridedBackward0": "AsStridedBackward1"}


_inplace_view_node_classes = {}


def _inplace_view_node(cls):
    """The node class of an in-place view op: the view op's own, under PyTorch's name."""
    name = _INPLACE_VIEW_NODE_NAMES.get(cls.__name__)
    if name is None:
        return cls
    sub = _inplace_view_node_classes.get(cls)
    if sub is None:
        sub = _inplace_view_node_classes[cls] = type(name, (cls,), {"__slots__": ()})
    return sub


def _as_strided_(self, size, stride, storage_offset=None):
    return _set_view_shape(self, V.as_strided(self, size, stride, storage_offset))


def _set_view_shape(self, result):
    """The in-place view ops: self takes the view's geometry, and its history when it has one
    (x.unsqueeze_() then has grad_fn UnsqueezeBackward1). PyTorch counts them as writes: the
    version counter bumps."""
    node = result._grad_fn
    if node is not None:
        check_inplace_allowed(self)
        node.__class__ = _inplace_view_node(type(node))
        self._grad_fn, self._output_nr = node, result._output_nr
    self._data = result._data
    self._version_counter.bump()
    self._fn_version = self._version_counter.value       # (a view keeps the history just set)
    return self


# ----------------------------------------------------------------------------- operators
def _primitive_inplace(op, check):
    """x.add_(y) and the like: the primitive's own inplace()."""
    def method(self, other, *, alpha=None, _op=op, _check=check, **kw):
        if _check is not None and _op.name == "sub":
            _check(self, other)
        if alpha is not None:
            _PC._check_alpha(self, other, alpha)
            kw["alpha"] = alpha
        return _op.inplace(self, other, **kw)
    return method


def _reflect(fn):
    return lambda self, other: fn(other, self) if isinstance(other, Tensor) else \
        _reflected_scalar(fn, self, other)


def _reflected_scalar(fn, self, other):
    return fn(other, self)      # the pointwise ops take a number first (2 - x, 1 / x, 2 ** x)


def _binary(fn):
    def op(self, other):
        if not isinstance(other, (Tensor, int, float, bool, complex)) and \
                not hasattr(other, "dtype"):
            return NotImplemented
        return fn(self, other)
    return op


def _eq(self, other):
    if other is None:
        return False
    return _binary(CMP.eq)(self, other)


def _ne(self, other):
    if other is None:
        return True
    return _binary(CMP.ne)(self, other)


# ----------------------------------------------------------------------------- dtype shorthands
def _caster(dtype):
    return lambda self, memory_format=None: self.to(dtype)


def _new_size(name, size):
    """The size of x.new_*(size), checked with PyTorch's errors (naming the method)."""
    shape = creation._sizes(name, size)
    creation._check_sizes(shape)
    return shape


def _new(factory, name):
    def method(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False, **kw):
        if "size" in kw:                            # (size may be given by keyword too)
            if size:
                raise TypeError(f"{name}() got multiple values for argument 'size'")
            size = (kw.pop("size"),)
        if not size:
            raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
        if kw:
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")
        return factory(_new_size(name, size), dtype=dtype or self._dtype,
                       device=device or self._device, requires_grad=requires_grad)
    return method


def _legacy_new(self, *args, device=None):
    """x.new(...): the legacy constructor with x's dtype and device."""
    return creation.legacy_tensor(Tensor, args, device=device or self._device,
                                  fixed_dtype=self._dtype)


def _resize_(self, *sizes):
    """Resize in place, as PyTorch: the tensor becomes contiguous over its storage from its
    storage offset; shrinking keeps the storage (growing back shows the old values), growing
    past the storage reallocates it with the old contents in front (new elements are zero)."""
    shape = _sizes("resize_", sizes)
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if any(s < 0 for s in shape) and 0 not in shape:
        # PyTorch multiplies the sizes as unsigned numbers: a negative one overflows. (With a
        # zero size too it makes a tensor of negative size, which ember refuses below.)
        raise RuntimeError("numel: integer multiplication overflow")
    _check_sizes(shape)
    # a tensor with a forward-AD tangent is refused, after the resize (as PyTorch does)
    dual = forward_ad._levels and forward_ad.tangent_of(self) is not None
    if shape != self._data.shape:   # (same size: nothing changes (strides, version) in PyTorch)
        n = int(np.prod(shape))
        offset = self.storage_offset()
        root = self._storage_root()
        storage = _storage_of(root)
        if offset + n > storage.size:
            grown = np.zeros(offset + n, self._dtype.np)
            grown[:storage.size] = storage
            storage = grown
            root._get_extra()["storage"] = storage
            if root is not self:
                # the base keeps its geometry over the reallocated storage
                root._data = V.strided_view(storage, root._data.shape,
                                            V.element_strides(root._data), 0)
        self._data = storage[offset:offset + n].reshape(shape)
        self._version_counter.bump()
    if dual:
        raise RuntimeError("cannot resize variables that has a forward grad")
    return self


def _storage_of(root):
    """The flat memory a root tensor owns (kept whole across a shrinking resize_)."""
    extra = root._extra
    storage = extra.get("storage") if extra else None
    if storage is None:
        data = root._data
        strides = V.element_strides(data)
        if data.flags.c_contiguous:
            storage = data.reshape(-1)
        else:
            storage = V.strided_view(data, (V._extent(data.shape, strides, 0),), (1,), 0)
        root._get_extra()["storage"] = storage
    return storage


def _resize(self, *sizes):
    """The deprecated non-inplace resize: only a reshape (same element count), as a view."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    shape = _sizes("resize", sizes)
    n = int(np.prod(shape))
    if n != self._data.size:
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({n} elements "
            f"in total), but the given tensor has a size of "
            f"{'x'.join(map(str, self.shape))} ({self._data.size} elements). autograd's resize "
            f"can only change the shape of a given tensor, while preserving the number of "
            f"elements. ")
    return V._resize_view(self.contiguous(), shape=shape)


def _cast_checked(method):
    """An in-place bitwise method that refuses a result dtype self cannot hold before the
    kernel's own dtype check (x_int.bitwise_and_(t_float) is a cast error, as in PyTorch)."""
    def checked(self, other):
        PI._check_inplace_cast(self, other)
        return method(self, other)
    return checked


def _scan_inplace(name, op):
    """cumsum_/cumprod_: the scan's own in-place form, run in self's dtype (no int64
    widening); a dtype= must be that dtype."""
    def method(self, dim, *, dtype=None):
        if dtype is not None and dtype is not self._dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype "
                               f"{CPP_NAMES[self._dtype.name]} and output tensor dtype "
                               f"{CPP_NAMES[dtype.name]} should match")
        if self._dtype is D.bool_:
            raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'Bool\'')
        return op.inplace(self, dim=wrap_dim(dim, self._data.ndim), dtype=self._dtype)
    return method


def _positive(self):
    if self._dtype is D.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def _is_nonzero(self):
    n = self._data.size
    if n != 1:
        raise RuntimeError(f"Boolean value of Tensor with "
                           f"{'no values' if n == 0 else 'more than one value'} is ambiguous")
    return bool(self._data.reshape(()))


def _functional(name):
    """A method that is ember.nn.functional's op (nn, built on this module, hands it over
    through ops.hooks when it is imported)."""
    def method(self, *args, **kwargs):
        return _hooks.nn_functions[name](self, *args, **kwargs)
    method.__name__ = name
    return method


# ----------------------------------------------------------------------------- Tensor-only args
def _tensor_only(method, name, arg):
    """x.<name>(number) for a method with no Number overload: PyTorch's TypeError names the
    method and the argument as the first after self (the functions say position 2)."""
    def checked(self, *args, **kwargs):
        if args or arg in kwargs:
            CMP._require_tensor_arg(name, args[0] if args else kwargs[arg], arg)
        return method(self, *args, **kwargs)
    checked.__name__ = name
    return checked




# ============================================================================= the tables
# x.op(...) is the op's function, called with the tensor first; a one-input call of a
# differentiable op takes the op's fast path (registry.Op.unary_method)
POINTWISE_METHODS = {
    A: ["add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow",
        "float_power", "atan2", "arctan2", "maximum", "minimum", "fmax", "fmin", "square"],
    P: ["neg", "negative", "abs", "absolute", "sign", "sgn", "reciprocal", "sqrt", "rsqrt", "exp",
        "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
        "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan",
        "arcsinh", "arccosh", "arctanh", "sigmoid", "erf", "erfc", "erfinv", "relu", "floor",
        "ceil", "trunc", "fix", "frac", "round", "logit", "nan_to_num", "clamp", "clip",
        "clamp_min", "clamp_max", "masked_fill", "lerp", "addcmul", "addcdiv", "isnan", "isinf",
        "isfinite", "isposinf", "isneginf", "signbit"],
    CMP: ["eq", "ne", "lt", "le", "gt", "ge", "less", "less_equal", "greater", "greater_equal",
          "not_equal", "isclose", "allclose", "equal"],
    LG: ["logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
         "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift"],
}
# x.op(...) is the op's function, called with the tensor first
OP_METHODS = {
    A: ["logaddexp", "logaddexp2", "hypot", "copysign", "heaviside", "nextafter", "ldexp", "gcd",
        "lcm"],
    R: ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std",
        "logsumexp", "all", "any", "sum_to_size", "count_nonzero", "nanmean", "nansum", "aminmax",
        "trace"],
    norms: ["norm", "dist", "renorm"],
    softmax: ["softmax", "log_softmax"],
    scan: ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"],
    V: ["view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "squeeze", "unsqueeze",
        "permute", "movedim", "transpose", "t", "expand", "expand_as", "narrow", "select",
        "unbind", "split", "chunk", "tensor_split", "diagonal", "unfold", "as_strided", "adjoint"],
    SG: ["gather", "scatter", "scatter_add", "put", "masked_scatter", "scatter_reduce",
         "select_scatter", "slice_scatter", "diagonal_scatter", "index_reduce",
         "as_strided_scatter"],
    indexing: ["index_select", "masked_select", "nonzero", "index_add", "index_put", "argwhere",
               "take", "take_along_dim", "index_fill", "index_copy", "diag", "nonzero_static"],
    sorting: ["topk", "kthvalue", "msort", "unique", "unique_consecutive"],
    shape: ["fliplr", "flipud", "roll", "repeat", "tril", "triu", "broadcast_to",
            "repeat_interleave", "rot90", "diag_embed", "diagflat", "hsplit", "vsplit", "dsplit",
            "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"],
    blas: ["matmul", "mm", "bmm", "mv", "dot", "outer", "ger", "addmm", "inner_product", "kron",
           "inner", "addmv", "addr", "baddbmm", "addbmm", "matrix_power", "cross"],
    creation: ["clone", "contiguous", "to", "new_empty_strided"],
    special: ["xlogy"],
    PM: ["lgamma", "digamma", "deg2rad", "rad2deg", "sinc", "angle", "frexp"],
    statistics: ["median", "nanmedian", "mode", "quantile", "nanquantile", "bincount", "histc",
                 "cov", "corrcoef", "histogram"],
    calculus: ["diff"],
    LS: ["inverse", "det", "logdet", "slogdet", "pinverse", "cholesky_solve", "cholesky_inverse",
         "triangular_solve"],
    LD: ["cholesky", "matrix_exp", "geqrf", "orgqr"],
    special_bessel: ["i0"],
    CV: ["conj", "vdot", "conj_physical", "isreal", "is_conj", "is_neg", "resolve_conj",
         "resolve_neg"],
    tensor_info: ["is_inference", "apply_", "map_", "is_pinned", "pin_memory", "is_shared",
                  "share_memory_", "set_", "as_subclass"],
    spectral: ["stft", "istft"],
    random: ["multinomial"],
}
# methods that are a function under another name, or a method form of the op
OTHER_METHODS = {
    "flip": shape.flip_method, "tile": shape.tile_method, "sort": _sort, "argsort": _argsort,
    "svd": LD.svd_old, "qr": LD.qr_old, "lu": LD.lu_old, "lu_solve": LD.lu_solve_old,
    "swapaxes": V.transpose, "swapdims": V.transpose, "moveaxis": V.movedim,
    "nelement": Tensor.numel,
    "multiply": A.mul, "subtract": A.sub, "divide": A.div,
    "__getitem__": indexing.getitem, "__setitem__": indexing.setitem,
    "dim_order": lambda self: tuple(range(self._data.ndim)),
    "new_zeros": _new(creation.zeros, "new_zeros"), "new_ones": _new(creation.ones, "new_ones"),
    "new_empty": _new(creation.empty, "new_empty"),
    "new_full": lambda self, size, fill_value, *, dtype=None, device=None, requires_grad=False:
        creation.full(_new_size("new_full", (size,)), fill_value, dtype=dtype or self._dtype,
                      device=device or self._device, requires_grad=requires_grad),
    "type_as": lambda self, other: self.to(other._dtype),
    "new": _legacy_new,
    "bernoulli": lambda self, p=None, *, generator=None: random.bernoulli(self, p,
                                                                          generator=generator),
    "resize": _resize,
    "polygamma": lambda self, n: special.polygamma(n, self),
    "mvlgamma": special.mvlgamma_method,
    "igamma": special._igamma_method, "igammac": special._igammac_method,
    "where": lambda self, condition, other: P.where(condition, self, other),
    "ravel": lambda self: self.contiguous().view(-1),   # torch: a view of the contiguous copy
    "is_same_size": lambda self, other: self.shape == other.shape,
    "split_with_sizes": lambda self, split_sizes, dim=0: V.split(self, list(split_sizes), dim),
    "positive": _positive, "is_nonzero": _is_nonzero,
    "hardshrink": _functional("hardshrink"), "prelu": _functional("prelu"),
    "is_distributed": lambda self: False,
    "narrow_copy": view_copies._narrow_copy_method,
    "__dlpack__": lambda self, **kwargs: self._data.__dlpack__(**kwargs),
    "__dlpack_device__": lambda self: self._data.__dlpack_device__(),
    # dtype shorthands: x.float() is x.to(float32)
    **{name: _caster(dtype) for name, dtype in {
        "float": D.float32, "double": D.float64, "half": D.float16, "bfloat16": D.bfloat16,
        "long": D.int64, "int": D.int32, "short": D.int16, "char": D.int8, "byte": D.uint8,
        "bool": D.bool_, "chalf": D.complex32, "cfloat": D.complex64, "cdouble": D.complex128}.items()},
}

# x.op_(...): op computed out of place (by the method above), then written into x
INPLACE_VIA = ["tril", "triu", "index_add", "logical_and", "logical_or", "logical_xor",
               "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
               "bitwise_left_shift", "bitwise_right_shift", "addmm"]

# the in-place forms that are an op's own (or an in-place function of the op's module)
INPLACE_OWN = {
    **PI.INPLACE,       # the differentiable pointwise primitives' (their nodes save x as it was)
    **{name: getattr(module, name) for module, names in [
        (SG, ["scatter_", "scatter_add_", "put_", "masked_scatter_", "scatter_reduce_",
              "index_reduce_"]),
        (indexing, ["index_put_", "index_fill_", "index_copy_"]),
        (shape, ["fill_diagonal_"]), (creation, ["copy_", "fill_", "zero_"]),
        (special, ["xlogy_", "mvlgamma_", "igamma_", "igammac_"]),
        (A, ["copysign_", "ldexp_", "gcd_", "lcm_"]), (special_bessel, ["i0_"]),
        (CV, ["conj_physical_"]), (norms, ["renorm_"]),
        (random, ["cauchy_", "log_normal_", "geometric_", "uniform_", "normal_",
                  "exponential_", "random_", "bernoulli_"])] for name in names},
    "add_": _primitive_inplace(A._add, A._check_bool_sub),
    "sub_": _primitive_inplace(A._sub, A._check_bool_sub),
    "mul_": _primitive_inplace(A._mul, None),
    "sgn_": PI._unary_inplace(P.sgn),     # (its node saves the result)
    "hypot_": lambda self, other: A._hypot.inplace(self, other),
    "heaviside_": lambda self, values: A._heaviside.inplace(self, values),
    "nextafter_": lambda self, other: A._nextafter.inplace(self, other),
    "polygamma_": lambda self, n: special._polygamma.inplace(self, n=n),
    **{fn.__name__ + "_": fn.inplace for fn in (PM.lgamma, PM.digamma, PM.deg2rad, PM.rad2deg,
                                                  PM.sinc)},
    **{name + "_": blas._inplace_product(getattr(blas, name))
       for name in ("addmv", "addr", "baddbmm", "addbmm")},
    "cumsum_": _scan_inplace("cumsum", scan._cumsum),
    "cumprod_": _scan_inplace("cumprod", scan._cumprod),
    # the in-place view ops: x takes the view's geometry
    "unsqueeze_": _unsqueeze_, "squeeze_": _squeeze_, "t_": _t_, "as_strided_": _as_strided_,
    "transpose_": _transpose_, "swapdims_": _transpose_, "swapaxes_": _transpose_,
    "resize_": _resize_,
    "resize_as_": lambda self, other, memory_format=None: _resize_(self, tuple(other.shape)),
}
# in-place aliases: the same method as another in-place name
INPLACE_ALIASES = {"multiply_": "mul_", "subtract_": "sub_", "greater_": "gt_",
                   "greater_equal_": "ge_", "less_": "lt_", "less_equal_": "le_",
                   "not_equal_": "ne_"}

# operators; the arithmetic ones take the op's own fast path first (registry.Op.operator)
OPERATORS = {
    "__add__": A._add.operator(_binary(A.add)), "__sub__": A._sub.operator(_binary(A.sub)),
    "__mul__": A._mul.operator(_binary(A.mul)), "__truediv__": A._div.operator(_binary(A.div)),
    "__floordiv__": _binary(A.floor_divide), "__mod__": _binary(A.remainder),
    "__pow__": _binary(A.pow), "__matmul__": lambda self, other: blas.matmul(self, other),
    "__neg__": P.neg, "__pos__": lambda self: self, "__abs__": P.abs, "__invert__": LG.invert,
    "__and__": _binary(LG.bitwise_and), "__or__": _binary(LG.bitwise_or),
    "__xor__": _binary(LG.bitwise_xor), "__lshift__": _binary(LG.bitwise_left_shift),
    "__rshift__": _binary(LG.bitwise_right_shift),
    "__lt__": _binary(CMP.lt), "__le__": _binary(CMP.le), "__gt__": _binary(CMP.gt),
    "__ge__": _binary(CMP.ge), "__eq__": _eq, "__ne__": _ne,
}
# reflected operators (2 - x): the op with the operands swapped; the commutative ones are the
# operator itself
REFLECTED = {"__rsub__": _reflect(A.sub), "__rtruediv__": _reflect(A.div),
             "__rfloordiv__": _reflect(A.floor_divide), "__rmod__": _reflect(A.remainder),
             "__rpow__": _reflect(A.pow), "__rlshift__": _reflect(LG.bitwise_left_shift),
             "__rrshift__": _reflect(LG.bitwise_right_shift),
             "__rmatmul__": lambda self, other: blas.matmul(other, self),
             "__radd__": "__add__", "__rmul__": "__mul__", "__rand__": _binary(LG.bitwise_and),
             "__ror__": _binary(LG.bitwise_or), "__rxor__": _binary(LG.bitwise_xor)}
# x op= y: the in-place method
INPLACE_OPERATORS = {"__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_",
                     "__itruediv__": "div_", "__ifloordiv__": "floor_divide_",
                     "__imod__": "remainder_", "__ipow__": "pow_", "__iand__": "bitwise_and_",
                     "__ior__": "bitwise_or_", "__ixor__": "bitwise_xor_",
                     "__ilshift__": "bitwise_left_shift_", "__irshift__": "bitwise_right_shift_"}

PROPERTIES = {
    "T": V.T, "mT": V.mT, "H": lambda self: V.T(self).conj(), "mH": V.mH, "real": CV.real,
    "imag": CV.imag,
    # devices and layouts ember has no tensors of
    **{name: lambda self: False for name in (
        "is_xpu", "is_mps", "is_ipu", "is_mtia", "is_maia", "is_vulkan", "is_xla", "is_mkldnn",
        "is_nested")},
    "is_sparse_csr": lambda self: getattr(self._data, "layout", None) == "torch.sparse_csr",
}

# methods with no Number overload: PyTorch's TypeError for a number names the argument
TENSOR_ONLY = {
    **{name: "other" for name in (
        "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or", "logical_xor",
        "logical_and_", "logical_or_", "logical_xor_", "hypot", "hypot_", "nextafter",
        "nextafter_", "ldexp", "ldexp_", "logaddexp", "logaddexp2", "gcd", "gcd_", "lcm", "lcm_",
        "atan2", "arctan2", "atan2_", "arctan2_", "dist", "cross", "inner", "kron", "vdot",
        "matmul")},
    "heaviside": "values", "heaviside_": "values", "dot": "tensor", "outer": "vec2",
    "mm": "mat2"}
# in-place bitwise methods that refuse a result dtype x cannot hold before the kernel's check
CAST_CHECKED = ["bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_",
                "bitwise_right_shift_"]


# ============================================================================= the binder
def _table():
    """{name: what Tensor.<name> is}, from the tables, in their order of dependence."""
    table = {}

    def add(name, value):
        if name in table:
            raise RuntimeError(f"Tensor.{name} is declared twice in the method table")
        table[name] = value

    for module, names in POINTWISE_METHODS.items():
        for name in names:
            fn = getattr(module, name)
            op = getattr(fn, "op", None)
            add(name, op.unary_method(fn) if op is not None and op.differentiable else fn)
    for module, names in OP_METHODS.items():
        for name in names:
            add(name, getattr(module, name))
    for name, fn in {**OTHER_METHODS, **SPARSE_METHODS, **REMOVED_METHODS,
                     **LEGACY_METHODS}.items():
        add(name, fn)
    for name in INPLACE_VIA:
        add(name + "_", _inplace_via(table[name]))
    for name, fn in INPLACE_OWN.items():
        add(name, fn)
    for name, fn in {**OPERATORS, **REFLECTED}.items():
        add(name, table[fn] if isinstance(fn, str) else fn)
    for name, getter in PROPERTIES.items():
        add(name, property(getter))
    # the checks wrap the method declared above (not a second declaration)
    for name, arg in TENSOR_ONLY.items():
        table[name] = _tensor_only(table[name], name, arg)
    for name in CAST_CHECKED:
        table[name] = _cast_checked(table[name])
    table = {name: _torch_named(name, value) for name, value in table.items()}
    # (after naming: x += y is add_ as its errors name it)
    for name, target in {**INPLACE_ALIASES, **INPLACE_OPERATORS}.items():
        add(name, _torch_named(name, table[target]))
    return table


def _torch_named(name, value):
    """`value` as Tensor.<name>: a method bound under a name other than its function's (an
    alias, a method made by a factory), or one PyTorch writes in Python ("Tensor.split"),
    reports its wrong arguments under that name: it gets a renamed copy of the function (the
    same code, so no extra frame). _names.apply checks that no Tensor method is left misnamed."""
    function = _named_function(value, True)
    if function is None or name.startswith("_"):     # (operators: Python names their errors)
        return value
    qualname = f"Tensor.{name}" if name in _PYTHON_METHODS else name
    if name != function.__name__ or qualname != name:
        return _renamed(value, True, qualname)
    return value


def _bind(table):
    """Set each method on Tensor; a name the class body or an earlier binding holds is
    refused (a second binding would leave one of the two dead)."""
    for name, value in table.items():
        if name in vars(Tensor):
            raise RuntimeError(f"Tensor.{name} is bound twice (the class body or another "
                               f"binding holds it already)")
        setattr(Tensor, name, value)


_bind(_table())
