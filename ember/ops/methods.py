"""Binds the ops as Tensor methods, in-place methods and operators (the one place that does)."""
from .. import _dtype as D
from .._tensor import Tensor
from . import (_pointwise_common as _PC, arithmetic as A, blas, calculus, comparison as CMP,
               complex as CV, creation, indexing, linalg_decompositions as LD, linalg_solvers as
               LS, logical as LG, norms, pointwise as P, pointwise_inplace as PI, pointwise_math as
               PM, random, reduction as R, scan, scatter_gather as SG, shape, softmax, sorting,
               special, special_bessel, spectral, statistics, tensor_info, views as V)

# methods that are the op itself, called with the tensor first
_SAME_NAME = {
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
    R: ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std",
        "logsumexp", "all", "any", "sum_to_size", "count_nonzero", "nanmean", "nansum", "aminmax",
        "trace"],
    norms: ["norm", "dist"],
    softmax: ["softmax", "log_softmax"],
    scan: ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"],
    V: ["view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "squeeze", "unsqueeze",
        "permute", "movedim", "transpose", "t", "expand", "expand_as", "narrow", "select",
        "unbind", "split", "chunk", "tensor_split", "diagonal", "unfold", "as_strided"],
    SG: ["gather", "scatter", "scatter_add", "scatter_", "scatter_add_"],
    indexing: ["index_select", "masked_select", "nonzero", "index_add", "index_put", "index_put_",
               "argwhere", "take", "take_along_dim", "index_fill", "index_copy", "index_fill_",
               "index_copy_", "diag"],
    sorting: ["topk", "kthvalue", "msort", "unique", "unique_consecutive"],
    shape: ["fliplr", "flipud", "roll", "repeat", "tile", "tril", "triu", "masked_scatter",
            "broadcast_to", "repeat_interleave", "rot90", "diag_embed", "diagflat", "hsplit",
            "vsplit", "dsplit", "fill_diagonal_"],
    blas: ["matmul", "mm", "bmm", "mv", "dot", "outer", "ger", "addmm", "inner_product", "kron",
           "inner", "addmv", "addr", "baddbmm", "addbmm", "matrix_power", "cross"],
    creation: ["clone", "contiguous", "to", "copy_", "fill_", "zero_"],
    special: ["xlogy", "xlogy_"],
    PM: ["lgamma", "digamma", "deg2rad", "rad2deg", "sinc", "angle"],
    statistics: ["median", "nanmedian", "mode", "quantile", "nanquantile", "bincount", "histc",
                 "cov", "corrcoef"],
    calculus: ["diff"],
    LS: ["inverse", "det", "logdet", "slogdet", "pinverse", "cholesky_solve", "cholesky_inverse",
         "triangular_solve"],
    LD: ["cholesky", "matrix_exp", "geqrf", "orgqr"],
}

for _module, _names in _SAME_NAME.items():
    for _name in _names:
        setattr(Tensor, _name, getattr(_module, _name))
# one-input pointwise ops (x.tanh()) take their op's fast path first (registry.Op.unary_method)
for _module in (A, P, CMP, LG):
    for _name in _SAME_NAME[_module]:
        _op = getattr(getattr(_module, _name), "op", None)
        if _op is not None and _op.differentiable:
            setattr(Tensor, _name, _op.unary_method(getattr(_module, _name)))
# (the binary arithmetic ops of torch's later additions: no one-input fast path)
for _name in ["logaddexp", "logaddexp2", "hypot", "copysign", "copysign_", "heaviside",
              "nextafter", "ldexp", "ldexp_"]:
    setattr(Tensor, _name, getattr(A, _name))

# methods whose argument parsing differs from the function's
Tensor.flip = shape.flip_method
Tensor.tile = shape.tile_method


def _sort(self, dim=-1, descending=False, stable=False):
    sorting.check_sort_dim("sort", dim, descending, method=True)
    return sorting.sort(self, dim, descending, stable)


def _argsort(self, dim=-1, descending=False, stable=False):
    sorting.check_sort_dim("argsort", dim, descending, method=True)
    return sorting.argsort(self, dim, descending, stable)


Tensor.sort, Tensor.argsort = _sort, _argsort
Tensor.svd, Tensor.qr, Tensor.lu = LD.svd_old, LD.qr_old, LD.lu_old
Tensor.lu_solve = LD.lu_solve_old
Tensor.swapaxes = Tensor.swapdims = V.transpose
Tensor.moveaxis = V.movedim
Tensor.T = property(V.T)
Tensor.mT = property(V.mT)
Tensor.H = property(lambda self: V.T(self).conj())
Tensor.mH = property(V.mH)
Tensor.__getitem__ = indexing.getitem
Tensor.__setitem__ = indexing.setitem
Tensor.real = property(CV.real)
Tensor.imag = property(CV.imag)
Tensor.conj = CV.conj
Tensor.dim_order = lambda self: tuple(range(self._data.ndim))


# ----------------------------------------------------------------------------- in-place methods
def _inplace_via(fn):
    """In-place method for ops whose public function needs argument handling first: compute
    out of place, then copy into self (the copy is the op's node, as PyTorch's graph shows for
    composite in-place ops)."""
    def method(self, *args, **kwargs):
        try:
            result = fn(self, *args, **kwargs)
        except NotImplementedError:     # a dtype without a kernel: PyTorch reports shapes first
            from .registry import check_inplace_shape
            check_inplace_shape(self, (self,) + tuple(a for a in args if isinstance(a, Tensor)))
            raise
        if result._dtype is not self._dtype and not D.can_cast(result._dtype, self._dtype):
            from .._printing import scalar_type_name
            raise RuntimeError(f"result type {scalar_type_name(result._dtype)} can't be cast to "
                               f"the desired output type {scalar_type_name(self._dtype)}")
        return _write_result(self, result)
    return method


def _write_result(self, result):
    """Make `self` hold `result`, with the graph of an in-place op on self."""
    from .registry import check_inplace_allowed, write_into
    from ..autograd import grad_mode
    if grad_mode.state.enabled and result._requires_grad:
        check_inplace_allowed(self)
        node = result._grad_fn
        write_into(self, result._data)
        if self._base is None:
            self._grad_fn, self._output_nr, self._requires_grad = node, result._output_nr, True
        else:
            from .views import CopySlices
            # route through an identity copy so that CopySlices has one op node to call
            CopySlices.rebase(self._base, self, _IdentityFn(node, result._output_nr))
        return self
    write_into(self, result._data)
    return self


class _IdentityFn:
    """Adapter so an out-of-place result's node can serve as CopySlices' `fn`."""

    def __init__(self, node, output_nr):
        self.node, self.output_nr = node, output_nr
        self.next_functions = ((node, output_nr),)

    def apply(self, grads, needs):
        return (None,) + tuple(grads)

    def release(self):
        pass


# simple in-place forms: the primitive's own inplace()
_PRIMITIVE_INPLACE = {
    "add_": (A._add, A._check_bool_sub), "sub_": (A._sub, A._check_bool_sub),
    "mul_": (A._mul, None), "div_": (A._div, None),
}

for _name, (_op, _check) in _PRIMITIVE_INPLACE.items():
    def _method(self, other, *, alpha=None, _op=_op, _check=_check, **kw):
        if _check is not None and _op.name == "sub":
            _check(self, other)
        if alpha is not None:
            _PC._check_alpha(self, other, alpha)
            kw["alpha"] = alpha
        return _op.inplace(self, other, **kw)
    setattr(Tensor, _name, _method)


def _div_(self, other, *, rounding_mode=None):
    if rounding_mode is not None:
        return _inplace_via(A.div)(self, other, rounding_mode=rounding_mode)
    return A._div.inplace(self, other)


Tensor.div_ = Tensor.true_divide_ = _div_

for _name in ["pow", "remainder", "fmod", "atan2", "neg", "abs", "sign", "reciprocal", "sqrt",
              "rsqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin",
              "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
              "atanh", "sigmoid", "erf", "erfc", "erfinv", "relu", "floor", "ceil", "trunc",
              "frac", "round", "logit", "nan_to_num", "clamp", "clip", "clamp_min", "clamp_max",
              "masked_fill", "lerp", "addcmul", "addcdiv", "floor_divide",
              "tril", "triu", "index_add", "masked_scatter", "negative", "absolute", "fix",
              "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
              "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
              "cumsum", "cumprod"]:
    setattr(Tensor, _name + "_", _inplace_via(getattr(Tensor, _name)))

# the differentiable pointwise primitives' own in-place forms (their nodes save self as it was)
for _name, _fn in PI.INPLACE.items():
    setattr(Tensor, _name, _fn)


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
        from .registry import check_inplace_allowed
        check_inplace_allowed(self)
        node.__class__ = _inplace_view_node(type(node))
        self._grad_fn, self._output_nr = node, result._output_nr
    self._data = result._data
    self._version_counter.bump()
    self._fn_version = self._version_counter.value       # (a view keeps the history just set)
    return self


Tensor.unsqueeze_ = _unsqueeze_
Tensor.squeeze_ = _squeeze_
Tensor.t_ = _t_
Tensor.as_strided_ = _as_strided_
Tensor.transpose_ = Tensor.swapdims_ = Tensor.swapaxes_ = _transpose_


# ----------------------------------------------------------------------------- operators
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


# the arithmetic operators take the op's own fast path first (registry.Op.operator)
Tensor.__add__ = Tensor.__radd__ = A._add.operator(_binary(A.add))
Tensor.__sub__ = A._sub.operator(_binary(A.sub))
Tensor.__rsub__ = _reflect(A.sub)
Tensor.__mul__ = Tensor.__rmul__ = A._mul.operator(_binary(A.mul))
Tensor.__truediv__ = A._div.operator(_binary(A.div))
Tensor.__rtruediv__ = _reflect(A.div)
Tensor.__floordiv__ = _binary(A.floor_divide)
Tensor.__rfloordiv__ = _reflect(A.floor_divide)
Tensor.__mod__ = _binary(A.remainder)
Tensor.__rmod__ = _reflect(A.remainder)
Tensor.__pow__ = _binary(A.pow)
Tensor.__rpow__ = _reflect(A.pow)
Tensor.__matmul__ = lambda self, other: blas.matmul(self, other)
Tensor.__rmatmul__ = lambda self, other: blas.matmul(other, self)
Tensor.__neg__ = P.neg
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = P.abs
Tensor.__invert__ = LG.invert
Tensor.__and__ = _binary(LG.bitwise_and)
Tensor.__rand__ = _binary(LG.bitwise_and)
Tensor.__or__ = _binary(LG.bitwise_or)
Tensor.__ror__ = _binary(LG.bitwise_or)
Tensor.__xor__ = _binary(LG.bitwise_xor)
Tensor.__rxor__ = _binary(LG.bitwise_xor)
Tensor.__lshift__ = _binary(LG.bitwise_left_shift)
Tensor.__rshift__ = _binary(LG.bitwise_right_shift)
Tensor.__rlshift__ = _reflect(LG.bitwise_left_shift)
Tensor.__rrshift__ = _reflect(LG.bitwise_right_shift)
Tensor.__lt__ = _binary(CMP.lt)
Tensor.__le__ = _binary(CMP.le)
Tensor.__gt__ = _binary(CMP.gt)
Tensor.__ge__ = _binary(CMP.ge)


def _eq(self, other):
    if other is None:
        return False
    return _binary(CMP.eq)(self, other)


def _ne(self, other):
    if other is None:
        return True
    return _binary(CMP.ne)(self, other)


Tensor.__eq__ = _eq
Tensor.__ne__ = _ne
Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__ifloordiv__ = Tensor.floor_divide_
Tensor.__imod__ = Tensor.remainder_
Tensor.__ipow__ = Tensor.pow_
Tensor.__iand__ = Tensor.bitwise_and_
Tensor.__ior__ = Tensor.bitwise_or_
Tensor.__ixor__ = Tensor.bitwise_xor_


# ----------------------------------------------------------------------------- dtype shorthands
def _caster(dtype):
    return lambda self, memory_format=None: self.to(dtype)


for _n, _d in {"float": D.float32, "double": D.float64, "half": D.float16,
               "bfloat16": D.bfloat16, "long": D.int64, "int": D.int32, "short": D.int16,
               "char": D.int8, "byte": D.uint8, "bool": D.bool_, "cfloat": D.complex64,
               "cdouble": D.complex128}.items():
    setattr(Tensor, _n, _caster(_d))


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


Tensor.new_zeros = _new(creation.zeros, "new_zeros")
Tensor.new_ones = _new(creation.ones, "new_ones")
Tensor.new_empty = _new(creation.empty, "new_empty")
Tensor.new_full = lambda self, size, fill_value, *, dtype=None, device=None, \
    requires_grad=False: creation.full(_new_size("new_full", (size,)), fill_value,
                                       dtype=dtype or self._dtype,
                                       device=device or self._device,
                                       requires_grad=requires_grad)
Tensor.type_as = lambda self, other: self.to(other._dtype)


def _legacy_new(self, *args, device=None):
    """x.new(...): the legacy constructor with x's dtype and device."""
    return creation.legacy_tensor(Tensor, args, device=device or self._device,
                                  fixed_dtype=self._dtype)


Tensor.new = _legacy_new


Tensor.bernoulli = lambda self, p=None, *, generator=None: random.bernoulli(self, p,
                                                                              generator=generator)
Tensor.multinomial = random.multinomial


def _resize_(self, *sizes):
    """Resize in place, as PyTorch: the tensor becomes contiguous over its storage from its
    storage offset; shrinking keeps the storage (growing back shows the old values), growing
    past the storage reallocates it with the old contents in front (new elements are zero)."""
    import numpy as np
    from .creation import _sizes, _check_sizes
    shape = _sizes("resize_", sizes)
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if any(s < 0 for s in shape) and 0 not in shape:
        # PyTorch multiplies the sizes as unsigned numbers: a negative one overflows. (With a
        # zero size too it makes a tensor of negative size, which ember refuses below.)
        raise RuntimeError("numel: integer multiplication overflow")
    _check_sizes(shape)
    # a tensor with a forward-AD tangent is refused, after the resize (as PyTorch does)
    from ..autograd import forward_ad
    dual = forward_ad._levels and forward_ad.tangent_of(self) is not None
    if shape != self._data.shape:   # (same size: nothing changes (strides, version) in PyTorch)
        n = int(np.prod(shape))
        offset = self.storage_offset()
        root = self._base if self._base is not None else self
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
    import warnings
    import numpy as np
    from .creation import _sizes
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


Tensor.resize_ = _resize_
Tensor.resize = _resize
Tensor.resize_as_ = lambda self, other, memory_format=None: _resize_(self, tuple(other.shape))


# in-place forms of the extra ops that are the primitive's own inplace()
Tensor.hypot_ = lambda self, other: A._hypot.inplace(self, other)
Tensor.heaviside_ = lambda self, values: A._heaviside.inplace(self, values)
Tensor.nextafter_ = lambda self, other: A._nextafter.inplace(self, other)
Tensor.polygamma = lambda self, n: special.polygamma(n, self)
Tensor.polygamma_ = lambda self, n: special._polygamma.inplace(self, n=n)
for _fn in (PM.lgamma, PM.digamma, PM.deg2rad, PM.rad2deg, PM.sinc):
    setattr(Tensor, _fn.__name__ + "_", _fn.inplace)
for _name in ("addmv", "addr", "baddbmm", "addbmm"):
    setattr(Tensor, _name + "_", blas._inplace_product(getattr(blas, _name)))


# ----------------------------------------------------------------------------- more aliases
Tensor.multiply, Tensor.subtract, Tensor.divide = A.mul, A.sub, A.div
Tensor.multiply_, Tensor.subtract_ = Tensor.mul_, Tensor.sub_
Tensor.greater_, Tensor.greater_equal_ = Tensor.gt_, Tensor.ge_
Tensor.less_, Tensor.less_equal_, Tensor.not_equal_ = Tensor.lt_, Tensor.le_, Tensor.ne_
for _name in ("bitwise_left_shift", "bitwise_right_shift"):
    setattr(Tensor, _name + "_", _inplace_via(getattr(LG, _name)))
Tensor.sgn_ = PI._unary_inplace(P.sgn)     # (its node saves the result: the op's own in-place form)


def _cast_checked(method):
    """An in-place bitwise method that refuses a result dtype self cannot hold before the
    kernel's own dtype check (x_int.bitwise_and_(t_float) is a cast error, as in PyTorch)."""
    def checked(self, other):
        PI._check_inplace_cast(self, other)
        return method(self, other)
    return checked


for _name in ("bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_",
              "bitwise_right_shift_"):
    setattr(Tensor, _name, _cast_checked(getattr(Tensor, _name)))
Tensor.__iand__, Tensor.__ior__ = Tensor.bitwise_and_, Tensor.bitwise_or_
Tensor.__ixor__, Tensor.__ilshift__ = Tensor.bitwise_xor_, Tensor.bitwise_left_shift_
Tensor.__irshift__ = Tensor.bitwise_right_shift_


def _scan_inplace(name, op):
    """cumsum_/cumprod_: the scan's own in-place form, run in self's dtype (no int64
    widening); a dtype= must be that dtype."""
    def method(self, dim, *, dtype=None):
        from ._pointwise_common import CPP_NAMES
        if dtype is not None and dtype is not self._dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype "
                               f"{CPP_NAMES[self._dtype.name]} and output tensor dtype "
                               f"{CPP_NAMES[dtype.name]} should match")
        if self._dtype is D.bool_:
            raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'Bool\'')
        from ._utils import wrap_dim
        return op.inplace(self, dim=wrap_dim(dim, self._data.ndim), dtype=self._dtype)
    return method


Tensor.cumsum_ = _scan_inplace("cumsum", scan._cumsum)
Tensor.cumprod_ = _scan_inplace("cumprod", scan._cumprod)
Tensor.addmm_ = _inplace_via(blas.addmm)
Tensor.where = lambda self, condition, other: P.where(condition, self, other)
Tensor.ravel = lambda self: self.contiguous().view(-1)      # torch: a view of the contiguous copy
Tensor.is_same_size = lambda self, other: self.shape == other.shape
Tensor.split_with_sizes = lambda self, split_sizes, dim=0: V.split(self, list(split_sizes), dim)


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
    """A method that is ember.nn.functional's op (imported on call: nn is built on this module)."""
    def method(self, *args, **kwargs):
        from ..nn import functional
        return getattr(functional, name)(self, *args, **kwargs)
    method.__name__ = name
    return method


Tensor.positive = _positive
Tensor.adjoint = V.adjoint
Tensor.is_nonzero = _is_nonzero
Tensor.hardshrink = _functional("hardshrink")
Tensor.prelu = _functional("prelu")
# devices and layouts ember has no tensors of
for _name in ("is_xpu", "is_mps", "is_ipu", "is_mtia", "is_maia", "is_vulkan", "is_xla",
              "is_mkldnn", "is_nested", "is_sparse_csr"):
    setattr(Tensor, _name, property(lambda self: False))
Tensor.is_distributed = lambda self: False


# ------------------------------------------------------------------------ more methods (gcd, put, ...)
for _module, _names in [
    (A, ["gcd", "gcd_", "lcm", "lcm_"]),
    (PM, ["frexp"]),
    (special_bessel, ["i0", "i0_"]),
    (CV, ["vdot", "conj_physical", "conj_physical_", "isreal", "is_conj", "is_neg",
              "resolve_conj", "resolve_neg"]),
    (statistics, ["histogram"]),
    (norms, ["renorm", "renorm_"]),
    (SG, ["put", "put_", "masked_scatter", "masked_scatter_", "scatter_reduce",
              "scatter_reduce_", "select_scatter", "slice_scatter", "diagonal_scatter"]),
    (special, ["mvlgamma_"]),
    (shape, ["unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"]),
    (tensor_info, ["is_inference", "apply_", "map_", "is_pinned", "pin_memory", "is_shared",
                       "share_memory_", "set_", "as_subclass"]),
    (creation, ["new_empty_strided"]),
]:
    for _name in _names:
        setattr(Tensor, _name, getattr(_module, _name))
Tensor.mvlgamma = special.mvlgamma_method

# ----------------------------------------------------------- more methods (stft, random fills, ...)
for _module, _names in [
    (spectral, ["stft", "istft"]),
    (random, ["cauchy_", "log_normal_", "geometric_", "uniform_", "normal_", "exponential_",
                  "random_", "bernoulli_"]),
    (SG, ["index_reduce", "index_reduce_"]),
    (special, ["igamma_", "igammac_"]),
    (indexing, ["nonzero_static"]),
]:
    for _name in _names:
        setattr(Tensor, _name, getattr(_module, _name))
Tensor.igamma, Tensor.igammac = special._igamma_method, special._igammac_method


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


_TENSOR_ONLY = {
    **{name: "other" for name in (
        "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or", "logical_xor",
        "logical_and_", "logical_or_", "logical_xor_", "hypot", "hypot_", "nextafter",
        "nextafter_", "ldexp", "ldexp_", "logaddexp", "logaddexp2", "gcd", "gcd_", "lcm", "lcm_",
        "atan2", "arctan2", "atan2_", "arctan2_", "dist", "cross", "inner", "kron", "vdot", "matmul")},
    "heaviside": "values", "heaviside_": "values", "dot": "tensor", "outer": "vec2",
    "mm": "mat2"}
for _name, _arg in _TENSOR_ONLY.items():
    setattr(Tensor, _name, _tensor_only(getattr(Tensor, _name), _name, _arg))
