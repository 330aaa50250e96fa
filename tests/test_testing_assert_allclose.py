"""torch.testing.assert_allclose (deprecated) against torch: its FutureWarning, the older
default tolerances, dtype-lenient comparison and failure messages."""
import pytest

from differential import catch, same, warnings_of


@pytest.mark.parametrize("case", [
    "equal", "close_f32", "far_f32", "list", "numbers", "f32_vs_f64", "shape", "rtol_only",
    "both_tols", "nan", "nan_strict", "msg", "f16", "f64_tight", "ints", "int_vs_float"])
def test_assert_allclose(case):
    def scenario(T):
        one = T.ones(2)
        a, b, kw = {
            "equal": (one, T.ones(2), {}),
            "close_f32": (one, one + 5e-5, {}),
            "far_f32": (one, one + 1e-3, {}),
            "list": (one, [1.0, 1.0], {}),
            "numbers": (1.0, 1.0 + 1e-9, {}),
            "f32_vs_f64": (one, T.ones(2, dtype=T.float64), {}),
            "shape": (one, T.ones(3), {}),
            "rtol_only": (one, one * 1.1, dict(rtol=0.2)),
            "both_tols": (one, one * 1.1, dict(rtol=0.2, atol=0.0)),
            "nan": (T.tensor([float("nan")]), T.tensor([float("nan")]), {}),
            "nan_strict": (T.tensor([float("nan")]), T.tensor([float("nan")]),
                           dict(equal_nan=False)),
            "msg": (one, one + 1, dict(msg="custom")),
            "f16": (T.ones(2, dtype=T.float16), T.full((2,), 1.0009765625, dtype=T.float16),
                    {}),
            "f64_tight": (T.ones(2, dtype=T.float64), T.ones(2, dtype=T.float64) + 1e-6, {}),
            "ints": (T.tensor([1, 2]), T.tensor([1, 3]), {}),
            "int_vs_float": (T.tensor([1, 2]), [1.0, 2.0], {}),
        }[case]
        return warnings_of(lambda: catch(T.testing.assert_allclose, a, b, **kw))
    same(scenario)
