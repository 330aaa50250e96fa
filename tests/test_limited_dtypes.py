"""The dtypes torch makes and converts but computes little with, against torch: uint16/32/64
arithmetic that torch's CPU kernels refuse (torch's NotImplementedError) and what they serve,
.numpy() of the float8 types (refused as torch refuses it), ember.save/ember.load of
uint16/32/64, float8 and complex32 tensors both ways with torch, and torch.nn.utils.prune's
reachability after a plain import."""
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember
from differential import catch, same

pytestmark = pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")

UNSIGNED = ["uint16", "uint32", "uint64"]
FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
          "float8_e8m0fnu"]

REFUSED = {
    "add": lambda T, x, y: x + y,
    "add_scalar": lambda T, x, y: x + 1,
    "radd": lambda T, x, y: 1 + x,
    "sub": lambda T, x, y: x - y,
    "rsub": lambda T, x, y: 1 - x,
    "add_": lambda T, x, y: x.clone().add_(y),
    "sub_": lambda T, x, y: x.clone().sub_(1),
    "neg": lambda T, x, y: -x,
    "abs": lambda T, x, y: x.abs(),
    "sign": lambda T, x, y: x.sign(),
    "floor_divide": lambda T, x, y: x // y,
    "div_trunc": lambda T, x, y: T.div(x, y, rounding_mode="trunc"),
    "remainder": lambda T, x, y: x % y,
    "remainder_scalar": lambda T, x, y: x % 2,
    "fmod": lambda T, x, y: x.fmod(y),
    "pow": lambda T, x, y: x ** 2,
    "rpow": lambda T, x, y: 2 ** x,
    "square": lambda T, x, y: x.square(),
    "max": lambda T, x, y: x.max(),
    "min": lambda T, x, y: x.min(),
    "max_dim": lambda T, x, y: x.max(0),
    "min_dim": lambda T, x, y: x.min(0),
    "amax": lambda T, x, y: x.amax(),
    "argmax": lambda T, x, y: x.argmax(),
    "argmin": lambda T, x, y: x.argmin(),
    "maximum": lambda T, x, y: T.maximum(x, y),
    "minimum": lambda T, x, y: T.minimum(x, y),
    "lt": lambda T, x, y: x < y,
    "le": lambda T, x, y: x <= y,
    "gt": lambda T, x, y: x > y,
    "ge": lambda T, x, y: x >= y,
    "lt_scalar": lambda T, x, y: x < 1,
    "clamp": lambda T, x, y: x.clamp(0, 1),
    "clamp_tensor": lambda T, x, y: x.clamp(y, y),
    "clamp_min": lambda T, x, y: x.clamp_min(1),
    "clamp_max": lambda T, x, y: x.clamp_max(1),
    "relu": lambda T, x, y: T.relu(x),
    "lshift": lambda T, x, y: x << 1,
    "rshift": lambda T, x, y: x >> 1,
    "mm": lambda T, x, y: x.mm(y),
    "matmul": lambda T, x, y: x @ y,
    "bmm": lambda T, x, y: T.bmm(x[None], y[None]),
    "mv": lambda T, x, y: T.mv(x, y[0]),
    "dot": lambda T, x, y: T.dot(x[0], y[0]),
    "flip_innermost": lambda T, x, y: x[0].flip(0),
    "flip_both": lambda T, x, y: x.flip(0, 1),
    "flip_transposed": lambda T, x, y: x.t().flip(0),
    "topk": lambda T, x, y: x.reshape(-1).topk(1),
    "nonzero": lambda T, x, y: x.nonzero(),
    "nonzero_tuple": lambda T, x, y: x.nonzero(as_tuple=True),
    "nonzero_static": lambda T, x, y: T.nonzero_static(x, size=2),
    "argwhere": lambda T, x, y: T.argwhere(x),
    "count_nonzero": lambda T, x, y: x.count_nonzero(),
    "promote_long": lambda T, x, y: x + T.ones(2, dtype=T.long),
    "promote_bool": lambda T, x, y: x + T.ones(2, dtype=T.bool),
}

SERVED = {
    "mul": lambda T, x, y: x * y,
    "mul_scalar": lambda T, x, y: x * 2,
    "div": lambda T, x, y: x / y,
    "div_scalar": lambda T, x, y: x / 2,
    "eq": lambda T, x, y: x == y,
    "ne": lambda T, x, y: x != y,
    "sum": lambda T, x, y: x.sum(),
    "cumsum": lambda T, x, y: x.cumsum(0),
    "cumprod": lambda T, x, y: x.cumprod(0),
    "sort": lambda T, x, y: x.sort(),
    "where": lambda T, x, y: T.where(x == y, x, y),
    "add_float": lambda T, x, y: x + T.ones(2),
    "cat": lambda T, x, y: T.cat([x, y]),
    "count_nonzero_dim": lambda T, x, y: x.count_nonzero(0),
    "any": lambda T, x, y: x.any(),
    "mask": lambda T, x, y: x[x.bool()],
    "flip_outer": lambda T, x, y: x.flip(0),     # (a strided copy in torch, no flip kernel)
    "index": lambda T, x, y: x[[1, 0]],
    "to_float": lambda T, x, y: x.float(),
    "clone": lambda T, x, y: x.clone(),
    "fill_": lambda T, x, y: x.clone().fill_(3),
    "tolist": lambda T, x, y: x.tolist(),
    "numpy": lambda T, x, y: T.from_numpy(x.numpy()),
}


def _pair(T, name):
    dtype = getattr(T, name)
    return (T.tensor([[1, 2], [3, 4]], dtype=dtype), T.tensor([[1, 1], [2, 1]], dtype=dtype))


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("op", sorted(REFUSED))
def test_unsigned_ops_torch_refuses(dtype, op):
    out = same(lambda T: catch(REFUSED[op], T, *_pair(T, dtype)))
    assert out[0] == "raised"


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("op", sorted(SERVED))
def test_unsigned_ops_torch_serves(dtype, op):
    out = same(lambda T: catch(SERVED[op], T, *_pair(T, dtype)))
    assert not (isinstance(out, tuple) and out and out[0] == "raised")


@pytest.mark.parametrize("dtype", FLOAT8 + ["bfloat16", "complex32"])
def test_numpy_of_types_numpy_lacks(dtype):
    def f(T):
        x = T.ones(3, dtype=getattr(T, dtype))
        y = T.ones(3, dtype=getattr(T, dtype), requires_grad=dtype != "float8_e8m0fnu" and
                   dtype not in FLOAT8)
        return [catch(x.numpy), catch(lambda: x.numpy(force=True)),
                catch(lambda: np.asarray(x)), catch(lambda: np.array(x)), catch(y.numpy)]
    out = same(f)
    assert out[0][0] == "raised"


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2", "uint16", "uint64"])
def test_numpy_of_types_numpy_has_still_works(dtype):
    # float8 values read through float32; the unsigned types straight
    def f(T):
        x = T.tensor([1.0, 2.0, 0.5] if "float" in dtype else [1, 2, 65535],
                     dtype=getattr(T, dtype))
        return catch(lambda: x.float().numpy().tolist() if "float" in dtype
                     else x.numpy().tolist())
    same(f)


_VALUES = {"complex32": [1 + 2j, 3.1 - 4j, -0.5j, 7, 2 + 2j, 1e-3],
           "uint64": [0, 1, 2 ** 63 + 5, 7, 9, 2 ** 64 - 1],
           "uint32": [0, 1, 2 ** 32 - 1, 7, 9, 5], "uint16": [0, 1, 65535, 7, 9, 5]}


def _values(name):
    return _VALUES.get(name, [0.5, -1.0, 2.0, 448.0 if name == "float8_e4m3fn" else 3.0,
                              0.125, 4.0])


def _same_tensor(a, b):
    """A torch tensor and an ember tensor hold the same dtype, shape and bits."""
    assert str(a.dtype).split(".")[-1] == b.dtype.name and tuple(a.shape) == tuple(b.shape)
    if a.dtype == torch.complex32:
        a, b = torch.view_as_real(a), ember.view_as_real(b)
    if a.dtype.is_floating_point:
        assert a.float().tolist() == b.float().tolist()
    else:
        assert a.tolist() == b.tolist()


@pytest.mark.parametrize("name", UNSIGNED + FLOAT8 + ["complex32"])
def test_save_in_ember_load_in_torch(name, tmp_path):
    path = tmp_path / f"{name}.pt"
    x = ember.tensor(_values(name), dtype=getattr(ember, name)).reshape(2, 3)
    ember.save({"x": x, "view": x[:, 1:], "t": x.t(), "also_x": x}, path)
    loaded = torch.load(path)
    expected = torch.tensor(_values(name), dtype=getattr(torch, name)).reshape(2, 3)
    _same_tensor(loaded["x"], x)
    _same_tensor(loaded["view"], x[:, 1:])
    _same_tensor(loaded["t"], x.t())
    assert loaded["t"].stride() == expected.t().stride()
    # one storage, shared again after loading (as torch shares it)
    assert loaded["x"].untyped_storage().data_ptr() == loaded["view"].untyped_storage().data_ptr()
    assert loaded["also_x"] is loaded["x"]


@pytest.mark.parametrize("name", UNSIGNED + FLOAT8 + ["complex32"])
def test_save_in_torch_load_in_ember(name, tmp_path):
    path = tmp_path / f"{name}.pt"
    x = torch.tensor(_values(name), dtype=getattr(torch, name)).reshape(2, 3)
    torch.save({"x": x, "view": x[:, 1:], "t": x.t()}, path)
    loaded = ember.load(path)
    _same_tensor(x, loaded["x"])
    _same_tensor(x[:, 1:], loaded["view"])
    _same_tensor(x.t(), loaded["t"])
    assert loaded["t"].stride() == x.t().stride()
    # the view shares x's memory, one element in (as x[:, 1:] does)
    assert loaded["view"].data_ptr() == loaded["x"].data_ptr() + loaded["x"].element_size()


@pytest.mark.parametrize("name", ["uint16", "float8_e5m2", "complex32"])
def test_ember_round_trip_keeps_the_bits(name, tmp_path):
    path = tmp_path / "rt.pt"
    x = ember.tensor(_values(name), dtype=getattr(ember, name))
    ember.save(x, path)
    y = ember.load(path)
    assert y.dtype is x.dtype
    assert y.tolist() == x.tolist()


_PRUNE = """
import {lib}
a = hasattr({lib}.nn.utils, "prune")
import {lib}.nn.utils.prune
print(a, hasattr({lib}.nn.utils, "prune"), hasattr({lib}.nn.utils.prune, "l1_unstructured"))
"""


def test_nn_utils_prune_is_reachable_only_once_imported():
    outs = [subprocess.run([sys.executable, "-c", _PRUNE.format(lib=lib)], capture_output=True,
                           text=True, check=True).stdout for lib in ("torch", "ember")]
    assert outs[0] == outs[1] == "False True True\n"


F8_OPS = {
    "add": lambda T, x, y: x + y,
    "sub_scalar": lambda T, x, y: x - 1,
    "mul": lambda T, x, y: x * y,
    "mul_scalar": lambda T, x, y: x * 2,
    "div": lambda T, x, y: x / y,
    "div_scalar": lambda T, x, y: x / 2,
    "floor_divide": lambda T, x, y: x // y,
    "neg": lambda T, x, y: -x,
    "abs": lambda T, x, y: x.abs(),
    "pow": lambda T, x, y: x ** 2,
    "sum": lambda T, x, y: x.sum(),
    "mean": lambda T, x, y: x.mean(),
    "prod": lambda T, x, y: x.prod(),
    "cumsum": lambda T, x, y: x.cumsum(0),
    "max": lambda T, x, y: x.max(),
    "argmax": lambda T, x, y: x.argmax(),
    "maximum": lambda T, x, y: T.maximum(x, y),
    "eq": lambda T, x, y: x == y,
    "lt": lambda T, x, y: x < y,
    "sort": lambda T, x, y: x.sort(),
    "clamp": lambda T, x, y: x.clamp(0, 1),
    "relu": lambda T, x, y: T.relu(x),
    "exp": lambda T, x, y: x.exp(),
    "sqrt": lambda T, x, y: x.sqrt(),
    "floor": lambda T, x, y: x.floor(),
    "round": lambda T, x, y: x.round(),
    "sigmoid": lambda T, x, y: x.sigmoid(),
    "sign": lambda T, x, y: x.sign(),
    "isnan": lambda T, x, y: x.isnan(),
    "where": lambda T, x, y: T.where(x == y, x, y),
    "mm": lambda T, x, y: x @ y,
    "bmm": lambda T, x, y: T.bmm(x[None], y[None]),
    "mv": lambda T, x, y: T.mv(x, y[0]),
    "dot": lambda T, x, y: T.dot(x[0], y[0]),
    "flip_outer": lambda T, x, y: x.flip(0),
    "flip_innermost": lambda T, x, y: x.flip(1),
    "nonzero": lambda T, x, y: x.nonzero(),
    "count_nonzero": lambda T, x, y: x.count_nonzero(),
    "allclose": lambda T, x, y: T.allclose(x, y),
    "equal": lambda T, x, y: T.equal(x, y),
    "cat": lambda T, x, y: T.cat([x, y]),
    "to_float": lambda T, x, y: x.float(),
    "mul_": lambda T, x, y: x.clone().mul_(y),
    "add_": lambda T, x, y: x.clone().add_(y),
}


@pytest.mark.parametrize("dtype", FLOAT8)
@pytest.mark.parametrize("op", sorted(F8_OPS))
def test_float8_ops_as_torch(dtype, op):
    def f(T):
        x = T.tensor([[1.0, 2.0], [0.5, 4.0]]).to(getattr(T, dtype))
        y = T.tensor([[1.0, 0.25], [2.0, 1.0]]).to(getattr(T, dtype))
        out = catch(F8_OPS[op], T, x, y)
        if isinstance(out, T.Tensor) and out.dtype == getattr(T, dtype):
            return [out.float(), out.dtype]
        if isinstance(out, tuple) and out and isinstance(out[0], T.Tensor):
            return [o.float() for o in out]
        return out
    same(f)
