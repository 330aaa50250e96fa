"""Matrix products. matmul is a composite that picks dot/mv/mm/bmm as PyTorch's graph shows."""
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from .registry import primitive, COMMON


def _check_same_dtype(a, b, name):
    if a._dtype is not b._dtype:
        from .._printing import scalar_type_name
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a._dtype.name} != {b._dtype.name}" if name in ("mm", "addmm")
                           else f"expected scalar type {scalar_type_name(a._dtype)} but found "
                           f"{scalar_type_name(b._dtype)}")


@primitive("mm", node="MmBackward0", save=("self", "mat2"))
def _mm(xp, self, mat2):
    return xp.matmul(self, mat2)


@_mm.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    return (grad.mm(ctx.mat2.t()) if needs[0] else None,
            ctx.self.t().mm(grad) if needs[1] else None)


def mm(input, mat2, *, out=None):
    if input._data.ndim != 2:
        raise RuntimeError(f"self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x"
                           f"{input.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    _check_same_dtype(input, mat2, "mm")
    from .pointwise import _out
    return _out(_mm(input, mat2), out)


@primitive("bmm", node="BmmBackward0", save=("self", "mat2"))
def _bmm(xp, self, mat2):
    return xp.matmul(self, mat2)


@_bmm.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    return (grad.bmm(ctx.mat2.transpose(1, 2)) if needs[0] else None,
            ctx.self.transpose(1, 2).bmm(grad) if needs[1] else None)


def bmm(input, mat2, *, out=None):
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, "
                           f"{mat2.shape[1]}].")
    _check_same_dtype(input, mat2, "bmm")
    return _bmm(input, mat2)


@primitive("mv", node="MvBackward0", save=("self", "vec"))
def _mv(xp, self, vec):
    return xp.matmul(self, vec)


@_mv.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    return (grad.unsqueeze(1) * ctx.vec.unsqueeze(0) if needs[0] else None,
            ctx.self.t().mv(grad) if needs[1] else None)


def mv(input, vec, *, out=None):
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input._data.ndim}, "
                           f"{vec._data.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x"
                           f"{input.shape[1]}), vec ({vec.shape[0]})")
    _check_same_dtype(input, vec, "mv")
    return _mv(input, vec)


@primitive("dot", node="DotBackward0", save=("self", "tensor"))
def _dot(xp, self, tensor):
    return xp.dot(self, tensor)


@_dot.derivative
def _(ctx, grad):
    return grad * ctx.tensor, grad * ctx.self


def dot(input, tensor, *, out=None):
    if input._data.ndim != 1 or tensor._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and "
                           f"{tensor._data.ndim}D tensors")
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and "
                           f"src [{tensor.shape[0]}] to have the same number of elements, but "
                           f"got {input.shape[0]} and {tensor.shape[0]} elements respectively")
    if input._dtype is not tensor._dtype:
        from .._printing import scalar_type_name
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{scalar_type_name(input._dtype)} and "
                           f"{scalar_type_name(tensor._dtype)}")
    return _dot(input, tensor)


inner_product = dot


@primitive("addmm", node="AddmmBackward0", save=("mat1", "mat2"), promote=None)
def _addmm(xp, self, mat1, mat2, *, beta, alpha):
    prod = xp.matmul(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod.astype(mat1.dtype, copy=False)
    return (prod + (self if beta == 1 else self * beta)).astype(mat1.dtype, copy=False)


@_addmm.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    a, b = ctx.alpha, ctx.beta
    g_self = (grad if b == 1 else grad * b) if needs[0] else None
    g1 = grad.mm(ctx.mat2.t()) if needs[1] else None
    g2 = ctx.mat1.t().mm(grad) if needs[2] else None
    if a != 1:
        g1 = g1 * a if g1 is not None else None
        g2 = g2 * a if g2 is not None else None
    return g_self, g1, g2


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if mat1._data.ndim != 2 or mat2._data.ndim != 2:
        raise RuntimeError("mat1 must be a matrix, got " f"{mat1._data.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    _check_same_dtype(mat1, mat2, "addmm")
    from .pointwise import _out
    return _out(_addmm(input, mat1, mat2, beta=beta, alpha=alpha), out)


def outer(input, vec2, *, out=None):
    return input.reshape(-1, 1) * vec2


ger = outer


def matmul(input, other, *, out=None):
    """PyTorch's matmul: dot / mv / mm / folded mm / broadcast bmm by the operands' ranks."""
    da, db = input._data.ndim, other._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        result = dot(input, other)
    elif da == 2 and db == 1:
        result = mv(input, other)
    elif da == 1 and db == 2:
        _check_inner(input.shape[0], other.shape[0], (1, input.shape[0]), other.shape)
        result = mm(input.unsqueeze(0), other).squeeze(0)
    elif da == 2 and db == 2:
        result = mm(input, other)
    elif da >= 3 and db <= 2:
        # fold the batch into rows: one GEMM
        k = input.shape[-1]
        rows = input.reshape(-1, k)
        if db == 1:
            _check_inner(k, other.shape[0], input.shape, other.shape)
            from .views import _unsafe_view
            result = _unsafe_view(mv(rows, other), shape=tuple(input.shape[:-1]))
        else:
            _check_inner(k, other.shape[0], input.shape, other.shape)
            from .views import _unsafe_view
            result = _unsafe_view(mm(rows, other),
                                  shape=tuple(input.shape[:-1]) + (other.shape[-1],))
    else:
        result = _batched_matmul(input, other)
    from .pointwise import _out
    return _out(result, out)


def _check_inner(k1, k2, sa, sb):
    if k1 != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({int(np.prod(sa[:-1]))}x{sa[-1]} and "
                           f"{sb[0]}x{sb[-1] if len(sb) > 1 else 1})")


def _batched_matmul(a, b):
    from .views import _unsafe_view
    a_vec, b_vec = a._data.ndim == 1, b._data.ndim == 1
    if a_vec:
        a = a.unsqueeze(0)
    if b_vec:
        b = b.unsqueeze(-1)
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{int(np.prod(b.shape[:-2]))}, {a.shape[-1]}] but got: "
                           f"[{int(np.prod(b.shape[:-2]))}, {b.shape[-2]}].")
    try:
        batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({a.shape[-3]}) must match the size of tensor "
                           f"b ({b.shape[-3]}) at non-singleton dimension 0") from None
    n, k, m = a.shape[-2], a.shape[-1], b.shape[-1]
    if a._data.ndim == 3 and b._data.ndim == 3 and tuple(a.shape[:-2]) == tuple(b.shape[:-2]):
        out = bmm(a, b)
    else:
        a3 = a.expand(batch + (n, k)).reshape(-1, n, k)
        b3 = b.expand(batch + (k, m)).reshape(-1, k, m)
        out = _unsafe_view(bmm(a3, b3), shape=batch + (n, m))
    if a_vec:
        out = out.squeeze(-2)
    if b_vec:
        out = out.squeeze(-1)
    return out


@primitive("einsum", node="EinsumBackward0", promote=COMMON, save=("operands",))
def _einsum(xp, *operands, equation):
    return xp.einsum(equation, *operands, optimize=len(operands) > 2)


@_einsum.derivative
def _(ctx, grad):
    # d/d operand_i: contract the output gradient with every other operand
    lhs, out_spec = _split_equation(ctx.equation, len(ctx.operands))
    ops = ctx.operands
    grads = []
    for i, spec in enumerate(lhs):
        if not ctx.needs_input_grad[i]:
            grads.append(None)
            continue
        others = [s for j, s in enumerate(lhs) if j != i]
        tensors = [t for j, t in enumerate(ops) if j != i]
        # letters of this operand missing from everything else are summed-out: broadcast back
        available = set(out_spec) | set("".join(others))
        keep = "".join(c for c in dict.fromkeys(spec) if c in available)
        eq = ",".join([out_spec] + others) + "->" + keep
        g = einsum(eq, grad, *tensors)
        grads.append(_expand_to_spec(g, keep, spec, ops[i].shape))
    return tuple(grads)


def _expand_to_spec(g, keep, spec, shape):
    sizes = dict(zip(spec, shape))
    # insert the missing letters as broadcast dims, then take repeated-letter diagonals
    full = "".join(dict.fromkeys(spec))
    view_shape = [sizes[c] if c in keep else 1 for c in full]
    order = [keep.index(c) for c in full if c in keep]
    g = g.permute(order) if order != list(range(len(order))) else g
    g = g.reshape(view_shape).expand([sizes[c] for c in full])
    if full == spec:
        return g
    # repeated letters (a diagonal, e.g. 'ii'): place g on the diagonal
    return _place_diag(g, full, spec, sizes)


def _place_diag(g, full, spec, sizes):
    idx = np.indices([sizes[c] for c in spec])
    pos = {}
    mask = np.ones([sizes[c] for c in spec], bool)
    for axis, c in enumerate(spec):
        if c in pos:
            mask &= idx[axis] == idx[pos[c]]
        else:
            pos[c] = axis
    src = [idx[pos[c]] for c in full]
    gathered = g[tuple(Tensor._make(s.astype(np.int64), D.int64) for s in src)]
    from .pointwise import where
    return where(Tensor._make(mask, D.bool_), gathered, gathered * 0)


def _split_equation(eq, n):
    eq = eq.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs = eq
        letters = lhs.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return lhs.split(","), out


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if "..." in equation:
        return Tensor._make(np.einsum(equation, *[o._data for o in operands]))
    lhs, out = _split_equation(equation, len(operands))
    if len(lhs) != len(operands):
        raise RuntimeError(f"einsum(): more operands were provided than specified in the "
                           f"equation" if len(operands) > len(lhs) else
                           "einsum(): fewer operands were provided than specified in the "
                           "equation")
    return _einsum(operands, equation=",".join(lhs) + "->" + out)
