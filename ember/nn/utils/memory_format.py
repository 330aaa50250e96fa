"""Give the weights of every (transposed) convolution in a module a memory format."""
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        # the same Parameter, re-laid out in place (an optimizer holding it still does)
        module.weight.data = module.weight.detach().clone().contiguous(
            memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Lay out the weight of each Conv2d/ConvTranspose2d in `module` (recursively) in
    `memory_format`; returns `module`."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """As convert_conv2d_weight_memory_format, for Conv3d/ConvTranspose3d."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
