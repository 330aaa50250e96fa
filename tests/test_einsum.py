"""einsum vs torch: PyTorch builds einsum from permute / view / bmm / sum / mul ops, and so does
ember: the graph (node names, nesting), values, gradients (first and second order), views
and error messages must be torch's."""
import numpy as np
import pytest

import ember
from differential import same, catch

# (equation, operand shapes): the common forms, ellipsis broadcasting, size-1 broadcasting,
# diagonals, sums of dims only one operand has, empty dims
CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("i,i->", [(3,), (3,)]), ("i,j->ij", [(3,), (4,)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]), ("ij->ji", [(2, 3)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ijk->i", [(2, 3, 4)]), ("...i,...i->...", [(2, 1, 3), (4, 3)]), ("ij", [(2, 3)]),
    ("ij->ij", [(2, 3)]), ("ij,ij->ij", [(2, 3), (2, 3)]), ("ij,ij->", [(2, 3), (2, 3)]),
    ("ij->", [(2, 3)]), ("ij,j->i", [(2, 3), (3,)]), ("ij,i->j", [(2, 3), (2,)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("iij->j", [(3, 3, 2)]),
    ("iijj->ij", [(2, 2, 3, 3)]), ("jii->ij", [(3, 2, 2)]), ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("i,i->i", [(3,), (3,)]), ("ii->", [(3, 3)]), ("ji", [(2, 3)]), ("Ba", [(2, 3)]),
    ("ijk,ikl->ijl", [(2, 3, 4), (2, 4, 5)]), ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("i,i,i->", [(3,), (3,), (3,)]), ("ij,kl->ijkl", [(2, 3), (4, 5)]),
    ("ij,jk->i", [(2, 3), (3, 4)]), ("ij,jk->", [(2, 3), (3, 4)]), ("ij,j->j", [(2, 3), (3,)]),
    ("ij,jk,k->i", [(2, 3), (3, 4), (4,)]), ("ij,jk->ik", [(1, 3), (3, 1)]),
    ("ij,jk->ik", [(2, 3), (3, 1)]), ("ij,jk->ik", [(2, 1), (3, 4)]),
    ("ij,ij->j", [(2, 3), (1, 3)]), ("ij,ij->j", [(1, 3), (2, 3)]),
    ("...ij->j", [(2, 3, 4, 5)]), ("i...->...", [(2, 3, 4)]),
    ("...ij,...jk", [(2, 1, 2, 3), (3, 3, 4)]), ("ij...,j->i", [(2, 3, 4), (3,)]),
    ("...i,...i", [(2, 3), (3,)]), ("ij,jk->ki", [(2, 3), (3, 4)]), ("ij,ji->", [(2, 3), (3, 2)]),
    ("i,ii->i", [(3,), (3, 3)]), ("bij,bkj,bk->bi", [(2, 3, 4), (2, 5, 4), (2, 5)]),
    # torch swaps the bmm operands when all of the second one's dims come first in the output
    ("bij,bjk->kbi", [(5, 2, 3), (5, 3, 4)]), ("aij,jk->kai", [(5, 2, 3), (3, 4)]),
    ("xij,jky->kyxi", [(6, 2, 3), (3, 4, 7)]), ("xij,jky->kxyi", [(6, 2, 3), (3, 4, 7)]),
    ("tij,tjk->tki", [(1, 2, 3), (1, 3, 4)]), ("ijt,jkt->kit", [(2, 3, 1), (3, 4, 1)]),
    ("ij,jkm->ki", [(2, 3), (3, 4, 5)]), ("ai,ij,jk->ka", [(5, 2), (2, 3), (3, 4)]),
    ("ij,jk,kl->li", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk->ik", [(0, 3), (3, 4)]), ("ij,jk->ik", [(2, 0), (0, 4)]),
]
IDS = [f"{eq}|{shapes}" for eq, shapes in CASES]
GRAPH_CASES = [pytest.param(*case, id=i) for case, i in zip(CASES, IDS)]


def tree(node):
    """The graph below a node as nested (name, children) tuples."""
    if node is None:
        return None
    return (node.name(), tuple(tree(fn) for fn, _ in node.next_functions))


def _inputs(lib, shapes, dtype="float64", needs=None, seed=0):
    rng = np.random.default_rng(seed)
    needs = needs or [True] * len(shapes)
    out = []
    for s, g in zip(shapes, needs):
        a = rng.standard_normal(s)
        if dtype.startswith("complex"):
            a = a + 1j * rng.standard_normal(s)
        out.append(lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=g))
    return out


@pytest.mark.parametrize("eq, shapes", GRAPH_CASES)
def test_graph_values_and_grads(eq, shapes):
    def scenario(T):
        ops = _inputs(T, shapes)
        out = T.einsum(eq, *ops)
        grads = T.autograd.grad(out, ops, T.ones_like(out) * 0.5 + out.detach(),
                                allow_unused=True)
        return out, tree(out.grad_fn), grads
    same(scenario, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("eq, shapes", CASES[:12] + CASES[20:24], ids=IDS[:12] + IDS[20:24])
def test_some_operands_need_grad(eq, shapes):
    # nodes only where an operand needs a gradient, as in torch
    for k in range(len(shapes)):
        needs = [i == k for i in range(len(shapes))]

        def scenario(T):
            out = T.einsum(eq, *_inputs(T, shapes, needs=needs))
            return out, tree(out.grad_fn)
        same(scenario)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("eq, shapes", [c for c in CASES if 0 not in sum(c[1], ())],
                         ids=[i for c, i in zip(CASES, IDS) if 0 not in sum(c[1], ())])
def test_gradcheck_gradgradcheck(eq, shapes, dtype):
    # (sizes above 2 cut to 2: the same structure, a smaller Jacobian)
    ops = _inputs(ember, [tuple(min(n, 2) for n in s) for s in shapes], dtype)
    fn = lambda *xs: ember.einsum(eq, *xs)        # noqa: E731
    assert ember.autograd.gradcheck(fn, ops)
    assert ember.autograd.gradgradcheck(fn, ops)


@pytest.mark.parametrize("eq, shapes", [("ij,jk->ik", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
                                        ("i,j->ij", [(3,), (4,)])], ids=str)
def test_complex_and_float32(eq, shapes):
    for dtype in ("complex64", "float32"):
        def scenario(T):
            ops = _inputs(T, shapes, dtype)
            out = T.einsum(eq, *ops)
            return out, T.autograd.grad(out.abs().sum(), ops)
        same(scenario, rtol=1e-4, atol=1e-5)


def test_no_grad_results_are_views_as_in_torch():
    def scenario(T):
        x = T.arange(9.).reshape(3, 3)
        outs = [T.einsum("ij->ji", x), T.einsum("ii->i", x), T.einsum("ij,jk->ik", x, x)]
        return [(o, o._base is x, o.is_contiguous(), o.stride()) for o in outs]
    same(scenario)


def test_integer_and_mixed_dtypes():
    def scenario(T):
        i32 = T.arange(6, dtype=T.int32).reshape(2, 3)
        f32, f64 = T.ones(3), T.ones(3, dtype=T.float64)
        return [T.einsum("ij->", i32), T.einsum("ij,ij->", i32, i32),
                T.einsum("ij,ij->i", i32, i32), T.einsum("i,j->ij", f32, f64),
                catch(T.einsum, "i,i->", f32, f64), catch(T.einsum, "ij,ij->", i32 > 1, i32 > 1)]
    same(scenario)


def test_operand_forms():
    def scenario(T):
        a, b = T.ones(2, 3), T.arange(12.).reshape(3, 4)
        return [T.einsum("ij,jk", [a, b]), T.einsum(a, [0, 1], b, [1, 2], [0, 2]),
                T.einsum(a, [27, 0]), T.einsum(a, [27, 0], [0]), T.einsum(a, [0, Ellipsis]),
                catch(T.einsum, a, [0, 52]), catch(T.einsum, a, [0, -1])]
    same(scenario)


ERRORS = [
    ("ij,jk->ik", [(2, 3), (4, 5)]), ("ij,jk->ik", [(2, 3)]), ("ij", [(2, 3), (2, 3)]),
    ("ij->ik", [(2, 3)]), ("ij->ii", [(2, 3)]), ("ijk->i", [(2, 3)]), ("i->i", [(2, 3)]),
    ("ii->i", [(2, 3)]), ("i1->i", [(2, 3)]), ("i.j->", [(2, 3)]), ("i...j...->", [(2, 3)]),
    ("", [(2, 3)]), ("ij->", []), ("i,i", [(2,), (3,)]), ("...i,...i", [(2, 3), (4, 3)]),
    ("...i,...i", [(5, 2, 3), (4, 3)]), ("...i,...i", [(4, 3), (2, 5, 3)]),
    ("ij->j-", [(2, 3)]), ("ij-->j", [(2, 3)]), ("...ij->", [(2,)]), ("i...jk->", [(2, 2)]),
    ("ij->i.", [(2, 3)]), ("...ij->......", [(2, 3)]), ("ij->.", [(2, 3)]),
    ("ij->i..", [(2, 3)]), ("i,,i", [(2,), (3,), (3,)]), ("ij,ij->ij,", [(2, 3), (2, 3)]),
    ("ij,ij->i->j", [(2, 3), (2, 3)]),
]


@pytest.mark.parametrize("eq, shapes", ERRORS, ids=[f"{e!r}|{s}" for e, s in ERRORS])
def test_errors(eq, shapes):
    result = same(lambda T: catch(T.einsum, eq, *[T.ones(s) for s in shapes]))
    assert result[0] == "raised"


def test_accepted_forms():
    def scenario(T):
        return [T.einsum("i j -> j", T.ones(2, 3)), T.einsum("...->", T.ones(2, 3)),
                T.einsum("ij->...", T.ones(2, 3)), T.einsum("iI", T.ones(2, 2)),
                T.einsum("Ab,bA->A", T.ones(2, 3), T.ones(3, 2))]
    same(scenario)
