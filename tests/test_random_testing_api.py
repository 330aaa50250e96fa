"""Random state and generators, torch.testing's assert_close/make_tensor, checkpointing and
torch.compile, against torch. Random numbers are ember's own: scenarios compare shapes, dtypes,
errors and reproducibility, never the drawn values."""
import importlib

import pytest
import torch

import ember
from differential import same, catch, warnings_of


@pytest.fixture(autouse=True)
def keep_torch_distribution_validation():
    # torch.compile (and checkpoint's compiler imports) turn torch.distributions' default
    # argument validation off for the rest of the process: restore it for later test files
    before = torch.distributions.Distribution._validate_args
    yield
    torch.distributions.Distribution.set_default_validate_args(before)


def mod(T, name):
    return importlib.import_module(f"{T.__name__}.{name}")


# ----------------------------------------------------------------------------- random state
def test_global_state_api():
    def f(T):
        g = T.manual_seed(5)
        state = T.get_rng_state()
        return [type(g).__name__, g is T.default_generator, T.initial_seed(),
                state.dtype, state.dim(), type(T.seed()), T.seed() != 5]
    same(f)


@pytest.mark.parametrize("seed", [0, 3, -1, -2 ** 63, 2 ** 64 - 1, 2 ** 64, True, 1.5, "a"])
def test_manual_seed_values_and_errors(seed):
    same(lambda T: catch(lambda: T.Generator().manual_seed(seed).initial_seed()))


@pytest.mark.parametrize("bad", ["list", "float"])
def test_set_state_errors(bad):
    def f(T):
        state = [1, 2] if bad == "list" else T.zeros(3)
        return [catch(T.set_rng_state, state), catch(T.Generator().set_state, state)]
    same(f)


def test_generator_object():
    def f(T):
        g = T.Generator(device="cpu")
        return [str(g.device), g.initial_seed(), g.manual_seed(9) is g, g.initial_seed(),
                g.get_state().dtype, type(g.seed()).__name__]
    same(f)


def reproducible(T, draw):
    """Whether equal draws come from equal states, whatever the global stream does."""
    g = T.Generator().manual_seed(11)
    state = g.get_state()
    T.manual_seed(1)
    a = draw(g)
    T.rand(5)                                     # (the global stream moves; g must not care)
    g.set_state(state)
    b = draw(g)
    c = draw(T.Generator().manual_seed(11))
    return [a.shape, a.dtype, bool((a == b).all()), bool((a == c).all())]


DRAWS = {
    "rand": lambda T, g: T.rand(3, 4, generator=g),
    "randn": lambda T, g: T.randn(6, generator=g, dtype=T.float64),
    "randint": lambda T, g: T.randint(0, 100, (7,), generator=g),
    "randperm": lambda T, g: T.randperm(20, generator=g),
    "normal": lambda T, g: T.normal(T.zeros(4), 2.0, generator=g),
    "bernoulli": lambda T, g: T.bernoulli(T.full((8,), 0.5), generator=g),
    "multinomial": lambda T, g: T.multinomial(T.ones(10), 4, generator=g),
    "uniform_": lambda T, g: T.empty(5).uniform_(generator=g),
}


@pytest.mark.parametrize("name", DRAWS)
def test_generator_argument_reproducible(name):
    same(lambda T: reproducible(T, lambda g: DRAWS[name](T, g)))


def test_rng_state_restores_the_same_draws():
    def f(T):
        T.manual_seed(3)
        state = T.get_rng_state()
        a = T.randn(4)
        T.set_rng_state(state)
        return bool((T.randn(4) == a).all()), bool((T.randn(4) == a).all())
    same(f)


@pytest.mark.parametrize("enabled", [True, False])
def test_fork_rng(enabled):
    def f(T):
        T.manual_seed(0)
        with T.random.fork_rng(devices=[], enabled=enabled):
            inside = T.rand(3)
        after = T.rand(3)
        return [bool((inside == after).all()), T.random.initial_seed()]
    same(f)


def test_random_module_functions():
    same(lambda T: [T.random.manual_seed(4) is T.default_generator, T.random.initial_seed(),
                    T.random.get_rng_state().dtype])


# ----------------------------------------------------------------------------- assert_close
CLOSE_CASES = [
    "t.tensor([1., 2, 3]), t.tensor([1., 2, 3.1])",
    "t.tensor([1., 2, 3]), t.tensor([1., 2, 3 + 1e-7])",
    "t.tensor([1, 2, 3]), t.tensor([1, 2, 4])",
    "t.tensor([1, 2, 3]), t.tensor([1, 2, 6])",
    "t.tensor([1, 2, 9], dtype=t.uint8), t.tensor([1, 2, 6], dtype=t.uint8)",
    "t.tensor([True, False]), t.tensor([True, True])",
    "t.tensor([1., 2]), t.tensor([1, 2])",
    "t.tensor([1., 2]), t.tensor([1., 2, 3])",
    "t.tensor(1.), t.tensor(2.)",
    "t.tensor(1.), 1.",
    "1., 1.5", "1, 2", "1, 1.0", "True, False", "2, 2",
    "t.tensor([[1., 2], [3, 4]]), t.tensor([[1., 0], [3, 5]])",
    "t.tensor([1., float('nan')]), t.tensor([1., float('nan')])",
    "t.tensor([1., float('inf')]), t.tensor([1., float('inf')])",
    "t.tensor([1., float('inf')]), t.tensor([1., -float('inf')])",
    "t.tensor([1., 2], dtype=t.float64), t.tensor([1., 2.1], dtype=t.float64)",
    "t.tensor([1., 2], dtype=t.float16), t.tensor([1., 2.001], dtype=t.float16)",
    "t.tensor([1., 2], dtype=t.float16), t.tensor([1., 2.01], dtype=t.float16)",
    "t.tensor([1., 2], dtype=t.bfloat16), t.tensor([1., 2.1], dtype=t.bfloat16)",
    "t.tensor([1+1j, 2]), t.tensor([1+1j, 2.5])",
    "[t.tensor(1.), t.tensor(2.)], [t.tensor(1.), t.tensor(3.)]",
    "[t.tensor(1.)], [t.tensor(1.), t.tensor(3.)]",
    "{'a': t.tensor(1.)}, {'a': t.tensor(3.)}",
    "(t.ones(2), [t.ones(3)]), (t.ones(2), [t.zeros(3)])",
    "t.ones(2, requires_grad=True), t.ones(2)",
]


@pytest.mark.parametrize("args", CLOSE_CASES)
def test_assert_close_default(args):
    same(lambda T: catch(lambda: mod(T, "testing").assert_close(*eval(args, {"t": T}))))


@pytest.mark.parametrize("args,kwargs", [
    ("t.tensor([1., 2]), t.tensor([1, 2])", dict(check_dtype=False)),
    ("t.tensor([1., 2]), t.tensor([1., 2.5])", dict(rtol=0., atol=0.)),
    ("t.tensor([1., 2]), t.tensor([1., 2.5])", dict(rtol=0.1, atol=0.)),
    ("t.tensor([1., 2]), t.tensor([1., 2.5])", dict(rtol=0.3, atol=0.)),
    ("t.tensor([1., 2]), t.tensor([1., 2.5])", dict(rtol=0.1)),
    ("t.tensor([1., 2]), t.tensor([1., 2.5])", dict(atol=0.1)),
    ("t.tensor([1., 2]), t.tensor([1., 2.5])", dict(msg="custom")),
    ("t.tensor([1., float('nan')]), t.tensor([1., float('nan')])", dict(equal_nan=True)),
    ("t.tensor([1, 2]), t.tensor([1, 5])", dict(rtol=0., atol=3)),
])
def test_assert_close_options(args, kwargs):
    same(lambda T: catch(lambda: mod(T, "testing").assert_close(*eval(args, {"t": T}),
                                                                  **kwargs)))


def test_assert_close_callable_msg():
    same(lambda T: catch(lambda: mod(T, "testing").assert_close(
        T.tensor([1., 2]), T.tensor([1., 3]), msg=lambda m: "X" + m)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool", "int8",
                                   "float16", "complex64"])
def test_make_tensor(dtype):
    def f(T):
        dt = getattr(T, dtype)
        x = mod(T, "testing").make_tensor(3, 40, dtype=dt, device="cpu")
        y = mod(T, "testing").make_tensor((2,), dtype=dt, device="cpu", requires_grad=dt.is_floating_point)
        v = x.real if dt.is_complex else x
        in_range = bool((v >= (0 if dtype in ("uint8", "bool") else -9)).all() & (v <= 9).all())
        return [x.shape, x.dtype, in_range, y.shape, y.requires_grad]
    same(f)


def test_make_tensor_bounds():
    def f(T):
        m = mod(T, "testing").make_tensor
        ints = m(500, dtype=T.int64, device="cpu", low=0.5, high=2.5)
        flts = m(500, dtype=T.float32, device="cpu", low=2, high=3)
        nz = m(500, dtype=T.int64, device="cpu", low=-1, high=2, exclude_zero=True)
        return [sorted(set(ints.tolist())), bool(((flts >= 2) & (flts <= 3)).all()),
                bool((nz != 0).all()),
                catch(m, 3, dtype=T.float32, device="cpu", low=2, high=1)]
    same(f)


# ----------------------------------------------------------------------------- checkpoint
def test_checkpoint_warning_without_use_reentrant():
    def f(T):
        x = T.ones(2, requires_grad=True)
        return warnings_of(lambda: mod(T, "utils.checkpoint").checkpoint(lambda t: t * 2, x))[1]
    same(f)


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_gradients_equal_plain(reentrant):
    def f(T):
        T.manual_seed(0)
        lin = T.nn.Linear(3, 3)
        with T.no_grad():
            lin.weight.copy_(T.arange(9.).reshape(3, 3) / 10)
            lin.bias.fill_(0.5)

        def block(x, y):
            return T.tanh(lin(x)) * y, x.sum()

        x = T.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
        y = T.tensor([1., 2, 3], requires_grad=True)
        out, s = mod(T, "utils.checkpoint").checkpoint(block, x, y, use_reentrant=reentrant)
        (out.sum() + s).backward()
        got = [out, x.grad, y.grad, lin.weight.grad, lin.bias.grad]
        for p in (x, y, lin.weight, lin.bias):
            p.grad = None
        out, s = block(x, y)
        (out.sum() + s).backward()
        return got, [out, x.grad, y.grad, lin.weight.grad, lin.bias.grad], out.requires_grad
    same(f)


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_recomputes_and_keeps_rng(reentrant):
    def f(T):
        calls = []

        def block(x):
            calls.append(1)
            return T.nn.functional.dropout(x, 0.5, training=True) * x
        x = T.ones(50, requires_grad=True)
        out = mod(T, "utils.checkpoint").checkpoint(block, x, use_reentrant=reentrant)
        out.sum().backward()
        # the recomputed dropout used the same mask: d(mask*x*x)/dx = 2*mask*x = 2*out
        return len(calls), bool((x.grad == 2 * out.detach()).all())
    same(f)


def test_checkpoint_no_input_requires_grad():
    def f(T):
        ck = mod(T, "utils.checkpoint").checkpoint
        x = T.ones(2)
        lin = T.nn.Linear(2, 2)
        return [warnings_of(lambda: ck(lambda t: t * 2, x, use_reentrant=True).requires_grad),
                warnings_of(lambda: ck(lambda t: t * 2, x, use_reentrant=False).requires_grad),
                warnings_of(lambda: ck(lin, x, use_reentrant=True).requires_grad),
                warnings_of(lambda: ck(lin, x, use_reentrant=False).requires_grad),
                catch(ck, lambda t, foo: t, x, use_reentrant=True, foo=1),
                ck(lambda t, foo: t * foo, x, use_reentrant=False, foo=3)]
    same(f)


@pytest.mark.parametrize("reentrant", [None, True, False])
def test_checkpoint_sequential(reentrant):
    def f(T):
        T.manual_seed(0)
        layers = [T.nn.Linear(3, 3) for _ in range(4)]
        with T.no_grad():
            for i, layer in enumerate(layers):
                layer.weight.copy_(T.eye(3) * (i + 1) / 4)
                layer.bias.fill_(0.1 * i)
        model = T.nn.Sequential(*layers[:2], T.nn.Tanh(), *layers[2:])
        x = T.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
        seq = mod(T, "utils.checkpoint").checkpoint_sequential
        out, caught = warnings_of(lambda: seq(model, 2, x, use_reentrant=reentrant))
        out.pow(2).sum().backward()
        return out, x.grad, model[0].weight.grad, model[4].bias.grad, caught
    same(f)


# ----------------------------------------------------------------------------- compile
def test_compile_is_transparent():
    def f(T):
        lin = T.nn.Linear(2, 2)
        c = T.compile(lin)
        fn = T.compile(lambda x: x * 2 + 1)

        @T.compile
        def g(x):
            return x - 1

        @T.compile(mode="reduce-overhead", fullgraph=True)
        def h(x):
            return x * 3
        x = T.tensor([1., 2.])
        # (torch wraps a module in an OptimizedModule, its state_dict keys prefixed
        # '_orig_mod.'; ember returns the module itself: the documented difference)
        return [bool((c(x) == lin(x)).all()), fn(x), g(x), h(x), callable(c)]
    same(f)


@pytest.mark.parametrize("call", ["T.compile(lambda x: x, mode='max-autotune', options={})",
                                  "T.compile(3)", "T.compile(lambda x: x, mode='bogus')"])
def test_compile_errors(call):
    same(lambda T: catch(lambda: eval(call, {"T": T})))


W_GLOBAL = {}


def test_non_reentrant_checkpoint_keeps_the_plain_graph_and_reaches_global_parameters():
    def scenario(T):
        W_GLOBAL[T] = T.tensor([0.5, -1.0, 2.0], requires_grad=True)

        def block(x):                       # reaches its weight through a global
            return (x * W_GLOBAL[T]).sin() * 2
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = T.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
        name = type(y.grad_fn).__name__
        y.sum().backward()
        z = T.utils.checkpoint.checkpoint(block, T.ones(3), use_reentrant=False)
        gx, = T.autograd.grad(z.sum(), W_GLOBAL[T])
        return [name, x.grad, W_GLOBAL[T].grad, z.requires_grad, gx]
    same(scenario)
