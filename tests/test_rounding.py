"""Where torch's kernels round: results compared bit for bit with torch's."""
import numpy as np
import pytest

from differential import same


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("weight", [1 / 3, 0.7, -0.3, 1.5, "tensor"])
def test_lerp_rounds_once_as_torch(dtype, weight):
    # torch's lerp kernel: diff = end - start rounded, then a fused multiply-add in float32
    # (the half floats are computed in float32 and rounded at the end)
    rng = np.random.default_rng(0)
    a, c = rng.standard_normal((2, 4000)).astype(np.float32)
    w = rng.uniform(-1, 2, 4000).astype(np.float32)

    def scenario(T):
        dt = getattr(T, dtype)
        x, y = T.tensor(a).to(dt), T.tensor(c).to(dt)
        W = T.tensor(w).to(dt) if weight == "tensor" else weight
        return T.lerp(x, y, W), x.clone().lerp_(y, W)
    same(scenario, rtol=0, atol=0)


def test_lerp_float64_within_an_ulp():
    # (float64 has no wider type to emulate torch's fused multiply-add: about a quarter of
    # the results are an ulp of the operands away)
    rng = np.random.default_rng(1)
    a, c = rng.standard_normal((2, 4000))
    same(lambda T: T.lerp(T.tensor(a), T.tensor(c), 1 / 3), rtol=0, atol=5e-16)


_HALF_SCALAR_OPS = {
    "mul": lambda T, t, v: t * v, "rmul": lambda T, t, v: v * t, "div": lambda T, t, v: t / v,
    "rdiv": lambda T, t, v: v / t, "mul_": lambda T, t, v: t.clone().mul_(v),
    "div_": lambda T, t, v: t.clone().div_(v), "floor_divide": lambda T, t, v: t // v,
    "add": lambda T, t, v: t + v, "sub": lambda T, t, v: t - v,
    "addcdiv": lambda T, t, v: T.addcdiv(t, t, t + 10, value=v),
    "leaky_relu": lambda T, t, v: T.nn.functional.leaky_relu(t, v),
    "elu": lambda T, t, v: T.nn.functional.elu(t, v),
    "softplus": lambda T, t, v: T.nn.functional.softplus(t, beta=v),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(_HALF_SCALAR_OPS))
@pytest.mark.parametrize("size", [7, 4000])
def test_half_precision_ops_compute_in_float32_as_torch(dtype, name, size):
    # torch computes float16/bfloat16 elementwise kernels in float32 ("opmath"), a Python
    # number read as float32 (not first rounded to the half type), and rounds once
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(size) * 3).astype(np.float32)

    def scenario(T):
        t = T.tensor(x).to(getattr(T, dtype))
        return [_HALF_SCALAR_OPS[name](T, t, v) for v in (0.1, 1 / 3, 3.14159, 7.0)]
    same(scenario, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["selu", "silu", "hardsigmoid", "hardswish",
                                  "logsigmoid", "celu", "softsign", "hardtanh"])
def test_half_precision_activations_round_once(dtype, name):
    # (mish is left out: torch's float16 mish differs from a once-rounded float32 mish in
    # about 1 element of 5,000, its vectorised tanh(softplus) being a little off)
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(4000) * 4).astype(np.float32)
    same(lambda T: getattr(T.nn.functional, name)(T.tensor(x).to(getattr(T, dtype))),
         rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_glu_and_eval_rrelu_round_once(dtype):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((40, 100)) * 4).astype(np.float32)

    def scenario(T):
        t = T.tensor(x).to(getattr(T, dtype))
        F = T.nn.functional
        return F.glu(t, -1), F.glu(t, 0), F.rrelu(t, training=False), F.rrelu(t, 0.2, 0.3)
    same(scenario, rtol=0, atol=0)
