"""Tensors in memory that processes share: `share_memory_()`, `is_shared()`, and how
ember.multiprocessing sends tensors to other processes (torch's "file_descriptor" strategy).

A shared storage is an anonymous memory file (`os.memfd_create`) mapped MAP_SHARED; the
tensor's array is a NumPy view of that mapping. Sending a tensor to another process (a
multiprocessing Queue, or a Process argument under "spawn"/"forkserver") sends a duplicate of
the file descriptor, not the values (`reduce_tensor`, registered with multiprocessing's
ForkingPickler by ember.multiprocessing): the receiver maps the same memory, so writes on
either side are seen by the other, as with torch. A tensor sent that is not shared yet is
moved to shared memory first (the sender's tensor too), as torch does. Under "fork" a child
inherits the shared mappings and sees the same memory without any pickling. Plain `pickle`
and `ember.save` still copy values.

Moving a storage means copying it into a new mapping and pointing the root tensor's array,
and every tensor sharing that memory (views, `detach()`/`.data` results), at it (_aliases).
"""
import gc
import mmap
import os
import sys
import tempfile
import weakref
from multiprocessing.reduction import DupFd

import numpy as np
from numpy.lib.stride_tricks import as_strided


_SHARED = "shared"      # _extra key of a storage root in shared memory: its _Segment


def _memory_file():
    """A new file that lives in memory and has no name (so nothing to clean up: it goes when
    the last descriptor and mapping of it close)."""
    if hasattr(os, "memfd_create"):                             # Linux
        return os.memfd_create("ember_shared", os.MFD_CLOEXEC)
    fd, path = tempfile.mkstemp(prefix="ember_shared_",
                                dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    os.unlink(path)
    return fd


class _Segment:
    """One shared memory file: its descriptor (kept, to send it on) and its mapping."""
    __slots__ = ("fd", "map", "nbytes", "__weakref__")

    def __init__(self, nbytes, fd=None):
        if fd is None:
            fd = _memory_file()
            os.ftruncate(fd, max(nbytes, 1))
        self.fd, self.nbytes = fd, nbytes
        self.map = mmap.mmap(fd, max(nbytes, 1), mmap.MAP_SHARED,
                             mmap.PROT_READ | mmap.PROT_WRITE)

    def array(self, dtype):
        """The whole segment as a flat array of `dtype`."""
        dtype = np.dtype(dtype)
        return np.frombuffer(self.map, dtype, self.nbytes // dtype.itemsize)

    def __del__(self):
        try:
            os.close(self.fd)
        except OSError:
            pass


def _address(a):
    return a.__array_interface__["data"][0]


def _window(flat, shape, byte_strides, offset):
    """A view of the 1-D array `flat` from element `offset` with the given geometry."""
    return as_strided(flat[offset:], shape, byte_strides)


def segment_of(tensor):
    extra = tensor._storage_root()._extra
    return extra.get(_SHARED) if extra else None


def is_shared(tensor):
    return tensor._device.type == "cuda" or segment_of(tensor) is not None


def _storage(root):
    """The flat array a root tensor's memory is (its resize_ storage, or its own array)."""
    extra = root._extra
    flat = extra.get("storage") if extra else None
    if flat is not None:
        return flat
    data = root._data
    if data.flags.c_contiguous:
        return data.reshape(-1)
    extent = 1 + sum((n - 1) * s for n, s in zip(data.shape, data.strides)) // data.itemsize
    return as_strided(data, (extent if data.size else 0,), (data.itemsize,))


def _unaliased(root):
    """True when nothing else can lie in the root's memory: its array owns the memory and only
    the root refers to it (a fresh tensor, a DataLoader batch), and no view or detach() was
    made of it (those would have made its version counter)."""
    data = root._data
    return data.base is None and root._vc is None and \
        sys.getrefcount(data) <= 3          # (root._data, `data` here, getrefcount's argument)


def _aliases(roots):
    """Every other tensor whose memory lies in one of `roots`, with its root: views and
    `detach()` results share the root's version counter; `.data` results and detach() of a
    root share its very array. One scan of the garbage collector's referrers finds them for
    all the roots at once (none when every root is _unaliased)."""
    suspects = [r for r in roots if not _unaliased(r)]
    if not suspects:
        return []
    by_counter = {id(r._vc): r for r in suspects if r._vc is not None}
    by_array = {id(r._data): r for r in suspects}
    targets = [r._vc for r in by_counter.values()] + [r._data for r in by_array.values()]
    found = []
    for obj in gc.get_referrers(*targets):
        if not hasattr(type(obj), "_storage_root"):
            continue
        root = by_counter.get(id(obj._vc))
        if root is None:
            root = by_array.get(id(obj._data))
        if root is not None and obj is not root:
            found.append((obj, root))
    return found


def _repoint(t, old_start, new_flat):
    """Point `t`'s array at the same place in `new_flat` as it had in the old storage."""
    old = t._data
    offset = (_address(old) - old_start) // old.itemsize
    t._data = _window(new_flat, old.shape, old.strides, offset)


def share_storages(tensors):
    """Move the storages of `tensors` (CPU ones not shared yet) into shared memory."""
    roots = {}
    for t in tensors:
        if t._device.type != "cpu" or getattr(t._data, "_ember_sparse", False):
            continue
        root = t._storage_root()
        if segment_of(root) is None:
            roots[id(root)] = root
    if not roots:
        return
    roots = list(roots.values())
    aliases = _aliases(roots)
    moved = {}
    for root in roots:
        old = _storage(root)
        segment = _Segment(old.nbytes)
        new = segment.array(old.dtype)
        new[...] = old
        start = _address(old)
        moved[id(root)] = (start, new)
        extra = root._get_extra()
        if "storage" in extra:
            extra["storage"] = new
        _repoint(root, start, new)
        extra[_SHARED] = segment
    for t, root in aliases:
        start, new = moved[id(root)]
        _repoint(t, start, new)
        if t._storage_root() is t:              # (.data, or detach() of a root: a root too)
            t._get_extra()[_SHARED] = root._extra[_SHARED]


# ----------------------------------------------------------------------------- sending
_received = weakref.WeakValueDictionary()   # (device, inode) of a received file -> _Segment


def reduce_tensor(tensor):
    """How ForkingPickler sends a tensor: a duplicate of its shared memory file descriptor and
    its place in that memory (torch's "file_descriptor" sharing strategy): map_received's
    arguments, and the tensor's dtype name and requires_grad. (A CUDA or sparse tensor:
    None, and it is sent by value.)"""
    if tensor._requires_grad and tensor._grad_fn is not None:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the "
            "queue).")
    if tensor._device.type != "cpu" or getattr(tensor._data, "_ember_sparse", False):
        return None
    share_storages([tensor])
    segment = segment_of(tensor)
    data = tensor._data
    offset = (_address(data) - _address(segment.array(np.uint8))) // data.itemsize
    return (DupFd(segment.fd), segment.nbytes, data.dtype, tuple(data.shape), data.strides,
            offset), (tensor._dtype.name, tensor._requires_grad)


def map_received(dup_fd, nbytes, np_dtype, shape, byte_strides, offset):
    """The receiving side: map the sent memory file (once per file in this process) and
    return the array over it and its segment (ember.multiprocessing makes the tensor)."""
    fd = dup_fd.detach()
    stat = os.fstat(fd)
    key = (stat.st_dev, stat.st_ino)
    segment = _received.get(key)
    if segment is None:
        segment = _received[key] = _Segment(nbytes, fd)
    else:
        os.close(fd)
    return _window(segment.array(np_dtype), shape, byte_strides, offset), segment


def mark_shared(tensor, segment):
    tensor._storage_root()._get_extra()[_SHARED] = segment
