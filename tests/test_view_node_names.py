"""Basic indexing as torch records it: which view ops an index makes (the node names of the
result's history), its errors, and where()'s broadcast message (issue 14, point 4)."""
import pytest

from tests.differential import catch, same


def _nodes(t):
    """The node names from t's grad_fn back to the first non-view node."""
    names, fn = [], t.grad_fn
    while fn is not None and fn.name() != "MulBackward0":
        names.append(fn.name())
        fn = fn.next_functions[0][0]
    return names


def _indexed(shape, index):
    def scenario(T):
        x = T.arange(float(max(1, _numel(shape))), requires_grad=True)[:_numel(shape)] \
            .reshape(shape) * 1.0
        y = eval("x" + index, {"x": x})
        return _nodes(y), tuple(y.shape), y.stride(), y.storage_offset(), y
    return scenario


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


NAMES = [
    # full slices in a tuple are no op: the result is an alias
    ((5, 3), "[..., :]"), ((5, 3), "[:, :]"), ((5, 3, 4), "[:, :, :]"), ((5, 3), "[0:5, 0:3]"),
    ((5, 3, 4), "[:, 0:100]"), ((5, 3, 4), "[:, :3]"), ((5, 3, 4), "[:, ::1]"),
    ((5, 3, 4), "[:, 0::1]"), ((5, 3, 4), "[..., 0:4]"), ((5, 3), "[(slice(None),)]"),
    ((5, 3), "[(slice(0, 3),)]"), ((5, 3, 4), "[0][:, :]"), ((5, 3), "[...]"),
    # ... but a slice that is full only once normalised still slices
    ((5, 3, 4), "[:, -100:]"), ((5, 3, 4), "[:, -3:3]"), ((5, 3, 4), "[..., -4:]"),
    ((5, 3, 1), "[3:4:2, None, :, -1:]"), ((5, 0), "[..., -1:]"), ((5, 0), "[0, -1:]"),
    ((5, 3, 4), "[:, 0:-0]"),
    # a lone slice (not in a tuple) always slices
    ((5, 3), "[:]"), ((5, 3), "[0:]"), ((5, 3), "[::1]"), ((5, 3), "[:100]"), ((5, 3), "[-5:]"),
    # the others, in torch's order
    ((5, 3, 4), "[3:4:2, None, :, 0:]"), ((5, 3), "[1:2, None]"), ((5, 3), "[:, None]"),
    ((5, 3), "[None, ...]"), ((5, 3), "[1, :]"), ((5, 3), "[:, -1]"), ((5, 3), "[:, ::2]"),
    ((5, 3, 4), "[..., None, 1:3, -1]"), ((5, 3, 4), "[1:, None, -2, ::3]"),
]


@pytest.mark.parametrize("shape,index", NAMES)
def test_index_node_names(shape, index):
    same(_indexed(shape, index))


ERRORS = [
    # a second ... runs past the last dim: torch's errors, naming the index's position
    ((5, 3, 4), "[..., ..., 0]"), ((5, 3), "[..., ..., 0]"), ((2, 3, 4, 5), "[..., ..., 0]"),
    ((5, 3, 4), "[..., ..., 0, 0]"), ((2, 2, 2, 2, 2), "[..., ..., 0, 0]"),
    ((5, 3, 4), "[..., ..., -1]"), ((5, 3, 4), "[..., ..., 1:]"), ((5, 3, 4), "[..., ..., None]"),
    ((5, 3, 4), "[..., ..., :2]"), ((2, 3, 4, 5), "[..., ..., :2]"), ((5, 3, 4), "[..., ..., :]"),
    ((5, 3), "[..., ..., 0, 0]"), ((7,), "[..., ..., 0]"), ((7,), "[..., ..., 0, 0]"),
    ((5, 3, 4), "[..., ...]"), ((5, 3, 4), "[0, ..., ...]"), ((5, 3, 4), "[None, ..., ..., 0]"),
    # an index out of range: the message names the item's position in the index
    ((3, 4), "[None, 10]"), ((3, 4), "[None, None, 0, 10]"), ((3, 4), "[0, None, 10]"),
    ((3, 4), "[..., None, 10]"), ((2, 3, 4), "[..., 10]"), ((3, 4), "[[0, 1], 10]"),
    # a 0-dim tensor: a lone slice, and slices in a tuple
    ((), "[1:]"), ((), "[:]"), ((), "[..., 1:]"), ((), "[(slice(None),)]"), ((), "[None, 1:]"),
    ((), "[..., ..., 1:]"),
]


@pytest.mark.parametrize("shape,index", ERRORS)
def test_index_errors(shape, index):
    same(lambda T: catch(_indexed(shape, index), T))


def test_setitem_through_full_slices():
    # writing through x[:, :] (an alias) and x[:, -3:] (a slice) reaches the base, with the
    # same graph and gradients
    def scenario(T):
        x = T.arange(12.0, requires_grad=True)
        b = x.reshape(4, 3) * 1.0
        b[:, :] = b[:, :] * 2.0
        b[:, -3:] += 1.0
        b[..., 0:3].mul_(3.0)
        b.sum().backward()
        return b, x.grad, b.grad_fn.name()
    same(scenario)


WHERE = [
    ((2, 3), (4, 3), (5, 3)), ((2, 3), (4, 3), (3,)), ((4, 1), (2, 3), (3,)), ((5,), (3,), (3,)),
    ((3,), (4,), (3,)), ((3,), (3,), (4,)), ((3,), None, (4,)), ((3,), (4,), None),
]


@pytest.mark.parametrize("cond,a,b", WHERE)
def test_where_broadcast_message_names_the_condition_first(cond, a, b):
    def scenario(T):
        operands = [T.ones(s) if s is not None else 1.5 for s in (a, b)]
        return catch(T.where, T.ones(cond) > 0, *operands)
    same(scenario)


def test_where_method_broadcast_message():
    same(lambda T: catch(lambda: T.ones(4, 3).where(T.ones(2, 3) > 0, T.ones(5, 3))))
