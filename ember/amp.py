"""Automatic mixed precision: the autocast state and GradScaler.

`ember.autocast("cpu")` (also `ember.amp.autocast`) is a context manager and decorator that
records, per device type and per thread, whether autocast is on and its dtype, exactly as
torch does (`ember.is_autocast_enabled("cpu")`, `ember.get_autocast_dtype("cpu")`), including
torch's warnings when it disables itself.

The op registry (ember/ops/registry.py) consults this state: inside an enabled region, the ops
named in LOWER_PRECISION_OPS get their inputs through `cast_inputs`, which casts as torch does
(float32/float16 tensors to the autocast dtype through `.to`, so the graph shows
ToCopyBackward0, with one cached cast per leaf that requires grad).

`GradScaler` implements torch's dynamic loss scaling (scale, unscale_, step, update and its
state_dict); disabled, as torch's CUDA scaler is on a machine without CUDA, it is a no-op:
scale() returns the loss unchanged and step() just calls optimizer.step().
"""
import functools
import threading
import warnings

from . import _dtype as D, cuda
from ._device import device as _device
from .ops import hooks as _hooks
from ._tensor import Tensor
from .autograd.grad_mode import no_grad
from .ops.creation import tensor
from .ops.pointwise import isfinite

__all__ = ["autocast", "GradScaler", "is_autocast_available", "cast_inputs", "custom_fwd",
           "custom_bwd"]

_DEFAULT_DTYPE = {"cpu": D.bfloat16, "cuda": D.float16}
_SUPPORTED = {"cpu": (D.bfloat16, D.float16), "cuda": (D.float16, D.bfloat16)}


# the ops torch runs in the lower-precision autocast dtype (the ones ember has, by op name)
LOWER_PRECISION_OPS = frozenset({"mm", "bmm", "addmm", "baddbmm", "addbmm", "matmul", "linear",
                                 "convolution", "prelu"})


class _State(threading.local):
    def __init__(self):
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = dict(_DEFAULT_DTYPE)
        self.depth = 0              # nesting of enabled autocast regions
        self.cast_cache = {}        # id(leaf) -> (leaf, its cast), while depth > 0

    @property
    def any_enabled(self):
        return self.enabled["cpu"] or self.enabled["cuda"]


_state = _State()
# autocast regions open in any thread: the op registry's one cheap check before it looks at
# this thread's state (amp's hook in the registry, filled in at the end of this module)
_regions = _hooks.autocast_regions


def is_autocast_available(device_type):
    return device_type in _DEFAULT_DTYPE


def is_autocast_enabled(device_type=None):
    """Is autocast on for `device_type` (no argument: CUDA, as in torch)?"""
    return _state.enabled[device_type or "cuda"]


def get_autocast_dtype(device_type):
    return _state.dtype[device_type]


def set_autocast_enabled(device_type, enabled):
    _state.enabled[device_type] = bool(enabled)


def set_autocast_dtype(device_type, dtype):
    _state.dtype[device_type] = dtype


class autocast:
    """Run a region (or a decorated function) under autocast for one device type."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = _device(device_type).type       # torch's error for unknown devices
        self.fast_dtype = _DEFAULT_DTYPE[self.device] if dtype is None else dtype
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled
        if self._enabled and self.device == "cpu" and self.fast_dtype not in _SUPPORTED["cpu"]:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                          "torch.float16 currently.")
            self._enabled = False
        if self._enabled and self.device == "cuda":
            if not cuda.is_available():
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.")
                self._enabled = False
        self._saved = []            # the states replaced by each (possibly nested) __enter__

    def __enter__(self):
        d = self.device
        self._saved.append((_state.enabled[d], _state.dtype[d]))
        _state.enabled[d] = self._enabled
        _state.dtype[d] = self.fast_dtype
        _state.depth += 1
        _regions[0] += 1
        return self

    def __exit__(self, *exc):
        _state.enabled[self.device], _state.dtype[self.device] = self._saved.pop()
        _state.depth -= 1
        _regions[0] -= 1
        if _state.depth == 0:           # leaving the outermost region drops the cached casts
            _state.cast_cache.clear()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run_under_autocast(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return run_under_autocast


def cast_inputs(inputs):
    """The inputs of a lower-precision op under autocast, cast as torch casts them.

    Floating tensors (other than float64) on a device type whose autocast is on are cast to
    that device type's autocast dtype; the cast of a leaf that requires grad is made once per
    autocast region and reused (so a weight used twice gets one ToCopyBackward0 node, as in
    torch).
    """
    enabled, dtypes = _state.enabled, _state.dtype
    out = []
    for x in inputs:
        if isinstance(x, Tensor) and enabled[x._device.type] and x._dtype.is_floating_point \
                and x._dtype is not D.float64 and x._dtype is not dtypes[x._device.type]:
            dtype = dtypes[x._device.type]
            cacheable = x._requires_grad and x._grad_fn is None
            hit = _state.cast_cache.get(id(x)) if cacheable else None
            if hit is not None and hit[0] is x:
                x = hit[1]
            else:
                cast = x.to(dtype)
                if cacheable:
                    _state.cast_cache[id(x)] = (x, cast)
                x = cast
        out.append(x)
    return type(inputs)(out) if isinstance(inputs, tuple) else out


_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"


class GradScaler:
    """Dynamic loss scaling for mixed-precision training (torch.amp.GradScaler)."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = str(device)
        if enabled and _device(self._device).type == "cuda":
            if not cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not "
                              "available.  Disabling.")
                enabled = False
        self._enabled = enabled
        if enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer = {}        # id(optimizer) -> {"stage": ..., "found_inf": bool}

    def is_enabled(self):
        return self._enabled

    def get_scale(self):
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def get_growth_interval(self):
        return self._growth_interval

    def scale(self, outputs):
        """Multiply a loss (or a nested list/tuple of them) by the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * tensor(self._scale, dtype=D.float32, device=outputs.device)

    def _optimizer_state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer),
                                              {"stage": _READY, "found_inf": False})

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale, in place; note any inf/NaN."""
        if not self._enabled:
            return
        state = self._optimizer_state(optimizer)
        if state["stage"] is _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = 1.0 / self._scale
        finite = {}         # device -> "all gradients there are finite", read once at the end
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    ok = isfinite(g).all()
                    seen = finite.get(g._device)
                    finite[g._device] = ok if seen is None else seen & ok
                    g.mul_(inv_scale)
        state["found_inf"] = not all(bool(ok) for ok in finite.values())
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(), skipped when the gradients held inf/NaN; returns its result."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        state = self._optimizer_state(optimizer)
        if state["stage"] is _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None):
        """Grow the scale after `growth_interval` clean steps; back off after an inf/NaN."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        else:
            if not self._per_optimizer:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(s["found_inf"] for s in self._per_optimizer.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer = {}

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


# ---- custom autograd Functions under autocast --------------------------------------------------

def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def _cast_for_forward(value, device_type, dtype):
    """Floating tensors on `device_type` (not float64) cast to `dtype`, through containers."""
    if isinstance(value, Tensor):
        if value.is_floating_point() and value.dtype is not D.float64 \
                and value.device.type == device_type:
            return value.to(dtype)
        return value
    if isinstance(value, dict):
        return {k: _cast_for_forward(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_for_forward(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate a custom Function's forward for autocast. Without `cast_inputs` the forward runs
    in the caller's autocast state, which is recorded on ctx for the backward; with it, inside
    an enabled region the floating inputs are cast to `cast_inputs` and the forward runs with
    autocast off (and so does its backward)."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        enabled = is_autocast_enabled(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = enabled
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not enabled:
            return fwd(*args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(*_cast_for_forward(args, device_type, cast_inputs),
                       **_cast_for_forward(kwargs, device_type, cast_inputs))
    return forward


def custom_bwd(bwd=None, *, device_type):
    """Decorate a custom Function's backward so it runs in the autocast state its forward ran
    in (as recorded by custom_fwd)."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return backward


# the registry casts the inputs of LOWER_PRECISION_OPS inside autocast regions
_hooks.register_autocast(LOWER_PRECISION_OPS, cast_inputs)
