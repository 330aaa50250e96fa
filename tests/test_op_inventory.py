"""Every op in ember's inventory (ember.ops.registry.all_ops(): every op made, all at import)
runs in a sample program whose graph has torch's node names and whose gradients pass
ember.autograd.gradcheck in float64.

The sample programs come from the existing tables (tests/opinfo.py's OpInfo tables, the cases
of test_double_backward_sweep.py and test_nn_node_names.py) plus EXTRA_CASES below. Which ops
a program runs is recorded, not declared: each program runs once (forward and backward) while
every op call is noted, and an op's sample is the first program that ran it. An op no program
runs fails test_every_op_has_a_sample, unless NO_SAMPLE lists it with the reason.

Per op (test_op): the node names of its program's graph equal torch's (an op run in the
forward of a differentiable program must have its node in that graph), and a differentiable
op's program passes gradcheck in float64. Each program is checked once, however many ops it
runs (the results are cached).
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
from opinfo import graph_names, to_ember, to_torch, grad_leaves, torch_accepts
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


def _arrays(*arrays, grad=True):
    """make_args for fixed NumPy arrays (float ones require grad when `grad`)."""
    def make_args(lib, dtype):
        out = []
        for a in arrays:
            a = np.asarray(a)
            if dtype is not None and a.dtype.kind == "f":
                a = a.astype(dtype)
            out.append(lib.tensor(a.copy(), requires_grad=grad and a.dtype.kind == "f"))
        return out, {}
    return make_args


_R = np.random.default_rng(7)
_X34 = _R.uniform(-1, 1, (3, 4))
_POS34 = _R.uniform(0.2, 2.0, (3, 4))

# programs for the ops the tables above do not run
EXTRA_CASES = [
]

NO_SAMPLE = {
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
    if isinstance(out, ember.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _outputs(o)]
    return []


def _run_recorded(program):
    """(ops run in the forward, ops run in the backward); None: the program fails in ember."""
    forward, backward = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with recording(forward, backward) as into:
            try:
                out, args, kwargs = program.call(ember)
                outs = [o for o in _outputs(out) if o.requires_grad]
                leaves = grad_leaves(args, kwargs)
                into(backward)
                if outs and leaves:
                    ember.autograd.grad([o.sum() if o.dtype.is_floating_point else o.abs().sum()
                                         for o in outs], leaves, allow_unused=True)
            except Exception:
                return None
    return forward, backward


@functools.cache
def inventory_cover():
    """{op: (program, ran in the forward)} for the first program that runs each op."""
    cover = {}
    for program in programs():
        ran = _run_recorded(program)
        if ran is None:
            continue
        for in_forward, ops in ((True, ran[0]), (False, ran[1])):
            for op in ops:
                if op not in cover or (in_forward and not cover[op][1]):
                    cover.setdefault(op, (program, in_forward))
    return cover


def _label(op):
    return f"{op.name}:{op.node_cls.__name__}" if op.differentiable else op.name


OPS = registry.all_ops()


# ----------------------------------------------------------------------------- the checks
@functools.cache
def _node_names(program):
    """The program's graph names in ember and torch, output by output (float32... as given)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e_out, _, _ = program.call(ember)
        t_out, _, _ = program.call(torch)
    e_outs = _outputs(e_out)
    t_outs = [t for t in _torch_outputs(t_out)]
    return [graph_names(e.grad_fn) for e in e_outs], [graph_names(t.grad_fn) for t in t_outs]


def _torch_outputs(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _torch_outputs(o)]
    return []


@functools.cache
def _gradcheck(program):
    """gradcheck of the program in float64 over its differentiable inputs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, args, kwargs = program.call(ember, np.float64)
        leaves = grad_leaves(args, kwargs)
        ids = [id(x) for x in leaves]

        def rebuild(v, new):
            if isinstance(v, ember.Tensor) and id(v) in ids:
                return new[ids.index(id(v))]
            if isinstance(v, list):
                return [rebuild(x, new) for x in v]
            return v

        def fn(*new):
            out = program.fn(ember, *[rebuild(a, new) for a in args],
                             **{k: rebuild(v, new) for k, v in kwargs.items()})
            return tuple(o for o in _outputs(out) if o.dtype.is_floating_point or
                         o.dtype.is_complex)
        return gradcheck(fn, tuple(leaves))


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
        assert _gradcheck(program), program
