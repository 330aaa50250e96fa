"""ember.types: the type aliases torch's annotations use, for code that annotates with them
(`def f(x: Number, device: Device = None)`)."""
import os
from typing import IO, Union

from ._device import device as _device

__all__ = ["Number", "Device", "FileLike", "Storage"]

Number = Union[int, float, bool]
Device = Union[_device, str, int, None]
FileLike = Union[str, os.PathLike[str], IO[bytes]]


class Storage:
    """The annotation type for a storage argument (ember's storages are
    ember.UntypedStorage and ember.TypedStorage)."""
