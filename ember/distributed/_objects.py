"""Pickling for the *_object collectives, with an unpickler that never runs received code.

torch's object collectives unpickle whatever another rank sends, so any rank can run code on
all others. ember's unpickler takes names only from the allowlist `ember.load(weights_only=True)`
uses (plain containers, numbers, strings, dtypes, devices) plus the names a user trusts with
`ember.serialization.add_safe_globals`; anything else is refused with pickle.UnpicklingError.
Tensors travel as (dtype name, shape, raw bytes), never as a pickled callable.
"""
import io
import pickle

import numpy as np

from .. import _dtype as D
from .. import serialization as _serialization
from .._device import device as _device_type
from .._tensor import Tensor

# ember's own reductions of a dtype and a device, both plain look-ups
_EMBER_ALLOWED = {
    ("ember._dtype", "_dtype_by_name"): D._dtype_by_name,
    ("ember._device", "device"): _device_type,
}


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Tensor):
            data = np.ascontiguousarray(obj.detach()._host())
            return ("ember.tensor", obj.dtype.name, tuple(obj.shape),
                    data.view(np.uint8).tobytes(), bool(obj.requires_grad))
        return None


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        found = _EMBER_ALLOWED.get((module, name))
        if found is None:
            found = _serialization._ALLOWED.get((module, name))
        if found is None and module not in _serialization._BLOCKED_MODULES:
            found = _serialization._safe_global(f"{module}.{name}")
        if found is None:
            raise pickle.UnpicklingError(
                f"ember.distributed refused an object from another rank: global "
                f"{module}.{name} is not allowed (trust it with "
                f"ember.serialization.add_safe_globals([{name}]) on the receiving ranks)")
        return found

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "ember.tensor"
                and pid[1] in D.ALIASES):
            raise pickle.UnpicklingError(f"unknown persistent id in received object: {pid!r}")
        _, dtype_name, shape, raw, requires_grad = pid
        dtype = D.ALIASES[dtype_name]
        array = np.frombuffer(bytearray(raw), dtype=dtype.np).reshape(shape)
        return Tensor._make(array, dtype, requires_grad=requires_grad)


def dumps(obj):
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return out.getvalue()


def loads(data):
    return _SafeUnpickler(io.BytesIO(data)).load()
