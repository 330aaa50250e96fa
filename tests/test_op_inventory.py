"""Every op in ember's inventory (ember.ops.registry.all_ops(): every op made, all at import)
runs in a sample program whose graph has torch's node names and whose gradients pass
ember.autograd.gradcheck in float64.

The sample programs come from the existing tables (tests/opinfo.py's OpInfo tables, the cases
of test_double_backward_sweep.py and test_nn_node_names.py) plus EXTRA_CASES below. Which ops
a program runs is recorded, not declared: each program runs once (forward and backward) while
every op call is noted; an op's sample is the first program whose graph has the op's node (or,
for an op that records none, the first that runs it). An op no program runs fails
test_every_op_has_a_sample, unless NO_SAMPLE lists it with the reason. Programs whose graph is
not torch's are listed in KNOWN_DIFFERENCES (and checked to still differ), never used.

Per op (test_op): the node names of its program's graph equal torch's (an op run in the
forward of a differentiable program must have its node in that graph); for a differentiable op,
gradcheck in float64 passes where torch's passes on the same program (fails where torch's
fails), and where torch's backward raises (no derivative), ember's raises the same error. Each
program is checked once, however many ops it runs (the results are cached).
"""
import contextlib
import functools
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.autograd.gradcheck import gradcheck
from ember.ops import registry
import opinfo
from opinfo import check_same_error, graph_names, grad_leaves, to_ember, to_torch, torch_accepts
import test_double_backward_sweep as sweep
import test_nn_node_names as nn_names


# ----------------------------------------------------------------------------- programs
class Program:
    """A sample program: fn(lib, *args, **kwargs) and its arguments for either library (float
    arrays requiring grad as each table says)."""

    def __init__(self, label, fn, make_args, node_differs=None):
        self.label, self.fn, self.make_args, self.node_differs = label, fn, make_args, node_differs

    def __repr__(self):
        return self.label

    def call(self, lib, dtype=None):
        args, kwargs = self.make_args(lib, dtype)
        return self.fn(lib, *args, **kwargs), args, kwargs


def _from_opinfo(op):
    """The first float64 sample torch accepts with grad (None: the OpInfo has none)."""
    for sample in op.sample_list("float64", 0, for_grad=op.grad):
        if torch_accepts(op, sample):
            def make_args(lib, dtype, _s=sample):
                return (to_ember if lib is ember else to_torch)(_s, requires_grad=op.grad)
            fn = (lambda lib, *a, _op=op, **k: _op.fn(lib, *a, **k) if lib is ember
                  else _op.torch_fn(lib, *a, **k))
            return Program(f"opinfo:{op.name}", fn, make_args,
                           op.node if op.node_differs else None)
    return None


def _from_sweep(name):
    fn, inputs, _ = sweep.CASES[name]

    def make_args(lib, dtype):
        return [lib.tensor(a, requires_grad=True) for a in inputs], {}
    return Program(f"sweep:{name}", fn, make_args)


def _from_nn(case):
    arrays = case.arrays()

    def make_args(lib, dtype):
        def convert(a):
            if dtype is not None and isinstance(a, np.ndarray) and a.dtype.kind == "f":
                a = a.astype(dtype)
            elif dtype is not None and isinstance(a, nn_names.Const) and a.array.dtype.kind == "f":
                a = nn_names.Const(a.array.astype(dtype))
            return nn_names._tensor(lib, a, True)
        return [convert(a) for a in arrays], {}
    return Program(f"nn:{case.name}", case.fn, make_args)


class C:
    """A constant operand: an array passed as a tensor that does not require grad."""

    def __init__(self, array):
        self.array = np.asarray(array)


def case(label, fn, *arrays):
    """A program of fixed NumPy arrays: float arrays require grad, C(array) ones do not,
    integer/bool arrays never; anything else is passed as it is."""
    def make_args(lib, dtype):
        out = []
        for a in arrays:
            const = isinstance(a, C)
            a = a.array if const else a
            if not isinstance(a, np.ndarray):
                out.append(a)
                continue
            if dtype is not None and a.dtype.kind == "f":
                a = a.astype(dtype)
            out.append(lib.tensor(a.copy(), requires_grad=not const and a.dtype.kind in "fc"))
        return out, {}
    return Program(f"extra:{label}", fn, make_args)


_R = np.random.default_rng(7)


def u(*shape, low=-1.0, high=1.0):
    return _R.uniform(low, high, shape)


def ints(high, *shape):
    return _R.integers(0, high, shape)


def F(lib):
    return lib.nn.functional


def seeded(fn):
    """fn run after seeding the generator (a random op's program gives the same values on each
    call, as gradcheck needs)."""
    def program(lib, *args):
        lib.manual_seed(0)
        return fn(lib, *args)
    return program


_POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
                "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
                "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]
_BESSELS = ["spherical_bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
            "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
            "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai"]
_X = u(3, 4)
_P = u(3, 4, low=0.2, high=2.0)

# programs for the ops the tables above do not run
EXTRA_CASES = [
    *[case(f"{name}-{form}", (lambda name, form: lambda lib, x, n: (
        getattr(lib.special, name)(x, n) if form == "tensors" else
        getattr(lib.special, name)(0.3, n) if form == "self_scalar" else
        getattr(lib.special, name)(x, 3)))(name, form), C(_X * 0.9), ints(5, 3, 4))
      for name in _POLYNOMIALS for form in ("tensors", "self_scalar", "other_scalar")],
    *[case(name, lambda lib, x, _n=name: getattr(lib.special, _n)(x), C(_P)) for name in _BESSELS],
    case("isposinf", lambda lib, x: [lib.isposinf(x), lib.isneginf(x), lib.signbit(x)],
         C(np.array([1.0, -np.inf, np.inf, -0.0]))),
    case("clamp_tensor", lambda lib, x, lo, hi: lib.clamp_min(x, lo) + lib.clamp_max(x, hi),
         _X, u(3, 4), u(3, 4)),
    case("fmod_scalar", lambda lib, x: lib.fmod(x, 0.3), _X),
    case("logaddexp2", lambda lib, x, y: lib.logaddexp2(x, y), _X, u(3, 4)),
    case("copysign", lambda lib, x, y: lib.copysign(x, y), _X, u(3, 4)),
    case("copysign_scalar", lambda lib, x: lib.copysign(x, -1.5), _X),
    case("remainder_scalar", lambda lib, x: lib.remainder(x, 0.3), _X),
    case("select", lambda lib, x: x.select(0, 1) ** 2, _X),
    case("alias", lambda lib, x: lib.alias_copy(x), _X),
    case("heaviside", lambda lib, x, y: lib.heaviside(x, y), C(_X), C(u(3, 4))),
    case("nextafter", lambda lib, x, y: lib.nextafter(x, y), C(_X), C(u(3, 4))),
    case("ldexp", lambda lib, x, e: lib.ldexp(x, e), _X, ints(3, 3, 4)),
    case("gcd", lambda lib, a, b: [lib.gcd(a, b), lib.lcm(a, b)], ints(20, 5) + 1,
         ints(20, 5) + 1),
    case("bitwise", lambda lib, a, b: [a ^ b, a << 1, a >> 1], ints(20, 5), ints(20, 5)),
    case("resize", lambda lib, x: x.resize(4, 3), _X),
    case("squeeze", lambda lib, x: [x.squeeze(), x.squeeze((0, 2))], u(1, 3, 1)),
    case("squeeze_", lambda lib, x: x.clone().squeeze_(0), u(1, 3)),
    case("split_with_sizes", lambda lib, x: x.split_with_sizes([1, 3], 1), _X),
    case("diag_embed", lambda lib, x: lib.diag_embed(x), _X),
    case("diag", lambda lib, x: [lib.diag(x[0]), lib.diag(x, 1)], _X),
    case("matmul_1d_2d", lambda lib, v, m: lib.matmul(v, m), u(3), _X),
    case("diagonal_copy", lambda lib, x: lib.diagonal_copy(x), _X),
    case("narrow_copy", lambda lib, x: lib.narrow_copy(x, 1, 1, 2), _X),
    case("view_op_copies", lambda lib, x, y: [
        lib.as_strided_copy(x, (2, 2), (1, 2)), lib.diagonal_copy(x, 1), lib.select_copy(x, 0, 1),
        lib.squeeze_copy(y), lib.squeeze_copy(y, 0), lib.squeeze_copy(y, (0, 2)), lib.t_copy(x),
        lib.transpose_copy(x, 0, 1), lib.unfold_copy(x, 1, 2, 1), lib.unsqueeze_copy(x, 1),
        lib.alias_copy(x), lib.expand_copy(y, (2, 3, 2)), lib.permute_copy(x, (1, 0)),
        lib.slice_copy(x, 1, 0, 3), *lib.split_copy(x, 2, 1), *lib.split_with_sizes_copy(
            x, [1, 3], 1), *lib.unbind_copy(x), lib.view_copy(x, (2, 6))], _X, u(1, 3, 1)),
    case("view_as_real_copy", lambda lib, x, y: lib.view_as_real_copy(lib.complex(x, y)),
         u(3), u(3)),
    case("view_copy", lambda lib, x: lib.view_copy(x, (4, 3)), _X),
    case("detach_copy", lambda lib, x: lib.detach_copy(x), _X),
    case("index_fill_tensor", lambda lib, x, i, v: x.index_fill(1, i, v), _X,
         np.array([0, 2]), np.array(0.5)),
    case("addmv", lambda lib, b, m, v: lib.addmv(b, m, v), u(3), u(3, 4), u(4)),
    case("addr", lambda lib, b, x, y: lib.addr(b, x, y), _X, u(3), u(4)),
    case("addbmm", lambda lib, b, x, y: lib.addbmm(b, x, y), u(3, 4), u(2, 3, 2), u(2, 2, 4)),
    case("complex", lambda lib, re, im: lib.complex(re, im).abs(), _X, u(3, 4)),
    case("polar", lambda lib, a, t: lib.polar(a, t).real, _P, _X),
    case("vdot", lambda lib, x, y: lib.vdot(x, y), u(4), u(4)),
    case("conj_physical_", lambda lib, x: (lib.complex(x, x * 2).conj_physical_()).abs(),
         _X),
    case("fill", lambda lib, x: lib.fill(x, 0.5), _X),
    case("fill_inplace", lambda lib, x: x.clone().fill_(0.5), _X),
    case("cholesky", lambda lib, a: lib.cholesky(a @ a.mT + lib.eye(3, dtype=a.dtype)),
         u(3, 3)),
    case("geqrf", lambda lib, a: lib.geqrf(a), C(u(3, 3))),
    case("min_dim", lambda lib, x: x.min(1), _X),
    case("nansum", lambda lib, x: lib.nansum(x), _X),
    case("aminmax", lambda lib, x: lib.aminmax(x, dim=1), C(_X)),
    case("cdist", lambda lib, a, b: lib.cdist(a, b), u(3, 2), u(4, 2)),
    case("dist", lambda lib, a, b: lib.dist(a, b), _X, u(3, 4)),
    case("renorm", lambda lib, x: lib.renorm(x, 2, 0, 0.5), _X),
    *[case(f"{name}_", (lambda n: lambda lib, x, y: [getattr(x.clone(), n)(0.1),
                                                      getattr(x.clone(), n)(y)])(name + "_"),
           _X, u(3, 4)) for name in ("eq", "ne", "lt", "le", "gt", "ge")],
    case("asinh_", lambda lib, x: [x.clone().asinh_(), (x.clone() + 2).acosh_(),
                                   (x.clone() * 0.5).atanh_()], _X),
    case("xlogy_scalar", lambda lib, x: [lib.xlogy(2.0, x), lib.xlogy(x, 2.0),
                                         lib.special.xlog1py(2.0, x),
                                         lib.special.xlog1py(x, 2.0)], _P),
    case("zeta_scalar", lambda lib, x: [lib.special.zeta(2.0, x), lib.special.zeta(x + 1, 2.0)],
         C(_P)),
    case("deg2rad", lambda lib, x: [lib.deg2rad(x), lib.rad2deg(x)], _X),
    case("angle", lambda lib, x: lib.angle(x), _X),
    case("frexp", lambda lib, x: lib.frexp(x), C(_X)),
    *[case(f"random_fill-{i}", seeded(fill), _X) for i, fill in enumerate([
        lambda lib, x: x.clone().cauchy_(), lambda lib, x: x.clone().log_normal_(),
        lambda lib, x: x.clone().geometric_(0.5), lambda lib, x: x.clone().normal_(),
        lambda lib, x: x.clone().exponential_(), lambda lib, x: x.clone().random_(),
        lambda lib, x: x.clone().random_(5), lambda lib, x: x.clone().random_(2, 5),
        lambda lib, x: x.clone().bernoulli_(0.5), lambda lib, x: x.clone().uniform_(),
        lambda lib, x: x.clone().bernoulli_(lib.full((3, 4), 0.5, dtype=x.dtype))])],
    case("fill_zero_", lambda lib, x: x.clone().zero_(), _X),
    case("binomial", seeded(lambda lib, n, p: lib.binomial(n, p)), C(np.full((3,), 5.0)),
         C(np.full((3,), 0.5))),
    case("native_dropout", seeded(lambda lib, x: lib.native_dropout(x, 0.5, True)), _X),
    case("median", lambda lib, x: [lib.median(x), lib.nanmedian(x), lib.nanmedian(x, 1),
                                   lib.mode(x, 1)], _X),
    case("scatters", lambda lib, x, s, d: [
        lib.select_scatter(x, s[0], 0, 1), lib.slice_scatter(x, s, 0, 0, 2),
        lib.diagonal_scatter(x, d), lib.as_strided_scatter(x, d, (3,), (5,))],
        _X, u(2, 4), u(3)),
    case("rot90", lambda lib, x: lib.rot90(x), _X),
    case("unsafe_split", lambda lib, x: [*x.unsafe_split(2, 1), *x.unsafe_split_with_sizes(
        [1, 3], 1)], _X),
    case("inplace_activations", lambda lib, x: [
        F(lib).leaky_relu_(x.clone()), F(lib).elu_(x.clone()), F(lib).celu_(x.clone()),
        F(lib).threshold_(x.clone(), 0.1, 2.0)], _X),
    case("shrinks", lambda lib, x: [F(lib).hardshrink(x, 0.3), F(lib).softshrink(x, 0.3)], _X),
    case("rrelu_", seeded(lambda lib, x: F(lib).rrelu_(x.clone(), training=True)), _X),
    case("max_pool3d", lambda lib, x: F(lib).max_pool3d(x, 2), u(1, 1, 4, 4, 4)),
    case("adaptive_max_pool3d", lambda lib, x: F(lib).adaptive_max_pool3d(x, 2),
         u(1, 1, 4, 4, 4)),
    case("max_unpool", lambda lib, x, y: [
        F(lib).max_unpool2d(*F(lib).max_pool2d(x, 2, return_indices=True), 2),
        F(lib).max_unpool3d(*F(lib).max_pool3d(y, 2, return_indices=True), 2)],
        u(1, 1, 4, 4), u(1, 1, 4, 4, 4)),
    case("fractional_max_pool", seeded(lambda lib, x, y: [
        F(lib).fractional_max_pool2d(x, 2, output_size=2),
        F(lib).fractional_max_pool3d(y, 2, output_size=2)]), u(1, 1, 5, 5), u(1, 1, 5, 5, 5)),
    case("embedding_bag", lambda lib, w, i: F(lib).embedding_bag(i, w, lib.tensor([0, 2])),
         u(6, 3), ints(6, 4)),
    case("nll_loss2d", lambda lib, x, t: F(lib).nll_loss(x, t), u(2, 3, 2, 2), ints(3, 2, 2, 2)),
    case("multilabel_margin_loss", lambda lib, x, t: F(lib).multilabel_margin_loss(x, t), _X,
         np.array([[1, 0, -1, 0], [2, -1, 0, 0], [0, 3, -1, 0]])),
    case("channel_shuffle", lambda lib, x: F(lib).channel_shuffle(x, 2), u(1, 4, 2, 2)),
    case("interpolate_nearest", lambda lib, a, b: [
        F(lib).interpolate(a, scale_factor=2, mode=m) for m in ("nearest", "nearest-exact")] + [
        F(lib).interpolate(b, scale_factor=2, mode=m) for m in ("nearest", "nearest-exact")],
        u(1, 2, 3), u(1, 1, 2, 2, 2)),
    case("interpolate_nearest_exact_2d", lambda lib, x: F(lib).interpolate(
        x, scale_factor=2, mode="nearest-exact"), u(1, 1, 3, 3)),
    case("interpolate_antialias", lambda lib, x: [
        F(lib).interpolate(x, size=(2, 3), mode=m, antialias=True)
        for m in ("bilinear", "bicubic", "lanczos")], u(1, 1, 5, 6)),
    case("pack_padded_sequence", lambda lib, x: lib.nn.utils.rnn.pack_padded_sequence(
        x, [3, 2]).data, u(3, 2, 4)),
    # a float32 LSTM records each layer as one node (torch's oneDNN path); gradcheck's float64
    # run takes the per-step path in both libraries
    case("lstm_float32", seeded(lambda lib, x: lib.nn.LSTM(4, 3, 2).to(x.dtype)(x)[0]),
         u(3, 2, 4).astype(np.float32)),
    # no derivative in torch either: both record torch::autograd::NotImplemented
    case("ldl", lambda lib, a, b: lib.linalg.ldl_solve(
        *lib.linalg.ldl_factor_ex(a + a.mT + 4 * lib.eye(3, dtype=a.dtype))[:2], b), u(3, 3),
        u(3, 2)),
]

# ops no program runs, with the reason (test_every_op_has_a_sample fails for any other)
_ONLY_DIFFERING = "its only programs are in KNOWN_DIFFERENCES (their graphs are not torch's)"
# sparse COO ops take sparse samples, which the dense tables here cannot build: their values,
# node names and gradients are checked against torch in tests/test_sparse.py
_SPARSE = "a sparse op: checked against torch in tests/test_sparse.py"
_COMPRESSED = "a sparse compressed op: checked against torch in tests/test_sparse_compressed.py"
NO_SAMPLE = {
    # forward AD's primal view (unpack_dual's `<Identity>` node; checked against torch in
    # tests/test_forward_ad.py) and the copy form the view-copy table makes of every view
    "_fw_primal:CppFunction": "made inside a dual level only: tests/test_forward_ad.py",
    "_fw_primal_copy:CppFunction_copy": "no torch counterpart (a copy of the private view)",
    "copysign.scalar:CopysignBackward1": _ONLY_DIFFERING,
    "fill_:FillBackward0": _ONLY_DIFFERING,
    "detach_copy:NotImplemented": _ONLY_DIFFERING,
    "linalg_lu_solve:LinalgLuSolveBackward0": _ONLY_DIFFERING,
    "xlogy.scalar_self:XlogyBackward1": _ONLY_DIFFERING,
    "xlogy.scalar_other:XlogyBackward2": _ONLY_DIFFERING,
    "special_xlog1py.self_scalar:SpecialXlog1PyBackward1": _ONLY_DIFFERING,
    "special_xlog1py.other_scalar:SpecialXlog1PyBackward2": _ONLY_DIFFERING,
    "sparse_coo_tensor:SparseCooTensorWithDimsAndTensorsBackward0": _SPARSE,
    "to_dense:ToDenseBackward0": _SPARSE,
    "sparse_mask:SparseMaskBackward0": _SPARSE,
    "to_sparse:ToSparseBackward1": _SPARSE,
    "to_sparse_dim:ToSparseBackward0": _SPARSE,
    "coalesce:CoalesceBackward0": _SPARSE,
    "values:ValuesBackward0": _SPARSE,
    "sparse_addmm:SparseAddmmBackward0": _SPARSE,
    "sparse_mm:MmBackward0": _SPARSE,
    "sparse_sum_all:SumBackward0": _SPARSE,
    "sparse_sum:SparseSumBackward0": _SPARSE,
    "sparse_softmax:SparseSoftmaxBackward0": _SPARSE,
    "sparse_log_softmax:SparseLogSoftmaxBackward0": _SPARSE,
    # (the compressed layouts': tests/test_sparse_compressed.py)
    "sparse_compressed_tensor:SparseCompressedTensorBackward0": _COMPRESSED,
    "compressed_values:ValuesBackward0": _COMPRESSED,
    "compressed_to_dense:ToDenseBackward0": _COMPRESSED,
    "to_sparse_csr:ToSparseCsrBackward0": _COMPRESSED,
    "to_sparse_csc:ToSparseCscBackward0": _COMPRESSED,
    "to_sparse_bsr:ToSparseBsrBackward0": _COMPRESSED,
    "to_sparse_bsc:ToSparseBscBackward0": _COMPRESSED,
    "compressed_to_sparse:ToSparseBackward1": _COMPRESSED,
}

# programs of the tables whose graph is not torch's (found by this test): not used as samples
# here; test_known_differences_still_differ keeps the list honest
KNOWN_DIFFERENCES = {
    "extra:fill_inplace": "x.fill_(value) records FillBackward0; torch records FillBackward2 "
                          "(a number) or FillBackward3 (a tensor)",
    "extra:fill": "torch.fill(x, v) records a clone before FillBackward0; torch does not",
    "extra:copysign_scalar": "copysign(x, number) gives CopysignBackward1 a None edge for the "
                             "number; torch's node has one edge",
    "extra:xlogy_scalar": "xlogy/xlog1py with a number operand: a None edge for the number",
    "sweep:lu_solve": "LinalgLuSolveBackward0 has a None edge torch's node does not have",
    "sweep:lu_unpack": "lu_unpack is composed of tril/triu (no LuUnpackBackward0 node)",
    "sweep:cond": "linalg.cond's graph selects where torch's slices and squeezes",
    "sweep:index_put": "index_put records a clone torch does not",
    "sweep:rnn_cell": "the RNN cell records mm + add where torch records addmm",
    "sweep:rnn_cell_relu": "the RNN cell records mm + add where torch records addmm",
    "extra:detach_copy": "the node's name() is its class name, NotImplemented; torch's name() "
                         "is torch::autograd::NotImplemented",
}


@functools.cache
def programs():
    found = [_from_opinfo(op) for table in (
        opinfo.POINTWISE_OPS, opinfo.LOGIC_OPS, opinfo.REDUCTION_OPS, opinfo.LINALG_OPS,
        opinfo.JOINING_OPS) for op in table]
    found += [_from_sweep(name) for name in sweep.CASES]
    found += [_from_nn(case) for case in nn_names.CASES]
    found += EXTRA_CASES
    return [p for p in found if p is not None]


# ----------------------------------------------------------------------------- recording
@contextlib.contextmanager
def recording(forward, backward):
    """Note each op called (Op.__call__ and Op.inplace) into the list `forward`, or `backward`
    once `backward` is the one asked for: yields a switch `into(list)`."""
    target = [forward]
    registry.profile_ops(_NoTimer())      # (sends the Tensor fast paths through Op.__call__)
    call, inplace = registry.Op.__call__, registry.Op.inplace

    def noted_call(op, *args, **kwargs):
        target[0].append(op)
        return call(op, *args, **kwargs)

    def noted_inplace(op, *args, **kwargs):
        target[0].append(op)
        return inplace(op, *args, **kwargs)
    registry.Op.__call__, registry.Op.inplace = noted_call, noted_inplace
    try:
        yield lambda into: target.__setitem__(0, into)
    finally:
        registry.profile_ops(None)


class _NoTimer:
    def begin(self, name, args):
        return None

    def end(self, events, result):
        pass


def _outputs(out):
    """The tensors (of either library) a program returns, flattened."""
    if isinstance(out, (ember.Tensor, torch.Tensor)):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _outputs(o)]
    return []


def _backward(lib, out, args, kwargs):
    """Gradients of the program's differentiable outputs (summed) for its leaves."""
    outs = [o for o in _outputs(out) if o.requires_grad]
    leaves = grad_leaves(args, kwargs)
    if outs and leaves:
        lib.autograd.grad([o.sum() if o.dtype.is_floating_point else o.abs().sum()
                           for o in outs], leaves, allow_unused=True)


def _run_recorded(program):
    """(ops run in the forward, ops run in the backward, node names of the forward's graph);
    None: the forward fails in ember. (A backward that raises, as for an op without a
    derivative, ends the recording.)"""
    forward, backward = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with recording(forward, backward) as into:
            try:
                out, args, kwargs = program.call(ember)
            except Exception:
                return None
            into(backward)
            nodes = {name for o in _outputs(out) for name in graph_names(o.grad_fn)}
            try:
                _backward(ember, out, args, kwargs)
            except Exception:
                pass
    return forward, backward, nodes


@functools.cache
def inventory_cover():
    """{op: (program, ran in the forward)}: the first program whose graph has the op's node
    (a differentiable op), else the first that runs the op (forward first, then backward).
    The programs of KNOWN_DIFFERENCES are not used."""
    best, fallback = {}, {}
    for program in programs():
        if program.label in KNOWN_DIFFERENCES:
            continue
        ran = _run_recorded(program)
        if ran is None:
            continue
        forward, backward, nodes = ran
        for in_forward, ops in ((True, forward), (False, backward)):
            for op in ops:
                if in_forward and (not op.differentiable or op.node_cls.__name__ in nodes):
                    best.setdefault(op, (program, True))
                fallback.setdefault(op, (program, in_forward))
    return {**fallback, **best}


def _label(op):
    return f"{op.name}:{op.node_cls.__name__}" if op.differentiable else op.name


OPS = registry.all_ops()


# ----------------------------------------------------------------------------- the checks
@functools.cache
def _node_names(program):
    """The node names of the program's graph in ember and in torch, output by output."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e_out, _, _ = program.call(ember)
        t_out, _, _ = program.call(torch)
    return ([graph_names(e.grad_fn) for e in _outputs(e_out)],
            [graph_names(t.grad_fn) for t in _outputs(t_out)])


@functools.cache
def _gradcheck(lib, program):
    """lib.autograd.gradcheck's verdict on the program in float64, over its differentiable
    inputs (False: it fails)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, args, kwargs = program.call(lib, np.float64)
        leaves = grad_leaves(args, kwargs)
        ids = [id(x) for x in leaves]

        def rebuild(v, new):
            if isinstance(v, (ember.Tensor, torch.Tensor)) and id(v) in ids:
                return new[ids.index(id(v))]
            if isinstance(v, list):
                return [rebuild(x, new) for x in v]
            return v

        def fn(*new):
            out = program.fn(lib, *[rebuild(a, new) for a in args],
                             **{k: rebuild(v, new) for k, v in kwargs.items()})
            return tuple(o for o in _outputs(out) if o.dtype.is_floating_point or
                         o.dtype.is_complex)
        check = gradcheck if lib is ember else torch.autograd.gradcheck
        fast = {} if lib is ember else {"fast_mode": True}      # (torch: the verdict only)
        return check(fn, tuple(leaves), raise_exception=False, **fast)


def test_inventory_is_made_at_import():
    # every op exists once `import ember` returns: the cover below ran hundreds of programs,
    # and none made a new op (an op made on its first call would escape the inventory)
    inventory_cover()
    assert len(registry.all_ops()) == len(OPS)
    assert len(OPS) > 400


def test_every_op_has_a_sample():
    cover = inventory_cover()
    missing = sorted(_label(op) for op in OPS if op not in cover and _label(op) not in NO_SAMPLE)
    assert not missing, f"{len(missing)} ops have no sample program: {missing}"
    stale = sorted(name for name in NO_SAMPLE if any(
        _label(op) == name and op in cover for op in OPS) or
        all(_label(op) != name for op in OPS))
    assert not stale, f"NO_SAMPLE lists ops that now have a sample, or no longer exist: {stale}"


@pytest.mark.parametrize("label", sorted(KNOWN_DIFFERENCES))
def test_known_differences_still_differ(label):
    program, = [p for p in programs() if p.label == label]
    e_names, t_names = _node_names(program)
    assert e_names != t_names, f"{label} now matches torch: remove it from KNOWN_DIFFERENCES"


@pytest.mark.parametrize("op", OPS, ids=_label)
def test_op(op):
    if _label(op) in NO_SAMPLE:
        assert op not in inventory_cover()      # (reported by test_every_op_has_a_sample)
        return
    program, in_forward = inventory_cover()[op]
    e_names, t_names = _node_names(program)
    if program.node_differs:
        assert e_names[0][0] == program.node_differs
    else:
        assert e_names == t_names, f"{program}: {e_names} != {t_names}"
    if op.differentiable and in_forward and any(e_names):
        assert any(op.node_cls.__name__ in names for names in e_names), \
            f"{program} runs {op.name} but its graph has no {op.node_cls.__name__}"
    if op.differentiable and any(e_names):
        torch_backward = _torch_backward_error(program)
        if torch_backward is None:
            # ember's gradients pass gradcheck, or fail it where torch's do (ember gives
            # torch's gradients: as_strided_scatter's input gradient is one, by design)
            assert _gradcheck(ember, program) is _gradcheck(torch, program), program
        else:       # no derivative (torch raises in backward): ember raises the same error
            def ember_backward():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    _backward(ember, *program.call(ember))
            check_same_error(ember_backward, torch_backward)


@functools.cache
def _torch_backward_error(program):
    """The error torch's backward of the program raises (None: it runs)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            _backward(torch, *program.call(torch))
        except Exception as err:
            return err
    return None
