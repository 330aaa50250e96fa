"""Lazy modules (LazyLinear, LazyConv1d/2d/3d, LazyBatchNorm1d/2d/3d) and the placeholders they
hold until their first forward: UninitializedParameter and UninitializedBuffer.

A placeholder has a dtype, a device and requires_grad but no data: using its data raises, as in
PyTorch. The first forward infers the missing size (in_features, in_channels, num_features) from
the input, materializes the placeholders in place (they become a Parameter / a Tensor, the same
objects, so an optimizer built before still holds them) and turns the module into its eager
class (LazyLinear -> Linear, ...).
"""
from ..._tensor import Tensor, Size
from ... import _dtype as D
from ...autograd import grad_mode
from ...ops.creation import empty, tensor
from ..parameter import Parameter
from .conv import Conv1d, Conv2d, Conv3d
from .linear import Linear
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _NormBase

_DATA_SLOT = Tensor.__dict__["_data"]        # Tensor's own storage for the array


def _use_error(cls_name, what):
    return ValueError(
        f"Attempted to use an uninitialized parameter in {what}. This error happens when you "
        f"are using a `LazyModule` or explicitly manipulating "
        f"`ember.nn.parameter.{cls_name}` objects. When using LazyModules Call `forward` with "
        f"a dummy batch to initialize the parameters before calling torch functions")


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share (see the module docstring)."""
    __slots__ = ()
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        pass                                  # all done in __new__

    @property
    def _data(self):
        # every op reads a tensor's array: this is where using a placeholder fails
        raise _use_error(type(self).__name__, "an ember operation")

    @_data.setter
    def _data(self, array):
        _DATA_SLOT.__set__(self, array)

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into "
            "an initialized one. Call `forward` to initialize the parameters before accessing "
            "their attributes.")

    def size(self, dim=None):
        # PyTorch answers with the size of the empty tensor that stands in for the data
        return Size((0,)) if dim is None else (0,)[dim]

    def materialize(self, shape, device=None, dtype=None):
        """Give the placeholder data of `shape` (uninitialized values) and make it a
        `cls_to_become` (Parameter or Tensor), in place."""
        data = empty(shape, device=device or self._device, dtype=dtype or self._dtype)
        _DATA_SLOT.__set__(self, data._data)
        self._dtype, self._device = data._dtype, data._device
        self.__class__ = self.cls_to_become

    def to(self, *args, **kwargs):
        # a new placeholder with the converted dtype/device (Module.to, .double() ... use this)
        probe = empty(0, device=self._device, dtype=self._dtype).to(*args, **kwargs)
        return self._like(probe._dtype, probe._device)

    def double(self):
        return self.to(D.float64)

    def float(self):
        return self.to(D.float32)

    def half(self):
        return self.to(D.float16)

    def bfloat16(self):
        return self.to(D.bfloat16)

    def cpu(self):
        return self.to("cpu")

    @property
    def data(self):
        return self

    @data.setter
    def data(self, other):
        # Module._apply swaps in the converted placeholder
        if not isinstance(other, UninitializedTensorMixin):
            raise _use_error(type(self).__name__, "Tensor.data")
        self._dtype, self._device = other._dtype, other._device

    def detach(self):
        # the lazy module's state_dict holds the placeholder itself, as PyTorch's does
        return self

    def requires_grad_(self, requires_grad=True):
        raise _use_error(type(self).__name__, "Tensor.requires_grad_")

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = self._like(self._dtype, self._device)
        return memo[id(self)]

    def __reduce_ex__(self, protocol):
        return _rebuild_uninitialized, (type(self), self._requires_grad, str(self._device),
                                        self._dtype.name), self.__dict__

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__


def _rebuild_uninitialized(cls, requires_grad, device, dtype_name):
    return cls(requires_grad, device, getattr(D, dtype_name))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def _like(self, dtype, device):
        return type(self)(self._requires_grad, device, dtype)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        data = empty(0, device=device, dtype=dtype)
        b = cls._make(data._data, data._dtype, data._device, requires_grad)
        b.persistent = persistent
        return b

    def _like(self, dtype, device):
        return type(self)(self._requires_grad, device, dtype, self.persistent)


def is_lazy(param):
    return isinstance(param, UninitializedTensorMixin)


class LazyModuleMixin:
    """A module whose placeholders are materialized by its first forward (a pre-hook), which
    then turns it into `cls_to_become`."""
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                                with_kwargs=True)

    def has_uninitialized_params(self):
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{self.__class__.__name__}")

    def _infer_parameters(self, module, args, kwargs=None):
        self.initialize_parameters(*args, **(kwargs or {}))
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        self._initialize_hook.remove()
        del self._initialize_hook
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # a checkpoint gives the placeholders their shapes
        for name, t in (*self._parameters.items(), *self._buffers.items()):
            value = state_dict.get(prefix + name)
            if is_lazy(t) and value is not None and not is_lazy(value):
                with grad_mode.no_grad():
                    t.materialize(value.shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class LazyLinear(LazyModuleMixin, Linear):
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with grad_mode.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:          # loaded from a checkpoint: its weight says
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} "
                                     f"is not equal to in_features from self.weight: "
                                     f"{self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class _LazyConvMixin(LazyModuleMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input):
        spatial = len(self.kernel_size)
        if input.dim() not in (spatial + 1, spatial + 2):
            raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) "
                               f"input to {self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[0 if input.dim() == spatial + 1 else 1]

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with grad_mode.no_grad():
                self.weight.materialize(self._weight_shape())
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


    def _weight_shape(self):
        return (self.out_channels, self.in_channels // self.groups, *self.kernel_size)


class LazyConv1d(_LazyConvMixin, Conv1d):
    cls_to_become = Conv1d


class LazyConv2d(_LazyConvMixin, Conv2d):
    cls_to_become = Conv2d


class LazyConv3d(_LazyConvMixin, Conv3d):
    cls_to_become = Conv3d


class _LazyNormBase(LazyModuleMixin, _NormBase):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        # a norm of no features and no state, whose placeholders are then put in
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=D.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with grad_mode.no_grad():
                for t in (self.weight, self.bias, self.running_mean, self.running_var):
                    if is_lazy(t):
                        t.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    cls_to_become = BatchNorm3d
