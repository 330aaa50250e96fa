"""Sparse compressed matrices (CSR, CSC, BSR, BSC) against torch: construction by every
constructor and conversion, accessors, layouts, reprs, to_dense/to_sparse, conversions between
layouts, products with a dense matrix or vector (values, nodes, gradients), the gradients that
reach a matrix's values (SparseCompressedTensorBackward0) or a compressed leaf, torch's errors,
and its once-per-process warnings (in fresh interpreters)."""
import numpy as np
import pytest

from differential import same, catch, mkl_mv_atol
from ember._cpu import mkl_fuses
from tensor_compare import fresh_process_output

pytestmark = pytest.mark.filterwarnings("ignore:Sparse .* tensor support is in beta state",
                                        "ignore:Sparse invariant checks are implicitly disabled")

RNG = np.random.default_rng(5)
DENSE = np.array([[0., 2., 0., 0.], [1., 0., 3., 0.], [0., 0., 0., 4.], [5., 6., 0., 0.]],
                 dtype=np.float32)
# a larger matrix: blocks of 2x2 and 4x4 that are empty, and one full row (a long sum)
BIG = np.where(RNG.random((16, 12)) < 0.3, RNG.standard_normal((16, 12)), 0).astype(np.float32)
BIG[4:8, 4:8] = 0
BIG[9] = RNG.standard_normal(12)
RIGHT = RNG.standard_normal((12, 5)).astype(np.float32)
LEFT = RNG.standard_normal((3, 16)).astype(np.float32)
SQUARE = RNG.standard_normal((16, 16)).astype(np.float32) * (RNG.random((16, 16)) < 0.3)

CONVERT = {
    "csr": lambda x: x.to_sparse_csr(),
    "csc": lambda x: x.to_sparse_csc(),
    "bsr22": lambda x: x.to_sparse_bsr((2, 2)),
    "bsr21": lambda x: x.to_sparse_bsr((2, 1)),
    "bsr_int": lambda x: x.to_sparse_bsr(2),
    "bsc22": lambda x: x.to_sparse_bsc((2, 2)),
    "bsc12": lambda x: x.to_sparse_bsc((1, 2)),
}


def shown(c):
    """Everything a compressed matrix shows of itself."""
    row_major = str(c.layout).split(".")[1] in ("sparse_csr", "sparse_bsr")
    index = (c.crow_indices(), c.col_indices()) if row_major else \
        (c.ccol_indices(), c.row_indices())
    return (str(c.layout), c.is_sparse, c.is_sparse_csr, index, c.values(), c._nnz(),
            c.sparse_dim(), c.dense_dim(), tuple(c.shape), c.dtype, c.to_dense(), repr(c))


@pytest.mark.parametrize("name", CONVERT)
@pytest.mark.parametrize("source", ["dense", "coo", "dense64", "big", "zeros"])
def test_conversions_from_dense_and_coo(name, source):
    def scenario(T):
        x = {"dense": T.tensor(DENSE), "coo": T.tensor(DENSE).to_sparse(),
             "dense64": T.tensor(DENSE, dtype=T.float64), "big": T.tensor(BIG),
             "zeros": T.zeros(4, 4)}[source]
        return shown(CONVERT[name](x))
    same(scenario, rtol=0, atol=0)


@pytest.mark.parametrize("name", ["csr", "csc", "bsr22", "bsc22", "bsc12"])
def test_to_sparse_and_between_layouts(name):
    def scenario(T):
        c = CONVERT[name](T.tensor(BIG))
        coo = c.to_sparse()
        out = [coo._indices(), coo._values(), coo.is_coalesced(), repr(coo)]
        for other in ("csr", "csc", "bsr22", "bsc22", "bsr21"):
            out.append(catch(lambda: shown(CONVERT[other](c))))
        out.append(CONVERT[name](c) is c)
        return out
    same(scenario, rtol=0, atol=0)


def test_to_sparse_layout_argument():
    def scenario(T):
        d = T.tensor(DENSE)
        return [catch(lambda: shown(d.to_sparse(layout=T.sparse_csc))),
                catch(lambda: shown(d.to_sparse(layout=T.sparse_bsr, blocksize=(2, 2)))),
                catch(lambda: shown(d.to_sparse(layout=T.sparse_bsc, blocksize=(2, 2)))),
                catch(lambda: d.to_sparse(layout=T.sparse_bsr)),
                catch(lambda: d.to_sparse(layout=T.sparse_csr, blocksize=(2, 2))),
                catch(lambda: shown(d.to_sparse_csc().to_sparse(layout=T.sparse_csr))),
                str(T.sparse_csc), str(T.sparse_bsr), str(T.sparse_bsc)]
    same(scenario, rtol=0, atol=0)


CONSTRUCT = {
    "csc": lambda T: T.sparse_csc_tensor(T.tensor([0, 1, 3]), T.tensor([1, 0, 2]),
                                         T.tensor([2.0, 1.0, 3.0])),
    "csc_sized": lambda T: T.sparse_csc_tensor([0, 1, 3], [1, 0, 2], [2.0, 1.0, 3.0], (4, 2),
                                               dtype=T.float64),
    "csc_int32": lambda T: T.sparse_csc_tensor(T.tensor([0, 1, 3], dtype=T.int32),
                                               T.tensor([1, 0, 2], dtype=T.int32),
                                               T.tensor([2.0, 1.0, 3.0])),
    "bsr": lambda T: T.sparse_bsr_tensor(T.tensor([0, 1, 2]), T.tensor([1, 0]),
                                         T.arange(12.).reshape(2, 2, 3)),
    "bsr_sized": lambda T: T.sparse_bsr_tensor([0, 1, 2], [1, 0], T.ones(2, 2, 2), (4, 6)),
    "bsc": lambda T: T.sparse_bsc_tensor(T.tensor([0, 1, 2]), T.tensor([1, 0]),
                                         T.arange(12.).reshape(2, 3, 2)),
    "compressed_csr": lambda T: T.sparse_compressed_tensor([0, 1, 2], [1, 0], [1., 2.],
                                                           layout=T.sparse_csr),
    "compressed_csc": lambda T: T.sparse_compressed_tensor([0, 1, 2], [1, 0], [1., 2.], (2, 2),
                                                           layout=T.sparse_csc),
    "compressed_bsr": lambda T: T.sparse_compressed_tensor([0, 1], [0], T.ones(1, 2, 2),
                                                           layout=T.sparse_bsr),
    "compressed_bsc": lambda T: T.sparse_compressed_tensor([0, 1], [0], T.ones(1, 2, 2), (2, 2),
                                                           layout=T.sparse_bsc),
    "requires_grad": lambda T: T.sparse_bsr_tensor([0, 1], [0], T.ones(1, 2, 2),
                                                   dtype=T.float64, requires_grad=True),
}


@pytest.mark.parametrize("name", CONSTRUCT)
def test_constructors(name):
    same(lambda T: shown(CONSTRUCT[name](T)), rtol=0, atol=0)


def test_constructor_and_conversion_errors():
    def scenario(T):
        d = T.tensor(DENSE)
        return [
            catch(lambda: T.sparse_compressed_tensor([0, 1, 2], [1, 0], [1., 2.], (2, 2))),
            catch(lambda: T.sparse_compressed_tensor([0, 1, 2], [1, 0], [1., 2.], (2, 2),
                                                     layout=T.strided)),
            catch(lambda: T.sparse_bsr_tensor([0, 1, 2], [1, 0], T.ones(2))),
            catch(lambda: T.sparse_csc_tensor(T.tensor([0., 1]), T.tensor([0.]), T.ones(1))),
            catch(lambda: d.to_sparse_bsr((3, 2))),
            catch(lambda: d.to_sparse_bsc((2, 3))),
            catch(lambda: d.to_sparse_bsr()),
            catch(lambda: T.ones(3).to_sparse_bsr((1, 1))),
            catch(lambda: T.ones(3).to_sparse_bsc((1, 1))),
            catch(lambda: T.ones(3).to_sparse_csc()),
            catch(lambda: d.to_sparse_bsr((2, 2)).to_sparse_bsr((1, 1))),
            catch(lambda: d.to_sparse_bsr((2, 2)).to_sparse_bsc((2, 1))),
            catch(lambda: d.to_sparse_bsc((2, 1)).to_sparse_bsr((2, 2))),
            catch(lambda: d.to_sparse_bsr((2, 2)).to_sparse_csr()),
            catch(lambda: d.to_sparse_bsc((2, 2)).to_sparse_csc()),
        ]
    same(scenario)


@pytest.mark.parametrize("case", [
    ("csc", [0, 1, 3], [1, 0, 4], (3, 2), 1),
    ("csc", [1, 1, 3], [1, 0, 2], (3, 2), 1),
    ("csc", [0, 1, 3, 3], [1, 0, 2], (3, 2), 1),
    ("csc", [0, 3, 3], [1, 0, 2], (2, 2), 1),
    ("csc", [0, 1, 2], [1, 0, 2], (3, 2), 1),
    ("csr", [0, 3, 3], [1, 0, 2], (2, 2), 1),
    ("bsr", [0, 1, 2], [1, 3], (4, 4), 2),
    ("bsr", [0, 1, 2], [1, 0], (4, 5), 2),
    ("bsr", [0, 1, 2, 2], [1, 0], (4, 4), 2),
    ("bsr", [0, 3, 3], [1, 0, 0], (4, 4), 2),
    ("bsc", [0, 1, 2], [1, 3], (4, 4), 2),
    ("bsc", [0, 1, 2, 2], [1, 0], (4, 4), 2),
    ("bsc", [0, 1, 2], [1, 0], (4, 4), 2),
])
def test_check_invariants(case):
    layout, compressed, plain, size, block = case

    def scenario(T):
        values = T.ones(len(plain), block, block) if block > 1 else T.ones(len(plain))
        make = getattr(T, f"sparse_{layout}_tensor")
        checked = catch(lambda: shown(make(T.tensor(compressed), T.tensor(plain), values, size,
                                           check_invariants=True)))
        with T.sparse.check_sparse_tensor_invariants():
            in_context = catch(lambda: shown(make(T.tensor(compressed), T.tensor(plain), values,
                                                  size)))
        return checked, in_context
    same(scenario)


# ---------------------------------------------------------------------- products
@pytest.mark.parametrize("name", ["csr", "csc", "bsr22", "bsr_int"])
def test_sparse_at_dense_exact(name):
    # each output row summed entry by entry as torch sums it: bit for bit
    def scenario(T):
        c = CONVERT[name](T.tensor(SQUARE if name.startswith("bsr") else BIG))
        x = T.tensor(RIGHT if not name.startswith("bsr") else
                     np.vstack([RIGHT, RIGHT[:4]]), requires_grad=True)
        out = c @ x
        # (a BSR operand's transpose is BSC, which torch cannot multiply: no gradient for x)
        backward = catch(lambda: out.backward(T.ones_like(out)))
        return out, out.grad_fn.name(), backward, x.grad, T.mm(c, x.detach())
    same(scenario, rtol=0, atol=0)


@pytest.mark.parametrize("block", [1, 2, 3, 4])
def test_block_products(block):
    # blocks of 2x2 and more: each block row's partial sum first, then added (bit for bit);
    # matrix @ vector: torch's kernel sums in another order (to rounding)
    def scenario(T):
        b = T.tensor(SQUARE[:12, :12]).to_sparse_bsr((block, block))
        return b @ T.tensor(RIGHT), b.double() @ T.tensor(RIGHT).double()
    same(scenario, rtol=0, atol=0)
    same(lambda T: T.tensor(SQUARE[:12, :12]).to_sparse_bsr((block, block)) @
         T.tensor(RIGHT[:, 0]), rtol=1e-6, atol=1e-6)


@pytest.mark.skipif(mkl_fuses(), reason="MKL's Intel paths for these block sizes were not "
                                         "checked against torch")
@pytest.mark.parametrize("block", [5, 8])
def test_block_products_other_sizes(block):
    # (CPUs other than Intel's) MKL has a kernel of its own for blocks of 8 (its products
    # added in pairs, the output's columns in registers of 4 float32 or 2 float64, the columns
    # left over another way); blocks of 5 add each product straight into its row: bit for bit
    def scenario(T):
        n = 15 if block == 5 else 16
        b = T.tensor(SQUARE[:n, :n]).to_sparse_bsr((block, block))
        x = T.tensor(np.vstack([RIGHT, RIGHT[:4]])[:n])
        return [b @ x[:, :w] for w in (1, 2, 5)] + [b.double() @ x[:, :w].double()
                                                    for w in (1, 3, 5)]
    same(scenario, rtol=0, atol=0)


def test_empty_block_product():
    # a BSR matrix without blocks times a matrix or a vector: zeros
    def scenario(T):
        b = T.zeros(4, 6).to_sparse_bsr((2, 2))
        return b @ T.ones(6, 3), b @ T.ones(6)
    same(scenario, rtol=0, atol=0)


@pytest.mark.parametrize("name", ["csr", "csc"])
def test_matrix_vector_exact(name):
    # float32: torch sums each row in 16 lanes, then adds them by halves: bit for bit on an
    # Intel CPU (elsewhere MKL sums another way, not reproduced: to rounding, see mkl_mv_atol)
    rng = np.random.default_rng(3)
    lengths = np.arange(1, 81)                  # (rows of 1 to 80 entries, one empty)
    matrix = np.zeros((81, 90), np.float32)
    for row, length in enumerate(lengths):
        matrix[row, rng.choice(90, length, replace=False)] = rng.standard_normal(length)
    vector = rng.standard_normal(90).astype(np.float32)

    def scenario(T):
        c = CONVERT[name](T.tensor(matrix))
        v = T.tensor(vector, requires_grad=True)
        out = c @ v
        out.backward(T.ones_like(out))
        return out, c.mv(v.detach()), T.mv(c, v.detach()), out.grad_fn.name(), v.grad
    # (the vector's gradient: the matrix's transpose @ ones)
    same(scenario, rtol=0, atol=mkl_mv_atol((matrix, vector), (matrix.T, np.ones(81))))


@pytest.mark.parametrize("name", ["csr", "csc", "bsr22"])
def test_matrix_vector(name):
    # float64, and BSR: torch's kernels sum in another order (to rounding)
    same(lambda T: (CONVERT[name](T.tensor(SQUARE)) @ T.tensor(SQUARE[0]),
                    CONVERT[name](T.tensor(SQUARE, dtype=T.float64)) @
                    T.tensor(SQUARE[0], dtype=T.float64)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["csc", "bsc22"])
def test_dense_at_sparse(name):
    def scenario(T):
        c = CONVERT[name](T.tensor(SQUARE if name == "bsc22" else BIG))
        x = T.tensor(LEFT, requires_grad=True)
        out = x @ c
        backward = catch(lambda: out.backward(T.ones_like(out)))
        return out, out.grad_fn.name(), backward, x.grad, T.tensor(LEFT[0]) @ c
    same(scenario, rtol=1e-6, atol=1e-6)


def test_product_errors():
    def scenario(T):
        d = T.tensor(DENSE)
        return [catch(lambda: d.to_sparse_bsc((2, 2)) @ T.ones(4, 2)),
                catch(lambda: T.ones(2, 4) @ d.to_sparse_bsr((2, 2))),
                catch(lambda: T.ones(4) @ d.to_sparse_bsr((2, 2))),
                catch(lambda: d.to_sparse_bsr((2, 1)) @ T.ones(4, 2)),
                catch(lambda: d.to_sparse_bsr((2, 1)) @ T.ones(4)),
                catch(lambda: d.to_sparse_bsc((2, 2)) @ T.ones(4)),
                catch(lambda: T.ones(2, 4) @ d.to_sparse_bsc((2, 1))),
                catch(lambda: d.to_sparse_csc() @ T.ones(3, 2)),
                catch(lambda: d.to_sparse_csc() @ T.ones(4, 2, dtype=T.float64)),
                catch(lambda: T.tensor([[1, 0], [0, 1]]).to_sparse_csc() @
                      T.ones(2, 2, dtype=T.long)),
                catch(lambda: d.to_sparse_bsr((2, 2)) @ T.ones(3, 2)),
                catch(lambda: T.addmm(T.ones(4, 2), d.to_sparse_bsc((2, 2)), T.ones(4, 2))),
                catch(lambda: T.addmm(T.ones(4, 2), d.to_sparse_bsr((2, 1)), T.ones(4, 2)))]
    same(scenario)


def test_methods_compressed_layouts_refuse():
    def scenario(T):
        d = T.tensor(DENSE)
        out = []
        for c in (d.to_sparse_csc(), d.to_sparse_bsr((2, 2)), d.to_sparse_bsc((2, 2)),
                  d.to_sparse_csr()):
            out += [catch(getattr(c, m)) for m in ("crow_indices", "col_indices",
                                                   "ccol_indices", "row_indices", "indices",
                                                   "coalesce", "is_coalesced", "stride",
                                                   "numpy")]
        out += [catch(getattr(x, m)) for x in (d, d.to_sparse())
                for m in ("crow_indices", "ccol_indices", "row_indices")]
        return out
    same(scenario)


# ---------------------------------------------------------------------- gradients
def _from_values(T, layout):
    v = T.tensor([2., 1., 3.], requires_grad=True)
    make = T.sparse_csr_tensor if layout == "csr" else T.sparse_csc_tensor
    return v, make(T.tensor([0, 1, 3]), T.tensor([1, 0, 2]), v,
                   (2, 3) if layout == "csr" else (3, 2))


X = RNG.standard_normal((3, 2)).astype(np.float32)
USES = {
    "to_dense": lambda T, c: c.to_dense() ** 2,
    "mm": lambda T, c: T.mm(c, T.tensor(X[:c.shape[1]])) ** 2,
    "matmul": lambda T, c: c @ T.tensor(X[:c.shape[1]]),
    "mv": lambda T, c: (c @ T.tensor(X[:c.shape[1], 0])) ** 2,
    "dense_at": lambda T, c: (T.tensor(X[:c.shape[0]].T) @ c) ** 2,
    "values": lambda T, c: c.values() * 3,
}


@pytest.mark.parametrize("use", USES)
@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_values_gradient(layout, use):
    def scenario(T):
        v, c = _from_values(T, layout)
        out = USES[use](T, c)
        out.sum().backward()
        return (c.grad_fn.name(), c.requires_grad, repr(c), out, out.grad_fn.name(), v.grad)
    same(scenario, rtol=1e-6, atol=1e-6)


def test_values_gradient_blocks_and_both_operands():
    def scenario(T):
        vb = T.arange(8.).reshape(2, 2, 2).requires_grad_()
        b = T.sparse_bsr_tensor(T.tensor([0, 1, 2]), T.tensor([1, 0]), vb, (4, 4))
        x = T.arange(8.).reshape(4, 2)
        o = b @ x
        (o * o).sum().backward()
        wb = T.arange(8.).reshape(2, 2, 2).requires_grad_()
        bc = T.sparse_bsc_tensor(T.tensor([0, 1, 2]), T.tensor([1, 0]), wb, (4, 4))
        (bc.to_dense() ** 2).sum().backward()
        return vb.grad, x.grad, o.grad_fn.name(), repr(b), wb.grad
    same(scenario, rtol=1e-6, atol=1e-6)


def test_compressed_leaf_and_conversion_gradients():
    def scenario(T):
        c = T.tensor(DENSE[:2, :3]).to_sparse_csr().requires_grad_()
        (c @ T.tensor(X)).sum().backward()
        product_grad = c.grad
        c2 = T.tensor(DENSE[:2, :3]).to_sparse_csr().requires_grad_()
        (c2.to_dense() * 2).sum().backward()
        out = [product_grad, repr(c2.grad)]
        for name in ("csr", "csc", "bsr_int", "bsc12"):
            d = T.tensor(DENSE).requires_grad_()
            s = CONVERT[name](d)
            (s.to_dense() ** 2).sum().backward()
            out += [s.grad_fn.name(), s.to_dense().grad_fn.name(), d.grad]
        return out
    same(scenario, rtol=0, atol=0)


# ---------------------------------------------------------------------- warnings
@pytest.mark.parametrize("code", [
    "{lib}.sparse_coo_tensor({lib}.tensor([[0, 1], [1, 0]]), {lib}.tensor([1., 2.]), (2, 2))",
    "{lib}.sparse_csr_tensor([0, 1, 2], [1, 0], [1., 2.])",
    "{lib}.sparse_csc_tensor([0, 1, 2], [1, 0], [1., 2.], check_invariants=False)",
    "{lib}.sparse_bsr_tensor([0, 1], [0], {lib}.ones(1, 2, 2))",
    "{lib}.eye(2).to_sparse_bsc((1, 1))",
    "{lib}.eye(2).to_sparse()",
    "{lib}.sparse.check_sparse_tensor_invariants.disable(); "
    "{lib}.sparse_csr_tensor([0, 1, 2], [1, 0], [1., 2.])",
    "with {lib}.sparse.check_sparse_tensor_invariants(False): "
    "{lib}.sparse_csr_tensor([0, 1, 2], [1, 0], [1., 2.])",
])
def test_warnings_once_per_process(code):
    # torch warns once per process: which warnings, in which order, and not again
    program = ("import warnings, {lib}\n"
               "with warnings.catch_warnings(record=True) as seen:\n"
               "    warnings.simplefilter('always')\n"
               "    for _ in range(2):\n"
               "        " + code + "\n"
               "    {lib}.sparse_csc_tensor([0, 1, 2], [1, 0], [1., 2.])\n"
               "print([(w.category.__name__, str(w.message).split('(Triggered')[0]) "
               "for w in seen])\n")
    torch_out, ember_out = fresh_process_output(program)
    assert ember_out == torch_out


ADDMM = {
    "addmm": lambda T, c, x: T.addmm(T.ones(c.shape[0], 2), c, x),
    "addmm_scaled": lambda T, c, x: T.addmm(T.ones(c.shape[0], 2), c, x, beta=0.5, alpha=2),
    "sparse.mm": lambda T, c, x: T.sparse.mm(c, x),
    "sparse.addmm": lambda T, c, x: T.sparse.addmm(T.ones(c.shape[0], 2), c, x),
    "sparse.mm_dense_first": lambda T, c, x: T.sparse.mm(x.t(), c.t()),
    "spmm": lambda T, c, x: T.spmm(c, x),
    "transposed_product": lambda T, c, x: c.t().t() @ x,
}


@pytest.mark.parametrize("name", ADDMM)
def test_addmm_and_sparse_mm_gradients(name):
    def scenario(T):
        v, c = _from_values(T, "csr")
        x = T.tensor(X, requires_grad=True)
        out = ADDMM[name](T, c, x)
        (out * out).sum().backward()
        return out, out.grad_fn.name(), v.grad, x.grad
    same(scenario, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["csr", "csc", "bsr22"])
def test_addmm_values(name):
    def scenario(T):
        c = CONVERT[name](T.tensor(SQUARE))
        start = T.tensor(SQUARE[:, :5])
        return (T.addmm(start, c, T.tensor(SQUARE[:, 5:10])),
                T.addmm(start, c, T.tensor(SQUARE[:, 5:10]), beta=0.5, alpha=2))
    same(scenario, rtol=1e-6, atol=1e-6)


def test_transpose_scalar_ops_and_sum():
    def scenario(T):
        v, c = _from_values(T, "csr")
        d = T.tensor(DENSE)
        out = [shown(c.t()), repr(c.t()), shown(c * 2), shown(2 * c), catch(lambda: c / 4),
               catch(lambda: c ** 2), shown(-c), shown(c * T.tensor(2.)),
               shown(T.tensor([[0., -1.5], [2.25, 0.]]).to_sparse_csc().abs()), c.sum(),
               shown(d.to_sparse_bsr((2, 2)).sqrt()), catch(lambda: d.to_sparse_bsc((2, 2)) / 2),
               shown(d.to_sparse_bsr((2, 2)).t()), shown(d.to_sparse_bsc((2, 1)).t()),
               shown(d.to_sparse_csc().t()), catch(lambda: T.sparse.sum(c))]
        (c * 3).to_dense().sum().backward()
        return out + [v.grad]
    same(scenario, rtol=0, atol=0)


@pytest.mark.parametrize("code", [
    "{lib}.sparse_coo_tensor((2, 3))",
    "{lib}.sparse.FloatTensor({lib}.tensor([[0], [1]]), {lib}.tensor([1.]), {lib}.Size([2, 2]))",
    "{lib}.sparse.FloatTensor(2, 3)",
    "import io; b = io.BytesIO(); {lib}.save({lib}.eye(2).to_sparse(), b); b.seek(0); "
    "{lib}.load(b)",
    "{lib}.nn.Embedding(3, 2, sparse=True)({lib}.tensor([1])).sum().backward()",
])
def test_invariants_warning_sources(code):
    # which constructors give the warning (the legacy types and torch.load do not)
    program = ("import warnings, {lib}\n"
               "with warnings.catch_warnings(record=True) as seen:\n"
               "    warnings.simplefilter('always')\n"
               "    " + code + "\n"
               "print([str(w.message).split('(Triggered')[0] for w in seen "
               "if 'invariant' in str(w.message)])\n")
    torch_out, ember_out = fresh_process_output(program)
    assert ember_out == torch_out


THROUGH = {
    "to_sparse": lambda c: c.to_sparse(),
    "t": lambda c: c.t(),
    "double": lambda c: c.double(),
    "clone": lambda c: c.clone(),
    "sum": lambda c: c.sum(),
    "neg": lambda c: -c,
    "mul": lambda c: c * 3,
    "to_sparse_csc": lambda c: c.to_sparse_csc(),
    "to_sparse_bsr": lambda c: c.to_sparse_bsr((1, 1)),
    "values_of_t": lambda c: c.t().values(),
}


@pytest.mark.parametrize("name", THROUGH)
def test_values_gradient_through_ops(name):
    def scenario(T):
        v, c = _from_values(T, "csr")
        out = THROUGH[name](c)
        node = out.grad_fn.name()
        # (CSR -> BSR: torch's backward refuses to turn the gradient back)
        backward = catch(lambda: (out if out.layout == T.strided else out.to_dense()).pow(2)
                         .sum().backward())
        return node, backward, v.grad
    same(scenario, rtol=0, atol=0)


def test_coo_to_compressed_keeps_explicit_zeros():
    def scenario(T):
        coo = T.sparse_coo_tensor(T.tensor([[1, 0, 1, 0], [2, 1, 0, 1]]),
                                  T.tensor([0., 2., 3., 4.]), (2, 3))
        return [shown(coo.to_sparse_csr()), shown(coo.to_sparse_csc()),
                shown(coo.to_sparse_bsr((1, 1)))]
    same(scenario, rtol=0, atol=0)


def test_check_invariants_switch():
    # the context manager and the decorator turn the checks on, and restore the switch
    def scenario(T):
        @T.sparse.check_sparse_tensor_invariants()
        def make():
            return T.sparse_csr_tensor(T.tensor([0, 1, 3]), T.tensor([1, 0, 5]),
                                       T.tensor([2.0, 1.0, 3.0]), (2, 3))
        before = T.sparse.check_sparse_tensor_invariants.is_enabled()
        refused = catch(make)
        with T.sparse.check_sparse_tensor_invariants():
            inside = T.sparse.check_sparse_tensor_invariants.is_enabled()
        return before, refused, inside, T.sparse.check_sparse_tensor_invariants.is_enabled()
    same(scenario)
