"""Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d: the layers over
`ember.nn.functional.conv`."""
import math

from ...ops.creation import empty
from .. import functional as F
from .. import init
from ...autograd import grad_mode
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n):
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    """What every convolution layer shares: its hyper-parameters, weight, bias and repr."""
    _dims = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        d = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        stride = _ntuple(stride, d)
        dilation = _ntuple(dilation, d)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                # a set, as in torch, so that the message prints in the same order
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{ {'same', 'valid'} }")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _ntuple(padding, d)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of "
                             f"{ {'zeros', 'reflect', 'replicate', 'circular'} }, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, d)
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, d)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's order (last axis first), for the non-zero padding modes
        if isinstance(padding, str):
            pads = []
            if padding == "same":
                for dl, k in zip(reversed(dilation), reversed(self.kernel_size)):
                    total = dl * (k - 1)
                    pads += [total // 2, total - total // 2]
            else:
                pads = [0, 0] * d
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding)
                                                     for _ in range(2)]
        if transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # torch's default: kaiming-uniform with a=sqrt(5), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in))
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        d = len(self.kernel_size)
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * d:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * d:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * d:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _functional = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._functional
        if self.padding_mode != "zeros":
            input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(input, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    _dims = 1
    _functional = staticmethod(F.conv1d)


class Conv2d(_Conv):
    _dims = 2
    _functional = staticmethod(F.conv2d)


class Conv3d(_Conv):
    _dims = 3
    _functional = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _functional = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        """The output_padding that makes the output `output_size` (torch's rule and errors)."""
        if output_size is None:
            return self.output_padding
        d = self._dims
        # output_size keeps the caller's type: PyTorch's message prints it as given
        if len(output_size) == d + 2 or (len(output_size) == d + 1 and input.dim() == d + 1):
            output_size = output_size[-d:]
        if len(output_size) != d:
            raise ValueError(f"ConvTranspose{d}D: for {input.dim()}D input, output_size must "
                             f"have {d} or {d + 2} elements (got {len(output_size)})")
        sizes = input.shape[-d:]
        smallest = [(n - 1) * s - 2 * p + dl * (k - 1) + 1 for n, s, p, dl, k in
                    zip(sizes, self.stride, self.padding, self.dilation, self.kernel_size)]
        largest = [lo + s - 1 for lo, s in zip(smallest, self.stride)]
        if any(not lo <= n <= hi for lo, n, hi in zip(smallest, output_size, largest)):
            raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                             f"range from {smallest} to {largest} (for an input of "
                             f"{input.shape[2:]!r})")     # [2:] even unbatched, as PyTorch
        result = [n - lo for n, lo in zip(output_size, smallest)]
        return tuple(result)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return type(self)._functional(input, self.weight, self.bias, self.stride, self.padding,
                                      output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _dims = 1
    _functional = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    _dims = 2
    _functional = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    _dims = 3
    _functional = staticmethod(F.conv_transpose3d)


class _LazyConvXdMixin(LazyModuleMixin):
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


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    cls_to_become = Conv1d


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    cls_to_become = Conv2d


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    cls_to_become = Conv3d


class _LazyConvTransposeMixin(_LazyConvXdMixin):
    """A transposed convolution whose in_channels come from its first input: its weight is
    (in_channels, out_channels // groups, *kernel)."""

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        # skip _LazyConvXdMixin.__init__ (a plain convolution's argument order)
        super(_LazyConvXdMixin, self).__init__(0, 0, kernel_size, stride, padding, output_padding,
                                             groups, False, dilation, padding_mode)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def _weight_shape(self):
        # (a transposed convolution's weight is (in, out / groups, *kernel))
        return (self.in_channels, self.out_channels // self.groups, *self.kernel_size)


class LazyConvTranspose1d(_LazyConvTransposeMixin, ConvTranspose1d):
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeMixin, ConvTranspose2d):
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeMixin, ConvTranspose3d):
    cls_to_become = ConvTranspose3d
