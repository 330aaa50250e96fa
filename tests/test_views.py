"""Views: they share memory and the version counter with their base; their shapes, strides and
storage offsets are torch's (also for size-one dims, empty tensors and chains of views); their
gradients, graph node names and errors are torch's."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from differential import same
from opinfo import OpInfo, Sample, make, table_tests
from tensor_compare import check, fresh_process_output

# ----------------------------------------------------------------------------- Size, shape, memory
SHAPE_CASES = [
    "t.Size([2, 3]), t.Size([2, 3])[1:], t.Size([2, 3])[0], t.Size([2, 3]).numel(), "
    "isinstance(t.Size([1]), tuple), t.Size([2]) + (3,), t.Size(), str(t.Size([2, 3])), "
    "t.Size([2, 3]) == (2, 3), t.Size([2, 3])[::-1], t.Size([]).numel()",
    "(2,) + t.Size([3]), t.Size([2, 3]) * 2, 2 * t.Size([1]), t.Size([2]) + t.Size([3]), "
    "t.Size([t.tensor(2)]), t.Size(range(3)), t.Size((np.int64(3),))",
    "t.Size([2.5])", "t.Size(['a'])", "t.Size(3)",
    "(lambda x: (x.size(), x.size(1), x.size(-1), x.shape, x.dim(), x.ndim, x.numel(), "
    "x.stride(), x.stride(0), x.stride(-1), x.storage_offset(), x.is_contiguous(), "
    "x.element_size(), x.nelement(), x.ndimension()))(t.zeros(2, 3))",
    "t.zeros(2, 3).size(2)", "t.zeros(2, 3).stride(-3)", "t.zeros(()).size(0)",
    "t.zeros(()).size(), t.zeros(()).stride(), t.zeros(()).dim(), t.zeros(()).numel(), "
    "t.zeros(()).is_contiguous()",
    "[t.zeros(1, dtype=d).element_size() for d in (t.bool, t.uint8, t.int16, t.int32, t.int64, "
    "t.float16, t.bfloat16, t.float32, t.float64, t.complex64, t.complex128)]",
    # empty tensors: contiguous, with torch's strides
    "t.zeros(0, 3).is_contiguous(), t.zeros(0, 3).stride(), t.zeros(3, 0).stride(), "
    "t.zeros(2, 0, 3).stride()",
    "t.zeros(0, 3).t().is_contiguous(), t.zeros(3, 0, 2).transpose(0, 2).is_contiguous(), "
    "t.zeros(3, 0, 2).transpose(0, 2).stride(), t.zeros(3, 0, 2).permute(2, 0, 1).stride()",
    "t.zeros(1, 3).t().is_contiguous(), t.zeros(1, 3).t().stride(), t.zeros(3, 1).stride(), "
    "t.zeros(2, 1, 3).permute(1, 0, 2).is_contiguous()",
    "t.zeros(4, 3)[::2].is_contiguous(), t.zeros(4, 3)[:, ::2].stride(), "
    "t.zeros(4, 3)[1:, 1:].storage_offset(), t.zeros(2, 3).t().is_contiguous()",
    # detach() and .data are no views, but lie in the same storage at the same offset
    "(lambda x: (x[2:].detach().storage_offset(), x[2:].data.storage_offset(), "
    "x[2:].detach()[1:].storage_offset(), x[2:].detach().as_strided((2,), (1,), 0), "
    "x[2:].detach().untyped_storage().data_ptr() == x.untyped_storage().data_ptr(), "
    "x[2:].data.untyped_storage().nbytes()))(t.arange(6.))",
    "(lambda x: (x.contiguous() is x, x.t().contiguous().stride(), "
    "x.t().contiguous().is_contiguous()))"
    "(t.zeros(2, 3))",
]


@pytest.mark.parametrize("expr", SHAPE_CASES)
def test_size_shape_strides(expr):
    check(expr)


def test_data_ptr_and_clone():
    x = ember.arange(6.).view(2, 3)
    assert x[1].data_ptr() == x.data_ptr() + 3 * x.element_size()
    assert x.t().data_ptr() == x.data_ptr()
    c = x.clone()
    assert c.data_ptr() != x.data_ptr() and c.tolist() == x.tolist()
    c[0, 0] = 9
    assert x[0, 0].item() == 0


# ----------------------------------------------------------------------------- view ops vs torch
VIEW_CASES = [
    "(lambda x: (x.view(3, 4).stride(), x.view(-1).shape, x.view(2, -1, 3).shape, "
    "x.view(t.Size([12])).shape, x.view([4, 3]).shape))(t.arange(12))",
    "t.arange(12).view(3, 5)", "t.arange(12).view(-1, -1)", "t.arange(12).view(5, -1)",
    "t.arange(12).view(0, -1)", "t.arange(0).view(0, -1)", "t.arange(0).view(-1, 0)",
    "t.arange(12).view(-2, 6)", "t.arange(12).view(3, 4).t().view(12)",
    "t.arange(12).view(3, 4)[:, :2].view(6)",
    "t.arange(12).view(3, 4)[:, :2].view(3, 2, 1).stride()",
    "t.arange(12).view(3, 4).t().view(2, 2, 3).stride()",
    "t.arange(12).view(3, 4).t().reshape(12)",
    "t.arange(12).view(3, 4).t().reshape(3, 4).stride()",
    "t.arange(12).view(3, 4).t().reshape(4, 1, 3).stride()",
    "t.arange(4.).view(t.int32).shape, t.arange(4.).view(t.float64).shape, "
    "t.arange(4.).view(t.int16).stride()",
    "t.arange(4, dtype=t.float32).view(t.int32)", "t.arange(4, dtype=t.float32).view(t.float16)",
    "t.arange(6, dtype=t.float32)[:3].view(t.float64)",
    "t.arange(6, dtype=t.float32).view(2, 3).t().view(t.int16)", "t.tensor(1.).view(t.float64)",
    "t.arange(4).view_as(t.zeros(2, 2)), t.arange(4).reshape_as(t.zeros(2, 2))",
    "(lambda x: (x.view(t.float32).requires_grad, x.view(t.float32).grad_fn, "
    "x.view(t.float32).is_leaf, x.view(t.int32).requires_grad, x.view(t.float32)._base is x))"
    "(t.ones(2, requires_grad=True))",
    "(lambda x: (x.view(t.float32).requires_grad, x.view(t.float32).grad_fn, "
    "x.detach().requires_grad, x.detach()._base, x.detach().is_leaf, x.detach().grad_fn))"
    "(t.ones(2, requires_grad=True) * 2)",
    "(lambda x: (x.flatten().shape, x.flatten(1).shape, x.flatten(0, 1).shape, "
    "x.flatten(-2).stride(), t.flatten(x, 1, 1).shape))(t.zeros(2, 3, 4))",
    "t.zeros(2, 3).flatten(1, 0)", "t.zeros(()).flatten().shape, t.zeros(()).flatten(0, 0).shape",
    "(lambda x: (x.unflatten(1, (3, 4)).shape, x.unflatten(1, (-1, 2)).shape, "
    "x.unflatten(-1, (2, 2, 3)).stride()))(t.zeros(2, 12))",
    "t.zeros(2, 12).unflatten(1, (5, -1))", "t.zeros(2, 12).unflatten(1, (5, 2))",
    "(lambda x: (x.squeeze().shape, x.squeeze(0).shape, x.squeeze(1).shape, "
    "x.squeeze((0, 2)).shape, x.squeeze(-1).shape, x.squeeze([]).shape))(t.zeros(1, 3, 1))",
    "(lambda x: (x.unsqueeze(0).shape, x.unsqueeze(-1).shape, x.unsqueeze(1).stride(), "
    "x.unsqueeze(2).stride(), x.unsqueeze(-3).shape))(t.zeros(2, 3))",
    "t.zeros(2, 3).unsqueeze(3)", "t.zeros(2, 3).squeeze(2)",
    "t.zeros(()).unsqueeze(0).shape, t.zeros(()).squeeze().shape, t.zeros(()).squeeze(0).shape, "
    "t.zeros(()).unsqueeze(-1).shape",
    "(lambda x: (x.permute(2, 0, 1).stride(), x.permute((1, 0, 2)).shape, "
    "x.permute(-1, 0, 1).shape, x.transpose(0, 2).stride(), x.transpose(-1, 0).shape, "
    "x.mT.stride(), x.movedim(0, 2).stride(), x.movedim((0, 1), (2, 0)).shape, "
    "t.swapaxes(x, 0, 1).shape, x.moveaxis(1, -1).shape, t.swapdims(x, 2, 1).stride()))"
    "(t.zeros(2, 3, 4))",
    "t.zeros(2, 3, 4).permute(0, 1)", "t.zeros(2, 3, 4).permute(0, 1, 1)",
    "t.zeros(2, 3, 4).permute(0, 1, 3)",
    "t.zeros(2, 3).t().stride(), t.zeros(3).t().shape, t.zeros(2, 3).T.shape, "
    "t.zeros(()).t().shape",
    "t.zeros(2, 3, 4).t()", "t.zeros(3).mT",
    "t.zeros(2, 3, 4).movedim((0, 0), (1, 2))", "t.zeros(2, 3, 4).movedim((0, 1), (1, 1))",
    "t.zeros(2, 3, 4).movedim((0, 1), (1,))",
    "(lambda x: (x.expand(2, 3).stride(), x.expand(2, -1).shape, x.expand(4, 2, 3).stride(), "
    "x.expand_as(t.zeros(3, 2, 3)).shape, x.expand(t.Size([2, 3])).shape, "
    "x.expand([2, 3]).shape, x.expand(1, 1, 3).stride()))(t.zeros(1, 3))",
    "t.zeros(2, 3).expand(3, 3)", "t.zeros(2, 3).expand(3)", "t.zeros(2, 3).expand(-1, 2, 3)",
    "t.zeros(2, 3, dtype=t.int64).expand(3)",
    "(lambda x: (x.narrow(0, 1, 2).storage_offset(), x.narrow(1, -2, 2).stride(), "
    "x.narrow(1, 0, 0).shape, x.select(0, 1).storage_offset(), x.select(1, -1).stride(), "
    "x.select(1, -1).storage_offset()))(t.zeros(3, 4))",
    "t.zeros(3, 4).narrow(0, 2, 2)", "t.zeros(3, 4).narrow(0, -4, 1)",
    "t.zeros(3, 4).narrow(0, 4, 0)", "t.zeros(3, 4).narrow(0, 5, 0)",
    "t.zeros(3, 4).narrow(0, 0, -1)", "t.zeros(3, 4).select(0, 3)",
    "t.zeros(3, 4).select(2, 0)", "t.zeros(3, 4).select(0, -4)",
    "(lambda x: ([y.storage_offset() for y in x.unbind()], [y.stride() for y in x.unbind(1)], "
    "[y.shape for y in x.split(2)], [y.storage_offset() for y in x.split([1, 2], 1)], "
    "[y.shape for y in x.chunk(2, 1)], [y.shape for y in x.chunk(5)], "
    "[y.shape for y in t.split(x, 1, -1)]))(t.zeros(4, 3))",
    "[y.shape for y in t.zeros(5).chunk(4)], [y.shape for y in t.zeros(6).chunk(4)], "
    "[y.shape for y in t.zeros(0).chunk(2)], [y.shape for y in t.zeros(0).split(2)], "
    "[y.shape for y in t.zeros(3).split(5)]",
    "t.zeros(4).split([1, 2])", "t.zeros(4).split(0)", "t.zeros(4).chunk(0)",
    "t.zeros(()).unbind()",
    "[y.shape for y in t.zeros(7).tensor_split(3)], "
    "[y.shape for y in t.zeros(7).tensor_split([1, 5])], "
    "[y.shape for y in t.zeros(7).tensor_split((2, 1))], "
    "[y.storage_offset() for y in t.zeros(7).tensor_split((2, 1))]",
    "(lambda x: (x.diagonal().stride(), x.diagonal().storage_offset(), "
    "x.diagonal(1).storage_offset(), x.diagonal(-1).storage_offset(), "
    "x.diagonal(0, 1, 2).shape, x.diagonal(5).shape, x.diagonal(dim1=2, dim2=0).stride()))"
    "(t.zeros(3, 4, 5))",
    "t.zeros(3, 4).diagonal(0, 1, 1)",
    "(lambda x: [(x.diagonal(o, a, b).shape, x.diagonal(o, a, b).stride(), "
    "x.diagonal(o, a, b).storage_offset(), x.diagonal(o, a, b).tolist()) "
    "for o in (-4, -2, -1, 0, 1, 3, 5, 7) for a, b in ((0, 1), (1, 0), (0, 2), (2, 1))])"
    "(t.arange(60).view(3, 4, 5))",
    "(lambda x: [(x.diagonal(o).shape, x.diagonal(o).storage_offset(), x.diagonal(o).stride()) "
    "for o in (-3, -1, 0, 2, 4)])(t.arange(12).view(3, 4).t())",
    "(lambda x: (x.diagonal().fill_(-1), x)[1])(t.zeros(3, 3))",
    "(lambda x: (x.unfold(0, 2, 1).shape, x.unfold(0, 2, 1).stride(), x.unfold(1, 2, 2).stride(), "
    "x.unfold(1, 3, 1).storage_offset(), x.unfold(0, 3, 5).shape, x.unfold(1, 4, 1).stride(), "
    "x.unfold(0, 1, 1).stride()))(t.zeros(5, 4))",
    "t.zeros(3).unfold(0, 4, 1)", "t.zeros(3).unfold(0, 2, 0)",
    "t.zeros(()).unfold(0, 1, 1).shape, t.zeros(()).unfold(0, 1, 1).stride()",
    "(lambda x: (x.as_strided((2, 2), (1, 2)), x.as_strided((2,), (3,), 1), "
    "x[1:].as_strided((2,), (1,)), x[1:].as_strided((2,), (1,), 0), "
    "x[1:].as_strided((2,), (1,), 0).storage_offset()))(t.arange(6))",
    "t.arange(6).as_strided((2,), (10,))", "t.arange(6).as_strided((2, 2), (1,))",
    "t.arange(6).as_strided((2, 2), (1, 2), -1)", "t.arange(6).as_strided((2, 2), (-1, 2))",
    "t.arange(6).as_strided((2, -2), (1, 2))",
    # size-one dims: torch's strides, not NumPy's
    "(lambda x: (x.t().unsqueeze(0).stride(), x.t().unsqueeze(1).stride(), "
    "x.t().unsqueeze(2).stride(), x.view(3, 1, 4).stride(), "
    "x.t().contiguous().view(1, 4, 3, 1).stride(), x[0:1].expand(1, 1, 4).stride(), "
    "x.unsqueeze(0).expand(1, 3, 4).stride(), x.expand(1, 1, 3, 4).stride()))(t.zeros(3, 4))",
    "(lambda x: (x.view(3, 4, 1, 1).permute(2, 0, 1, 3).stride(), x[:, 0:1].stride(), "
    "x[:, 0:0].stride(), x[0:0].stride(), x[:, :, None].stride(), x.view(12)[None].stride(), "
    "x.view(1, 12).view(12, 1).stride(), x[1:1].storage_offset(), x[3:].storage_offset(), "
    "x[:, 4:].storage_offset()))(t.zeros(3, 4))",
    "(lambda x: (x.T.stride(), x.mT.stride(), x[None].squeeze().stride(), x.reshape(6).stride(), "
    "x.flatten().stride()))(t.zeros(2, 3).t())",
]


@pytest.mark.parametrize("expr", VIEW_CASES)
def test_view_ops_match_torch(expr):
    check(expr)


def _slice_step(x, r):
    if not x.dim():
        return x
    d = r % x.dim()
    start = r % 2
    if x.shape[d] <= start and not any(x.stride()):
        start = 0        # (see "narrow" below: no empty view of an all-zero-stride tensor)
    return x[(slice(None),) * d + (slice(start, None, 1 + r % 2),)]


def test_T_of_non_matrices_warns_once_per_process():
    """x.T on other than 2-D tensors: torch's deprecation warnings, once per process each, so
    the check runs in fresh interpreters."""
    torch_out, ember_out = fresh_process_output(
        "import warnings, {lib}\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    a = {lib}.zeros(2, 3, 4).T.shape; b = {lib}.zeros(2, 3, 4).T.shape\n"
        "    c = {lib}.zeros(()).T.shape; d = {lib}.zeros(()).T.shape\n"
        "    e = {lib}.zeros(2, 3).T.shape\n"
        "print(list(a), list(c), list(e))\n"
        "for x in w: print(x.message)")
    assert ember_out == torch_out and torch_out.count("\n") == 2


# a chain of random view ops: shape, strides and offset agree with torch at every step
_CHAIN_STEPS = {
    "t": lambda x, r: x.t() if x.dim() <= 2 else x.transpose(0, -1),
    "unsqueeze": lambda x, r: x.unsqueeze(r % (x.dim() + 1)),
    "squeeze": lambda x, r: x.squeeze(),
    "slice": lambda x, r: _slice_step(x, r),
    "select": lambda x, r: x.select(r % x.dim(), 0) if x.dim() and x.shape[r % x.dim()] else x,
    "expand": lambda x, r: x.unsqueeze(0).expand(2, *x.shape),
    "permute": lambda x, r: x.permute(*reversed(range(x.dim()))) if x.dim() else x,
    "view": lambda x, r: x.reshape(-1) if x.is_contiguous() else x,
    "diagonal": lambda x, r: x.diagonal(0, 0, 1) if x.dim() >= 2 else x,
    # (an empty view of an expanded tensor keeps torch's zero strides only while non-empty:
    # NumPy cannot tell those from a fresh empty array's, so chains stay clear of that case)
    "narrow": lambda x, r: x.narrow(0, min(1, x.shape[0] - 1), max(x.shape[0] - 1, 1))
    if x.dim() and x.shape[0] > 1 else x,
    "unfold": lambda x, r: x.unfold(0, 1, 1) if x.dim() and x.shape[0] else x,
}


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(_CHAIN_STEPS)), st.integers(0, 5)),
                min_size=1, max_size=6),
       st.sampled_from([(3, 4), (2, 1, 3), (4,), (1, 1), (2, 0, 3)]))
def test_view_chains(steps, shape):
    n = int(np.prod(shape))
    xs = [torch.arange(float(n)).reshape(shape), ember.arange(float(n)).reshape(shape)]
    for name, r in steps:
        xs = [_CHAIN_STEPS[name](x, r) for x in xs]
        t, e = xs
        assert (tuple(e.shape), e.stride(), e.storage_offset(), e.is_contiguous()) == \
            (tuple(t.shape), t.stride(), t.storage_offset(), t.is_contiguous()), (name, r)
        assert e.tolist() == t.tolist()


# ----------------------------------------------------------------------------- shared memory
VIEWERS = {
    "view": lambda x: x.view(3, 4), "reshape": lambda x: x.reshape(2, 6),
    "view_as": lambda x: x.view_as(ember.zeros(4, 3)), "flatten": lambda x: x.flatten(),
    "unflatten": lambda x: x.unflatten(1, (2, 2)), "squeeze": lambda x: x[None].squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(1), "permute": lambda x: x.permute(1, 0),
    "transpose": lambda x: x.transpose(0, 1), "t": lambda x: x.t(), "T": lambda x: x.T,
    "mT": lambda x: x.mT, "expand": lambda x: x[:1].expand(5, 4),
    "expand_as": lambda x: x[:, :1].expand_as(x), "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(1, 2), "unbind": lambda x: x.unbind(1)[2],
    "split": lambda x: x.split(2, 1)[1], "split_sizes": lambda x: x.split([1, 3], 1)[1],
    "chunk": lambda x: x.chunk(2)[1], "tensor_split": lambda x: x.tensor_split(2, 1)[1],
    "movedim": lambda x: x.movedim(0, 1), "diagonal": lambda x: x.diagonal(),
    "unfold": lambda x: x.unfold(1, 2, 1), "as_strided": lambda x: x.as_strided((2, 2), (1, 4)),
    "getitem_int": lambda x: x[1], "getitem_slice": lambda x: x[1:, ::2],
    "getitem_none": lambda x: x[None], "getitem_ellipsis": lambda x: x[..., 1],
    "getitem_all": lambda x: x[:], "detach": lambda x: x.detach(), "alias": lambda x: x[...],
    "view_dtype": lambda x: x.view(ember.int32),
}


@pytest.mark.parametrize("name", sorted(VIEWERS))
def test_views_share_memory_and_version(name):
    base = ember.arange(12., dtype=ember.float32).view(3, 4)
    v = VIEWERS[name](base)
    before = base.clone()
    # a write through the view is seen in the base ...
    v.fill_(7) if v.dtype is ember.float32 else v.fill_(0)
    assert not ember.equal(before, base)
    # ... and a write into the base is seen through the view
    base.fill_(-1)
    expected = -1.0 if v.dtype is ember.float32 else int(np.float32(-1).view(np.int32))
    assert set(v.reshape(-1).tolist()) == {expected}
    assert int(v._version) == int(base._version) > 0


def test_writes_through_chains_of_views():
    got = []
    for lib in (torch, ember):
        x = lib.zeros(4, 6)
        v = x.t()[1:5:2].unsqueeze(0)[0, :, 1:3]
        v[0, 1] = 5
        v[1] += 2
        x.select(1, 3)[2] = -4
        v.t()[1].mul_(3)
        got.append((x.tolist(), v.tolist()))
    assert got[0] == got[1]
    check("(lambda x: (x.t()[1:5:2].unsqueeze(0)[0, :, 1:3].__setitem__((0, 1), 5), "
          "x.t()[3].__setitem__(2, -4), x)[2])(t.zeros(4, 6))")


# ----------------------------------------------------------------------------- gradients
def _float_sample(*shape_and_args, **kwargs):
    def samples(dtype, rng):
        for shape, args in shape_and_args:
            yield Sample(make(shape, dtype, rng), *args, **kwargs)
    return samples


def _op(name, fn, cases, node=None):
    return OpInfo(name, fn, _float_sample(*cases), node=node)


VIEW_OPS = [
    _op("view", lambda lib, x, *s: x.view(*s), [((3, 4), (2, 6)), ((3, 4), (-1,)),
                                                 ((), (1, 1)), ((0, 2), (2, 0))],
        node="ViewBackward0"),
    _op("view_transposed_source", lambda lib, x: x.t().reshape(-1), [((3, 4), ())],
        node="UnsafeViewBackward0"),
    _op("reshape_viewable", lambda lib, x, *s: x.reshape(*s), [((3, 4), (4, 3)),
                                                               ((2, 3, 4), (6, -1))],
        node="ViewBackward0"),
    _op("reshape_copy", lambda lib, x: x.transpose(0, 1).reshape(6, 4), [((2, 3, 4), ())]),
    _op("flatten", lambda lib, x, *a: x.flatten(*a), [((2, 3, 4), (1,)), ((2, 3), ()),
                                                       ((), ())]),
    _op("unflatten", lambda lib, x: x.unflatten(1, (2, 2)), [((3, 4), ())]),
    _op("squeeze", lambda lib, x, *a: x.squeeze(*a), [((1, 3, 1), ()), ((1, 3, 1), (0,)),
                                                       ((1, 3, 1), ((0, 2),)), ((3,), (0,))]),
    _op("unsqueeze", lambda lib, x, d: x.unsqueeze(d), [((3, 4), (1,)), ((), (0,)),
                                                         ((2, 3), (-1,))],
        node="UnsqueezeBackward0"),
    _op("permute", lambda lib, x: x.permute(2, 0, 1), [((2, 3, 4), ())],
        node="PermuteBackward0"),
    _op("transpose", lambda lib, x: x.transpose(0, -1), [((2, 3, 4), ()), ((3, 4), ())],
        node="TransposeBackward0"),
    _op("t", lambda lib, x: x.t(), [((3, 4), ()), ((3,), ())], node="TBackward0"),
    _op("T", lambda lib, x: x.T, [((3, 4), ())]),
    _op("mT", lambda lib, x: x.mT, [((2, 3, 4), ())]),
    _op("movedim", lambda lib, x: x.movedim((0, 1), (2, 0)), [((2, 3, 4), ())]),
    _op("expand", lambda lib, x: x.expand(2, 3, 4), [((3, 1), ()), ((1, 4), ()), ((), ())],
        node="ExpandBackward0"),
    _op("expand_as", lambda lib, x: x.expand_as(lib.zeros(4, 3)), [((1, 3), ())]),
    _op("narrow", lambda lib, x: x.narrow(1, 1, 2), [((3, 4), ())], node="SliceBackward0"),
    _op("select", lambda lib, x: x.select(1, -1), [((3, 4), ()), ((4,), ())],
        node="SelectBackward0"),
    _op("unbind", lambda lib, x: x.unbind(1), [((3, 4), ())], node="UnbindBackward0"),
    _op("unbind_some", lambda lib, x: x.unbind(0)[1], [((3, 4), ())]),
    _op("split", lambda lib, x: x.split(3, 1), [((2, 7), ())], node="SplitBackward0"),
    _op("split_sizes", lambda lib, x: x.split([1, 2], 0), [((3, 2), ())],
        node="SplitWithSizesBackward0"),
    _op("chunk", lambda lib, x: x.chunk(3, -1), [((2, 7), ())]),
    _op("tensor_split", lambda lib, x: x.tensor_split(3, 1), [((2, 7), ())]),
    _op("diagonal", lambda lib, x, *a: x.diagonal(*a), [((3, 4), ()), ((3, 4), (1,)),
                                                         ((2, 3, 4), (-1, 2, 0))],
        node="DiagonalBackward0"),
    _op("unfold", lambda lib, x: x.unfold(1, 3, 2), [((2, 7), ())], node="UnfoldBackward0"),
    _op("unfold_overlapping", lambda lib, x: x.unfold(0, 3, 1), [((6,), ())]),
    _op("as_strided", lambda lib, x: x.as_strided((3, 2), (1, 2)), [((3, 4), ())],
        node="AsStridedBackward0"),
    _op("as_strided_of_view", lambda lib, x: x[1:].as_strided((2, 2), (1, 3), 5),
        [((3, 4), ())]),
    _op("as_strided_overlapping", lambda lib, x: x.as_strided((3, 3), (1, 1)), [((12,), ())]),
    _op("as_strided_of_expanded", lambda lib, x: x.expand(2, 3).as_strided((2, 2), (1, 0), 1),
        [((3,), ())]),
    _op("view_chain", lambda lib, x: x.t()[1:].unsqueeze(0).expand(2, 3, 3).diagonal(0, 1, 2),
        [((3, 4), ())]),
    _op("contiguous", lambda lib, x: x.t().contiguous(), [((3, 4), ())], node="CloneBackward0"),
    _op("clone", lambda lib, x: x.t().clone(), [((3, 4), ())], node="CloneBackward0"),
    _op("alias", lambda lib, x: x[...], [((3, 4), ())], node="AliasBackward0"),
]


test_view_forward, test_view_backward, test_view_gradcheck, test_view_gradgradcheck, \
    test_view_node_names = table_tests(VIEW_OPS)


# ----------------------------------------------------------------------------- resize
RESIZE_CASES = [
    "(lambda x: (x.resize_(2, 3).tolist(), x.resize_(1, 2).tolist(), x.resize_(4).tolist(), "
    "x.resize_(3, 3)[:2].tolist(), x.shape, x.stride()))(t.arange(1., 7))",
    "(lambda x: (x.resize_(9)[:6].tolist(), x.shape))(t.arange(1., 7).view(2, 3))",
    "(lambda x: (x.resize_as_(t.zeros(1, 2)), x))(t.arange(1., 7))",
    "(lambda x: (x.resize_(0), x.resize_(2)))(t.arange(1., 7))",
    "t.arange(6.).view(2, 3).t().resize_(6)",
    "(lambda x: (x.resize_(2), x, x.storage_offset()))(t.arange(6.)[1:])",
    "(lambda b: (lambda v: (v.resize_(2, 2), b))(b[1:]))(t.arange(6.))",
    "t.tensor([1.], requires_grad=True).resize_(2)", "t.zeros(2).resize_(2, 3.0)",
    "(lambda x: (x.resize_(t.Size([3])), x.resize_([1, 3]), x.resize_((3,))))(t.arange(6.))",
    "(lambda x: (int(x.resize_(2)._version), int(x._version)))(t.arange(6.))",
    # the non-inplace resize is deprecated and only reshapes (same element count)
    "t.Tensor([[1, 2, 3], [4, 5, 6]]).resize(3, 2)", "t.Tensor([[1, 2, 3], [4, 5, 6]]).resize(6)",
    "t.Tensor([[1, 2, 3], [4, 5, 6]]).resize(1, 3)",
    "t.Tensor([[1, 2, 3], [4, 5, 6]]).resize(3, 3)",
]


@pytest.mark.parametrize("expr", RESIZE_CASES)
def test_resize(expr):
    check(expr)


def test_resize_grow_keeps_values_in_front():
    x = ember.arange(1., 7)
    x.resize_(3, 3)
    assert x.shape == (3, 3) and x.reshape(-1)[:6].tolist() == [1., 2, 3, 4, 5, 6]
    assert x.is_contiguous()


def test_resize_is_a_differentiable_view_like_torch():
    got = []
    for lib in (torch, ember):
        x = lib.tensor([1., 2, 3, 4], requires_grad=True)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            y = x.resize(2, 2)
        (y * y).sum().backward()
        got.append((y.grad_fn.name(), y._base is x, y.stride(), x.grad.tolist()))
    assert got[1] == got[0]


def test_untyped_storage_is_the_memory_views_share():
    def scenario(T):
        a = T.arange(6.).reshape(2, 3)
        v = a[1]
        s = v.untyped_storage()
        return (s.nbytes(), len(s), s.size(), s.element_size(), str(s.device),
                s.data_ptr() == a.data_ptr(), v.storage_offset(),
                v.untyped_storage() == a.untyped_storage(),
                T.ones(2).untyped_storage() == a.untyped_storage())
    same(scenario)
