"""The Distribution base class and the helpers the concrete distributions share."""
import numbers
import warnings

import ember
from . import constraints


class lazy_property:
    """A property computed on first access and then stored on the instance (so it shows in
    the instance's __dict__, and in its repr, from then on, as in PyTorch)."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with ember.enable_grad():
            value = self.fn(instance)
        instance.__dict__[self.fn.__name__] = value
        return value


def broadcast_all(*values):
    """Numbers become tensors (of the first tensor's dtype, else the default dtype); then all
    are broadcast together."""
    tensors = [v for v in values if isinstance(v, ember.Tensor)]
    for v in values:
        if not isinstance(v, (ember.Tensor, numbers.Number)):
            raise ValueError("Input arguments must all be instances of Number, "
                             "torch.Tensor or objects implementing __torch_function__.")
    dtype = tensors[0].dtype if tensors else ember.get_default_dtype()
    device = tensors[0].device if tensors else None
    values = [v if isinstance(v, ember.Tensor) else ember.tensor(v, dtype=dtype, device=device)
              for v in values]
    shape = ember.broadcast_shapes(*(v.shape for v in values))
    # as PyTorch's broadcast: a tensor of the full shape is passed on itself (not an expand
    # view), so a leaf parameter stays a leaf
    return tuple(v if v.shape == shape else v.expand(shape) for v in values)


def clamp_probs(probs):
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    clamped = clamp_probs(probs)
    return ember.log(clamped) - ember.log1p(-clamped) if is_binary else ember.log(clamped)


def logits_to_probs(logits, is_binary=False):
    return ember.sigmoid(logits) if is_binary else ember.softmax(logits, dim=-1)


def sum_rightmost(value, dims):
    return value.reshape(value.shape[:value.dim() - dims] + (-1,)).sum(-1) if dims else value


def check_parameter(owner, name, value, constraint):
    """ValueError unless `value` (parameter `name` of distribution `owner`, shown by its repr)
    satisfies `constraint`."""
    if not bool(constraint.check(value).all()):
        raise ValueError(
            f"Expected parameter {name} (Tensor of shape {tuple(value.shape)}) of "
            f"distribution {owner} to satisfy the constraint {constraint!r}, but found "
            f"invalid values:\n{value}")


class Distribution:
    """A family of probability distributions with a batch of parameter sets.

    Subclasses list their parameters' constraints in `arg_constraints` (in repr order) and the
    tensors `expand` must broadcast in `_expand_dims` (name -> number of trailing non-batch
    dims)."""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__
    _expand_dims = {}

    @staticmethod
    def set_default_validate_args(value):
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=ember.Size(), event_shape=ember.Size(), validate_args=None):
        self._batch_shape = ember.Size(batch_shape)
        self._event_shape = ember.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                          f"`arg_constraints = {{}}` or initialize the distribution with "
                          f"`validate_args=False` to turn off validation.", stacklevel=4)
            return
        for name, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if name not in self.__dict__ and isinstance(getattr(type(self), name, None),
                                                        lazy_property):
                continue          # derived from the given parameter: not checked
            check_parameter(self, name, getattr(self, name), constraint)

    # ------------------------------------------------------------------ shapes
    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=ember.Size()):
        return ember.Size(tuple(sample_shape) + tuple(self._batch_shape)
                          + tuple(self._event_shape))

    def expand(self, batch_shape, _instance=None):
        """The same distribution with its parameters broadcast to `batch_shape` (views)."""
        batch_shape = ember.Size(batch_shape)
        new = _instance if _instance is not None else type(self).__new__(type(self))
        for name, value in self.__dict__.items():
            if name in self._expand_dims:
                tail = value.shape[value.dim() - self._expand_dims[name]:] \
                    if self._expand_dims[name] else ()
                value = value.expand(batch_shape + ember.Size(tail))
            new.__dict__.setdefault(name, value)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    # ------------------------------------------------------------------ constraints
    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    # ------------------------------------------------------------------ moments
    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    # ------------------------------------------------------------------ sampling
    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=ember.Size()):
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(ember.Size((n,)))

    # ------------------------------------------------------------------ densities
    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return ember.exp(self.entropy())

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def _validate_sample(self, value):
        if not isinstance(value, ember.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.shape} vs {self._event_shape}.")
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(value.shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{value.shape} vs {expected}.")
        support = self.support
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument (Tensor of shape {tuple(value.shape)}) to be within "
                f"the support ({support!r}) of the distribution {self!r}, but found invalid "
                f"values:\n{value}")

    def __repr__(self):
        # the parameters set on the instance, each shown by value if single, else by size
        shown = [(name, self.__dict__[name]) for name in self.arg_constraints
                 if name in self.__dict__]
        args = ", ".join(f"{name}: {value if value.numel() == 1 else value.size()}"
                         for name, value in shown)
        return f"{type(self).__name__}({args})"
