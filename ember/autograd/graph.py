"""The backward graph: nodes, the leaf accumulator, saved tensors and version checks.

A node is created by an op when grad mode is on and an input requires grad. It holds
`next_functions` (one `(node, input_nr)` edge per input, `(None, 0)` where no gradient flows) and
whatever its derivative reads. Nodes reference their inputs' nodes, never their own outputs, so a
graph is freed by reference counting alone.
"""
import collections
import contextlib
import itertools
import os
import sys
import weakref

import numpy as np

from . import anomaly_mode, grad_mode
from .._layout import contiguous_format
from .._printing import legacy_type_name

_sequence = itertools.count()    # creation order: the engine runs newer nodes first


class RemovableHandle:
    """Returned by every register_*hook; `remove()` unregisters the hook."""
    _ids = itertools.count()

    def __init__(self, hooks_dict):
        self.id = next(RemovableHandle._ids)
        self._hooks = hooks_dict

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks, fn):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class NodeExtras:
    """The rarely used parts of a node, allocated on first use (most nodes never need them)."""
    __slots__ = ("pre_hooks", "post_hooks", "tensor_pre_hooks", "retain_grad", "metadata",
                 "trace")

    def __init__(self):
        self.pre_hooks = None          # node.register_prehook(fn(grad_outputs))
        self.post_hooks = None         # node.register_hook(fn(grad_inputs, grad_outputs))
        self.tensor_pre_hooks = None   # {output_nr: {id: fn(grad)}} from Tensor.register_hook
        self.retain_grad = None        # {output_nr: weakref to the tensor that retains grad}
        self.metadata = None
        self.trace = None              # forward stack, recorded under anomaly detection


class Node:
    """A backward node. Its edges are kept as two tuples, the nodes and their input numbers,
    rather than as PyTorch's tuple of pairs: a graph then holds one GC-tracked tuple per node
    instead of one per edge, which matters to Python's cyclic GC on long graphs.
    `next_functions` builds PyTorch's view of them."""
    _n_outputs = 1      # how many outputs' gradients the node receives (more for split...)
    runs_without_grad = False   # called even when it received no gradient (custom Functions)
    __slots__ = ("_next_nodes", "_next_nrs", "_seq", "_extras", "__weakref__")

    def __init__(self, next_functions=()):
        self.next_functions = next_functions
        self._seq = next(_sequence)
        self._extras = None

    @property
    def next_functions(self):
        return tuple(zip(self._next_nodes, self._next_nrs))

    @next_functions.setter
    def next_functions(self, edges):
        self._next_nodes = tuple(node for node, _ in edges)
        self._next_nrs = tuple(nr for _, nr in edges)

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def extras(self):
        if self._extras is None:
            self._extras = NodeExtras()
        return self._extras

    @property
    def metadata(self):
        extras = self.extras()
        if extras.metadata is None:
            extras.metadata = {}
        return extras.metadata

    @property
    def _trace(self):
        return self._extras.trace if self._extras is not None else None

    def register_hook(self, fn):
        extras = self.extras()
        if extras.post_hooks is None:
            extras.post_hooks = {}

        def post_hook(grad_inputs, grad_outputs):
            grad_inputs = tuple(grad_inputs)
            return _checked_values(fn, grad_inputs, fn(grad_inputs, tuple(grad_outputs)))
        return add_hook(extras.post_hooks, post_hook)

    def register_prehook(self, fn):
        extras = self.extras()
        if extras.pre_hooks is None:
            extras.pre_hooks = {}

        def pre_hook(grad_outputs):
            return _checked_values(fn, grad_outputs, fn(grad_outputs))
        return add_hook(extras.pre_hooks, pre_hook)

    def _register_tensor_hook(self, output_nr, fn):
        extras = self.extras()
        if extras.tensor_pre_hooks is None:
            extras.tensor_pre_hooks = {}
        return add_hook(extras.tensor_pre_hooks.setdefault(output_nr, {}),
                        _checked_tensor_hook(fn))

    def _retain_grad_of(self, output_nr, tensor):
        extras = self.extras()
        if extras.retain_grad is None:
            extras.retain_grad = {}
        extras.retain_grad[output_nr] = weakref.ref(tensor)
        _retaining[id(tensor)] = tensor

    def __call__(self, *grads):
        return self.apply(grads, None)

    def release(self):
        """Drop what the node saved for backward (after a backward without retain_graph)."""

    def apply(self, grads, needs):
        raise NotImplementedError


# The non-leaf tensors that retain their grad. As in PyTorch the retain-grad hook belongs to the
# tensor: when an in-place op (or a view's regenerated history) gives the tensor a new grad_fn,
# the hook goes along. Rather than moving it at each of those places, each backward first
# points every such tensor's entry at its grad_fn of the moment (`follow_retaining_tensors`),
# and the engine ignores the entries left on a node the tensor has moved on from.
_retaining = weakref.WeakValueDictionary()     # id -> tensor (tensors compare elementwise)


def follow_retaining_tensors():
    if not len(_retaining):
        return
    for t in list(_retaining.values()):
        if t._grad_fn is not None:
            t._grad_fn._retain_grad_of(t._output_nr, t)


class AccumulateGrad(Node):
    """The sink for a leaf tensor that requires grad: adds incoming gradients into `.grad`."""
    __slots__ = ("variable",)
    __module__ = "builtins"      # PyTorch's C++ nodes show as <class 'AccumulateGrad'>

    def __init__(self, variable):
        # (Node.__init__ with no edges, its slots set directly: one per leaf per graph)
        self._next_nodes = self._next_nrs = ()
        self._seq = next(_sequence)
        self._extras = None
        self.variable = variable
        extra = variable._extra
        if extra and extra.get("leaf_hooks"):
            self.extras().tensor_pre_hooks = {0: extra["leaf_hooks"]}

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def _register_tensor_hook(self, output_nr, fn):
        # a leaf's hooks are kept on the tensor: its accumulator lives only as long as a graph
        # uses it, the hooks as long as the tensor (the next accumulator picks them up)
        hooks = self.variable._get_extra().setdefault("leaf_hooks", {})
        self.extras().tensor_pre_hooks = {0: hooks}
        return add_hook(hooks, _checked_tensor_hook(fn))

    def apply(self, grads, needs):
        variable = self.variable
        if grads[0] is not None:
            accumulate_into_grad(variable, grads[0])
        extra = variable._extra
        if extra and extra.get("post_accumulate_hooks"):
            for hook in list(extra["post_accumulate_hooks"].values()):
                hook(variable)
        return ()


# ----------------------------------------------------------------------------- public helpers
class GradientEdge(collections.namedtuple("GradientEdge", ("node", "output_nr",
                                                           "ownership_token"),
                                          defaults=(None,))):
    """A place in the graph (a node, and which of its inputs) that autograd.grad and backward
    accept where a tensor is expected."""
    __slots__ = ()
    _requires_grad = True

    def _edge(self):
        return (self.node, self.output_nr)


def get_gradient_edge(tensor):
    if not tensor._requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    return GradientEdge(*tensor._edge())


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """mode "all": `fn(grads)` once per backward that reaches any of `tensors`, when all their
    gradients are known (None for those the backward does not reach); mode "any": `fn(grad)`
    with the first of their gradients computed in each backward. Built on tensor hooks."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    from .engine import current_run  # (cycle: autograd.engine imports this module)
    tensors = list(tensors)
    key = object()          # this hook's entry in each backward's state

    if mode == "any":
        def first_only(grad):
            state = current_run().hook_state
            if key not in state:
                state[key] = True
                fn(grad)
        return _MultiHandle([t.register_hook(first_only) for t in tensors if t._requires_grad])

    for t in tensors:
        if not t._requires_grad:
            raise AssertionError("Expected gradient function to be set")
    # the nodes whose running brings each tensor's gradient (a leaf's accumulator is kept alive
    # by this, so that later graphs use it too)
    nodes = [t._edge()[0] for t in tensors]

    def collector(i):
        def hook(grad):
            run = current_run()
            progress = run.hook_state.get(key)
            if progress is None:        # the first of them in this backward: how many will come
                expected = sum(1 for n in nodes if run.will_execute(n))
                progress = run.hook_state[key] = [expected, [None] * len(tensors)]
            progress[1][i] = grad
            progress[0] -= 1
            if progress[0] == 0:
                del run.hook_state[key]
                fn(progress[1])
        return hook
    return _MultiHandle([t.register_hook(collector(i)) for i, t in enumerate(tensors)])


class _MultiHandle:
    """register_multi_grad_hook's handle: `remove()` removes the hook from every tensor."""

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def increment_version(tensor):
    """Mark a tensor (or each of an iterable of them) as modified in place."""
    tensors = (tensor,) if isinstance(tensor, SavedTensor.tensor_class) else tensor
    try:
        tensors = list(tensors)
    except TypeError:
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input") from None
    for t in tensors:
        t._version_counter.bump()


# ----------------------------------------------------------------------------- hook results
def _checked_tensor_hook(fn):
    """A tensor hook whose replacement gradient is checked as PyTorch checks it."""
    def tensor_hook(grad):
        new = fn(grad)
        if new is not None:
            _check_value(fn, grad, new)
        return new
    tensor_hook.user_hook = fn      # (what the program registered, for tensor_hooks())
    return tensor_hook


def tensor_hooks(tensor):
    """The hooks a program registered on `tensor` with Tensor.register_hook, in order."""
    if tensor.grad_fn is not None:
        extras = tensor.grad_fn._extras
        pre = extras.tensor_pre_hooks if extras is not None else None
        hooks = (pre or {}).get(tensor._output_nr, {})
    else:
        hooks = (tensor._extra or {}).get("leaf_hooks", {})
    return [getattr(h, "user_hook", h) for h in hooks.values()]


def _checked_values(fn, old, new):
    """PyTorch's checks of the tuple a node pre/post hook returned in place of `old`."""
    if new is None:
        return None
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(old):
        raise RuntimeError(f"hook '{_hook_name(fn)}' has returned an incorrect number of values "
                           f"(got {len(new)}, but expected {len(old)})")
    for o, n in zip(old, new):
        if n is not None:
            _check_value(fn, o, n)
    return new


def _check_value(fn, old, new):
    if old is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(new, SavedTensor.tensor_class):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if new.shape != old.shape:
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the size of value")
    if new._dtype is not old._dtype or new._device != old._device:
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the type of value (was "
                           f"torch.{legacy_type_name(old._dtype, old._device)} got "
                           f"torch.{legacy_type_name(new._dtype, new._device)})")


def _hook_name(fn):
    return getattr(fn, "__name__", "<unknown>")


def accumulate_into_grad(variable, new):
    """Add `new` into `variable.grad` as PyTorch does: in place unless building a graph."""
    old = variable._grad
    ndarray = np.ndarray        # (NumPy arrays all round, the common case: nothing is sparse)
    if not (new._data.__class__ is ndarray and variable._data.__class__ is ndarray and
            (old is None or old._data.__class__ is ndarray)) and \
            (_sparse(new) or _sparse(variable) or old is not None and _sparse(old)):
        from ..sparse._autograd import accumulate     # (ember.sparse is built on autograd)
        accumulate(variable, old, new)
        return
    if old is None:
        layout = _grad_layout(variable)
        if not grad_mode.state.enabled and (_obeys(new, layout) or
                                            not grad_mode.engine_settings.enforce_grad_layout):
            if _owned(new):
                variable._grad = new    # the engine's own result, nobody else holds it
                return
            if _owned_view(new):
                # a view of a result nobody else holds (a linear layer's weight gradient is
                # the transpose of a product): its memory becomes .grad, as a plain tensor
                variable._grad = new._make(new._data, new._dtype, new._device)
                return
        if True:
            # a copy laid out as the contract says (under create_graph it is a graph node:
            # CopyBackwards, or CloneBackward0 for an oddly laid out variable)
            variable._grad = _clone_to_layout(new, layout)
        return
    if grad_mode.state.enabled:
        variable._grad = old + new
    else:
        strides = old._data.strides
        if 0 in strides and any(st == 0 and n > 1 for st, n in zip(strides, old._data.shape)):
            raise RuntimeError(INTERNAL_OVERLAP_ERROR)
        old._data += new._data
        old._version_counter.value += 1


def _sparse(t):
    """Is t a sparse tensor (its _data a COOArrays or a compressed matrix's arrays,
    ember/sparse)?"""
    data = t._data
    return data.__class__ is not np.ndarray and (getattr(data, "_ember_sparse", False) or
                                                 getattr(type(data), "_ember_csr", False))


INTERNAL_OVERLAP_ERROR = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.")


def _grad_layout(variable):
    """PyTorch's gradient layout contract: the strides `variable.grad` gets, those of the
    variable when it is dense and non-overlapping (CONTIGUOUS for row-major ones, the common
    case, without computing strides), or None for the others (then row-major)."""
    if variable._data.flags.c_contiguous:
        return CONTIGUOUS
    # (cycle: ops.creation -> ops.registry -> this module)
    from ..ops.creation import _non_overlapping_and_dense
    strides = variable.stride()
    if variable._data.size == 0 or not _non_overlapping_and_dense(variable.shape, strides):
        return None
    return strides


CONTIGUOUS = "contiguous"


def _obeys(grad, layout):
    if layout is None or layout is CONTIGUOUS:
        return grad._data.flags.c_contiguous or grad.is_contiguous()
    strides = grad.stride()
    # a dim of size one may have any stride
    return all(a == b or n == 1 for a, b, n in zip(strides, layout, grad.shape))


def _clone_to_layout(new, layout):
    if layout is None:
        return new.clone(memory_format=contiguous_format)
    # (cycle: ops.creation -> ops.registry -> this module)
    from ..ops.creation import empty, empty_strided
    if layout is CONTIGUOUS:
        copy = empty(tuple(new.shape), dtype=new._dtype, device=new._device)
    else:
        copy = empty_strided(tuple(new.shape), layout, dtype=new._dtype, device=new._device)
    return copy.copy_(new)


def _owned(t):
    # refs: the caller's local, the engine's list slot, getrefcount's argument, this argument
    data = t._data
    if not (sys.getrefcount(t) <= 4 and t._base is None and t._grad_fn is None
            and sys.getrefcount(data) <= 3):
        return False
    base = data.base
    # a kernel's result is often a reshape of the array it computed (its rows); that array
    # is then held by this view alone: refs from data.base, this local and getrefcount's
    # argument (any other view of it, a saved tensor say, would add one)
    return base is None or (base.__class__ is np.ndarray and base.base is None
                            and base.nbytes == data.nbytes and sys.getrefcount(base) <= 3)


def _owned_view(t):
    # a view covering all of its base, where the view, the base and the base's array are held
    # only by the engine's references and by each other
    base = t._base
    return (base is not None and sys.getrefcount(t) <= 4 and sys.getrefcount(base) <= 3
            and base._base is None and base._grad_fn is None
            and t._data.size == base._data.size and sys.getrefcount(base._data) <= 3)


# ----------------------------------------------------------------------------- saved tensors
FREED_ERROR = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward.")


class SavedTensor:
    tensor_class = None     # ember.Tensor, set by ember/_tensor.py (which imports this module)
    # the (pack, unpack) pairs of the active saved_tensors_hooks, innermost last: while any is
    # active, ops save PackedSaved records instead (see Op._save)
    hooks = []

    """A tensor saved for backward, with the version it had when saved.

    An op's own output is kept as its array alone (not the Tensor) and rebuilt on unpacking with
    the node as grad_fn: keeping the Tensor would make a cycle output -> node -> output.
    """
    __slots__ = ("tensor", "data", "version_counter", "saved_version", "output_nr", "dtype",
                 "device", "requires_grad", "tangent")

    def __init__(self, tensor, is_output=False, output_nr=0):
        counter = tensor._version_counter
        self.saved_version = counter.value
        self.version_counter = counter
        if is_output:
            self.tensor = None
            self.data = tensor._data
            self.dtype = tensor._dtype
            self.device = tensor._device
            self.output_nr = output_nr
            self.requires_grad = True
            # (forward AD: the output's tangent, rebuilt with it; see forward_ad.saved_tangent)
            self.tangent = None if tensor._extra is None else _forward_ad().saved_tangent(tensor)
        else:
            self.tensor = tensor
            self.data = None

    def unpack(self, node):
        counter = self.version_counter
        if counter.value != self.saved_version:
            raise RuntimeError(modified_message(self, node))
        if self.tensor is not None:
            return self.tensor
        t = self.tensor_class._make(self.data, self.dtype, self.device)
        t._vc = counter
        t._grad_fn = node
        t._output_nr = self.output_nr
        t._requires_grad = True
        if self.tangent is not None:
            _forward_ad().restore_tangent(t, self.tangent)
        return t


def _forward_ad():
    from . import forward_ad        # (it imports this module)
    return forward_ad


class PackedSaved:
    """A tensor saved for backward while saved_tensors_hooks was active: what the pack hook
    returned for it, and its place in the graph. Unpacking calls the unpack hook and, as
    PyTorch, gives a new tensor sharing that result's data but standing where the saved tensor
    stood in the graph (its grad_fn, or the same leaf accumulator). No version check: the
    hooks decide what is kept."""
    __slots__ = ("packed", "unpack_hook", "grad_fn", "output_nr", "requires_grad",
                 "accumulator", "is_output", "as_array")

    def __init__(self, tensor, is_output=False, output_nr=0, as_array=False):
        pack, self.unpack_hook = SavedTensor.hooks[-1]      # the innermost hooks
        version = tensor._version_counter.value
        with grad_mode.no_grad():       # (as PyTorch: what pack computes is not recorded)
            self.packed = pack(tensor)
        if tensor._version_counter.value != version:
            raise RuntimeError(PACK_INPLACE_ERROR)
        self.is_output = is_output
        self.as_array = as_array        # the derivative reads the array (an op's indices)
        self.output_nr = output_nr if is_output else tensor._output_nr
        self.accumulator = None
        if is_output:                   # the node itself, given on unpacking (no cycle)
            self.grad_fn, self.requires_grad = None, True
        else:
            self.grad_fn, self.requires_grad = tensor.grad_fn, tensor._requires_grad
            if self.requires_grad and self.grad_fn is None:
                self.accumulator = weakref.ref(tensor._accumulator())

    def unpack(self, node):
        t = self.unpack_hook(self.packed)
        if not isinstance(t, SavedTensor.tensor_class):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(t).__name__}")
        if self.as_array:
            return t._data
        var = SavedTensor.tensor_class._make(t._data, t._dtype, t._device)
        var._version_counter = t._version_counter
        grad_fn = node if self.is_output else self.grad_fn
        if grad_fn is not None:
            var._grad_fn, var._output_nr, var._requires_grad = grad_fn, self.output_nr, True
        elif self.requires_grad:
            var._requires_grad = True
            var._get_extra()["accumulator"] = self.accumulator     # gradients reach the leaf
        return var


PACK_INPLACE_ERROR = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the "
    "input to a pack hook.")


def pack_saved(plan, saved, outs, in_place):
    """Op._save's values with every tensor among them packed by the innermost hooks (inputs,
    outputs, an op's index output): `plan` says what each value is (Op._plan_save's kinds).
    An in-place op's result is saved once written (by rebase_history), not here."""
    tensor_class = SavedTensor.tensor_class
    packed = []
    for (kind, i, _), value in zip(plan, saved):
        if isinstance(value, tensor_class):
            value = PackedSaved(value)
        elif value.__class__ is SavedTensor and not (in_place and kind == "result"):
            value = _pack_record(value, outs)
        elif value.__class__ is list:
            value = [_pack_record(v, outs) for v in value]
        elif kind == "data" and value is not None:
            value = PackedSaved(outs[i], as_array=True)
        packed.append(value)
    return tuple(packed)


def _pack_record(record, outs):
    if record.tensor is not None:
        return PackedSaved(record.tensor)
    return PackedSaved(outs[record.output_nr], True, record.output_nr)


class saved_tensors_hooks:
    """Within this context, every tensor an op saves for backward is handed to `pack_hook`,
    which returns what to keep; the derivative gets `unpack_hook(that)` back."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _hooks_disabled[0] is not None:
            raise RuntimeError(_hooks_disabled[0])
        SavedTensor.hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        SavedTensor.hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device when used."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(tensor):
            # (there is no pinned memory here: pin_memory only makes it a copy, as PyTorch
            # does where no accelerator is available)
            return tensor.device, tensor.to("cpu", copy=True) if pin_memory else tensor.cpu()

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device)
        super().__init__(pack, unpack)


_hooks_disabled = [None]     # the message of the innermost disable_saved_tensors_hooks


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Entering saved_tensors_hooks here (or this while some are active) raises
    RuntimeError(error_message)."""
    previous = _hooks_disabled[0]
    try:
        _hooks_disabled[0] = error_message
        if SavedTensor.hooks:
            raise RuntimeError(error_message)
        yield
    finally:
        _hooks_disabled[0] = previous


_HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its "
         "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
_ANOMALY_HINT = ("Hint: the backtrace further above shows the operation that failed to compute "
                 "its gradient. The variable in question was changed in there or anywhere later. "
                 "Good luck!")


def modified_message(saved, node):
    if saved.tensor is not None:
        t = saved.tensor
        shape, dtype, device = t.shape, t._dtype, t._device
        # (a view's grad_fn as it reads now: regenerated after the write, as in PyTorch)
        fn = t.grad_fn
        where = f", which is output {t._output_nr} of {_short_name(fn)}," if fn is not None \
            else ""      # a leaf: PyTorch names nothing
    else:
        shape, dtype, device = saved.data.shape, saved.dtype, saved.device
        where = f", which is output {saved.output_nr} of {_short_name(node)},"
    counter = saved.version_counter
    msg = (f"one of the variables needed for gradient computation has been modified by an "
           f"inplace operation: [torch.{legacy_type_name(dtype, device)} [{', '.join(map(str, shape))}]]"
           f"{where} is at version {counter.value}; expected version "
           f"{saved.saved_version} instead. " + (_ANOMALY_HINT if anomaly_mode.state.enabled
                                                  else _HINT))
    if counter.site is not None:
        # ember's addition: where the offending in-place op was called
        msg += f"\n(ember) The last in-place change was made at {_site_text(counter.site)}."
    return msg


def _short_name(node):
    name = node.name()
    i = name.rfind("Backward")
    return name[:i] if i > 0 else name


class VersionCounter:
    """Shared by a tensor and all its views; bumped by every in-place write."""
    __slots__ = ("value", "site")

    def __init__(self):
        self.value = 0
        self.site = None

    def bump(self):
        self.value += 1
        self.site = _user_site()


def _user_site():
    """(file, line) of the innermost frame outside ember (the user's in-place call); made
    into text only when an error message quotes it (_site_text), as most never are."""
    frame = sys._getframe(2)
    startswith, package = str.startswith, _PACKAGE_DIR
    while frame is not None and startswith(frame.f_code.co_filename, package):
        frame = frame.f_back
    if frame is None:
        return None
    return frame.f_code.co_filename, frame.f_lineno


def _site_text(site):
    return f"{site[0]}:{site[1]}"


def _package_dir():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


_PACKAGE_DIR = _package_dir()


# ----------------------------------------------------------------------------- mutation of saved

class _AllowMutationOnSavedContext:
    """The state of one allow_mutation_on_saved_tensors block: whether it is still open (a
    graph recorded in it may only be differentiated while it is)."""

    def __init__(self):
        self.active = True


_mutation_context = [None]      # the open allow_mutation_on_saved_tensors block, if any

_MUTATION_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' "
                     "context" "in which the graph was originally recorded.")   # (torch's text)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Within this block a tensor saved for backward may be modified in place afterwards:
    backward uses the values it had when saved. Every tensor saved in the block is kept as a
    copy (torch copies lazily, on the first mutation; the values backward sees are the same),
    and the graph must be differentiated before the block ends."""
    if _mutation_context[0] is not None:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()

    def unpack(copy):
        if not ctx.active:
            raise AssertionError(_MUTATION_OUTSIDE)
        return copy

    _mutation_context[0] = ctx
    try:
        with saved_tensors_hooks(lambda t: t.clone(), unpack):
            yield ctx
    finally:
        ctx.active = False
        _mutation_context[0] = None


def region_activation_memory_budget(budget):
    """A compiler hint (how many activations a compiled region keeps); ember never compiles,
    so it refuses, as torch does outside a compiled region."""
    raise RuntimeError("torch.autograd.graph.region_activation_memory_budget can only be "
                       "used inside a torch.compile region; it has no effect in eager mode.")


# CUDA stream settings of torch's engine, process-wide. ember's engine runs each backward on
# one stream, so neither situation they govern arises; the settings are recorded.
_stream_settings = {"override_stale_capture_stream": False,
                    "warn_on_accumulate_grad_stream_mismatch": True}


def _set_stream_setting(key, enabled):
    if not isinstance(enabled, bool):
        raise RuntimeError(f"enabled must be a bool, but got {type(enabled).__name__}")
    _stream_settings[key] = enabled


def set_override_stale_capture_stream(enabled):
    _set_stream_setting("override_stale_capture_stream", enabled)


def set_warn_on_accumulate_grad_stream_mismatch(enabled):
    _set_stream_setting("warn_on_accumulate_grad_stream_mismatch", enabled)
