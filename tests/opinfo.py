"""The shared op-sample table and the generic checks it drives (OpInfo-style), against torch.

An `OpInfo` names an op, says how to call it in either library, and generates sample inputs.
Samples hold NumPy arrays; `to_ember` / `to_torch` turn them into tensors of each library, so
both see exactly the same numbers. One check function per property:

    check_forward(op, dtype)      values, dtype and shape of every output vs torch
    check_backward(op, dtype)     input gradients for a random upstream gradient vs torch
    check_gradcheck(op)           ember.autograd.gradcheck in float64
    check_gradgradcheck(op)       ember.autograd.gradgradcheck in float64
    check_node_names(op, dtype)   grad_fn.name() along next_functions vs torch's graph

Usage from a test file:

    from opinfo import OpInfo, Sample, make, check_forward
    OPS = [OpInfo("add", lambda lib, a, b: lib.add(a, b), samples=binary_samples)]

    @pytest.mark.parametrize("op", OPS, ids=str)
    def test_forward(op): ...

An op function takes the library module first (`ember` or `torch`), then the sample's args and
kwargs; when the two libraries must be called differently, give `torch_fn` as well.

Samples that torch rejects are still checked, by check_forward: ember must raise the same
exception type with the same message (check_same_error), and it must emit the same warnings.

The tables at the end (POINTWISE_OPS, LOGIC_OPS, REDUCTION_OPS, LINALG_OPS, JOINING_OPS) are
driven by tests/test_ops_*.py.
"""
import itertools
import math
import warnings

import ml_dtypes
import numpy as np
import pytest
import torch

import ember

# ----------------------------------------------------------------------------- dtypes
ALL_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
              "float32", "float64", "complex64", "complex128")
INTS = ("uint8", "int8", "int16", "int32", "int64")
FLOATS = ("float32", "float64")
HALFS = ("float16", "bfloat16")
ALL_FLOATS = FLOATS + HALFS
COMPLEX = ("complex64", "complex128")
NUMERIC = INTS + ALL_FLOATS

NP_DTYPE = {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
            "int32": np.int32, "int64": np.int64, "float16": np.float16,
            "bfloat16": ml_dtypes.bfloat16, "float32": np.float32, "float64": np.float64,
            "complex64": np.complex64, "complex128": np.complex128}

# (atol, rtol) for comparing values computed in each dtype by two different libraries
TOLERANCE = {"float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1.6e-2), "float32": (1e-5, 1.3e-6),
             "float64": (1e-7, 1e-7), "complex64": (1e-5, 1.3e-6),
             "complex128": (1e-7, 1e-7)}


def is_float(name):
    return name in ALL_FLOATS or name in COMPLEX


# ----------------------------------------------------------------------------- sample arrays
class NoGrad:
    """Marks a float array argument that must not require grad (e.g. a mask-like operand)."""

    def __init__(self, array):
        self.array = array


def make(shape, dtype, rng, low=-3.0, high=3.0, exclude_zero=False):
    """A random array of `shape` and ember/torch dtype name `dtype` with values in [low, high)."""
    shape = tuple(shape)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype in INTS:
        lo = max(int(math.floor(low)), 0 if dtype == "uint8" else -128)
        hi = max(int(math.ceil(high)), lo + 1)
        a = rng.integers(lo, hi, shape)
        if exclude_zero:
            a[a == 0] = 1
        return a.astype(NP_DTYPE[dtype])
    a = np.asarray(rng.uniform(low, high, shape))
    if dtype in COMPLEX:
        a = np.asarray(a + 1j * rng.uniform(low, high, shape))
    if exclude_zero:
        a[np.abs(a) < 0.1] = 0.5
    return np.asarray(a).astype(NP_DTYPE[dtype])


class Sample:
    """The positional and keyword arguments of one call. Arrays become tensors; a list of
    arrays becomes a list of tensors; anything else is passed as it is."""

    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs

    def __repr__(self):
        def show(a):
            if isinstance(a, np.ndarray):
                return f"array{a.shape}:{a.dtype}"
            if isinstance(a, NoGrad):
                return f"nograd({show(a.array)})"
            if isinstance(a, (list, tuple)):
                return "[" + ", ".join(show(x) for x in a) + "]"
            return repr(a)
        return "Sample(" + ", ".join([show(a) for a in self.args] +
                                     [f"{k}={show(v)}" for k, v in self.kwargs.items()]) + ")"


def _convert(value, make_tensor, requires_grad):
    if isinstance(value, NoGrad):
        return make_tensor(value.array, False)
    if isinstance(value, np.ndarray):
        floating = value.dtype.kind in "fc" or value.dtype == ml_dtypes.bfloat16
        return make_tensor(value, requires_grad and floating)
    if isinstance(value, list):
        return [_convert(v, make_tensor, requires_grad) for v in value]
    return value


def _ember_tensor(a, requires_grad):
    t = ember.tensor(a.copy())
    t.requires_grad_(requires_grad)
    return t


def _torch_tensor(a, requires_grad):
    if a.dtype == ml_dtypes.bfloat16:
        t = torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    else:
        t = torch.from_numpy(a.copy())
    return t.requires_grad_(requires_grad)


def to_ember(sample, requires_grad=False):
    """(args, kwargs) for ember; float arrays require grad when asked."""
    return ([_convert(a, _ember_tensor, requires_grad) for a in sample.args],
            {k: _convert(v, _ember_tensor, requires_grad) for k, v in sample.kwargs.items()})


def to_torch(sample, requires_grad=False):
    return ([_convert(a, _torch_tensor, requires_grad) for a in sample.args],
            {k: _convert(v, _torch_tensor, requires_grad) for k, v in sample.kwargs.items()})


def grad_leaves(args, kwargs):
    """The tensors of a converted call that require grad, in argument order."""
    found = []

    def walk(v):
        if isinstance(v, (ember.Tensor, torch.Tensor)):
            if v.requires_grad:
                found.append(v)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    for a in list(args) + list(kwargs.values()):
        walk(a)
    return found


# ----------------------------------------------------------------------------- the record
class OpInfo:
    """One op of the table.

    name          test id
    fn            fn(lib, *args, **kwargs): calls the op through module `lib` (ember or torch)
    samples       samples(dtype, rng) -> iterable of Sample
    dtypes        the dtype names the forward is checked in
    torch_fn      optional: how to call torch when it differs from fn(torch, ...)
    grad          whether the op is differentiable (backward and node names are checked)
    grad_dtypes   dtypes the backward is checked in
    gradgrad      whether gradgradcheck applies (False for piecewise-constant derivatives...)
    node          None: node names are compared with torch's; a string: additionally the root
                  node's expected name (documents it in the table)
    node_differs  a known, explained difference from torch's graph: the node-name check then
                  asserts ember's root node is `node` instead of comparing with torch (these are
                  listed as differences from PyTorch, never silently skipped)
    tol           optional {dtype: (atol, rtol)} overriding TOLERANCE
    """

    def __init__(self, name, fn, samples, dtypes=FLOATS, *, torch_fn=None, grad=True,
                 grad_dtypes=FLOATS, gradcheck=True, gradgrad=True, node=None, tol=None,
                 grad_samples=None, node_differs=None):
        assert node_differs is None or node is not None, "say which node ember makes instead"
        self.node_differs = node_differs
        self.name = name
        self.fn = fn
        self.torch_fn = torch_fn or fn
        self.samples = samples
        self.grad_samples = grad_samples or samples
        self.dtypes = tuple(dtypes)
        self.grad = grad
        self.grad_dtypes = tuple(d for d in grad_dtypes) if grad else ()
        self.gradcheck = grad and gradcheck
        self.gradgrad = grad and gradcheck and gradgrad
        self.node = node
        self.tol = tol or {}

    def __repr__(self):
        return self.name

    def ember_call(self, args, kwargs):
        return self.fn(ember, *args, **kwargs)

    def torch_call(self, args, kwargs):
        return self.torch_fn(torch, *args, **kwargs)

    def sample_list(self, dtype, seed=0, for_grad=False):
        samples = self.grad_samples if for_grad else self.samples
        return list(samples(dtype, np.random.default_rng(seed)))


def table_tests(ops, forward_ops=None):
    """The five table-driven checks of a table of ops, as pytest test functions:
    `test_forward, test_backward, test_gradcheck, test_gradgradcheck, test_node_names =
    table_tests(OPS)` in a test module runs them all."""
    grad_ops = [op for op in ops if op.grad]

    @pytest.mark.parametrize("op,dtype", params(forward_ops or ops))
    def test_forward(op, dtype):
        check_forward(op, dtype)

    @pytest.mark.parametrize("op,dtype", params(grad_ops, "grad_dtypes"))
    def test_backward(op, dtype):
        check_backward(op, dtype)

    @pytest.mark.parametrize("op", [op for op in grad_ops if op.gradcheck], ids=str)
    def test_gradcheck(op):
        check_gradcheck(op)

    @pytest.mark.parametrize("op", [op for op in grad_ops if op.gradgrad], ids=str)
    def test_gradgradcheck(op):
        check_gradgradcheck(op)

    @pytest.mark.parametrize("op", grad_ops, ids=str)
    def test_node_names(op):
        check_node_names(op)

    return test_forward, test_backward, test_gradcheck, test_gradgradcheck, test_node_names


def params(ops, dtypes_attr="dtypes"):
    """pytest parameters (op, dtype) over each op's dtypes, with readable ids."""
    import pytest
    return [pytest.param(op, d, id=f"{op.name}-{d}") for op in ops
            for d in getattr(op, dtypes_attr)]


# ----------------------------------------------------------------------------- comparisons
def dtype_name(t):
    return str(t.dtype).split(".")[-1]


def as_numpy(t):
    """A tensor of either library as a float64/complex128/int64/bool NumPy array."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        if t.dtype in (torch.bfloat16, torch.float16):
            t = t.to(torch.float64)
        return t.resolve_conj().numpy()
    a = np.asarray(t.detach()._data)      # _data: numpy() refuses bfloat16, as torch does
    if a.dtype == ml_dtypes.bfloat16 or a.dtype == np.float16:
        a = a.astype(np.float64)
    return a


def assert_same(e, t, tol=None, what="output", scale=1.0):
    """ember value `e` equals torch value `t`: type, dtype, shape and (close) values.

    Float values may differ by the (atol, rtol) of their dtype: TOLERANCE, overridden by `tol`
    ({dtype name: (atol, rtol)}), times `scale`."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{what}: expected a Tensor, got {type(e).__name__}"
        assert dtype_name(e) == dtype_name(t), f"{what}: dtype {e.dtype} != {t.dtype}"
        assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} != " \
                                                 f"{tuple(t.shape)}"
        ea, ta = as_numpy(e), as_numpy(t)
        if ta.dtype.kind in "fc":
            atol, rtol = (tol or {}).get(dtype_name(t), TOLERANCE.get(dtype_name(t), (0, 0)))
            atol, rtol = atol * scale, rtol * scale
            np.testing.assert_allclose(ea, ta, atol=atol, rtol=rtol, equal_nan=True,
                                       err_msg=what)
        else:
            np.testing.assert_array_equal(ea, ta, err_msg=what)
        return
    if isinstance(t, tuple):
        assert isinstance(e, tuple) and len(e) == len(t), f"{what}: {e!r} vs {t!r}"
        if hasattr(t, "_fields"):
            assert getattr(e, "_fields", None) == t._fields, f"{what}: fields differ"
            assert type(e).__name__ == type(t).__name__, f"{what}: return type name"
        for i, (x, y) in enumerate(zip(e, t)):
            assert_same(x, y, tol, f"{what}[{i}]", scale)
        return
    if isinstance(t, list):
        assert isinstance(e, list) and len(e) == len(t), f"{what}: {e!r} vs {t!r}"
        for i, (x, y) in enumerate(zip(e, t)):
            assert_same(x, y, tol, f"{what}[{i}]", scale)
        return
    assert type(e) is type(t), f"{what}: type {type(e).__name__} != {type(t).__name__}"
    if isinstance(t, float) and math.isnan(t):
        assert math.isnan(e), what
    else:
        assert e == t, f"{what}: {e!r} != {t!r}"


def _tensors_of(out):
    if isinstance(out, (ember.Tensor, torch.Tensor)):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors_of(o)]
    return []


# ----------------------------------------------------------------------------- the checks
def check_forward(op, dtype, seed=0):
    """Every sample: same values, dtype and shape as torch (or the same error)."""
    samples = op.sample_list(dtype, seed)
    assert samples, f"{op.name}: no samples for {dtype}"
    for sample in samples:
        targs, tkw = to_torch(sample)
        eargs, ekw = to_ember(sample)
        try:
            with warnings.catch_warnings(record=True) as t_warned:
                warnings.simplefilter("always")
                expected = op.torch_call(targs, tkw)
        except Exception as err:            # torch rejects it: ember must reject it the same way
            check_same_error(lambda: op.ember_call(eargs, ekw), err)
            continue
        with warnings.catch_warnings(record=True) as e_warned:
            warnings.simplefilter("always")
            got = op.ember_call(eargs, ekw)
        assert_same(got, expected, op.tol, f"{op.name}{sample!r}")
        assert _warning_texts(e_warned) == _warning_texts(t_warned), f"{op.name}{sample!r}"


def _warning_texts(records):
    """(category, message) of each warning, without torch's C++ location suffix."""
    return [(r.category.__name__, str(r.message).split(" (Triggered internally at")[0])
            for r in records]


def check_backward(op, dtype, seed=0):
    """Gradients of the inputs for a random upstream gradient, vs torch."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # (check_forward compares the warnings)
        _check_backward(op, dtype, seed)


def _check_backward(op, dtype, seed):
    rng = np.random.default_rng(seed + 1)
    checked = 0
    for sample in op.sample_list(dtype, seed, for_grad=True):
        targs, tkw = to_torch(sample, requires_grad=True)
        eargs, ekw = to_ember(sample, requires_grad=True)
        t_leaves, e_leaves = grad_leaves(targs, tkw), grad_leaves(eargs, ekw)
        if not t_leaves or not torch_accepts(op, sample):
            continue
        t_outs = [o for o in _tensors_of(op.torch_call(targs, tkw)) if o.requires_grad]
        e_all = _tensors_of(op.ember_call(eargs, ekw))
        e_outs = [o for o in e_all if o.requires_grad]
        assert len(e_outs) == len(t_outs), f"{op.name}{sample!r}: differentiable outputs"
        if not t_outs:
            continue
        ups = [make(o.shape, dtype_name(o), rng) for o in t_outs]
        t_grads = torch.autograd.grad(t_outs, t_leaves, [_torch_tensor(u, False) for u in ups],
                                      allow_unused=True)
        e_grads = ember.autograd.grad(e_outs, e_leaves, [_ember_tensor(u, False) for u in ups],
                                      allow_unused=True)
        for i, (eg, tg) in enumerate(zip(e_grads, t_grads)):
            if tg is None:
                assert eg is None or not as_numpy(eg).any(), f"{op.name}: grad {i} not None"
                continue
            assert eg is not None, f"{op.name}{sample!r}: grad of input {i} is None"
            assert_same(eg, tg, op.tol, f"{op.name}{sample!r} grad {i}", scale=10)
        checked += 1
    assert checked, f"{op.name}: no sample had a differentiable input"


def torch_accepts(op, sample):
    """Whether torch runs the sample (samples torch rejects are checked by check_forward, which
    compares the errors; the gradient checks skip them)."""
    targs, tkw = to_torch(sample, requires_grad=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # (check_forward compares the warnings)
            op.torch_call(targs, tkw)
    except Exception:
        return False
    return True


def _float64_call(op, sample):
    """A function of the differentiable float64 tensors only, for gradcheck."""
    eargs, ekw = to_ember(sample, requires_grad=True)
    leaves = grad_leaves(eargs, ekw)
    ids = [id(x) for x in leaves]

    def rebuild(v, new):
        if isinstance(v, ember.Tensor) and id(v) in ids:
            return new[ids.index(id(v))]
        if isinstance(v, list):
            return [rebuild(x, new) for x in v]
        return v

    def fn(*new):
        out = op.ember_call([rebuild(a, new) for a in eargs],
                            {k: rebuild(v, new) for k, v in ekw.items()})
        return tuple(o for o in _tensors_of(out) if o.dtype.is_floating_point or
                     o.dtype.is_complex)
    return fn, leaves


def check_gradcheck(op, seed=0, second_order=False):
    """ember.autograd.gradcheck (or gradgradcheck) on every float64 sample."""
    from ember.autograd.gradcheck import gradcheck, gradgradcheck
    checked = 0
    for sample in op.sample_list("float64", seed, for_grad=True):
        if not torch_accepts(op, sample):
            continue
        fn, leaves = _float64_call(op, sample)
        if not leaves:
            continue
        if second_order:
            assert gradgradcheck(fn, tuple(leaves)), f"{op.name}{sample!r}"
        else:
            assert gradcheck(fn, tuple(leaves)), f"{op.name}{sample!r}"
        checked += 1
    assert checked, f"{op.name}: no float64 sample with a differentiable input"


def check_gradgradcheck(op, seed=0):
    check_gradcheck(op, seed, second_order=True)


def graph_names(root):
    """Names of the nodes reachable from `root`, breadth first along next_functions (each
    node once; None edges appear as None): comparable between ember and torch."""
    if root is None:
        return []
    names, seen, queue = [], set(), [root]
    while queue:
        node = queue.pop(0)
        if node is None:
            names.append(None)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name())
        queue.extend(fn for fn, _ in node.next_functions)
    return names


def check_node_names(op, dtype="float32", seed=0):
    """The graph of each sample's outputs has the node names torch's graph has."""
    checked = 0
    for sample in op.sample_list(dtype, seed, for_grad=True):
        targs, tkw = to_torch(sample, requires_grad=True)
        eargs, ekw = to_ember(sample, requires_grad=True)
        if not grad_leaves(targs, tkw) or not torch_accepts(op, sample):
            continue
        t_outs = _tensors_of(op.torch_call(targs, tkw))
        e_outs = _tensors_of(op.ember_call(eargs, ekw))
        for e, t in zip(e_outs, t_outs):
            if op.node_differs:
                assert e.grad_fn is not None and e.grad_fn.name() == op.node
                continue
            t_names = graph_names(t.grad_fn)
            e_names = graph_names(e.grad_fn)
            assert e_names == t_names, f"{op.name}{sample!r}: {e_names} != {t_names}"
            if op.node is not None and e.grad_fn is not None:
                assert e.grad_fn.name() == op.node
        checked += 1
    assert checked, f"{op.name}: no sample had a differentiable input"


# ----------------------------------------------------------------------------- errors
def check_same_error(ember_thunk, torch_error_or_thunk):
    """ember raises the same exception type with the same message as torch."""
    if isinstance(torch_error_or_thunk, BaseException):
        t_err = torch_error_or_thunk
    else:
        try:
            torch_error_or_thunk()
        except Exception as err:
            t_err = err
        else:
            raise AssertionError("torch did not raise")
    try:
        ember_thunk()
    except Exception as err:
        e_err = err
    else:
        raise AssertionError(f"ember did not raise; torch raised {type(t_err).__name__}: "
                             f"{t_err}")
    assert type(e_err).__name__ == type(t_err).__name__, \
        f"{type(e_err).__name__}: {e_err} != {type(t_err).__name__}: {t_err}"
    assert normalise_message(str(e_err)) == normalise_message(str(t_err)), \
        f"{type(e_err).__name__}: {e_err} != {type(t_err).__name__}: {t_err}"


def normalise_message(msg):
    """torch appends C++ context to some messages; compare the first line, library-neutral."""
    return msg.split("\nException raised from")[0].strip().replace("torch.", "ember.") \
        .replace("ember.", "")


# ----------------------------------------------------------------------------- sample helpers
# Broadcasting shape pairs used by the binary ops (incl. 0-dim and 0-size).
BROADCAST_PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3)),
                   ((2, 3), ()), ((0, 3), (1, 3)), ((5,), (1,))]


def binary_samples(low=-3.0, high=3.0, exclude_zero_rhs=False, scalar=None, pairs=None):
    """Samples (a, b) over the broadcasting pairs, plus a tensor-scalar sample."""
    def gen(dtype, rng):
        for sa, sb in pairs or BROADCAST_PAIRS:
            yield Sample(make(sa, dtype, rng, low, high),
                         make(sb, dtype, rng, low, high, exclude_zero=exclude_zero_rhs))
        if scalar is not None:
            yield Sample(make((2, 3), dtype, rng, low, high), scalar)
    return gen


def unary_samples(low=-3.0, high=3.0, shapes=((3, 4), (), (0, 2), (5,))):
    def gen(dtype, rng):
        for s in shapes:
            yield Sample(make(s, dtype, rng, low, high))
    return gen


def product(*iterables):
    return list(itertools.product(*iterables))


# ============================================================================= the op table
def _s(*args, **kwargs):
    return Sample(*args, **kwargs)


def _fixed(*builders):
    """Samples from builder functions `b(dtype, rng) -> Sample`."""
    def gen(dtype, rng):
        for b in builders:
            yield b(dtype, rng)
    return gen


def _inplace(method):
    """`a.clone().<method>(*rest)`: an in-place op on a non-leaf (allowed under autograd)."""
    return lambda lib, a, *rest, **kw: getattr(a.clone(), method)(*rest, **kw)


def _augmented(symbol):
    """`a = a.clone(); a <symbol>= b`: Python's augmented assignment operators."""
    code = compile(f"def f(lib, a, b):\n    a = a.clone()\n    a {symbol}= b\n    return a",
                   "<augmented>", "exec")
    namespace = {}
    exec(code, namespace)
    return namespace["f"]


def _inplace_on_view(method, *args, **kwargs):
    """`b = a.clone(); b[0].<method>(...); return b`: an in-place op on a view of a tensor in
    the graph (PyTorch rewrites the base's history: CopySlices)."""
    def fn(lib, a):
        b = a.clone()
        getattr(b[0], method)(*args, **kwargs)
        return b
    return fn


POS = dict(low=0.2, high=3.0)          # domain of log, sqrt, ...
UNIT = dict(low=-0.9, high=0.9)        # domain of asin, atanh, erfinv, ...

_UNARY = [
    # name, domain, dtypes, gradgrad
    ("neg", {}, NUMERIC), ("abs", {}, NUMERIC), ("sign", {}, NUMERIC),
    ("reciprocal", POS, NUMERIC), ("sqrt", POS, NUMERIC), ("rsqrt", POS, NUMERIC),
    ("exp", {}, NUMERIC), ("exp2", {}, NUMERIC), ("expm1", {}, NUMERIC), ("log", POS, NUMERIC),
    ("log2", POS, NUMERIC), ("log10", POS, NUMERIC), ("log1p", POS, NUMERIC),
    ("sin", {}, NUMERIC), ("cos", {}, NUMERIC), ("tan", UNIT, NUMERIC), ("asin", UNIT, NUMERIC),
    ("acos", UNIT, NUMERIC), ("atan", {}, NUMERIC), ("sinh", {}, NUMERIC),
    ("cosh", {}, NUMERIC), ("tanh", {}, NUMERIC), ("asinh", {}, NUMERIC),
    ("acosh", dict(low=1.2, high=3.0), NUMERIC), ("atanh", UNIT, NUMERIC),
    ("sigmoid", {}, NUMERIC), ("erf", {}, NUMERIC), ("erfc", {}, NUMERIC),
    ("erfinv", UNIT, NUMERIC), ("relu", {}, NUMERIC), ("floor", {}, NUMERIC),
    ("ceil", {}, NUMERIC), ("trunc", {}, NUMERIC), ("frac", {}, ALL_FLOATS),
    ("round", {}, NUMERIC), ("square", {}, NUMERIC),
]
# ops whose derivative is zero/piecewise constant: torch's graph still has their node
_PIECEWISE = {"sign", "floor", "ceil", "trunc", "round", "frac"}


def _unary_op(name, domain, dtypes):
    return OpInfo(name, lambda lib, a, _n=name: getattr(lib, _n)(a),
                  unary_samples(**domain), dtypes=dtypes,
                  gradgrad=name not in ("relu", "abs") and name not in _PIECEWISE)


def _int_exponent(dtype, rng):
    return _s(make((3, 4), dtype, rng, 0.5, 2.5), 3)


POINTWISE_OPS = [_unary_op(*u) for u in _UNARY] + [
    OpInfo("logit", lambda lib, a: lib.logit(a), unary_samples(0.05, 0.95), NUMERIC),
    OpInfo("logit_eps", lambda lib, a: lib.logit(a, eps=0.2), unary_samples(0.05, 0.95),
           gradgrad=False),
    OpInfo("round_decimals", lambda lib, a: lib.round(a, decimals=2), unary_samples(),
           ALL_FLOATS),
    OpInfo("round_neg_decimals", lambda lib, a: lib.round(a * 100, decimals=-1),
           unary_samples()),
    OpInfo("nan_to_num", lambda lib, a: lib.nan_to_num(lib.log(a)),
           unary_samples(-1.0, 2.0), ALL_FLOATS, gradgrad=False),
    OpInfo("nan_to_num_args", lambda lib, a: lib.nan_to_num(lib.log(a), nan=1.5, posinf=9.0,
                                                            neginf=-9.0),
           unary_samples(-1.0, 2.0), ALL_FLOATS, gradgrad=False),
    # arithmetic
    OpInfo("add", lambda lib, a, b: lib.add(a, b), binary_samples(scalar=2.5),
           ALL_DTYPES),
    OpInfo("add_alpha", lambda lib, a, b: lib.add(a, b, alpha=2), binary_samples(scalar=3),
           NUMERIC),
    OpInfo("add_kw", lambda lib, a, b: lib.add(input=a, other=b, alpha=3), binary_samples(),
           NUMERIC),
    OpInfo("sub", lambda lib, a, b: lib.sub(a, b), binary_samples(scalar=2), NUMERIC),
    OpInfo("sub_alpha", lambda lib, a, b: lib.sub(a, b, alpha=0.5), binary_samples(scalar=2),
           ALL_FLOATS),
    OpInfo("mul", lambda lib, a, b: lib.mul(a, b), binary_samples(scalar=-1.5), ALL_DTYPES),
    OpInfo("div", lambda lib, a, b: lib.div(a, b), binary_samples(exclude_zero_rhs=True,
                                                                   scalar=4), NUMERIC),
    OpInfo("true_divide", lambda lib, a, b: lib.true_divide(a, b),
           binary_samples(exclude_zero_rhs=True), NUMERIC),
    OpInfo("div_floor", lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
           binary_samples(exclude_zero_rhs=True, scalar=2), NUMERIC, gradgrad=False),
    OpInfo("div_trunc", lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
           binary_samples(exclude_zero_rhs=True, scalar=-2), NUMERIC, gradgrad=False),
    OpInfo("floor_divide", lambda lib, a, b: lib.floor_divide(a, b),
           binary_samples(exclude_zero_rhs=True, scalar=2), NUMERIC, grad=False),
    OpInfo("remainder", lambda lib, a, b: lib.remainder(a, b),
           binary_samples(exclude_zero_rhs=True, scalar=-2), NUMERIC, gradgrad=False),
    OpInfo("fmod", lambda lib, a, b: lib.fmod(a, b),
           binary_samples(exclude_zero_rhs=True, scalar=-2), NUMERIC, gradgrad=False),
    OpInfo("pow", lambda lib, a, b: lib.pow(a, b), binary_samples(0.5, 2.5), NUMERIC),
    OpInfo("pow_scalar", lambda lib, a, e: lib.pow(a, e), _fixed(_int_exponent), NUMERIC),
    OpInfo("pow_float_scalar", lambda lib, a: lib.pow(a, 2.5), unary_samples(0.5, 2.5),
           NUMERIC),
    OpInfo("pow_zero_exponent", lambda lib, a: lib.pow(a, 0), unary_samples(), NUMERIC),
    OpInfo("pow_scalar_base", lambda lib, a: lib.pow(2, a), unary_samples(-2.0, 2.0),
           NUMERIC),
    OpInfo("atan2", lambda lib, a, b: lib.atan2(a, b), binary_samples(exclude_zero_rhs=True),
           NUMERIC),
    OpInfo("maximum", lambda lib, a, b: lib.maximum(a, b), binary_samples(), NUMERIC,
           gradgrad=False),
    OpInfo("minimum", lambda lib, a, b: lib.minimum(a, b), binary_samples(), NUMERIC,
           gradgrad=False),
    OpInfo("clamp", lambda lib, a: lib.clamp(a, -1, 1.5), unary_samples(), NUMERIC,
           gradgrad=False),
    OpInfo("clamp_min", lambda lib, a: lib.clamp(a, min=0.5), unary_samples(), NUMERIC,
           gradgrad=False),
    OpInfo("clamp_int_bounds", lambda lib, a: lib.clamp(a, -1, 2), unary_samples(), NUMERIC,
           gradgrad=False),
    # one Python-number bound: torch's own nodes (ClampMinBackward0, ClampMaxBackward0)
    OpInfo("clamp_min_fn", lambda lib, a: lib.clamp_min(a, 0.5), unary_samples(), NUMERIC,
           gradgrad=False),
    OpInfo("clamp_max_method", lambda lib, a: a.clamp_max(0.5), unary_samples(), NUMERIC,
           gradgrad=False),
    OpInfo("clamp_min_inplace", lambda lib, a: (a * 1).clamp_min_(0.5), unary_samples(),
           NUMERIC, gradgrad=False),
    OpInfo("clamp_inplace_min", lambda lib, a: (a * 1).clamp_(min=0.5), unary_samples(),
           NUMERIC, gradgrad=False),
    OpInfo("clip_max", lambda lib, a: lib.clip(a, max=1), unary_samples(), NUMERIC,
           gradgrad=False),
    OpInfo("clamp_tensor", lambda lib, a, lo, hi: lib.clamp(a, lo, hi),
           _fixed(lambda d, r: _s(make((3, 4), d, r), make((4,), d, r, -2, 0),
                                  make((3, 1), d, r, 0, 2))), NUMERIC, gradgrad=False),
    OpInfo("clamp_tensor_min", lambda lib, a, lo: lib.clamp(a, min=lo),
           _fixed(lambda d, r: _s(make((3, 4), d, r), make((4,), d, r, -2, 0))), NUMERIC,
           gradgrad=False),
    OpInfo("lerp", lambda lib, a, b: lib.lerp(a, b, 0.3), binary_samples(), ALL_FLOATS),
    OpInfo("lerp_tensor", lambda lib, a, b, w: lib.lerp(a, b, w),
           _fixed(lambda d, r: _s(make((3, 4), d, r), make((4,), d, r), make((3, 1), d, r))),
           ALL_FLOATS),
    OpInfo("addcmul", lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5),
           _fixed(lambda d, r: _s(make((3, 4), d, r), make((4,), d, r), make((3, 1), d, r))),
           NUMERIC),
    OpInfo("addcmul_int_value", lambda lib, a, b, c: lib.addcmul(a, b, c, value=2),
           _fixed(lambda d, r: _s(make((3, 4), d, r), make((4,), d, r), make((3, 1), d, r))),
           NUMERIC),
    OpInfo("addcdiv", lambda lib, a, b, c: lib.addcdiv(a, b, c, value=2),
           _fixed(lambda d, r: _s(make((3, 4), d, r), make((4,), d, r),
                                  make((3, 1), d, r, exclude_zero=True))), NUMERIC),
    OpInfo("where", lambda lib, c, a, b: lib.where(c, a, b),
           _fixed(lambda d, r: _s(make((3, 4), "bool", r), make((4,), d, r),
                                  make((3, 1), d, r)),
                  lambda d, r: _s(make((3, 4), "bool", r), make((3, 4), d, r), 0.5)),
           NUMERIC),
    OpInfo("where_scalar_first", lambda lib, c, b: lib.where(c, 2, b),
           _fixed(lambda d, r: _s(make((3, 4), "bool", r), make((3, 4), d, r))), NUMERIC),
    OpInfo("masked_fill", lambda lib, a, m: a.masked_fill(m, 2.5),
           _fixed(lambda d, r: _s(make((3, 4), d, r), make((4,), "bool", r))), NUMERIC),
    OpInfo("masked_fill_tensor", lambda lib, a, m, v: a.masked_fill(m, v),
           _fixed(lambda d, r: _s(make((3, 4), d, r), make((3, 4), "bool", r),
                                  make((), d, r)))),
    # the Python operators, reflected forms included
    OpInfo("op_add", lambda lib, a, b: a + b, binary_samples(scalar=2), ALL_DTYPES),
    OpInfo("op_radd", lambda lib, a: 2.5 + a, unary_samples(), NUMERIC),
    OpInfo("op_sub", lambda lib, a, b: a - b, binary_samples(scalar=1.5), NUMERIC),
    OpInfo("op_rsub", lambda lib, a: 2 - a, unary_samples(), NUMERIC),
    OpInfo("op_rsub_float", lambda lib, a: 2.5 - a, unary_samples(), NUMERIC),
    OpInfo("op_mul", lambda lib, a, b: a * b, binary_samples(scalar=True), ALL_DTYPES),
    OpInfo("op_rmul", lambda lib, a: 3 * a, unary_samples(), NUMERIC),
    OpInfo("op_truediv", lambda lib, a, b: a / b, binary_samples(exclude_zero_rhs=True,
                                                                 scalar=2), NUMERIC),
    OpInfo("op_rtruediv", lambda lib, a: 1 / a, unary_samples(**POS), NUMERIC),
    OpInfo("op_floordiv", lambda lib, a, b: a // b, binary_samples(exclude_zero_rhs=True,
                                                                   scalar=2), NUMERIC,
           grad=False),
    OpInfo("op_rfloordiv", lambda lib, a: 7 // a, unary_samples(**POS), NUMERIC, grad=False),
    OpInfo("op_mod", lambda lib, a, b: a % b, binary_samples(exclude_zero_rhs=True,
                                                             scalar=2), NUMERIC,
           gradgrad=False),
    OpInfo("op_rmod", lambda lib, a: 7 % a, unary_samples(**POS), NUMERIC, grad=False),
    OpInfo("op_pow", lambda lib, a, b: a ** b, binary_samples(0.5, 2.5), NUMERIC),
    OpInfo("op_pow_scalar", lambda lib, a: a ** 2, unary_samples(), NUMERIC),
    OpInfo("op_rpow", lambda lib, a: 2 ** a, unary_samples(-2.0, 2.0), NUMERIC),
    OpInfo("op_rpow_float", lambda lib, a: 1.5 ** a, unary_samples(-2.0, 2.0), NUMERIC),
    OpInfo("op_neg", lambda lib, a: -a, unary_samples(), NUMERIC),
    OpInfo("op_abs", lambda lib, a: abs(a), unary_samples(), NUMERIC, gradgrad=False),
    # in-place forms, as methods and as augmented assignment (errors included: int += float)
    OpInfo("iadd", _augmented("+"), binary_samples(scalar=2.5), NUMERIC),
    OpInfo("isub", _augmented("-"), binary_samples(scalar=2), NUMERIC),
    OpInfo("imul", _augmented("*"), binary_samples(scalar=2), NUMERIC),
    OpInfo("itruediv", _augmented("/"), binary_samples(exclude_zero_rhs=True), NUMERIC),
    OpInfo("ifloordiv", _augmented("//"), binary_samples(exclude_zero_rhs=True), NUMERIC,
           grad=False),
    OpInfo("imod", _augmented("%"), binary_samples(exclude_zero_rhs=True), NUMERIC,
           grad=False),
    OpInfo("ipow", _augmented("**"), binary_samples(0.5, 2.0, scalar=2), ALL_FLOATS),
    OpInfo("add_", _inplace("add_"), binary_samples(scalar=2), NUMERIC),
    OpInfo("add_alpha_", lambda lib, a, b: a.clone().add_(b, alpha=2), binary_samples(),
           NUMERIC),
    OpInfo("sub_", _inplace("sub_"), binary_samples(scalar=2), NUMERIC),
    OpInfo("mul_", _inplace("mul_"), binary_samples(scalar=2), NUMERIC),
    OpInfo("div_", _inplace("div_"), binary_samples(exclude_zero_rhs=True), NUMERIC),
    OpInfo("div_floor_", lambda lib, a, b: a.clone().div_(b, rounding_mode="floor"),
           binary_samples(exclude_zero_rhs=True), NUMERIC, gradgrad=False),
    OpInfo("pow_", _inplace("pow_"), binary_samples(0.5, 2.0, scalar=2), ALL_FLOATS),
    OpInfo("clamp_", lambda lib, a: a.clone().clamp_(-1, 1), unary_samples(), NUMERIC,
           gradgrad=False),
    OpInfo("exp_", _inplace("exp_"), unary_samples(), ALL_FLOATS),
    OpInfo("sqrt_", _inplace("sqrt_"), unary_samples(**POS), NUMERIC),
    OpInfo("neg_", _inplace("neg_"), unary_samples(), NUMERIC),
    OpInfo("addcmul_", lambda lib, a, b, c: a.clone().addcmul_(b, c, value=2),
           _fixed(lambda d, r: _s(make((3, 4), d, r), make((4,), d, r), make((3, 1), d, r))),
           NUMERIC),
    OpInfo("exp_on_view", _inplace_on_view("exp_"), unary_samples(shapes=((3, 4),))),
    OpInfo("clamp_on_view", _inplace_on_view("clamp_", -0.5, 0.5),
           unary_samples(shapes=((3, 4),)), gradgrad=False),
    OpInfo("pow_on_view", _inplace_on_view("pow_", 3), unary_samples(shapes=((3, 4),))),
    OpInfo("mul_on_view", _inplace_on_view("mul_", 2.5), unary_samples(shapes=((3, 4),))),
    OpInfo("masked_fill_", lambda lib, a, m: a.clone().masked_fill_(m, -1.0),
           _fixed(lambda d, r: _s(make((3, 4), d, r), make((4,), "bool", r))), NUMERIC),
]


# every op checked in NUMERIC is checked with bool inputs too (torch's results or its errors)
for _op in POINTWISE_OPS:
    if _op.dtypes == NUMERIC:
        _op.dtypes = ("bool",) + NUMERIC
# and these in complex too
_COMPLEX_OK = {"neg", "exp", "log", "sqrt", "sin", "cos", "tanh", "reciprocal", "add",
               "add_alpha", "sub", "mul", "div", "pow", "pow_scalar", "abs", "sigmoid", "op_add",
               "op_mul", "op_truediv", "op_rsub", "op_rtruediv", "op_pow_scalar", "iadd", "imul",
               "where", "masked_fill", "addcmul", "square", "expm1", "log1p", "rsqrt", "sinh",
               "atan", "asinh", "sign", "round", "floor", "clamp", "maximum", "remainder",
               "atan2", "op_neg", "lerp", "nan_to_num"}
for _op in POINTWISE_OPS:
    if _op.name in _COMPLEX_OK:
        _op.dtypes = _op.dtypes + COMPLEX
        # complex gradients follow PyTorch's convention: grad * conj(f'(z))
        if _op.grad and _op.name not in ("sign", "round", "floor", "clamp", "maximum",
                                         "remainder", "atan2", "nan_to_num"):
            _op.grad_dtypes = _op.grad_dtypes + ("complex128",)


def _bool_pairs(dtype, rng):
    for sa, sb in BROADCAST_PAIRS:
        yield Sample(make(sa, dtype, rng, -2, 2), make(sb, dtype, rng, -2, 2))
    yield Sample(make((2, 3), dtype, rng, -2, 2), 1)
    yield Sample(make((2, 3), dtype, rng, -2, 2), 0.5)


def _isclose_samples(dtype, rng):
    a = make((3, 4), dtype, rng)
    b = a.copy()
    b[0] = b[0] + np.asarray(1e-3, dtype=b.dtype)
    if dtype in ALL_FLOATS:
        a[1, 1] = np.nan
        b[1, 1] = np.nan
    yield Sample(a, b)
    yield Sample(a, b, rtol=1e-2, atol=1e-2)
    yield Sample(a, b, equal_nan=True)


def _nonfinite(dtype, rng):
    a = make((3, 4), dtype, rng)
    if dtype in ALL_FLOATS or dtype in COMPLEX:
        a[0, 0], a[1, 1], a[2, 2] = np.nan, np.inf, -np.inf
    return Sample(a)


_PREDICATE_DTYPES = ("bool",) + NUMERIC
LOGIC_OPS = [
    OpInfo(n, lambda lib, a, b, _n=n: getattr(lib, _n)(a, b), _bool_pairs, _PREDICATE_DTYPES,
           grad=False)
    for n in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")
] + [
    OpInfo(f"op_{n}", lambda lib, a, b, _f=f: _f(a, b), _bool_pairs, _PREDICATE_DTYPES,
           grad=False)
    for n, f in (("eq", lambda a, b: a == b), ("ne", lambda a, b: a != b),
                 ("lt", lambda a, b: a < b), ("ge", lambda a, b: a >= b),
                 ("rlt", lambda a, b: 1 < a))
] + [
    OpInfo(n, lambda lib, a, b, _n=n: getattr(lib, _n)(a, b),
           binary_samples(0, 5, scalar=3), ("bool",) + INTS + FLOATS, grad=False)
    for n in ("bitwise_and", "bitwise_or", "bitwise_xor")
] + [
    OpInfo("bitwise_and_number_first", lambda lib, a: lib.bitwise_and(3, a),
           unary_samples(0, 5), ("bool",) + INTS, grad=False),
    OpInfo("op_rand", lambda lib, a: 6 & a, unary_samples(0, 5), ("bool",) + INTS, grad=False),
    OpInfo("op_and", lambda lib, a, b: a & b, binary_samples(0, 5), ("bool",) + INTS,
           grad=False),
    OpInfo("op_or", lambda lib, a, b: a | b, binary_samples(0, 5), ("bool",) + INTS,
           grad=False),
    OpInfo("op_xor", lambda lib, a, b: a ^ b, binary_samples(0, 5), ("bool",) + INTS,
           grad=False),
    OpInfo("op_invert", lambda lib, a: ~a, unary_samples(0, 5), ("bool",) + INTS + FLOATS,
           grad=False),
    OpInfo("op_lshift", lambda lib, a, b: a << b, binary_samples(0, 3), INTS, grad=False),
    OpInfo("op_rshift", lambda lib, a, b: a >> b, binary_samples(0, 3), INTS, grad=False),
    OpInfo("logical_not", lambda lib, a: lib.logical_not(a), unary_samples(), _PREDICATE_DTYPES,
           grad=False),
    OpInfo("isclose", lambda lib, a, b, **kw: lib.isclose(a, b, **kw), _isclose_samples,
           NUMERIC, grad=False),
    OpInfo("allclose", lambda lib, a, b, **kw: lib.allclose(a, b, **kw), _isclose_samples,
           ALL_FLOATS, grad=False),
    OpInfo("equal", lambda lib, a, b: lib.equal(a, b), binary_samples(), _PREDICATE_DTYPES,
           grad=False),
    OpInfo("equal_self", lambda lib, a: lib.equal(a, a.clone()), unary_samples(),
           _PREDICATE_DTYPES, grad=False),
    OpInfo("isnan", lambda lib, a: lib.isnan(a), _fixed(_nonfinite), ALL_DTYPES, grad=False),
    OpInfo("isinf", lambda lib, a: lib.isinf(a), _fixed(_nonfinite), ALL_DTYPES, grad=False),
    OpInfo("isfinite", lambda lib, a: lib.isfinite(a), _fixed(_nonfinite), ALL_DTYPES,
           grad=False),
]


# ----------------------------------------------------------------------------- reductions
def reduce_samples(dims=(None, 0, -1, (0, 2), (-1, 0), ()), keepdims=(False, True), low=-3.0,
                   high=3.0, shape=(2, 3, 4), empty=True, none_dim=True, zero_dim=True):
    """x of `shape` reduced over each of `dims` (None: no dim argument; and, if `none_dim`,
    an explicit dim=None too) with each keepdim, plus zero-dim and 0-size inputs."""
    def gen(dtype, rng):
        for d in dims:
            for k in keepdims:
                x = make(shape, dtype, rng, low, high)
                if d is None:
                    yield Sample(x)
                    if none_dim:
                        yield Sample(x, dim=None, keepdim=k)
                else:
                    yield Sample(x, dim=d, keepdim=k)
        if zero_dim:
            yield Sample(make((), dtype, rng, low, high))
            yield Sample(make((), dtype, rng, low, high), dim=0)
        if empty:
            yield Sample(make((0, 3), dtype, rng, low, high), dim=0)
            yield Sample(make((0, 3), dtype, rng, low, high), dim=1)
            yield Sample(make((0, 3), dtype, rng, low, high))
    return gen


INT_DIMS = (None, 0, -1, 2)
# std/var have no gradient where nothing is left after the correction (size-1 / empty inputs)
# (and dim=[]: torch's backward then divides by n - correction with n = 1, a torch quirk that
# ember does not copy: its gradient for dim=[] is that of all dims)
_DOF_OK = dict(empty=False, zero_dim=False, dims=(None, 0, -1, (0, 2), (-1, 0)))
NO_NONE = dict(none_dim=False)     # ops whose dim cannot be given as None
REDUCTION_OPS = [
    OpInfo("sum", lambda lib, x, **kw: lib.sum(x, **kw), reduce_samples(), ALL_DTYPES),
    OpInfo("sum_dtype", lambda lib, x: lib.sum(x, dtype=lib.float64), reduce_samples(dims=()),
           NUMERIC),
    OpInfo("sum_method", lambda lib, x, **kw: x.sum(**kw), reduce_samples(dims=(1, (0, 1))),
           NUMERIC),
    OpInfo("mean", lambda lib, x, **kw: lib.mean(x, **kw), reduce_samples(), NUMERIC + COMPLEX,
           grad_dtypes=FLOATS),
    OpInfo("mean_dtype", lambda lib, x, **kw: lib.mean(x, dtype=lib.float64, **kw),
           reduce_samples(dims=(None, 1)), NUMERIC),
    OpInfo("prod", lambda lib, x, **kw: lib.prod(x, **kw),
           reduce_samples(dims=INT_DIMS, low=0.5, high=1.5, **NO_NONE), NUMERIC),
    OpInfo("prod_with_zero", lambda lib, x, **kw: lib.prod(x * (x > 0), **kw),
           reduce_samples(dims=INT_DIMS, **NO_NONE), FLOATS),
    OpInfo("max", lambda lib, x, **kw: lib.max(x, **kw), reduce_samples(dims=INT_DIMS, **NO_NONE),
           NUMERIC,
           gradgrad=False),
    OpInfo("min", lambda lib, x, **kw: lib.min(x, **kw), reduce_samples(dims=INT_DIMS, **NO_NONE),
           NUMERIC,
           gradgrad=False),
    OpInfo("max_method", lambda lib, x, **kw: x.max(**kw), reduce_samples(dims=(1,)), NUMERIC,
           gradgrad=False),
    OpInfo("max_binary", lambda lib, a, b: lib.max(a, b), binary_samples(), NUMERIC,
           gradgrad=False),
    OpInfo("amax", lambda lib, x, **kw: lib.amax(x, **kw),
           reduce_samples(dims=(0, -1, (0, 2), ())), NUMERIC, gradgrad=False),
    OpInfo("amin", lambda lib, x, **kw: lib.amin(x, **kw),
           reduce_samples(dims=(0, -1, (0, 2), ())), NUMERIC, gradgrad=False),
    OpInfo("argmax", lambda lib, x, **kw: lib.argmax(x, **kw), reduce_samples(dims=INT_DIMS),
           NUMERIC, grad=False),
    OpInfo("argmin", lambda lib, x, **kw: lib.argmin(x, **kw), reduce_samples(dims=INT_DIMS),
           NUMERIC, grad=False),
    OpInfo("std", lambda lib, x, **kw: lib.std(x, **kw), reduce_samples(), ALL_FLOATS + INTS,
           grad_samples=reduce_samples(**_DOF_OK)),
    OpInfo("var", lambda lib, x, **kw: lib.var(x, **kw), reduce_samples(), ALL_FLOATS + INTS,
           grad_samples=reduce_samples(**_DOF_OK)),
    OpInfo("var_correction0", lambda lib, x, **kw: lib.var(x, correction=0, **kw),
           reduce_samples(dims=(None, 1, (0, 2))),
           grad_samples=reduce_samples(**_DOF_OK)),
    OpInfo("std_unbiased_false", lambda lib, x, **kw: lib.std(x, unbiased=False, **kw),
           reduce_samples(dims=(None, 1, (0, 2))),
           grad_samples=reduce_samples(**_DOF_OK)),
    OpInfo("var_correction2", lambda lib, x, **kw: lib.var(x, correction=2, **kw),
           reduce_samples(dims=(None, 2)),
           grad_samples=reduce_samples(dims=(None, -1, (0, 2)), empty=False, zero_dim=False)),
    OpInfo("var_mean", lambda lib, x, **kw: lib.var_mean(x, **kw),
           reduce_samples(dims=(None, 1, (0, 2)), empty=False),
           grad_samples=reduce_samples(**_DOF_OK)),
    OpInfo("std_mean", lambda lib, x, **kw: lib.std_mean(x, **kw),
           reduce_samples(dims=(None, 1), empty=False),
           grad_samples=reduce_samples(**_DOF_OK)),
    OpInfo("norm", lambda lib, x, **kw: lib.norm(x, **kw), reduce_samples(dims=(None, 1, (0, 2))),
           ALL_FLOATS),
    OpInfo("norm_p1", lambda lib, x, **kw: lib.norm(x, p=1, **kw),
           reduce_samples(dims=(None, 1, (0, 2))), gradgrad=False),
    OpInfo("norm_p3", lambda lib, x, **kw: lib.norm(x, p=3, **kw),
           reduce_samples(dims=(None, 1, (0, 2)))),
    OpInfo("norm_inf", lambda lib, x, **kw: lib.norm(x, p=float("inf"), **kw),
           reduce_samples(dims=(None, 1), empty=False), gradgrad=False),
    OpInfo("vector_norm", lambda lib, x, **kw: lib.linalg.vector_norm(x, **kw),
           reduce_samples(dims=(None, 1, (0, 2)))),
    OpInfo("logsumexp", lambda lib, x, dim=0, **kw: lib.logsumexp(x, dim, **kw),
           reduce_samples(dims=(0, -1, (0, 2), [1])), NUMERIC),
    OpInfo("all", lambda lib, x, **kw: lib.all(x, **kw), reduce_samples(dims=INT_DIMS + ((0, 2),),
                                                                       low=0, high=2),
           ("bool",) + NUMERIC, grad=False),
    OpInfo("any", lambda lib, x, **kw: lib.any(x, **kw), reduce_samples(dims=INT_DIMS + ((0, 2),),
                                                                       low=-1, high=1),
           ("bool",) + NUMERIC, grad=False),
    OpInfo("cumsum", lambda lib, x, dim=0: lib.cumsum(x, dim),
           reduce_samples(dims=(0, -1, 1), keepdims=(False,), **NO_NONE),
           ("bool",) + NUMERIC),
    OpInfo("cumsum_dtype", lambda lib, x: lib.cumsum(x, 1, dtype=lib.float64),
           _fixed(lambda d, r: _s(make((2, 3), d, r))), NUMERIC),
    OpInfo("cumprod", lambda lib, x, dim=0: lib.cumprod(x, dim),
           reduce_samples(dims=(0, -1, 1), keepdims=(False,), low=0.5, high=1.5, **NO_NONE),
           NUMERIC),
    OpInfo("cumprod_with_zero", lambda lib, x, dim=0: lib.cumprod(x * (x > 0), dim),
           reduce_samples(dims=(0, -1, 1), keepdims=(False,), **NO_NONE), FLOATS),
    OpInfo("softmax", lambda lib, x, dim=0: lib.softmax(x, dim),
           reduce_samples(dims=(0, -1, 1), keepdims=(False,), **NO_NONE), ALL_FLOATS),
    OpInfo("log_softmax", lambda lib, x, dim=0: lib.log_softmax(x, dim),
           reduce_samples(dims=(0, -1, 1), keepdims=(False,), **NO_NONE), ALL_FLOATS),
    OpInfo("softmax_dtype", lambda lib, x: lib.softmax(x, 1, dtype=lib.float64),
           _fixed(lambda d, r: _s(make((2, 3), d, r))), NUMERIC),
]


# complex inputs: torch's results where it has a kernel, its errors where it has none
for _op in REDUCTION_OPS:
    if _op.name in ("sum", "prod", "amax", "max", "min", "argmax", "std", "var", "cumsum",
                    "cumprod", "all", "any", "logsumexp", "norm", "vector_norm"):
        _op.dtypes = tuple(_op.dtypes) + COMPLEX
        if _op.name in ("sum", "prod", "std", "var", "cumsum", "cumprod", "logsumexp", "norm",
                        "vector_norm"):
            _op.grad_dtypes = _op.grad_dtypes + ("complex128",)



def _strip_keepdim(gen):
    """Samples without the keepdim keyword (ops whose signature has none)."""
    def wrapped(dtype, rng):
        for s in gen(dtype, rng):
            s.kwargs.pop("keepdim", None)
            yield s
    return wrapped


for _op in REDUCTION_OPS:
    if _op.name in ("cumsum", "cumprod", "softmax", "log_softmax"):
        _op.samples = _strip_keepdim(_op.samples)


# ----------------------------------------------------------------------------- matrix products
MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                 ((2, 2, 3), (3,)), ((2, 2, 3), (3, 4)), ((3,), (2, 3, 4)), ((2, 3), (2, 3, 4)),
                 ((2, 2, 3), (2, 3, 4)), ((2, 1, 2, 3), (3, 3, 2)), ((4, 2, 3), (1, 3, 2)),
                 ((1, 2, 3), (5, 3, 2)), ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((2, 3), (4,)),
                 ((2, 3), (4, 5)), ((2, 2, 3), (2, 4, 5)), ((3, 2, 3), (2, 3, 4)), ((), (3,))]


def pair_samples(pairs, low=-2.0, high=2.0):
    def gen(dtype, rng):
        for sa, sb in pairs:
            yield Sample(make(sa, dtype, rng, low, high), make(sb, dtype, rng, low, high))
    return gen


def _addmm_samples(dtype, rng):
    for s in ((2, 4), (4,), (1, 4), ()):
        yield Sample(make(s, dtype, rng), make((2, 3), dtype, rng), make((3, 4), dtype, rng))


def _einsum(eq):
    return OpInfo(f"einsum[{eq}]", lambda lib, *ops, _eq=eq: lib.einsum(_eq, *ops),
                  _einsum_samples(eq), FLOATS)


def _einsum_samples(eq):
    sizes = dict(zip("ijklmn", (2, 3, 4, 2, 3, 2)))
    batch = {"...": (2, 1), "..": (3,)}      # '...' is (2, 1) in the first operand, (3,) after

    def gen(dtype, rng):
        lhs = eq.split("->")[0].split(",")
        shapes = []
        for n, spec in enumerate(lhs):
            lead = (batch["..."] if n == 0 else batch[".."]) if "..." in spec else ()
            shapes.append(lead + tuple(sizes[c] for c in spec.replace("...", "")))
        yield Sample(*[make(s, dtype, rng) for s in shapes])
    return gen


_MM_DTYPES = INTS + ALL_FLOATS + COMPLEX
LINALG_OPS = [
    OpInfo("matmul", lambda lib, a, b: lib.matmul(a, b), pair_samples(MATMUL_SHAPES),
           _MM_DTYPES),
    OpInfo("matmul_kw", lambda lib, a, b: lib.matmul(input=a, other=b),
           pair_samples(MATMUL_SHAPES[:6])),
    OpInfo("op_matmul", lambda lib, a, b: a @ b, pair_samples(MATMUL_SHAPES), FLOATS),
    OpInfo("mm", lambda lib, a, b: lib.mm(a, b),
           pair_samples([((2, 3), (3, 4)), ((0, 3), (3, 2)), ((2, 3), (4, 5)), ((3,), (3, 2))]),
           _MM_DTYPES),
    OpInfo("bmm", lambda lib, a, b: lib.bmm(a, b),
           pair_samples([((2, 2, 3), (2, 3, 4)), ((2, 2, 3), (3, 3, 4)), ((2, 2, 3), (2, 4, 4)),
                         ((2, 3), (3, 4))]), _MM_DTYPES),
    OpInfo("mv", lambda lib, a, b: lib.mv(a, b),
           pair_samples([((2, 3), (3,)), ((2, 3), (4,)), ((3,), (3,))]), _MM_DTYPES),
    OpInfo("dot", lambda lib, a, b: lib.dot(a, b),
           pair_samples([((3,), (3,)), ((3,), (4,)), ((0,), (0,)), ((2, 3), (3,))]),
           _MM_DTYPES),
    OpInfo("outer", lambda lib, a, b: lib.outer(a, b),
           pair_samples([((3,), (4,)), ((1,), (2,)), ((0,), (2,))]), _MM_DTYPES),
    OpInfo("addmm", lambda lib, s, a, b: lib.addmm(s, a, b), _addmm_samples, _MM_DTYPES),
    OpInfo("addmm_beta_alpha", lambda lib, s, a, b: lib.addmm(s, a, b, beta=0.5, alpha=2),
           _addmm_samples, ALL_FLOATS),
    OpInfo("addmm_beta0", lambda lib, s, a, b: lib.addmm(s, a, b, beta=0), _addmm_samples),
    OpInfo("addmm_int_beta", lambda lib, s, a, b: lib.addmm(s, a, b, beta=2, alpha=3),
           _addmm_samples, INTS + FLOATS),
    OpInfo("matmul_mixed_dtypes", lambda lib, a, b: lib.matmul(a, b.double()),
           pair_samples([((2, 3), (3, 4)), ((3,), (3,))]), grad=False),
] + [_einsum(eq) for eq in ("ij,jk->ik", "ij,jk", "ii->i", "ii", "ij->", "ij->ji", "i,j->ij",
                            "bij,bjk->bik".replace("b", "l"), "ij,ij->ij", "ijk->kj",
                            "ij,jk,kl->il", "i,i->", "...ij,...jk->...ik", "...ij,...jk",
                            "i...->...", "...i,...i")]


for _op in LINALG_OPS:
    if _op.name.startswith("einsum"):
        _op.dtypes = _op.dtypes + ("complex128",)
    if _op.name in ("matmul", "mm", "bmm", "mv", "dot", "outer", "addmm") or \
            _op.name.startswith("einsum"):
        _op.grad_dtypes = _op.grad_dtypes + ("complex128",)


# ----------------------------------------------------------------------------- joining
def _join_samples(dtype, rng):
    yield Sample([make((2, 3), dtype, rng), make((4, 3), dtype, rng)])
    yield Sample([make((2, 3), dtype, rng), make((2, 1), dtype, rng)], 1)
    yield Sample([make((2, 3), dtype, rng), make((2, 2), dtype, rng)], dim=-1)
    yield Sample([make((2, 3), dtype, rng), make((0,), dtype, rng), make((1, 3), dtype, rng)])
    yield Sample([make((2, 3), dtype, rng), make((2, 4), dtype, rng)])
    yield Sample([make((2, 3), dtype, rng), make((3,), dtype, rng)])
    yield Sample([make((), dtype, rng)])
    yield Sample([make((2, 3), dtype, rng)], 2)


def _stack_samples(dtype, rng):
    yield Sample([make((2, 3), dtype, rng), make((2, 3), dtype, rng)])
    yield Sample([make((2, 3), dtype, rng), make((2, 3), dtype, rng)], 2)
    yield Sample([make((2, 3), dtype, rng), make((2, 3), dtype, rng)], dim=-1)
    yield Sample([make((), dtype, rng), make((), dtype, rng)])
    yield Sample([make((2, 3), dtype, rng), make((3, 2), dtype, rng)])
    yield Sample([make((2, 3), dtype, rng)], 3)


def _mixed_cat(dtype, rng):
    yield Sample([make((2, 3), dtype, rng), make((1, 3), "int64", rng),
                  make((1, 3), "float64", rng)])


JOINING_OPS = [
    OpInfo("cat", lambda lib, ts, *a, **kw: lib.cat(ts, *a, **kw), _join_samples, ALL_DTYPES),
    OpInfo("concat", lambda lib, ts, *a, **kw: lib.concat(ts, *a, **kw), _join_samples),
    OpInfo("cat_mixed_dtypes", lambda lib, ts: lib.cat(ts), _mixed_cat, ("float32", "int32")),
    OpInfo("stack", lambda lib, ts, *a, **kw: lib.stack(ts, *a, **kw), _stack_samples,
           ALL_DTYPES),
    OpInfo("stack_mixed_dtypes", lambda lib, ts: lib.stack(ts),
           lambda d, r: iter([Sample([make((2,), d, r), make((2,), "float64", r)])]),
           ("float32", "int32")),
]
