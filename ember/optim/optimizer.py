"""The Optimizer base: parameter groups, per-parameter state, state_dict, zero_grad.

How updates are written (all optimizers in this package): each step works on the raw arrays
(`p._data`, `p._grad._data`, the state tensors' arrays) with NumPy/CuPy ufuncs and `out=`, and
then bumps the version counter of every tensor it wrote, so that autograd's saved-tensor checks
still see the write. Why not ember's in-place tensor methods (`p.add_(g, alpha=-lr)`)? They
compute out of place and copy the result in (one temporary per call), and each call pays the
op registry's dispatch. Raw ufuncs with `out=` into a few scratch arrays that the optimizer keeps
(`_Workspace`) make a step allocate nothing after the first one, and give exact control of the
order of float operations, which follows PyTorch's CPU kernels (`a + alpha * b`,
`self + value * t1 * t2`, ...) so float32 results agree to rounding.

SGD, Adam/AdamW, Adadelta, RMSprop and Adagrad run that arithmetic batched, over all of a
group's parameters at once (`_Flat`: the gradients gathered into one array, the state
tensors' arrays views into flat buffers), so a step costs a few NumPy calls per group plus
one add per parameter, not ~10 calls per parameter; they fall back to the per-parameter
update (`_update_each`) for complex, mixed-dtype or off-CPU groups.

The flags: fused=True (where PyTorch has a fused kernel: SGD, Adam, AdamW, Adagrad) runs this
same update, after PyTorch's checks; capturable=True raises PyTorch's assertion at step for a
parameter off the CUDA-like devices; differentiable=True runs `_update_group_differentiable`,
the update written in ember's in-place tensor ops with grad mode on, so autograd records it
(SGD, Adam and AdamW; the others refuse the flag at construction).
"""
from collections import OrderedDict, defaultdict
from copy import deepcopy
import functools
from itertools import chain
import warnings

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.graph import VersionCounter, _user_site, add_hook
from ..ops.registry import xp_of
from ..sparse._optim import sparse_update
from ..sparse._coo import made as _sparse_made


def _sparse_grads(group):
    """Has some parameter of the group a sparse gradient (nn.Embedding(sparse=True))?"""
    if not _sparse_made[0]:
        return False        # (no sparse tensor was ever made: the common case, one test)
    for p in group["params"]:
        g = p._grad
        if g is not None and g._data.__class__ is not np.ndarray and g.is_sparse:
            return True
    return False


class _RequiredParameter:
    """Marks a default that every parameter group must set itself."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """hook(optimizer, args, kwargs) before any optimizer's step; may return (args, kwargs)."""
    return add_hook(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """hook(optimizer, args, kwargs) after every optimizer's step."""
    return add_hook(_global_step_post_hooks, hook)


def _run_step_hooks(step):
    """Wrap a step method so the step hooks (global and the optimizer's own) run around it."""
    @functools.wraps(step)
    def hooked_step(*args, **kwargs):
        # as in PyTorch, the hooks' `args` include the optimizer itself, first
        self = args[0]
        for hook in chain(_global_step_pre_hooks.values(), self._step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
                args, kwargs = result
        out = step(*args, **kwargs)
        for hook in chain(self._step_post_hooks.values(), _global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    hooked_step.hooked = True
    return hooked_step


class Optimizer:
    """Base class of all optimizers: holds `param_groups`, `defaults` and per-parameter `state`.

    Subclasses implement `step(closure=None)`.
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._step_pre_hooks = OrderedDict()
        self._step_post_hooks = OrderedDict()
        self._hook_step()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        self._workspace = _Workspace()
        self._flats = {}
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group):
        """Add a group of parameters (a dict with "params" and optional per-group options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)

        # (name, tensor) pairs, as named_parameters() yields, keep their names
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = params
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names

        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and \
                    not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)

        seen = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(f"all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ------------------------------------------------------------------ gradients
    def zero_grad(self, set_to_none=True):
        """Reset the gradients: to None (default), or to zeros written into the existing grads."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    # where PyTorch runs a step with capturable=True (CUDA graphs); elsewhere it asserts
    _capturable_devices = ("cuda", "xpu", "hpu", "privateuseone", "xla")
    _capturable_devices_foreach = ("cuda", "xpu", "hpu", "privateuseone")
    _capturable_what = "params and state_steps"
    _capturable_what_foreach = "params and state_steps"
    # fused=True: a separate kernel in PyTorch with the same results; here the ordinary update
    _FUSED_DEVICES = ("mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone")

    def step(self, closure=None):
        """Run the closure (if any, with grad mode on), then update each group's parameters
        that have a gradient; returns the closure's loss.

        As in PyTorch, the step runs without grad mode unless the optimizer is
        differentiable=True: then the update is recorded in the graph (through the
        parameters, gradients, state and tensor hyper-parameters)."""
        loss = self._closure_loss(closure)
        with grad_mode.set_grad_enabled(bool(self.defaults.get("differentiable"))):
            for group in self.param_groups:
                self._check_step_flags(group)
                if group.get("differentiable"):
                    self._update_group_differentiable(group)
                elif _sparse_grads(group):
                    sparse_update(self, group)      # (ember/sparse/_optim.py)
                else:
                    self._update_group(group, self._workspace)
        return loss

    def _update_group(self, group, ws):
        """One group's update, in place (each optimizer's own arithmetic); `ws` lends scratch
        arrays. Optimizers with a batched update (`_update_flat`) run it over the group's
        parameters laid out in flat buffers (`_Flat`) when they can share them, else their
        per-parameter `_update_each`; the others override this method."""
        flat = self._flat_for(group)
        if flat is not None and not flat.gather():
            self._flats.pop(id(group), None)        # a gradient of another dtype now
            flat = None
        if flat is None:
            self._update_each(group, ws)
        else:
            self._update_flat(group, flat, ws)
            bump_versions(flat.written)

    # the keys of the parameter-shaped state tensors a batched update keeps in flat buffers
    # (a function of the group), and whether the state has a "step" count
    def _flat_keys(self, group):
        return ()

    _flat_step = True

    def _flat_for(self, group):
        """The group's `_Flat` (cached; rebuilt when a parameter, its array or a state tensor
        changed), or None when its parameters can't share flat buffers: then the
        per-parameter update runs."""
        params = [p for p in group["params"] if p._grad is not None]
        if not params:
            return None
        key = id(group)
        flat = self._flats.get(key)
        if flat is not None and flat.valid(params, self.state):
            return flat
        self._flats.pop(key, None)
        flat = self._make_flat(group, params)
        if flat is not None:
            self._flats[key] = flat
        return flat

    @staticmethod
    def _flat_dtype(params):
        """The NumPy float dtype all the parameters and gradients share, else None (complex,
        integer, mixed, or off the CPU: then the update runs per parameter)."""
        a = params[0]._data
        if type(a) is not np.ndarray or a.dtype.kind != "f":
            return None
        dtype = a.dtype
        for p in params:
            g = p._grad._data
            if type(p._data) is not np.ndarray or p._data.dtype != dtype or \
                    type(g) is not np.ndarray or g.dtype != dtype or g.shape != p._data.shape:
                return None
        return dtype

    def _make_flat(self, group, params):
        dtype = self._flat_dtype(params)
        if dtype is None:
            return None
        keys = tuple(self._flat_keys(group))
        if not (keys or self._flat_step):          # (stateless: SGD without momentum)
            return _Flat(self.state, params, dtype, keys, False, [self.state.get(p)
                                                                  for p in params])
        states = []
        for p in params:
            state = self._state_for(p, group)
            if not self._flat_state_ok(state, p, keys):
                return None
            states.append(state)
        return _Flat(self.state, params, dtype, keys, self._flat_step, states)

    def _flat_state_ok(self, state, p, keys):
        # (a state tensor in shared memory stays where it is: other processes update it too,
        # as in A3C's shared Adam; the flat buffers would take it private)
        shape = p._data.shape
        for k in keys:
            t = state.get(k)
            if not isinstance(t, Tensor) or type(t._data) is not np.ndarray or \
                    t._data.dtype != p._data.dtype or t._data.shape != shape or \
                    t._base is not None or t.is_shared():
                return False
        if self._flat_step:
            t = state.get("step")
            if not isinstance(t, Tensor) or type(t._data) is not np.ndarray or \
                    t._data.ndim or t._base is not None or t.is_shared():
                return False
        return True

    def _update_each(self, group, ws):
        """The per-parameter update (when a group's parameters can't share flat buffers)."""
        raise NotImplementedError

    def _update_flat(self, group, flat, ws):
        """The batched update, on `flat.grad`, `flat.state[key]` (and
        `flat.gather_params()` where it reads the parameters), ending with
        `flat.apply(change)`."""
        raise NotImplementedError

    def _update_group_differentiable(self, group):
        """One group's update written in ember's in-place ops, recorded by autograd (for the
        optimizers that support differentiable=True; `check_flags` refuses the others)."""
        raise NotImplementedError

    def _init_state(self, p, group):
        """Fill the empty state of a parameter (each optimizer its own buffers)."""

    def _state_for(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            self._init_state(p, group)
        return state

    def _check_fused(self, p):
        if not p.is_floating_point() or p.device.type not in self._FUSED_DEVICES:
            raise RuntimeError(f"`fused=True` requires all the params to be floating point "
                               f"Tensors of supported devices: {list(self._FUSED_DEVICES)} "
                               f"but {p.dtype} and {p.device.type}")

    def _check_fused_and_init(self, p, group):
        state = self.state[p]           # made before the check, as in PyTorch
        self._check_fused(p)
        if len(state) == 0:
            self._init_state(p, group)

    def _check_step_flags(self, group):
        """PyTorch's step-time checks of fused and capturable, at the same point (the state
        of the parameters before the failing one, or of all of them, already made)."""
        params = [p for p in group["params"] if p._grad is not None]
        if group.get("fused"):
            for p in params:
                self._check_fused_and_init(p, group)
        if group.get("capturable"):
            for p in params:
                self._state_for(p, group)
            foreach = bool(group.get("foreach"))
            devices = self._capturable_devices_foreach if foreach else self._capturable_devices
            what = self._capturable_what_foreach if foreach else self._capturable_what
            if any(p.device.type not in devices for p in params):
                raise AssertionError(f"If capturable=True, {what} must be on supported "
                                     f"devices: {list(devices)}.")

    def _hook_step(self):
        # like PyTorch: the class's step is wrapped once, when its first instance is made (so a
        # subclass's step that calls super().step() runs the hooks once)
        cls = type(self)
        if not getattr(cls.step, "hooked", False):
            cls.step = _run_step_hooks(cls.step)

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) before step(); may return new (args, kwargs)."""
        return add_hook(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) after step()."""
        return add_hook(self._step_post_hooks, hook)

    def _closure_loss(self, closure):
        """Run the closure (if any) with grad mode on, as step() does before updating."""
        if closure is None:
            return None
        with grad_mode.enable_grad():
            return closure()

    # ------------------------------------------------------------------ saving and loading
    def state_dict(self):
        """{'state': {param index: {...}}, 'param_groups': [{options..., 'params': [indices]}]}.

        The state's tensors are the live ones (not copies), as in PyTorch.
        """
        index_of = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index_of.setdefault(id(p), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index_of[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Load a state_dict() made by an optimizer over parameters of the same group sizes."""
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        param_of = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                            chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in param_of:
                param = param_of[key]
                state[param] = _cast_state(param, value)
            else:
                state[key] = value
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    # what a loaded param group lacking an option gets (PyTorch's values, per optimizer)
    _group_fallbacks = {}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for name, value in self._group_fallbacks.items():
                group.setdefault(name, value)
        self._workspace = _Workspace()
        self._flats = {}
        self.__dict__.setdefault("_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_step_post_hooks", OrderedDict())
        self._hook_step()

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


def _cast_state(param, value, key=None):
    """A loaded state value for `param`: tensors moved to its device (and its float dtype,
    except the step count), containers rebuilt, anything else as is."""
    if isinstance(value, Tensor):
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return value


# ----------------------------------------------------------------------------- helpers for steps
def check_flags(optimizer):
    """The construction-time checks of fused, foreach and differentiable (after the
    parameters', as in PyTorch); ember refuses differentiable=True where no differentiable
    update is written."""
    defaults = optimizer.defaults
    if defaults.get("fused"):
        if defaults.get("differentiable"):
            raise RuntimeError("`fused` does not support `differentiable`")
        if defaults.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    cls = type(optimizer)
    if defaults.get("differentiable") and \
            cls._update_group_differentiable is Optimizer._update_group_differentiable:
        raise NotImplementedError(f"ember.optim.{cls.__name__}: differentiable=True is not "
                                  f"implemented (SGD, Adam and AdamW support it)")


def check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def scalar(x):
    """A Python number from a float or a one-element tensor (an lr given as a Tensor)."""
    return x.item() if isinstance(x, Tensor) else x


def step_tensor(fused=False):
    """A fresh step count: a 0-dim float tensor (float64 when that is the default dtype,
    except for a fused optimizer's, always float32 as in PyTorch)."""
    dtype = D.float64 if D.get_default_dtype() is D.float64 and not fused else D.float32
    return Tensor._make(np.zeros((), dtype.np), dtype)


def zeros_state(p, fill=0):
    """A state buffer shaped and typed like the parameter, on its device."""
    xp = xp_of(p._device)
    return Tensor._make(xp.full_like(p._data, fill), p._dtype, p._device)


def count_step(step):
    """step += 1 on the 0-dim step tensor; returns the new count as a Python float."""
    data = step._data
    data += 1
    step._version_counter.bump()
    return data.item()


def real(a):
    """A complex array as a real one (interleaved parts), so updates run per component as in
    PyTorch's view_as_real path; real arrays as they are."""
    if a.dtype.kind == "c":
        if a.ndim == 0:
            a = a.reshape(1)            # (a view) NumPy can't re-type a 0-dim array in place
        return a.view(a.real.dtype)
    return a


def written(*tensors):
    """Record in-place writes done on raw arrays (autograd's version checks must see them)."""
    bump_versions(tensors)


def bump_versions(tensors):
    """Bump each tensor's version counter once, all with one call site (finding the user's
    frame is the costly part of a bump, and every write of a step has the same one)."""
    site = _user_site()
    for t in tensors:
        vc = t._vc
        if vc is None:
            vc = t._vc = VersionCounter()
        vc.value += 1
        vc.site = site


class _Flat:
    """A group's parameters (one float dtype, NumPy arrays) and their state, batched: each
    step gathers the gradients into one flat array (`grad`; the parameters too, into `param`,
    only for an update that reads them: L2 weight decay), the update runs a few NumPy calls
    on it and on the flat state buffers, and adds the resulting change to each parameter
    (`apply`: one call per parameter, the only per-parameter work). The state tensors'
    arrays ARE views into the flat state buffers (set up here, copying their values in), so
    state costs no gathering; `valid` re-checks cheaply each step that nothing was replaced
    (a parameter's array, a state tensor, the state dict), and the optimizer builds a new
    _Flat when something was.

    The element-wise arithmetic is the per-parameter update's (the final `param + change`
    too), so the results are the same bits; only the number of NumPy calls changes.
    """

    def __init__(self, state, params, dtype, keys, has_step, states):
        self.state_dict = state
        self.params = params
        self.arrays = [p._data for p in params]
        self.states = states
        sizes = [a.size for a in self.arrays]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        total = int(self.offsets[-1])
        self.param = None
        self.grad = np.empty(total, dtype)
        self._change_views = {}     # id(flat scratch array) -> (it, its per-parameter views)
        # what gather concatenates: a flat view of a contiguous parameter (made once), or
        # None for a strided one (raveled, i.e. copied, at each gather)
        self.sources = [a.reshape(-1) if a.flags.c_contiguous else None for a in self.arrays]
        self.keys = keys
        self.state = {}
        self.views = {}
        self.tensors = {}
        for key in keys:
            tensors = [s[key] for s in states]
            buffer = np.empty(total, dtype)
            self.state[key], self.views[key], self.tensors[key] = (
                buffer, self._adopt(tensors, buffer), tensors)
        self.fresh = False          # (SGD: buffers still to be set from the gradients)
        self.step = None
        if has_step:
            tensors = [s["step"] for s in states]
            step_dtype = tensors[0]._data.dtype
            if all(t._data.dtype == step_dtype for t in tensors):
                self.step = np.empty(len(params), step_dtype)
                self.views["step"] = self._adopt(tensors, self.step, step=True)
                self.tensors["step"] = tensors
            else:           # (mixed: a default dtype changed between them) counted one by one
                self.tensors["step"] = tensors
        self.written = list(params) + [t for ts in self.tensors.values() for t in ts]

    def _views(self, buffer, step=False):
        o = self.offsets
        if step:
            return [buffer[i:i + 1].reshape(()) for i in range(len(self.arrays))]
        return [buffer[o[i]:o[i + 1]].reshape(a.shape) for i, a in enumerate(self.arrays)]

    def _adopt(self, tensors, buffer, step=False):
        """Move the tensors' values into `buffer` and make their arrays views of it (the
        tensor objects stay: whoever holds one sees the updates, as in PyTorch)."""
        views = self._views(buffer, step)
        for t, v in zip(tensors, views):
            v[...] = t._data
            t._data = v
        return views

    def valid(self, params, state):
        """Still the same parameters, arrays and state tensors (identity checks only)."""
        if state is not self.state_dict or len(params) != len(self.params):
            return False
        for p, q, a in zip(params, self.params, self.arrays):
            if p is not q or p._data is not a:
                return False
        for p, s in zip(params, self.states):
            if state.get(p) is not s:
                return False
        for key, tensors in self.tensors.items():
            views = self.views.get(key)
            for s, t, v in zip(self.states, tensors, views or tensors):
                if s.get(key) is not t or views is not None and t._data is not v:
                    return False
        return True

    def gather(self):
        """Copy the gradients into `grad`; False (nothing done) if one is not a NumPy array
        of the parameters' dtype any more."""
        grads = [p._grad._data for p in self.params]
        dtype = self.grad.dtype
        for g in grads:
            if type(g) is not np.ndarray or g.dtype != dtype:
                return False
        np.concatenate([g.reshape(-1) for g in grads], out=self.grad)
        return True

    def gather_params(self):
        """The parameters' current values, gathered into one flat array."""
        if self.param is None:
            self.param = np.empty_like(self.grad)
        return np.concatenate([a.ravel() if s is None else s for a, s in
                               zip(self.arrays, self.sources)], out=self.param)

    def apply(self, change, scale=None):
        """param += change (a flat array) for each parameter, after param *= scale if given
        (decoupled weight decay): the per-parameter update's last operations, the same
        roundings."""
        entry = self._change_views.get(id(change))
        if entry is None or entry[0] is not change:
            entry = self._change_views[id(change)] = (change, self._views(change))
        for a, v in zip(self.arrays, entry[1]):
            if scale is not None:
                np.multiply(a, scale, out=a)
            np.add(a, v, out=a)

    def count_steps(self):
        """step += 1 on every step count; returns the counts (a list of floats)."""
        if self.step is not None:
            self.step += 1
            return self.step.tolist()
        return [count_step(t) for t in self.tensors["step"]]

    def per_element(self, steps, fn):
        """fn(step count) as the update's operand: a number where all the parameters have
        taken the same number of steps (the usual case), else an array holding each
        element's parameter's value (rounded to the dtype, as a number operand is)."""
        first = steps[0]
        if all(s == first for s in steps):
            return fn(first)
        dtype = self.grad.dtype
        return np.repeat(np.array([dtype.type(fn(s)) for s in steps], dtype),
                         np.diff(self.offsets))


class _Workspace:
    """Scratch arrays reused from step to step, one per (role, shape, dtype, array type)."""

    def __init__(self):
        self._arrays = {}

    def get(self, xp, like, role):
        key = (role, like.shape, like.dtype, type(like), getattr(like, "device", None))
        a = self._arrays.get(key)
        if a is None:
            a = self._arrays[key] = xp.empty_like(like)
        return a


# Array kernels with PyTorch's operation order. `a` is updated in place; `tmp` is scratch.
# PyTorch's CPU kernels for add (with alpha), lerp and addcmul end in a fused multiply-add on
# float32: one rounding of `base + x * y`. NumPy has none, so for float32 these kernels compute
# the product exactly in float64 (24-bit times 24-bit significands fit in 53 bits) and round
# the sum once to float32 (`_round_once_`): the FMA's result but for astronomically rare double
# roundings. Other dtypes round the product and the sum each, as NumPy does (float64: PyTorch
# fuses there too, which ember cannot reproduce without a wider type).
def _fused(xp, a):
    return xp is np and a.dtype == np.float32


def _round_once_(a, tmp, exact, *operands):
    """a[...] = the float32 rounding of the float64 value that `exact(wide, *operands)` writes
    into `wide`. The operands (arrays shaped as `a`, or numbers) are passed flat, chunk by
    chunk, with `wide` = tmp's memory seen as float64 (half as many elements, so two or three
    chunks): nothing is allocated. Small, strided or overlapping cases take a float64 array."""
    n = a.size
    shape = a.shape
    flat = []
    simple = n >= 2 and a.flags.c_contiguous and tmp.flags.c_contiguous
    for o in operands:
        if not simple:
            break
        if isinstance(o, np.ndarray):
            if o.shape != shape or not o.flags.c_contiguous or np.may_share_memory(o, tmp):
                simple = False
            flat.append(o.reshape(-1))
        else:
            flat.append(None)           # a number: passed as it is
    if not simple:
        wide = np.empty(shape, np.float64)
        exact(wide, *operands)
        a[...] = wide
        return a
    flat_a = a.reshape(-1)
    k = n // 2
    wide = tmp.reshape(-1)[:2 * k].view(np.float64)
    for start in range(0, n, k):
        stop = min(start + k, n)
        chunk = wide[:stop - start]
        exact(chunk, *[o if f is None else f[start:stop] for o, f in zip(operands, flat)])
        flat_a[start:stop] = chunk                   # (the one rounding, to float32)
    return a


def _fma(out, x, y, base):
    """out = x * y + base in float64 (x * y exact for float32 x and y)."""
    np.multiply(x, y, out=out)
    return np.add(out, base, out=out)


def add_(xp, a, b, alpha, tmp):
    """a += alpha * b, rounding alpha * b first. PyTorch's CPU kernel rounds once (a fused
    multiply-add), so about half the results differ from it in the last bit; emulating that
    through float64 (as lerp_ and addcmul_ do) made every SGD step cost 3-4x more here, and the
    training-step benchmark missed its target."""
    if alpha == 1:
        return xp.add(a, b, out=a)
    return xp.add(a, xp.multiply(b, alpha, out=tmp), out=a)


def _lerp_exact(out, a, end, weight):
    # the difference end - a is rounded to float32 first, as in PyTorch's kernel
    np.subtract(end, a, out=out, dtype=np.float32)
    if abs(weight) < 0.5:
        return _fma(out, out, weight, a)
    return _fma(out, out, np.float32(weight) - np.float32(1), end)


def lerp_(xp, a, end, weight, tmp):
    """a = a + weight * (end - a) (for |weight| >= 0.5: end - (end - a) * (1 - weight)),
    as PyTorch's lerp kernel (weight in a's dtype)."""
    if _fused(xp, a):
        return _round_once_(a, tmp, _lerp_exact, a, end, np.float64(np.float32(weight)))
    diff = xp.subtract(end, a, out=tmp)
    if abs(weight) < 0.5:
        return xp.add(a, xp.multiply(diff, weight, out=diff), out=a)
    return xp.subtract(end, xp.multiply(diff, 1 - weight, out=diff), out=a)


def _addcmul_exact(out, a, t1, t2, value):
    np.multiply(t1, value, out=out, dtype=np.float32)     # value * t1, rounded to float32
    return _fma(out, out, t2, a)


def addcmul_(xp, a, t1, t2, value, tmp, fma=True):
    """a += value * t1 * t2, as PyTorch's addcmul kernel (value * t1 rounded first).
    fma=False rounds the product and the sum each (no float64 emulation of the fused
    multiply-add: for an update where the emulation costs more than it is worth)."""
    if fma and _fused(xp, a):
        return _round_once_(a, tmp, _addcmul_exact, a, t1, t2, np.float32(value))
    return xp.add(a, xp.multiply(xp.multiply(t1, value, out=tmp), t2, out=tmp), out=a)


def addcdiv_(xp, a, t1, t2, value, tmp):
    """a += value * t1 / t2 (each operation rounded: PyTorch's kernel fuses nothing here)."""
    return xp.add(a, xp.divide(xp.multiply(t1, value, out=tmp), t2, out=tmp), out=a)


def scaled(xp, b, alpha, tmp):
    """alpha * b (into tmp; b itself for alpha 1): the change that add_(a, b, alpha) adds."""
    return b if alpha == 1 else xp.multiply(b, alpha, out=tmp)


def quotient(xp, t1, t2, value, tmp):
    """value * t1 / t2 (into tmp): the change that addcdiv_(a, t1, t2, value) adds."""
    return xp.divide(xp.multiply(t1, value, out=tmp), t2, out=tmp)


def flat_grad(ws, flat, group, weight_decay):
    """The batched update's gradient: flat.grad negated when maximizing, plus weight_decay *
    the parameters (L2; gathered only then), as prepared_grad."""
    param = flat.gather_params() if weight_decay != 0 else None
    return prepared_grad(np, ws, flat.grad, param, group["maximize"], weight_decay)


def prepared_grad(xp, ws, grad, param, maximize, weight_decay):
    """The gradient an update uses: negated when maximizing, plus weight_decay * param (L2).
    Written into the "grad" scratch array; the parameter's .grad is never changed."""
    g = grad
    if maximize:
        g = xp.negative(grad, out=ws.get(xp, grad, "grad"))
    if weight_decay != 0:
        g = grad_add(xp, ws, g, param, weight_decay)
    return g


def grad_add(xp, ws, g, other, alpha):
    """PyTorch's out-of-place g.add(other, alpha=alpha), with add_'s rounding, written into
    the "grad" scratch array (g may already be it); the parameter's .grad is never changed."""
    out = ws.get(xp, g, "grad")
    if g is not out:
        xp.copyto(out, g)
    return add_(xp, out, other, alpha, ws.get(xp, g, "tmp"))


def params_with_grad(group):
    """(param, xp, param array, grad array) for each parameter of the group that has a grad."""
    for p in group["params"]:
        grad = p._grad
        if grad is not None:
            yield p, xp_of(p._device), real(p._data), real(grad._data)


def decayed_grad(xp, ws, param, grad, group, lr):
    """The gradient after weight decay: decoupled (AdamW-style: the parameter shrinks first)
    or L2 (added to the gradient), as the group's `decoupled_weight_decay` says."""
    weight_decay, decoupled = group["weight_decay"], group["decoupled_weight_decay"]
    if weight_decay != 0 and decoupled:
        xp.multiply(param, 1 - lr * weight_decay, out=param)
    return prepared_grad(xp, ws, grad, param, group["maximize"],
                         0 if decoupled else weight_decay)


def adam_moments(xp, state, g, beta1, beta2, tmp):
    """Adam's running moments, updated in place and returned (as arrays):
    exp_avg <- lerp(exp_avg, g, 1 - beta1); exp_avg_sq <- beta2 exp_avg_sq + (1 - beta2) g^2."""
    exp_avg, exp_avg_sq = real(state["exp_avg"]._data), real(state["exp_avg_sq"]._data)
    lerp_(xp, exp_avg, g, 1 - beta1, tmp)
    xp.multiply(exp_avg_sq, beta2, out=exp_avg_sq)
    addcmul_(xp, exp_avg_sq, g, g, 1 - beta2, tmp)
    return exp_avg, exp_avg_sq
