"""The Tensor: an array on a device, plus what autograd needs to know about it.

Ops are not defined here: `ember/ops/` declares them once and `ember/ops/tensor_methods.py`
binds them as methods and operators. This file holds the data model: storage and views, the autograd
fields, conversions, and the few methods that are about the tensor itself.
"""
import warnings
import numbers
import re
import weakref

import numpy as np

from . import _backend, _dtype as D
from ._device import CPU, as_device
from . import autograd
from .autograd.graph import AccumulateGrad, SavedTensor, VersionCounter, add_hook
import copy
from ._printing import tensor_repr, legacy_type_name, scalar_type_name
from ._storage import UntypedStorage
from ._layout import strided, sparse_coo
from .autograd.grad_mode import no_grad


_new_object = object.__new__


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as ember.Size([...])."""
    __slots__ = ()

    def __new__(cls, sizes=()):
        if sizes.__class__ is tuple and all(s.__class__ is int for s in sizes):
            return tuple.__new__(cls, sizes)  # (a NumPy shape: the common case)
        sizes = tuple(sizes)
        for i, s in enumerate(sizes):
            if not hasattr(s, "__index__"):
                raise TypeError(f"ember.Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(s).__name__}')")
        return tuple.__new__(cls, (s.__index__() for s in sizes))

    def __repr__(self):
        return f"ember.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other):
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        return Size(tuple.__add__(tuple(other), self))

    def __mul__(self, times):
        return Size(tuple.__mul__(self, times))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))


# the memory order of each channels-last format, outermost dim first
_CHANNELS_LAST_ORDER = {"torch.channels_last": (0, 2, 3, 1),
                        "torch.channels_last_3d": (0, 2, 3, 4, 1)}


def _size_of(shape):
    # an array's shape (a tuple of Python ints) as a Size, without Size()'s element checks
    return tuple.__new__(Size, shape)


class Tensor:
    # NumPy defers to the tensor's reflected operators (np.float64(2) * t is a Tensor)
    __array_priority__ = 1000

    __slots__ = (
        "_data",           # the array (a view of the base's array for a view)
        "_dtype", "_device",
        "_base",           # the tensor whose memory a view shares, else None
        "_vc",             # VersionCounter shared with the base and all views (_version_counter)
        "_requires_grad",  # leaf flag, or True for an output recorded in the graph
        "_grad_fn", "_output_nr",
        "_grad",
        "_fn_version",     # a view's version when its grad_fn was set (stale -> regenerate)
        "_extra",          # rarely used state: hooks, retains_grad, the grad accumulator
        "__dict__", "__weakref__",
    )

    # ------------------------------------------------------------------ construction
    def __new__(cls, *args, device=None, dtype=None):
        from .ops.creation import legacy_tensor  # (cycle: ops.creation imports this module)
        return legacy_tensor(cls, args, device=device, dtype=dtype)

    def __init__(self, *args, **kwargs):
        pass

    @classmethod
    def _make(cls, data, dtype=None, device=CPU, requires_grad=False):
        """Wrap an array without copying (the one internal constructor)."""
        t = _new_object(cls)
        t._data = data
        t._dtype = dtype if dtype is not None else D.from_numpy_dtype(data.dtype)
        t._device = device
        t._base = None
        t._vc = None
        t._requires_grad = requires_grad
        t._grad_fn = None
        t._output_nr = 0
        t._grad = None
        t._fn_version = 0
        # made in inference mode: an inference tensor (the one test this constructor makes)
        t._extra = _inference_extra() if _inference_used[0] and _grad_state.inference else None
        return t

    @property
    def _version_counter(self):
        """The VersionCounter, made on first use: most tensors are never saved for backward
        nor written in place, and so never need one. Views share their base's."""
        vc = self._vc
        if vc is None:
            vc = self._vc = VersionCounter()
        return vc

    @_version_counter.setter
    def _version_counter(self, counter):
        self._vc = counter

    @property
    def volatile(self):
        """Pre-0.4 Variable flag: always False now (torch.no_grad replaced it); warns as torch."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value):
        warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                      "instead.", stacklevel=2)

    @property
    def _version(self):
        """How many in-place writes this tensor's memory has had (PyTorch's `_version`)."""
        vc = self._vc
        return 0 if vc is None else vc.value

    def _make_view(self, data):
        """A tensor sharing this tensor's memory and version counter."""
        t = Tensor._make(data, self._dtype, self._device)
        t._base = self._base if self._base is not None else self
        vc = self._vc
        if vc is None:
            vc = self._vc = VersionCounter()
        t._vc = vc
        t._fn_version = vc.value
        extra = self._extra
        if not _grad_state.enabled:
            # PyTorch: a view taken in no_grad (or inference) mode still requires grad, as a
            # leaf without a gradient edge; writing it in place with grad mode on is an error
            # (see view_mode_error), as is reading its grad_fn once its base was written
            t._extra = {_VIEW_MODE: "inference" if _grad_state.inference else "no_grad"}
            if self._requires_grad:
                t._requires_grad = True
        elif extra is not None and _VIEW_MODE in extra:
            t._extra = {_VIEW_MODE: extra[_VIEW_MODE]}     # a view of such a view is one too
        if extra is not None and INFERENCE in extra:
            t._extra = _inference_extra()       # a view of an inference tensor is one
        return t

    # ------------------------------------------------------------------ basic properties
    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    @property
    def shape(self):
        return _size_of(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return _size_of(self._data.shape)
        return self._data.shape[self._wrap_size_dim(dim)]

    def dim(self):
        return self._data.ndim

    ndim = property(dim)

    def ndimension(self):
        return self._data.ndim

    def numel(self):
        return self._data.size


    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def element_size(self):
        return self._dtype.itemsize

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        data = self._data
        if data.__class__ is not np.ndarray and getattr(data, "_ember_sparse", False):
            return data.nbytes          # (torch's error for a sparse tensor)
        return data.size * self._dtype.itemsize

    def stride(self, dim=None):
        size = self._dtype.itemsize
        strides = tuple(s // size for s in self._data.strides)
        if not self._data.size and not any(strides):
            # NumPy gives empty arrays zero strides; PyTorch keeps contiguous ones
            strides = contiguous_strides(self._data.shape)
        if dim is None:
            return strides
        return strides[self._wrap_size_dim(dim)]

    def _storage_root(self):
        """The tensor whose memory this one lies in: a view's base, or what `detach()`/`.data`
        was taken from (those share memory without being autograd views), or itself."""
        t = self
        while True:
            if t._base is not None:
                t = t._base
            elif t._extra is not None and _STORAGE_ROOT in t._extra:
                t = t._extra[_STORAGE_ROOT]
            else:
                return t

    def storage_offset(self):
        root = self._storage_root()
        if root is self:
            return 0
        return (self._data_ptr() - root._data_ptr()) // self._dtype.itemsize

    def _data_ptr(self):
        return self._data.__array_interface__["data"][0] if self._device.type == "cpu" \
            else self._data.data.ptr

    def data_ptr(self):
        return self._data_ptr()

    def untyped_storage(self):
        return UntypedStorage._of(self)

    def is_contiguous(self, memory_format=None):
        if memory_format in _CHANNELS_LAST_ORDER:
            # NHWC (NDHWC) order: C innermost, then W, H, (D,) N (dims of size one may have
            # any stride)
            order = _CHANNELS_LAST_ORDER[memory_format]
            return self._data.ndim == len(order) and _is_contiguous(
                [self._data.shape[d] for d in order], [self.stride()[d] for d in order])
        if not self._data.size:
            return True                     # PyTorch counts every empty tensor as contiguous
        return _is_contiguous(self._data.shape, self.stride())

    def is_floating_point(self):
        return self._dtype.is_floating_point

    def is_complex(self):
        return self._dtype.is_complex

    def is_signed(self):
        return self._dtype.is_signed

    def _wrap_size_dim(self, dim):
        if self._data.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return self._wrap_dim(dim)

    def _wrap_dim(self, dim):
        from .ops._utils import wrap_dim  # (cycle: ops._utils imports this module)
        return wrap_dim(dim, self._data.ndim)

    def get_device(self):
        return -1 if self._device.type == "cpu" else self._device.index

    @property
    def layout(self):
        if getattr(type(self._data), "_ember_csr", False):
            return self._data.layout        # (a compressed layout: ember/sparse)
        return sparse_coo if getattr(self._data, "_ember_sparse", False) else strided

    @property
    def is_sparse(self):
        """A sparse COO tensor (its `_data` a COOArrays: see ember/sparse)."""
        return getattr(self._data, "_ember_sparse", False)

    @property
    def is_quantized(self):
        return False

    @property
    def is_meta(self):
        return False

    @property
    def names(self):
        return (None,) * self._data.ndim

    # ------------------------------------------------------------------ autograd fields
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        # the attribute's wording differs from requires_grad_()'s, as in PyTorch
        if flag.__class__ is not bool:
            raise RuntimeError("requires_grad must be a bool")
        if flag and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        if flag and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        if requires_grad.__class__ is not bool:
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {_type_name(requires_grad)}")
        if self.grad_fn is not None:             # not a leaf
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        if requires_grad and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and self._extra is not None and INFERENCE in self._extra and \
                not _grad_state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad_fn(self):
        base = self._base
        if base is not None and self._fn_version != self._version_counter.value and base._requires_grad:
            if self._extra is not None and _VIEW_MODE in self._extra:
                raise RuntimeError(view_mode_error(self, indirect=True))
            # the base was written in place since this view's grad_fn was set: the view now
            # reads its gradient through the base's (rebased) history (ops.views, imported here:
            # it imports this module)
            from .ops.views import regenerate_view_grad_fn
            regenerate_view_grad_fn(self)
        return self._grad_fn

    def _is_view(self):
        return self._base is not None

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def output_nr(self):
        return self._output_nr


    @property
    def grad(self):
        if self._grad is None and self.grad_fn is not None and not self._retains_grad():
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead. See "
                "github.com/pytorch/pytorch/pull/30531 for more information. (Triggered "
                "internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)",
                UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value._dtype is not self._dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if value.shape != self.shape:
                raise RuntimeError(f"attempting to assign a gradient of size "
                                   f"'{list(value.shape)}' to a tensor of size "
                                   f"'{list(self.shape)}'. Please ensure that the gradient and "
                                   f"the tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    def _get_extra(self):
        if self._extra is None:
            self._extra = {}
        return self._extra

    def _retains_grad(self):
        return self._extra is not None and self._extra.get("retains_grad", False)

    @property
    def retains_grad(self):
        return self._retains_grad()

    def retain_grad(self):
        fn = self.grad_fn
        if fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return                          # a leaf keeps its grad anyway
        if self._retains_grad():
            return
        self._get_extra()["retains_grad"] = True
        fn._retain_grad_of(self._output_nr, self)

    def register_hook(self, hook):
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        if fn is not None:
            return fn._register_tensor_hook(self._output_nr, hook)
        acc = self._accumulator()
        if acc is None:
            return add_hook({}, hook)       # a no_grad view: no gradient ever reaches it
        return acc._register_tensor_hook(0, hook)

    def register_post_accumulate_grad_hook(self, hook):
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        hooks = self._get_extra().setdefault("post_accumulate_hooks", {})
        return add_hook(hooks, hook)

    def _accumulator(self):
        """The leaf's AccumulateGrad node, kept alive by the graph that uses it (weakly here);
        None for a view made in no_grad mode of a tensor requiring grad (no edge, as PyTorch)."""
        extra = self._extra
        if extra is None:
            extra = self._extra = {}
        ref = extra.get("accumulator")
        acc = ref() if ref is not None else None
        if acc is None:
            if _VIEW_MODE in extra and self._base._requires_grad:
                return None
            acc = AccumulateGrad(self)
            extra["accumulator"] = weakref.ref(acc)
        return acc

    def _edge(self):
        """The (node, input_nr) through which a gradient reaches this tensor."""
        if not self._requires_grad:
            return (None, 0)
        fn = self._grad_fn if self._base is None else self.grad_fn
        if fn is None:
            return (self._accumulator(), 0)
        return (fn, self._output_nr)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        # shares memory and the version counter, but is no autograd view (as torch: not
        # _is_view()), so it never regenerates a grad_fn from its source
        t = Tensor._make(self._data, self._dtype, self._device)
        t._version_counter = self._version_counter
        if self._extra is not None and INFERENCE in self._extra:
            t._extra = _inference_extra()
        _share_storage(t, self)
        return t

    def detach_(self):
        # any view is refused (whether or not its base requires grad), except in inference
        # mode, where PyTorch skips autograd's checks
        if self._base is not None and not _grad_state.inference:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are "
                               "using DistributedDataParallel (DDP) for training, and "
                               "gradient_as_bucket_view is set as True, gradients are views of DDP "
                               "buckets, and hence detach_() cannot be called on these "
                               "gradients. To fix this error, please refer to the "
                               "Optimizer.zero_grad() function in torch/optim/optimizer.py as "
                               "the solution.")
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        if self._extra is not None:
            self._extra.pop(autograd.forward_ad._TANGENT, None)    # (and a forward AD tangent)
        return self

    @property
    def data(self):
        # shares memory but not the version counter: changes through .data are invisible to
        # autograd (the silent wrong gradient the seed notes warn about)
        t = Tensor._make(self._data, self._dtype, self._device)
        _share_storage(t, self)
        return t

    @data.setter
    def data(self, other):
        self._data = other._data
        self._dtype = other._dtype
        self._device = other._device

    # ------------------------------------------------------------------ conversions
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               f"to Scalar")
        if self._dtype is D.complex32:
            return complex(D.as_complex64(self._host().reshape(())).item())
        return self._host().reshape(()).item() if self._dtype is not D.bfloat16 \
            else float(self._host().reshape(()))

    def tolist(self):
        host = self._host()
        if self._dtype is D.bfloat16 or self._dtype is D.float16:
            host = host.astype(np.float32)
        elif self._dtype is D.complex32:
            host = D.as_complex64(host)       # (the float16 pairs as Python complex numbers)
        return host.tolist()

    def _host(self):
        if self._device.type == "cpu":
            return self._data
        return _backend.backend(self._device.type).to_host(self._data)

    def numpy(self, *, force=False):
        csr = getattr(type(self._data), "_ember_csr", False)       # (a CSR matrix: ember/sparse)
        if csr or getattr(self._data, "_ember_sparse", False):
            name = "Sparse" + self._data.layout[13:].capitalize() if csr else "Sparse"
            raise TypeError(f"can't convert {name} layout tensor to "
                            f"numpy. Use Tensor.to_dense() first.")
        if force:
            self._check_numpy_type()
            return self.detach().cpu()._data
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self._device.type != "cpu":
            raise TypeError(f"can't convert {self._device.type}:{self._device.index} device "
                            f"type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
                            f"memory first.")
        self._check_numpy_type()
        return self._data

    def _check_numpy_type(self):
        # NumPy has no bfloat16, float8 or complex32 of its own: torch refuses to convert them
        if self._dtype in _NO_NUMPY_TYPE:
            raise TypeError(f"Got unsupported ScalarType {scalar_type_name(self._dtype)}")

    def __array__(self, dtype=None, copy=None):
        # NumPy 2 protocol: np.array(t) asks for a copy, np.asarray(t) may share memory
        arr = self.numpy()
        if dtype is not None:
            return arr.astype(dtype, copy=bool(copy))
        return arr.copy() if copy else arr

    def _scalar_check(self, kind):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if kind != "int" and self._requires_grad and _grad_state.enabled:
            _warn_scalar_of_grad_tensor()

    def __float__(self):
        self._scalar_check("float")
        return float(self._real_item("double"))

    def __int__(self):
        self._scalar_check("int")
        return int(self._real_item("int64_t"))

    def _real_item(self, c_type):
        """The value for float()/int(): of a complex tensor only without an imaginary part."""
        value = self.item()
        if isinstance(value, complex):
            if value.imag:
                raise RuntimeError(f"value cannot be converted to type {c_type} without "
                                   f"overflow")
            value = value.real
        return value

    def __complex__(self):
        self._scalar_check("complex")
        return complex(self.item())

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous"
                               if self._data.size == 0 else
                               "Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __index__(self):
        if self._dtype._category > 1 or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __reversed__(self):
        return self if self._data.ndim == 0 else self.flip(0)

    def __contains__(self, element):
        if isinstance(element, (Tensor, numbers.Number)):
            return bool((element == self).any())
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed "
                           f"in a {type(element)}.")

    def __format__(self, spec):
        # as torch: a zero-dim plain Tensor formats as its number (f"{loss}" prints 0.25)
        if self._data.ndim == 0 and type(self) is Tensor:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __repr__(self, *, tensor_contents=None):
        return tensor_repr(self)

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        new = type(self).__new__(type(self)) if type(self) is not Tensor else None
        t = self._deepcopy_data(memo)
        if new is not None:
            new = _copy_into_subclass(new, t)
            t = new
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        if self.__dict__:
            t.__dict__.update(copy.deepcopy(self.__dict__, memo))
        memo[id(self)] = t
        return t

    def _deepcopy_data(self, memo):
        """A copy with the same strides and storage offset, whose memory the copies of other
        tensors on the same storage (in this deepcopy) share, as in PyTorch."""
        if getattr(self._data, "_ember_sparse", False):         # a sparse tensor's arrays
            return Tensor._make(self._data.copy(), self._dtype, self._device,
                                self._requires_grad)
        root = self._storage_root()
        if not (root._data.flags.c_contiguous and min(self.stride(), default=0) >= 0):
            return Tensor._make(self._data.copy(), self._dtype, self._device,
                                self._requires_grad)
        key = ("ember storage", id(root))
        new_root = memo.get(key)
        if new_root is None:
            new_root = memo[key] = Tensor._make(root._data.copy(), root._dtype, root._device)
            memo.setdefault(id(memo), []).append(root)     # (keeps id(root) unique)
        if self is root:
            t = new_root
        else:
            with no_grad():
                t = new_root.as_strided(tuple(self._data.shape), self.stride(),
                                        self.storage_offset())
            t._extra = None             # (a copy, not a view the user made in no_grad mode)
        t._requires_grad = self._requires_grad
        return t

    def __reduce_ex__(self, protocol):
        # as in PyTorch, a tensor travels with its whole storage and its place in it (a view
        # keeps its strides and offset) unless that memory is not laid out plainly
        if getattr(self._data, "_ember_sparse", False):
            from .sparse._coo import rebuild_sparse    # (ember.sparse is built on Tensor)
            coo = self._data
            return (rebuild_sparse, (coo.indices, coo.values, coo.shape, coo.coalesced,
                                     str(self._device), self._requires_grad))
        root = self._storage_root()
        geometry = None
        if root._data.flags.c_contiguous and min(self.stride(), default=0) >= 0:
            data = root._host().reshape(-1).copy()
            geometry = (tuple(self._data.shape), self.stride(), self.storage_offset())
        else:
            data = self._host().copy()
        return (_rebuild_tensor, (data, self._dtype.name, str(self._device),
                                  self._requires_grad, geometry))

    def __setstate__(self, state):
        pass

    # ------------------------------------------------------------------ devices and types
    def cpu(self, memory_format=None):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        return self.to(as_device("cuda" if device is None else device))

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            sparse = "sparse." if self.is_sparse else ""        # (torch.sparse.FloatTensor)
            return "torch." + sparse + legacy_type_name(self._dtype, self._device)
        from .ops.creation import legacy_type_dtype  # (cycle: ops.creation imports this module)
        return self.to(legacy_type_dtype(dtype))

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        from .ops.creation import new_tensor  # (cycle: ops.creation imports this module)
        return new_tensor(self, data, dtype, device, requires_grad)


SavedTensor.tensor_class = Tensor


def _copy_into_subclass(new, t):
    for slot in Tensor.__slots__:
        if slot not in ("__dict__", "__weakref__"):
            setattr(new, slot, getattr(t, slot))
    return new


_NO_NUMPY_TYPE = frozenset((D.bfloat16, D.complex32) + D._FLOAT8)


def _rebuild_tensor(array, dtype_name, device, requires_grad, geometry=None):
    t = Tensor._make(array, D.ALIASES[dtype_name])
    if geometry is not None:
        shape, strides, offset = geometry
        if offset == 0 and array.size == int(np.prod(shape)) and \
                _is_contiguous(shape, strides) and strides == contiguous_strides(shape):
            t = Tensor._make(array.reshape(shape), t._dtype)
        else:
            t = t.as_strided(shape, strides, offset)
    if device != "cpu":
        t = t.to(device)
    t._requires_grad = requires_grad
    return t


_grad_state = autograd.grad_mode.state
_inference_used = autograd.grad_mode.inference_used
INFERENCE = "inference"     # _extra key of an inference tensor (made in inference mode)
inference_tensors_made = [False]   # (until then, the graph code need not look for them)


def _inference_extra():
    inference_tensors_made[0] = True
    return {INFERENCE: True}


def is_inference(t):
    return t._extra is not None and INFERENCE in t._extra


def check_inference_write(t):
    """PyTorch's error for writing an inference tensor in place outside inference mode."""
    if t._extra is not None and INFERENCE in t._extra and not _grad_state.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                           "details.")


INFERENCE_SAVED_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `ember.no_grad()` instead of "
    "`ember.inference_mode()`.")
_VIEW_MODE = "view_mode"    # _extra key: the grad mode ("no_grad"/"inference") a view was made in

_STORAGE_ROOT = "storage_root"  # _extra key: what a detach()/.data result shares memory with


def _share_storage(t, source):
    """Record that `t` (a detach()/.data result) lies in `source`'s memory, so its storage,
    storage_offset and as_strided see the whole storage as PyTorch's do. Only a source that is
    itself a window on other memory needs it (the common whole-tensor case stays free)."""
    root = source._storage_root()
    if root is not source:
        t._get_extra()[_STORAGE_ROOT] = root


_UNWRITABLE_VIEW_REASONS = {       # views marked by ops.views.mark_unwritable_views
    "multi_output": (
        "This view is the output of a function that returns multiple views. Such functions do "
        "not allow the output views to be modified inplace. You should replace the inplace "
        "operation by an out-of-place one."),
    "custom_function": (
        "This view was created inside a custom Function (or because an input was returned "
        "as-is) and the autograd logic to handle view+inplace would override the custom "
        "backward associated with the custom Function, leading to incorrect gradients. This "
        "behavior is forbidden. You can fix this by cloning the output of the custom Function."),
}


def view_mode_error(t, indirect):
    """PyTorch's error for writing (or, indirect, reading the grad_fn after a write through its
    base) a view made in no_grad or inference mode, or one no view+inplace logic may rewrite."""
    mode = t._extra[_VIEW_MODE]
    fn = t._grad_fn
    name = re.sub(r"Backward\d*$", "", type(fn).__name__) if fn is not None else None
    done = "its base or another view of its base has been" if indirect else "is being"
    if mode in _UNWRITABLE_VIEW_REASONS:
        return (f"Output {t._output_nr} of {name} is a view and {done} modified inplace. "
                f"{_UNWRITABLE_VIEW_REASONS[mode]}")
    what = (f"Output {t._output_nr} of {name} is a view of a view which was" if fn is not None
            else "A view was")
    if mode == "inference":
        return (f"{what} created in inference mode and {done} modified inplace in normal mode."
                f"{_VIEW_MODE_ADVICE}".replace("MODE", "inference_mode"))
    return (f"{what} created in no_grad mode and {done} modified inplace with grad mode enabled."
            f"{_VIEW_MODE_ADVICE}".replace("MODE", "no_grad"))


_VIEW_MODE_ADVICE = (
    " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the MODE block (if "
    "you don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked).")


_warned_scalar = []


def _warn_scalar_of_grad_tensor():
    # PyTorch warns once per process (float() and complex() of a tensor that requires grad)
    if not _warned_scalar:
        _warned_scalar.append(True)
        warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                      "unexpected behavior.\nConsider using tensor.detach() first. (Triggered "
                      "internally at /__w/pytorch/pytorch/torch/csrc/autograd/generated/"
                      "python_variable_methods.cpp:822.)", UserWarning, stacklevel=3)


def _type_name(x):
    """A Python type's name as PyTorch's argument errors print it (NumPy's with its module)."""
    cls = type(x)
    return "Tensor" if isinstance(x, Tensor) else \
        f"numpy.{cls.__name__}" if cls.__module__ == "numpy" else cls.__name__


def contiguous_strides(shape):
    """The strides (in elements) of a C-contiguous tensor of this shape (the one copy in ember)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _is_contiguous(shape, strides):
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True
