"""ember.nn.grad: the gradients of a convolution with respect to its input and its weight,
computed by the convolution's own backward (`functional.conv._convolution_backward`)."""
from ..ops.creation import zeros
from .functional import conv as C

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _backward(d, grad_output, input, weight, which, stride, padding, dilation, groups):
    if input.dim() != weight.dim():
        w = weight.dim()
        raise RuntimeError(f"Expected {w}-dimensional input for {w}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.dim()}-dimensional input of "
                           f"size {list(input.shape)} instead")
    mask = (which == 0, which == 1, False)
    return C._convolution_backward(
        grad_output, input, weight, output_mask=mask, stride=C._tuple(stride, d, "stride"),
        padding=C._tuple(padding, d, "padding"), dilation=C._tuple(dilation, d, "dilation"),
        transposed=False, output_padding=(0,) * d, groups=groups)[which]


def _stand_in(size, like):
    """A tensor of `size` that the backward reads only for its shape (no memory: a broadcast)."""
    return zeros(1, dtype=like.dtype, device=like.device).expand(tuple(size))


def _input_grad(d):
    def conv_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _backward(d, grad_output, _stand_in(input_size, grad_output), weight, 0, stride,
                         padding, dilation, groups)
    conv_input.__name__ = conv_input.__qualname__ = f"conv{d}d_input"
    conv_input.__doc__ = f"The gradient of conv{d}d with respect to its input (of input_size)."
    return conv_input


def _weight_grad(d):
    def conv_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _backward(d, grad_output, input, _stand_in(weight_size, grad_output), 1, stride,
                         padding, dilation, groups)
    conv_weight.__name__ = conv_weight.__qualname__ = f"conv{d}d_weight"
    conv_weight.__doc__ = f"The gradient of conv{d}d with respect to its weight (of weight_size)."
    return conv_weight


conv1d_input, conv1d_weight = _input_grad(1), _weight_grad(1)
conv2d_input, conv2d_weight = _input_grad(2), _weight_grad(2)
conv3d_input, conv3d_weight = _input_grad(3), _weight_grad(3)
