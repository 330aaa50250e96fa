"""torch.from_file: a CPU tensor over a memory-mapped file. shared=True maps the file for
writing (creating or growing it to the size needed), so writes to the tensor reach the file;
otherwise the mapping is copy-on-write: the tensor reads the file, and its writes stay private.
"""
import errno
import os

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor

__all__ = ["from_file"]


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    dtype = dtype or D.get_default_dtype()
    nbytes = int(size) * dtype.itemsize
    if shared:
        if not os.path.exists(filename) or os.path.getsize(filename) < nbytes:
            with open(filename, "ab") as f:
                f.truncate(nbytes)
    else:
        if not os.path.exists(filename):
            raise RuntimeError(f"unable to open file <{filename}> in read-only mode: "
                               f"{os.strerror(errno.ENOENT)} ({errno.ENOENT})")
        have = os.path.getsize(filename)
        if have < nbytes:
            raise RuntimeError(f"file <{filename}> size <{have}> is smaller than the required "
                               f"mapping size <{nbytes}>")
    if size == 0:
        data = np.empty(0, dtype.np)
    else:
        data = np.memmap(filename, dtype=dtype.np, mode="r+" if shared else "c",
                         shape=(int(size),)).view(np.ndarray)
    out = Tensor._make(data, dtype)
    if requires_grad:
        out.requires_grad_(True)
    return out
