"""Indexing (basic views, advanced copies, in-place writes) and the index-driven ops (gather,
scatter, sort, topk, flip, roll, repeat, tile, tril/triu, index_select, masked_select, ...),
against torch: values, errors, warnings, gradients, gradchecks and graph node names."""
import numpy as np
import pytest
import torch

import ember
from opinfo import NoGrad, OpInfo, Sample, make, table_tests
from tensor_compare import check, fresh_process_output
from differential import catch, same

X = "t.arange(12).view(3, 4)"

GETITEM_CASES = [
    f"(lambda x: (x[0], x[-1], x[1:], x[::2], x[:, 1], x[..., 1], x[None].shape, "
    f"x[:, None].shape, x[..., None].shape, x[1, 2], x[-1, -1], x[1:, ::3], "
    f"x[None, ..., None].shape, x[..., 0, None].shape))({X})",
    f"(lambda x: (x[0].storage_offset(), x[1:].storage_offset(), x[::2].stride(), "
    f"x[:, 1].storage_offset(), x[1:, 1:].stride(), x[None].stride(), x[:, None].stride(), "
    f"x[..., None].stride(), x[1:3:2, 3:].storage_offset(), x[1, 2].storage_offset()))({X})",
    "(lambda x: (x[5:], x[:-5], x[10:20], x[-100:2], x[2:1], x[::5]))(t.arange(4))",
    "t.arange(4)[::-1]", "t.arange(4)[::0]", "t.arange(4)[4]", "t.arange(4)[-5]",
    f"{X}[0, 4]", f"{X}[3]", f"{X}[1, 1, 1]", f"{X}[:, -5]",
    "t.tensor(5)[None], t.tensor(5)[...], t.tensor(5)[()], t.tensor(5)[None, None].shape",
    "t.tensor(5)[0]", "t.tensor(5)[:]",
    "t.arange(4)[True], t.arange(4)[False], t.arange(4)[None, True].shape",
    # advanced indexing copies
    f"(lambda x: (x[[0, 2]], x[t.tensor([0, 2])], x[[0, 2], [1, 3]], "
    f"x[t.tensor([[0], [2]]), t.tensor([1, 3])], x[:, [0, 0]], x[[1], 1:], x[x > 5], "
    f"x[t.tensor([True, False, True])], x[[True, False, True]], x[1, [1, 2]], x[[-1, -3]], "
    f"x[..., [0]], x[[0, 2]].stride(), x[:, [0, 2]].stride()))({X})",
    "(lambda x: (x[[0, 1], :, [0, 1]].shape, x[:, [0, 1], [0, 1]].shape, x[[0], :, [1]].shape, "
    "x[:, None, [0, 1]].shape, x[0, :, [1, 0]].shape, x[t.tensor(1), [0]].shape, "
    "x[:, [[0, 1]], 1:].shape, x[[0], 1, [2]].shape))(t.zeros(2, 3, 4))",
    "t.zeros(2, 3, 4)[t.ones(2, 3, dtype=t.bool)].shape, "
    "t.zeros(2, 3, 4)[:, t.ones(3, 4, dtype=t.bool)].shape, "
    "t.zeros(2, 3, 4)[t.ones(2, 3, 4, dtype=t.bool)].shape",
    f"{X}[[0, 3]]", f"{X}[t.tensor([5])]", f"{X}[:, [4]]", f"{X}[[0, 1], [0, 1, 2]]",
    f"{X}[t.tensor([True, False])]", f"{X}[t.tensor([1.])]", f"{X}[[0], [9]]",
    "t.zeros(2, 3, 4)[:, :, [9]]", "t.zeros(2, 3, 4)[:, [0], [9]]",
    "t.zeros(2, 3, 4)[[5], :, [1]]", "t.zeros(2, 3, 4)[:, t.ones(3, 3, dtype=t.bool)]",
    f"{X}[t.tensor([0, 1], dtype=t.int32)], {X}[t.tensor([1, 0, 1], dtype=t.uint8)]",
    f"{X}[t.tensor([1, 0], dtype=t.uint8)]",
    f"{X}[t.tensor(1)], {X}[t.tensor([1])].shape, {X}[t.tensor(True)].shape",
    f"{X}[1.0]", f"{X}[t.tensor(1.)]", f"{X}[[]]", f"{X}[np.array([1.5])]",
    f"{X}[[1.5]], {X}[[1.5, 0.2]], {X}[[1, 0.5]], {X}[[True, 1]], {X}[[t.tensor(1)]]",
    f"{X}[[[1.5]]]", f"{X}[(1.5,)]",
    f"{X}[(0, 1)], {X}[[0, 1]].shape, {X}[[[0, 1], [1, 2]]].shape",
    "t.arange(4)[np.array([1, 2])], t.arange(4)[np.int64(1)], "
    "t.arange(4)[np.array([True, False, True, True])]",
]


@pytest.mark.parametrize("expr", GETITEM_CASES)
def test_getitem(expr):
    check(expr)


def test_basic_indexing_is_a_view_and_advanced_a_copy():
    for lib in (torch, ember):
        x = lib.arange(12.).view(3, 4)
        x[1:][0, ::2] = -1           # a view: writes reach x
        x[[0]][0, 0] = 100            # a copy: they don't
        x[x > 10][0] = 100
        assert x.tolist() == [[0., 1, 2, 3], [-1, 5, -1, 7], [8, 9, 10, 11]]


SETITEM_CASES = [
    "(lambda x: (x.__setitem__(0, 1), x)[1])(t.zeros(2, 3))",
    "(lambda x: (x.__setitem__((slice(None), 1), t.tensor([1., 2])), x)[1])(t.zeros(2, 3))",
    "(lambda x: (x.__setitem__(x > 2, 0), x)[1])(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__(x > 2, t.tensor([7, 8, 9])), x)[1])(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__([0, 1], 5), x)[1])(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__(([0, 1], [2, 0]), t.tensor([-1, -2])), x)[1])"
    "(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__((t.tensor([0, 0]), t.tensor([1, 1])), t.tensor([3, 4])), x)[1])"
    "(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__((Ellipsis, None, 0), 9), x)[1])(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__(slice(None), t.tensor([1.5, 2.5, 3.5])), x)[1])"
    "(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__(0, [7, 8, 9]), x)[1])(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__(0, t.tensor([1, 2])), x)[1])(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__([0], t.tensor([1, 2])), x)[1])(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__(x > 10, 1), x)[1])(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__(t.tensor([True, False]), 1), x)[1])(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__((0, [0, 2]), t.tensor(7)), x)[1])(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__(0, 1.7), x)[1])(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__(0, 1+1j), x)[1])(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__(0, float('nan')), x)[1])(t.arange(6).view(2, 3))",
    "(lambda x: (x.__setitem__(0, 5), x)[1])(t.tensor(3))",
    "(lambda x: (x.__setitem__(Ellipsis, 5), x)[1])(t.tensor(3))",
    "(lambda x: (x.__setitem__(slice(None, None, 2), t.tensor([[1], [2]])), x)[1])(t.zeros(3, 2))",
    "(lambda x: (x.__setitem__(slice(None), x.flip(0)), x)[1])(t.arange(4))",
    "(lambda x: (x.__setitem__(0, t.zeros(2, 3)), x)[1])(t.zeros(2, 3))",
    "(lambda x: (x.__setitem__(0, t.zeros(1, 1, 3) + 4), x)[1])(t.zeros(2, 3))",
    "(lambda x: (x.__setitem__(0, 'a'), x)[1])(t.zeros(2, 3))",
    "(lambda x: (x.__setitem__(0, 2**40), x)[1])(t.zeros(2, 3, dtype=t.int32))",
    "(lambda x: (x.__setitem__(0, -1), x)[1])(t.zeros(2, 3, dtype=t.uint8))",
    "(lambda x: (x.__setitem__(0, 300), x)[1])(t.zeros(2, 3, dtype=t.int8))",
    "(lambda x: (x.__setitem__((slice(None), [0, 2]), t.tensor([[1.], [2.]])), x)[1])"
    "(t.zeros(2, 3))",
    "(lambda x: (x.__setitem__(0, True), x)[1])(t.zeros(2, dtype=t.bool))",
    "(lambda x: (x.__setitem__(1, t.tensor(2.5, dtype=t.float64)), x)[1])(t.zeros(2))",
    "(lambda x: (x.__setitem__([0, 0], t.tensor([1., 2])), x)[1])(t.zeros(2))",
    "(lambda x: (x.__setitem__(5, 1), x)[1])(t.zeros(2))",
    "(lambda x: (x.__setitem__([5], 1), x)[1])(t.zeros(2))",
    "(lambda x: (x.__setitem__((0, [9]), 1), x)[1])(t.zeros(2, 3))",
    "(lambda x: (x.__setitem__(1.5, 1), x)[1])(t.zeros(2))",
    "(lambda x: (x[1:].__setitem__(0, 9), x)[1])(t.zeros(3))",
    "(lambda x: (x.t().__setitem__((0, slice(None)), t.tensor([1., 2])), x)[1])(t.zeros(2, 3))",
    "(lambda x: (x.__setitem__(x.sum(1) > 0, 7), x)[1])(t.tensor([[0, 1], [0, 0]]))",
    "(lambda x: (int(x._version), x.__setitem__(0, 1), int(x._version))[::2])(t.zeros(2))",
]


@pytest.mark.parametrize("expr", SETITEM_CASES)
def test_setitem(expr):
    check(expr)


def _setitem_graph(lib, kind):
    leaf = lib.arange(12., dtype=lib.float64).view(3, 4).requires_grad_()
    value = lib.tensor([1., 2, 3, 4], dtype=lib.float64, requires_grad=True)
    x = leaf * 2
    if kind == "int":
        x[1] = value
    elif kind == "slice":
        x[:, 1:3] = value[:2] * value[2:]
    elif kind == "mask":
        x[x > 10] = value[0]
    elif kind == "index":
        x[[0, 2], 1] = value[1:3]
    elif kind == "view_of_view":
        x.t()[2][1:] = value[:2]
    (x * x).sum().backward()
    return x.grad_fn.name(), leaf.grad.tolist(), value.grad.tolist()


@pytest.mark.parametrize("kind", ["int", "slice", "mask", "index", "view_of_view"])
def test_setitem_gradients(kind):
    assert _setitem_graph(ember, kind) == _setitem_graph(torch, kind)


# ----------------------------------------------------------------------------- op table
def _samples(*cases):
    def gen(dtype, rng):
        for shape, args, kwargs in cases:
            yield Sample(make(shape, dtype, rng), *args, **kwargs)
    return gen


def _idx(a):
    return NoGrad(np.asarray(a, dtype=np.int64))


def _op(name, fn, *cases, node=None, **kw):
    return OpInfo(name, fn, _samples(*[(c[0], c[1] if len(c) > 1 else (),
                                        c[2] if len(c) > 2 else {}) for c in cases]),
                  node=node, **kw)


INDEX_OPS = [
    _op("getitem_int", lambda lib, x: x[1], ((3, 4),), node="SelectBackward0"),
    _op("getitem_neg_int", lambda lib, x: x[-1, -2], ((3, 4),)),
    _op("getitem_slice", lambda lib, x: x[1:], ((3, 4),), node="SliceBackward0"),
    _op("getitem_step", lambda lib, x: x[::2, 1::2], ((5, 4),)),
    _op("getitem_all", lambda lib, x: x[:], ((3, 4),)),
    _op("getitem_ellipsis", lambda lib, x: x[...], ((3, 4),), node="AliasBackward0"),
    _op("getitem_col", lambda lib, x: x[:, 0], ((3, 4),)),
    _op("getitem_none", lambda lib, x: x[None], ((3, 4),), node="UnsqueezeBackward0"),
    _op("getitem_mixed", lambda lib, x: x[None, 1:, ..., 2], ((3, 4, 5),)),
    _op("getitem_list", lambda lib, x: x[[0, 2, 2]], ((3, 4),), node="IndexBackward0"),
    _op("getitem_two_lists", lambda lib, x: x[[0, 2, 2], [1, 1, 3]], ((3, 4),)),
    _op("getitem_int_and_list", lambda lib, x: x[0, :, [1, 0]], ((2, 3, 4),)),
    _op("getitem_split_lists", lambda lib, x: x[[0, 1], :, [2, 3]], ((2, 3, 4),)),
    _op("getitem_mask", lambda lib, x: x[x > 0], ((3, 4),)),
    _op("getitem_tensor", lambda lib, x, i: x[i], ((4, 3), (_idx([[0, 3], [1, 1]]),))),
    _op("gather", lambda lib, x, i: lib.gather(x, 1, i), ((3, 4), (_idx([[0, 0], [1, 3],
                                                                           [2, 2]]),)),
        node="GatherBackward0"),
    OpInfo("scatter", lambda lib, x, i, s: x.scatter(1, i, s),
           lambda dtype, rng: [Sample(make((3, 4), dtype, rng), _idx([[0, 1], [3, 2], [2, 0]]),
                                      make((3, 2), dtype, rng))]),
    _op("scatter_value", lambda lib, x, i: x.scatter(0, i, 2.5),
        ((3, 4), (_idx([[0, 1, 2, 0]]),))),
    _op("scatter_add", lambda lib, x, i: x.scatter_add(1, i, x[:, :2] * 3),
        ((3, 4), (_idx([[0, 0], [3, 2], [2, 2]]),))),
    _op("index_select", lambda lib, x, i: x.index_select(1, i), ((3, 4), (_idx([2, 0, 2]),)),
        node="IndexSelectBackward0"),
    _op("index_add", lambda lib, x, i: x.index_add(0, i, x[:2] * 2), ((3, 4), (_idx([2, 2]),))),
    _op("masked_select", lambda lib, x: x.masked_select(x > 0), ((3, 4),),
        node="MaskedSelectBackward0"),
    _op("masked_select_broadcast", lambda lib, x: lib.masked_select(x, x[0] > 0), ((3, 4),)),
    _op("sort", lambda lib, x: x.sort(1)[0], ((3, 5),), node="SortBackward0"),
    _op("sort_descending", lambda lib, x: lib.sort(x, 0, descending=True), ((4, 3),)),
    _op("argsort", lambda lib, x: x.argsort(-1), ((3, 5),), grad=False),
    _op("topk", lambda lib, x: x.topk(2, 1), ((3, 5),), node="TopkBackward0"),
    _op("topk_smallest", lambda lib, x: lib.topk(x, 3, 0, largest=False)[0], ((4, 3),)),
    _op("kthvalue", lambda lib, x: x.kthvalue(2, 1), ((3, 5),), node="KthvalueBackward0"),
    _op("kthvalue_keepdim", lambda lib, x: x.kthvalue(3, 0, keepdim=True)[0], ((4, 3),)),
    _op("flip", lambda lib, x: x.flip(0, 2), ((2, 3, 4),), node="FlipBackward0"),
    _op("flip_list", lambda lib, x: lib.flip(x, [1]), ((3, 4),)),
    _op("fliplr", lambda lib, x: lib.fliplr(x), ((3, 4),)),
    _op("flipud", lambda lib, x: lib.flipud(x), ((3, 4),)),
    _op("roll", lambda lib, x: x.roll(1, 1), ((3, 4),), node="RollBackward0"),
    _op("roll_multi", lambda lib, x: lib.roll(x, (1, -2), (0, 1)), ((3, 4),)),
    _op("roll_flat", lambda lib, x: x.roll(5), ((3, 4),)),
    _op("repeat", lambda lib, x: x.repeat(2, 1, 3), ((3, 4),), node="RepeatBackward0"),
    _op("tile", lambda lib, x: lib.tile(x, (2,)), ((3, 4),)),
    _op("tril", lambda lib, x: x.tril(), ((4, 4),), node="TrilBackward0"),
    _op("tril_offset", lambda lib, x: lib.tril(x, -1), ((2, 3, 4),)),
    _op("triu", lambda lib, x: x.triu(1), ((3, 5),), node="TriuBackward0"),
    _op("nonzero", lambda lib, x: lib.nonzero(x > 0), ((3, 4),), grad=False),
    _op("nonzero_tuple", lambda lib, x: lib.nonzero(x > 0, as_tuple=True), ((3, 4),),
        grad=False),
    _op("argwhere", lambda lib, x: lib.argwhere(x > 0), ((3, 4),), grad=False),
    _op("msort", lambda lib, x: lib.msort(x), ((4, 3),)),
]


test_index_op_forward, test_index_op_backward, test_index_op_gradcheck, \
    test_index_op_gradgradcheck, test_index_op_node_names = table_tests(INDEX_OPS)


ERROR_CASES = [
    "t.gather(t.zeros(2, 3), 1, t.tensor([[5]]))",
    "t.gather(t.zeros(2, 3), 1, t.tensor([[1]], dtype=t.int32))",
    "t.gather(t.zeros(2, 3), 1, t.tensor([[1]], dtype=t.int16))",
    "t.zeros(2, 3).scatter(1, t.tensor([[1]], dtype=t.uint8), 1.)",
    "t.zeros(2, 3).scatter_add(1, t.tensor([[1]], dtype=t.int32), t.ones(1, 1))",
    "t.zeros(2, 3).index_select(1, t.tensor([1], dtype=t.int16))",
    "t.zeros(2, 3).index_select(1, t.tensor([1, 0], dtype=t.int32))",
    "t.zeros(3).index_select(0, t.tensor([3]))",
    "t.zeros(3).index_select(0, t.tensor([[1]]))",
    "t.zeros(3).topk(4)", "t.zeros(3).kthvalue(4)", "t.zeros(3).kthvalue(0)",
    "t.masked_select(t.zeros(3), t.tensor([1, 0, 1]))",
    "t.zeros(2, 3).repeat(2)", "t.tril(t.zeros(3))",
    "t.zeros(2, 3).scatter(1, t.tensor([[0]]), t.ones(1, 1, dtype=t.float64))",
    "t.zeros(3).flip(1)", "t.zeros(3).roll(1, 2)",
]


@pytest.mark.parametrize("expr", ERROR_CASES)
def test_index_op_errors(expr):
    check(expr)


@pytest.mark.parametrize("expr", [
    "(lambda x: x.__setitem__(0, [7, 8, 9]))(t.arange(6).view(2, 3))",
    "t.zeros(2, 3).expand(3)",
    "t.zeros(2, 3).__setitem__(0, t.zeros(2, 3))",
])
def test_messages_keep_torch_type_names(expr):
    """Legacy type names in messages ('torch.LongTensor') are printed as torch prints them."""
    got = []
    for lib in (torch, ember):
        try:
            eval(expr, {"t": lib})
        except Exception as err:
            got.append(str(err))
    assert len(got) == 2 and got[1] == got[0] and "torch." in got[1]

MORE_CASES = [
    '(lambda x: (x.__setitem__([0, 2], x[[0, 2]] + 1), x)[1])(t.arange(4.))',
    '(lambda x: (x.__setitem__(([0, 0], [1, 1]), t.tensor([5., 6])), x)[1])(t.zeros(2, 2))',
    '(lambda x: x.index_put_((t.tensor([0, 0]),), '
    't.tensor([1., 2]), accumulate=True))(t.zeros(3))',
    '(lambda x: x.index_put_((t.tensor([0, 2]),), t.tensor(7.)))(t.zeros(3))',
    '(lambda x: x.index_put((t.tensor([0, 2]), t.tensor([1, 0])), '
    't.tensor([7., 8])))(t.zeros(3, 2))',
    '(lambda x: x.index_put_([t.tensor([True, False, True])], t.tensor(1.)))(t.zeros(3))',
    '(lambda x: x.masked_fill_(x > 1, 0))(t.arange(4.))',
    '(lambda x: x.scatter_(0, t.tensor([2, 0]), t.tensor([5., 6])))(t.zeros(3))',
    '(lambda x: x.scatter_(0, t.tensor([2, 0]), 9.))(t.zeros(3))',
    '(lambda x: x.scatter_add_(0, t.tensor([2, 2]), t.tensor([5., 6])))(t.zeros(3))',
    't.zeros(3).masked_scatter(t.tensor([True, False, True]), t.tensor([1., 2, 3]))',
    't.tensor([3., 1, 2]).sort(), t.tensor([3., 1, 2]).sort(descending=True), '
    't.tensor([[3., 1], [0, 5]]).sort(0)',
    't.tensor([1., 1, 0, 1]).sort(stable=True), '
    't.tensor([1., 1, 0, 1]).argsort(descending=True, stable=True)',
    't.tensor([3., 1, 2, 5]).topk(2), t.tensor([3., 1, 2, 5]).topk(2, largest=False), '
    't.tensor([1., 1, 1]).topk(2)',
    't.tensor([[3., 1, 2], [4, 0, 9]]).kthvalue(2), '
    't.tensor([[3., 1, 2], [4, 0, 9]]).kthvalue(1, 0, True)',
    't.tensor(5.).sort(), t.tensor(5.).topk(1), t.tensor(5.).kthvalue(1)',
    "t.tensor([float('nan'), 1., 2]).sort(), t.tensor([float('nan'), 1., 2]).topk(1)",
    't.arange(6).view(2, 3).flip(0), t.arange(6).view(2, 3).roll(1), '
    't.arange(6).view(2, 3).roll(-1, 1), t.arange(6).view(2, 3).roll((1, 1), (0, 1))',
    't.arange(6).view(2, 3).repeat(2, 2).shape, t.arange(3).repeat(2, 1, 2).shape, '
    't.arange(3).repeat(()), t.tile(t.arange(3), (2, 1))',
    't.arange(3).repeat(0, 2).shape, t.tile(t.arange(6).view(2,3), (2,)).shape',
    't.arange(9).view(3,3).tril(), t.arange(9).view(3,3).triu(-1), t.arange(9).view(3,3).tril(5)',
    't.arange(6).view(2, 3).index_select(0, t.tensor([1, 1])), '
    't.arange(6).view(2,3).index_select(1, t.tensor([], dtype=t.long))',
    't.arange(6).view(2, 3).masked_select(t.tensor([True, False, True])), '
    't.arange(6).masked_select(t.arange(6) > 2)',
    't.nonzero(t.tensor([[1, 0], [0, 2]])), t.nonzero(t.tensor([1, 0, 2]), as_tuple=True), '
    't.nonzero(t.tensor(3)), t.nonzero(t.tensor(0)), t.argwhere(t.tensor([0, 1]))',
    't.gather(t.arange(6).view(2, 3), 0, t.tensor([[1, 0, 1]])), '
    't.gather(t.arange(6).view(2, 3), 1, t.tensor([[2], [0]]))',
    't.arange(6).view(2, 3).gather(1, t.tensor([[0, 1, 2, 2]]))',
    't.arange(3).gather(0, t.tensor([[0]]))',
    't.index_add(t.zeros(3), 0, t.tensor([0, 0, 2]), t.tensor([1., 2, 3])), '
    't.zeros(3).index_add(0, t.tensor([1]), t.tensor([2.]), alpha=3)',
]


@pytest.mark.parametrize("expr", MORE_CASES)
def test_index_ops_values_match_torch(expr):
    check(expr)


def test_scatter_reduce_argument():
    """Values as torch's; the deprecation warning once per process (fresh interpreters)."""
    check("(lambda x: x.scatter(0, t.tensor([2, 0]), t.tensor([5., 6]), reduce='add'))"
          "(t.ones(3))", warns=False)
    check("(lambda x: x.scatter(0, t.tensor([2, 2]), t.tensor([5., 6]), reduce='multiply'))"
          "(t.ones(3))", warns=False)
    torch_out, ember_out = fresh_process_output(
        "import warnings, {lib}\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    for r in ('add', 'multiply', 'add'):\n"
        "        {lib}.ones(3).scatter(0, {lib}.tensor([2, 0]), {lib}.ones(2), reduce=r)\n"
        "for x in w: print(x.category.__name__, x.message)")
    assert ember_out == torch_out and torch_out.count("\n") == 0 and torch_out


NAN, INF = float("nan"), float("inf")


def _x(T):
    return T.arange(6).reshape(2, 3)


# ----------------------------------------------------------------------------- indexing
INDEXING = {
    # topk/kthvalue have no CPU kernel for bool or complex (checked after k's range)
    "topk_bool": lambda T: catch(T.topk, T.tensor([True, False]), 1),
    "topk_bool_k_out_of_range": lambda T: catch(T.topk, T.tensor([True]), 5),
    "topk_bool_scalar": lambda T: catch(T.topk, T.tensor(True), 1),
    "topk_complex": lambda T: catch(T.topk, T.tensor([1j, 2]), 1),
    "topk_dim_bool": lambda T: catch(T.topk, T.tensor([3., 1., 2.]), 1, True),
    "kthvalue_bool": lambda T: catch(T.kthvalue, T.tensor([True, False]), 1),
    "kthvalue_bool_scalar": lambda T: T.kthvalue(T.tensor(True), 1),
    "kthvalue_bool_k_out_of_range": lambda T: catch(T.kthvalue, T.tensor([True]), 2),
    "kthvalue_complex": lambda T: catch(T.kthvalue, T.tensor([1j, 2]), 1),
    "kthvalue_empty": lambda T: catch(T.kthvalue, T.tensor([]), 1),
    "kthvalue_empty_other_dim": lambda T: T.kthvalue(T.ones(2, 0), 1, 0),
    # a 1-d input gives 0-d results (NaN counts as the largest)
    "kthvalue_1d_nan": lambda T: tuple(T.kthvalue(T.tensor([3., NAN, 1.]), 3)),
    "kthvalue_1d": lambda T: tuple(T.kthvalue(T.tensor([3., 2., 1.]), 2)),
    "kthvalue_1d_keepdim": lambda T: tuple(T.kthvalue(T.tensor([3., 2., 1.]), 2, keepdim=True)),
    # gather/scatter take no negative index; the first bad index is the one reported
    "gather_negative": lambda T: catch(T.gather, T.ones(2, 3), 1, T.tensor([[-1]])),
    "gather_first_bad": lambda T: catch(T.gather, T.ones(2, 3), 1, T.tensor([[0, 4], [5, 0]])),
    "gather_first_bad_dim0": lambda T: catch(T.gather, T.ones(2, 3), 0,
                                             T.tensor([[0, 5], [4, 0]])),
    "scatter_too_big": lambda T: catch(T.scatter, T.ones(2, 3), 1, T.tensor([[3]]),
                                       T.zeros(1, 1)),
    "scatter_value_negative": lambda T: catch(T.scatter, T.ones(2, 3), 1, T.tensor([[-1]]), 1.),
    "scatter_add_too_big": lambda T: catch(T.scatter_add, T.ones(2, 3), 1, T.tensor([[3]]),
                                           T.zeros(1, 1)),
    "scatter_inplace_negative": lambda T: catch(lambda: T.ones(2, 3).scatter_(
        1, T.tensor([[-2]]), T.zeros(1, 1))),
    "scatter_reduce_max": lambda T: catch(T.scatter, T.ones(2, 3), 1, T.tensor([[0]]), 2.,
                                          reduce="max"),
    "scatter_inplace_reduce_mean": lambda T: catch(lambda: T.ones(2, 3).scatter_(
        1, T.tensor([[0]]), 2., reduce="mean")),
    "scatter_reduce_multiply": lambda T: T.scatter(T.ones(2, 3), 1, T.tensor([[0]]), 2.,
                                                   reduce="multiply"),
    # index_select: its dim-1 kernel has its own message; negative indices are out of range
    "index_select_dim1_too_big": lambda T: catch(T.index_select, T.ones(2, 3), 1,
                                                 T.tensor([0, 5, -1])),
    "index_select_dim1_negative": lambda T: catch(T.index_select, T.ones(2, 3, 4), -2,
                                                  T.tensor([-1])),
    "index_select_dim0_negative": lambda T: catch(T.index_select, T.ones(2, 3), 0,
                                                  T.tensor([-1])),
    "index_select_last_dim_3d": lambda T: catch(T.index_select, T.ones(2, 3, 4), 2,
                                                T.tensor([4])),
    "index_select_1d_negative": lambda T: catch(T.index_select, T.ones(3), 0, T.tensor([-1])),
    "index_select_scalar_two": lambda T: catch(T.index_select, T.tensor(1.), 0,
                                               T.tensor([0, 0])),
    "index_select_scalar_one": lambda T: catch(T.index_select, T.tensor(1.), 0, T.tensor([1])),
    "index_select_scalar_ok": lambda T: T.index_select(T.tensor(1.), 0, T.tensor(0)),
    # sort: a bool dim matches no signature; complex has no CPU kernel
    "sort_bool_dim": lambda T: catch(T.sort, T.ones(3), True),
    "sort_bool_dim_descending": lambda T: catch(T.sort, T.ones(3), True, True),
    "sort_method_bool_dim": lambda T: catch(lambda: T.ones(3).sort(True)),
    "sort_method_float_dim": lambda T: catch(lambda: T.ones(3).sort(1.5)),
    "argsort_bool_dim": lambda T: catch(T.argsort, T.ones(3), True),
    "argsort_method_bool_dim": lambda T: catch(lambda: T.ones(3).argsort(True)),
    "sort_complex": lambda T: catch(T.sort, T.tensor([1j, 2])),
    "sort_complex_scalar": lambda T: catch(T.sort, T.tensor(1j)),
    "argsort_complex": lambda T: catch(T.argsort, T.tensor([1j, 2])),
    "msort_complex": lambda T: catch(T.msort, T.tensor([1j, 2])),
    "sort_bool": lambda T: tuple(T.sort(T.tensor([True, False]))),
    # flip: torch.flip takes a sequence; the method takes ints, a sequence or dims=
    "flip_repeated_dim": lambda T: catch(T.flip, _x(T), (0, -2)),
    "flip_method_repeated_dim": lambda T: catch(lambda: _x(T).flip(1, -1)),
    "flip_int": lambda T: catch(T.flip, _x(T), 0),
    "flip_two_ints": lambda T: catch(T.flip, _x(T), 0, 1),
    "flip_no_dims": lambda T: catch(T.flip, _x(T)),
    "flip_none": lambda T: catch(T.flip, _x(T), None),
    "flip_float_element": lambda T: catch(T.flip, _x(T), (0.5,)),
    "flip_bool_element": lambda T: catch(T.flip, _x(T), (True,)),
    "flip_keyword": lambda T: T.flip(_x(T), dims=(0,)),
    "flip_keyword_input": lambda T: T.flip(input=_x(T), dims=[1]),
    "flip_keyword_int": lambda T: catch(T.flip, _x(T), dims=0),
    "flip_keyword_float_element": lambda T: catch(T.flip, _x(T), dims=(0.5,)),
    "flip_method_int": lambda T: _x(T).flip(0),
    "flip_method_ints": lambda T: _x(T).flip(0, 1),
    "flip_method_list": lambda T: _x(T).flip([0]),
    "flip_method_keyword": lambda T: _x(T).flip(dims=[0, 1]),
    "flip_method_keyword_int": lambda T: catch(lambda: _x(T).flip(dims=1)),
    "flip_method_both": lambda T: catch(lambda: _x(T).flip(0, dims=1)),
    "flip_method_none": lambda T: catch(lambda: _x(T).flip()),
    "flip_method_float": lambda T: catch(lambda: _x(T).flip(0.5)),
    "flip_method_float_later": lambda T: catch(lambda: _x(T).flip(0, 0.5)),
    "flip_method_tuple_then_int": lambda T: catch(lambda: _x(T).flip((0,), 1)),
    "flip_scalar": lambda T: T.flip(T.tensor(1.), (0,)),
    "flip_scalar_repeated": lambda T: catch(T.flip, T.tensor(1.), (0, -1)),
    "flip_grad": lambda T: (lambda x: (x.flip(0).mul(T.arange(3.)).sum().backward(), x.grad))(
        T.ones(3, requires_grad=True)),
    "fliplr_1d": lambda T: catch(T.fliplr, T.ones(3)),
    "flipud_scalar": lambda T: catch(T.flipud, T.tensor(1.)),
    # roll: shifts and dims pair up
    "roll_more_shifts": lambda T: catch(T.roll, _x(T), (1, 2), (0,)),
    "roll_more_dims": lambda T: catch(T.roll, _x(T), 1, (0, 1)),
    "roll_shifts_no_dims": lambda T: catch(T.roll, _x(T), (1, 2)),
    "roll_method_more_shifts": lambda T: catch(lambda: _x(T).roll((1, 2), 1)),
    "roll_no_shifts": lambda T: catch(T.roll, _x(T), (), ()),
    "roll_empty_dims": lambda T: T.roll(_x(T), 1, ()),
    "roll_one_shift_list": lambda T: T.roll(_x(T), [2]),
    "roll_pairs": lambda T: T.roll(_x(T), (1, 2), (0, 1)),
    "roll_scalar_dim": lambda T: catch(T.roll, T.tensor(1.), 1, -1),
    "roll_scalar_flat": lambda T: T.roll(T.tensor(1.), 1),
    # repeat: the result's size is checked
    "repeat_negative": lambda T: catch(lambda: T.ones(2).repeat(-1)),
    "repeat_negative_second": lambda T: catch(lambda: T.ones(2).repeat(2, -3)),
    "repeat_negative_of_empty": lambda T: T.ones(0).repeat(-1),
    "repeat_negative_scalar": lambda T: catch(lambda: T.tensor(1.).repeat(-1, 1)),
    # masked_select: PyTorch's broadcast error, mask first
    "masked_select_mismatch": lambda T: catch(T.masked_select, T.ones(2),
                                              T.tensor([True, False, True])),
    "masked_select_mismatch_2d": lambda T: catch(T.masked_select, T.ones(3, 2),
                                                 T.tensor([True, False, True])),
    "masked_select_broadcast": lambda T: T.masked_select(T.ones(3, 1), T.tensor([True, False])),
}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing(name):
    same(INDEXING[name])
