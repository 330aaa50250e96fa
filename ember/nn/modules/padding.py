"""Padding layers: each pads the last 1, 2 or 3 dimensions through `F.pad`.

`padding` is an int (the same on every side) or a sequence in F.pad's order:
(left, right, top, bottom, front, back).
"""
from .. import functional as F
from .module import Module
from .pooling import _ntuple


class _PadNd(Module):
    mode = None
    dims = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2 * self.dims)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(Module):
    dims = None

    def __init__(self, padding, value):
        super().__init__()
        self.padding = _ntuple(padding, 2 * self.dims)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    dims = 1


class ConstantPad2d(_ConstantPadNd):
    dims = 2


class ConstantPad3d(_ConstantPadNd):
    dims = 3


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    extra_repr = _PadNd.extra_repr        # the padding only


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    extra_repr = _PadNd.extra_repr


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    extra_repr = _PadNd.extra_repr


class _ReflectionPadNd(_PadNd):
    mode = "reflect"


class _ReplicationPadNd(_PadNd):
    mode = "replicate"


class ReflectionPad1d(_ReflectionPadNd):
    mode, dims = "reflect", 1


class ReflectionPad2d(_ReflectionPadNd):
    mode, dims = "reflect", 2


class ReflectionPad3d(_ReflectionPadNd):
    mode, dims = "reflect", 3


class ReplicationPad1d(_ReplicationPadNd):
    mode, dims = "replicate", 1


class ReplicationPad2d(_ReplicationPadNd):
    mode, dims = "replicate", 2


class ReplicationPad3d(_ReplicationPadNd):
    mode, dims = "replicate", 3


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input):
        # unlike the other modes, the module checks the rank itself (a ValueError)
        if input.dim() not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"expected {self.dims + 1}D or {self.dims + 2}D input "
                             f"(got {input.dim()}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    dims = 1


class CircularPad2d(_CircularPadNd):
    dims = 2


class CircularPad3d(_CircularPadNd):
    dims = 3
