"""In-place comparisons (`x.eq_(y)`, `lt_`, ...) inside a graph: PyTorch records them as nodes
with zero gradients (EqBackward0 for a number, EqBackward1 for a tensor), so nothing flows
back through the overwritten values."""
import pytest

from differential import same, catch

NAMES = ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "less_", "less_equal_", "greater_",
         "greater_equal_", "not_equal_"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("other", ["number", "tensor", "broadcast", "int tensor"])
def test_in_graph_records_a_zero_gradient_node(name, other):
    def scenario(T):
        x = T.tensor([[0.5, 1.0, 2.0], [1.0, -3.0, 1.0]], requires_grad=True)
        o = {"number": 1.0, "tensor": T.ones(2, 3, requires_grad=True),
             "broadcast": T.ones(3, requires_grad=True),
             "int tensor": T.tensor([1, 2, 1])}[other]
        a = x * 2
        result = getattr(a, name)(o)
        (a * x).sum().backward()
        return (result is a, a, a.grad_fn.name(), a._version, x.grad,
                getattr(o, "grad", None), [type(n).__name__ if n else None
                                           for n, _ in a.grad_fn.next_functions])
    same(scenario)


@pytest.mark.parametrize("name", ["eq_", "gt_"])
def test_only_other_requiring_grad_and_outside_graphs(name):
    def scenario(T):
        r = []
        o = T.tensor([1.0, 2.0], requires_grad=True)
        a = T.tensor([1.0, 3.0])
        getattr(a, name)(o)
        r += [a, a.requires_grad, a.grad_fn.name()]
        a.sum().backward()
        r.append(o.grad)
        with T.no_grad():
            b = T.tensor([1.0, 3.0], requires_grad=True) * 1
            getattr(b, name)(1.0)
        r += [b, b.grad_fn]
        c = T.tensor([1, 3])
        getattr(c, name)(1.5)
        r += [c, c.dtype]
        return r
    same(scenario)


def test_errors_leaf_view_and_shapes():
    def scenario(T):
        x = T.ones(3, requires_grad=True)
        r = [catch(lambda: x.eq_(1.0))]
        y = x * 1
        r.append(catch(lambda: y.lt_(T.ones(2, 3))))
        base = x * 1
        v = base[1:]
        v.ge_(1.5)
        base.sum().backward()
        r += [base, base.grad_fn.name(), v.grad_fn.name(), x.grad]
        return r
    same(scenario)


@pytest.mark.parametrize("form", ["function", "method", "inplace", "clamp"])
@pytest.mark.parametrize("bound", ["min", "max"])
def test_clamp_with_one_tensor_bound_is_its_own_node(form, bound):
    # clamp_min/clamp_max with a tensor: ClampMinBackward1/ClampMaxBackward1 (clamp(min=t) is
    # ClampBackward0); gradients go to the input where it is kept, to the bound elsewhere
    def scenario(T):
        x = T.tensor([[-1.0, 0.5, 2.0], [0.0, 3.0, -2.0]], requires_grad=True)
        b = T.tensor([0.0, 1.0, 1.0], requires_grad=True)
        if form == "function":
            y = getattr(T, f"clamp_{bound}")(x, b)
        elif form == "method":
            y = getattr(x, f"clamp_{bound}")(b)
        elif form == "inplace":
            y = x * 1
            getattr(y, f"clamp_{bound}_")(b)
        else:
            y = T.clamp(x, **{bound: b})
        (y * T.arange(6.0).view(2, 3)).sum().backward()
        return y, y.grad_fn.name(), x.grad, b.grad
    same(scenario)


def test_clamp_min_tensor_dtypes_out_and_second_derivative():
    def scenario(T):
        r = []
        x = T.tensor([-1.0, 0.5, 2.0], dtype=T.float64, requires_grad=True)
        b = T.tensor([0.0, 1.0, 1.0], dtype=T.float64, requires_grad=True)
        r.append(T.autograd.gradcheck(lambda x, b: T.clamp_min(x, b) ** 2, (x, b)))
        g, = T.autograd.grad((T.clamp_max(x, b) ** 2).sum(), x, create_graph=True)
        r += [g, g.grad_fn.name()]
        i = T.tensor([1, 5, -3])
        r += [T.clamp_min(i, T.tensor([0.5, 0.5, 0.5])), T.clamp_max(i, T.tensor([2, 2, 2]))]
        out = T.empty(3)
        r.append(T.clamp_min(T.tensor([1.0, 2.0, 3.0]), T.tensor(2.0), out=out) is out)
        r.append(catch(lambda: i.clamp_min_(T.tensor([0.5, 0.5, 0.5]))))
        r.append(catch(T.clamp_min, T.ones(3), T.ones(2)))
        return r
    same(scenario)


def test_conj_physical_in_place_node():
    def scenario(T):
        x = T.tensor([1 + 2j, -3j], requires_grad=True)
        y = x * 1
        y.conj_physical_()
        (y * T.tensor([1j, 2.0])).real.sum().backward()
        r = [y, y.grad_fn.name(), x.grad]
        z = T.tensor([1.0, 2.0], requires_grad=True) * 1
        r += [z.conj_physical_() is z, z.grad_fn.name()]
        return r
    same(scenario)


@pytest.mark.parametrize("view", ["select", "index", "slice", "step", "narrow", "diagonal",
                                  "unfold"])
def test_view_gradients_are_their_own_double_backward_nodes(view):
    # (in this file for want of a better home: node names of derivative graphs)
    def scenario(T):
        x = T.arange(20.0).view(4, 5).requires_grad_()
        f = {"select": lambda x: x.select(0, 1), "index": lambda x: x[1],
             "slice": lambda x: x[1:3], "step": lambda x: x[:, 1:4:2],
             "narrow": lambda x: x.narrow(0, 1, 2), "diagonal": lambda x: x.diagonal(),
             "unfold": lambda x: x.unfold(1, 2, 1)}[view]
        g, = T.autograd.grad((f(x) ** 3).sum(), x, create_graph=True)
        gg, = T.autograd.grad((g ** 2).sum(), x)
        return g, g.grad_fn.name(), gg
    same(scenario)
