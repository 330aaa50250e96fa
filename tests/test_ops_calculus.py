"""torch.gradient (and the other calculus ops) against torch: values, dtypes, graph and errors.
"""
from differential import same, catch, warnings_of
import pytest
from differential import grad_fn_name as _node


# ----------------------------------------------------------------------------- gradient
def test_gradient_values_dtypes_and_graph():
    def f(T):
        t = T.tensor([1., 4, 9, 16, 25], requires_grad=True)
        coords = T.tensor([0., 1, 1.5, 3.5, 4])
        x = T.arange(12.).reshape(3, 4) ** 2
        outs = [T.gradient(t), T.gradient(T.tensor([1, 4, 9, 16, 25])), T.gradient(t, spacing=2.),
                T.gradient(t, spacing=(coords,)), T.gradient(t, edge_order=2),
                T.gradient(t, spacing=(coords,), edge_order=2), T.gradient(x),
                T.gradient(x, dim=1), T.gradient(x, dim=(1, 0), spacing=[1., 2.]),
                T.gradient(x, spacing=T.tensor(2.)), T.gradient(x, dim=-1, edge_order=2),
                T.gradient(T.tensor([1, 2, 4], dtype=T.int32), spacing=2),
                T.gradient(T.tensor([1, 2, 4]), spacing=(T.tensor([0, 1, 3]),)),
                T.gradient(x.half(), spacing=[2, 3]), T.gradient(x.to(T.complex64), dim=1),
                T.gradient(T.tensor(3.))]
        g = T.gradient(t, spacing=(coords,), edge_order=2)[0]
        (g * T.arange(5.)).sum().backward()
        return outs, t.grad, _node(g), _node(T.gradient(t)[0])
    same(f)


def test_gradient_errors():
    def f(T):
        t = T.arange(6.).reshape(2, 3)
        return [catch(T.gradient, T.tensor([1.])), catch(T.gradient, t, edge_order=3),
                catch(T.gradient, t, dim=0, edge_order=2),
                catch(T.gradient, t, spacing=[1., 2., 3.]),
                catch(T.gradient, t, dim=1, spacing=[1., 2.]),
                catch(T.gradient, t, spacing=(T.ones(1, 2), T.arange(3.))),
                catch(T.gradient, t, dim=2), catch(T.gradient, t, dim=(0, 0)),
                catch(T.gradient, T.tensor([True, False]))]
    same(f)


# ----------------------------------------------------------------------------- integration
@pytest.mark.parametrize("kind", ["default", "dx", "x1d", "xfull"])
def test_trapezoid(kind):
    def f(T):
        out = []
        for fn in (T.trapezoid, T.trapz, T.cumulative_trapezoid):
            y = T.tensor([[1.0, 2.0, 4.0, 7.0], [0.5, -1.0, 2.0, 3.0]], requires_grad=True)
            xs = T.tensor([0.0, 1.0, 3.0, 3.5], requires_grad=True)
            if kind == "default":
                r = fn(y)
            elif kind == "dx":
                r = fn(y, dx=0.5, dim=1) if fn is not T.trapz else fn(y, dx=0.5)
            elif kind == "x1d":
                r = fn(y, xs)
            else:
                r = fn(y, xs.expand(2, 4) * 1, dim=-1)
            r.sum().backward()
            out += [r, y.grad, xs.grad, _node(r)]
        out.append(T.trapezoid(T.tensor([1, 2, 3])))
        out.append(T.cumulative_trapezoid(T.tensor([1, 2, 3])))
        out.append(T.trapezoid(T.ones(2, 3), dim=0))
        return out
    same(f)
