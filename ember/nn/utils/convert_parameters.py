"""Flatten parameters into one vector and back."""
from ..._tensor import Tensor
from ...ops.joining import cat


def _check_device(param, old):
    if old is not None and param.device != old:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return param.device


def parameters_to_vector(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    device = None
    vec = []
    for p in parameters:
        device = _check_device(p, device)
        vec.append(p.view(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected ember.Tensor, but got: {type(vec).__name__}")
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    device = None
    offset = 0
    for p in parameters:
        device = _check_device(p, device)
        n = p.numel()
        # replaces each parameter's data (not an in-place copy), as torch does
        p.data = vec[offset:offset + n].view_as(p).data
        offset += n
