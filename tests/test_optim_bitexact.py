"""ember.optim's float32 updates against torch.optim's (single-tensor CPU path) bit for bit.

PyTorch's lerp and addcmul kernels round a float32 multiply-add once (a fused multiply-add);
ember's optimizer kernels reproduce that, and the optimizers built on them alone (Adamax
without weight decay, Rprop) match torch exactly. Its add-with-alpha kernel rounds once too,
but emulating that costs 3-4x the float32 add on every parameter of every SGD step, so ember
rounds twice there: SGD, ASGD and any weight decay differ from torch by an ulp in about half
of the values. Optimizers with a square root (Adam, AdamW, RMSprop, Adagrad, Adadelta, NAdam,
RAdam) match to rounding only: torch's float32 sqrt on this CPU build (MKL's vector math) is
not correctly rounded, NumPy's is, so about one value in six differs by an ulp.
"""
import numpy as np
import pytest
import torch

from differential import same
from ember.optim import optimizer as kernels

STEPS = 20
SHAPES = [(10_000,), (4, 3), (5,), ()]

EXACT = [
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.3, 0.9), maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-4, 1), maximize=True)),
]

ROUNDING = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.8, nesterov=True, weight_decay=0.05, maximize=True)),
    ("Adamax", dict(lr=0.01, betas=(0.3, 0.9), weight_decay=0.1, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, t0=5, weight_decay=0.1, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.95), weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict()),
    ("AdamW", dict(lr=0.02, weight_decay=0.3, amsgrad=True, maximize=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.3, weight_decay=0.1)),
    ("Adadelta", dict(weight_decay=0.1)),
    ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
]


def case_id(case):
    name, kw = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in kw.items())


def training(name, kw, seed=0):
    """A scenario: STEPS steps of the optimizer on float32 parameters of SHAPES with the same
    random gradients; observes the parameters and every state tensor."""
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES]
             for _ in range(STEPS)]

    def scenario(T):
        params = [T.tensor(a.copy(), requires_grad=True) for a in init]
        opt = getattr(T.optim, name)(params, **kw)
        for step_grads in grads:
            for p, g in zip(params, step_grads):
                p.grad = T.tensor(g.copy())
            opt.step()
        state = [sorted((k, v) for k, v in opt.state[p].items()) for p in params]
        return [p.detach() for p in params], state
    return scenario


@pytest.mark.parametrize("case", EXACT, ids=case_id)
def test_updates_without_sqrt_match_torch_bit_for_bit(case):
    same(training(*case), rtol=0, atol=0)


@pytest.mark.parametrize("case", ROUNDING, ids=case_id)
def test_updates_with_sqrt_match_torch_to_rounding(case):
    same(training(*case))


# ----------------------------------------------------------------------------- the kernels
def data(shape, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]


KERNEL_SHAPES = [(10_007,), (4, 3), (1,), ()]


@pytest.mark.parametrize("shape", KERNEL_SHAPES, ids=str)
@pytest.mark.parametrize("alpha", [-0.01, 0.3, 2.5])
def test_add_kernel_is_within_an_ulp_of_torch(shape, alpha):
    # (two roundings where torch rounds once: see the module's docstring)
    a, b, _ = data(shape)
    expected = torch.from_numpy(a.copy()).add_(torch.from_numpy(b), alpha=alpha).numpy()
    got = kernels.add_(np, a.copy(), b, alpha, np.empty_like(a))
    # the extra rounding of alpha * b (half an ulp of it) and the sum's own rounding (an ulp of
    # a result at most twice the larger term) stay within a few ulps of the larger term
    bound = 4 * np.spacing(np.maximum(np.abs(a), np.abs(np.float32(alpha) * b)))
    assert np.all(np.abs(got - expected) <= bound)
    assert np.mean(got == expected) > 0.3        # and most results are torch's exactly


@pytest.mark.parametrize("shape", KERNEL_SHAPES, ids=str)
@pytest.mark.parametrize("weight", [0.1, 0.001, 0.5, 0.7, 1.0, -0.2])
def test_lerp_kernel_rounds_like_torch(shape, weight):
    a, end, _ = data(shape)
    expected = torch.from_numpy(a.copy()).lerp_(torch.from_numpy(end), weight).numpy()
    got = kernels.lerp_(np, a.copy(), end, weight, np.empty_like(a))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("shape", KERNEL_SHAPES, ids=str)
@pytest.mark.parametrize("value", [1, -1, 0.001, -0.3])
def test_addcmul_kernel_rounds_like_torch(shape, value):
    a, t1, t2 = data(shape)
    for second in (t2, t1):                  # (t1 * t1: the squared gradient of the moments)
        expected = torch.from_numpy(a.copy()).addcmul_(
            torch.from_numpy(t1), torch.from_numpy(second), value=value).numpy()
        got = kernels.addcmul_(np, a.copy(), t1, second, value, np.empty_like(a))
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("shape", KERNEL_SHAPES, ids=str)
@pytest.mark.parametrize("value", [1, -0.0123])
def test_addcdiv_kernel_rounds_like_torch(shape, value):
    a, t1, t2 = data(shape)
    t2 = np.asarray(np.abs(t2) + np.float32(0.5))
    expected = torch.from_numpy(a.copy()).addcdiv_(
        torch.from_numpy(t1), torch.from_numpy(t2), value=value).numpy()
    got = kernels.addcdiv_(np, a.copy(), t1, t2, value, np.empty_like(a))
    np.testing.assert_array_equal(got, expected)


def test_kernels_with_an_operand_in_the_scratch_array():
    # the scratch array is where the float64 chunks go: an operand living there must still
    # be read before it is overwritten (the kernels then take their allocating path)
    a, b, _ = data((1001,))
    expected = torch.from_numpy(a.copy()).lerp_(torch.from_numpy(b), 0.1).numpy()
    tmp = b.copy()
    np.testing.assert_array_equal(kernels.lerp_(np, a.copy(), tmp, 0.1, tmp), expected)
