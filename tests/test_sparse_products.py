"""Matrix products with a sparse COO operand against torch: dense @ sparse in every spelling
(values, strides, node names, gradients of both operands), torch.sparse.mm(dense, sparse),
bit-exact sums on larger patterns (the round-by-round kernel of ember/sparse/_kernels.py),
the values' gradient computed at the entries, and torch's errors."""
import numpy as np
import pytest

import ember
from differential import same, catch

pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks are implicitly disabled")

RNG = np.random.default_rng(7)
IDX = np.array([[0, 1, 1, 0], [2, 0, 2, 2]])             # (0, 2) twice: uncoalesced
VALS = np.array([3.0, 4.0, 5.0, -1.5], dtype=np.float32)
LEFT = RNG.standard_normal((4, 2)).astype(np.float32)
# a larger pattern: repeated entries, empty rows and columns, rows of very different lengths
N_ROWS, N_COLS = 40, 30
_rows = np.concatenate([RNG.integers(0, 8, 300), RNG.integers(0, 35, 200)])
BIG_IDX = np.stack([_rows, RNG.integers(0, 25, _rows.size)])
BIG_VALS = RNG.standard_normal(_rows.size).astype(np.float32)
UNIQUE_IDX = RNG.permutation(np.unique(BIG_IDX, axis=1).T).T


def draw(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# operands drawn once (a scenario runs twice: under torch, then under ember)
X3, LEFT_BIG, RIGHT_BIG, GRAD_BIG = draw(5, 4, 2), draw(6, N_ROWS), draw(N_COLS, 7), \
    draw(N_ROWS, 7)
X5, Y3, D32, W42, D24 = draw(N_COLS, 5), draw(3, N_ROWS), draw(3, 2), draw(4, 2), draw(2, 4)


def exact(scenario):
    return same(scenario, rtol=0, atol=0)


def names(node):
    return [type(n).__name__ if n is not None else None for n, _ in node.next_functions]


DENSE_AT_SPARSE = {
    "matmul_op": lambda T, d, s: d @ s,
    "mm": lambda T, d, s: T.mm(d, s),
    "matmul": lambda T, d, s: T.matmul(d, s),
    "method": lambda T, d, s: d.mm(s),
    "spmm": lambda T, d, s: T.spmm(d, s),
    "sparse.mm": lambda T, d, s: T.sparse.mm(d, s),
}


@pytest.mark.parametrize("name", DENSE_AT_SPARSE)
def test_dense_at_sparse_values_nodes_gradients(name):
    def scenario(T):
        v = T.tensor(VALS, requires_grad=True)
        s = T.sparse_coo_tensor(T.tensor(IDX), v, (2, 3))
        d = T.tensor(LEFT, requires_grad=True)
        out = DENSE_AT_SPARSE[name](T, d, s)
        (out * out).sum().backward()
        return (out, out.stride(), str(out.layout), out.grad_fn.name(), names(out.grad_fn),
                v.grad, d.grad)
    same(scenario, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", DENSE_AT_SPARSE)
def test_dense_at_sparse_leaf_gradient(name):
    # a sparse leaf: torch.mm's gradient for it is dense, torch.sparse.mm's sparse
    def scenario(T):
        s = T.sparse_coo_tensor(T.tensor(IDX), T.tensor(VALS), (2, 3), requires_grad=True)
        out = DENSE_AT_SPARSE[name](T, T.tensor(LEFT), s)
        out.sum().backward()
        g = s.grad
        return (str(g.layout), g.to_dense(), g._indices() if g.is_sparse else None,
                repr(g))
    same(scenario, rtol=1e-6, atol=1e-6)


def test_dense_at_sparse_batched_and_vector():
    def scenario(T):
        v = T.tensor(VALS, requires_grad=True)
        s = T.sparse_coo_tensor(T.tensor(IDX), v, (2, 3))
        x3 = T.tensor(X3, requires_grad=True)
        vec = T.tensor(LEFT[0], requires_grad=True)
        a, b = x3 @ s, vec @ s
        (a.sum() + (b * b).sum()).backward()
        return (a, a.stride(), a.grad_fn.name(), b, b.grad_fn.name(), x3.grad, vec.grad,
                v.grad)
    same(scenario, rtol=1e-6, atol=1e-6)


def test_dense_at_sparse_dtypes_exact():
    def scenario(T):
        s = T.sparse_coo_tensor(T.tensor(BIG_IDX), T.tensor(BIG_VALS), (N_ROWS, N_COLS))
        d = T.tensor(LEFT_BIG)
        ints = T.sparse_coo_tensor(T.tensor(IDX), T.tensor([3, -4, 5, 7]), (2, 3))
        # (coalesced without sums: torch sums repeated entries in its sort's order)
        unique = T.sparse_coo_tensor(T.tensor(UNIQUE_IDX), T.tensor(BIG_VALS[:UNIQUE_IDX.shape[1]]),
                                     (N_ROWS, N_COLS))
        return (d @ s, d.double() @ s.double(), d.half() @ s.half(),
                d.bfloat16() @ s.bfloat16(), s.half() @ T.tensor(RIGHT_BIG).half(),
                T.tensor(LEFT).long() @ ints, T.mm(d, unique.coalesce()), T.sparse.mm(d, s))
    exact(scenario)


def test_sparse_at_dense_many_entries_exact_with_gradient():
    # long rows summed entry by entry (the kernel's rounds), forward and the dense operand's
    # gradient (a product with the transposed pattern), each bit for bit
    def scenario(T):
        s = T.sparse_coo_tensor(T.tensor(BIG_IDX), T.tensor(BIG_VALS), (N_ROWS, N_COLS))
        d = T.tensor(RIGHT_BIG, requires_grad=True)
        g = T.tensor(GRAD_BIG)
        out = s @ d
        out.backward(g)
        again = s @ d                           # (the pattern's cached plan)
        return out, d.grad, again, s.t() @ g, T.mv(s, d[:, 0].detach())
    exact(scenario)


def test_values_gradient_at_the_entries():
    # a learnt adjacency: its values' gradient, both sides, coalesced or not
    def scenario(T):
        results = []
        for idx in (BIG_IDX, np.unique(BIG_IDX, axis=1)):
            v = T.tensor(np.ones(idx.shape[1], np.float32) * 0.5, requires_grad=True)
            x, y, size = T.tensor(X5), T.tensor(Y3), (N_ROWS, N_COLS)
            ((T.sparse_coo_tensor(T.tensor(idx), v, size) @ x) ** 2).sum().backward()
            first = v.grad.clone()
            v.grad = None
            ((y @ T.sparse_coo_tensor(T.tensor(idx), v, size)) ** 2).sum().backward()
            results += [first, v.grad]
        return results
    same(scenario, rtol=1e-5, atol=1e-5)


def test_gradient_of_a_sparsified_dense_input_stays_dense():
    # x.to_sparse() @ d: x's gradient is the whole dense product (not only at x's entries)
    def scenario(T):
        x = T.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 0.0]], requires_grad=True)
        d = T.tensor(D32, requires_grad=True)
        w = T.tensor(W42)
        (x.to_sparse() @ d).sum().backward()
        (w @ x.to_sparse()).sum().backward()
        return x.grad, d.grad
    same(scenario, rtol=1e-6, atol=1e-6)


def test_empty_pattern_and_empty_rows():
    def scenario(T):
        empty = T.sparse_coo_tensor(T.zeros((2, 0), dtype=T.int64), T.zeros(0), (2, 3))
        one = T.sparse_coo_tensor(T.tensor([[2], [0]]), T.tensor([2.5]), (4, 3))
        d4 = T.tensor(D24)
        d = T.tensor(LEFT)
        return (d @ empty, (d @ empty).stride(), empty.t() @ d4, one @ d[:3],
                T.ones(2, 4) @ one)

    exact(scenario)


def test_product_errors():
    def scenario(T):
        s = T.sparse_coo_tensor(T.tensor(IDX), T.tensor(VALS), (2, 3))
        s3 = T.sparse_coo_tensor(T.tensor([[0], [1], [1]]), T.tensor([1.0]), (2, 3, 2))
        return [catch(lambda: T.ones(4, 2, dtype=T.int64) @ s),
                catch(lambda: T.ones(4, 2) @ s.long()),
                catch(lambda: T.ones(4, 2, dtype=T.float64) @ s),
                catch(lambda: s @ T.ones(3, 2, dtype=T.int64)),
                catch(lambda: T.ones(4, 5) @ s), catch(lambda: s @ T.ones(2, 2)),
                catch(lambda: T.mm(T.ones(4, 2), s, out=T.empty(4, 3))),
                catch(lambda: T.ones(2, 2) @ s3), catch(lambda: s @ T.ones(5, 3, 2)),
                catch(lambda: T.mm(T.ones(2, 2), s3)),
                catch(lambda: T.mm(s, T.ones(3, 2), out=T.empty(2, 2))),
                catch(lambda: T.sparse.mm(T.ones(2, 2), T.ones(2, 3)))]
    same(scenario)


def test_product_errors_of_other_shapes():
    # sparse operands that are not plain matrices: more sparse dims, dense dims
    def scenario(T):
        s1 = T.sparse_coo_tensor(T.tensor([[0, 1]]), T.tensor([[1.0, 2], [3, 4]]), (2, 2))
        s3 = T.sparse_coo_tensor(T.tensor([[0], [1], [1]]), T.tensor([1.0]), (2, 3, 5))
        hybrid = T.sparse_coo_tensor(T.tensor([[0], [1]]), T.ones(1, 5), (2, 3, 5))
        return [catch(lambda: s1 @ T.ones(2, 2)), catch(lambda: T.ones(2, 2) @ s1),
                catch(lambda: T.mm(s3, T.ones(3, 7))), catch(lambda: T.mm(hybrid, T.ones(4, 6))),
                catch(lambda: T.mm(T.ones(4, 2), hybrid)), catch(lambda: T.mm(T.ones(2, 2), s3))]
    same(scenario)


def test_gcn_example_normalisation():
    # pytorch/examples gcn: D^-1/2 (I + A) D^-1/2 with sparse diagonal factors on both sides
    def scenario(T):
        n = 6
        edges = T.tensor([[0, 1, 1, 2, 3, 4, 5, 2], [1, 0, 2, 1, 4, 3, 2, 5]])
        adj = T.sparse_coo_tensor(edges, T.ones(edges.shape[1]), (n, n), dtype=T.int64)
        adj = T.eye(n) + adj
        degree = T.diag(T.pow(T.sum(adj, dim=1), -0.5)).to_sparse()
        norm = degree @ adj @ degree
        features = T.diag(T.arange(1.0, n + 1)).to_sparse() @ T.ones(n, 3)
        return norm, norm.stride(), norm.grad_fn, features, norm.to_sparse().to_dense()
    exact(scenario)


def test_plans_are_cached_per_pattern_and_shared_with_the_transpose():
    from ember.sparse import _kernels
    s = ember.sparse_coo_tensor(ember.tensor(BIG_IDX), ember.tensor(BIG_VALS), (N_ROWS, N_COLS))
    plan = s._data.plan(0)
    assert s._data.plan(0) is plan
    assert s.t()._data.plan(1) is plan                  # (s.t()'s columns are s's rows)
    assert s.t()._data.plan(0) is s._data.plan(1)
    assert s.double()._data.plan(0) is plan             # (a cast keeps the pattern)
    key = id(s._data.indices)
    assert key in _kernels._CACHE
    del s, plan
    assert key not in _kernels._CACHE                   # (the plans go with their pattern)


def test_product_after_writing_into_the_indices_in_place():
    # a product caches how the pattern's entries fall into rows; a write into the indices
    # (allowed, as in torch) must not leave the next product on the old pattern
    def scenario(T):
        s = T.sparse_coo_tensor(T.tensor([[0, 1, 2], [0, 1, 2]]), T.tensor([1., 2., 3.]),
                                (3, 3)).coalesce()
        d = T.arange(9.).view(3, 3)
        before = s @ d
        s.indices()[1, 0] = 2
        return [before, s @ d, d @ s]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (torch's note that invariant checks are off)
        same(scenario)
