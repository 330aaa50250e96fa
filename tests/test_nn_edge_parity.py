"""Edge cases of padding, pooling and fold/unfold against torch: the errors (type and words) for
bad shapes, sizes and dtypes, empty results, and the graph and values of max pooling's double
backward."""
import numpy as np
import pytest

from differential import catch, same

RNG = np.random.default_rng(5)


def F(T):
    return T.nn.functional


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- reflect / replicate padding
@pytest.mark.parametrize("shape,pad", [
    ((2, 3, 4), (4, 0)), ((2, 3, 4), (0, 5)), ((3, 4), (1, 4)),
    ((2, 3, 4, 5), (5, 0, 0, 0)), ((2, 3, 4, 5), (0, 0, 4, 0)), ((2, 3, 4, 5), (0, 0, 0, 4)),
    ((1, 2, 3, 4, 5), (5, 0, 0, 0, 0, 0)), ((1, 2, 3, 4, 5), (0, 0, 4, 0, 0, 0)),
    ((1, 2, 3, 4, 5), (0, 0, 0, 0, 0, 3)), ((2, 3, 4, 5), (0, 0, 0, 0, 0, 3)),
    # two axes too small: torch reports the last one
    ((1, 2, 3, 4, 5), (9, 0, 0, 0, 0, 3)), ((2, 3, 4), (0, 0, -1, 3)), ((2, 3, 4), (-1, 4)),
])
def test_reflect_pad_too_large_names_the_argument(shape, pad):
    x = randn(*shape)
    same(lambda T: catch(F(T).pad, T.tensor(x), pad, mode="reflect"))


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("shape,pad", [
    ((2, 0, 4), (1, 1)), ((2, 3, 0), (1, 1)), ((3, 0), (1, 1)), ((0, 4), (1, 1)),
    ((3, 0), (0, 0)), ((2, 3, 0), (-1, 1)), ((2, 3, 0, 5), (1, 1, 1, 1)),
    ((2, 3, 4, 0), (1, 1, 1, 1)), ((2, 0, 4, 5), (1, 1, 1, 1)),
    ((1, 2, 0, 4, 5), (1, 1, 1, 1, 1, 1)), ((1, 2, 3, 4, 0), (1, 1, 1, 1, 1, 1)),
    ((1, 2, 3, 0, 5), (0, 0, 0, 0, 0, 0)),
    # an empty batch is fine
    ((0, 3, 4), (1, 2)), ((0, 2, 3, 4), (1, 2, 2, 1)),
])
def test_pad_empty_dims(mode, shape, pad):
    x = randn(*shape)
    same(lambda T: catch(F(T).pad, T.tensor(x), pad, mode=mode))


@pytest.mark.parametrize("mode,shape,pad", [
    ("reflect", (2, 3, 4), (-5, 1)), ("replicate", (2, 3, 4), (-5, 1)),
    ("replicate", (2, 3, 4, 5), (0, 0, -5, 0)), ("replicate", (2, 3, 4, 5), (-6, 0, 0, 0)),
    ("replicate", (1, 2, 3, 4, 5), (0, 0, -5, 0, 0, 0)),
    ("replicate", (2, 3, 4, 5), (-5, 0, 0, 0)), ("replicate", (2, 3, 4, 5), (-2, 1, 1, -3)),
])
def test_pad_negative_output_sizes(mode, shape, pad):
    x = randn(*shape)
    same(lambda T: catch(F(T).pad, T.tensor(x), pad, mode=mode))


# ---------------------------------------------------------------- fold / unfold
@pytest.mark.parametrize("shape,output_size,kernel", [
    ((1, 5, 4), (3, 3), 2), ((5, 4), (3, 3), 2),                    # not divisible
    ((4, 5), (3, 3), 2), ((1, 4, 5), (3, 3), 2),                    # wrong number of blocks
    ((1, 1, 5, 4), (3, 3), 2), ((5,), (3, 3), 2),                   # wrong rank
    ((1, 0, 4), (3, 3), 2), ((1, 4, 0), (3, 3), 2), ((1, 5, 0), (3, 3), 2), ((4, 0), (3, 3), 2),
    ((0, 4, 4), (3, 3), 2), ((8, 4), (3, 3), 2),                    # fine
])
def test_fold_errors(shape, output_size, kernel):
    x = randn(*shape)
    same(lambda T: catch(F(T).fold, T.tensor(x), output_size, kernel))


@pytest.mark.parametrize("shape", [
    (), (5,), (5, 4), (1, 1, 1, 5, 4), (1, 0, 4, 4), (1, 2, 0, 4), (2, 0, 4), (0, 3, 4),
    (0, 2, 4, 4), (2, 4, 4),
])
def test_unfold_ranks_and_empty_dims(shape):
    x = randn(*shape)
    same(lambda T: catch(F(T).unfold, T.tensor(x), 2))


# ---------------------------------------------------------------- 1-d ranks
@pytest.mark.parametrize("shape", [(1, 2, 3, 4), (4,)])
def test_1d_pooling_rank_errors(shape):
    x = randn(*shape)
    same(lambda T: [
        catch(F(T).max_pool1d, T.tensor(x), 2),
        catch(F(T).max_pool1d, T.tensor(x), 2, return_indices=True),
        catch(F(T).max_pool1d_with_indices, T.tensor(x), 2),
        catch(F(T).adaptive_max_pool1d, T.tensor(x), 2),
        catch(F(T).adaptive_max_pool1d, T.tensor(x), 2, return_indices=True),
        catch(F(T).adaptive_max_pool1d_with_indices, T.tensor(x), 2),
        catch(F(T).avg_pool1d, T.tensor(x), 2),
        catch(F(T).adaptive_avg_pool1d, T.tensor(x), 2),
    ])


# ---------------------------------------------------------------- adaptive max pooling
@pytest.mark.parametrize("fn,shape,size", [
    ("adaptive_max_pool2d", (1, 2, 3, 4), 0), ("adaptive_max_pool2d", (1, 2, 3, 4), (0, 2)),
    ("adaptive_max_pool2d", (2, 3, 4), (2, 0)), ("adaptive_max_pool2d", (0, 2, 3, 4), 2),
    ("adaptive_max_pool2d", (0, 3, 4), 2), ("adaptive_max_pool2d", (1, 2, 3, 4), (None, 2)),
    ("adaptive_max_pool1d", (2, 3, 4), 0), ("adaptive_max_pool1d", (2, 3, 4), (3,)),
    ("adaptive_max_pool3d", (1, 1, 2, 3, 4), 0),
])
def test_adaptive_max_pool_sizes(fn, shape, size):
    x = randn(*shape)
    same(lambda T: getattr(F(T), fn)(T.tensor(x), size, return_indices=True))


@pytest.mark.parametrize("fn,d", [("adaptive_max_pool2d", 2), ("adaptive_max_pool3d", 3)])
def test_adaptive_max_pool_empty_output_backward_error(fn, d):
    x = randn(1, 2, *(3,) * d)

    def scenario(T):
        t = T.tensor(x, requires_grad=True)
        return catch(lambda: getattr(F(T), fn)(t, 0).sum().backward())
    same(scenario)


@pytest.mark.parametrize("fn,shape,size", [
    ("adaptive_max_pool2d", (1, 2, 3, 4), (1, 2, 3)), ("adaptive_max_pool2d", (1, 2, 3, 4), (1,)),
    ("adaptive_max_pool2d", (2, 3, 4), (1, 2, 3)), ("adaptive_max_pool2d", (2, 4), (2, 2)),
    ("adaptive_max_pool2d", (2, 4), 2), ("adaptive_max_pool2d", (1, 1, 2, 3, 4), (1, 2, 3)),
    ("adaptive_max_pool2d", (1, 2, 0, 4), (1, 2, 3)), ("adaptive_max_pool2d", (1, 2, 0, 4), -1),
    ("adaptive_max_pool2d", (1, 2, 3, 4), -1), ("adaptive_max_pool2d", (1, 2, 3, 4), (2, -1)),
    ("adaptive_max_pool3d", (1, 2, 3, 4), (1, 2, 3, 4)),
    ("adaptive_max_pool3d", (1, 1, 2, 3, 4), (1, 2, 3, 4)),
    ("adaptive_max_pool3d", (1, 1, 0, 3, 4), (1, 2)), ("adaptive_max_pool3d", (1, 1, 2, 3, 4), -1),
    ("adaptive_max_pool1d", (2, 3, 4), (1, 2)), ("adaptive_max_pool1d", (1, 2, 3, 4), (1, 2)),
    ("adaptive_max_pool1d", (2, 3, 0), 2), ("adaptive_max_pool1d", (2, 3, 4), -1),
])
def test_adaptive_max_pool_bad_arguments(fn, shape, size):
    x = randn(*shape)
    same(lambda T: catch(getattr(F(T), fn), T.tensor(x), size))


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool", "complex64", "float16",
                                   "bfloat16", "float64"])
@pytest.mark.parametrize("fn,shape", [("adaptive_max_pool2d", (1, 2, 3, 4)),
                                      ("adaptive_max_pool1d", (2, 3, 5)),
                                      ("adaptive_max_pool3d", (1, 2, 3, 4, 4))])
def test_adaptive_max_pool_dtypes(dtype, fn, shape):
    x = randn(*shape)
    same(lambda T: catch(getattr(F(T), fn), T.tensor(x).to(getattr(T, dtype)), 2))


def test_adaptive_max_pool_dtype_checked_after_sizes():
    same(lambda T: [catch(F(T).adaptive_max_pool2d, T.ones(1, 2, 3, 4, dtype=T.int32), -1),
                    catch(F(T).adaptive_max_pool2d, T.ones(1, 2, 0, 4, dtype=T.int32), 2)])


# ---------------------------------------------------------------- average and LP pooling dtypes
POOLS = [
    ("avg_pool1d", (2, 3, 6), lambda F, x: F.avg_pool1d(x, 2)),
    ("avg_pool2d", (2, 3, 4, 6), lambda F, x: F.avg_pool2d(x, 2, 1, 1)),
    ("avg_pool3d", (1, 2, 3, 4, 4), lambda F, x: F.avg_pool3d(x, 2)),
    ("lp_pool1d", (2, 3, 6), lambda F, x: F.lp_pool1d(x, 2, 2)),
    ("lp_pool2d", (2, 3, 4, 6), lambda F, x: F.lp_pool2d(x, 2, 2)),
    ("lp_pool3d", (1, 2, 3, 4, 4), lambda F, x: F.lp_pool3d(x, 2, 2)),
    ("max_pool1d", (2, 3, 6), lambda F, x: F.max_pool1d(x, 2)),
    ("max_pool1d-indices", (2, 3, 6), lambda F, x: F.max_pool1d(x, 2, return_indices=True)),
    ("max_pool2d", (2, 3, 4, 6), lambda F, x: F.max_pool2d(x, 2)),
    ("max_pool3d", (1, 2, 3, 4, 4), lambda F, x: F.max_pool3d(x, 2)),
]


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "bool",
                                   "float16", "bfloat16", "complex64"])
@pytest.mark.parametrize("name,shape,fn", POOLS, ids=[p[0] for p in POOLS])
def test_pooling_dtypes(dtype, name, shape, fn):
    # small integers, so that every dtype holds them and half-precision sums are exact
    x = RNG.integers(-4, 5, shape).astype(np.float32) / 2

    def scenario(T):
        t = T.tensor(x).to(getattr(T, dtype))
        return catch(fn, F(T), t)
    same(scenario, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape,fn", [
    ((2, 3, 7, 9), lambda F, x: F.avg_pool2d(x, 3, 2, 1)),
    ((2, 3, 9), lambda F, x: F.avg_pool1d(x, 3, 1, 1, count_include_pad=False)),
])
def test_avg_pool_half_values(dtype, shape, fn):
    x = randn(*shape)
    same(lambda T: fn(F(T), T.tensor(x).to(getattr(T, dtype))), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("call", [
    lambda F, T: F.avg_pool2d(T.ones(1, 4, 4, dtype=T.int32), 5),
    lambda F, T: F.avg_pool2d(T.ones(1, 4, 4, dtype=T.int32), 2, 0),
    lambda F, T: F.avg_pool2d(T.ones(1, 4, 4, dtype=T.int32), 2, divisor_override=0),
    lambda F, T: F.avg_pool2d(T.ones(0, 1, 4, 4, dtype=T.int32), 2),
    lambda F, T: F.avg_pool1d(T.ones(1, 4, dtype=T.int16), 5),
    lambda F, T: F.max_pool2d(T.ones(1, 4, 4, dtype=T.bool), 5),
    lambda F, T: F.max_pool1d(T.ones(1, 4, dtype=T.bool), 5),
    lambda F, T: F.max_pool1d(T.ones(1, 4, dtype=T.bool), 2, padding=2),
])
def test_dtype_checked_after_arguments(call):
    same(lambda T: catch(call, F(T), T))


# ---------------------------------------------------------------- max pooling's double backward
def _double_backward(T, pool, x):
    """The input gradient's graph (its node and that node's next_functions' names) and the
    gradients of a weighting of it with respect to the input and the output gradient."""
    t = T.tensor(x, requires_grad=True)
    y = pool(F(T), t)
    y = y[0] if isinstance(y, tuple) else y
    g = T.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)), requires_grad=True)
    gx, = T.autograd.grad(y, t, g, create_graph=True)
    node = gx.grad_fn
    names = [node.name(), [n.name() if n is not None else None for n, _ in node.next_functions]]
    for n, _ in node.next_functions:
        if n is not None:
            names.append([m.name() if m is not None else None for m, _ in n.next_functions])
    w = T.tensor(np.cos(np.arange(x.size)).reshape(x.shape))
    return names, T.autograd.grad((gx * w).sum(), (t, g), allow_unused=True)


DOUBLE = [
    ("max_pool1d", (2, 3, 7), lambda F, x: F.max_pool1d(x, 3, 2, 1)),
    ("max_pool1d-indices", (3, 8), lambda F, x: F.max_pool1d(x, 2, return_indices=True)),
    ("max_pool2d", (2, 3, 4, 4), lambda F, x: F.max_pool2d(x, 2)),
    ("max_pool2d-overlap", (2, 3, 5, 5), lambda F, x: F.max_pool2d(x, 3, 1, 1)),
    ("max_pool3d", (1, 2, 4, 4, 4), lambda F, x: F.max_pool3d(x, 2)),
    ("max_pool3d-ceil", (2, 5, 4, 5), lambda F, x: F.max_pool3d(x, 2, ceil_mode=True)),
    ("adaptive_max_pool1d", (2, 3, 7), lambda F, x: F.adaptive_max_pool1d(x, 3)),
    ("adaptive_max_pool2d", (2, 3, 5, 5), lambda F, x: F.adaptive_max_pool2d(x, (2, 3))),
    ("adaptive_max_pool3d", (1, 2, 4, 5, 3), lambda F, x: F.adaptive_max_pool3d(x, 2)),
]


@pytest.mark.parametrize("name,shape,pool", DOUBLE, ids=[d[0] for d in DOUBLE])
def test_max_pool_double_backward(name, shape, pool):
    x = randn(*shape, dtype=np.float64)
    same(lambda T: _double_backward(T, pool, x))


@pytest.mark.parametrize("squeeze", [lambda x: x.squeeze(), lambda x: x.squeeze(1),
                                     lambda x: x.squeeze(0), lambda x: x.squeeze((1, 3)),
                                     lambda x: x.squeeze((0, 1))])
def test_squeeze_double_backward_graph(squeeze):
    x = randn(2, 1, 3, 1, dtype=np.float64)

    def scenario(T):
        t = T.tensor(x, requires_grad=True)
        y = squeeze(t)
        g = T.ones(y.shape, dtype=T.float64, requires_grad=True)
        gx, = T.autograd.grad(y, t, g, create_graph=True)
        names, node = [], gx.grad_fn
        while node is not None:
            names.append(node.name())
            node = node.next_functions[0][0] if node.next_functions else None
        return names, gx, gx.stride()
    same(scenario)


@pytest.mark.parametrize("name,shape,pool", DOUBLE, ids=[d[0] for d in DOUBLE])
def test_max_pool_empty_first_dim(name, shape, pool):
    # an empty batch pools (and back-propagates) to empty tensors; an empty unbatched input
    # (its channels) is refused
    x = np.zeros((0,) + shape[1:])

    def scenario(T):
        t = T.tensor(x, requires_grad=True)
        y = pool(F(T), t)
        y = y[0] if isinstance(y, tuple) else y
        y.sum().backward()
        return y, t.grad
    same(lambda T: catch(scenario, T))


@pytest.mark.parametrize("shape", [
    (0, 4, 4), (2, 0, 4, 4), (2, 3, 0, 4), (0, 3, 4, 4), (3, 0, 4), (3, 4, 0), (0, 3, 4), (0, 4),
    (2, 0, 4), (4,), (4, 4), (1, 1, 1, 4, 4),
])
def test_max_pool_1d_2d_empty_or_wrong_rank(shape):
    x = np.zeros(shape, dtype=np.float32)
    calls = [lambda F, t: F.max_pool1d(t, 2),
             lambda F, t: F.max_pool1d(t, 2, return_indices=True)[0],
             lambda F, t: F.max_pool2d(t, 2),
             lambda F, t: F.max_pool2d(t, 2, return_indices=True)[0]]
    same(lambda T: [catch(call, F(T), T.tensor(x)) for call in calls])


@pytest.mark.parametrize("shape", [
    (0, 4, 4, 4), (2, 0, 4, 4, 4), (2, 3, 0, 4, 4), (0, 3, 4, 4, 4), (3, 4, 0, 4), (2, 3, 4, 0, 4),
    (2, 3, 4, 4, 0), (4, 4, 4), (1, 1, 1, 4, 4, 4),
])
def test_max_pool3d_empty_or_wrong_rank(shape):
    x = np.zeros(shape, dtype=np.float32)
    same(lambda T: [catch(F(T).max_pool3d, T.tensor(x), 2),
                    catch(F(T).max_pool3d, T.tensor(x), 5)])


@pytest.mark.parametrize("shape", [
    (4,), (4, 4), (1, 1, 1, 4, 4), (0, 4, 4), (2, 0, 4, 4), (2, 3, 0, 4), (0, 3, 4, 4), (3, 0, 4),
    (3, 4, 0),
])
def test_avg_pool2d_empty_or_wrong_rank(shape):
    x = np.zeros(shape, dtype=np.float32)
    same(lambda T: [catch(F(T).avg_pool2d, T.tensor(x), 2),
                    catch(F(T).avg_pool2d, T.tensor(x), 2, 0),
                    catch(F(T).avg_pool2d, T.tensor(x), 5),
                    catch(F(T).avg_pool2d, T.tensor(x), 2, divisor_override=0),
                    catch(F(T).avg_pool1d, T.tensor(x), 2)])


@pytest.mark.parametrize("shape", [
    (4, 4, 4), (1, 1, 1, 1, 4, 4), (0, 4, 4, 4), (2, 0, 4, 4, 4), (2, 3, 0, 4, 4),
    (0, 3, 4, 4, 4), (3, 4, 0, 4), (1, 4, 4, 4),
])
def test_avg_pool3d_checks_in_order(shape):
    x = np.zeros(shape, dtype=np.float32)
    same(lambda T: [catch(F(T).avg_pool3d, T.tensor(x), 2),
                    catch(F(T).avg_pool3d, T.tensor(x), 2, 0),
                    catch(F(T).avg_pool3d, T.tensor(x), 2, divisor_override=0),
                    catch(F(T).avg_pool3d, T.tensor(x), 5, 1, 2),
                    catch(F(T).avg_pool3d, T.tensor(x), 5, 1, 3),
                    catch(F(T).avg_pool3d, T.tensor(x), (1, 1, 5), ceil_mode=True),
                    catch(F(T).avg_pool3d, T.tensor(x), (1, 1, 4), (1, 1, 9)),
                    catch(F(T).avg_pool3d, T.tensor(x).int(), 5)])
