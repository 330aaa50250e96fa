"""Transforms: invertible (or not) maps y = f(x) with the log |det J| that changes a density
under them, as torch.distributions.transforms has them."""
import math
import numbers
import weakref

import numpy as np

import ember
from .. import _sleef_math
from . import constraints
from .distribution import broadcast_all, sum_rightmost
from .utils import tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
           "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
           "Transform", "identity_transform"]


class Transform:
    """y = self(x), x = self.inv(y); with cache_size=1 the last pair is remembered, so the
    inverse of a value this transform produced is the very tensor it came from."""
    bijective = False

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = (None, None)
        self._inverse_ref = None          # a weak reference: the inverse refers back to us

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        inverse = self._inverse_ref() if self._inverse_ref is not None else None
        if inverse is None:
            inverse = _InverseTransform(self)
            self._inverse_ref = weakref.ref(inverse)
        return inverse

    @property
    def sign(self):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform (what `transform.inv` returns)."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._forward = transform

    @property
    def domain(self):
        return self._forward.codomain

    @property
    def codomain(self):
        return self._forward.domain

    @property
    def bijective(self):
        return self._forward.bijective

    @property
    def sign(self):
        return self._forward.sign

    @property
    def inv(self):
        return self._forward

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._forward == other._forward

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}({self._forward!r})"

    def __call__(self, x):
        return self._forward._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._forward.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._forward.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._forward.forward_shape(shape)


class ComposeTransform(Transform):
    """parts applied in order (the first to the input)."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    def _widened(self, end, parts):
        """The domain (end='domain', parts reversed) or codomain of the composition: the
        outer part's, made Independent over as many dims as the whole chain reads as one
        event."""
        if not self.parts:
            return constraints.real
        other = "codomain" if end == "domain" else "domain"
        outer = getattr(parts[-1], end)
        event_dim = getattr(parts[0], other).event_dim
        for part in parts:
            event_dim += getattr(part, end).event_dim - getattr(part, other).event_dim
            event_dim = max(event_dim, getattr(part, end).event_dim)
        if event_dim > outer.event_dim:
            outer = constraints.independent(outer, event_dim - outer.event_dim)
        return outer

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._widened("domain", self.parts[::-1])

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._widened("codomain", self.parts)

    @property
    def bijective(self):
        return all(part.bijective for part in self.parts)

    @property
    def sign(self):
        sign = 1
        for part in self.parts:
            sign = sign * part.sign
        return sign

    @property
    def inv(self):
        inverse = self._inverse_ref() if self._inverse_ref is not None else None
        if inverse is None:
            inverse = ComposeTransform([part.inv for part in reversed(self.parts)])
            self._inverse_ref = weakref.ref(inverse)
            inverse._inverse_ref = weakref.ref(self)
        return inverse

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return ember.zeros_like(x)
        # the intermediate values (through the parts' caches where they have them)
        values = [x]
        for part in self.parts[:-1]:
            values.append(part(values[-1]))
        values.append(y)
        total = 0
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, values[:-1], values[1:]):
            term = part.log_abs_det_jacobian(a, b)
            total = total + sum_rightmost(term, event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        inner = ",\n    ".join(repr(part) for part in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class _Stateless(Transform):
    """A transform without parameters: all instances are equal."""

    def __eq__(self, other):
        return isinstance(other, type(self))

    __hash__ = object.__hash__


class ExpTransform(_Stateless):
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class SigmoidTransform(_Stateless):
    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    @staticmethod
    def _clamped(p):
        # kept strictly inside (0, 1) so that the inverse stays finite
        finfo = ember.finfo(p.dtype)
        return p.clamp(min=finfo.tiny, max=1.0 - finfo.eps)

    def _call(self, x):
        return self._clamped(ember.sigmoid(x))

    def _inverse(self, y):
        y = self._clamped(y)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        softplus = ember.nn.functional.softplus
        return -softplus(-x) - softplus(x)


class TanhTransform(_Stateless):
    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return ember.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)), stable for large |x|
        return 2.0 * (math.log(2.0) - x - ember.nn.functional.softplus(-2.0 * x))


class AbsTransform(_Stateless):
    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y                       # one of the two preimages


class SoftmaxTransform(_Stateless):
    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


def _params_equal(a, b):
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b
    if isinstance(a, numbers.Number) or isinstance(b, numbers.Number):
        return False
    return bool((a == b).all())


class AffineTransform(Transform):
    """y = loc + scale * x, over `event_dim` trailing dims as one event."""
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self._event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self._event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self.domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        return (isinstance(other, AffineTransform) and _params_equal(self.loc, other.loc)
                and _params_equal(self.scale, other.scale))

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        if isinstance(self.scale, numbers.Real):
            result = ember.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = result.reshape(result.shape[:result.dim() - self._event_dim] + (-1,))
            result = result.sum(-1)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return ember.broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                      getattr(self.scale, "shape", ()))

    inverse_shape = forward_shape


def _as_torch_vector_pow(y, x, exponent):
    """torch's x.pow(tensor) on the CPU is SLEEF's vectorised pow, whose float32/float64 bits
    differ from NumPy's power for a few values in a hundred: y (the fresh result of
    x.pow(exponent), on the graph as PowBackward1) gets torch's values in place, so that
    InverseGamma's samples are torch's (ember._sleef_math)."""
    dtype = y._dtype
    if dtype in (ember.float32, ember.float64) and x._dtype is dtype and \
            exponent._dtype is dtype and isinstance(y._data, np.ndarray) and \
            isinstance(x._data, np.ndarray) and x._data.flags.c_contiguous and \
            y._data.flags.c_contiguous and y._data.flags.writeable:
        y._data[...] = _sleef_math.pow_tensor(x._data, exponent._data)


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    __hash__ = object.__hash__

    def _call(self, x):
        y = x.pow(self.exponent)
        _as_torch_vector_pow(y, x, self.exponent)
        return y

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return ember.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    inverse_shape = forward_shape


class StickBreakingTransform(_Stateless):
    """R^(K-1) -> the K-simplex: each coordinate, shifted so that zeros map to the uniform
    point, takes a sigmoid fraction of the stick left by the previous ones."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    @staticmethod
    def _log_offsets(n, like):
        # log(n), log(n - 1), ..., log(1): the shifts that send 0 to the uniform point
        return (n - ember.ones(n, dtype=like.dtype, device=like.device).cumsum(-1) + 1).log()

    def _call(self, x):
        pad = ember.nn.functional.pad
        z = SigmoidTransform._clamped(ember.sigmoid(x - self._log_offsets(x.shape[-1], x)))
        left = (1 - z).cumprod(-1)
        return pad(z, [0, 1], value=1) * pad(left, [1, 0], value=1)

    def _inverse(self, y):
        head = y[..., :-1]
        left = (1 - head.cumsum(-1)).clamp(min=ember.finfo(y.dtype).tiny)
        return head.log() - left.log() + self._log_offsets(head.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        x = x - self._log_offsets(x.shape[-1], x)
        return (-x + ember.nn.functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] - 1,)


# ---------------------------------------------------------------------------- more transforms
class SoftplusTransform(_Stateless):
    """y = log(1 + exp(x))."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return ember.nn.functional.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y      # log(exp(y) - 1), stable for large y

    def log_abs_det_jacobian(self, x, y):
        return -ember.nn.functional.softplus(-x)


class IndependentTransform(Transform):
    """`base_transform` with its rightmost `reinterpreted_batch_ndims` dims read as one event
    (its log |det J| summed over them)."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                             self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """Reshapes the trailing `in_shape` dims to `out_shape` (volume preserving)."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = ember.Size(in_shape)
        self.out_shape = ember.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    @staticmethod
    def _swap(value, old, new):
        return value.reshape(value.shape[:value.dim() - len(old)] + new)

    def _call(self, x):
        return self._swap(x, self.in_shape, self.out_shape)

    def _inverse(self, y):
        return self._swap(y, self.out_shape, self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(x.shape[:x.dim() - len(self.in_shape)])

    @staticmethod
    def _reshaped(shape, old, new):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return shape[:cut] + new

    def forward_shape(self, shape):
        return self._reshaped(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._reshaped(shape, self.out_shape, self.in_shape)


class LowerCholeskyTransform(_Stateless):
    """Unconstrained square matrices -> lower-triangular ones with a positive (exp) diagonal."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(_Stateless):
    """Unconstrained square matrices -> L L^T for L their LowerCholeskyTransform image."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        low = LowerCholeskyTransform()(x)
        return low @ low.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(ember.linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """R^(D(D-1)/2) -> Cholesky factors of D x D correlation matrices: tanh maps each entry to
    (-1, 1), filling the strict lower triangle row by row; each row is then scaled by stick
    breaking so that its norm is 1 (the diagonal entry takes what is left)."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = ember.finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # each entry is scaled by the sqrt of what the earlier entries of its row left
        left = (1 - r.pow(2)).sqrt().cumprod(-1)
        eye = ember.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return (r + eye) * ember.nn.functional.pad(left[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        left = 1 - (y * y).cumsum(-1)
        left = ember.nn.functional.pad(left[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left, diag=-1).sqrt()
        return ((1 + t) / (1 - t)).log() / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        left = tril_matrix_to_vec(1 - (y * y).cumsum(-1), diag=-2)
        stick_breaking = 0.5 * left.log().sum(-1)
        tanh = -2 * (x + ember.nn.functional.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking + tanh

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        n = shape[-2]
        if shape[-1] != n:
            raise ValueError("Input is not square")
        return shape[:-2] + (n * (n - 1) // 2,)


class _AlongDim(Transform):
    """What CatTransform and StackTransform share: parts applied to pieces along `dim`."""

    def __init__(self, tseq, dim, cache_size):
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    def _call(self, x):
        return self._join([t(v) for t, v in zip(self.transforms, self._pieces(x))])

    def _inverse(self, y):
        return self._join([t.inv(v) for t, v in zip(self.transforms, self._pieces(y))])


class CatTransform(_AlongDim):
    """tseq[i] applied to the i-th slice (of lengths[i] entries, default 1) along `dim`."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        super().__init__(tseq, dim, cache_size)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, value):
        starts = [sum(self.lengths[:i]) for i in range(len(self.lengths))]
        return [value.narrow(self.dim, s, n) for s, n in zip(starts, self.lengths)]

    def _join(self, pieces):
        return ember.cat(pieces, dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = []
        for t, a, b in zip(self.transforms, self._pieces(x), self._pieces(y)):
            terms.append(sum_rightmost(t.log_abs_det_jacobian(a, b),
                                       self.event_dim - t.event_dim))
        # `dim` counted from the right of the log |det J|'s dims (the event ones are gone)
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        return ember.cat(terms, dim=dim) if dim < 0 else sum(terms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(_AlongDim):
    """tseq[i] applied to the i-th entry along `dim`."""

    def __init__(self, tseq, dim=0, cache_size=0):
        super().__init__(tseq, dim, cache_size)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _pieces(self, value):
        if value.size(self.dim) != len(self.transforms):
            raise AssertionError(f"x.size({self.dim}) = {value.size(self.dim)} must equal "
                                 f"len(transforms) {len(self.transforms)}")
        return [value.select(self.dim, i) for i in range(value.size(self.dim))]

    def _join(self, pieces):
        return ember.stack(pieces, dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        return self._join([t.log_abs_det_jacobian(a, b) for t, a, b in
                           zip(self.transforms, self._pieces(x), self._pieces(y))])

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x): a univariate distribution's support -> the unit interval."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)
