"""torch.gradient (and the other calculus ops) against torch: values, dtypes, graph and errors.
"""
from differential import same, catch, warnings_of


def _node(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


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
