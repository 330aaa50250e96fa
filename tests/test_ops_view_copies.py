"""The *_copy ops (torch.select_copy, ...) against torch: values, strides, gradients, node names, fresh memory, out= and errors.
"""
import pytest
from differential import same, catch, warnings_of
from differential import grad_fn_name as _node


def _geometry(t):
    return (tuple(t.shape), t.stride(), t._base is None, t.is_contiguous(), _node(t))


# ----------------------------------------------------------------------------- *_copy
_COPIES = [
    ("alias_copy", lambda T, x: T.alias_copy(x)),
    ("as_strided_copy", lambda T, x: T.as_strided_copy(x, (2, 2), (1, 2), 1)),
    ("diagonal_copy", lambda T, x: T.diagonal_copy(x, 1)),
    ("diagonal_copy_kw", lambda T, x: T.diagonal_copy(x, offset=-1, dim1=1, dim2=0)),
    ("expand_copy", lambda T, x: T.expand_copy(x[:1], (2, 3, 4))),
    ("permute_copy", lambda T, x: T.permute_copy(x, (1, 0))),
    ("select_copy", lambda T, x: T.select_copy(x, 1, -1)),
    ("slice_copy", lambda T, x: T.slice_copy(x, 1, 1, None, 2)),
    ("slice_copy_default", lambda T, x: T.slice_copy(x)),
    ("slice_copy_clamped", lambda T, x: T.slice_copy(x, 0, -2, 100)),
    ("split_copy", lambda T, x: T.split_copy(x, 3, 1)),
    ("split_with_sizes_copy", lambda T, x: T.split_with_sizes_copy(x, [1, 2])),
    ("squeeze_copy", lambda T, x: T.squeeze_copy(x[:1])),
    ("squeeze_copy_dims", lambda T, x: T.squeeze_copy(x[:1], (0, 1))),
    ("t_copy", lambda T, x: T.t_copy(x)),
    ("transpose_copy", lambda T, x: T.transpose_copy(x, 0, 1)),
    ("unbind_copy", lambda T, x: T.unbind_copy(x, 1)),
    ("unfold_copy", lambda T, x: T.unfold_copy(x, 1, 2, 1)),
    ("unsqueeze_copy", lambda T, x: T.unsqueeze_copy(x.t(), 1)),
    ("view_copy", lambda T, x: T.view_copy(x, (2, 6))),
    ("view_copy_of_transposed", lambda T, x: T.view_copy(x.t(), (12,))),
    ("view_copy_infer", lambda T, x: T.view_copy(x, [-1, 3])),
    ("narrow_copy", lambda T, x: T.narrow_copy(x, 1, 1, 2)),
    ("narrow_copy_method", lambda T, x: x.narrow_copy(0, -1, 1)),
    ("narrow_copy_tensor_start", lambda T, x: T.narrow_copy(x, 0, T.tensor(1), 2)),
    ("view_as_real_copy", lambda T, x: T.view_as_real_copy(x * (1 + 2j))),
]


@pytest.mark.parametrize("name,call", _COPIES, ids=[c[0] for c in _COPIES])
def test_copy_values_strides_gradients_and_nodes(name, call):
    def f(T):
        x = T.arange(12.).reshape(3, 4).requires_grad_()
        out = call(T, x)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        total = sum((o.abs() * T.arange(float(o.numel())).reshape(o.shape)).sum() for o in outs)
        total.backward()
        plain = call(T, x.detach())        # no graph: plain copies
        plain = list(plain) if isinstance(plain, (list, tuple)) else [plain]
        return (type(out).__name__, outs, [_geometry(o) for o in outs], x.grad,
                [_geometry(o) for o in plain])
    same(f)


def test_copies_are_fresh_memory():
    def f(T):
        x = T.arange(6.).reshape(2, 3)
        y = T.permute_copy(x, (1, 0))
        y.add_(100)
        z = T.unbind_copy(x)[0]
        z.zero_()
        return x, y.data_ptr() != x.data_ptr(), x._version
    same(f)


def test_other_copies():
    def f(T):
        x = T.arange(12.).reshape(3, 2, 2).requires_grad_()
        d = T.detach_copy(x.transpose(0, 1))
        c = T.view_as_complex_copy(x.detach())
        return (d, _geometry(d), d.requires_grad, catch(lambda: d.sum().backward()),
                c, _geometry(c), catch(T.view_as_complex_copy, x),
                T.view_copy(x.detach(), T.int32), T.view_copy(x, T.float32).requires_grad,
                _geometry(T.view_copy(x, T.float32)))
    same(f)


def test_copy_out():
    def f(T):
        x = T.arange(12.).reshape(3, 4)
        o = T.empty(0)
        r = T.permute_copy(x, (1, 0), out=o)
        outs = [T.empty(3, 2), T.empty(3, 2)]
        T.split_copy(x, 2, 1, out=outs)
        ub = [T.empty(3) for _ in range(4)]
        T.unbind_copy(x, 1, out=ub)
        n = T.empty(0)
        T.narrow_copy(x, 0, 1, 2, out=n)
        resized = warnings_of(lambda: T.t_copy(x, out=T.empty(2)))
        return (r is o, o, o.stride(), outs, ub, n, resized[0], len(resized[1]),
                catch(T.split_copy, x, 2, 1, out=[T.empty(3, 2)]),
                catch(T.unbind_copy, x, 1, out=[T.empty(3)] * 3),
                catch(T.unbind_copy, x, 1, out=[T.empty(3, dtype=T.int64)] * 4),
                catch(T.narrow_copy, x, 0, 0, 1, out=T.empty(0, dtype=T.int64)),
                catch(T.narrow_copy, x.requires_grad_(), 0, 0, 1, out=T.empty(1, 4)))
    same(f)


def test_copy_errors():
    def f(T):
        x = T.arange(12.).reshape(3, 4)
        return [catch(T.permute_copy, x, (0,)), catch(T.select_copy, x, 0, 5),
                catch(T.narrow_copy, x, 0, 3, 1), catch(T.narrow_copy, x, 0, 4, 0),
                catch(T.narrow_copy, x, 0, 0, -1), catch(T.narrow_copy, T.tensor(1.), 0, 0, 1),
                catch(T.squeeze_copy, x, 3), catch(T.view_copy, x, (5,)),
                catch(T.as_strided_copy, x, (2, 2), (1, 20)),
                catch(T.slice_copy, x, 0, 0, 2, 0), catch(T.slice_copy, x, 5),
                catch(T.t_copy, T.ones(2, 2, 2)), catch(T.split_copy, x, -1),
                catch(T.split_with_sizes_copy, x, [1, 1]), catch(T.unfold_copy, x, 1, 5, 1),
                catch(T.view_as_real_copy, T.ones(2)),
                catch(T.view_as_complex_copy, T.ones(2, 3)),
                catch(T.expand_copy, x, (2,)), catch(T.diagonal_copy, x, 0, 1, 1)]
    same(f)
