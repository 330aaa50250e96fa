"""THE op mechanism: an op is declared once, as a forward on raw arrays and a derivative in ember ops.

    @primitive("mul", node="MulBackward0", save=("self", "other"), promote=COMMON)
    def mul(xp, self, other):            # raw arrays (numpy or cupy); Python scalars stay scalars
        return xp.multiply(self, other)

    @mul.derivative
    def _(ctx, grad):                    # ember Tensors, so the derivative is differentiable too
        return grad * ctx.other, grad * ctx.self

The forward's positional parameters are its tensor inputs (a `*args` parameter takes a list of
tensors); keyword-only parameters are the op's options, readable on `ctx` in the derivative.

Everything else happens here, once, for every op: type promotion, picking the array module of the
inputs' device, wrapping results, recording a node only when grad mode is on and an input
requires grad, saving (with version checks) what the derivative reads, and reducing broadcast
gradients back to each input's shape and dtype.
"""
import inspect

import numpy as np

from .. import _dtype as D, _dtype_kernels
from .._tensor import (Tensor, _VIEW_MODE, view_mode_error, INFERENCE, INFERENCE_SAVED_ERROR,
                       check_inference_write, inference_tensors_made as _inference_made,
                       _type_name)
from ..autograd import grad_mode
from ..autograd.graph import (Node, SavedTensor, PackedSaved, FREED_ERROR, _sequence,
                              modified_message, INTERNAL_OVERLAP_ERROR)
from .._backend import backend, ARRAY_MODULES
from .._device import CPU
from ..autograd import anomaly_mode as _anomaly
from . import hooks as _hooks
from .layout import conform_layout
from .._printing import scalar_type_name
from ..autograd.graph import pack_saved

COMMON = "common"    # promote all operands to their PyTorch result type
FLOAT = "float"      # ... and integers/bools on to the default float dtype
_state = grad_mode.state
_ndarray = np.ndarray
_XP = ARRAY_MODULES

_SAVE_INPUT, _SAVE_RESULT, _SAVE_OUTPUT_DATA, _SAVE_ALL_INPUTS = "input", "result", "data", "all"
_FROM_NUMPY = D._FROM_NUMPY
# the modules whose ops are elementwise: their results take PyTorch's layout (see layout.py)
_ELEMENTWISE_MODULES = ("ember.ops.arithmetic", "ember.ops.comparison", "ember.ops.logical",
                        "ember.ops.pointwise", "ember.ops._pointwise_common", "ember.ops.special")
# elementwise ops with an operand passed as an option (no graph edge), ahead of the others
_LEADING_OPERAND = {"where": "condition"}
_make_tensor = Tensor._make
_new_object = object.__new__
# The hooks of amp, forward AD and the profiler (ops/hooks.py; the modules fill them in when
# imported): the hot paths below test these three lists only.
# open autocast regions in any thread
_amp_regions = _hooks.autocast_regions
# forward AD's active dual levels: empty unless inside `forward_ad.dual_level()`, when every
# op call gives its outputs tangents
_fw_levels = _hooks.dual_levels
# ember.profiler's timer while a profiler records, else empty (see `profile_ops`)
_profiling = _hooks.profiling


def xp_of(device):
    xp = _XP.get(device.type)
    if xp is None:
        xp = _XP[device.type] = backend(device.type).xp
    return xp


class OpNode(Node):
    """A node made by a registered op; subclassed once per op with PyTorch's node name.

    A derivative reads `ctx.<name>`: a saved value or an option of the op. Each op's node class
    gets one property per name (see `_node_properties`); PyTorch's `_saved_<name>` spellings too.
    """
    __slots__ = ("_op", "_saved", "_versions", "_params", "_input_meta", "needs_input_grad",
                 "_n_outputs")

    def __getattr__(self, name):
        # reached only when no slot, method or property has the name: an option set on the
        # node after the call (e.g. the device a copy came from)
        params = self._params if name[0] != "_" else None
        if params and name in params:
            return params[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def input_shape(self, i=0):
        return self._input_meta[i][0]

    def input_dtype(self, i=0):
        return _FROM_NUMPY[self._input_meta[i][1]]

    def release(self):
        if self._op.save:
            self._saved = None

    def apply(self, grads, needs):
        """needs: which inputs want a gradient, or None for all that have a node (as recorded
        in needs_input_grad when the node was made)."""
        op = self._op
        if needs is not None:
            # for this backward only (autograd.grad prunes): a later one may need more
            recorded, self.needs_input_grad = self.needs_input_grad, tuple(needs)
            try:
                return self.apply(grads, None)
            finally:
                self.needs_input_grad = recorded
        if op.n_outputs == 1:
            out = op.derivative_fn(self, grads[0])
        else:
            out = op.derivative_fn(self, *grads)
        if out.__class__ is not tuple and out.__class__ is not list:
            out = (out,)
        return _fit_grads(out, self._input_meta)


def _saved_property(k, name):
    """ctx.<name> for the k-th saved value: checked against in-place changes since it was
    saved, or PyTorch's error once backward has freed it."""

    def get(node):
        saved = node._saved
        if saved is None:
            raise RuntimeError(FREED_ERROR)
        value = saved[k]
        cls = value.__class__
        if cls is Tensor or isinstance(value, Tensor):      # an input, saved as it is
            version = node._versions[k]
            vc = value._vc
            if (0 if vc is None else vc.value) != version:
                record = SavedTensor(value)
                record.saved_version = version
                raise RuntimeError(modified_message(record, node))
            return value
        if cls is SavedTensor or cls is PackedSaved:        # an output, saved without a cycle
            return value.unpack(node)
        if cls is list:
            return [v.unpack(node) if v.__class__ is SavedTensor or v.__class__ is PackedSaved
                    else v for v in value]
        return value            # a number, an array, or None where no gradient needed it
    get.__name__ = name
    return property(get)


def _param_property(name, default):
    if default is inspect.Parameter.empty:
        return property(lambda node: node._params[name])
    return property(lambda node: node._params.get(name, default))


def _wrapped_number_property(saved):
    def get(node):
        value = saved.fget(node)
        if value.__class__ in (int, float, complex, bool):
            return Tensor._make(np.asarray(value))
        return value
    return property(get)


def _node_properties(op):
    """{name: property} for every saved value and option of `op`, and the `_saved_` names."""
    props = {}
    for k, name in enumerate(op.save):
        props[name] = _saved_property(k, name)
    for name, default in op.options.items():
        if name not in props:
            props[name] = _param_property(name, default)
    for name in list(props):
        props["_saved_" + name] = props[name]
    for name in op.save:
        if name in op.arg_names:
            # a tensor argument given as a Python number: PyTorch's node holds it wrapped in a
            # zero-dim tensor (int64, float64, complex128 or bool); `ctx.<name>` stays a number
            props["_saved_" + name] = _wrapped_number_property(props[name])
    if "dims" in op.options and "keepdim" in op.options:
        props["_saved_dim"] = props["dims"]         # (PyTorch's name on reduction nodes)
    # a name the node class already has keeps its meaning there (`input_shape` the method)
    return {n: p for n, p in props.items() if not hasattr(OpNode, n)}


def _fit_grads(grads, metas):
    """Reduce broadcast gradients to each input's shape and cast them to its dtype."""
    fitted = None
    for i, g in enumerate(grads):
        meta = metas[i]
        if g is not None and meta is not None and (g._data.shape != meta[0] or
                                                   g._dtype.np is not meta[1]):
            if fitted is None:
                fitted = list(grads)
            fitted[i] = _fit_grad(g, *meta)
    return grads if fitted is None else fitted


def _fit_grad(g, shape, np_dtype):
    if g._data.shape != shape:
        if not _state.enabled and g.__class__ is Tensor and g._data.__class__ is _ndarray \
                and g._dtype._category == 2 and not _profiling:
            # nothing records (a backward without create_graph): sum_to_size's own array
            # kernel, without its op calls (the same sum, so the same bits)
            g = _sum_to_shape(g, shape)
        else:
            g = _reduction().sum_to_size(g, shape)
    if g._dtype.np is not np_dtype:
        dtype = _FROM_NUMPY[np_dtype]
        if dtype._category < 3 and g._dtype._category == 3:
            g = g.real
        g = g.to(dtype)
    return g


def backward_records_nothing():
    """Whether an op called now by a backward would record nothing (no create_graph, no
    profiler, forward AD or autocast region): the backward may then run its kernel straight on
    the arrays, without the op call's cost (the same kernel, so the same bits)."""
    return not (_state.enabled or _profiling or _fw_levels or _amp_regions[0])


def _sum_to_shape(g, shape):
    """sum_to_size(g, shape) on g's array by the sum op's forward: a fresh tensor, no graph."""
    have = g._data.shape
    lead = len(have) - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and have[i + lead] != 1)
    if not dims:
        return _make_tensor(g._data.reshape(shape), g._dtype, g._device)
    # summing leading dims only (a bias's gradient) gives the shape itself: a fresh array,
    # not a view, so that backward can make it .grad without a copy (graph._owned)
    keep = dims != tuple(range(lead))
    data = g._data
    if data.dtype.kind == "f" and data.dtype.itemsize >= 4:
        # the sum op's forward for float32/float64 (so the same bits), without its dtype
        # round trip and final copy: NumPy's own sum where the sum op takes it (reduction.py's
        # _sum_np, which widens long serial float32 sums)
        if data.dtype.itemsize == 8 or _serial_terms(have, dims) < \
                _reduction().SERIAL_SUM_TERMS:
            out = np.add.reduce(data, axis=dims, dtype=data.dtype, keepdims=keep)
        else:
            out = _reduction()._sum_np(np, data, dims, keep, data.dtype.type)
        if out.__class__ is not _ndarray:
            out = np.asarray(out)                   # (a NumPy scalar: all dims summed)
        elif not out.flags.c_contiguous:
            out = out.copy(order="C")
    else:
        out = _reduction()._sum_dim.forward(np, data, dims=dims, keepdim=keep, dtype=g._dtype)
    return _make_tensor(out.reshape(shape) if keep else out, g._dtype, g._device)


def _serial_terms(shape, dims):
    """How many terms a sum over `dims` adds one after another (reduction._sum_np): the
    reduced dims ahead of the innermost run of reduced dims."""
    inner = len(shape)
    while inner > 0 and inner - 1 in dims:
        inner -= 1
    n = 1
    for d in dims:
        if d < inner:
            n *= shape[d]
    return n


_reduction_module = []


def _reduction():
    if not _reduction_module:
        from . import reduction   # (imported late: reduction is itself built on this module)
        _reduction_module.append(reduction)
    return _reduction_module[0]


# every op made, in the order made: all made at import (an op made on a first call would be
# missing from the inventory and from tests/test_op_inventory.py, which walks it)
_INVENTORY = []


def all_ops():
    """The inventory: every op ember has (name, node name, differentiable on each)."""
    return list(_INVENTORY)


class Op:
    """One registered op. Calling it runs the forward and records the graph."""

    def __init__(self, fn, name, node, save, promote, differentiable, n_outputs,
                 differentiable_outputs, view, save_for, opmath=False):
        self.forward = fn
        self.opmath = opmath
        self.name = name
        self.save = tuple(save)
        self.save_for = save_for or {}
        self.promote = promote
        self.differentiable = differentiable
        self.n_outputs = n_outputs
        self.differentiable_outputs = differentiable_outputs or n_outputs
        self.view = view
        self.derivative_fn = None
        self.fills = False      # writes one value everywhere: may write overlapping memory
        self.elementwise = not view and n_outputs == 1 and \
            fn.__module__.startswith(_ELEMENTWISE_MODULES)
        self.leading_operand = _LEADING_OPERAND.get(name) if self.elementwise else None
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[1:]          # skip xp
        self.varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
        self.options = {p.name: p.default for p in params if p.kind is p.KEYWORD_ONLY}
        self.arg_names = [p.name for p in params
                          if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD,
                                        p.VAR_POSITIONAL)]
        self.save_plan = tuple(self._plan_save(n) for n in self.save)
        # (PyTorch's node classes are built-in: `<class 'MulBackward0'>`, module builtins)
        self.node_cls = type(node or name, (OpNode,), dict(
            _node_properties(self), __slots__=(), __module__="builtins")) \
            if differentiable else None
        self.__name__ = name
        self.__doc__ = fn.__doc__
        _INVENTORY.append(self)

    def _plan_save(self, name):
        """How `_record` finds a saved name: (kind, index, needed_by), resolved once here.
        needed_by: the input whose gradient alone reads it (save_for), else None (always)."""
        needed_by = self.save_for.get(name)
        if needed_by is not None:
            needed_by = self.arg_names.index(needed_by)
        if name == "result":
            return (_SAVE_RESULT, 0, needed_by)
        if name.startswith("result"):
            return (_SAVE_OUTPUT_DATA, int(name[6:]), needed_by)
        if self.varargs and name == self.arg_names[0]:
            return (_SAVE_ALL_INPUTS, 0, needed_by)
        return (_SAVE_INPUT, self.arg_names.index(name), needed_by)

    def derivative(self, fn):
        self.derivative_fn = fn
        return fn

    def __repr__(self):
        return f"<ember op {self.name}>"

    # ------------------------------------------------------------------ forward
    def __call__(self, *inputs, **params):
        if self.varargs:
            inputs = tuple(inputs[0]) if len(inputs) == 1 else inputs
        if _amp_regions[0] and self.name in _hooks.autocast_ops:
            inputs = _hooks.autocast_cast(inputs)      # autocast: matmul-like ops in bf16/fp16
        arrays = self._fast_operands(inputs)
        if arrays is not None:
            # the common case: one dtype, one device, nothing to promote
            device = inputs[0]._device
            try:
                out = self.forward(np if device is CPU else xp_of(device), *arrays, **params)
            except ValueError:
                check_broadcast(inputs)     # PyTorch's error when the shapes don't broadcast
                raise
            if out.__class__ is not _ndarray or self.n_outputs != 1:
                result = self._wrap(out, inputs, device)
            elif self.view:
                result = inputs[0]._make_view(out)
            else:
                if self.elementwise and out.ndim > 1 and not (
                        out.strides == arrays[0].strides and out.flags.c_contiguous
                        and self.leading_operand is None):
                    out = self._conform(np, out, arrays, params)   # (not simply contiguous)
                result = _make_tensor(out, _FROM_NUMPY[out.dtype], device)
        else:
            arrays, dtype, device = self._prepare(inputs)
            try:
                half = self.opmath and _half_dtype(inputs, dtype)
                limited = _dtype_kernels.limited_dtype(inputs, dtype)
                if limited is not None:     # uint16..64, float8, complex32: torch's kernels
                    out = _dtype_kernels.run(self, limited, xp_of(device), arrays, params)
                elif half:
                    out = _in_float32(self.forward, xp_of(device), inputs, arrays, params, half)
                else:
                    out = self.forward(xp_of(device), *arrays, **params)
            except ValueError:
                check_broadcast(inputs)
                raise
            if self.elementwise and getattr(out, "ndim", 0) > 1 and \
                    not getattr(out, "_ember_sparse", False) and not (
                    out.strides == getattr(arrays[0], "strides", None) and
                    out.flags.c_contiguous and self.leading_operand is None):
                out = self._conform(xp_of(device), out, arrays, params)
            result = self._wrap(out, inputs, device)
        if _fw_levels:      # forward AD: the outputs' tangents
            _hooks.forward_propagate(self, inputs, result, params)
        if self.differentiable and _state.enabled:
            for x in inputs:
                if x.__class__ is Tensor:
                    if x._requires_grad:
                        break
                elif getattr(x, "_requires_grad", False):
                    break
            else:
                return result
            self._record(inputs, result, params)
        return result

    def _conform(self, xp, out, arrays, params):
        """`out` in PyTorch's layout for this elementwise op's operands (layout.py)."""
        if self.leading_operand is not None:
            arrays = (params[self.leading_operand]._data,) + tuple(arrays)
        return conform_layout(xp, out, arrays)

    def operator(self, fallback):
        """The Tensor method for this op's operator (`a * b`, `a + 1.5`).

        The hot path of the whole library, kept to one call: a floating-point CPU tensor with
        a tensor of its dtype or a Python number (which keeps the tensor's dtype), no autocast.
        Anything else goes to `fallback` (the public function: checks, promotion, devices).
        """
        forward, record, opmath = self.forward, self._record, self.opmath
        elementwise = self.elementwise

        def method(a, b):
            if opmath and a._dtype._half:
                return fallback(a, b)
            cls = b.__class__
            if cls is float or cls is int:
                other, b_requires_grad = _scalar_operand(b, a._dtype.np), False
            elif isinstance(b, Tensor) and b._dtype is a._dtype and b._device is CPU:
                other, b_requires_grad = b._data, b._requires_grad
            else:
                return fallback(a, b)
            if not a._dtype._float_kernels or a._device is not CPU or _amp_regions[0] or \
                    _fw_levels or _profiling:
                return fallback(a, b)
            try:
                out = forward(np, a._data, other)
            except ValueError:
                return fallback(a, b)           # which raises PyTorch's broadcast error
            if out.__class__ is not _ndarray:
                if not getattr(out, "_ember_sparse", False) and \
                        not getattr(type(out), "_ember_csr", False):    # (a sparse result)
                    out = np.asarray(out)       # NumPy gives a scalar for zero-dim operands
            elif elementwise and out.ndim > 1 and not (
                    out.strides == a._data.strides and out.flags.c_contiguous):
                out = conform_layout(np, out, (a._data, other))
            result = _make_tensor(out, _FROM_NUMPY[out.dtype], CPU)
            if _state.enabled and (a._requires_grad or b_requires_grad):
                record((a, b), result, {})
            return result
        return method

    def unary_method(self, fallback):
        """The Tensor method of a one-input op (`x.tanh()`): a floating-point CPU tensor goes
        straight to the forward (no autocast); anything else to `fallback`, the public
        function."""
        forward, record, elementwise = self.forward, self._record, self.elementwise

        def method(a, *args, **kwargs):
            if args or kwargs or a._device is not CPU or not a._dtype._float_kernels or \
                    _amp_regions[0] or _fw_levels or _profiling:
                return fallback(a, *args, **kwargs)
            out = forward(np, a._data)
            if out.__class__ is not _ndarray:
                if not getattr(out, "_ember_sparse", False) and \
                        not getattr(type(out), "_ember_csr", False):    # (a sparse result)
                    out = np.asarray(out)       # NumPy gives a scalar for a zero-dim operand
            elif elementwise and out.ndim > 1 and not (
                    out.strides == a._data.strides and out.flags.c_contiguous):
                out = conform_layout(np, out, (a._data,))
            result = _make_tensor(out, _FROM_NUMPY[out.dtype], CPU)
            if a._requires_grad and _state.enabled:
                record((a,), result, {})
            return result
        method.__name__ = self.name
        return method

    def _fast_operands(self, inputs):
        """The operands' arrays when no promotion or device move is needed, else None."""
        first = inputs[0]
        if first.__class__ is not Tensor and not isinstance(first, Tensor):
            return None
        dtype = first._dtype
        if self.promote is FLOAT and dtype._category < 2 or self.opmath and dtype._half or \
                dtype._limited:
            return None
        n = len(inputs)
        if n == 1:
            return (first._data,)
        if n == 2:
            other = inputs[1]
            cls = other.__class__
            if cls is Tensor or isinstance(other, Tensor):
                if other._dtype is dtype and other._device is first._device:
                    return (first._data, other._data)
                return None
            # a Python number keeps a floating tensor's dtype, and an int keeps an int's
            if self.promote is not None:
                if (cls is float and dtype._category >= 2) or (cls is int and dtype._category >= 1):
                    return (first._data, _scalar_operand(other, dtype.np))
            return None
        device = first._device
        arrays = []
        for x in inputs:
            if not isinstance(x, Tensor) or x._dtype is not dtype or x._device is not device:
                return None
            arrays.append(x._data)
        return arrays

    def _prepare(self, inputs):
        """Find the device and the compute dtype; return the operands as arrays/scalars."""
        device = None
        first = None
        numpy_scalars = False
        for x in inputs:
            if isinstance(x, Tensor):
                if device is None:
                    device, first = x._device, x
                elif x._device is not device and x._device != device:
                    device = _pick_device(first, x)
            elif isinstance(x, np.generic):
                numpy_scalars = True
        given = inputs
        if numpy_scalars:
            # a NumPy scalar counts as a Python number (tensor + np.float64(1.5) keeps a
            # float32 tensor's dtype), as in PyTorch; np.bool_ and complex ones as floats
            # (the imaginary part dropped, with NumPy's warning)
            inputs = [(int(x) if isinstance(x, np.integer) else float(x))
                      if isinstance(x, np.generic) else x for x in inputs]
        if device is None:
            if len(inputs) == 1 and not self.varargs:
                raise TypeError(f"{self.name}(): argument 'input' (position 1) must be Tensor, "
                                f"not {_type_name(given[0])}")
            if len(inputs) == 2 and inputs[0].__class__ in (int, float, bool, complex):
                # numbers alone (ember.add(2, 3)): the first taken as a tensor, as PyTorch's
                # argument parser does (2 -> int64, 2.5 -> the default float dtype)
                from .creation import tensor  # (cycle: ops.creation imports this module)
                return self._prepare((tensor(inputs[0]),) + tuple(inputs[1:]))
            raise TypeError(f"{self.name}(): expected at least one Tensor argument")
        promote = self.promote
        if promote is None:
            return [x._data if isinstance(x, Tensor) else x for x in inputs], None, device
        if len(inputs) == 2 and isinstance(inputs[0], Tensor) and \
                isinstance(inputs[1], Tensor) and inputs[0]._dtype is inputs[1]._dtype:
            dtype = inputs[0]._dtype                      # the common case, no table walk
        else:
            dtype = D.result_dtype(inputs)
        if promote is FLOAT and dtype._category < 2:
            dtype = D._default[0]
        npd = dtype.np
        if dtype is D.complex32:    # (computed from complex64 copies: _dtype_kernels.run)
            return [x._data if isinstance(x, Tensor) else x for x in inputs], dtype, device
        arrays = []
        for x in inputs:
            if isinstance(x, Tensor):
                a = x._data
                if x._dtype is not dtype:
                    a = D.as_torch_rounds(a, npd).astype(npd) if x._dtype is D.complex32 \
                        else a.astype(npd)
                if x._device is not device and x._device.type != device.type:
                    a = xp_of(device).asarray(a)    # a zero-dim CPU tensor joining in
                arrays.append(a)
            else:
                arrays.append(_scalar_operand(x, npd))
        return arrays, dtype, device

    def _wrap(self, out, inputs, device):
        if self.n_outputs == 1:
            return self._wrap_one(out, inputs, device)
        return tuple(self._wrap_one(o, inputs, device) for o in out)

    def _wrap_one(self, a, inputs, device):
        if a.__class__ is not _ndarray and not hasattr(a, "__cuda_array_interface__"):
            if getattr(a, "_ember_sparse", False) or getattr(type(a), "_ember_csr", False):
                # a sparse (COO or CSR) result (ember/sparse)
                return Tensor._make(a, D._FROM_NUMPY[a.dtype], device)
            a = xp_of(device).asarray(a)      # a scalar result, kept on the device
        if self.view:
            return inputs[0]._make_view(a)
        return Tensor._make(a, D._FROM_NUMPY[a.dtype], device)

    # ------------------------------------------------------------------ graph
    def _record(self, inputs, outputs, params, in_place=False, original_self=None):
        if _inference_made[0] and _state.inference:
            return None             # inference mode records nothing, even under enable_grad
        node = _new_object(self.node_cls)
        nodes = []                      # the edges: the node each input's gradient goes to,
        nrs = []                        # and which of that node's outputs the input is
        metas = []
        needs = []
        for x in inputs:
            if x.__class__ is Tensor or isinstance(x, Tensor):
                # (a NumPy dtype, not ember's: the GC need not track these tuples)
                metas.append((x._data.shape, x._dtype.np))
                if x._requires_grad:
                    fn = x._grad_fn if x._base is None else x.grad_fn
                    if fn is None:
                        fn = x._accumulator()
                        nrs.append(0)
                    else:
                        nrs.append(x._output_nr)
                    nodes.append(fn)
                    needs.append(True)
                    continue
            else:
                metas.append(None)
            nodes.append(None)
            nrs.append(0)
            needs.append(False)
        node._next_nodes = tuple(nodes)
        node._next_nrs = tuple(nrs)
        node._seq = next(_sequence)
        node._extras = None
        node._op = self
        node._params = params
        node._input_meta = tuple(metas)
        node.needs_input_grad = needs = tuple(needs)
        if self.n_outputs == 1:
            node._n_outputs = 1
            outs = differentiable = (outputs,)
        else:
            outs = outputs
            differentiable = outs[:self.differentiable_outputs]
            node._n_outputs = len(differentiable)
        # the outputs join the graph before anything is saved: a saved-tensor pack hook sees
        # an output with its grad_fn, as in PyTorch
        for i, o in enumerate(differentiable):
            if o._dtype._category >= 2:
                o._grad_fn = node
                o._output_nr = i
                o._requires_grad = True
        if self.save:
            node._saved, node._versions = self._save(inputs, outs, needs, in_place,
                                                     original_self)
            if _inference_made[0]:
                _check_not_inference(node._saved)
        else:
            node._saved = ()
        if _anomaly.state.enabled:
            _anomaly.record_trace(node)
        return node

    def _save(self, inputs, outs, needs, in_place, original_self):
        """What the derivative reads, in `save` order, and the versions of the saved inputs.
        Inputs are kept as they are (their version checked on use); outputs as SavedTensors,
        which hold no reference back to the node."""
        saved = []
        versions = []
        for kind, i, needed_by in self.save_plan:
            version = None
            if needed_by is not None and not needs[needed_by]:
                value = None                    # only a gradient nobody wants reads it
            elif kind is _SAVE_INPUT:
                value = inputs[i]
                if in_place and i == 0:
                    value = original_self       # the target as it was before the write
                if value.__class__ is Tensor or isinstance(value, Tensor):
                    # (0 while the tensor has no counter: one made later starts there)
                    vc = value._vc
                    version = 0 if vc is None else vc.value
            elif kind is _SAVE_RESULT:
                value = SavedTensor(outs[0], True, 0) if self.n_outputs == 1 else \
                    [SavedTensor(o, True, k) for k, o in
                     enumerate(outs[:self.differentiable_outputs])]
            elif kind is _SAVE_OUTPUT_DATA:
                value = outs[i]._data           # a non-differentiable output (indices)
            else:                               # all of a *tensors argument
                value = [SavedTensor(x) for x in inputs]
            saved.append(value)
            versions.append(version)
        if SavedTensor.hooks:       # saved_tensors_hooks is active: pack what was saved
            return pack_saved(self.save_plan, saved, outs, in_place), tuple(versions)
        return tuple(saved), tuple(versions)

    # ------------------------------------------------------------------ in place
    def inplace(self, target, *others, **params):
        """`target.op_(others)`: compute, write into target, bump its version, rebase its graph."""
        if target._data.__class__ is not _ndarray and getattr(target._data, "_ember_sparse",
                                                              False):
            return _sparse_inplace(self, target, others, params)
        inputs = (target,) + others
        record = _state.enabled and self.differentiable and not _state.inference and any(
            getattr(x, "_requires_grad", False) for x in inputs)
        if record:
            check_inplace_allowed(target)
        check_inference_write(target)
        if 0 in target._data.strides and not self.fills:
            check_no_internal_overlap(target)
        arrays, dtype, device = self._prepare(inputs)
        if dtype is not None and dtype is not target._dtype and \
                not D.can_cast(dtype, target._dtype):
            check_inplace_shape(target, inputs)     # PyTorch reports a bad shape first
            raise RuntimeError(f"result type {_type_word(dtype)} can't be cast to the desired "
                               f"output type {_type_word(target._dtype)}")
        original = None
        if record and self.arg_names[0] in self.save:      # the derivative reads the target
            original = Tensor._make(target._data.copy(), target._dtype, target._device)
            original._requires_grad = target._requires_grad
            original._grad_fn, original._output_nr = target._grad_fn, target._output_nr
        try:
            half = self.opmath and _half_dtype(inputs, dtype)
            limited = _dtype_kernels.limited_dtype(inputs, dtype)
            if limited is not None:         # uint16..64, float8, complex32: torch's kernels
                out = _dtype_kernels.run(self, limited, xp_of(device), arrays, params)
            elif half:
                out = _in_float32(self.forward, xp_of(device), inputs, arrays, params, half)
            else:
                out = self.forward(xp_of(device), *arrays, **params)
        except Exception:
            check_inplace_shape(target, inputs)     # PyTorch reports a bad shape first
            raise
        if target._dtype is D.complex32 or getattr(out, "dtype", None) == D.COMPLEX32_NP:
            out = D.as_torch_rounds(out, target._dtype.np)      # (NumPy can't cast the pairs)
        if _fw_levels:      # forward AD: the target's new tangent, from its inputs before the write
            _hooks.forward_propagate_inplace(self, target, inputs, out, params)
        # the node saves its inputs before the write (their versions as the op saw them)
        node = self._record(inputs, target, params, in_place=True, original_self=original) \
            if record else None
        write_into(target, out)
        if record:
            rebase_history(target, self, node)
        return target


def _sparse_inplace(op, target, others, params):
    """`s.mul_(2)`, `s.add_(t)`, `s.zero_()` on a sparse tensor (ember/sparse): the op's sparse
    result replaces its arrays, as torch's sparse in-place ops swap its indices and values."""
    inputs = (target,) + others
    if _state.enabled and op.differentiable and any(
            getattr(x, "_requires_grad", False) for x in inputs):
        check_inplace_allowed(target)
        raise NotImplementedError("ember: in-place ops on a sparse tensor that requires grad "
                                  "are not supported")
    arrays, dtype, device = op._prepare(inputs)
    out = op.forward(xp_of(device), *arrays, **params)
    if not getattr(out, "_ember_sparse", False):
        raise RuntimeError(f"{op.name}: the result of an in-place op on a sparse tensor must "
                           f"be sparse")
    target._data = out.astype(target._dtype.np, copy=False)
    target._version_counter.bump()
    return target


def check_inplace_shape(target, operands):
    """PyTorch's error when an in-place op's operands broadcast past the target's shape."""
    check_broadcast(operands)
    shape = np.broadcast_shapes(*[x._data.shape for x in operands if isinstance(x, Tensor)])
    if shape != target._data.shape:
        raise RuntimeError(f"output with shape {list(target._data.shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")


def check_broadcast(operands):
    """Raise PyTorch's error if the tensor operands' shapes do not broadcast together."""
    shape = None
    for x in operands:
        if isinstance(x, (list, tuple)):
            check_broadcast(x)
            continue
        if not isinstance(x, Tensor):
            continue
        other = x._data.shape
        if shape is None:
            shape = other
            continue
        n = max(len(shape), len(other))
        a = (1,) * (n - len(shape)) + tuple(shape)
        b = (1,) * (n - len(other)) + tuple(other)
        for i in range(n - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of "
                                   f"tensor b ({b[i]}) at non-singleton dimension {i}")
        shape = tuple(y if x_ == 1 else x_ for x_, y in zip(a, b))


def _half_dtype(inputs, dtype):
    """The float16/bfloat16 dtype an op computes in (its promoted dtype, or its first input's
    for an op that does not promote), else None."""
    if dtype is None:
        dtype = getattr(inputs[0], "_dtype", None)
    return dtype if dtype is not None and dtype._half else None


def _in_float32(forward, xp, inputs, arrays, params, dtype):
    """An opmath op's forward for float16/bfloat16 operands as PyTorch's kernels compute it:
    in float32 (Python numbers read as float32, not first rounded to the dtype), rounded once
    to the dtype at the end."""
    wide = [a.astype(np.float32) if getattr(a, "dtype", None) == dtype.np else a
            for a in arrays]
    wide = [np.float32(x) if x.__class__ in (int, float) else a for x, a in zip(inputs, wide)]
    out = forward(xp, *wide, **params)
    return out.astype(dtype.np) if out.dtype == np.float32 else out


def _scalar_operand(x, npd):
    """A Python number as a NumPy scalar of the compute dtype, as PyTorch casts it (ints wrap):
    NumPy alone would widen some (bfloat16 + 2.5 -> float32) and reject others (uint8 - 2)."""
    if npd.kind in "fc":
        return x            # NumPy's own float types keep their dtype with a Python number
    try:
        return npd.type(x)
    except (OverflowError, TypeError, ValueError):
        return np.asarray(x).astype(npd)[()]


def write_into(target, value):
    """Write an array (or scalar) into a tensor's memory and bump its version."""
    check_inference_write(target)
    data = target._data
    if data.ndim == 0 and data.__class__ is _ndarray and not data.flags.writeable:
        raise RuntimeError("cannot write into a read-only tensor")
    try:
        if getattr(value, "ndim", 0) > data.ndim:
            raise ValueError    # (NumPy would drop leading 1s: [1, 3] into [3] is PyTorch's error)
        if value.__class__ is _ndarray and data.__class__ is not _ndarray:
            # host values (drawn by the CPU generator) written into device memory
            value = backend(target._device.type).from_host(value, target._device.index)
        xp_of(target._device).copyto(data, value, casting="unsafe")
    except ValueError:
        if getattr(value, "shape", ()) == data.shape:
            raise
        raise RuntimeError(f"output with shape {list(data.shape)} doesn't match the broadcast "
                           f"shape {list(value.shape)}") from None
    target._version_counter.bump()


def check_no_internal_overlap(target):
    """PyTorch's error for an in-place op writing a tensor whose elements share memory (an
    expanded one: a zero stride along a dimension of size > 1)."""
    data = target._data
    if data.size and any(st == 0 and n > 1 for st, n in zip(data.strides, data.shape)):
        raise RuntimeError(INTERNAL_OVERLAP_ERROR)


def _check_not_inference(saved):
    """PyTorch's error for saving an inference tensor for backward."""
    for value in saved:
        for v in (value if value.__class__ is list else (value,)):
            if v.__class__ is SavedTensor:
                v = v.tensor
            if isinstance(v, Tensor) and v._extra is not None and INFERENCE in v._extra:
                raise RuntimeError(INFERENCE_SAVED_ERROR)


def check_inplace_allowed(target):
    """PyTorch's errors for writing in place into a leaf that requires grad, or a view of one."""
    base = target._base
    if base is None:
        if target._requires_grad and target._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
    elif target._extra is not None and _VIEW_MODE in target._extra:
        raise RuntimeError(view_mode_error(target, indirect=False))     # made in no_grad mode
    elif base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def rebase_history(target, op, node):
    """Finish making `target` the output of `node`, the in-place op just applied to it.

    For a view, the base's history is rewritten instead (CopySlices), and every view of the
    base regenerates its grad_fn from the base on next access.
    """
    # _record attached node to target; the saved result is target after the write
    if "result" in op.save:
        saved = list(node._saved)
        saved[op.save.index("result")] = (PackedSaved if SavedTensor.hooks else SavedTensor)(
            target, True, 0)
        node._saved = tuple(saved)
    base = target._base
    if base is None:
        return
    from .views import CopySlices  # (cycle: ops.views imports this module)
    CopySlices.rebase(base, target, node)


def _type_word(dtype):
    return scalar_type_name(dtype)


def _pick_device(a, b):
    # a zero-dim CPU tensor may join a computation on another device, as in PyTorch
    if b._data.ndim == 0 and b._device.type == "cpu":
        return a._device
    if a._data.ndim == 0 and a._device.type == "cpu":
        return b._device
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                       f"devices, {a._device} and {b._device}!")


# ------------------------------------------------------------------ the profiler's hook
_untimed = (Op.__call__, Op.inplace)


def profile_ops(timer):
    """Time every op call with `timer` (ember.autograd.profiler) from now on; None: stop.

    Costs nothing while no profiler records: Op.__call__ and Op.inplace (looked up on the
    class at every call anyway) are swapped for timed versions only meanwhile, and the one
    check on the Tensor fast paths (`operator`, `unary_method`: `_profiling`) sends their
    calls through Op.__call__. Events take torch's names: "aten::add", in place "aten::add_".
    """
    _profiling.clear()
    if timer is None:
        Op.__call__, Op.inplace = _untimed
        return
    _profiling.append(timer)
    Op.__call__, Op.inplace = _timed(_untimed[0], ""), _timed(_untimed[1], "_")


def _timed(run, suffix):
    begin, end = _profiling[0].begin, _profiling[0].end

    def timed(self, *args, **params):
        name = self.name        # (the in-place form of "uniform_" is itself)
        events = begin("aten::" + (name if name.endswith(suffix) else name + suffix), args)
        try:
            result = run(self, *args, **params)
        except BaseException:
            end(events, None)
            raise
        end(events, result if not suffix else None)     # (in place: nothing allocated)
        return result
    return timed


def primitive(name, node=None, save=(), promote=None, differentiable=True, n_outputs=1,
              differentiable_outputs=None, view=False, save_for=None, opmath=False):
    """Declare an op (see the module docstring).

    save_for: {saved name: input name} for a value only that input's gradient reads; it is
    saved only when that input needs a gradient (as PyTorch does: `x * w` with a constant `w`
    does not keep `x` alive).
    opmath: for float16/bfloat16 operands the forward runs in float32 and its result is
    rounded once (PyTorch's kernels do so; NumPy's would round the Python numbers and every
    intermediate step to the half dtype).
    """
    def wrap(fn):
        return Op(fn, name, node, save, promote, differentiable, n_outputs,
                  differentiable_outputs, view, save_for, opmath)
    return wrap
