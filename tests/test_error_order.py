"""Which error PyTorch reports first: for elementwise ops whose kernel lacks the operands'
dtype, shapes that do not broadcast are reported before the dtype."""
import pytest

from differential import same, catch

CASES = {
    "remainder": lambda T, a, b: T.remainder(a, b), "fmod": lambda T, a, b: T.fmod(a, b),
    "lt": lambda T, a, b: T.lt(a, b), "ge": lambda T, a, b: a >= b,
    "atan2": lambda T, a, b: T.atan2(a, b), "copysign": lambda T, a, b: T.copysign(a, b),
    "xlogy": lambda T, a, b: T.xlogy(a, b), "floor_divide": lambda T, a, b: a // b,
    "div_trunc": lambda T, a, b: T.div(a, b, rounding_mode="trunc"),
    "logaddexp2": lambda T, a, b: T.logaddexp2(a, b), "hypot": lambda T, a, b: T.hypot(a, b),
    "nextafter": lambda T, a, b: T.nextafter(a, b), "gcd": lambda T, a, b: T.gcd(a, b),
    "lt_": lambda T, a, b: a.lt_(b), "remainder_": lambda T, a, b: a.remainder_(b),
    "modulo": lambda T, a, b: a % b, "igamma": lambda T, a, b: T.igamma(a, b),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", ["complex64", "float32", "bool", "int64"])
@pytest.mark.parametrize("shapes", [((2,), (3,)), ((3,), (3,)), ((2, 1), (3,))])
def test_shape_errors_come_before_dtype_errors(name, dtype, shapes):
    def scenario(T):
        a = T.ones(shapes[0], dtype=getattr(T, dtype))
        b = T.ones(shapes[1], dtype=getattr(T, dtype))
        return catch(CASES[name], T, a, b)
    same(scenario)


@pytest.mark.parametrize("case", range(8))
def test_matrix_norm_reports_an_unknown_order_first(case):
    def scenario(T):
        A, ord, dim = [(T.ones(3, 4).long(), "zz", (-2, -1)), (T.ones(3), "zz", (-2, -1)),
                       (T.ones(3, 4), "zz", (0, 0)), (T.ones(3, 4).half(), "zz", (-2, -1)),
                       (T.ones(3, 4), "zz", (0, 1, 2)), (T.ones(3, 4).long(), "fro", (-2, -1)),
                       (T.ones(3), "nuc", (-2, -1)), (T.ones(3, 4).long(), 3, (-2, -1))][case]
        return catch(T.linalg.matrix_norm, A, ord, dim), catch(T.norm, A, ord)
    same(scenario)


@pytest.mark.parametrize("case", range(12))
def test_integer_alpha_and_addcdiv_checks_in_place_too(case):
    def scenario(T):
        i, j = T.tensor([1, 5]), T.tensor([2, 2])
        call = [lambda: i.clone().add_(j, alpha=0.5), lambda: i.clone().sub_(j, alpha=1.5),
                lambda: i.clone().addcdiv_(i, j), lambda: T.ones(2).addcdiv_(i, j),
                lambda: i.clone().add_(j, alpha=2), lambda: T.ones(2).add_(j, alpha=0.5),
                lambda: i.bool().add_(j.bool(), alpha=True), lambda: i.clone().add_(j, alpha=True),
                lambda: T.add(i, j, alpha=1.0), lambda: T.add(i, j, alpha=True),
                lambda: i.clone().add_(j, alpha=1.0), lambda: T.add(T.ones(2), j, alpha=True)
                ][case]
        return catch(call)
    same(scenario)


@pytest.mark.parametrize("shapes", [((2,), (3,)), ((2, 3), (3, 2)), ((3,), (2, 3)),
                                    ((1, 3), (2, 3)), ((2, 3), (4,)), ((2, 3), (1, 3, 1))])
def test_copy_reports_shapes_as_torch(shapes):
    same(lambda T: catch(lambda: T.zeros(shapes[0]).copy_(T.zeros(shapes[1]))))


@pytest.mark.parametrize("case", range(6))
def test_scatter_reduce_on_scalars_and_out_of_range_indices(case):
    def scenario(T):
        call = [lambda: T.tensor(5.).scatter_reduce(0, T.tensor([0, 0]), T.tensor([1., 7.]), "amax"),
                lambda: T.zeros(1).scatter_reduce(0, T.tensor([1]), T.ones(1), "sum"),
                lambda: T.zeros(1).scatter_reduce(0, T.tensor([-1]), T.ones(1), "sum"),
                lambda: T.tensor(5.).scatter_reduce(0, T.tensor([1]), T.tensor([1.]), "sum"),
                lambda: T.tensor(5.).scatter_reduce(0, T.tensor(0), T.tensor(2.), "prod"),
                lambda: T.tensor(5.).scatter_reduce(0, T.tensor([0]), T.tensor([2.]), "mean",
                                                    include_self=False)][case]
        return catch(call)
    same(scenario)


def test_scatter_reduce_on_a_scalar_backpropagates():
    def scenario(T):
        x = T.tensor(5., dtype=T.float64, requires_grad=True)
        s = T.tensor([1., 7.], dtype=T.float64, requires_grad=True)
        y = x.scatter_reduce(0, T.tensor([0, 0]), s, "prod")
        y.backward()
        return y, x.grad, s.grad
    same(scenario)


@pytest.mark.parametrize("case", range(6))
def test_mH_and_adjoint_on_vectors_and_scalars(case):
    def scenario(T):
        call = [lambda: T.tensor([1.]).mH, lambda: T.tensor([1.]).adjoint(),
                lambda: T.tensor(1.).adjoint(), lambda: T.tensor(1. + 1j).mH,
                lambda: T.tensor([[1 + 2j, 3j]]).adjoint(), lambda: T.adjoint(T.tensor(1. + 1j))
                ][case]
        # (torch's conjugates are lazy: resolved to be compared)
        return catch(lambda: call().resolve_conj())
    same(scenario)
