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
