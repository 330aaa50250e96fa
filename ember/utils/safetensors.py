"""Reading and writing .safetensors files (no dependency on the safetensors package).

The format: an 8-byte little-endian unsigned header length N, then N bytes of JSON, then the
raw little-endian bytes of every tensor. The JSON maps each tensor name to
{"dtype": "F32", "shape": [...], "data_offsets": [begin, end]} (offsets into the byte area that
follows the header) and may hold "__metadata__": {str: str}. Nothing in the file is executed:
it is data only, which is the point of the format.
"""
import json
import os
import struct

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor

__all__ = ["save_file", "load_file", "save", "load"]

_CODE = {
    D.bool_: "BOOL", D.uint8: "U8", D.int8: "I8", D.int16: "I16", D.int32: "I32",
    D.int64: "I64", D.float16: "F16", D.bfloat16: "BF16", D.float32: "F32", D.float64: "F64",
    D.complex64: "C64",
}
_DTYPE = {code: dt for dt, code in _CODE.items()}
_MAX_HEADER = 100_000_000       # as the reference implementation: refuse absurd headers


class SafetensorError(ValueError):
    """A file that is not a valid safetensors file."""


def _serialize(tensors, metadata):
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise ValueError("metadata must be a dict of str to str")
    header = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    arrays, offset = [], 0
    for name in sorted(tensors):
        t = tensors[name]
        if not isinstance(name, str) or name == "__metadata__":
            raise ValueError(f"invalid tensor name {name!r}")
        if not isinstance(t, Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected ember.Tensor but received "
                             f"{type(t)}")
        code = _CODE.get(t.dtype)
        if code is None:
            raise ValueError(f"safetensors cannot store dtype {t.dtype}")
        array = np.ascontiguousarray(t.detach()._host())
        if not np.little_endian and array.dtype.itemsize > 1:
            array = array.byteswap()              # the file is little-endian
        size = array.nbytes
        header[name] = {"dtype": code, "shape": list(array.shape),
                        "data_offsets": [offset, offset + size]}
        arrays.append(array)
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)           # keep the byte area 8-byte aligned
    return struct.pack("<Q", len(text)) + text, arrays


def save(tensors, metadata=None):
    """The bytes of a safetensors file holding `tensors` (a dict of name -> Tensor)."""
    head, arrays = _serialize(tensors, metadata)
    return head + b"".join(a.view(np.uint8).tobytes() for a in arrays)


def save_file(tensors, filename, metadata=None):
    """Write `tensors` (a dict of name -> Tensor) to a .safetensors file."""
    head, arrays = _serialize(tensors, metadata)
    with open(filename, "wb") as out:
        out.write(head)
        for a in arrays:
            if a.size:
                out.write(memoryview(a.view(np.uint8)).cast("B"))


def _parse_header(read, total):
    """Validate the header; return (tensor entries, metadata, start of the byte area)."""
    if total < 8:
        raise SafetensorError("not a safetensors file: shorter than its 8-byte header length")
    (n,) = struct.unpack("<Q", read(0, 8))
    if n > _MAX_HEADER or 8 + n > total:
        raise SafetensorError(f"not a safetensors file (or truncated): header length {n} does "
                              f"not fit in a file of {total} bytes")
    try:
        header = json.loads(read(8, n).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SafetensorError(f"invalid safetensors header: {e}") from None
    if not isinstance(header, dict):
        raise SafetensorError("invalid safetensors header: not a JSON object")
    metadata = header.pop("__metadata__", None)
    start = 8 + n
    area = total - start
    entries, spans = {}, []
    for name, info in header.items():
        try:
            dtype = _DTYPE[info["dtype"]]
            shape = [int(s) for s in info["shape"]]
            begin, end = (int(x) for x in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise SafetensorError(f"invalid safetensors header entry for {name!r}: {info!r}") \
                from None
        if any(s < 0 for s in shape) or not 0 <= begin <= end <= area or \
                (end - begin) != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
            raise SafetensorError(f"invalid safetensors file: tensor {name!r} of shape {shape} "
                                  f"and dtype {info['dtype']} does not match its byte range "
                                  f"[{begin}, {end}) in a data area of {area} bytes")
        entries[name] = (dtype, tuple(shape), begin, end)
        spans.append((begin, end))
    spans.sort()
    for (_, e1), (b2, _) in zip(spans, spans[1:]):
        if b2 < e1:
            raise SafetensorError("invalid safetensors file: tensors overlap")
    return entries, metadata, start


def _tensors_from(entries, fill, start, device):
    """Build the tensors; fill(offset, uint8 array) copies the file's bytes into an array."""
    out = {}
    for name in sorted(entries, key=lambda k: entries[k][2]):
        dtype, shape, begin, end = entries[name]
        array = np.empty(shape, dtype.np)
        if array.size:
            fill(start + begin, array.reshape(-1).view(np.uint8))
        if np.little_endian is False and dtype.itemsize > 1:
            array.byteswap(inplace=True)          # the file is little-endian
        t = Tensor._make(array, dtype)
        out[name] = t if device in (None, "cpu") else t.to(device)
    return out


def load(data, device="cpu"):
    """The tensors in the bytes of a safetensors file."""
    def read(offset, size):
        return data[offset:offset + size]
    def fill(offset, into):
        into[:] = np.frombuffer(data, np.uint8, into.size, offset)
    entries, _, start = _parse_header(read, len(data))
    return _tensors_from(entries, fill, start, device)


def load_file(filename, device="cpu"):
    """Read a .safetensors file into a dict of name -> Tensor."""
    with open(filename, "rb") as f:
        total = os.fstat(f.fileno()).st_size

        def read(offset, size):
            f.seek(offset)
            data = f.read(size)
            if len(data) != size:
                raise SafetensorError("safetensors file is truncated")
            return data
        def fill(offset, into):
            f.seek(offset)
            if f.readinto(memoryview(into)) != into.size:
                raise SafetensorError("safetensors file is truncated")
        entries, _, start = _parse_header(read, total)
        return _tensors_from(entries, fill, start, device)


def load_metadata(filename):
    """The "__metadata__" dict of a .safetensors file (None when it has none)."""
    with open(filename, "rb") as f:
        total = os.fstat(f.fileno()).st_size

        def read(offset, size):
            f.seek(offset)
            return f.read(size)
        return _parse_header(read, total)[1]
