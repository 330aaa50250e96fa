"""ember.autograd.forward_ad: forward-mode AD with dual tensors (torch.autograd.forward_ad).

A dual tensor is a tensor with a tangent at the active dual level (at most one level, as in
PyTorch). While a level is active, every registered op gives its floating outputs a tangent
when one of its inputs has one (ops/registry.py calls `propagate` / `propagate_inplace`):

* The tangent of an output is J t, found from the op's derivative (its VJP u -> J^T u, written
  in ember ops) by the double-backward trick: J^T u is linear in u, so J t is the gradient of
  <J^T u, t> with respect to u. The derivative runs on a node recorded for the call (its saved
  values are the op's real inputs, so a tangent keeps its graph to them when grad mode is on).
* A view op (and the few ops linear in their one input, `_LINEAR`) applies itself to the
  tangent: the tangent of a view is the same view of the tangent, sharing its memory. A view
  whose base got a tangent later (an in-place write) reads its tangent out of the base's.
* An in-place op computes the new tangent before the write and copies it into the target's
  tangent (a view without one gives its base a zero tangent first).
* A tangent is kept in the tensor's `_extra` dict and dropped from every tensor when the level
  exits; `detach()` and `.data` make tensors without one.
"""
import contextlib
import weakref
from typing import NamedTuple, Optional

from . import grad_mode
from .graph import INTERNAL_OVERLAP_ERROR
from .._dtype import _FROM_NUMPY
from ..ops import hooks as _hooks
from .._tensor import Tensor
from ..ops.creation import strided_empty, zeros_like, _copy
from ..ops.registry import xp_of, primitive
from ..ops.views import _view, element_strides, strided_view

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

# The active dual levels (PyTorch allows one: always [0] or []). ops/registry.py reads this
# list on every op call: only a non-empty one costs anything.
_levels = _hooks.dual_levels
_current_level = -1
_duals = []             # weak references to the tensors given a tangent at the active level
_TANGENT = "fw_grad"    # the tangent's key in Tensor._extra
_entries = [0]          # how many dual levels were entered: tells a saved tangent's level apart


def saved_tangent(t):
    """(level entry, tangent) of an op output being saved for backward, or None: the output is
    saved as its array and rebuilt on unpacking (see graph.SavedTensor), its tangent too."""
    tangent = t._extra.get(_TANGENT) if t._extra is not None and _levels else None
    return (_entries[0], tangent) if tangent is not None else None


def restore_tangent(t, saved):
    """Give a rebuilt saved output its tangent back, if its dual level is still the active one
    (forward-over-reverse: `exp`'s derivative reads its output, tangent included)."""
    entry, tangent = saved
    if _levels and entry == _entries[0]:
        _store(t, tangent)
# Tensor._extra key of a view's forward base when it is not its `_base`: the tensor whose
# tangent it reads a part of (see tangent_of). A primal from unpack_dual is a view for autograd
# only (as PyTorch's): it has none (None), and the views made of it have the primal.
_FW_BASE = "fw_base"
# the name of the last computing op (not a view) given a tangent input, and a weak reference to
# its first output: the kernel an out= call ran, for check_out's message
_last_op = ["", lambda: None]
# ops (not views) that only reshape a kernel's result (matmul's): not the kernel
_RESHAPING = frozenset(("_unsafe_view", "squeeze_"))

# ops linear in their one tensor input whose tangent is the op applied to the input's tangent
# (besides the view ops); `_to_copy` also reads an option set on its node after the call
_LINEAR = frozenset(("clone", "_to_copy", "_unsafe_view", "neg", "conj", "conj_physical",
                     "resolve_conj", "resolve_neg"))


class UnpackedDualTensor(NamedTuple):
    primal: object
    tangent: Optional[object]


UnpackedDualTensor.__module__ = "ember.autograd.forward_ad"


# ---------------------------------------------------------------------------------- levels
def enter_dual_level():
    global _current_level
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _levels.append(0)
    _current_level = 0
    _entries[0] += 1
    return 0


def exit_dual_level(*, level=None):
    global _current_level
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if not _levels or level != _levels[-1]:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    for ref in _duals:                  # every tangent of the level goes with it
        t = ref()
        if t is not None and t._extra is not None:
            t._extra.pop(_TANGENT, None)
    _duals.clear()
    _levels.pop()
    _current_level = -1


class dual_level(grad_mode._Mode):
    """Context manager (and decorator) for a dual level: `with dual_level(): ...`."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


@contextlib.contextmanager
def _suspended():
    """No tangent propagation inside (the tangents' own computations)."""
    saved = _levels[:]
    _levels.clear()
    try:
        yield
    finally:
        _levels[:] = saved


# ---------------------------------------------------------------------------- dual tensors
def make_dual(tensor, tangent, *, level=None):
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    _check_level(level, "_make_dual")
    if tangent_of(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    if tangent_of(tangent) is not None:
        raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the "
                           f"same level{level} is not supported.")
    if tangent.shape != tensor.shape:
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    with _suspended():
        dual = _view(tensor, shape=tuple(tensor.shape))     # (ViewBackward0, as PyTorch)
        _store(dual, _fit_layout(dual, tangent))
    return dual


def unpack_dual(tensor, *, level=None):
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    tangent = tangent_of(tensor)
    if tangent is not None:
        _check_level(level, "_fw_primal")
    with _suspended():
        primal = _fw_primal(tensor)
    primal._get_extra()[_FW_BASE] = None
    return UnpackedDualTensor(primal, tangent)


@primitive("_fw_primal", node="CppFunction", view=True)
def _fw_primal(xp, self):
    """The view op giving a dual tensor's primal (PyTorch's node prints as `<Identity>`)."""
    return self.view()


@_fw_primal.derivative
def _(ctx, grad):
    return grad


_fw_primal.node_cls.name = lambda self: "torch::autograd::Identity"


def _check_level(level, where):
    if level not in _levels:
        if not _levels:
            raise RuntimeError("Trying to access a forward AD level with an invalid index. This "
                               "index was either not created or is already deleted.")
        raise RuntimeError(f"Invalid level given to {where}")


def tangent_of(t):
    """The tensor's tangent at the active level, or None. A view without one of its own reads
    it out of its base's (given to the base by an in-place op after the view was made)."""
    extra = t._extra
    if extra is not None:
        tangent = extra.get(_TANGENT)
        if tangent is not None:
            return tangent
        base = extra.get(_FW_BASE, t._base)
    else:
        base = t._base
    if base is not None and base._extra is not None:
        base_tangent = base._extra.get(_TANGENT)
        if base_tangent is not None:
            # the base's tangent has the base's strides (see _fit_layout): the view's geometry
            # in the base's memory is its geometry in the tangent's
            tangent = base_tangent._make_view(strided_view(
                base_tangent._data, t._data.shape, t.stride(),
                t.storage_offset() - base.storage_offset()))
            _store(t, tangent)
            return tangent
    return None


def _fw_base(t):
    extra = t._extra
    return t._base if extra is None else extra.get(_FW_BASE, t._base)


def _store(t, tangent):
    t._get_extra()[_TANGENT] = tangent
    _duals.append(weakref.ref(t))


def _fit_layout(primal, tangent):
    """The tangent itself when it has the primal's strides, else a copy with them."""
    data = primal._data
    strides = element_strides(data)
    if element_strides(tangent._data) == strides:
        return tangent
    if data.size and any(s == 0 and n > 1 for s, n in zip(strides, data.shape)):
        raise RuntimeError(INTERNAL_OVERLAP_ERROR)      # (PyTorch copies into such a layout)
    copy = Tensor._make(strided_empty(xp_of(tangent._device), data.shape, strides,
                                      tangent._data.dtype), tangent._dtype, tangent._device)
    with _suspended():
        copy.copy_(tangent)
    return copy


# ----------------------------------------------------------------------------- propagation
def _input_tangents(inputs):
    """The tangents of the tensor inputs (None for the others), or None when none has one."""
    tangents = [tangent_of(x) if isinstance(x, Tensor) else None for x in inputs]
    return tangents if any(t is not None for t in tangents) else None


def propagate(op, inputs, result, params):
    """Give an op's outputs their tangents (called by Op.__call__ while a level is active)."""
    tangents = _input_tangents(inputs)
    outs = (result,) if op.n_outputs == 1 else tuple(result)
    if tangents is None:
        extra = inputs[0]._extra if op.view else None
        if extra is not None and _FW_BASE in extra:
            base = extra[_FW_BASE]          # (views of a primal: see _FW_BASE)
            for o in outs:
                o._get_extra()[_FW_BASE] = inputs[0] if base is None else base
        return
    if not op.view and op.name not in _RESHAPING:
        _last_op[:] = op.name, weakref.ref(outs[0])
    if not op.differentiable:
        return
    if not any(o._dtype._category >= 2 for o in outs):
        return                          # (argmax, comparisons: no tangent)
    with _suspended():
        if op.view or op.name in _LINEAR:
            new = op(tangents[0], **params)
            new = (new,) if op.n_outputs == 1 else tuple(new)
            fit = not op.view
        else:
            new = _jvp(op, inputs, outs, params, tangents)
            fit = True
        for o, tangent in zip(outs, new):
            if tangent is not None and o._dtype._category >= 2:
                if tangent._dtype.np != tangent._data.dtype:
                    # (a view that changes the dtype, as `.real`, retypes its output after
                    # the call: its tangent likewise)
                    tangent._dtype = _FROM_NUMPY[tangent._data.dtype]
                _store(o, _fit_layout(o, tangent) if fit else tangent)


def propagate_inplace(op, target, inputs, out, params):
    """Update the target's tangent for `target.op_(...)`, before the result `out` (an array)
    is written into it (called by Op.inplace while a level is active)."""
    tangents = _input_tangents(inputs)
    if tangents is None or target._dtype._category < 2:
        return
    xp = xp_of(target._device)
    with _suspended():
        new = None
        if op.differentiable:
            out = xp.broadcast_to(xp.asarray(out), target._data.shape)
            alias = Tensor._make(out, target._dtype if out.dtype == target._data.dtype else None,
                                 target._device)
            new = _jvp(op, inputs, (alias,), params, tangents)[0]
        tangent = tangent_of(target)
        if tangent is None:
            if new is None:
                return
            base = _fw_base(target)
            if base is None:
                _store(target, _fit_layout(target, new))
                return
            # a view without a tangent: its base gets a zero one, of which the view's is a view
            _store(base, _fit_layout(base, Tensor._make(xp.zeros_like(base._data), base._dtype,
                                                        base._device)))
            tangent = tangent_of(target)
        if new is None:
            tangent.zero_()
        else:
            tangent.copy_(new)


# ember op name -> the name of PyTorch's out= kernel where they differ (beyond an overload
# suffix such as ".dim")
_OUT_KERNELS = {"linalg_svd": "_linalg_svd", "linalg_inv": "linalg_inv_ex",
                "linalg_solve": "_linalg_solve_ex"}
# out= functions PyTorch composes of others, then copies into out: out takes the tangent
_COPYING_OUTS = frozenset(("linalg_norm", "linalg_matrix_norm", "linalg_cond"))


def check_out(result, out, name):
    """PyTorch's out= functions have no forward derivative: after writing `out`, refuse an
    input or an `out` with a tangent (called by ops.pointwise._out while a level is active).
    `name` is the function's; PyTorch names the out= kernel that ran, which is the last op
    computed from a tangent input (matmul's mm or dot, outer's mul)."""
    from_dual = tangent_of(result) is not None or _last_op[1]() is result
    if not from_dual and tangent_of(out) is None:
        return
    if name in _COPYING_OUTS:
        propagate_inplace(_copy, out, (out, result), out._data, {})
        return
    if from_dual:
        name = _last_op[0].split(".")[0]
    name = _OUT_KERNELS.get(name, name).replace(".", "_")
    raise NotImplementedError(f"Trying to use forward AD with {name}_out that does not support "
                              f"it because it is an out= function")


def _jvp(op, inputs, outs, params, tangents):
    """J t for each output (None for a non-differentiable one) by the double-backward trick."""
    # (cycle: ember/autograd/__init__.py defines it after importing this module)
    from . import grad as autograd_grad
    # the tangents keep a graph when grad mode is on and they, or the inputs, require grad
    create = grad_mode.state.enabled and any(
        getattr(x, "_requires_grad", False) for x in list(inputs) + tangents)
    # an input with a tangent enters the node as needing a gradient (the derivative may skip
    # the others): one not requiring grad as a leaf alias of itself that does
    inputs = [Tensor._make(x._data, x._dtype, x._device, True)
              if t is not None and not x._requires_grad else x
              for x, t in zip(inputs, tangents)]
    with grad_mode.enable_grad():
        aliases = tuple(Tensor._make(o._data, o._dtype, o._device) for o in outs)
        node = op._record(inputs, aliases[0] if op.n_outputs == 1 else aliases, params)
        if node is None:                # (inference mode records nothing)
            return [None] * len(outs)
        us = [zeros_like(a) for a in aliases[:node._n_outputs]]
        for u in us:
            if u._dtype._category >= 2:
                u.requires_grad_()
        grads = node.apply(us, None)
        outputs, grad_outputs = [], []
        for g, t in zip(grads, tangents):
            if g is not None and t is not None and g._requires_grad:
                if t._dtype._category == 3 and g._dtype._category < 3:
                    t = t.real
                outputs.append(g)
                grad_outputs.append(t)
        wrt = [u for u in us if u._requires_grad]
        found = autograd_grad(outputs, wrt, grad_outputs, create_graph=create,
                              allow_unused=True) if outputs else [None] * len(wrt)
    found = iter(found)
    new = []
    for i, o in enumerate(outs):
        if i >= len(us) or not us[i]._requires_grad:
            new.append(None)
            continue
        t = next(found)
        new.append(t if t is not None else zeros_like(o))
    return new


# the registry's (and the printer's) forward-AD hook: tangents for every op while a level is active
_hooks.register_forward_ad(propagate, propagate_inplace, tangent_of)
