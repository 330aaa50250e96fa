"""Forward-mode AD (autograd.forward_ad): dual tensors' tangents through ops, views, in-place
writes and levels, each scenario run under torch and ember and compared."""
import numpy as np
import pytest

import ember
from differential import same, catch


def data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def f64(T, *shape, seed=0):
    return T.tensor(data(*shape, seed=seed), dtype=T.float64)


def unpacked(T, out):
    """(primal, tangent) of each output; an output without a tangent gives None there."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [tuple(T.autograd.forward_ad.unpack_dual(o)) for o in outs]


def dual_scenario(fn, *shapes):
    """A scenario running fn on dual tensors of the given shapes (float64, tangents random)."""
    def scenario(T):
        fwAD = T.autograd.forward_ad
        with fwAD.dual_level():
            duals = [fwAD.make_dual(f64(T, *s, seed=i), f64(T, *s, seed=10 + i))
                     for i, s in enumerate(shapes)]
            return unpacked(T, fn(T, *duals))
    return scenario


# ----------------------------------------------------------------------------- elementwise
UNARY = ["sin", "cos", "tanh", "exp", "sigmoid", "neg", "abs", "square", "atan", "sinh",
         "erf", "expm1", "reciprocal", "relu", "log1p_abs", "sqrt_abs", "log_abs", "rsqrt_abs",
         "trunc", "sign", "frac", "lgamma_abs", "digamma_abs"]


def _unary(T, name, x):
    if name.endswith("_abs"):           # a function defined on positive numbers
        name = name[:-4]
        x = x.abs() + 0.5
    return getattr(x, name)()


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("shape", [(), (5,), (2, 3)])
def test_unary_tangents(name, shape):
    same(dual_scenario(lambda T, x: _unary(T, name, x), shape))


BINARY = {
    "add": lambda T, a, b: a + b,
    "sub_alpha": lambda T, a, b: T.sub(a, b, alpha=2.5),
    "mul": lambda T, a, b: a * b,
    "div": lambda T, a, b: a / b,
    "pow": lambda T, a, b: a.abs().pow(b),
    "atan2": lambda T, a, b: T.atan2(a, b),
    "maximum": lambda T, a, b: T.maximum(a, b),
    "hypot": lambda T, a, b: T.hypot(a, b),
    "where": lambda T, a, b: T.where(a > 0, a, b),
    "lerp": lambda T, a, b: T.lerp(a, b, 0.3),
    "scalar": lambda T, a, b: (2 - a) * 3 + b ** 2 / 4,
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((4, 1), (1, 3)), ((), (2,))])
def test_binary_tangents_broadcast(name, shapes):
    same(dual_scenario(BINARY[name], *shapes))


def test_only_one_operand_dual():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        with fwAD.dual_level():
            x = fwAD.make_dual(f64(T, 2, 3), f64(T, 2, 3, seed=1))
            c = f64(T, 3, seed=2)
            return unpacked(T, [x * c, c / x, T.addcmul(c, x, c, value=0.5), c + 1,
                                x.clamp(-0.5, 0.5)])
    same(scenario)


# ----------------------------------------------------------------------------- reductions
REDUCTIONS = {
    "sum": lambda T, x: x.sum(),
    "sum_dim": lambda T, x: x.sum(1, keepdim=True),
    "mean": lambda T, x: x.mean(0),
    "prod": lambda T, x: x.prod(1),
    "amax": lambda T, x: x.amax(1),
    "max_dim": lambda T, x: x.max(1),
    "min": lambda T, x: x.min(),
    "std": lambda T, x: x.std(0),
    "var": lambda T, x: x.var(1, correction=0),
    "logsumexp": lambda T, x: x.logsumexp(1),
    "norm": lambda T, x: x.norm(),
    "cumsum": lambda T, x: x.cumsum(1),
    "cumprod": lambda T, x: x.cumprod(0),
    "sort": lambda T, x: x.sort(1),
    "topk": lambda T, x: x.topk(2, 1),
    "median": lambda T, x: x.median(0),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_tangents(name):
    same(dual_scenario(REDUCTIONS[name], (3, 4)))


# ----------------------------------------------------------------------------- linear algebra
LINALG = {
    "matmul": (lambda T, a, b: a @ b, ((2, 3), (3, 4))),
    "matmul_batched": (lambda T, a, b: a @ b, ((2, 3, 4), (4, 2))),
    "matvec": (lambda T, a, b: a @ b, ((3, 4), (4,))),
    "dot": (lambda T, a, b: T.dot(a, b), ((4,), (4,))),
    "bmm": (lambda T, a, b: T.bmm(a, b), ((2, 2, 3), (2, 3, 2))),
    "einsum": (lambda T, a, b: T.einsum("ij,jk->ik", a, b), ((2, 3), (3, 2))),
    "outer": (lambda T, a, b: T.outer(a, b), ((3,), (2,))),
    "inv": (lambda T, a, b: T.linalg.inv(a + 3 * T.eye(3, dtype=T.float64)), ((3, 3), (1,))),
    "det": (lambda T, a, b: T.linalg.det(a), ((3, 3), (1,))),
    "solve": (lambda T, a, b: T.linalg.solve(a + 3 * T.eye(3, dtype=T.float64), b),
              ((3, 3), (3,))),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg_tangents(name):
    fn, shapes = LINALG[name]
    same(dual_scenario(fn, *shapes))


# ----------------------------------------------------------------------------- views
VIEWS = {
    "view": lambda T, x: x.view(4, 3),
    "reshape": lambda T, x: x.reshape(-1),
    "transpose": lambda T, x: x.transpose(0, 1),
    "t": lambda T, x: x.t(),
    "permute": lambda T, x: x.permute(1, 0),
    "expand": lambda T, x: x[:, :1].expand(3, 5),
    "select": lambda T, x: x[1],
    "slice": lambda T, x: x[:, 1:3],
    "step": lambda T, x: x[::2, ::3],
    "unsqueeze": lambda T, x: x.unsqueeze(1),
    "squeeze": lambda T, x: x[:1].squeeze(0),
    "diagonal": lambda T, x: x.diagonal(),
    "unfold": lambda T, x: x.unfold(1, 2, 1),
    "as_strided": lambda T, x: x.as_strided((2, 2), (1, 2), 1),
    "unbind": lambda T, x: x.unbind(1),
    "split": lambda T, x: x.split(2, 1),
    "chunk": lambda T, x: x.chunk(3, 0),
    "narrow": lambda T, x: x.narrow(1, 1, 2),
    "flatten": lambda T, x: x.t().flatten(),
    "movedim": lambda T, x: x.movedim(0, 1),
    "real": lambda T, x: x.real,
    "contiguous": lambda T, x: x.t().contiguous(),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_tangents(name):
    same(dual_scenario(VIEWS[name], (3, 4)))


def test_view_tangent_is_a_view_of_the_tangent():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        x, t = f64(T, 3, 4), f64(T, 3, 4, seed=1)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, t)
            out = [fwAD.unpack_dual(d).tangent is t, d._is_view(), d._base is x,
                   d.requires_grad, d.is_leaf]
            for v in (d[1], d.t(), d[:, 1:], d.view(12), d.unsqueeze(0)):
                tangent = fwAD.unpack_dual(v).tangent
                out += [tangent._base is t, tangent.shape, tangent.stride(),
                        tangent.storage_offset()]
            p = fwAD.unpack_dual(d).primal
            out += [p._is_view(), p._base is x, fwAD.unpack_dual(p).tangent]
            # a write through the tangent's view is seen by the tangent
            fwAD.unpack_dual(d[0]).tangent.fill_(7.0)
            out.append(t)
        return out
    same(scenario)


def test_make_dual_copies_a_tangent_of_another_layout():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        with fwAD.dual_level():
            ts = f64(T, 4, 3, seed=1).t()
            d = fwAD.make_dual(f64(T, 3, 4), ts)
            te = f64(T, 1, seed=2).expand(3)
            e = fwAD.make_dual(f64(T, 3), te)
            tangent, tangent_e = fwAD.unpack_dual(d).tangent, fwAD.unpack_dual(e).tangent
            return [tangent is ts, tangent.stride(), tangent, tangent_e is te,
                    tangent_e.stride(), tangent_e]
    same(scenario)


# ----------------------------------------------------------------------------- indexing
INDEXING = {
    "advanced": lambda T, x: x[T.tensor([0, 2, 0])],
    "mask": lambda T, x: x[x > 0],
    "gather": lambda T, x: x.gather(1, T.tensor([[0, 1], [2, 2], [1, 0]])),
    "index_select": lambda T, x: x.index_select(1, T.tensor([3, 0])),
    "masked_fill": lambda T, x: x.masked_fill(x < 0, 2.0),
    "take": lambda T, x: T.take(x, T.tensor([1, 5, 11])),
    "cat": lambda T, x: T.cat([x, x * 2], 0),
    "stack": lambda T, x: T.stack([x, x.sin()], 1),
    "flip": lambda T, x: x.flip(1),
    "roll": lambda T, x: x.roll(1, 0),
    "tril": lambda T, x: x.tril(),
    "repeat": lambda T, x: x.repeat(2, 1),
    "scatter_add": lambda T, x: T.zeros(3, 5, dtype=T.float64).scatter_add(
        1, T.tensor([[0, 1, 2, 0], [4, 4, 3, 2], [1, 1, 1, 1]]), x),
}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing_tangents(name):
    same(dual_scenario(INDEXING[name], (3, 4)))


# ----------------------------------------------------------------------------- in place
INPLACE = {
    "mul_scalar": lambda T, x, y: x.clone().mul_(3),
    "add_dual": lambda T, x, y: x.clone().add_(y, alpha=2),
    "sin_": lambda T, x, y: x.clone().sin_(),
    "clamp_": lambda T, x, y: x.clone().clamp_(min=0),
    "zero_": lambda T, x, y: x.clone().zero_(),
    "fill_": lambda T, x, y: x.clone().fill_(2.0),
    "copy_": lambda T, x, y: x.clone().copy_(y),
    "copy_broadcast": lambda T, x, y: x.clone().copy_(y[0]),
    "nondual_target": lambda T, x, y: T.ones(3, 4, dtype=T.float64).mul_(y),
    "nondual_view": lambda T, x, y: _written_view(T, y),
    "view_of_dual": lambda T, x, y: _view_of_dual_written(T, x),
    "setitem": lambda T, x, y: _setitem(T, x, y),
    "index_put_": lambda T, x, y: x.clone().index_put_((T.tensor([0, 2]),), y[1]),
    "masked_fill_": lambda T, x, y: x.clone().masked_fill_(x > 0, 1.5),
}


def _written_view(T, y):
    base = T.zeros(3, 4, dtype=T.float64)
    earlier = base[:, 0]            # a view made before the base got its tangent
    base[1:].copy_(y[1:])
    return [base, earlier, base[2]]


def _view_of_dual_written(T, x):
    d = x.clone()
    v = d[:, 1:]
    v.mul_(2)
    return [d, v]


def _setitem(T, x, y):
    d = x.clone()
    d[0] = y[1]
    d[1:, 2] = T.tensor([1.0, 2.0], dtype=T.float64)
    return d


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_tangents(name):
    same(dual_scenario(INPLACE[name], (3, 4), (3, 4)))


def test_inplace_updates_the_tangent_in_place():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        with fwAD.dual_level():
            x, t = f64(T, 3), f64(T, 3, seed=1)
            d = fwAD.make_dual(x.clone(), t.clone())
            tangent = fwAD.unpack_dual(d).tangent
            d.mul_(3)
            same_object = fwAD.unpack_dual(d).tangent is tangent
            base = x.clone()
            e = fwAD.make_dual(base, t)
            e.add_(1)                   # the dual view's tangent is kept; its base has none
            base_tangent = fwAD.unpack_dual(base).tangent
            base.mul_(2)                # the base written: the view's tangent unchanged
            return [tangent, same_object, base_tangent, unpacked(T, e)]
    same(scenario)


# ----------------------------------------------------------------------------- nn.functional
def _conv(T, x, w):
    return T.nn.functional.conv2d(x, w, padding=1, stride=(1, 2))


NN = {
    "conv2d": (_conv, ((2, 3, 5, 6), (4, 3, 3, 3))),
    "conv1d": (lambda T, x, w: T.nn.functional.conv1d(x, w, groups=2),
               ((1, 4, 7), (2, 2, 3))),
    "linear": (lambda T, x, w: T.nn.functional.linear(x, w), ((3, 4), (2, 4))),
    "softmax": (lambda T, x, w: T.softmax(x * w, -1), ((3, 4), (4,))),
    "log_softmax": (lambda T, x, w: T.nn.functional.log_softmax(x, 0) * w, ((3, 4), (4,))),
    "layer_norm": (lambda T, x, w: T.nn.functional.layer_norm(x, (4,), w, w), ((3, 4), (4,))),
    "group_norm": (lambda T, x, w: T.nn.functional.group_norm(x, 2, w), ((2, 4, 3), (4,))),
    "batch_norm_train": (lambda T, x, w: T.nn.functional.batch_norm(
        x, None, None, w, None, training=True), ((5, 3), (3,))),
    "gelu": (lambda T, x, w: T.nn.functional.gelu(x) + w, ((3, 4), (4,))),
    "silu_elu": (lambda T, x, w: T.nn.functional.silu(x) * T.nn.functional.elu(w),
                 ((3, 4), (4,))),
    "max_pool2d": (lambda T, x, w: T.nn.functional.max_pool2d(x * w, 2), ((1, 2, 4, 4), (4,))),
    "avg_pool2d": (lambda T, x, w: T.nn.functional.avg_pool2d(x, 2) * w, ((1, 2, 4, 4), (2,))),
    "mse_loss": (lambda T, x, w: T.nn.functional.mse_loss(x, w), ((3, 4), (3, 4))),
    "cross_entropy": (lambda T, x, w: T.nn.functional.cross_entropy(
        x, T.tensor([0, 3, 1])) * w.sum(), ((3, 4), (2,))),
    "interpolate": (lambda T, x, w: T.nn.functional.interpolate(
        x, scale_factor=2, mode="bilinear") * w.sum(), ((1, 1, 3, 3), (1,))),
    "pad": (lambda T, x, w: T.nn.functional.pad(x, (1, 2), value=0.5) * w.sum(), ((2, 3), (1,))),
}


@pytest.mark.parametrize("name", sorted(NN))
def test_nn_functional_tangents(name):
    fn, shapes = NN[name]
    same(dual_scenario(fn, *shapes))


def test_module_with_dual_parameters_input():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        T.manual_seed(0)
        lin = T.nn.Linear(4, 3).double()
        with T.no_grad():
            lin.weight.copy_(f64(T, 3, 4, seed=5))
            lin.bias.copy_(f64(T, 3, seed=6))
        with fwAD.dual_level():
            x = fwAD.make_dual(f64(T, 2, 4), f64(T, 2, 4, seed=1))
            return unpacked(T, T.tanh(lin(x)).sum(1))
    same(scenario)


# ----------------------------------------------------------------------------- against reverse mode
@pytest.mark.parametrize("name", ["conv2d", "layer_norm", "softmax", "max_pool2d"])
def test_tangent_is_jacobian_times_tangent(name):
    """J t from forward AD equals the Jacobian (by reverse mode) times t, in ember alone."""
    fn, shapes = NN[name]
    T = ember
    primals = [f64(T, *s, seed=i) for i, s in enumerate(shapes)]
    tangents = [f64(T, *s, seed=10 + i) for i, s in enumerate(shapes)]
    with T.autograd.forward_ad.dual_level():
        duals = [T.autograd.forward_ad.make_dual(p, t) for p, t in zip(primals, tangents)]
        forward = T.autograd.forward_ad.unpack_dual(fn(T, *duals)).tangent
    jac = T.autograd.functional.jacobian(lambda *a: fn(T, *a), tuple(primals))
    expected = sum((j.reshape(forward.numel(), -1) @ t.reshape(-1)) for j, t in
                   zip(jac, tangents)).reshape(forward.shape)
    np.testing.assert_allclose(forward.numpy(), expected.numpy(), rtol=1e-10, atol=1e-10)


# ----------------------------------------------------------------------------- autograd
def test_tangent_requiring_grad_backpropagates():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        x = f64(T, 3).requires_grad_()
        t = f64(T, 3, seed=1).requires_grad_()
        with fwAD.dual_level():
            d = fwAD.make_dual(x, t)
            y = (d.exp() * d).sum()
            primal, tangent = fwAD.unpack_dual(y)
            tangent.backward()
            return [primal, tangent, tangent.requires_grad, y.requires_grad, x.grad, t.grad,
                    d.grad_fn.name(), type(y.grad_fn).__name__]
    same(scenario)


def test_no_grad_tangents_have_no_graph():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        x = f64(T, 3).requires_grad_()
        with fwAD.dual_level(), T.no_grad():
            y = fwAD.make_dual(x, f64(T, 3, seed=1)).sin()
            tangent = fwAD.unpack_dual(y).tangent
            return [tangent, tangent.requires_grad, y.requires_grad]
    same(scenario)


# ----------------------------------------------------------------------------- levels
def test_level_exit_drops_tangents_and_detach_drops_them():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        x, t = f64(T, 3), f64(T, 3, seed=1)
        with fwAD.dual_level() as level:
            d = fwAD.make_dual(x, t)
            y = d * 2
            inside = [level, fwAD.unpack_dual(d.detach()).tangent, fwAD.unpack_dual(d.data),
                      unpacked(T, [d.argmax(), d > 0, d.long(), d.float(), T.zeros_like(d)])]
        outside = [fwAD.unpack_dual(y), fwAD.unpack_dual(x).primal is x]
        with fwAD.dual_level():
            again = fwAD.unpack_dual(y).tangent
        return [inside, outside, again]
    same(scenario)


def test_enter_and_exit_levels():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        out = [catch(fwAD.exit_dual_level), catch(fwAD.exit_dual_level, level=0),
               fwAD.enter_dual_level(), catch(fwAD.enter_dual_level),
               catch(fwAD.exit_dual_level, level=3)]
        with_dual = fwAD.make_dual(f64(T, 2), f64(T, 2, seed=1))
        out.append(catch(fwAD.exit_dual_level))
        out.append(fwAD.unpack_dual(with_dual).tangent)

        @fwAD.dual_level()
        def decorated(x):
            return fwAD.unpack_dual(fwAD.make_dual(x, x * 0 + 1).exp()).tangent
        out.append(decorated(f64(T, 2)))
        out.append(catch(lambda: fwAD.make_dual(f64(T, 2), f64(T, 2))))
        return out
    same(scenario)


def test_errors():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        x, t = f64(T, 3), f64(T, 3, seed=1)
        out = [catch(fwAD.make_dual, x, t), catch(fwAD.make_dual, x, t, level=0),
               catch(fwAD.make_dual, x.long(), t, level=0), fwAD.unpack_dual(x, level=0)]
        with fwAD.dual_level():
            d = fwAD.make_dual(x, t)
            out += [
                catch(fwAD.make_dual, x, f64(T, 4)),
                catch(fwAD.make_dual, x, f64(T, 1, 3)),
                catch(fwAD.make_dual, x.long(), t),
                catch(fwAD.make_dual, x, t.long()),
                catch(fwAD.make_dual, x, 2.0),
                catch(fwAD.make_dual, 3, t),
                catch(fwAD.make_dual, d, t),
                catch(fwAD.make_dual, d, f64(T, 4)),
                catch(fwAD.make_dual, x, d),
                catch(fwAD.make_dual, x, t, level=1),
                catch(fwAD.make_dual, x, t, level=-1),
                catch(fwAD.unpack_dual, d, level=1),
                fwAD.unpack_dual(x, level=1).tangent,
                catch(fwAD.unpack_dual, 3),
                catch(fwAD.make_dual, x[None].expand(2, 3), f64(T, 2, 3)),
                catch(fwAD.enter_dual_level),
            ]
        return out
    same(scenario)


def test_unpacked_dual_tensor_namedtuple():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        with fwAD.dual_level():
            u = fwAD.unpack_dual(fwAD.make_dual(f64(T, 2), f64(T, 2, seed=1)))
            return [type(u).__name__, u._fields, list(u), u.primal, u.tangent,
                    sorted(fwAD.__all__)]
    same(scenario)


# ----------------------------------------------------------------------------- complex, dtypes
def c128(T, *shape, seed=0):
    return T.complex(f64(T, *shape, seed=seed), f64(T, *shape, seed=seed + 50))


COMPLEX = {
    "exp": lambda T, z: z.exp(),
    "abs": lambda T, z: z.abs(),
    "real_imag": lambda T, z: [z.real, z.imag * 2],
    "conj_mul": lambda T, z: (z * z.conj()).sum(),
    "angle": lambda T, z: z.angle(),
    "view_as_real": lambda T, z: T.view_as_real(z),
    "matmul": lambda T, z: z @ z.t(),
    "from_real": lambda T, z: T.view_as_complex(T.view_as_real(z) * 2),
}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_tangents(name):
    def scenario(T):
        fwAD = T.autograd.forward_ad
        with fwAD.dual_level():
            z = fwAD.make_dual(c128(T, 2, 2), c128(T, 2, 2, seed=1))
            return unpacked(T, COMPLEX[name](T, z))
    same(scenario)


def test_real_dual_to_complex():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        with fwAD.dual_level():
            x = fwAD.make_dual(f64(T, 3), f64(T, 3, seed=1))
            return unpacked(T, [x.to(T.complex128) * 1j, T.polar(x.abs(), x)])
    same(scenario)


def test_float32_tangent_of_a_float64_primal():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        with fwAD.dual_level():
            x = fwAD.make_dual(f64(T, 2, 3), f64(T, 2, 3, seed=1).float())
            # (views keep the tangent's dtype; the ops here promote it to the primal's)
            return unpacked(T, [x, x.sin(), x * 2, x[1], x.t(), x.float(), x.exp().sum(0)])
    same(scenario)


def test_forward_over_reverse_hessian_vector_product():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        x = f64(T, 4).requires_grad_()
        v = f64(T, 4, seed=1)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, v)
            y = (d.sin() * d).sum() + (d @ d) ** 2
            g, = T.autograd.grad(y, x, create_graph=True)
            return [fwAD.unpack_dual(g).tangent, fwAD.unpack_dual(y).tangent, g]
    result = same(scenario)
    # and ember's Hessian by reverse mode times v
    x, v = f64(ember, 4), f64(ember, 4, seed=1)
    hessian = ember.autograd.functional.hessian(lambda a: (a.sin() * a).sum() + (a @ a) ** 2, x)
    np.testing.assert_allclose(result[0][1], (hessian @ v).numpy(), rtol=1e-10)


def test_detach_in_place_drops_the_tangent_and_func_jvp_refuses_nesting():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        x, v = f64(T, 3), f64(T, 3, seed=1)
        with fwAD.dual_level():
            y = fwAD.make_dual(x, v) * 2
            return [fwAD.unpack_dual(y.detach_()), catch(T.func.jvp, T.sin, (x,), (v,)),
                    catch(T.func.jvp, T.sin, [x], (v,)),
                    catch(T.func.linearize, T.sin, x)]
    same(scenario)


def test_setting_a_number_into_a_dual_tensor_zeroes_its_tangent_there():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        x = T.tensor([1., 2., 3.], dtype=T.float64)
        with fwAD.dual_level():
            d = fwAD.make_dual(x.clone(), T.full((3,), 0.5, dtype=T.float64))
            d[0] = 5.0
            d[1:] = 2
            return fwAD.unpack_dual(d).tangent, fwAD.unpack_dual(d).primal
    same(scenario)


def test_custom_functions_give_tangents_through_their_jvp_only():
    def scenario(T):
        fwAD = T.autograd.forward_ad

        class NoJvp(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class WithJvp(T.autograd.Function):
            @staticmethod
            def forward(ctx, a, k):
                ctx.k = k
                return a.sin(), a * k

            @staticmethod
            def backward(ctx, g1, g2):
                return None, None

            @staticmethod
            def jvp(ctx, t, _):
                return t * 10, t * ctx.k

        x = T.tensor([1., 2.], dtype=T.float64)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, T.tensor([1., -1.], dtype=T.float64))
            r = [catch(NoJvp.apply, d), NoJvp.apply(x)]
            y, z = WithJvp.apply(d, 3.0)
            r += [fwAD.unpack_dual(y), fwAD.unpack_dual(z)]
        return r
    same(scenario)


# ----------------------------------------------------------------------------- printing
def _dual_reprs(T):
    fwAD = T.autograd.forward_ad

    def dual(primal, tangent):
        return fwAD.make_dual(primal, tangent)
    x = f64(T, 3, 4)
    with fwAD.dual_level():
        d = dual(x, f64(T, 3, 4, seed=1))
        r = dual(x[0].clone().requires_grad_(), f64(T, 4, seed=2))
        reprs = [
            d, str(d), d[1], d.t(), d * 2, r, r.sum(), r.detach(),
            dual(f64(T, 2, 3, 4), f64(T, 2, 3, 4, seed=1)),
            dual(f64(T, 2).float(), f64(T, 2, seed=1)),
            dual(T.tensor([1 + 2j]), T.tensor([1j])),
            dual(T.tensor(3.), T.tensor(1 / 3)),
            dual(T.tensor(3.), T.tensor(1e10)),
            dual(T.tensor(3. + 1j), T.tensor(1. + 2j)),
            dual(T.tensor(3., dtype=T.float16), T.tensor(1 / 3, dtype=T.float16)),
            dual(T.tensor(3., dtype=T.bfloat16), T.tensor(1 / 3, dtype=T.bfloat16)),
            dual(T.zeros(0), T.zeros(0)),
            dual(T.zeros(0, 2, dtype=T.float64), T.zeros(0, 2, dtype=T.float64)),
            dual(f64(T, 2000).float(), f64(T, 2000, seed=1).float()),
            dual(f64(T, 5), f64(T, 5, seed=1) * 1e6),
            fwAD.unpack_dual(d).primal,
        ]
        with T.no_grad():
            reprs.append(r * 2)
        T.set_printoptions(precision=2, linewidth=50)
        try:
            reprs.append(repr(d))
        finally:
            T.set_printoptions(profile="default")
        reprs = [v if isinstance(v, str) else repr(v) for v in reprs]
    return reprs + [repr(d)]            # (no tangent once the level has exited)


def test_repr_of_dual_tensors_shows_the_tangent():
    same(_dual_reprs)


# ----------------------------------------------------------------------------- refusals
OUT_FUNCTIONS = {
    "add": lambda T, d, o: T.add(d, 1, out=o),
    "sub": lambda T, d, o: T.sub(d, d, alpha=2, out=o),
    "div_floor": lambda T, d, o: T.div(d, 2, rounding_mode="floor", out=o),
    "sin": lambda T, d, o: T.sin(d, out=o),
    "pow": lambda T, d, o: T.pow(d, 2, out=o),
    "clamp": lambda T, d, o: T.clamp(d, 0, 1, out=o),
    "where": lambda T, d, o: T.where(d > 0, d, d, out=o),
    "matmul_1d": lambda T, d, o: T.matmul(d[0], d[0], out=o),
    "matmul_2d_1d": lambda T, d, o: T.matmul(d, d[0], out=o),
    "matmul_1d_2d": lambda T, d, o: T.matmul(d[0], d, out=o),
    "matmul_3d": lambda T, d, o: T.matmul(d[None], d[None], out=o),
    "mm": lambda T, d, o: T.mm(d, d, out=o),
    "outer": lambda T, d, o: T.outer(d[0], d[1], out=o),
    "cat": lambda T, d, o: T.cat([d, d], out=o),
    "vdot": lambda T, d, o: T.vdot(d[0], d[1], out=o),
    "remainder": lambda T, d, o: T.remainder(d, 2, out=o),
    "linalg_svd": lambda T, d, o: T.linalg.svd(d, out=(o, o.clone(), o.clone())),
    "linalg_qr": lambda T, d, o: T.linalg.qr(d, out=(o, o.clone())),
    "linalg_vector_norm": lambda T, d, o: T.linalg.vector_norm(d, out=o),
    "gt": lambda T, d, o: T.gt(d, 0, out=o.bool()),
    "non_dual_input_into_dual_out": lambda T, d, o: T.sin(o.new_ones(3), out=d[0]),
    "int_out": lambda T, d, o: T.add(d, 1, out=o.float()),
}


@pytest.mark.parametrize("name", sorted(OUT_FUNCTIONS))
def test_out_functions_refuse_dual_tensors(name):
    def scenario(T):
        fwAD = T.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(f64(T, 3, 3), f64(T, 3, 3, seed=1))
            o = T.zeros(2, dtype=T.float64)
            # PyTorch writes (and resizes) out first, then refuses
            result = catch(OUT_FUNCTIONS[name], T, d, o)
            if name == "matmul_1d_2d":
                o = o.reshape(-1)   # (PyTorch refuses before squeezing out's mm result)
            return [result, o, fwAD.unpack_dual(o).tangent]
    same(scenario)


def test_out_functions_that_copy_into_out_pass_the_tangent_on():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        x = f64(T, 3, 3) + 3 * T.eye(3, dtype=T.float64)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, f64(T, 3, 3, seed=1))
            outs = [T.empty(0, dtype=T.float64) for _ in range(4)]
            T.linalg.norm(d, out=outs[0])
            T.linalg.norm(d, "fro", out=outs[1])
            T.linalg.norm(d[0], 3, out=outs[2])
            T.linalg.matrix_norm(d, out=outs[3])
            plain = T.sin(x, out=T.empty(0, dtype=T.float64))      # (no dual: no refusal)
            return [unpacked(T, outs), plain,
                    catch(T.sin, fwAD.make_dual(x.clone().requires_grad_(), x),
                          out=T.empty(0, dtype=T.float64)),
                    catch(T.sin, d, out=T.empty(0, dtype=T.long))]
    same(scenario)


RESIZES = {
    "smaller": lambda T, d: d.resize_(2),
    "same_size": lambda T, d: d.resize_(3),
    "other_shape": lambda T, d: d.resize_(3, 1),
    "larger": lambda T, d: d.resize_(5),
    "resize_as_": lambda T, d: d.resize_as_(T.ones(2)),
    "op_output": lambda T, d: (d * 2).resize_(1),
    "zero": lambda T, d: d.clone().resize_(0),
    "given_by_copy_": lambda T, d: T.zeros(3, dtype=T.float64).copy_(d).resize_(2),
    "view_of_written_base": lambda T, d: _view_of_written(T, d).resize_(1),
    "requires_grad": lambda T, d: T.autograd.forward_ad.make_dual(
        T.ones(3, requires_grad=True), T.ones(3)).resize_(3),
}


def _view_of_written(T, d):
    base = T.zeros(3, dtype=T.float64)
    view = base[:2]
    base.copy_(d)
    return view


@pytest.mark.parametrize("name", sorted(RESIZES))
def test_resize_refuses_a_tensor_with_a_tangent_after_resizing(name):
    def scenario(T):
        fwAD = T.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(f64(T, 3), f64(T, 3, seed=1))
            return [catch(RESIZES[name], T, d), d.shape, T.ones(3).resize_(2).shape]
    same(scenario)


def test_jacfwd_and_hessian_refuse_a_dual_level():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        calls = []

        def f(x):
            calls.append(1)
            return x.sin()
        x = f64(T, 3)
        with fwAD.dual_level():
            out = [catch(T.func.jacfwd(f), x), catch(T.func.hessian(f), x),
                   catch(T.func.jacfwd(f), x.long()), catch(T.func.jacfwd(f, argnums=3), x),
                   catch(T.func.jacfwd(f), 3.0), catch(T.func.hessian(f, argnums=(0, 0)), x),
                   catch(T.func.jacfwd(f, has_aux=True), x),
                   catch(T.func.jacrev(T.func.jacfwd(f)), x), T.func.jacrev(f)(x),
                   catch(T.func.jacfwd(f), fwAD.make_dual(x, x)), len(calls)]
        return out + [T.func.jacfwd(f)(x), T.func.hessian(f)(x)]
    same(scenario)


DETACH_INPLACE = {
    "view_of_leaf_requiring_grad": lambda T, a, b: a[:2].detach_(),
    "view_not_requiring_grad": lambda T, a, b: b[:2].detach_(),
    "view_made_in_no_grad": lambda T, a, b: _in(T.no_grad(), lambda: a[:2].detach_()),
    "view": lambda T, a, b: b.view(3).detach_(),
    "view_of_non_leaf": lambda T, a, b: (a * 2)[:1].detach_(),
    "unbind": lambda T, a, b: b.unbind()[0].detach_(),
    "diagonal": lambda T, a, b: T.ones(2, 2).diagonal().detach_(),
    "detached": lambda T, a, b: a.detach().detach_(),
    "real_of_real": lambda T, a, b: b.real.detach_(),
    "non_leaf": lambda T, a, b: (a * 2).detach_(),
    "inference_mode": lambda T, a, b: _in(T.inference_mode(), lambda: b[:2].detach_()),
    "dual_view": lambda T, a, b: _in(T.autograd.forward_ad.dual_level(),
                                     lambda: T.autograd.forward_ad.make_dual(b, b).detach_()),
}


def _in(mode, fn):
    with mode:
        return fn()


@pytest.mark.parametrize("name", sorted(DETACH_INPLACE))
def test_detach_in_place_refuses_every_view(name):
    def scenario(T):
        a = T.ones(3, requires_grad=True)
        b = T.ones(3)
        result = catch(DETACH_INPLACE[name], T, a, b)
        return [result if isinstance(result, tuple) else
                [result, result.requires_grad, result.grad_fn], a.requires_grad]
    same(scenario)


# ----------------------------------------------------------------------------- primals
def test_unpacked_primal_is_an_identity_view_without_the_tangent():
    def scenario(T):
        fwAD = T.autograd.forward_ad
        out = []
        with fwAD.dual_level():
            x = T.ones(2, requires_grad=True)
            d = fwAD.make_dual(x, T.ones(2))
            y = d * 2
            for t in (x, d, y):
                p = fwAD.unpack_dual(t).primal
                out += [repr(p), p._is_view(), p._base is (t if t is y else x),
                        p.grad_fn.name(), type(p.grad_fn).__name__,
                        type(p.grad_fn.next_functions[0][0]).__name__,
                        fwAD.unpack_dual(p).tangent, repr(p[0]), fwAD.unpack_dual(p.t()).tangent]
            p = fwAD.unpack_dual(y).primal
            p.sum().backward()
            out.append(x.grad)
            # a view of a primal written with a dual: the primal (not the dual) gets the tangent
            e = T.ones(3, 4)
            pe = fwAD.unpack_dual(e[:, 1:]).primal
            v, w = pe[:2, 1:], pe.t()
            v.add_(fwAD.make_dual(T.ones(2, 2), T.arange(4.).view(2, 2)))
            out += [repr(v), repr(pe), repr(e), repr(w), repr(pe[1])]
            s = T.ones(6)
            ps = fwAD.unpack_dual(s[::2]).primal
            ps[1:].mul_(fwAD.make_dual(T.ones(2), T.ones(2)))
            out += [repr(ps), fwAD.unpack_dual(ps).tangent.stride(), repr(s)]
        with T.no_grad(), fwAD.dual_level():
            p = fwAD.unpack_dual(x).primal
            out += [repr(p), p._is_view(), p.requires_grad]
        return out
    same(scenario)


def test_printed_grad_fn_drops_the_cpp_namespace():
    def scenario(T):
        x = T.ones(2, requires_grad=True)
        y = T.zeros(2).copy_(x)
        return [repr(y), y.grad_fn.name()]
    same(scenario)


# ----------------------------------------------------------------------------- gradcheck
class _Functions:
    """Custom Functions for gradcheck, built on either module."""

    def __init__(self, T):
        class WrongJvp(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.sin()

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * x.cos()

            @staticmethod
            def jvp(ctx, t):
                return t * 2

        class BothWrong(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 3

            @staticmethod
            def backward(ctx, g):
                return g * 2

            @staticmethod
            def jvp(ctx, t):
                return t * 5

        class NoJvp(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 3

            @staticmethod
            def backward(ctx, g):
                return g * 3

        class NotMulByGrad(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return T.ones_like(g) * 2

            @staticmethod
            def jvp(ctx, t):
                return t * 3

        class WrongSecond(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 2

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * 2 * x.detach()       # (its derivative in x is lost)

        self.__dict__.update(locals())


GRADCHECKS = {
    "sin": lambda T, F, x, y, z: T.autograd.gradcheck(T.sin, (x,), **F),
    "two_in_two_out": lambda T, F, x, y, z: T.autograd.gradcheck(
        lambda a, b: (a.sum() * b, a.exp()), (x, y), **F),
    "wrong_jvp": lambda T, F, x, y, z: T.autograd.gradcheck(_Functions(T).WrongJvp.apply, (x,),
                                                            **F),
    "wrong_jvp_forward_only": lambda T, F, x, y, z: T.autograd.gradcheck(
        _Functions(T).WrongJvp.apply, (x,), check_backward_ad=False, **F),
    # (slow mode: fast mode's backward v^T J u differs from torch's in the last digit)
    "both_wrong": lambda T, F, x, y, z: T.autograd.gradcheck(_Functions(T).BothWrong.apply,
                                                             (x,), **{**F, "fast_mode": False}),
    "both_wrong_forward_only": lambda T, F, x, y, z: T.autograd.gradcheck(
        _Functions(T).BothWrong.apply, (x,), check_backward_ad=False, **F),
    "no_jvp": lambda T, F, x, y, z: T.autograd.gradcheck(_Functions(T).NoJvp.apply, (x,), **F),
    "no_raise": lambda T, F, x, y, z: T.autograd.gradcheck(
        _Functions(T).WrongJvp.apply, (x,), raise_exception=False, **F),
    "not_mul_by_grad": lambda T, F, x, y, z: T.autograd.gradcheck(
        _Functions(T).NotMulByGrad.apply, (x,), **F),
    "constant_input": lambda T, F, x, y, z: T.autograd.gradcheck(
        lambda a, b: _Functions(T).WrongJvp.apply(a) * b, (x, x.detach() + 1),
        check_backward_ad=False, **F),
    "number_input": lambda T, F, x, y, z: T.autograd.gradcheck(
        lambda a, k: _Functions(T).BothWrong.apply(a) * k, (x, 3), check_backward_ad=False,
        **F),
    "no_differentiable_output": lambda T, F, x, y, z: T.autograd.gradcheck(
        lambda a: a.detach() * 2, (x,), check_backward_ad=False, **F),
    "complex_input": lambda T, F, x, y, z: T.autograd.gradcheck(lambda a: a * a.conj(), (z,),
                                                                **F),
    "complex_and_real_inputs": lambda T, F, x, y, z: T.autograd.gradcheck(
        lambda a, b: a * b, (z, x[:2].detach().requires_grad_()), **F),
    "complex_wrong_jvp": lambda T, F, x, y, z: T.autograd.gradcheck(
        _Functions(T).BothWrong.apply, (z,), check_backward_ad=False, **F),
    "complex_real_part": lambda T, F, x, y, z: T.autograd.gradcheck(
        lambda a: _Functions(T).BothWrong.apply(a.real), (z,), check_backward_ad=False, **F),
    "complex_imag_part": lambda T, F, x, y, z: T.autograd.gradcheck(
        lambda a: _Functions(T).BothWrong.apply(a.imag), (z,), check_backward_ad=False, **F),
    "complex_output": lambda T, F, x, y, z: T.autograd.gradcheck(
        lambda a: _Functions(T).BothWrong.apply(a * (1 + 1j)), (x,), check_backward_ad=False,
        **F),
    "inv": lambda T, F, x, y, z: T.autograd.gradcheck(T.linalg.inv, (y + 2 * T.eye(2),), **F),
    "max_dim": lambda T, F, x, y, z: T.autograd.gradcheck(lambda a: a.max(0), (y,), **F),
    "gradgradcheck": lambda T, F, x, y, z: T.autograd.gradgradcheck(
        T.sin, (x,), (x.detach().cos().requires_grad_(),), check_fwd_over_rev=True,
        fast_mode=F["fast_mode"]),
    "gradgradcheck_pow": lambda T, F, x, y, z: T.autograd.gradgradcheck(
        lambda a: (a.pow(3) * a).sum(), (x,), check_fwd_over_rev=True,
        fast_mode=F["fast_mode"]),
    "gradgradcheck_wrong_second": lambda T, F, x, y, z: T.autograd.gradgradcheck(
        _Functions(T).WrongSecond.apply, (x,), (x.detach().cos().requires_grad_(),),
        check_fwd_over_rev=True, check_rev_over_rev=False, check_undefined_grad=False,
        fast_mode=F["fast_mode"]),
}


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck_check_forward_ad(name, fast_mode):
    def scenario(T):
        x = T.tensor([0.5, 1.0, -0.3], dtype=T.float64, requires_grad=True)
        y = T.tensor([[0.2, 0.4], [0.1, -0.7]], dtype=T.float64, requires_grad=True)
        z = T.tensor([0.5 + 1j, -0.2 + 0.3j], dtype=T.complex128, requires_grad=True)
        flags = {"check_forward_ad": True, "fast_mode": fast_mode}
        return catch(GRADCHECKS[name], T, flags, x, y, z)
    same(scenario)


@pytest.mark.parametrize("fn", ["exp", "tanh", "sigmoid", "sqrt", "softmax"])
def test_forward_over_reverse_through_ops_that_save_their_output(fn):
    # the derivative reads the saved output: rebuilt for backward, it keeps its tangent
    def scenario(T):
        fwAD = T.autograd.forward_ad
        x = T.tensor([.5, 1., .3], dtype=T.float64)
        f = (lambda d: d.softmax(0)) if fn == "softmax" else (lambda d: getattr(d, fn)())
        with fwAD.dual_level():
            d = fwAD.make_dual(x.clone(), T.tensor([1., -2., .5], dtype=T.float64))
            d.requires_grad_()
            g, = T.autograd.grad((f(d) * T.tensor([1., 2., 3.], dtype=T.float64)).sum(), d,
                                 create_graph=True)
            return fwAD.unpack_dual(g).primal.detach(), fwAD.unpack_dual(g).tangent.detach()
    same(scenario)
