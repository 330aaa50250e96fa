"""ember.func (torch.func's transforms): each scenario run under torch and ember and compared."""
import numpy as np
import pytest

from differential import same, catch


def arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def flags(t):
    """What a caller sees of a result: its value, whether it requires grad, has a grad_fn."""
    return t, t.requires_grad, t.grad_fn is not None


def mlp(T):
    """A small module with parameters given as fixed tensors (torch and ember initialise
    differently): (module, params dict)."""
    model = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 2))
    params = {"0.weight": T.tensor(arr(4, 3, seed=1)), "0.bias": T.tensor(arr(4, seed=2)),
              "2.weight": T.tensor(arr(2, 4, seed=3)), "2.bias": T.tensor(arr(2, seed=4))}
    return model, params


# scalar functions of one (3, 4) tensor: elementwise, matmul, reductions
SCALAR_FUNCTIONS = {
    "elementwise": lambda T, x: (x.sin() * x + x.exp() / 3).sum(),
    "matmul": lambda T, x: ((x @ x.t()) ** 2).mean(),
    "reductions": lambda T, x: x.logsumexp(1).sum() + x.norm() + x.max(),
    "softmax": lambda T, x: (T.softmax(x, 1) * T.arange(4.)).sum(),
}


# ----------------------------------------------------------------------------- functional_call
def test_functional_call_substitutes_and_restores():
    def scenario(T):
        model, params = mlp(T)
        x = T.tensor(arr(5, 3))
        before = [p.clone() for p in model.parameters()]
        out = [T.func.functional_call(model, params, (x,)),
               T.func.functional_call(model, params, x),                  # (a lone argument)
               T.func.functional_call(model, ({"0.weight": params["0.weight"]},
                                              {k: v for k, v in params.items()
                                               if k != "0.weight"}), (x,))]
        restored = [bool((p == b).all()) and type(p).__name__ for p, b in
                    zip(model.parameters(), before)]
        return out, restored, [n for n, _ in model.named_parameters()]
    same(scenario)


def test_functional_call_kwargs_and_plain_attributes():
    def scenario(T):
        class Scaled(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = T.nn.Parameter(T.ones(2))
                self.register_buffer("b", T.zeros(2))

            def forward(self, x, scale=1.0):
                seen = [type(self.w).__name__, [n for n, _ in self.named_parameters()],
                        getattr(self, "extra", None)]
                return x * self.w * scale + self.b, seen
        m = Scaled()
        call = T.func.functional_call
        out = [call(m, {"w": T.full((2,), 3.0), "b": T.ones(2)}, (T.ones(2),), {"scale": 2.0}),
               call(m, {"w": T.full((2,), 3.0)}, args=(), kwargs={"x": T.ones(2)}),
               call(m, {"extra": T.ones(1)}, T.ones(2))]        # (an attribute, set then gone)
        return out, hasattr(m, "extra"), m.w, m.b
    same(scenario)


def test_functional_call_buffers_are_updated_in_the_given_tensors():
    def scenario(T):
        bn = T.nn.BatchNorm1d(2)
        given = {"running_mean": T.zeros(2), "running_var": T.ones(2),
                 "num_batches_tracked": T.tensor(0)}
        out = T.func.functional_call(bn, given, (T.tensor(arr(4, 2)),))
        return out, given, bn.running_mean, bn.num_batches_tracked
    same(scenario)


def test_functional_call_gradient_reaches_given_tensors_only():
    def scenario(T):
        model, params = mlp(T)
        params = {k: v.requires_grad_() for k, v in params.items()}
        T.func.functional_call(model, params, (T.tensor(arr(5, 3)),)).pow(2).sum().backward()
        return [p.grad for p in params.values()], [p.grad for p in model.parameters()]
    same(scenario)


def test_functional_call_restores_after_an_exception():
    def scenario(T):
        class Fails(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = T.nn.Linear(2, 2)

            def forward(self, x):
                raise ValueError("boom")
        m = Fails()
        weight = m.lin.weight
        err = catch(T.func.functional_call, m, {"lin.weight": T.eye(2), "lin.foo": T.ones(1)},
                    (T.ones(1, 2),))
        return err, m.lin.weight is weight, hasattr(m.lin, "foo")
    same(scenario)


def test_functional_call_tied_weights():
    def scenario(T):
        class Tied(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = T.nn.Linear(2, 2, bias=False)
                self.c = T.nn.Linear(2, 2, bias=False)
                self.c.weight = self.a.weight

            def forward(self, x):
                return self.a(x) + 10 * self.c(x)
        m = Tied()
        call, x, e = T.func.functional_call, T.ones(1, 2), T.eye(2)
        return [call(m, {"a.weight": e}, x), call(m, {"c.weight": e}, x),
                call(m, {"a.weight": e, "c.weight": e}, x),
                call(m, {"a.weight": e}, x, tie_weights=False).shape,
                call(m, {"a.weight": e, "c.weight": 2 * e}, x, tie_weights=False),
                catch(call, m, {"a.weight": e, "c.weight": 2 * e}, x),
                call(m, {"c.weight": e}, x, strict=True),
                catch(call, m, {"c.weight": e}, x, strict=True, tie_weights=False),
                catch(call, m, {}, x, strict=True)]
    same(scenario)


def test_functional_call_errors():
    def scenario(T):
        model, params = mlp(T)
        call, x = T.func.functional_call, T.ones(1, 3)
        w = {"0.weight": params["0.weight"]}
        return [catch(call, model, w, (x,), strict=True),
                catch(call, model, {**params, "zzz": T.ones(1)}, (x,), strict=True),
                catch(call, model, {"0.weight": 3, "q": 1}, (x,), strict=True),
                catch(call, model, {**w, "q": 1}, (x,)),
                catch(call, model, (w, w), (x,)),
                catch(call, model, [w, 3], (x,)),
                catch(call, model, 3, (x,)),
                catch(call, model, {"9.weight": T.ones(1)}, (x,)),
                call(model, {**params, "zzz": T.ones(1)}, (x,)),    # (not strict: set, unused)
                hasattr(model, "zzz")]
    same(scenario)


# ----------------------------------------------------------------------------- grad
@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
def test_grad_and_second_derivative(name):
    def scenario(T):
        f = SCALAR_FUNCTIONS[name]
        x = T.tensor(arr(3, 4))
        g = T.func.grad(lambda x: f(T, x))
        # grad(grad(.)) needs a scalar: the sum of the gradient's entries
        gg = T.func.grad(lambda x: g(x).sum())
        gv = T.func.grad_and_value(lambda x: f(T, x))(x)
        return flags(g(x)), flags(gg(x)), gv, x.requires_grad, x.grad
    same(scenario, rtol=1e-4, atol=1e-5)


def test_grad_of_module_parameters():
    def scenario(T):
        model, params = mlp(T)
        x, y = T.tensor(arr(5, 3)), T.tensor(arr(5, 2, seed=9))

        def loss(p, x, y):
            return T.nn.functional.mse_loss(T.func.functional_call(model, p, (x,)), y)
        grads = T.func.grad(loss)(params, x, y)
        return grads, [p.grad for p in model.parameters()], [p.requires_grad for p in
                                                              params.values()]
    same(scenario, rtol=1e-4, atol=1e-6)


def test_grad_argnums_and_pytrees():
    def scenario(T):
        x, y = T.tensor(arr(3)), T.tensor(arr(3, seed=1))

        def f(a, b):
            return (a * b.sin()).sum()

        def tree(d):
            return (d["u"] * d["v"][0] + d["v"][1]).sum()
        g = T.func.grad
        return [g(f)(x, y), g(f, argnums=1)(x, y), g(f, argnums=(0, 1))(x, y),
                g(f, argnums=(1, 0))(x, y), g(f, argnums=-1)(x, y),
                g(lambda a, s: (a * s).sum())(x, 3.0),
                g(tree)({"u": x, "v": [y, x * 2]}),
                g(lambda p: (p[0] * p[1]).sum())((x, y)),
                g(lambda a: x.sum())(y)]                   # (independent of a: zeros)
    same(scenario)


def test_grad_has_aux():
    def scenario(T):
        x = T.tensor(arr(3))
        xr = x.clone().requires_grad_()
        f = lambda a: ((a ** 2).sum(), {"double": a * 2, "list": [a.sum()]})   # noqa: E731
        g, aux = T.func.grad(f, has_aux=True)(x)
        g2, (value, aux2) = T.func.grad_and_value(f, has_aux=True)(xr)
        return g, aux, flags(g2), flags(value), flags(aux2["double"])
    same(scenario)


def test_grad_results_carry_a_graph_only_to_outside_tensors():
    def scenario(T):
        x = T.tensor(arr(3))
        xr = x.clone().requires_grad_()
        w = T.tensor(arr(3, seed=1), requires_grad=True)
        g = T.func.grad
        cube = lambda a: (a ** 3).sum()      # noqa: E731
        out = [flags(g(cube)(x)), flags(g(cube)(xr)),
               flags(g(lambda a: (a * w).sum())(x)),
               flags(g(lambda a: (a * a * w).sum())(x))]
        with T.no_grad():
            out.append(flags(g(cube)(xr)))
        # backward through grad(f)(xr) reaches xr as the second derivative
        g(cube)(xr).sum().backward()
        out += [xr.grad, xr.requires_grad, x.requires_grad, w.grad]
        return out
    same(scenario)


def test_grad_nested_with_argnums():
    def scenario(T):
        x, y = T.tensor(1.3), T.tensor(-0.4)
        f = lambda a, b: a.sin() * b ** 3 + a * a * b       # noqa: E731
        d_ab = T.func.grad(T.func.grad(f, argnums=0), argnums=1)(x, y)
        d_aa = T.func.grad(T.func.grad(f))(x, y)
        d_aaa = T.func.grad(T.func.grad(T.func.grad(f)))(x, y)
        return flags(d_ab), flags(d_aa), flags(d_aaa)
    same(scenario)


def test_grad_errors():
    def scenario(T):
        g, x = T.func.grad, T.tensor(arr(3))
        f = lambda a: (a * 2).sum()     # noqa: E731
        return [catch(g(lambda a: a * 2), x), catch(g(lambda a: 3), x),
                catch(g(lambda a: (a, a)), x), catch(g(f, argnums=1), x),
                catch(g(f, argnums=-2), x), catch(g(f, argnums=(0, 0)), x),
                catch(g(f, argnums=()), x), catch(g(f, argnums=1.0), x),
                catch(g(f, argnums=(0, "a")), x), catch(g(f)),
                catch(g(f, has_aux=True), x), catch(g(lambda a: (a.sum(),), has_aux=True), x),
                catch(g(lambda a: [a.sum(), a], has_aux=True), x),
                catch(g(lambda a: (a.sum(), 3), has_aux=True), x),
                catch(g(f), 3), catch(g(f), (x, 3)), catch(g(f), T.tensor([1, 2])),
                catch(g(f), x.to(T.complex64))]
    same(scenario)


# ----------------------------------------------------------------------------- vjp, jvp
def test_vjp():
    def scenario(T):
        x, y = T.tensor(arr(3)), T.tensor(arr(3, seed=1))
        out, fn = T.func.vjp(lambda a: a.sin() * a, x)
        out2, fn2 = T.func.vjp(lambda a, b: (a @ b, {"s": a * b}), x, y)
        out3, fn3, aux = T.func.vjp(lambda a: (a.exp(), a.cos()), x, has_aux=True)
        xr = x.clone().requires_grad_()
        out4, fn4 = T.func.vjp(lambda a: a * a, xr)
        m = T.tensor(arr(2, 3, seed=2))
        out5, fn5 = T.func.vjp(lambda d: d["m"] @ d["v"], {"m": m, "v": x})
        return [flags(out), fn(T.ones(3)), fn(y),        # (fn may be called again)
                out2, fn2((T.tensor(2.0), {"s": y})), out3, aux, fn3(y),
                flags(out4), flags(fn4(T.ones(3))[0]), out5, fn5(T.ones(2))]
    same(scenario)


def test_vjp_errors():
    def scenario(T):
        x = T.tensor(arr(3))
        vjp = T.func.vjp
        return [catch(vjp(lambda a: a * 2, x)[1], T.ones(2)),
                catch(vjp(lambda a: a * 2, x)[1], (T.ones(3),)),
                catch(vjp(lambda a: (a * 2, a), x)[1], T.ones(3)),
                catch(vjp(lambda a: {"a": a, "b": [a]}, x)[1], [T.ones(3)]),
                catch(vjp, lambda a: a * 2, x, has_aux=True),
                catch(vjp, lambda a: 3, x), catch(vjp, lambda a: a, 3)]
    same(scenario)


def test_jvp_and_linearize():
    def scenario(T):
        x, y = T.tensor(arr(3)), T.tensor(arr(3, seed=1))
        m = T.tensor(arr(2, 3, seed=2))
        jvp = T.func.jvp
        out, fn = T.func.linearize(lambda a: a.sin() * a, x)
        return [jvp(lambda a: a.sin() * a, (x,), (T.ones(3),)),
                jvp(lambda a, b: a * b, (x, y), (T.ones(3), y)),
                jvp(lambda a: m @ a.tanh(), (x,), (y,)),
                jvp(lambda a: (a * 2, a.cos()), (x,), (y,), has_aux=True),
                jvp(lambda a: {"p": a * 2, "q": [a.sum()]}, (x,), (y,)),
                jvp(lambda d: (d["k"] ** 2).sum(), ({"k": x},), ({"k": y},)),
                jvp(lambda a: T.ones(2), (x,), (y,)),          # (independent of a: zeros)
                out, fn(y), fn(T.ones(3))]
    same(scenario)


def test_jvp_errors():
    def scenario(T):
        x = T.tensor(arr(3))
        jvp, f = T.func.jvp, (lambda a: a.sin())
        return [catch(jvp, f, x, (T.ones(3),)), catch(jvp, f, (x,), T.ones(3)),
                catch(jvp, f, (x,), (T.ones(2),)), catch(jvp, f, (x,), (x, x)),
                catch(jvp, lambda a: 3, (x,), (x,)), catch(jvp, f, (3,), (3,)),
                catch(jvp, f, (), ()), catch(jvp, f, (x,), (x,), has_aux=True),
                catch(jvp, lambda a: (a, 1), (x,), (x,), has_aux=True),
                catch(jvp, lambda d: d["k"], ({"k": x},), ({"j": x},)),
                catch(T.func.linearize(f, x)[1], T.ones(2))]
    same(scenario)


# ----------------------------------------------------------------- jacrev, jacfwd, hessian
@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians(transform):
    def scenario(T):
        jac = getattr(T.func, transform)
        x, y = T.tensor(arr(3)), T.tensor(arr(3, seed=1))
        m, v = T.tensor(arr(2, 3, seed=2)), T.tensor(arr(3, seed=3))
        xr = x.clone().requires_grad_()
        return [jac(lambda a: a.sin() * a)(x), jac(lambda a, b: a @ b, argnums=(0, 1))(m, v),
                jac(lambda a, b: a @ b, argnums=1)(m, v),
                jac(lambda a: T.softmax(a, 0))(x), jac(lambda a: a.sum())(T.tensor(2.0)),
                jac(lambda a: {"u": a * 2, "v": a.sum()})(x),
                jac(lambda a: (a * 2, a.sum()), has_aux=True)(x),
                jac(lambda d: d["a"] * d["b"].sum())({"a": x, "b": y}),
                jac(lambda a: a.double())(x), jac(lambda a: a * 2)(T.ones(0)),
                jac(lambda a: a.reshape(3, 1) @ a.reshape(1, 3))(x),
                flags(jac(lambda a: a * a)(x)), flags(jac(lambda a: a * a)(xr))]
    same(scenario, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobian_errors(transform):
    def scenario(T):
        jac, x = getattr(T.func, transform), T.tensor(arr(3))
        return [catch(jac(lambda a: 3), x), catch(jac(lambda a: a, argnums=2), x),
                catch(jac(lambda a: a, has_aux=True), x), catch(jac(lambda a: a), 3),
                catch(jac(lambda a: a), T.tensor([1, 2]))]
    same(scenario)


def test_jacrev_chunk_size():
    same(lambda T: [T.func.jacrev(lambda a: a * 2, chunk_size=1)(T.ones(3)),
                    catch(T.func.jacrev, lambda a: a, chunk_size=0)])


@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
def test_hessian(name):
    def scenario(T):
        f = SCALAR_FUNCTIONS[name]
        x = T.tensor(arr(3, 4))
        return flags(T.func.hessian(lambda x: f(T, x))(x))
    same(scenario, rtol=1e-4, atol=1e-5)


def test_hessian_argnums():
    def scenario(T):
        x, y = T.tensor(arr(3)), T.tensor(arr(3, seed=1))
        return T.func.hessian(lambda a, b: (a * a * b.exp()).sum(), argnums=(0, 1))(x, y)
    same(scenario)


# ----------------------------------------------------------------------------- vmap
def test_vmap_in_dims_out_dims_and_pytrees():
    def scenario(T):
        vmap = T.func.vmap
        x, y = T.tensor(arr(2, 3)), T.tensor(arr(3, 2, seed=1))
        return [vmap(lambda a: a.sum())(x), vmap(lambda a, b: a * b, in_dims=(0, 1))(x, y),
                vmap(lambda a, b: a * b, in_dims=(1, None))(x, T.ones(2)),
                vmap(lambda a: (a * 2, a.sum()), out_dims=(1, 0))(x),
                vmap(lambda a: {"s": a.sum(), "l": [a]})(x),
                vmap(lambda d: d["u"] + d["v"], in_dims=({"u": 0, "v": 1},))({"u": x, "v": y}),
                vmap(lambda l: l[0] + l[1])([x, x]), vmap(lambda a: a.sum(), in_dims=-1)(x),
                vmap(lambda a: a, out_dims=-1)(x), vmap(lambda a: a, out_dims=(0,))(x),
                vmap(lambda a: a, in_dims=0, out_dims=1)(T.ones(2, 3, 4)).shape,
                vmap(lambda a, s: a * s, in_dims=(0, None))(x, 2.0),
                vmap(lambda a, s=1.0: a * s)(x, s=3.0),
                vmap(lambda a: a.argmax())(x), vmap(lambda a: a.to(T.int64))(x),
                vmap(lambda a: x)(x), vmap(lambda a: T.tensor(1.0))(x),
                vmap(lambda a: (a, x), out_dims=(0, None))(x),
                vmap(lambda a: (a, 2), out_dims=(0, None))(x),
                vmap(T.dot)(x, x), vmap(lambda a: a, chunk_size=1)(x),
                vmap(lambda a: a * 2)(T.ones(0, 3)),
                flags(vmap(lambda a: a * 2)(x.clone().requires_grad_()))]
    same(scenario)


def test_vmap_nested_and_per_sample_gradients():
    def scenario(T):
        vmap, grad = T.func.vmap, T.func.grad
        model, params = mlp(T)
        x, y = T.tensor(arr(5, 3)), T.tensor(arr(5, 2, seed=9))

        def loss(p, xi, yi):
            out = T.func.functional_call(model, p, (xi.unsqueeze(0),))
            return T.nn.functional.mse_loss(out, yi.unsqueeze(0))
        per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
        m = T.tensor(arr(2, 3, 4))
        return [per_sample, vmap(vmap(lambda a: a.sin() * 2))(m),
                vmap(vmap(lambda a, b: a @ b, in_dims=(0, None)), in_dims=(None, 0))(
                    m[0], T.tensor(arr(5, 4, seed=3))),
                vmap(T.func.jacrev(lambda a: a.sin()))(m[0]),
                vmap(grad(lambda w, a: (w * a).sum()), in_dims=(None, 0))(T.ones(4), m[1])]
    same(scenario, rtol=1e-4, atol=1e-6)


def test_vmap_randomness():
    def scenario(T):
        vmap, x = T.func.vmap, T.ones(4, 3)
        same_rows = vmap(lambda a: a + T.rand(3), randomness="same")(x)
        different = vmap(lambda a: a + T.rand(3), randomness="different")(x)
        return [catch(vmap(lambda a: a + T.rand(3)), x),
                catch(vmap(lambda a: T.nn.functional.dropout(a, 0.5)), x),
                same_rows.shape, bool((same_rows == same_rows[0]).all()),
                different.shape, bool((different == different[0]).all()),
                catch(vmap, lambda a: a, randomness="bad")]
    same(scenario)


def test_vmap_errors():
    def scenario(T):
        vmap, x, y = T.func.vmap, T.tensor(arr(2, 3)), T.ones(3, 2)

        def a_(a):
            return a
        return [catch(vmap(lambda a, b: a * b), x, y), catch(vmap(a_, in_dims=2), x),
                catch(vmap(a_, in_dims=-3), x), catch(vmap(a_, in_dims=None), x),
                catch(vmap(a_, in_dims=(None,)), x), catch(vmap(lambda a: 3), x),
                catch(vmap(lambda a: (a, None)), x), catch(vmap(a_, out_dims=2), x),
                catch(vmap(a_, in_dims=(0, 0)), x),
                catch(vmap(lambda a, b: a, in_dims=(0, 0)), x, 3),
                catch(vmap(a_, in_dims="a"), x), catch(vmap(a_, in_dims=[0]), x),
                catch(vmap(a_, in_dims=(0.5,)), x), catch(vmap(a_, in_dims=((0,),)), x),
                catch(vmap(a_, in_dims=({"a": 0},)), {"a": x, "b": x}),
                catch(vmap(a_), T.tensor(1.0)), catch(vmap(a_)),
                catch(vmap(a_, out_dims=(0, 0)), x),
                catch(vmap(lambda a: (a, a), out_dims=(0, 0, 0)), x),
                catch(vmap(lambda a: [a, a], out_dims=(0, 1)), x),
                catch(vmap(a_, out_dims=[1]), x), catch(vmap(a_, out_dims="x"), x),
                catch(vmap, a_, chunk_size=0), catch(vmap(a_, out_dims=None), x)]
    same(scenario)


def test_vmap_is_exported_at_top_level():
    same(lambda T: [T.vmap is T.func.vmap, T.func.vmap.__name__,
                    T.vmap(lambda a: a * 2)(T.ones(2, 2))])


# ----------------------------------------------------------------------------- composition
def test_compositions_and_result_flags():
    def scenario(T):
        F = T.func
        x, y = T.tensor(arr(3)), T.tensor(arr(3, seed=1))
        xr = x.clone().requires_grad_()
        w = T.tensor(arr(3, seed=5), requires_grad=True)
        batch = T.tensor(arr(2, 3, seed=2))
        f = lambda a: (a.sin() * a.exp()).sum()       # noqa: E731
        out = [F.jacrev(F.grad(f))(x), F.jacfwd(F.jacrev(f))(x),
               F.grad(lambda a: F.vjp(lambda b: b.sin() * b, a)[1](y)[0].sum())(x),
               F.grad(lambda a: F.jvp(lambda b: b.sin() * b, (a,), (y,))[1].sum())(x),
               F.grad(lambda a: F.vmap(lambda b: (b * a).sin())(batch).sum())(x),
               F.vmap(F.hessian(f))(batch), F.vmap(F.jacrev(lambda a: a.sin()))(batch),
               # the inner grad closes over the outer variable
               F.grad(lambda a: F.grad(lambda b: (a * b).sum() * a.sum())(a).sum())(x),
               F.grad(lambda a: F.grad(lambda b: (b ** 3).sum())(a.clone()).sum())(x),
               F.hessian(f)(xr), F.vmap(F.grad(f))(T.stack([xr, xr * 2])),
               F.grad_and_value(lambda a: (a.sum(), a), has_aux=True)(x)[1][1],
               F.grad_and_value(lambda a: (a.sum(), a), has_aux=True)(xr)[1][1],
               F.vjp(lambda a: a * w, x)[0], F.jvp(lambda a: a * w, (x,), (y,))[1],
               F.jacrev(lambda a: a * w)(x), F.jacrev(lambda a: a * a)(x)]
        with T.no_grad():
            out += [F.grad(lambda a: (a * a * w).sum())(x), F.vjp(lambda a: a * w, x)[1](y)[0],
                    F.jacrev(lambda a: a * w)(xr)]
        r = F.grad(lambda a: (a * a * w).sum())(x)
        r.sum().backward()
        return [flags(t) for t in out], flags(r), w.grad, x.requires_grad, x.grad, xr.grad
    same(scenario, rtol=1e-4, atol=1e-5)
