"""The dropout family against torch: alpha dropout (the affine map), feature alpha dropout and dropout3d (whole channels), eval mode, edge cases and modules.
"""
import numpy as np
import pytest
import torch
import ember
from differential import catch, same, warnings_of
from opinfo import graph_names


def f(T):
    return T.nn.functional


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout_is_the_same_affine_map_as_torch(p):
    """Dropped elements all take one value and kept ones are a x + b, with torch's a, b and
    dropped value; over many draws mean 0 and variance 1 are kept for a standard input."""
    rng = np.random.default_rng(8)
    data = rng.standard_normal(200_000).astype(np.float32)
    t_out = torch.nn.functional.alpha_dropout(torch.tensor(data, requires_grad=True), p,
                                              training=True)
    e_in = ember.tensor(data, requires_grad=True)
    e_out = ember.nn.functional.alpha_dropout(e_in, p, training=True)
    assert graph_names(e_out.grad_fn) == graph_names(t_out.grad_fn)
    t_out = t_out.detach().numpy()
    out = e_out.detach().numpy()
    values, counts = np.unique(t_out, return_counts=True)
    dropped_value = values[counts.argmax()]             # torch's value for a dropped element
    dropped = out == dropped_value
    assert abs(dropped.mean() - p) < 0.01
    # kept elements: the same a x + b in both libraries (fitted from torch's kept elements)
    t_kept = t_out != dropped_value
    a, b = np.polyfit(data[t_kept], t_out[t_kept], 1)
    np.testing.assert_allclose(out[~dropped], a * data[~dropped] + b, rtol=1e-4, atol=1e-5)
    assert abs(out.mean()) < 0.02 and abs(out.var() - 1) < 0.02
    e_out.sum().backward()
    np.testing.assert_allclose(np.unique(e_in.grad.numpy()), sorted({0.0, a}), rtol=1e-5)


def test_feature_alpha_dropout_drops_whole_channels():
    ember.manual_seed(1)
    x = ember.randn(50, 20, 3, 4)
    y = ember.nn.functional.feature_alpha_dropout(x, 0.5, training=True).numpy()
    # each (sample, channel) is one affine map of its input: dropped ones are constant
    flat = y.reshape(1000, 12)
    constant = np.ptp(flat, axis=1) == 0
    assert 0.4 < constant.mean() < 0.6
    assert len(np.unique(flat[constant])) == 1


def test_alpha_dropouts_eval_edge_cases_and_modules():
    def scenario(T):
        F_ = f(T)
        x = T.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
        m = T.nn.AlphaDropout(0.5)
        m.eval()
        return [F_.alpha_dropout(x, 0.5) is x, F_.alpha_dropout(x, 0.0, True) is x,
                F_.feature_alpha_dropout(x, 0.3, False) is x, m(x) is x,
                F_.alpha_dropout(x, 1.0, True), F_.alpha_dropout(x, 1.0, True).grad_fn.name(),
                catch(F_.alpha_dropout, x, 1.5, True), catch(F_.alpha_dropout, x, -0.1),
                catch(F_.feature_alpha_dropout, T.ones(5), 0.5, True),
                T.nn.FeatureAlphaDropout(0.5, inplace=True)(x) is x]
    same(scenario)


def test_dropout3d_zeroes_whole_channels():
    ember.manual_seed(2)
    y = ember.nn.Dropout3d(0.5)(ember.ones(20, 10, 2, 2, 2)).numpy().reshape(200, 8)
    assert set(np.unique(y)) == {0.0, 2.0}
    assert (np.ptp(y, axis=1) == 0).all()
    y = ember.nn.functional.dropout3d(ember.ones(10, 2, 2, 2), 0.5).numpy().reshape(10, 8)
    assert (np.ptp(y, axis=1) == 0).all()
    same(lambda T: warnings_of(lambda: tuple(f(T).dropout3d(T.ones(2, 3), training=False).shape)))
