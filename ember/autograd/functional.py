"""Higher-level derivatives built on autograd.grad: jacobian, hessian, vjp, jvp, hvp, vhp."""
from . import grad as _grad
from .grad_mode import enable_grad


def _tuple(x):
    from .._tensor import Tensor
    return ((x,), True) if isinstance(x, Tensor) else (tuple(x), False)


def _prepare(inputs, create_graph):
    return tuple(x.detach().requires_grad_(True) if not create_graph or not x._requires_grad
                 else x for x in inputs)


def _grads(outputs, inputs, grad_outputs, create_graph, strict=False):
    gs = _grad(outputs, inputs, grad_outputs, retain_graph=True, create_graph=create_graph,
               allow_unused=True)
    from ..ops.creation import zeros_like
    return tuple(g if g is not None else zeros_like(x) for g, x in zip(gs, inputs))


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        ins, single = _tuple(inputs)
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        outs, out_single = _tuple(out)
        vs = _tuple(v)[0] if v is not None else (None,) * len(outs)
        g = _grads(outs, ins, vs, create_graph)
    out_val = out if create_graph else (out.detach() if out_single else
                                        tuple(o.detach() for o in outs))
    return out_val, (g[0] if single else g)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    # double-vjp trick: J v = d/du (u^T J)^T v
    from ..ops.creation import zeros_like
    with enable_grad():
        ins, single = _tuple(inputs)
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        outs, out_single = _tuple(out)
        us = tuple(zeros_like(o).requires_grad_(True) for o in outs)
        gs = _grad(outs, ins, us, create_graph=True, allow_unused=True)
        vs = _tuple(v)[0] if v is not None else tuple(zeros_like(x) + 1 for x in ins)
        pairs = [(g, vv) for g, vv in zip(gs, vs) if g is not None]
        jv = _grad([p[0] for p in pairs], us, [p[1] for p in pairs],
                   create_graph=create_graph, allow_unused=True)
        jv = tuple(j if j is not None else zeros_like(o) for j, o in zip(jv, outs))
    out_val = out.detach() if out_single else tuple(o.detach() for o in outs)
    return out_val, (jv[0] if out_single else jv)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    from ..ops.creation import zeros_like
    from ..ops.joining import stack
    with enable_grad():
        ins, in_single = _tuple(inputs)
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        outs, out_single = _tuple(out)
        result = []
        for o in outs:
            rows = []
            flat = o.reshape(-1)
            for k in range(flat.shape[0]):
                g = _grads((flat[k],), ins, None, create_graph)
                rows.append(g)
            per_input = []
            for j, x in enumerate(ins):
                if rows:
                    J = stack([r[j] for r in rows]).reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    J = zeros_like(x).reshape(-1)[:0].reshape(tuple(o.shape) + tuple(x.shape))
                per_input.append(J if create_graph else J.detach())
            result.append(per_input[0] if in_single else tuple(per_input))
    return result[0] if out_single else tuple(result)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    ins, single = _tuple(inputs)

    def grad_fn(*xs):
        with enable_grad():
            out = func(*xs)
            g = _grads((out,), xs, None, create_graph=True)
        return g[0] if single else g
    return jacobian(grad_fn, inputs, create_graph=create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        ins, single = _tuple(inputs)
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        g = _grads((out,), ins, None, create_graph=True)
        vs = _tuple(v)[0]
        h = _grads(g, ins, vs, create_graph)
    return (out if create_graph else out.detach()), (h[0] if single else h)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    # the Hessian is symmetric for twice-differentiable functions: H v = v^T H
    return vhp(func, inputs, v, create_graph, strict)
