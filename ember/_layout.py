"""torch.layout and torch.memory_format, and their values (ember.strided, ember.contiguous_format,
...). They sit below the Tensor class and the autograd graph, which both read them."""


class memory_format(str):
    """torch.memory_format. Its values are the strings "torch.<name>" (what ember's code
    compares with), printed as ember's names."""
    __slots__ = ()

    def __repr__(self):
        return "ember." + self[len("torch."):]

    __str__ = __repr__


class layout(memory_format):
    """torch.layout (only strided tensors exist in ember)."""
    __slots__ = ()


# the layouts and memory formats (ember.strided, ember.contiguous_format, ...)
strided = layout("torch.strided")
sparse_coo = layout("torch.sparse_coo")
contiguous_format = memory_format("torch.contiguous_format")
preserve_format = memory_format("torch.preserve_format")
channels_last = memory_format("torch.channels_last")
channels_last_3d = memory_format("torch.channels_last_3d")
