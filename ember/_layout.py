"""torch.layout and torch.memory_format, and their values (ember.strided, ember.contiguous_format,
...), and the error of an op a layout has no kernel for. They sit below the Tensor class, the
autograd graph and the ops, which all read them."""


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
sparse_csr = layout("torch.sparse_csr")
sparse_csc = layout("torch.sparse_csc")
sparse_bsr = layout("torch.sparse_bsr")
sparse_bsc = layout("torch.sparse_bsc")
contiguous_format = memory_format("torch.contiguous_format")
preserve_format = memory_format("torch.preserve_format")
channels_last = memory_format("torch.channels_last")
channels_last_3d = memory_format("torch.channels_last_3d")


def not_supported(op, device_type="cpu"):
    """torch's error for an op the sparse layout has no kernel for."""
    backend = "SparseCUDA" if device_type == "cuda" else "SparseCPU"
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the '{backend}' backend. This could be "
        f"because the operator doesn't exist for this backend, or was omitted during the "
        f"selective/custom build process (if using custom build). If you are a Facebook "
        f"employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for "
        f"possible resolutions.")
