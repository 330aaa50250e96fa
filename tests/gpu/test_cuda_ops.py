"""Every op of the OpInfo tables on a CUDA device: forward, backward, double backward.

For each sample, ember on cuda is compared with
- ember on the CPU (the reference every op already matches torch against): the same values to
  the dtype's tolerance, the same dtype and shape, the same errors, the same graph node names,
  the same gradients and second-order gradients; and
- torch on its GPU (on its CPU under EMBER_FAKE_CUDA=1), where torch runs the sample: the
  same values, dtype and shape. torch on the GPU machine may be an older release than the one
  ember follows; a sample it rejects is compared with ember's CPU result only.
Every result must live on cuda:0, and (on the CPU stand-in) no op may copy an array between
host and device in its forward or backward.

Runs on a GPU (CuPy + CUDA), or anywhere with EMBER_FAKE_CUDA=1 (see cuda_env.py).
EMBER_GPU_DTYPES=float32,int64 limits the dtypes (the GPU script's time budget).
"""
import os
import warnings

import ml_dtypes
import numpy as np
import pytest
import torch

import ember
import cuda_env
from cuda_env import counted, cuda_device  # noqa: F401  (a fixture)

reason = cuda_env.skip_reason()
if reason:
    pytest.skip(reason, allow_module_level=True)

import opinfo as O  # noqa: E402  (tests/ is put on sys.path by cuda_env)


_UNREADABLE = {}        # a table module that failed to import (an older torch): its error


def _tables():
    ops = O.POINTWISE_OPS + O.LOGIC_OPS + O.REDUCTION_OPS + O.LINALG_OPS + O.JOINING_OPS
    for module, table in (("test_indexing", "INDEX_OPS"), ("test_views", "VIEW_OPS")):
        try:
            ops = ops + getattr(__import__(module), table)
        except Exception as err:            # reported by test_tables_import, not hidden
            _UNREADABLE[module] = f"{type(err).__name__}: {err}"
    return ops


OPS = _tables()


def test_tables_import():
    assert not _UNREADABLE, f"op tables not checked: {_UNREADABLE}"
_ONLY = os.environ.get("EMBER_GPU_DTYPES")
_ONLY = set(_ONLY.split(",")) if _ONLY else None


def _params(ops, attr):
    return [pytest.param(op, d, id=f"{op.name}-{d}") for op in ops for d in getattr(op, attr)
            if _ONLY is None or d in _ONLY]


# ----------------------------------------------------------------------------- conversions
def _cuda_tensor(a, requires_grad):
    t = ember.tensor(a.copy(), device="cuda")
    return t.requires_grad_(requires_grad)


def _torch_tensor(a, requires_grad):
    if a.dtype == ml_dtypes.bfloat16:
        t = torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    else:
        t = torch.from_numpy(a.copy())
    return t.to(cuda_env.TORCH_DEVICE).requires_grad_(requires_grad)


def to_cuda(sample, requires_grad=False):
    return ([O._convert(a, _cuda_tensor, requires_grad) for a in sample.args],
            {k: O._convert(v, _cuda_tensor, requires_grad) for k, v in sample.kwargs.items()})


def to_torch(sample, requires_grad=False):
    return ([O._convert(a, _torch_tensor, requires_grad) for a in sample.args],
            {k: O._convert(v, _torch_tensor, requires_grad) for k, v in sample.kwargs.items()})


def host(value):
    """A result on the host: tensors of either library moved to their CPU."""
    if isinstance(value, (ember.Tensor, torch.Tensor)):
        return value.detach().cpu()
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*map(host, value))
    if isinstance(value, (tuple, list)):
        return type(value)(map(host, value))
    return value


def _array(t):
    a = np.asarray(t._data)
    return a.astype(np.float64) if a.dtype in (ml_dtypes.bfloat16, np.float16) else a


def assert_close(got, ref, tol, what, scale=1.0):
    """ember results `got` (on the host) equal ember's CPU results `ref`: type, dtype, shape
    and values to the dtype's tolerance."""
    if isinstance(ref, ember.Tensor):
        assert isinstance(got, ember.Tensor), f"{what}: {type(got).__name__}"
        assert got.dtype == ref.dtype, f"{what}: dtype {got.dtype} != {ref.dtype}"
        assert got.shape == ref.shape, f"{what}: shape {got.shape} != {ref.shape}"
        g, r = _array(got), _array(ref)
        if r.dtype.kind in "fc":
            name = str(ref.dtype).split(".")[-1]
            atol, rtol = (tol or {}).get(name, O.TOLERANCE.get(name, (0, 0)))
            np.testing.assert_allclose(g, r, atol=atol * scale, rtol=rtol * scale,
                                       equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(g, r, err_msg=what)
        return
    if isinstance(ref, (tuple, list)):
        assert type(got) is type(ref) and len(got) == len(ref), f"{what}: {got!r} vs {ref!r}"
        for i, (x, y) in enumerate(zip(got, ref)):
            assert_close(x, y, tol, f"{what}[{i}]", scale)
        return
    assert got == ref or (got != got and ref != ref), f"{what}: {got!r} != {ref!r}"


def assert_on_cuda(value, what):
    for t in O._tensors_of(value):
        assert t.device == ember.device("cuda", 0), f"{what}: result on {t.device}"
        assert t.is_cuda, what


# samples indexing with a Python list: the list is host data, copied to the device once (as
# torch copies it); nothing may come back to the host
_HOST_INDEX = {"getitem_list", "getitem_two_lists", "getitem_int_and_list",
               "getitem_split_lists"}


def assert_no_copies(copies, what, op):
    if op.name in _HOST_INDEX:
        copies = [c for c in copies if c[0] != "to_device"]
    assert not copies, f"{what}: host transfers {copies}"


def _call(op, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # (the CPU suite compares warnings with torch's)
        return op.ember_call(args, kwargs)


def _torch_call(op, sample, requires_grad=False):
    """torch's result on its device, or None where torch rejects the sample."""
    args, kwargs = to_torch(sample, requires_grad)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return op.torch_call(args, kwargs), args, kwargs
    except Exception:
        return None, args, kwargs


# ----------------------------------------------------------------------------- forward
@pytest.mark.parametrize("op,dtype", _params(OPS, "dtypes"))
def test_forward(op, dtype, cuda_device):
    for sample in op.sample_list(dtype):
        what = f"{op.name}{sample!r}"
        cpu_args, cpu_kwargs = O.to_ember(sample)
        args, kwargs = to_cuda(sample)
        try:
            ref = _call(op, cpu_args, cpu_kwargs)
        except Exception as err:        # rejected on the CPU: rejected the same way on cuda
            O.check_same_error(lambda: _call(op, args, kwargs), err)
            continue
        with counted() as transfers:
            got = _call(op, args, kwargs)
        assert_no_copies(transfers.copies, what, op)
        assert_on_cuda(got, what)
        got = host(got)
        assert_close(got, host(ref), op.tol, what)
        expected = _torch_call(op, sample)[0]
        if expected is not None:
            O.assert_same(got, host(expected), op.tol, what + " vs torch")


# ----------------------------------------------------------------------------- backward
def _grads(op, args, kwargs, ups, create_graph=False, transfers=None):
    """(leaves, differentiable outputs, input gradients for upstream gradients `ups(outs)`);
    the host transfers of the call and of the backward (not of making `ups`) are counted
    into `transfers` (a list)."""
    leaves = O.grad_leaves(args, kwargs)
    with counted() as forward:
        outs = [o for o in O._tensors_of(_call(op, args, kwargs)) if o.requires_grad]
    if not outs:
        return leaves, outs, None
    upstream = ups(outs)
    with counted() as backward:
        grads = ember.autograd.grad(outs, leaves, upstream, allow_unused=True,
                                    create_graph=create_graph)
    if transfers is not None:
        transfers += forward.copies + backward.copies
    return leaves, outs, grads


def _upstream(rng_seed, device):
    def ups(outs):
        rng = np.random.default_rng(rng_seed)
        return [ember.tensor(O.make(o.shape, O.dtype_name(o), rng), device=device)
                for o in outs]
    return ups


@pytest.mark.parametrize("op,dtype", _params([op for op in OPS if op.grad], "grad_dtypes"))
def test_backward(op, dtype, cuda_device):
    checked = 0
    for sample in op.sample_list(dtype, for_grad=True):
        what = f"{op.name}{sample!r}"
        cpu_args, cpu_kwargs = O.to_ember(sample, requires_grad=True)
        if not O.grad_leaves(cpu_args, cpu_kwargs) or not O.torch_accepts(op, sample):
            continue
        _, cpu_outs, cpu_grads = _grads(op, cpu_args, cpu_kwargs, _upstream(1, "cpu"))
        if cpu_grads is None:
            continue
        args, kwargs = to_cuda(sample, requires_grad=True)
        transfers = []
        _, outs, grads = _grads(op, args, kwargs, _upstream(1, "cuda"), transfers=transfers)
        assert_no_copies(transfers, what, op)
        assert [O.graph_names(o.grad_fn) for o in outs] == \
            [O.graph_names(o.grad_fn) for o in cpu_outs], f"{what}: node names"
        for i, (g, r) in enumerate(zip(grads, cpu_grads)):
            assert (g is None) == (r is None), f"{what}: grad {i}"
            if g is not None:
                assert_on_cuda(g, what)
                assert_close(host(g), r, op.tol, f"{what} grad {i}", scale=10)
        checked += 1
    assert checked, f"{op.name}: no sample had a differentiable input"


@pytest.mark.parametrize("op", [op for op in OPS if op.gradgrad], ids=str)
def test_double_backward(op, cuda_device):
    """Second-order gradients in float64: cuda vs the CPU."""
    if _ONLY is not None and "float64" not in _ONLY:
        pytest.skip("float64 not among EMBER_GPU_DTYPES")
    checked = 0
    for sample in op.sample_list("float64", for_grad=True):
        if not O.torch_accepts(op, sample):
            continue
        results = []
        for device, convert in (("cpu", O.to_ember), ("cuda", to_cuda)):
            args, kwargs = convert(sample, requires_grad=True)
            leaves, outs, grads = _grads(op, args, kwargs, _upstream(1, device),
                                         create_graph=True)
            if grads is None:
                break
            firsts = [g for g in grads if g is not None and g.requires_grad]
            if not firsts:
                break
            seconds = ember.autograd.grad(firsts, leaves, _upstream(2, device)(firsts),
                                          allow_unused=True)
            results.append([None if g is None else host(g) for g in seconds])
        if len(results) < 2:
            continue
        for i, (g, r) in enumerate(zip(*reversed(results))):
            assert (g is None) == (r is None), f"{op.name}{sample!r}: grad grad {i}"
            if g is not None:
                assert_close(g, r, op.tol, f"{op.name}{sample!r} grad grad {i}", scale=10)
        checked += 1
    if not checked:
        pytest.skip(f"{op.name}: no float64 sample has a second derivative to compare")
