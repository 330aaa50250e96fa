"""Module: the base class of every layer.

A Module keeps its learnable Parameters, its buffers (state that is saved but not learned,
like BatchNorm's running mean) and its child Modules in three ordered dicts, filled by plain
attribute assignment. Everything else (parameters(), state_dict(), to(), repr) walks that tree.
"""
import functools
import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..._tensor import Tensor
from ... import _dtype as D
from ...ops.creation import empty_like
from ...autograd import grad_mode
from ..parameter import Parameter, Buffer
from ..._device import as_device
from ...autograd.function import Function
from ..._shared_memory import share_storages


class RemovableHandle:
    """Returned by the register_*hook methods; `remove()` unregisters the hook."""
    _ids = itertools.count()

    def __init__(self, *hooks_dicts):
        self.id = next(RemovableHandle._ids)
        self._dicts = hooks_dicts

    def remove(self):
        for d in self._dicts:
            if isinstance(d, set):
                d.discard(self.id)
            else:
                d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _type_name(value):
    """How torch's error messages name a value's type ('ember.FloatTensor', 'int')."""
    if isinstance(value, Tensor):
        return "ember." + value.type().split(".", 1)[1]
    cls = type(value)
    if cls.__module__ in ("", "builtins"):
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _addindent(text, spaces):
    """Indent every line of a multi-line string but the first."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    pad = " " * spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])


def _forward_unimplemented(self, *input):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                              f'"forward" function')


class Module:
    training: bool
    _version = 1
    dump_patches = False
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", set())
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", set())
        setattr_(self, "_forward_hooks_always_called", set())
        setattr_(self, "_backward_hooks", OrderedDict())
        setattr_(self, "_backward_pre_hooks", OrderedDict())
        # True once register_full_backward_hook was used, False after the old
        # register_backward_hook: a module cannot hold both kinds
        setattr_(self, "_is_full_backward_hook", None)
        for store in _STATE_DICT_HOOK_STORES:
            setattr_(self, store, OrderedDict())

    forward = _forward_unimplemented

    # ------------------------------------------------------------------ registration
    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                            f"(ember.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             f"function of another Tensor, compute the value in the forward() "
                             f"method.")
        self._parameters[name] = _registered(_global_parameter_registration_hooks, self, name,
                                             param)

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            f"(ember Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
            tensor = tensor.detach()          # stored as a plain tensor, as torch does
        self._buffers[name] = _registered(_global_buffer_registration_hooks, self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = _registered(_global_module_registration_hooks, self, name, module)

    register_module = add_module

    # ------------------------------------------------------------------ attributes
    def __getattr__(self, name):
        d = self.__dict__
        params = d.get("_parameters")          # (a layer's weight: the common case, first)
        if params is not None and name in params:
            return params[name]
        for store in ("_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(name, d, self._buffers, self._modules,
                         self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                f"(ember.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(name, d, self._parameters, self._buffers,
                         self._non_persistent_buffers_set)
            modules[name] = _registered(_global_module_registration_hooks, self, name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                f"(ember.nn.Module or None expected)")
            modules[name] = _registered(_global_module_registration_hooks, self, name, value)
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                f"(ember.nn.Buffer, ember.Tensor or None expected)")
            if isinstance(value, Buffer):
                self.register_buffer(name, value, value.persistent)
            else:
                buffers[name] = _registered(_global_buffer_registration_hooks, self, name, value)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, ()):
                del self.__dict__[store][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + \
            list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_is_full_backward_hook", None)
        for store in _STATE_DICT_HOOK_STORES:      # (modules pickled before these existed)
            self.__dict__.setdefault(store, OrderedDict())

    # ------------------------------------------------------------------ iteration
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (module_prefix + ("." if module_prefix else "") + name), value

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from m.named_modules(memo, sub, remove_duplicate)

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Replace (or, unless strict, add) the submodule at the dotted path `target`."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        exists = hasattr(parent, name)
        if strict and not exists:
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if exists and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def _get_member(self, target, store, kind):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        value = getattr(mod, name)
        if name not in getattr(mod, store):
            raise AttributeError(f"`{name}` is not {kind}")
        return value

    def get_parameter(self, target):
        return self._get_member(target, "_parameters", "an nn.Parameter")

    def get_buffer(self, target):
        return self._get_member(target, "_buffers", "a buffer")

    # ------------------------------------------------------------------ modes and grads
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p._grad is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                g = p._grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ devices and dtypes
    def _apply(self, fn, recurse=True):
        """Replace every parameter's and buffer's data by fn(data); Parameters stay the same
        objects (their .data is swapped), so optimizers holding them keep working."""
        if recurse:
            for m in self.children():
                m._apply(fn)
        for p in self._parameters.values():
            if p is None:
                continue
            with grad_mode.no_grad():
                new = fn(p)
            p.data = new
            if p._grad is not None:
                with grad_mode.no_grad():
                    p._grad = fn(p._grad)
        for name, b in self._buffers.items():
            if b is not None:
                self._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs):
        device, dtype, memory_format = _parse_to(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")
        if dtype is not None and dtype.is_complex:
            warnings.warn("Complex modules are a new feature under active development whose "
                          "design may change, and some modules might not work as expected when "
                          "using complex tensors as parameters or buffers. Please file an issue "
                          "at https://github.com/pytorch/pytorch/issues/new?template=bug-report."
                          "yml if a complex module does not work as expected.", stacklevel=2)

        def convert(t):
            # (a memory format applies to the 4-d and 5-d tensors only, as in torch)
            layout = {"memory_format": memory_format} if memory_format is not None and \
                t.dim() in (4, 5) else {}
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                return t.to(device=device, dtype=dtype, **layout)
            return t.to(device=device, **layout) if device is not None or layout else t
        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Swap every parameter and buffer for an uninitialised one of its shape and dtype on
        `device` (to materialise a module built on the meta device)."""
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def _cast_floats(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast_floats(D.float32)

    def double(self):
        return self._cast_floats(D.float64)

    def half(self):
        return self._cast_floats(D.float16)

    def bfloat16(self):
        return self._cast_floats(D.bfloat16)

    def share_memory(self):
        """Move every parameter, gradient and buffer into shared memory (all in one move)."""
        tensors = [t for t in itertools.chain(self.parameters(), self.buffers()) if t is not None]
        share_storages(tensors + [p._grad for p in tensors if p._grad is not None])
        return self

    # ------------------------------------------------------------------ state dict
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.", FutureWarning,
                          stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is None:
                continue
            # a private hook may hand back a new destination; a public post-hook may not
            if getattr(hook, "_from_public_api", False):
                raise RuntimeError("state_dict post-hook must return None")
            destination = result
        return destination

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) before the module's state_dict() is made."""
        return self._add_hook(self._state_dict_pre_hooks, hook, False)

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) after it; changes in place."""
        hook._from_public_api = True
        return self._add_hook(self._state_dict_hooks, hook, False)

    def _register_state_dict_hook(self, hook):
        """The private form of the post-hook: it may return a new state_dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        return self._add_hook(self._state_dict_hooks, hook, False)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs) before this module loads its part (with the module first if
        with_module)."""
        return self._add_hook(self._load_state_dict_pre_hooks,
                              _WrappedHook(hook, self if with_module else None), False)

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) before the module loads its part of a state_dict."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) after the module and its children loaded; it may
        change the key lists in place."""
        return self._add_hook(self._load_state_dict_post_hooks, hook, False)

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called.")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items()
                              if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent_buffers.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f'ember.Tensor or Tensor-like object from checkpoint but '
                                  f'received {type(value)}')
                continue
            # old checkpoints saved some 0-dim state as 1-element vectors
            if param.dim() == 0 and value.dim() == 1:
                value = value[0]
            if value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            try:
                with grad_mode.no_grad():
                    if assign:
                        # assign=True keeps the checkpoint's tensor (and its dtype) as the
                        # state; a parameter stays a Parameter with the model's requires_grad
                        if isinstance(param, Parameter):
                            if isinstance(value, Parameter):
                                value.requires_grad_(param.requires_grad)
                            else:
                                value = Parameter(value, requires_grad=param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions '
                                  f'in the model are {param.size()} and whose dimensions in the '
                                  f'checkpoint are {value.size()}, an exception occurred : '
                                  f'{ex.args}.')
        extra_key = prefix + "_extra_state"
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                head, dot, _ = key[len(prefix):].partition(".")
                # a dotted name must lead into a child module; a plain one must be local state
                if (dot and head not in self._modules) or (not dot and head not in local_state):
                    unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        # pre-hooks may edit the dict they get: the caller's is copied, and each child gets
        # a copy of its own keys
        state_dict = OrderedDict(state_dict)

        def load(module, local_state_dict, prefix):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True,
                                         missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items()
                                 if k.startswith(child_prefix)}, child_prefix)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace.")

        load(self, state_dict, "")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------ hooks
    def _add_hook(self, store, hook, prepend, flag_sets=()):
        handle = RemovableHandle(store, *flag_sets)
        store[handle.id] = hook
        if prepend:
            store.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        handle = self._add_hook(self._forward_pre_hooks, hook, prepend,
                                (self._forward_pre_hooks_with_kwargs,))
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        handle = self._add_hook(self._forward_hooks, hook, prepend,
                                (self._forward_hooks_with_kwargs,
                                 self._forward_hooks_always_called))
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """The deprecated backward hook: hook(module, grad_input, grad_output) runs as a hook
        of the autograd node that made the module's (first) output, so grad_input are that
        node's input gradients, which are the module's only when forward is a single op."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        return self._add_hook(self._backward_hooks, hook, False)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def _get_backward_hooks(self):
        """(full backward hooks, old-style backward hooks): the global ones first."""
        full, old = [], []
        for is_full, hooks in ((_global_is_full_backward_hook, _global_backward_hooks),
                               (self._is_full_backward_hook, self._backward_hooks)):
            if is_full is not None:
                (full if is_full else old).extend(hooks.values())
        return full, old

    # ------------------------------------------------------------------ calling
    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_forward_pre_hooks
                or _global_forward_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    _call_impl = __call__

    def _call_with_hooks(self, args, kwargs):
        result = None
        always_called = set()       # always_call hooks that already ran before an error
        try:
            full_hooks, old_hooks = self._get_backward_hooks()
            pre_hooks = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
            # the global hooks run first (global forward pre-hooks never get kwargs)
            for hook_id, hook in (*_global_forward_pre_hooks.items(),
                                  *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    out = hook(self, args, kwargs)
                    if out is not None:
                        if not (isinstance(out, tuple) and len(out) == 2):
                            raise RuntimeError(f"forward pre-hook must return None or a tuple "
                                               f"of (new_args, new_kwargs), but got {out}.")
                        args, kwargs = out
                else:
                    out = hook(self, args)
                    if out is not None:
                        args = out if isinstance(out, tuple) else (out,)
            backward_hook = None
            if full_hooks or pre_hooks:
                backward_hook = _BackwardHook(self, full_hooks, pre_hooks)
                args = backward_hook.wrap_inputs(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called or \
                        hook_id in _global_forward_hooks_always_called:
                    always_called.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs or \
                        hook_id in _global_forward_hooks_with_kwargs:
                    out = hook(self, args, kwargs, result)
                else:
                    out = hook(self, args, result)
                if out is not None:
                    result = out
            if backward_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn(f"For backward hooks to be called, module output should be a "
                                  f"Tensor or a tuple of Tensors but received {type(result)}",
                                  stacklevel=2)
                result = backward_hook.wrap_outputs(result)
            if old_hooks:
                self._attach_old_backward_hooks(old_hooks, args, result)
            return result
        except Exception:
            # hooks registered with always_call=True run even when the call fails (unless they
            # ran already); an error of theirs then only warns
            for hook_id, hook in list(_global_forward_hooks.items()):
                if hook_id in _global_forward_hooks_always_called and \
                        hook_id not in always_called:
                    try:
                        out = hook(self, args, result)
                        if out is not None:
                            result = out
                    except Exception as hook_error:
                        warnings.warn(f"global module forward hook with ``always_call=True`` "
                                      f"raised an exception that was silenced as another "
                                      f"error was raised in forward: {hook_error}",
                                      stacklevel=2)
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called and \
                        hook_id not in always_called:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            out = hook(self, args, kwargs, result)
                        else:
                            out = hook(self, args, result)
                        if out is not None:
                            result = out
                    except Exception as hook_error:
                        warnings.warn(f"module forward hook with ``always_call=True`` raised an "
                                      f"exception that was silenced as another error was "
                                      f"raised in forward: {hook_error}", stacklevel=2)
            raise

    def _attach_old_backward_hooks(self, hooks, args, result):
        """Hang old-style backward hooks on the node that made the first output tensor, and
        warn where that node cannot give the module's true gradients."""
        first = result
        while not isinstance(first, Tensor):
            first = next(v for v in first.values() if isinstance(v, Tensor)) \
                if isinstance(first, dict) else first[0]
        grad_fn = first.grad_fn
        if grad_fn is None:
            return
        for hook in hooks:
            grad_fn.register_hook(_WrappedHook(hook, self))
        _warn_old_backward_hook(args, result, grad_fn)

    # ------------------------------------------------------------------ printing
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _addindent(repr(m), 2)
                       for name, m in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


_STATE_DICT_HOOK_STORES = ("_state_dict_hooks", "_state_dict_pre_hooks",
                           "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")


class _WrappedHook:
    """A load_state_dict pre-hook, called with its module first when registered with one
    (held weakly, so the hook does not keep the module alive)."""

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if not self.with_module:
            return self.hook(*args, **kwargs)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args, **kwargs)


def _check_name(name, kind):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')


def _remove_from(name, d, *stores):
    """Forget `name` as any other kind of member before it is registered as a new kind."""
    for store in stores:
        if isinstance(store, set):
            store.discard(name)
        elif name in store:
            del store[name]
    d.pop(name, None)


def _parse_to(args, kwargs):
    """Module.to(device), .to(dtype), .to(device, dtype), .to(tensor) and keyword forms."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got "
                        f"{tuple(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, bool):
            pass                                   # non_blocking
        elif a is not None:
            device = a
    return (as_device(device) if device is not None else None), dtype, memory_format


# ---------------------------------------------------------------------- global hooks
# Hooks that run for every module's call, before the module's own ones. torch keeps them
# here, in nn.modules.module, as module-level state (a debugging/profiling facility).
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = set()
_global_forward_hooks_always_called = set()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_is_full_backward_hook = None     # as Module._is_full_backward_hook, for the globals


def _add_global_hook(store, hook, *flag_sets):
    handle = RemovableHandle(store, *flag_sets)
    store[handle.id] = hook
    return handle


# hooks run whenever any module registers a parameter, buffer or submodule: hook(module, name,
# value) may return a replacement for the value
_global_parameter_registration_hooks = OrderedDict()
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()


def _registered(hooks, module, name, value):
    for hook in list(hooks.values()):
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def register_module_parameter_registration_hook(hook):
    return _add_global_hook(_global_parameter_registration_hooks, hook)


def register_module_buffer_registration_hook(hook):
    return _add_global_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    return _add_global_hook(_global_module_registration_hooks, hook)


def register_module_forward_pre_hook(hook):
    """hook(module, args) before every module's forward; may return new args."""
    return _add_global_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """hook(module, args, output) (or (module, args, kwargs, output)) after every forward."""
    handle = _add_global_hook(_global_forward_hooks, hook, _global_forward_hooks_with_kwargs,
                              _global_forward_hooks_always_called)
    if with_kwargs:
        _global_forward_hooks_with_kwargs.add(handle.id)
    if always_call:
        _global_forward_hooks_always_called.add(handle.id)
    return handle


def _set_global_backward_kind(full):
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as "
                           "a global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = full


def register_module_backward_hook(hook):
    """The deprecated global form of Module.register_backward_hook."""
    _set_global_backward_kind(False)
    return _add_global_hook(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook):
    """hook(module, grad_output) for every module, before its own backward pre-hooks."""
    return _add_global_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """hook(module, grad_input, grad_output) for every module, before its own."""
    _set_global_backward_kind(True)
    return _add_global_hook(_global_backward_hooks, hook)


# ---------------------------------------------------------------------- old backward hooks
def _warn_old_backward_hook(inputs, result, grad_fn):
    """The FutureWarning torch gives when an old-style hook on `grad_fn` misses gradients."""
    def warn(text):
        warnings.warn("Using " + text, FutureWarning, stacklevel=4)
    outputs = (result,) if isinstance(result, Tensor) else result
    if not (isinstance(outputs, tuple) and all(isinstance(r, Tensor) for r in outputs)):
        return warn("non-full backward hooks on a Module that does not return a single Tensor "
                    "or a tuple of Tensors is deprecated and will be removed in future "
                    "versions. This hook will be missing some of the grad_output. Please use "
                    "register_full_backward_hook to get the documented behavior.")
    if not all(isinstance(i, Tensor) for i in inputs):
        return warn("non-full backward hooks on a Module that does not take as input a single "
                    "Tensor or a tuple of Tensors is deprecated and will be removed in future "
                    "versions. This hook will be missing some of the grad_input. Please use "
                    "register_full_backward_hook to get the documented behavior.")
    out_nodes = {r.grad_fn for r in outputs if r.grad_fn is not None}
    if not out_nodes or (len(out_nodes) == 1 and grad_fn not in out_nodes):
        warn("a non-full backward hook when outputs are nested in python data structure is "
             "deprecated and will be removed in future versions. This hook will be missing "
             "some grad_output.")
    elif len(out_nodes) > 1:
        warn("a non-full backward hook when outputs are generated by different autograd Nodes "
             "is deprecated and will be removed in future versions. This hook will be missing "
             "some grad_output. Please use register_full_backward_hook to get the documented "
             "behavior.")
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != \
            {node for node, _ in grad_fn.next_functions}:
        # the node's inputs are not the module's: forward was more than one op (or its
        # inputs are leaves, whose AccumulateGrad nodes are not their grad_fn)
        warn("a non-full backward hook when the forward contains multiple autograd Nodes is "
             "deprecated and will be removed in future versions. This hook will be missing "
             "some grad_input. Please use register_full_backward_hook to get the documented "
             "behavior.")


# ---------------------------------------------------------------------- full backward hooks
class _BackwardHook:
    """Runs a module's full backward (pre-)hooks around one call.

    The module's input and output tensors (when one of them requires grad) pass through an
    identity autograd Function. The outputs' identity node sees the gradients w.r.t. the outputs
    (running the pre-hooks, which may replace them); the inputs' node then sees the gradients
    w.r.t. the inputs and runs the hooks, which may replace those in turn. The hooks see one
    entry per positional argument / output, None where it is no tensor.
    """

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = 0
        # positions of the wrapped values; None when nothing was wrapped
        self.input_index = self.output_index = None

    def wrap_inputs(self, args):
        self.n_inputs = len(args)
        args, self.input_index = self._wrap(args, "inputs")
        return args

    def wrap_outputs(self, result):
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        self.n_outputs = len(outs)
        outs, self.output_index = self._wrap(outs, "outputs")
        return outs[0] if single else outs

    def _wrap(self, values, where):
        index = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        if not (grad_mode.state.enabled and any(values[i]._requires_grad for i in index)):
            return values, None
        wrapped = BackwardHookFunction.apply(self, where, *[values[i] for i in index])
        if not isinstance(wrapped, tuple):
            wrapped = (wrapped,)
        values = list(values)
        for i, w in zip(index, wrapped):
            values[i] = w
        return tuple(values), index

    @staticmethod
    def _spread(grads, index, n):
        full = [None] * n
        for i, g in zip(index, grads):
            full[i] = g
        return tuple(full)

    def on_grad_outputs(self, grads):
        self.grad_outputs = self._spread(grads, self.output_index, self.n_outputs)
        for hook in self.pre_hooks:
            out = hook(self.module, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(out)}, but expected "
                                   f"{len(self.grad_outputs)}")
            self.grad_outputs = out
        grad_outputs = self.grad_outputs
        if self.input_index is None:
            # no input needs a gradient: the hooks run now, with None for every input
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients. See "
                          "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=5)
            for hook in self.hooks:
                out = hook(self.module, (None,) * self.n_inputs, grad_outputs)
                if out is not None and not (isinstance(out, tuple) and
                                            all(g is None for g in out)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(grad_outputs[i] for i in self.output_index)

    def on_grad_inputs(self, grads):
        if self.grad_outputs is None:
            # the gradient reached the inputs without passing through the outputs (as in a
            # double backward): nothing to report
            return grads
        full = self._spread(grads, self.input_index, self.n_inputs)
        for hook in self.hooks:
            out = hook(self.module, full, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(full):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(full)}")
            full = out
        self.grad_outputs = None
        return tuple(full[i] for i in self.input_index)

def _make_backward_hook_function():

    class BackwardHookFunction(Function):
        """Identity on tensors whose backward calls a module's full backward hooks."""

        @staticmethod
        def forward(ctx, hook, where, *tensors):
            ctx.hook, ctx.where = hook, where
            # every tensor passes, those needing no gradient stay so (the hooks see zeros for
            # such inputs); the outputs' hooks see None where no gradient came
            ctx.mark_non_differentiable(*[t for t in tensors if not t._requires_grad])
            ctx.set_materialize_grads(where == "inputs")
            return tensors if len(tensors) != 1 else tensors[0]

        @staticmethod
        def backward(ctx, *grads):
            if ctx.where == "outputs":
                grads = ctx.hook.on_grad_outputs(grads)
            else:
                grads = ctx.hook.on_grad_inputs(grads)
            return (None, None) + tuple(grads)
    return BackwardHookFunction


BackwardHookFunction = _make_backward_hook_function()
