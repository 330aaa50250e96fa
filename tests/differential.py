"""Run the same program under torch and under ember and compare what it observes.

A scenario is a function `f(T)` taking the module (`torch` or `ember`) and returning plain data:
tensors, numbers, strings, bools, None, exceptions (caught with `catch`), nested in lists,
tuples and dicts. `same(f)` runs both and compares: tensors by values/dtype/shape, strings with
'torch.' and 'ember.' treated as equal.
"""
import warnings

import numpy as np
import torch

import ember
from ember._cpu import mkl_fuses


def catch(fn, *args, **kwargs):
    """The exception a call raises, as (type name, message), or its result."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:     # noqa: BLE001 - the exception is the observation
        return ("raised", type(exc).__name__, str(exc))


def warnings_of(fn):
    """(result, [warning messages]) of a call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [f"{w.category.__name__}: {w.message}" for w in caught]


def _normalise_text(s):
    # ember may append a line of its own to PyTorch's messages (e.g. where an in-place op
    # happened); what PyTorch says must still be there word for word
    s = s.split("\n(ember) ")[0]
    return s.replace("torch.", "ember.")


def _to_plain(x):
    if isinstance(x, torch.Tensor):
        return ("tensor", x.detach().cpu().numpy() if x.dtype != torch.bfloat16 else
                x.detach().float().numpy(), str(x.dtype).split(".")[-1], tuple(x.shape))
    if isinstance(x, ember.Tensor):
        d = x.detach()
        arr = d._data.astype(np.float32) if x.dtype is ember.bfloat16 else d._data
        return ("tensor", np.asarray(arr), x.dtype.name, tuple(x.shape))
    if isinstance(x, (torch.Size, ember.Size)):
        return ("size", tuple(x))
    if isinstance(x, (torch.dtype, ember.dtype)):
        return ("dtype", str(x).split(".")[-1])
    if isinstance(x, str):
        return _normalise_text(x)
    if isinstance(x, dict):
        return {k: _to_plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_to_plain(v) for v in x) if not hasattr(x, "_fields") else \
            tuple(_to_plain(v) for v in x)
    return x


def assert_same(a, b, rtol=1e-5, atol=1e-6, path="result"):
    if isinstance(a, tuple) and a and a[0] == "tensor":
        assert isinstance(b, tuple) and b and b[0] == "tensor", f"{path}: {a!r} vs {b!r}"
        _, va, da, sa = a
        _, vb, db, sb = b
        assert sa == sb, f"{path}: shape {sa} vs {sb}"
        assert da == db, f"{path}: dtype {da} vs {db}"
        if va.dtype.kind in "fc":
            np.testing.assert_allclose(vb, va, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=path)
        else:
            np.testing.assert_array_equal(vb, va, err_msg=path)
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{path}: {a!r} vs {b!r}"
        for k in a:
            assert_same(a[k], b[k], rtol, atol, f"{path}[{k!r}]")
        return
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{path}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, rtol, atol, f"{path}[{i}]")
        return
    if isinstance(a, float) and isinstance(b, float):
        assert np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True), f"{path}: {a} vs {b}"
        return
    assert a == b, f"{path}:\n torch: {a!r}\n ember: {b!r}"


def same(scenario, rtol=1e-5, atol=1e-6):
    """Run `scenario` under torch and ember; fail on any observable difference."""
    expected = _to_plain(scenario(torch))
    actual = _to_plain(scenario(ember))
    assert_same(expected, actual, rtol, atol)
    return actual


def grad_fn_name(t):
    """The class name of t's grad_fn (None for a tensor without one)."""
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


def leaf_grads(T, fn, *shapes_or_values, dtype="float64", seed=0):
    """fn(T, *leaves) -> out; returns (out, its node name, the grads of each leaf) under T. A
    leaf is drawn from a seeded normal for a shape (a tuple), else made from the given values;
    out is weighted by a seeded random tensor before the backward."""
    rng = np.random.default_rng(seed)
    leaves = []
    for s in shapes_or_values:
        values = rng.standard_normal(s) if isinstance(s, tuple) else np.asarray(s)
        leaves.append(T.tensor(values, dtype=getattr(T, dtype), requires_grad=True))
    out = fn(T, *leaves)
    weight = T.tensor(rng.standard_normal(tuple(out.shape)), dtype=out.dtype)
    loss = (out * weight).sum()
    (loss.real if loss.is_complex() else loss).backward()
    return out, grad_fn_name(out), [x.grad for x in leaves]


def mkl_mv_atol(*products):
    """The tolerance for float32 sparse CSR/CSC matrix @ vector products against torch's, each
    given as (matrix, vector) NumPy arrays: 0 (bit for bit) on an Intel CPU. Elsewhere torch's
    MKL takes other code paths (MKL dispatches on the CPU vendor, see ember/_cpu.py), which
    group each row's sum by rules of their own (sequential, or 4 lanes, as the thread count
    and the rows' lengths decide), and ember sums each row in order: the two differ by their
    roundings, about eps * sum(|terms|) of a row (at most 1.3 times that in trials on an AMD
    EPYC, where the sums' own last places can be 30+ ulps away after cancellation). So: 4
    times that, at the scale of the largest row sum of |terms| among the products."""
    if mkl_fuses():
        return 0
    scale = max(float((np.abs(m.astype(np.float64)) @ np.abs(v.astype(np.float64))).max())
                for m, v in products)
    return 4 * float(np.finfo(np.float32).eps) * scale
