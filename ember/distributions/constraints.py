"""Constraints: what values a distribution's parameters and samples may take.

Each constraint answers `check(value)` with a bool tensor over the batch (event dims folded in),
and prints as PyTorch prints it (these reprs appear in validation error messages).
"""
import ember


class Constraint:
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters (never checked)."""

    def __init__(self, *, is_discrete=False, event_dim=0):
        self.is_discrete = is_discrete
        self.event_dim = event_dim

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property of the distribution that, on the class, reads as a dependent constraint."""

    def __init__(self, fn=None, *, is_discrete=False, event_dim=0):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        # used as `@dependent_property(is_discrete=..., event_dim=...)`
        return _DependentProperty(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)


class _Real(Constraint):
    def check(self, value):
        return value == value          # everything but NaN


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _Bound(Constraint):
    """A constraint with named numeric bounds; the subclass says how to compare."""
    _bounds = ()

    def __init__(self, *bounds):
        for name, bound in zip(self._bounds, bounds):
            setattr(self, name, bound)

    def __repr__(self):
        return type(self).__name__.lstrip("_") + "(" + ", ".join(
            f"{name}={getattr(self, name)}" for name in self._bounds) + ")"


class _GreaterThan(_Bound):
    _bounds = ("lower_bound",)

    def check(self, value):
        return self.lower_bound < value


class _GreaterThanEq(_Bound):
    _bounds = ("lower_bound",)

    def check(self, value):
        return self.lower_bound <= value


class _LessThan(_Bound):
    _bounds = ("upper_bound",)

    def check(self, value):
        return value < self.upper_bound


class _Interval(_Bound):
    _bounds = ("lower_bound", "upper_bound")

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_Bound):
    _bounds = ("lower_bound", "upper_bound")

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _IntegerInterval(_Bound):
    _bounds = ("lower_bound", "upper_bound")
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerGreaterThan(_Bound):
    _bounds = ("lower_bound",)
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return ember.all(value >= 0, dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Multinomial(Constraint):
    """Nonnegative counts summing to at most `upper_bound` (prints as `Multinomial()`)."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value):
        symmetric = ember.isclose(value, value.mT, atol=1e-6).all(-1).all(-1)
        if not bool(symmetric.all()):
            return symmetric     # as PyTorch: then only symmetry is reported
        return ember.linalg.cholesky_ex(value).info == 0


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).flatten(-2).all(-1)
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return lower & positive_diagonal


class _IndependentConstraint(Constraint):
    """`base` with its rightmost `reinterpreted_batch_ndims` batch dims read as event dims."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self):
        return (f"IndependentConstraint({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


IndependentConstraint = _IndependentConstraint
dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
real = _Real()
real_vector = _IndependentConstraint(real, 1)
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
interval = _Interval
half_open_interval = _HalfOpenInterval
unit_interval = _Interval(0.0, 1.0)
integer_interval = _IntegerInterval
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
simplex = _Simplex()
one_hot = _OneHot()
multinomial = _Multinomial
positive_definite = _PositiveDefinite()
lower_cholesky = _LowerCholesky()


# ---------------------------------------------------------------------------- matrices, and
# constraints built from others (along a dim)
class _IntegerLessThan(_Bound):
    _bounds = ("upper_bound",)
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value <= self.upper_bound)     # (<=, as in PyTorch)


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        square = value.shape[-2] == value.shape[-1]
        return ember.full(value.shape[:-2], square, dtype=ember.bool, device=value.device)


class _Symmetric(_Square):
    def check(self, value):
        square = super().check(value)
        if not bool(square.all()):
            return square
        return ember.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return ember.linalg.eigvalsh(value).ge(0).all(-1)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return (value.tril() == value).flatten(-2).min(-1)[0]


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: positive diagonal, unit-norm rows."""
    event_dim = 2

    def check(self, value):
        tol = ember.finfo(value.dtype).eps * value.size(-1) * 10
        unit_rows = (ember.linalg.norm(value.detach(), dim=-1) - 1).abs().le(tol).all(-1)
        return _LowerCholesky().check(value) & unit_rows


class _Cat(Constraint):
    """Constraint `cseq[i]` on the i-th slice (of `lengths[i]`, default 1) along `dim`."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return ember.cat(checks, self.dim)


class _Stack(Constraint):
    """Constraint `cseq[i]` on the i-th entry along `dim`."""

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        parts = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        return ember.stack([c.check(v) for v, c in zip(parts, self.cseq)], self.dim)


class MixtureSameFamilyConstraint(Constraint):
    """A mixture's support: its components' support, checked over the components' dim too."""

    def __init__(self, base_constraint):
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        return result.all(-1) if result.dim() else result

    def __repr__(self):
        return f"{type(self).__name__}({self.base_constraint!r})"


square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
lower_triangular = _LowerTriangular()
corr_cholesky = _CorrCholesky()
cat = _Cat
stack = _Stack
