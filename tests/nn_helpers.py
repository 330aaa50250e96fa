"""Shared helpers for the ember.nn tests: run the same module / function under torch and ember
with the same weights and inputs, and compare outputs, input gradients and parameter gradients.
"""
import numpy as np
import torch

import ember
from opinfo import graph_names

TOL = {torch.float32: dict(rtol=1e-5, atol=1e-6), torch.float64: dict(rtol=1e-7, atol=1e-9)}
DTYPES = {torch.float32: ember.float32, torch.float64: ember.float64, torch.int64: ember.int64,
          torch.bool: ember.bool, torch.uint8: ember.uint8, torch.int32: ember.int32}


def np_of(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach().numpy())


def em(t, requires_grad=False):
    """The ember copy of a torch tensor (same values and dtype)."""
    out = ember.tensor(t.detach().numpy().copy(), dtype=DTYPES[t.dtype])
    if requires_grad:
        out.requires_grad_(True)
    return out


def assert_close(e, t, rtol=None, atol=None, what=""):
    assert e is not None and t is not None, f"{what}: one side is None ({e!r} vs {t!r})"
    assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} vs {tuple(t.shape)}"
    assert str(e.dtype).replace("ember.", "") == str(t.dtype).replace("torch.", ""), \
        f"{what}: dtype {e.dtype} vs {t.dtype}"
    tol = TOL.get(t.dtype, dict(rtol=0, atol=0))
    np.testing.assert_allclose(np_of(e), np_of(t), rtol=rtol if rtol is not None else tol["rtol"],
                               atol=atol if atol is not None else tol["atol"], err_msg=what)


def copy_weights(torch_module, ember_module):
    """Load torch's state (parameters and buffers) into the ember module, by state_dict."""
    state = {k: em(v) for k, v in torch_module.state_dict().items()}
    result = ember_module.load_state_dict(state)
    assert repr(result) == "<All keys matched successfully>"


def make_inputs(arrays, dtype=torch.float32):
    """torch and ember inputs from numpy arrays; float ones require grad."""
    t_in, e_in = [], []
    for a in arrays:
        if isinstance(a, torch.Tensor):
            t = a.clone()
        else:
            t = torch.tensor(a)
        if t.is_floating_point():
            t = t.to(dtype).requires_grad_(True)
        t_in.append(t)
        e_in.append(em(t, requires_grad=t.requires_grad))
    return t_in, e_in


def compare_module(ember_module, torch_module, arrays, dtype=torch.float32, rtol=None,
                   atol=None, seed=0):
    """Forward + backward of both modules on the same inputs; compare everything."""
    if dtype == torch.float64:
        torch_module.double()
        ember_module.double()
    copy_weights(torch_module, ember_module)
    t_in, e_in = make_inputs(arrays, dtype)
    t_out = torch_module(*t_in)
    e_out = ember_module(*e_in)
    compare_outputs_and_grads(e_out, t_out, e_in, t_in, rtol, atol, seed)
    for (tn, tp), (en, ep) in zip(torch_module.named_parameters(),
                                  ember_module.named_parameters()):
        assert tn == en
        if tp.grad is None:
            assert ep.grad is None, tn
        else:
            assert_close(ep.grad, tp.grad, rtol, atol, what=f"grad of {tn}")
    for (tn, tb), (en, eb) in zip(torch_module.named_buffers(), ember_module.named_buffers()):
        assert tn == en
        assert_close(eb, tb, rtol, atol, what=f"buffer {tn}")
    return e_out, t_out


def compare_outputs_and_grads(e_out, t_out, e_in, t_in, rtol=None, atol=None, seed=0):
    assert_close(e_out, t_out, rtol, atol, what="output")
    if not t_out.requires_grad:
        return
    go = np.random.default_rng(seed).standard_normal(tuple(t_out.shape))
    t_out.backward(torch.tensor(go, dtype=t_out.dtype))
    e_out.backward(ember.tensor(go, dtype=e_out.dtype))
    for i, (e, t) in enumerate(zip(e_in, t_in)):
        if t.grad is None:
            assert e.grad is None, f"input {i}: torch computes no gradient, ember does"
        else:
            assert_close(e.grad, t.grad, rtol, atol, what=f"grad of input {i}")


def compare_function(e_fn, t_fn, arrays, dtype=torch.float32, rtol=None, atol=None, seed=0):
    t_in, e_in = make_inputs(arrays, dtype)
    t_out = t_fn(*t_in)
    e_out = e_fn(*e_in)
    compare_outputs_and_grads(e_out, t_out, e_in, t_in, rtol, atol, seed)
    return e_out, t_out


def node_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def torch_repr(module):
    return repr(module).replace("torch.", "ember.")


def outcome(fn):
    """(exception type name, message) or ('ok', None)."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return type(exc).__name__, str(exc).replace("torch.", "ember.")
    return "ok", None


def rand(*shape, seed=0, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def F(T):
    """torch.nn.functional or ember.nn.functional."""
    return T.nn.functional


def _weights(shape, dtype):
    return np.random.default_rng(1).standard_normal(tuple(shape)).astype(dtype)


def _observe(T, fn, *arrays):
    """fn(T, *tensors)'s outputs, the gradient of a random weighting of its first output with
    respect to each float input, and the node names of that output's graph."""
    xs = [T.tensor(a.copy(), requires_grad=a.dtype.kind == "f") for a in arrays]
    out = fn(T, *xs)
    y = out[0] if isinstance(out, tuple) else out
    w = T.tensor(_weights(y.shape, arrays[0].dtype))
    grads = T.autograd.grad((y * w).sum(), [x for x in xs if x.requires_grad])
    return out, grads, graph_names(y.grad_fn)


def param_grads(module):
    """{parameter name: its .grad} of a module."""
    return {name: p.grad for name, p in module.named_parameters()}
