"""Text form of tensors, matching what ``repr(torch_tensor)`` prints (with ``ember.`` for ``torch.``).

The layout rules were found by running PyTorch and comparing outputs:

* One formatter is chosen for the whole tensor from the values that will actually be printed
  (only the edge items when the tensor is summarised), so every element shares a column width.
* Floats are printed in one of three styles: "integer" (``1.``), fixed point (``1.5000``) or
  scientific (``1.5000e+00``).  The choice only looks at finite non-zero values.
* 1-D rows wrap to ``linewidth``; n-D tensors nest brackets, separating sub-tensors of rank k
  by k-1 blank lines.  Above ``threshold`` elements every axis longer than ``2 * edgeitems`` is
  cut down to its edges with ``...`` in between.
* Suffixes (``device=``, ``dtype=``, ``requires_grad=`` ..., a dual tensor's ``tangent=`` last)
  follow the closing bracket and move to their own line when they would not fit.
"""
import math
from contextlib import contextmanager

import numpy as np

from . import _dtype as _dtypes
from ._backend import backend as _backend
from .ops import hooks as _hooks

__all__ = ["set_printoptions", "get_printoptions", "printoptions", "tensor_repr",
           "legacy_type_name", "scalar_type_name"]


# ----------------------------------------------------------------------------- print options
class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


_OPTS = _PrintOptions()

# profile name -> (precision, threshold, edgeitems, linewidth)
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Change how tensors print; arguments left as None keep their value, except ``sci_mode``,
    which (as in PyTorch) is always overwritten, so any call without it restores automatic mode.
    A ``profile`` ('default', 'short', 'full') is applied first; unknown profiles are ignored."""
    if profile in _PROFILES:
        (_OPTS.precision, _OPTS.threshold,
         _OPTS.edgeitems, _OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        _OPTS.precision = precision
    if threshold is not None:
        _OPTS.threshold = threshold
    if edgeitems is not None:
        _OPTS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTS.linewidth = linewidth
    _OPTS.sci_mode = sci_mode


def get_printoptions():
    return {"precision": _OPTS.precision, "threshold": _OPTS.threshold,
            "edgeitems": _OPTS.edgeitems, "linewidth": _OPTS.linewidth,
            "sci_mode": _OPTS.sci_mode}


@contextmanager
def printoptions(**kwargs):
    """Temporarily change print options: ``with printoptions(precision=2): ...``."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ----------------------------------------------------------------------------- type names
_SCALAR_TYPE_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
    "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
    "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz",
    "float8_e8m0fnu": "Float8_e8m0fnu",
    "bool": "Bool", "complex32": "ComplexHalf", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def scalar_type_name(dtype):
    """PyTorch's ScalarType name of a dtype, e.g. 'Float' for float32."""
    return _SCALAR_TYPE_NAMES[dtype.name]


def legacy_type_name(dtype, device):
    """The legacy tensor type name without 'torch.', e.g. 'FloatTensor', 'cuda.LongTensor'."""
    name = scalar_type_name(dtype) + "Tensor"
    device_type = getattr(device, "type", None) or str(device).split(":")[0]
    return name if device_type == "cpu" else f"{device_type}.{name}"


# ----------------------------------------------------------------------------- formatters
class _IntFormatter:
    """Integers and booleans: ``str()`` of each value, right-aligned to the widest."""

    def __init__(self, values):
        self.width = max((len(str(v)) for v in values), default=1)

    def format(self, value):
        return str(value).rjust(self.width)


class _FloatFormatter:
    """Real floating-point values; ``values`` is a float64 array of what will be printed."""

    def __init__(self, values):
        self.precision = _OPTS.precision
        finite = values[np.isfinite(values) & (values != 0)]
        self.int_mode = bool(np.all(np.ceil(finite) == finite))
        self.sci_mode = False
        if finite.size == 0:
            # Only zeros, infs and nans: always printed as "0.", "inf", "nan" (even if the
            # user forced sci_mode).
            self.width = 1
            return
        self.sci_mode = self._auto_sci(np.abs(finite))
        if _OPTS.sci_mode is not None:
            self.sci_mode = _OPTS.sci_mode
        self.width = max(len(self._text(v)) for v in finite.tolist())

    def _auto_sci(self, magnitudes):
        # Switch to scientific notation when the range of magnitudes is too wide for one
        # fixed-point column, or numbers are very large (or, for non-integers, very small).
        largest, smallest = magnitudes.max(), magnitudes.min()
        with np.errstate(over="ignore"):
            wide = largest / smallest > 1000.0 or largest > 1.0e8
        if self.int_mode:
            return bool(wide)
        return bool(wide or smallest < 1.0e-4)

    def _text(self, value):
        if self.sci_mode:
            return f"{value:.{self.precision}e}"
        if self.int_mode:
            text = f"{value:.0f}"
            return text + "." if math.isfinite(value) else text
        return f"{value:.{self.precision}f}"

    def format(self, value):
        return self._text(value).rjust(self.width)


class _ComplexFormatter:
    """Complex values: independent formatters for the real and imaginary parts.

    The imaginary part loses its padding and gains an explicit sign, so elements of one column
    may differ in length (PyTorch does the same)."""

    def __init__(self, values):
        self.real = _FloatFormatter(values.real)
        self.imag = _FloatFormatter(values.imag)
        # PyTorch's line-wrapping budget for a complex element ("+" and "j" plus ", ").
        self.width = self.real.width + self.imag.width + 1

    def format(self, value):
        imag = (self.imag.format(value.imag) + "j").lstrip()
        if imag[0] not in "+-":
            imag = "+" + imag
        return self.real.format(value.real) + imag


def _make_formatter(values, dtype):
    """A formatter for ``values``, and ``values`` converted to the type it formats."""
    if dtype.is_complex:
        values = _dtypes.as_torch_rounds(values, np.complex128).astype(np.complex128)
        return _ComplexFormatter(values.reshape(-1)), values
    if dtype.is_floating_point:
        values = values.astype(np.float64)
        return _FloatFormatter(values.reshape(-1)), values
    return _IntFormatter(values.reshape(-1).tolist()), values


# ----------------------------------------------------------------------------- summarising
def _summarise(data, edgeitems):
    """Keep only the first and last ``edgeitems`` entries of every axis longer than
    ``2 * edgeitems``; also return which axes were cut.  One fancy-indexing step, so a huge
    tensor costs only the size of the result."""
    cut = [n > 2 * edgeitems for n in data.shape]
    index = []
    for n, is_cut in zip(data.shape, cut):
        if is_cut:
            index.append(np.r_[0:edgeitems, n - edgeitems:n])
        else:
            index.append(np.arange(n))
    return data[np.ix_(*index)], cut


# ----------------------------------------------------------------------------- layout
class _Layout:
    """Builds the bracketed body of a tensor from its (possibly summarised) values."""

    def __init__(self, values, formatter, cut, edgeitems):
        self.values = values
        self.formatter = formatter
        self.cut = cut
        self.edgeitems = edgeitems

    def body(self, indent):
        return self._block(self.values, 0, indent)

    def _block(self, values, axis, indent):
        if values.ndim == 1:
            return self._row(values, axis, indent)
        parts = [self._block(sub, axis + 1, indent + 1) for sub in values]
        if self.cut[axis]:
            parts.insert(self.edgeitems, "...")
        # Sub-tensors of rank k are separated by k-1 blank lines.
        separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
        return "[" + separator.join(parts) + "]"

    def _row(self, values, axis, indent):
        items = [self.formatter.format(v) for v in values.tolist()]
        if self.cut[axis]:
            items.insert(self.edgeitems, " ...")
        # "+ 2" budgets the ", " separator; the "..." item counts as an element.
        per_line = max(1, int((_OPTS.linewidth - indent) // (self.formatter.width + 2)))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


# ----------------------------------------------------------------------------- repr
_PREFIX = "tensor("


def _host_array(t):
    if t._device.type == "cpu":
        return np.asarray(t._data)
    return np.asarray(t._host())


def _default_dtype_names():
    """Names of the dtypes whose ``dtype=`` suffix is omitted for non-empty tensors."""
    default = _dtypes.get_default_dtype().name
    complex_default = "complex128" if default == "float64" else "complex64"
    return {default, complex_default, "int64", "bool"}


def _body_and_size_suffix(t, data):
    """The bracketed values, and whether a ``size=`` suffix is needed."""
    if data.size == 0:
        return "[]", data.ndim != 1
    edgeitems = _OPTS.edgeitems
    # With edgeitems=0 a summary would hide every value, so PyTorch always states the size
    # (even when this tensor is small enough to print in full).
    size_suffix = not edgeitems
    if data.ndim == 0:
        return _scalar_text(data, t._dtype), size_suffix
    summarise = data.size > _OPTS.threshold
    if summarise and not edgeitems:
        return "[...]", size_suffix
    cut = [False] * data.ndim
    if summarise:
        data, cut = _summarise(data, edgeitems)
    formatter, values = _make_formatter(data, t._dtype)
    return _Layout(values, formatter, cut, edgeitems).body(len(_PREFIX)), size_suffix


def _scalar_text(data, dtype):
    formatter, values = _make_formatter(data, dtype)
    return formatter.format(values.item())


def _suffixes(t, data, size_suffix):
    out = []
    if t._device.type != "cpu":
        out.append(f"device='{t._device}'")
    if size_suffix:
        out.append(f"size={tuple(data.shape)}")
    # Empty tensors show any dtype but the default float one; others hide the common ones.
    if data.size == 0:
        show_dtype = t._dtype.name != _dtypes.get_default_dtype().name
    else:
        show_dtype = t._dtype.name not in _default_dtype_names()
    if show_dtype:
        out.append(f"dtype=ember.{t._dtype.name}")
    try:
        name = t.grad_fn.name() if t.grad_fn is not None else None
    except RuntimeError:
        # reading grad_fn refuses some views (one made in no_grad whose base was then changed
        # in place with grad on); PyTorch prints those as `grad_fn=<Invalid>`
        name = "Invalid"
    if name is not None:
        # (without a C++ namespace: `torch::autograd::CopyBackwards` prints `<CopyBackwards>`)
        out.append(f"grad_fn=<{name.rsplit('::', 1)[-1]}>")
    elif t._requires_grad:
        out.append("requires_grad=True")
    return out


def _append_suffixes(text, suffixes):
    """Add ``, suffix`` items, each moving to a new indented line when it would not fit.

    PyTorch's test is slightly conservative: it counts the current line as two characters
    longer than it is (found by experiment), then adds ", " and the suffix."""
    line_len = len(text) - (text.rfind("\n") + 1) + 2
    for suffix in suffixes:
        if line_len + len(suffix) + 2 > _OPTS.linewidth:
            text += ",\n" + " " * len(_PREFIX) + suffix
            line_len = len(_PREFIX) + len(suffix)
        else:
            text += ", " + suffix
            line_len += len(suffix) + 2
    return text + ")"


def _inner_repr(data, dtype, indent):
    """A sparse tensor's indices or values as torch prints them inside its repr: the body
    indented under `indent` characters, with a size for an empty one, and no dtype."""
    if data.size == 0:
        return f"tensor([], size={tuple(data.shape)})"
    summarise = data.size > _OPTS.threshold and _OPTS.edgeitems
    cut = [False] * data.ndim
    if summarise:
        data, cut = _summarise(data, _OPTS.edgeitems)
    formatter, values = _make_formatter(data, dtype)
    return f"tensor({_Layout(values, formatter, cut, _OPTS.edgeitems).body(indent)})"


def _sparse_repr(t):
    """torch's repr of a COO tensor: its indices, values, size, nnz and layout."""
    coo = t._data
    host = _backend(t._device.type).to_host
    head = _PREFIX + "indices="
    text = head + _inner_repr(host(coo.indices), _dtypes.int64, len(head) + len(_PREFIX))
    pad = " " * len(_PREFIX)
    text += ",\n" + pad + "values=" + _inner_repr(host(coo.values), t._dtype,
                                                    len(pad) + len("values=") + len(_PREFIX))
    text += ",\n" + pad + f"size={tuple(coo.shape)}"
    # (torch wraps a COO tensor's suffixes by their exact length, without the dense
    # repr's two characters of margin)
    return sparse_repr_tail(t, text, [f"nnz={coo.nnz}"], coo.nnz, "sparse_coo",
                            len(pad) + len(f"size={tuple(coo.shape)}"))


def sparse_repr_tail(t, text, suffixes, nnz, layout, line):
    """End a sparse tensor's repr `text`: `suffixes` (its size and nnz), then its device, its
    dtype where torch shows it, its layout and its grad, each added to the last line while
    that stays within the line width (`line`: the last line's length as torch counts it),
    else on a new line."""
    pad = " " * len(_PREFIX)
    if t._device.type != "cpu":
        suffixes.insert(0, f"device='{t._device}'")
    if nnz == 0 and t._dtype.name != _dtypes.get_default_dtype().name or \
            nnz and t._dtype.name not in _default_dtype_names():
        suffixes.append(f"dtype=ember.{t._dtype.name}")
    suffixes.append(f"layout=ember.{layout}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name().rsplit('::', 1)[-1]}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    for suffix in suffixes:
        if line + len(suffix) + 2 > _OPTS.linewidth:
            text += ",\n" + pad + suffix
            line = len(pad) + len(suffix)
        else:
            text += ", " + suffix
            line += len(suffix) + 2
    return text + ")"


def tensor_repr(t):
    """``repr`` of an ember tensor, identical to PyTorch's with ``ember.`` for ``torch.``."""
    if getattr(t._data, "_ember_sparse", False):
        return _sparse_repr(t)
    if getattr(type(t._data), "_ember_csr", False):
        return t._data.tensor_repr(t)           # (a CSR matrix prints itself: ember/sparse)
    data = _host_array(t)
    body, size_suffix = _body_and_size_suffix(t, data)
    suffixes = _suffixes(t, data, size_suffix)
    if _hooks.dual_levels:          # (forward AD's hook: a dual tensor shows its tangent)
        tangent = _hooks.tangent_of(t)
        if tangent is not None:
            # a dual tensor's tangent comes last, as its own repr (not re-indented); a
            # zero-dim one as its Python number
            suffixes.append(f"tangent={tangent.item() if tangent.dim() == 0 else tangent!r}")
    return _append_suffixes(_PREFIX + body, suffixes)
