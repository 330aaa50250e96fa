"""meshgrid, repeat_interleave, take, index_fill, addmv, cdist, cov, ... against torch: values,
dtypes, shapes, gradients, node names, errors."""
import numpy as np
import pytest
import torch

import ember
import types
from ember.ops import shape as _shape, indexing as _indexing, blas as _blas, norms as _norms
from ember.ops import statistics as _statistics
# the ops this file tests, from the modules that hold them now
_SX_MODULES = (_shape, _indexing, _blas, _norms, _statistics)
SX = types.SimpleNamespace(**{n: getattr(m, n) for m in _SX_MODULES for n in m.__all__},
                           __all__=[n for m in _SX_MODULES for n in m.__all__])
from differential import same, catch, warnings_of


class _EmberWithExtras:
    """ember's namespace with this module's functions on top (until ember/__init__ imports them)."""

    def __getattr__(self, name):
        return getattr(SX, name) if name in SX.__all__ else getattr(ember, name)


EMBER = _EmberWithExtras()


def ns(T):
    return torch if T is torch else EMBER


def _rng(seed=0):
    return np.random.default_rng(seed)


def _arrays(specs, seed=0):
    """Arrays from specs: a shape tuple (random float32), or an array as it is."""
    rng = _rng(seed)
    return [rng.standard_normal(s).astype(np.float32) if isinstance(s, tuple) else s
            for s in specs]


def forward_backward(fn, specs, grad=True, dtype=None):
    """A scenario: fn(T, *tensors) and, for float inputs, the gradients of a weighted sum."""
    arrays = _arrays(specs)

    def scenario(T):
        M = ns(T)
        ts = []
        for a in arrays:
            t = T.tensor(a if dtype is None or a.dtype.kind != "f" else a.astype(dtype))
            if grad and a.dtype.kind == "f":
                t.requires_grad_(True)
            ts.append(t)
        out = fn(M, *ts)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        result = [list(outs)]
        if grad:
            result.append([o.grad_fn.name() if o.grad_fn is not None else None for o in outs])
            total = 0
            for k, o in enumerate(outs):
                w = T.tensor(_rng(k + 7).standard_normal(tuple(o.shape)).astype(
                    str(o.dtype).split(".")[-1]))
                total = total + (o * w).sum()
            leaves = [t for t in ts if t.requires_grad]
            if leaves:
                total.backward()
                result.append([t.grad for t in leaves])
        return result
    return scenario


def names_of(fn, specs):
    """Only the output's node name(s) (for ops whose node differs in ember, not compared)."""
    return forward_backward(fn, specs)


# ----------------------------------------------------------------------------- shapes
@pytest.mark.parametrize("fn,specs", [
    (lambda M, x: M.broadcast_to(x, (2, 3)), [(3,)]),
    (lambda M, x: M.broadcast_to(x, (4, 2, 3)), [(2, 1)]),
    (lambda M, x: x.broadcast_to((2, -1)), [(3,)]),
    (lambda M, x: M.atleast_1d(x), [np.float32(2.5) * np.ones((), np.float32)]),
    (lambda M, x: M.atleast_2d(x), [(3,)]),
    (lambda M, x, y: M.atleast_3d(x, y), [(3,), (2, 3)]),
    (lambda M, x: M.atleast_3d([x]), [np.ones((), np.float32)]),
    (lambda M, x, y: M.meshgrid(x, y, indexing="ij"), [(3,), (2,)]),
    (lambda M, x, y, z: M.meshgrid(x, y, z, indexing="xy"), [(3,), (2,), (4,)]),
    (lambda M, x, y: M.meshgrid([x, y], indexing="xy"), [(3,), np.ones((), np.float32)]),
    (lambda M, x: M.repeat_interleave(x, 2), [(2, 3)]),
    (lambda M, x: M.repeat_interleave(x, 3, dim=1), [(2, 3)]),
    (lambda M, x: x.repeat_interleave(2, dim=-2), [(2, 3, 2)]),
    (lambda M, x: M.repeat_interleave(x, M.tensor([1, 0, 2]), dim=1), [(2, 3)]),
    (lambda M, x: M.repeat_interleave(x, M.tensor([2])), [(2, 2)]),
    (lambda M, x: M.take(x, M.tensor([[0, 5], [-1, 2]])), [(2, 3)]),
    (lambda M, x: M.take_along_dim(x, M.tensor([[0, 2], [1, 1]]), dim=1), [(2, 3)]),
    (lambda M, x: M.take_along_dim(x, M.tensor([[0], [2], [1], [1]]), dim=-1), [(4, 3)]),
    (lambda M, x: M.take_along_dim(x, M.tensor([[0, 2]]), dim=0), [(4, 1)]),
    (lambda M, x: M.take_along_dim(x, M.tensor([5, 0, 1])), [(2, 3)]),
    (lambda M, x: M.index_fill(x, 1, M.tensor([0, 2]), -1.5), [(2, 3)]),
    (lambda M, x: x.index_fill(0, M.tensor([1]), M.tensor(4.0)), [(3, 2)]),
    (lambda M, x, v: M.index_fill(x, -1, M.tensor([1, 0]), v),
     [(2, 3), np.array(0.5, np.float32)]),
    (lambda M, x, s: M.index_copy(x, 0, M.tensor([2, 0]), s), [(3, 2), (2, 2)]),
    (lambda M, x, s: x.index_copy(1, M.tensor([1]), s), [(2, 3), (2, 1)]),
    (lambda M, x: M.rot90(x), [(2, 3)]),
    (lambda M, x: M.rot90(x, 2, [1, 2]), [(2, 3, 4)]),
    (lambda M, x: M.rot90(x, -1, [-1, 0]), [(2, 3, 4)]),
    (lambda M, x: x.rot90(0), [(2, 3)]),
    (lambda M, x: M.rot90(x, 7), [(2, 3)]),
    (lambda M, x: M.diag_embed(x), [(2, 3)]),
    (lambda M, x: M.diag_embed(x, 1, 0, 2), [(2, 3)]),
    (lambda M, x: M.diag_embed(x, -2, dim1=-1, dim2=0), [(3,)]),
    (lambda M, x: M.diagflat(x), [(2, 2)]),
    (lambda M, x: M.diagflat(x, -1), [(3,)]),
    (lambda M, x: M.hsplit(x, 3), [(2, 3)]),
    (lambda M, x: M.hsplit(x, [1, 4]), [(2, 5)]),
    (lambda M, x: M.hsplit(x, 2), [(4,)]),
    (lambda M, x: M.vsplit(x, [1]), [(3, 2)]),
    (lambda M, x: M.dsplit(x, 2), [(1, 2, 4)]),
])
def test_shape_and_index_ops(fn, specs):
    same(forward_backward(fn, specs))


# ----------------------------------------------------------------------------- products
@pytest.mark.parametrize("fn,specs", [
    (lambda M, a, b: M.kron(a, b), [(2, 3), (3, 2)]),
    (lambda M, a, b: M.kron(a, b), [(3,), (2, 2)]),
    (lambda M, a, b: M.kron(a, b), [(2, 1, 2), (2, 3)]),
    (lambda M, a, b: M.tensordot(a, b, 1), [(2, 3), (3, 4)]),
    (lambda M, a, b: M.tensordot(a, b), [(2, 3, 4), (3, 4, 2)]),
    (lambda M, a, b: M.tensordot(a, b, ([1, 0], [0, 2])), [(2, 3, 4), (3, 5, 2)]),
    (lambda M, a, b: M.tensordot(a, b, 0), [(2,), (3,)]),
    (lambda M, a, b: M.inner(a, b), [(2, 3), (4, 3)]),
    (lambda M, a, b: M.inner(a, b), [(3,), (2, 2, 3)]),
    (lambda M, a, b: a.inner(b), [np.array(2.0, np.float32), (2, 3)]),
    (lambda M, c, m, v: M.addmv(c, m, v), [(2,), (2, 3), (3,)]),
    (lambda M, c, m, v: M.addmv(c, m, v, beta=0.5, alpha=2), [(1,), (2, 3), (3,)]),
    (lambda M, c, m, v: c.addmv(m, v, beta=0), [(2,), (2, 3), (3,)]),
    (lambda M, c, a, b: M.addr(c, a, b), [(2, 3), (2,), (3,)]),
    (lambda M, c, a, b: M.addr(c, a, b, beta=-1, alpha=0.5), [(3,), (2,), (3,)]),
    (lambda M, c, a, b: M.baddbmm(c, a, b), [(2, 2, 4), (2, 2, 3), (2, 3, 4)]),
    (lambda M, c, a, b: M.baddbmm(c, a, b, beta=2, alpha=-1), [(4,), (2, 2, 3), (2, 3, 4)]),
    (lambda M, c, a, b: M.addbmm(c, a, b), [(2, 4), (3, 2, 3), (3, 3, 4)]),
    (lambda M, c, a, b: c.addbmm(a, b, alpha=0.5, beta=0), [(2, 4), (3, 2, 3), (3, 3, 4)]),
    (lambda M, a: M.matrix_power(a, 3), [(3, 3)]),
    (lambda M, a: M.matrix_power(a, 1), [(2, 3, 3)]),
    (lambda M, a: M.matrix_power(a, 0), [(2, 2)]),
    (lambda M, a: a.matrix_power(-2), [np.array([[2., 1.], [0.5, 3.]], np.float32)]),
    (lambda M, a, b: M.block_diag(a, b), [(2, 3), (3,)]),
    (lambda M, a, b, c: M.block_diag(a, b, c), [(1, 2), np.array(3.0, np.float32), (2, 1)]),
    (lambda M, a, b: M.cartesian_prod(a, b), [(3,), (2,)]),
    (lambda M, a: M.cartesian_prod(a), [(3,)]),
    (lambda M, a, b: M.cdist(a, b), [(3, 4), (2, 4)]),
    (lambda M, a, b: M.cdist(a, b, p=1), [(2, 3, 4), (2, 5, 4)]),
    (lambda M, a, b: M.dist(a, b), [(2, 3), (3,)]),
    (lambda M, a, b: a.dist(b, 1), [(2, 3), (2, 3)]),
    (lambda M, a: M.cov(a), [(3, 5)]),
    (lambda M, a: M.cov(a, correction=0), [(6,)]),
    (lambda M, a: a.cov(), [(1, 4)]),
    (lambda M, a: M.corrcoef(a), [(3, 5)]),
    (lambda M, a: a.corrcoef(), [(5,)]),
])
def test_products_and_statistics(fn, specs):
    same(forward_backward(fn, specs), rtol=1e-4, atol=1e-5)


def test_in_place_forms():
    x, s = _arrays([(3, 4), (2, 4)])

    def scenario(T):
        a = T.tensor(x, requires_grad=True)
        src = T.tensor(s, requires_grad=True)
        b = a * 1
        b.index_fill_(1, T.tensor([0, 3]), 2.0)
        b.index_copy_(0, T.tensor([2, 0]), src * 3)
        out = [b.clone(), b.grad_fn.name(), b._version]
        (b * T.arange(12.).reshape(3, 4)).sum().backward()
        c = T.zeros(3, 4)
        c.fill_diagonal_(5)
        d = T.zeros(7, 3)
        d.fill_diagonal_(1, wrap=True)
        e = T.zeros(3, 3, 3)
        e.fill_diagonal_(2.5)
        f = T.ones(2)
        f.addmv_(T.ones(2, 2)[:, :1].expand(2, 3).contiguous(), T.ones(3), alpha=2)
        g = T.ones(2, 3)
        g.addr_(T.tensor([1., 2.]), T.tensor([1., 0., -1.]))
        h = T.ones(2, 2, 2)
        h.baddbmm_(T.ones(2, 2, 3), T.ones(2, 3, 2))
        k = T.ones(2, 2)
        k.addbmm_(T.ones(3, 2, 3), T.ones(3, 3, 2), beta=0.5)
        return out + [a.grad, src.grad, c, d, e, f, g, h, k]
    same(scenario)


def test_fill_diagonal_through_the_graph():
    def scenario(T):
        a = T.tensor(_arrays([(3, 3)])[0], requires_grad=True)
        b = a * 2
        b.fill_diagonal_(0.0)
        b.sum().backward()
        return [b, b.grad_fn.name(), a.grad]
    same(scenario)


def test_index_helpers_and_dtypes():
    def scenario(T):
        M = ns(T)
        out = [M.triu_indices(3, 4), M.triu_indices(4, 3, 1), M.tril_indices(3, 3, -1),
               M.tril_indices(2, 5, 2, dtype=T.int32), M.triu_indices(0, 3),
               M.repeat_interleave(T.tensor([2, 0, 3])), M.repeat_interleave(T.tensor([1, 2]), 2),
               M.kron(T.tensor([1, 2]), T.tensor([[1, 3], [2, 5]])),
               M.kron(T.tensor([1, 2]), T.tensor([1.5, 2.0])),
               M.cov(T.tensor([[1, 2, 4], [0, 3, 3]])),
               M.block_diag(T.tensor([[1, 2]]), T.tensor([1.5])),
               M.cartesian_prod(T.tensor([1, 2]), T.tensor([3, 4]), T.tensor([5])),
               M.take(T.tensor([[True, False]]), T.tensor([1])),
               M.tensordot(T.ones(2, 3, dtype=T.float64), T.ones(3, 2, dtype=T.float64), 1),
               M.rot90(T.arange(6).reshape(2, 3), 1)]
        with T.no_grad():
            out.append(M.meshgrid(T.tensor([1, 2]), T.tensor([3, 4, 5]), indexing="xy"))
        return out
    same(scenario)


def test_meshgrid_warns_without_indexing():
    def scenario(T):
        M = ns(T)
        result, caught = warnings_of(lambda: M.meshgrid(T.tensor([1., 2.]), T.tensor([3.])))
        return [result, caught]
    same(scenario)


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("fn", [
    lambda T, M: M.take(T.ones(2, 3), T.tensor([6])),
    lambda T, M: M.take(T.ones(2, 3), T.tensor([-7])),
    lambda T, M: M.repeat_interleave(T.ones(2, 3), T.tensor([1, 2, 3]), dim=0),
    lambda T, M: M.repeat_interleave(T.ones(2), -1),
    lambda T, M: M.repeat_interleave(T.ones(2, 3), 2, dim=0, output_size=3),
    lambda T, M: M.repeat_interleave(T.ones(2, 3), 2, dim=0, output_size=4).shape,
    lambda T, M: M.repeat_interleave(T.ones(2, 3), T.tensor([1, 2]), dim=0, output_size=4),
    lambda T, M: M.repeat_interleave(T.ones(2, 3), T.tensor([1, 2]), dim=0, output_size=3).shape,
    lambda T, M: M.repeat_interleave(T.ones(2, 3), T.tensor([1.0, 2.0]), dim=0),
    lambda T, M: M.index_fill(T.ones(2, 3), 1, T.tensor([3]), 1.0),
    lambda T, M: M.index_fill(T.ones(2, 3), 1, T.tensor([1.0]), 1.0),
    lambda T, M: M.index_copy(T.ones(2, 3), 1, T.tensor([0]), T.ones(2, 2)),
    lambda T, M: T.ones(2, 3, 4).fill_diagonal_(1),
    lambda T, M: T.ones(3).fill_diagonal_(1),
    lambda T, M: M.rot90(T.ones(2, 3), 1, [0]),
    lambda T, M: M.rot90(T.ones(3)),
    lambda T, M: M.rot90(T.ones(2, 3), 1, [0, -2]),
    lambda T, M: M.inner(T.ones(2, 3), T.ones(2, 2)),
    lambda T, M: M.tensordot(T.ones(2, 3), T.ones(2, 3), ([1], [0])),
    lambda T, M: M.block_diag(T.ones(2, 2, 2)),
    lambda T, M: M.cdist(T.ones(3), T.ones(2, 3)),
    lambda T, M: M.cdist(T.ones(2, 3), T.ones(2, 4)),
    lambda T, M: M.hsplit(T.ones(2, 3), 2),
    lambda T, M: M.vsplit(T.ones(3), 2),
    lambda T, M: M.dsplit(T.ones(2, 3), 2),
    lambda T, M: M.matrix_power(T.ones(2, 3), 2),
    lambda T, M: M.matrix_power(T.ones(3), 2),
    lambda T, M: M.matrix_power(T.ones(2, 2, dtype=T.long), 3),
    lambda T, M: M.matrix_power(T.ones(0, 2, 2), 2),
    lambda T, M: M.cov(T.ones(2, 2, 2)),
    lambda T, M: M.take_along_dim(T.ones(2, 3), T.tensor([0]), dim=1),
    lambda T, M: M.diag_embed(T.ones(2, 3), 0, 1, -2),
    lambda T, M: M.addmv(T.ones(2), T.ones(2, 3), T.ones(4)),
    lambda T, M: M.baddbmm(T.ones(2, 2, 2), T.ones(2, 2, 3), T.ones(3, 3, 2)),
])
def test_errors(fn):
    same(lambda T: catch(fn, T, ns(T)))


# ----------------------------------------------------------------------------- gradcheck
_GRADCHECK = [
    (lambda x: SX.repeat_interleave(x, ember.tensor([2, 1, 0]), dim=1), [(2, 3)]),
    (lambda x: SX.take(x, ember.tensor([[0, 5], [5, 2]])), [(2, 3)]),
    (lambda x, v: SX.index_fill(x, 0, ember.tensor([1]), v), [(2, 3), ()]),
    (lambda x, s: SX.index_copy(x, 1, ember.tensor([2, 0]), s), [(2, 3), (2, 2)]),
    (lambda x: SX.rot90(x, 3, [0, 2]), [(2, 2, 3)]),
    (lambda x: SX.diag_embed(x, -1, 0, 2), [(2, 3)]),
    (lambda a, b: SX.kron(a, b), [(2, 2), (3,)]),
    (lambda a, b: SX.tensordot(a, b, ([0], [1])), [(3, 2), (2, 3)]),
    (lambda c, m, v: SX.addmv(c, m, v, beta=0.5, alpha=2), [(2,), (2, 3), (3,)]),
    (lambda c, a, b: SX.addr(c, a, b, alpha=3), [(2, 3), (2,), (3,)]),
    (lambda c, a, b: SX.baddbmm(c, a, b, beta=2), [(2, 2), (2, 2, 3), (2, 3, 2)]),
    (lambda c, a, b: SX.addbmm(c, a, b, alpha=-1), [(2,), (2, 2, 3), (2, 3, 2)]),
    (lambda a: SX.matrix_power(a, 3), [(2, 2)]),
    (lambda a, b: SX.block_diag(a, b), [(2, 1), (2,)]),
    (lambda a, b: SX.cdist(a, b), [(3, 2), (2, 2)]),
    (lambda a, b: SX.cdist(a, b, p=1), [(3, 2), (2, 2)]),
    (lambda a: SX.cov(a), [(2, 4)]),
    (lambda a: SX.corrcoef(a), [(3, 4)]),
]


@pytest.mark.parametrize("fn,shapes", _GRADCHECK)
def test_gradcheck_float64(fn, shapes):
    rng = _rng(3)
    inputs = [ember.tensor(rng.standard_normal(s), dtype=ember.float64, requires_grad=True)
              for s in shapes]
    assert ember.autograd.gradcheck(fn, inputs)


def test_gradgradcheck_of_primitives():
    rng = _rng(4)
    for fn, shapes in [(lambda x: SX.rot90(x), [(2, 3)]),
                       (lambda c, m, v: SX.addmv(c, m, v, alpha=2), [(2,), (2, 3), (3,)]),
                       (lambda x, s: SX.index_copy(x, 0, ember.tensor([1]), s), [(2, 2), (1, 2)]),
                       (lambda x: SX.diag_embed(x, 1), [(2, 2)])]:
        inputs = [ember.tensor(rng.standard_normal(s), dtype=ember.float64, requires_grad=True)
                  for s in shapes]
        assert ember.autograd.gradgradcheck(fn, inputs)


@pytest.mark.parametrize("method,specs", [
    ("addmv_", [(2,), (2, 3), (3,)]),
    ("addr_", [(2, 3), (2,), (3,)]),
    ("baddbmm_", [(2, 2, 4), (2, 2, 3), (2, 3, 4)]),
    ("addbmm_", [(2, 4), (3, 2, 3), (3, 3, 4)]),
])
def test_in_place_products_record_their_node(method, specs):
    arrays = _arrays(specs, seed=5)

    def scenario(T):
        c, a, b = [T.tensor(x, requires_grad=True) for x in arrays]
        target = c * 1
        getattr(target, method)(a, b, beta=0.5, alpha=2)
        target.sum().backward()
        return [target, target.grad_fn.name(), c.grad, a.grad, b.grad]
    same(scenario, rtol=1e-4, atol=1e-5)


def test_cov_weights_and_degrees_of_freedom():
    x = _arrays([(2, 4)], seed=6)[0]

    def scenario(T):
        M = ns(T)
        a = T.tensor(x, requires_grad=True)
        fw, aw = T.tensor([1, 2, 0, 3]), T.tensor([0.5, 1.0, 2.0, 0.25])
        c1 = M.cov(a, fweights=fw)
        c2 = M.cov(a, aweights=aw, correction=2)
        c3 = M.cov(a, fweights=fw, aweights=aw)
        (c1.sum() + c2.sum() * 2 + c3.sum() * 3).backward()
        few, caught = warnings_of(lambda: M.cov(T.tensor([[1.0], [2.0]])))
        errors = [catch(M.cov, a, fweights=T.tensor([1.0, 2, 1, 1])),
                  catch(M.cov, a, fweights=T.tensor([-1, 2, 1, 1])),
                  catch(M.cov, a, aweights=T.tensor([-1.0, 2, 1, 1])),
                  catch(M.cov, a, aweights=T.tensor([1.0, 2])),
                  catch(M.cov, a, aweights=T.tensor([[1.0, 2, 1, 1]])),
                  catch(M.cov, a, aweights=T.tensor([1, 2, 3, 4]))]
        return [c1, c2, c3, a.grad, few, caught, errors]
    same(scenario, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("p", [0, 1, 2, 3, 0.5, float("inf")])
def test_cdist_and_dist_norms_with_coincident_points(p):
    x1, x2 = _arrays([(2, 3, 4), (1, 2, 4)], seed=8)
    x2[0, 0] = x1[1, 2]                     # a zero distance: its gradient is zero in torch

    def scenario(T):
        M = ns(T)
        a, b = T.tensor(x1, requires_grad=True), T.tensor(x2, requires_grad=True)
        d = M.cdist(a, b, p=p)
        e = M.dist(a[1, 2], b[0, 0], p=p) + M.dist(a, b[0, 1], p=p)
        grads = []
        if p != 0:        # torch's cdist backward fails for p=0 (ember: no gradient, None)
            (d * T.arange(12.).reshape(2, 3, 2)).sum().backward(retain_graph=True)
            grads = [a.grad.clone(), b.grad.clone()]
            a.grad, b.grad = None, None
            e.backward()
        else:             # ... and its dist leaves p=0 gradients undefined
            c = T.tensor(x1, requires_grad=True)
            M.dist(c, T.zeros(4), p=0).backward()
            grads = [c.grad]
        return [d, e, grads, a.grad, b.grad, d.grad_fn.name(), e.grad_fn.name()]
    same(scenario, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", ["int64", "float64", "int32", "bool"])
def test_dtypes_pass_through(dtype):
    def scenario(T):
        M = ns(T)
        dt = getattr(T, dtype)
        x = (T.arange(6).reshape(2, 3) % 3).to(dt)
        out = [M.rot90(x), M.repeat_interleave(x, 2, dim=0), M.broadcast_to(x[0], (2, 3)),
               M.take(x, T.tensor([4, 0])), M.take_along_dim(x, T.tensor([[1], [0]]), 1),
               M.diag_embed(x), M.diagflat(x[0]), M.block_diag(x, x[0]), M.atleast_3d(x),
               M.cartesian_prod(x[0], x[1]), M.hsplit(x, 3), M.index_copy(x, 0, T.tensor([1]),
                                                                           x[:1])]
        if dtype != "bool":
            out += [M.kron(x, x), M.index_fill(x, 1, T.tensor([0]), 2),
                    M.tensordot(x, x.t(), 1), M.inner(x, x)]
        return out
    same(scenario)


def test_gradgradcheck_of_distances():
    rng = _rng(9)
    for p in (1.0, 2.0, 3.0):
        a = ember.tensor(rng.standard_normal((3, 2)), requires_grad=True)
        b = ember.tensor(rng.standard_normal((2, 2)), requires_grad=True)
        assert ember.autograd.gradgradcheck(lambda x, y: SX.cdist(x, y, p=p), [a, b])
        assert ember.autograd.gradgradcheck(lambda x, y: SX.dist(x, y, p=p), [a, b[0]])


# ----------------------------------------------------------------------------- property sweeps
from hypothesis import given, settings, strategies as st  # noqa: E402
from differential import grad_fn_name as _node

_small_shape = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


@settings(max_examples=25, deadline=None)
@given(_small_shape, _small_shape)
def test_kron_over_shapes(sa, sb):
    same(forward_backward(lambda M, a, b: M.kron(a, b), [sa, sb]), rtol=1e-4, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple), st.integers(0, 3),
       st.integers(0, 2), st.booleans())
def test_repeat_interleave_over_shapes(shape, repeats, dim, as_tensor):
    dim = dim % len(shape)

    def fn(M, x):
        r = M.tensor([repeats] * x.shape[dim]) if as_tensor else repeats
        return M.repeat_interleave(x, r, dim=dim)
    same(forward_backward(fn, [shape]))


def test_unsafe_split_and_chunk():
    def f(T):
        x = T.arange(6.0, requires_grad=True)
        pieces = T.unsafe_split(x * 1, 4)
        chunks = x.unsafe_chunk(3)
        sized = x.unsafe_split_with_sizes([1, 5])
        (pieces[1].sum() * 2 + chunks[0].sum() + sized[1].sum() * 3).backward()
        return [pieces, chunks, sized, x.grad, [_node(p) for p in pieces + chunks + sized],
                T.split_with_sizes(x.detach(), [2, 4]), catch(T.unsafe_chunk, x, 0)]
    same(f)


# ----------------------------------------------------------------------------- combinatorics
@pytest.mark.parametrize("r, repl", [(2, False), (2, True), (3, False), (1, True), (0, False),
                                     (5, False)])
def test_combinations(r, repl):
    def f(T):
        x = T.tensor([1.0, 2.0, 4.0, 8.0], requires_grad=True)
        out = T.combinations(x, r, with_replacement=repl)
        if out.numel():
            (out * T.arange(out.numel(), dtype=T.float32).view(out.shape)).sum().backward()
        return [out, x.grad, _node(out), T.combinations(T.arange(3), 2)]
    same(f)


def test_combinations_errors():
    same(lambda T: [catch(T.combinations, T.zeros(2, 2)), catch(T.combinations, T.zeros(3), -1)])


@pytest.mark.parametrize("N, increasing", [(None, False), (2, True), (4, False), (0, False),
                                           (1, True)])
def test_vander(N, increasing):
    def f(T):
        x = T.tensor([1.5, -2.0, 3.0], requires_grad=True)
        out = T.vander(x, N=N, increasing=increasing)
        # (torch's own backward through vander raises: its cumprod's saved result is
        # overwritten in place, so only the forward and the graph are compared)
        return [out, out.requires_grad, _node(out),
                T.vander(T.tensor([1, 2, 3], dtype=T.int8), N=N, increasing=increasing)]
    same(f)


def test_unravel_index():
    def f(T):
        return [T.unravel_index(T.tensor([4, 5, -1, 0]), (2, 3)),
                T.unravel_index(T.tensor(4), (2, 3)),
                T.unravel_index(T.tensor([[7, 8]], dtype=T.int32), (3, 3)),
                catch(T.unravel_index, T.tensor([6]), (2, 3)),
                catch(T.unravel_index, T.tensor([-7]), (2, 3)),
                catch(T.unravel_index, T.tensor([1.0]), (2, 3))]
    same(f)
