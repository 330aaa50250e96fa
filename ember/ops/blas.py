"""Matrix products: mm, bmm, mv, dot, outer, addmm, matmul, einsum, addmv, addr, baddbmm, addbmm,
kron, tensordot, inner, cross, matrix_power, multi_dot, chain_matmul, vecdot."""
import math
import numpy as np
import string

from .. import _dtype as D, _threads
from .._tensor import Tensor
from . import views as V
from ._linalg_common import _tname, _check_batches_broadcast, _with_out, _warn_once
from ._pointwise_common import unsupported, CPP_NAMES as _CPP_NAMES, _out, CPP_NAMES
from ._utils import wrap_dim
from .indexing import _scalar_name
from .hooks import autocast_entry
from .registry import backward_records_nothing, primitive
import warnings
from .creation import eye
from .linalg_solvers import inverse
from .reduction import sum as _sum
from .views import _unsafe_view


_BF16 = D.bfloat16.np


# float32 products with fewer multiply-adds than this accumulate in float64 (see _product).
# Up to here float64 costs at most ~20 us more than float32 BLAS; at 2^22 it cost 5-8x more
# (150-200 us per product in a small CNN's convolutions).
EXACT_PRODUCT_SIZE = 1 << 19


def _product(xp, a, b):
    """a @ b on arrays: the one matrix product of ember (matmul, linear and convolution).

    float16/bfloat16 are multiplied in float32 and rounded once, as PyTorch accumulates them
    (NumPy has no BLAS for them). Small float32 products with long dot products (64 terms or
    more) accumulate in float64 and round once: at that size it costs little, and the result
    no longer depends on how BLAS blocks and tiles the sums, so identical rows give identical
    results as in PyTorch (the seed notes' network of equal weights relies on it: equal
    logits). Shorter dot products stay in float32 BLAS: it does not split them, and they are
    most of a small CNN's backward products (float64 cost it ~10% of a training step).
    """
    kind, size = a.dtype.kind, a.dtype.itemsize
    if kind == "f" and size == 2 or a.dtype == _BF16:
        return xp.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    if kind == "f" and size == 4 and b.ndim > 1 and a.shape[-1] >= 64 and \
            max(a.size * b.shape[-1], b.size * a.shape[-2]) < EXACT_PRODUCT_SIZE:
        return xp.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    if xp is np and b.ndim > 1 and kind in "fc":
        return _threads.call_product(np.matmul, a, b)     # see ember/_threads.py
    return xp.matmul(a, b)


@primitive("mm", node="MmBackward0", save=("self", "mat2"), save_for={"self": "mat2"})
def _mm(xp, self, mat2):
    unsupported("addmm_impl_cpu_", self)
    return _product(xp, self, mat2)


@_mm.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    fast = _array_grads(grad, ctx.self if needs[1] else None, ctx.mat2, needs)
    if fast is not None:
        return fast
    return (grad.mm(ctx.mat2.t().conj()) if needs[0] else None,
            _grad_of_second(ctx.self, grad, ctx.mat2) if needs[1] else None)


def _grad_of_second(mat1, grad, mat2):
    """d(mat1 @ mat2)/d mat2, laid out in memory as mat2 is (as PyTorch does): for a
    transposed weight (`x @ w.t()`) the gradient then reaches `w` contiguous, so nothing
    transposes it again on its way into `w.grad`."""
    if mat2._data.flags.f_contiguous and not mat2._data.flags.c_contiguous:
        return grad.t().mm(mat1.conj()).t()
    return mat1.t().conj().mm(grad)


# torch.mm with a sparse operand: ember/sparse/_products.py puts its `product` here when it is
# imported (ember.sparse is built on the ops, so the ops cannot import it)
SPARSE_PRODUCT = [None]


@autocast_entry
def mm(input, mat2, *, out=None):
    if (input._data.__class__ is not np.ndarray or mat2._data.__class__ is not np.ndarray) \
            and (input.layout != "torch.strided" or mat2.layout != "torch.strided"):
        # (two NumPy arrays, the common case, are dense: the four checks only for others)
        if out is not None and mat2.is_sparse and not input.is_sparse:
            raise RuntimeError("expand is unsupported for Sparse tensors")
        return _out(SPARSE_PRODUCT[0](input, mat2), out, "mm", "mm")
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        if input.is_sparse:
            raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size "
                               f"{input.shape[1]}, got {mat2.shape[0]}")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x"
                           f"{input.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    if input._dtype is not mat2._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_CPP_NAMES[input._dtype.name]} != {_CPP_NAMES[mat2._dtype.name]}")
    return _out(_mm(input, mat2), out, "mm", "mm")


@primitive("bmm", node="BmmBackward0", save=("self", "mat2"),
           save_for={"self": "mat2", "mat2": "self"})
def _bmm(xp, self, mat2):
    unsupported("bmm", self)
    return _product(xp, self, mat2)


@_bmm.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    return (grad.bmm(ctx.mat2.transpose(1, 2).conj()) if needs[0] else None,
            ctx.self.transpose(1, 2).conj().bmm(grad) if needs[1] else None)


@autocast_entry
def bmm(input, mat2, *, out=None):
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, "
                           f"{mat2.shape[1]}].")
    if input._dtype is not mat2._dtype:
        raise RuntimeError(f"expected scalar type {_tname(input._dtype)} but found "
                           f"{_tname(mat2._dtype)}")
    return _out(_bmm(input, mat2), out, "bmm", "mm")


@primitive("mv", node="MvBackward0", save=("self", "vec"), save_for={"self": "vec", "vec": "self"})
def _mv(xp, self, vec):
    unsupported("addmv_impl_cpu", self)
    return _product(xp, self, vec)


@_mv.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    return (grad.unsqueeze(1) * ctx.vec.conj().unsqueeze(0) if needs[0] else None,
            ctx.self.t().conj().mv(grad) if needs[1] else None)


def mv(input, vec, *, out=None):
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input._data.ndim}, "
                           f"{vec._data.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x"
                           f"{input.shape[1]}), vec ({vec.shape[0]})")
    if input._dtype is not vec._dtype:
        v, m = _tname(vec._dtype), _tname(input._dtype)
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {v}, {m}, "
                           f"and {v}")
    return _out(_mv(input, vec), out, "mv", "mm")


@primitive("dot", node="DotBackward0", save=("self", "tensor"),
           save_for={"self": "tensor", "tensor": "self"})
def _dot(xp, self, tensor):
    unsupported("dot", self)
    if self.dtype.itemsize == 2 and self.dtype.kind not in "iu":
        return xp.asarray(xp.dot(self.astype(np.float32), tensor.astype(np.float32))).astype(
            self.dtype)
    return xp.asarray(xp.dot(self, tensor))


@_dot.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    return (grad * ctx.tensor.conj() if needs[0] else None,
            grad * ctx.self.conj() if needs[1] else None)


def dot(input, tensor, *, out=None):
    if input._data.ndim != 1 or tensor._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and "
                           f"{tensor._data.ndim}D tensors")
    if input._dtype is not tensor._dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_tname(input._dtype)} and {_tname(tensor._dtype)}")
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and "
                           f"src [{tensor.shape[0]}] to have the same number of elements, but "
                           f"got {input.shape[0]} and {tensor.shape[0]} elements respectively")
    return _out(_dot(input, tensor), out, "dot", "mm")


inner_product = dot


@primitive("addmm", node="AddmmBackward0", save=("mat1", "mat2"), promote=None,
           save_for={"mat1": "mat2"})
def _addmm(xp, self, mat1, mat2, *, beta, alpha):
    unsupported("addmm_impl_cpu_", mat1)
    if getattr(mat1, "_ember_sparse", False) or getattr(type(mat1), "_ember_csr", False):
        return mat1.addmm(self, mat2, beta, alpha)      # (torch's sparse kernel: ember/sparse)
    prod = _product(xp, mat1, mat2)
    dtype = mat1.dtype
    if alpha != 1:
        prod = prod * dtype.type(alpha)
    if beta == 0:                      # self is ignored, even its nan/inf (as in PyTorch)
        return xp.broadcast_to(prod, prod.shape).astype(dtype, copy=False)
    scaled = self if beta == 1 else self * dtype.type(beta)
    if prod.dtype == dtype:     # (prod is a fresh array: the bias goes into it, no new array)
        return xp.add(prod, scaled, out=prod)
    return (prod + scaled).astype(dtype, copy=False)


@_addmm.derivative
def _(ctx, grad):
    needs = ctx.needs_input_grad
    a, b = ctx.alpha, ctx.beta
    g_self = None
    if needs[0]:
        g_self = grad if b == 1 else grad * b
    fast = _array_grads(grad, ctx.mat1 if needs[2] else None, ctx.mat2, needs[1:])
    if fast is not None:
        g1, g2 = fast
    else:
        g1 = grad.mm(ctx.mat2.t().conj()) if needs[1] else None
        g2 = _grad_of_second(ctx.mat1, grad, ctx.mat2) if needs[2] else None
    if a != 1:
        g1 = g1 * a if g1 is not None else None
        g2 = g2 * a if g2 is not None else None
    return g_self, g1, g2


def _array_grads(grad, mat1, mat2, needs):
    """(grad @ mat2^T, mat1^T @ grad) of a real product, straight on the arrays, where the
    backward records nothing (no create_graph, no profiler, autocast or forward AD): the same
    products as the op calls above (so the same bits and layouts: the second laid out as
    mat2, see _grad_of_second), without their Python op calls. None where not applicable."""
    if not backward_records_nothing():
        return None
    dtype = grad._dtype
    if dtype._category != 2 or grad._data.__class__ is not np.ndarray or \
            mat2._dtype is not dtype or mat2._data.__class__ is not np.ndarray or \
            (mat1 is not None and (mat1._dtype is not dtype or
                                   mat1._data.__class__ is not np.ndarray)):
        return None
    g, b = grad._data, mat2._data
    g1 = Tensor._make(_product(np, g, b.T), dtype) if needs[0] else None
    g2 = None
    if needs[1]:
        a = mat1._data
        if b.flags.f_contiguous and not b.flags.c_contiguous:
            g2 = Tensor._make(_product(np, g.T, a).T, dtype)
        else:
            g2 = Tensor._make(_product(np, a.T, g), dtype)
    return g1, g2


def check_addmm_dtypes(input, mat1, mat2):
    """addmm's (and addbmm's) dtype errors: self against mat2 first, then mat1 against mat2."""
    for name, t in (("self", input), ("mat1", mat1)):
        if t._dtype is not mat2._dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{_tname(t._dtype)} and {_tname(mat2._dtype)}")


@autocast_entry
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    check_addmm_dtypes(input, mat1, mat2)           # (PyTorch checks dtypes before shapes)
    if mat1._data.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1._data.ndim}-D tensor")
    if mat2._data.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2._data.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    want = (mat1.shape[0], mat2.shape[1])
    have = tuple(input.shape)
    try:
        # (a bias row or a full-size input, the usual cases, without broadcast_shapes' cost)
        if have != want[1:] and have != want and np.broadcast_shapes(have, want) != want:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({want[1]}) must match the "
                           f"existing size ({input.shape[-1]}) at non-singleton dimension 1.  "
                           f"Target sizes: [{want[0]}, {want[1]}].  Tensor sizes: "
                           f"[{', '.join(map(str, input.shape))}]") from None
    beta, alpha = _check_scalars(mat1, beta, alpha)
    return _out(_addmm(input, mat1, mat2, beta=beta, alpha=alpha), out, "addmm", "mm")


def outer(input, vec2, *, out=None):
    for name, v in (("self", input), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    # PyTorch's graph: MulBackward0 over ViewBackward0 (input.reshape(-1, 1) * vec2)
    return _out(input.reshape(-1, 1) * vec2, out, "outer")


ger = outer


# ----------------------------------------------------------------------------- matmul
@primitive("squeeze_", node="SqueezeBackward4")
def _squeeze_result(xp, self, *, dim):
    # matmul's in-place squeeze of its own (fresh) mm result: PyTorch's node is SqueezeBackward4
    return xp.squeeze(self, axis=dim)


@_squeeze_result.derivative
def _(ctx, grad):
    return grad.unsqueeze(ctx.dim)


@autocast_entry
def matmul(input, other, *, out=None):
    """PyTorch's matmul, op for op (so the graph matches): dot / mv / mm for 1-D and 2-D
    operands; a batch folded into the rows of one mm/mv where that costs no copy (or saves a
    large gradient); otherwise broadcast batches through one bmm."""
    da, db = input._data.ndim, other._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if db > 2 and (input.is_sparse or other.is_sparse):
        raise RuntimeError("expand is unsupported for Sparse tensors")     # (as torch)
    if da == 1 and db == 1:
        result = dot(input, other)
    elif da == 2 and db == 1:
        result = mv(input, other)
    elif da == 1 and db == 2:
        if input.shape[0] != other.shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied (1x{input.shape[0]} "
                               f"and {other.shape[0]}x{other.shape[1]})")
        result = _squeeze_result(mm(input.unsqueeze(0), other), dim=0)
    elif da == 2 and db == 2:
        result = mm(input, other)
    elif _should_fold(input, other):
        result = _folded_matmul(input, other)
    else:
        result = _batched_matmul(input, other)
    return _out(result, out, "matmul", "mm")


def _should_fold(a, b):
    """Whether the larger operand's batch can be folded into the rows of one mm/mv."""
    a_larger = a._data.ndim >= b._data.ndim
    big = a if a_larger else b.mT
    small_ndim = b._data.ndim if a_larger else a._data.ndim
    if not (big._data.ndim >= 3 and 1 <= small_ndim <= 2):
        return False
    # folding keeps the smaller operand's gradient small (no expanded batch of it)
    if (b if a_larger else a)._requires_grad:
        return True
    if a._data.ndim == 2:       # the result would need a transposed copy
        return False
    if big._data.size == 0:
        return True
    # the fold is a view only if the leading dims are laid out one after another
    shape, strides = big.shape, big.stride()
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _folded_matmul(a, b):
    transpose = b._data.ndim > a._data.ndim
    if transpose:                # (b^T a^T)^T: fold b instead
        big, small = b.mT, (a.t() if a._data.ndim == 2 else a)
    else:
        big, small = a, b
    k = big.shape[-1]            # (an inner size mismatch is reported by mm/mv, as in PyTorch)
    out_shape = tuple(big.shape[:-1])
    rows = big.reshape(int(np.prod(out_shape)), k)
    if small._data.ndim == 2:
        out = _unsafe_view(mm(rows, small), shape=out_shape + (small.shape[1],))
        return out.mT.contiguous() if transpose else out
    return _unsafe_view(mv(rows, small), shape=out_shape)


def _batched_matmul(a, b):
    da, db = a._data.ndim, b._data.ndim
    # two 3-D operands, one with a batch of one that needs a gradient: squeeze that batch and
    # fold instead (its gradient is then one mm, not a sum over an expanded batch)
    if da == 3 and db == 3 and a.shape[0] != b.shape[0]:
        if a.shape[0] == 1 and a._requires_grad:
            return matmul(a.squeeze(0), b)
        if b.shape[0] == 1 and b._requires_grad:
            return matmul(a, b.squeeze(0))
    n = a.shape[-2] if da > 1 else 1
    k1 = a.shape[-1]
    k2 = b.shape[-2] if db > 1 else b.shape[0]
    m = b.shape[-1] if db > 1 else 1
    batch_a, batch_b = tuple(a.shape[:-2]), tuple(b.shape[:-2])
    if da == 1:                   # a vector is a one-row (or one-column) matrix
        a = a.unsqueeze(0)
    if db == 1:
        b = b.unsqueeze(-1)
    try:
        batch = tuple(np.broadcast_shapes(batch_a, batch_b))
    except ValueError:
        raise RuntimeError(_batch_mismatch(batch_a, batch_b)) from None
    if k1 != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{int(np.prod(batch))}, {k1}] but got: [{int(np.prod(batch))}, "
                           f"{k2}].")
    count = int(np.prod(batch))
    a3 = a.expand(batch + (n, k1)).reshape(count, n, k1)
    b3 = b.expand(batch + (k2, m)).reshape(count, k2, m)
    out_shape = batch + ((n,) if da > 1 else ()) + ((m,) if db > 1 else ())
    return _unsafe_view(bmm(a3, b3), shape=out_shape)


def _batch_mismatch(sa, sb):
    n = max(len(sa), len(sb))
    a = (1,) * (n - len(sa)) + sa
    b = (1,) * (n - len(sb)) + sb
    for i in range(n - 1, -1, -1):
        if a[i] != b[i] and a[i] != 1 and b[i] != 1:
            return (f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) "
                    f"at non-singleton dimension {i}")
    return "matmul: batch shapes do not broadcast"


# ----------------------------------------------------------------------------- einsum
# einsum is a composite, as in PyTorch: each operand is lined up (diagonals for repeated
# subscripts, size-1 dims for missing ones, one permute into a common order: the output dims,
# then the contracted ones), then the operands are folded left to right, each step an
# elementwise mul or, when a subscript is contracted for good, one bmm. The graph (permute /
# view / bmm / sum / mul nodes), the values and the gradients are then PyTorch's.
_SUBSCRIPTS = string.ascii_uppercase + string.ascii_lowercase    # sublist ints 0..51 map here


def _einsum_error(message):
    return RuntimeError(f"einsum(): {message}")


def _parse_einsum(equation, n_operands):
    """Split an equation into its input terms and its output (None when implicit), with
    PyTorch's checks and messages. A term is a list of letters, '...' standing for an ellipsis."""
    arrow = equation.find("->")
    end = arrow if arrow >= 0 else len(equation)
    terms, term, i = [], [], 0
    while i < end:
        c = equation[i]
        if c == ",":
            terms.append(term)
            term = []
        elif c == ".":
            if "..." in term:
                raise _einsum_error(f"found '.' for operand {len(terms)} for which an ellipsis "
                                    f"was already found")
            if equation[i:i + 3] != "..." or i + 3 > end:
                raise _einsum_error(f"found '.' for operand {len(terms)} that is not part of "
                                    f"any ellipsis")
            term.append("...")
            i += 2
        elif c.isascii() and c.isalpha():
            term.append(c)
        elif c != " ":
            raise _einsum_error(f"invalid subscript given at index {i} in the equation string, "
                                f"subscripts must be in [a-zA-Z]")
        i += 1
    terms.append(term)
    if len(terms) != n_operands:
        raise _einsum_error(f"{'more' if n_operands > len(terms) else 'fewer'} operands were "
                            f"provided than specified in the equation")
    if arrow < 0:
        return terms, None
    seen = {c for t in terms for c in t}
    output, i = [], arrow + 2
    while i < len(equation):
        c = equation[i]
        if c == ".":
            if "..." in output:
                raise _einsum_error("found '.' for output but an ellipsis (...) was already found")
            if equation[i:i + 3] != "...":
                raise _einsum_error("found '.' for output that is not part of any ellipsis (...)")
            output.append("...")
            i += 2
        elif c.isascii() and c.isalpha():
            if c not in seen:
                raise _einsum_error(f"output subscript {c} does not appear in the equation for "
                                    f"any input operand")
            if c in output:
                raise _einsum_error(f"output subscript {c} appears more than once in the output")
            output.append(c)
        elif c != " ":
            raise _einsum_error(f"invalid subscript given at index {i} in the equation string, "
                                f"subscripts must be in [a-zA-Z]")
        i += 1
    return terms, output


def _einsum_dims(terms, operands):
    """Each operand's dims as keys (a letter, or the int k for the k-th broadcast dim of the
    ellipsis, right-aligned) and the number of ellipsis dims; checks that the sizes of a key
    broadcast and that the repeated subscripts of one operand agree."""
    keys_of, sizes = [], {}
    for k, (term, op) in enumerate(zip(terms, operands)):
        ndim = op._data.ndim
        n = len(term) - ("..." in term)
        if "..." not in term and n != ndim:
            raise _einsum_error(f"the number of subscripts in the equation ({n}) does not match "
                                f"the number of dimensions ({ndim}) for operand {k} and no "
                                f"ellipsis was given")
        if n > ndim:
            raise _einsum_error(f"the number of subscripts in the equation ({n}) is more than "
                                f"the number of dimensions ({ndim}) for operand {k}")
        keys_of.append((term, ndim - n))
    n_ellipsis = max(covered for _, covered in keys_of)
    result = []
    for k, ((term, covered), op) in enumerate(zip(keys_of, operands)):
        keys = []
        for c in term:
            keys.extend(range(n_ellipsis - covered, n_ellipsis) if c == "..." else (c,))
        own = {}
        for d, (key, size) in enumerate(zip(keys, op.shape)):
            if key in own:
                if size != own[key]:
                    raise _einsum_error(f"subscript {key} is repeated for operand {k} but the "
                                        f"sizes don't match, {size} != {own[key]}")
                continue
            own[key] = size
            seen = sizes.get(key, 1)
            if size != 1 and seen != 1 and size != seen:
                if isinstance(key, int):
                    raise _einsum_error(f"dimension {d} covered by ellipsis in operand {k}has "
                                        f"size {size} which does not broadcast with previously "
                                        f"seen ellipsis with size {seen} for the respective "
                                        f"dimension")
                raise _einsum_error(f"subscript {key} has size {size} for operand {k} which "
                                    f"does not broadcast with previously seen size {seen}")
            if seen == 1:
                sizes[key] = size
        result.append(keys)
    return result, n_ellipsis


def _line_up(op, keys, order):
    """The operand with one dim per key of `order`: repeated subscripts become their diagonal
    (moved back to the first occurrence), missing keys become size-1 dims."""
    keys = list(keys)
    d = 1
    while d < len(keys):
        first = keys.index(keys[d])
        if first < d:
            op = op.diagonal(0, first, d)           # the diagonal lands last: move it back
            rest = list(range(op._data.ndim - 1))
            op = op.permute(rest[:first] + [len(rest)] + rest[first:])
            del keys[d]
        else:
            d += 1
    for key in order:
        if key not in keys:
            op = op.unsqueeze(len(keys))
            keys.append(key)
    return op.permute([keys.index(key) for key in order])


def _bmm_dims(a, b, contracted):
    """The other dims of a bmm of a and b: the batch (both have them), the rows (only a has
    them) and the columns (only b has them, or neither)."""
    batch, rows, cols = [], [], []
    for d in range(a._data.ndim):
        if d not in contracted:
            in_a, in_b = a._data.shape[d] != 1, b._data.shape[d] != 1
            (batch if in_a and in_b else rows if in_a else cols).append(d)
    return batch, rows, cols


def _sum_product(a, b, sum_dims):
    """a * b summed over `sum_dims` (kept as size-1 dims), as one bmm: the dims both operands
    have are the batch, those of one side only are its rows / columns."""
    contracted, a_only, b_only = [], [], []
    for d in sum_dims:
        in_a, in_b = a._data.shape[d] != 1, b._data.shape[d] != 1
        (contracted if in_a and in_b else a_only if in_a else b_only if in_b else []).append(d)
    # a dim to contract that only one operand has is summed there first
    if a_only:
        a = _sum(a, a_only, keepdim=True)
    if b_only:
        b = _sum(b, b_only, keepdim=True)
    if not contracted:
        return a * b
    batch, rows, cols = _bmm_dims(a, b, contracted)
    if rows and cols and max(cols) < min(rows):
        # PyTorch swaps the operands when all of b's dims come first in the output
        a, b = b, a
        batch, rows, cols = _bmm_dims(a, b, contracted)
    a_order = batch + rows + contracted + cols
    a_shape, b_shape = a._data.shape, b._data.shape
    n_batch, n_sum = math.prod(a_shape[d] for d in batch), math.prod(a_shape[d] for d in contracted)
    a3 = a.permute(a_order).reshape(n_batch, math.prod(a_shape[d] for d in rows), n_sum)
    b3 = b.permute(batch + contracted + cols + rows).reshape(
        n_batch, n_sum, math.prod(b_shape[d] for d in cols))
    shape = [a_shape[d] for d in batch + rows] + [1] * len(contracted) + \
        [b_shape[d] for d in cols]
    return bmm(a3, b3).view(shape).permute(sorted(range(len(a_order)), key=a_order.__getitem__))


def _sublist_equation(args):
    """einsum(op0, [0, 1], op1, [1, 2], [0, 2]): the equation string and the operands."""
    def term(sublist):
        out = []
        for s in sublist:
            if s is Ellipsis:
                out.append("...")
            elif not 0 <= s < len(_SUBSCRIPTS):
                raise ValueError("einsum(): subscript in subscript list is not within the "
                                 "valid range [0, 52)")
            else:
                out.append(_SUBSCRIPTS[s])
        return "".join(out)
    operands, terms = args[0:len(args) - len(args) % 2:2], args[1::2]
    equation = ",".join(term(t) for t in terms[:len(operands)])
    if len(args) % 2:
        equation += "->" + term(args[-1])
    return equation, operands


def einsum(*args):
    if args and isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    terms, output = _parse_einsum(equation, len(operands))
    keys_of, n_ellipsis = _einsum_dims(terms, operands)
    ellipsis = list(range(n_ellipsis))
    letters = [c for t in terms for c in t if c != "..."]
    if output is None:          # implicit: the broadcast dims, then the letters seen once
        out_keys = ellipsis + sorted(c for c in set(letters) if letters.count(c) == 1)
    else:
        out_keys = [k for c in output for k in (ellipsis if c == "..." else [c])]
    contracted = [k for k in ellipsis if k not in out_keys] + \
        sorted(c for c in set(letters) if c not in out_keys)
    order = out_keys + contracted
    ops = [_line_up(op, keys, order) for op, keys in zip(operands, keys_of)]
    n_out = len(out_keys)
    if len(ops) == 1:
        return _sum(ops[0], list(range(n_out, len(order)))) if contracted else ops[0]
    # a contracted key is summed at the step of the last operand that has it (keys of the
    # first operand alone: at the first step)
    last = {key: max(k for k, keys in enumerate(keys_of) if key in keys) for key in contracted}
    result = ops[0]
    for k in range(1, len(ops)):
        sum_dims = [n_out + i for i, key in enumerate(contracted) if max(last[key], 1) == k]
        result = _sum_product(result, ops[k], sum_dims)
    if contracted:
        result = result.view(result.shape[:n_out])     # drop the contracted (size-1) dims
    return result


# ---------------------------------------------------------------------------- cross
@primitive("linalg_cross", node="LinalgCrossBackward0", save=("input", "other"))
def _cross(xp, input, other, *, dim):
    return xp.cross(input, other, axis=dim)


@_cross.derivative
def _(ctx, grad):
    needs, dim = ctx.needs_input_grad, ctx.dim       # (conj: no-op for real inputs)
    return (_cross(ctx.other.conj(), grad, dim=dim) if needs[0] else None,
            _cross(grad, ctx.input.conj(), dim=dim) if needs[1] else None)


def linalg_cross(input, other, *, dim=-1):
    if input._data.ndim != other._data.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"expected scalar type {_tname(input._dtype)} but found "
                           f"{_tname(other._dtype)}")
    if input._dtype is D.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    axis = wrap_dim(dim, input._data.ndim)
    n, m = input._data.shape[axis], other._data.shape[axis]
    if n != 3 or m != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {n} "
                           f"and {m}")
    _check_batches_broadcast(input._data.shape, other._data.shape)
    return _cross(input, other, dim=axis)


def cross(input, other, dim=None):
    """torch.cross: without `dim`, the first dimension of size 3 of `input` (deprecated)."""
    if dim is None:
        if not _cross_warned:
            warnings.warn(_CROSS_NO_DIM, UserWarning, stacklevel=2)
            _cross_warned.append(True)
        sizes = input._data.shape
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
    return linalg_cross(input, other, dim=dim)


_cross_warned = []
_CROSS_NO_DIM = (
    "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the "
    "dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to "
    "agree with that of linalg.cross in a future release. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Cross.cpp:63.)")


# ---------------------------------------------------------------------------- products
@_with_out("linalg.multi_dot")
def multi_dot(tensors):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first_vector, last_vector = tensors[0].dim() == 1, tensors[-1].dim() == 1
    mats = list(tensors)
    if first_vector:
        mats[0] = mats[0].unsqueeze(0)
    if last_vector:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i, t in enumerate(mats):
        if t._dtype is not mats[0]._dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {_c10_name(mats[0]._dtype)} and tensor {i} "
                               f"{_c10_name(t._dtype)}")
        if t.dim() != 2:
            which = "first" if i == 0 else "last" if i == n - 1 else None
            if which:
                raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got "
                                   f"{tensors[i].dim()}D")
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            a, b = mats[i].shape, mats[i + 1].shape
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(a)} and {list(b)} cannot be multiplied")
    result = mats[0]
    for m in mats[1:]:
        result = result.mm(m)
    if first_vector:
        result = result.squeeze(0)
    if last_vector:
        result = result.squeeze(-1)
    return result


def _c10_name(dtype):
    """A dtype as PyTorch's C++ messages spell it ('float', 'long int', ...)."""
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}.get(
                str(dtype).split(".")[-1], str(dtype))


_chain_matmul_warned = []


@_with_out("chain_matmul")
def chain_matmul(*matrices):
    _warn_once(_chain_matmul_warned, _CHAIN_MATMUL_DEPRECATED)
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


_CHAIN_MATMUL_DEPRECATED = (
    "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
    "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
    "multiple parameters. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
    "LinearAlgebra.cpp:1102.)")


@_with_out("linalg.vecdot")
def vecdot(x, y, *, dim=-1):
    if x._dtype._category < 2:
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {_tname(x._dtype)}")
    if x._dtype is not y._dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {_tname(x._dtype)} and y of type {_tname(y._dtype)} "
                           f"instead")
    n, m = x._data.shape, y._data.shape
    if len(n) == len(m) == 1 and n != m:        # two vectors go to dot, which never broadcasts
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n[0]}] and src [{m[0]}] "
                           f"to have the same number of elements, but got {n[0]} and {m[0]} "
                           f"elements respectively")
    return (x.conj() * y).sum(dim)


# ----------------------------------------------------------------------------- products
def kron(input, other):
    n = max(input.dim(), other.dim())
    a = input.reshape((1,) * (n - input.dim()) + tuple(input.shape))
    b = other.reshape((1,) * (n - other.dim()) + tuple(other.shape))
    # a's dims interleaved with b's: (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...)
    a_shape, b_shape = [], []
    for sa, sb in zip(a.shape, b.shape):
        a_shape += [sa, 1]
        b_shape += [1, sb]
    prod = V._unsafe_view(a, shape=tuple(a_shape)) * V._unsafe_view(b, shape=tuple(b_shape))
    return V._unsafe_view(prod, shape=tuple(sa * sb for sa, sb in zip(a.shape, b.shape)))


def tensordot(a, b, dims=2, out=None):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a = list(range(a.dim() - dims, a.dim()))
        dims_b = list(range(dims))
    else:
        dims_a, dims_b = dims
        dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
        dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    dims_a = [wrap_dim(d, a.dim()) for d in dims_a]
    dims_b = [wrap_dim(d, b.dim()) for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} in "
                               f"dim {db}")
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    size = int(np.prod([a.shape[d] for d in dims_a]))
    left = a.permute(free_a + dims_a).reshape(-1, size)
    right = b.permute(dims_b + free_b).reshape(size, -1)
    result = left.mm(right).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])
    return _out(result, out, "tensordot")


def inner(input, other, *, out=None):
    if input.dim() == 0 or other.dim() == 0:
        result = input * other
    else:
        if input._dtype is not other._dtype:
            raise RuntimeError("both inputs should have same dtype")
        if input.shape[-1] != other.shape[-1]:
            raise RuntimeError(f"inner() the last dimension must match on both input tensors "
                               f"but got shapes {list(input.shape)} and {list(other.shape)}")
        result = tensordot(input, other, ([-1], [-1]))
    return _out(result, out, "inner")


def _scaled(t, factor):
    return t if factor == 1 else t * factor


def _add_product_backward(ctx, grad, product_grads):
    """(self, a, b) gradients of beta * self + alpha * product(a, b)."""
    needs = ctx.needs_input_grad
    g_self = None
    if needs[0]:
        g_self = grad * 0 if ctx.beta == 0 else _scaled(grad, ctx.beta)
    ga, gb = product_grads(_scaled(grad, ctx.alpha), needs)
    return g_self, ga, gb


def _add_product(xp, self, product, beta, alpha):
    dtype = product.dtype
    if alpha != 1:
        product = product * dtype.type(alpha)
    if beta == 0:                       # self is ignored, even its nan/inf (as in PyTorch)
        return xp.broadcast_to(product, np.broadcast_shapes(self.shape, product.shape)).copy()
    return (product + (self if beta == 1 else self * dtype.type(beta))).astype(dtype, copy=False)


@primitive("addmv", node="AddmvBackward0", save=("mat", "vec"))
def _addmv(xp, self, mat, vec, *, beta, alpha):
    return _add_product(xp, self, _product(xp, mat, vec), beta, alpha)


@_addmv.derivative
def _(ctx, grad):
    def grads(g, needs):
        return (g.unsqueeze(1) * ctx.vec.unsqueeze(0) if needs[1] else None,
                ctx.mat.t().mv(g) if needs[2] else None)
    return _add_product_backward(ctx, grad, grads)


@primitive("addr", node="AddrBackward0", save=("vec1", "vec2"))
def _addr(xp, self, vec1, vec2, *, beta, alpha):
    return _add_product(xp, self, xp.multiply.outer(vec1, vec2), beta, alpha)


@_addr.derivative
def _(ctx, grad):
    def grads(g, needs):
        return (g.mv(ctx.vec2) if needs[1] else None,
                g.t().mv(ctx.vec1) if needs[2] else None)
    return _add_product_backward(ctx, grad, grads)


@primitive("baddbmm", node="BaddbmmBackward0", save=("batch1", "batch2"))
def _baddbmm(xp, self, batch1, batch2, *, beta, alpha):
    return _add_product(xp, self, _product(xp, batch1, batch2), beta, alpha)


@_baddbmm.derivative
def _(ctx, grad):
    def grads(g, needs):
        return (g.bmm(ctx.batch2.transpose(1, 2)) if needs[1] else None,
                ctx.batch1.transpose(1, 2).bmm(g) if needs[2] else None)
    return _add_product_backward(ctx, grad, grads)


@primitive("addbmm", node="AddbmmBackward0", save=("batch1", "batch2"))
def _addbmm(xp, self, batch1, batch2, *, beta, alpha):
    return _add_product(xp, self, _product(xp, batch1, batch2).sum(0), beta, alpha)


@_addbmm.derivative
def _(ctx, grad):
    def grads(g, needs):
        g = g.unsqueeze(0).expand(ctx.input_shape(1)[0], *g.shape)
        return (g.bmm(ctx.batch2.transpose(1, 2)) if needs[1] else None,
                ctx.batch1.transpose(1, 2).bmm(g) if needs[2] else None)
    return _add_product_backward(ctx, grad, grads)


def _check_same_dtype(*tensors):
    first = tensors[0]._dtype
    for t in tensors[1:]:
        if t._dtype is not first:
            raise RuntimeError(f"expected scalar type {_scalar_name(first)} but found "
                               f"{_scalar_name(t._dtype)}")


def _check_scalars(t, beta, alpha, strict=False):
    """(beta, alpha) for t's dtype: for integer tensors PyTorch truncates float factors
    (addmm, addmv, baddbmm, addbmm) or refuses them (strict: addr)."""
    if t._dtype._category < 2:
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float) and strict:
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                                   f"floating point number.")
        beta, alpha = (int(v) if isinstance(v, float) else v for v in (beta, alpha))
    return beta, alpha


def _check_broadcasts(input, shape, op):
    try:
        ok = np.broadcast_shapes(tuple(input.shape), tuple(shape)) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        input.expand(shape)         # raises PyTorch's expand error
        raise RuntimeError(f"{op}: input shape {list(input.shape)} cannot broadcast to "
                           f"{list(shape)}")


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None, _inplace=False):
    if mat.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, "
                           f"{vec.dim()}")
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.dim() else 1}), "
                           f"mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    if not input._dtype is mat._dtype is vec._dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_scalar_name(input._dtype)}, {_scalar_name(mat._dtype)}, and "
                           f"{_scalar_name(vec._dtype)}")
    beta, alpha = _check_scalars(mat, beta, alpha)
    _check_broadcasts(input, (mat.shape[0],), "addmv")
    if _inplace:
        return _addmv.inplace(input, mat, vec, beta=beta, alpha=alpha)
    return _out(_addmv(input, mat, vec, beta=beta, alpha=alpha), out, "addmv")


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None, _inplace=False):
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D"
                           if vec1.dim() != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    _check_same_dtype(input, vec1, vec2)
    _check_scalars(vec1, beta, alpha, strict=True)
    _check_broadcasts(input, (vec1.shape[0], vec2.shape[0]), "addr")
    if _inplace:
        return _addr.inplace(input, vec1, vec2, beta=beta, alpha=alpha)
    return _out(_addr(input, vec1, vec2, beta=beta, alpha=alpha), out, "addr")


def _check_batches(batch1, batch2):
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: "
                           f"[{batch2.shape[0]}, {batch2.shape[1]}].")


@autocast_entry
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None, _inplace=False):
    if input._dtype is not batch1._dtype:        # (checked before the shapes)
        raise RuntimeError(f"Input dtypes must be the same, got: input "
                           f"{CPP_NAMES[input._dtype.name]}, batch1: "
                           f"{CPP_NAMES[batch1._dtype.name]}, batch2: "
                           f"{CPP_NAMES[batch2._dtype.name]}")
    _check_batches(batch1, batch2)
    if _inplace and batch2._dtype is not input._dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype "
                           f"{CPP_NAMES[input._dtype.name]} and output tensor dtype "
                           f"{CPP_NAMES[batch2._dtype.name]} should match")
    _check_same_dtype(input, batch1, batch2)
    beta, alpha = _check_scalars(batch1, beta, alpha)
    _check_broadcasts(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]), "baddbmm")
    if _inplace:
        return _baddbmm.inplace(input, batch1, batch2, beta=beta, alpha=alpha)
    return _out(_baddbmm(input, batch1, batch2, beta=beta, alpha=alpha), out, "baddbmm")


@autocast_entry
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None, _inplace=False):
    _check_batches(batch1, batch2)
    check_addmm_dtypes(input, batch1, batch2)
    beta, alpha = _check_scalars(batch1, beta, alpha)
    _check_broadcasts(input, (batch1.shape[1], batch2.shape[2]), "addbmm")
    if _inplace:
        return _addbmm.inplace(input, batch1, batch2, beta=beta, alpha=alpha)
    return _out(_addbmm(input, batch1, batch2, beta=beta, alpha=alpha), out, "addbmm")


def matrix_power(input, n):
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        if input.dim() < 2:
            raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                               "dimensions.")
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {input.shape[-2]} by {input.shape[-1]} matrices")
    if n == 0:
        # PyTorch copies the identity into a clone of input (CopyBackwards: a zero gradient)
        return input.clone().copy_(eye(input.shape[-1], dtype=input._dtype).expand(input.shape))
    if n < 0:
        input, n = inverse(input), -n
    # binary powering: the squares of input, multiplied in where n has a one bit
    result, square = None, input
    while n:
        if n & 1:
            result = square if result is None else result.matmul(square)
        n >>= 1
        if n:
            square = square.matmul(square)
    return result.clone() if result is input else result


def _inplace_product(fn):
    """x.addmv_(...): the op's own check and node, written into x (Op.inplace). In-place forms
    are not autocast (as in torch), so the undecorated function runs."""
    fn = getattr(fn, "__wrapped__", fn)

    def method(self, *args, **kwargs):
        return fn(self, *args, _inplace=True, **kwargs)
    return method


__all__ = ['kron', 'tensordot', 'inner', 'addmv', 'addr', 'baddbmm', 'addbmm', 'matrix_power']
