"""Normalization layers against torch: RMSNorm and the instance norms (running stats, momentum, eval, unbatched input), their checks, warnings and errors.
"""
import numpy as np
import pytest
import torch
import ember
from differential import catch, same, warnings_of
from nn_helpers import compare_module, torch_repr
from opinfo import graph_names


def f(T):
    return T.nn.functional


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rmsnorm_module_matches_torch(dtype):
    rng = np.random.default_rng(0)
    compare_module(ember.nn.RMSNorm([3, 4], eps=1e-3), torch.nn.RMSNorm([3, 4], eps=1e-3),
                   [rng.uniform(-2, 2, (2, 3, 4))], dtype=dtype)


@pytest.mark.parametrize("kind,shape", [(1, (3, 4, 5)), (2, (2, 4, 3, 3)), (3, (2, 4, 2, 3, 2)),
                                        (2, (4, 3, 5))])
def test_instance_norm_modules_train_then_eval(kind, shape):
    """Running stats: each training step moves them toward the batch average of the
    per-sample statistics (unbiased variance); eval mode normalizes with them."""
    rng = np.random.default_rng(kind)
    args = dict(affine=True, track_running_stats=True, momentum=0.2)
    e_mod = getattr(ember.nn, f"InstanceNorm{kind}d")(4, **args)
    t_mod = getattr(torch.nn, f"InstanceNorm{kind}d")(4, **args)
    with torch.no_grad():
        t_mod.weight.uniform_(0.5, 1.5)
        t_mod.bias.uniform_(-1, 1)
    for step in range(2):
        compare_module(e_mod, t_mod, [rng.uniform(-2, 2, shape) + step], dtype=torch.float64)
    assert int(e_mod.num_batches_tracked) == int(t_mod.num_batches_tracked) == 0
    e_mod.eval()
    t_mod.eval()
    e_out, t_out = compare_module(e_mod, t_mod, [rng.uniform(-2, 2, shape)],
                                  dtype=torch.float64)
    assert e_out.grad_fn.name() == t_out.grad_fn.name()


def test_instance_norm_without_running_stats_in_eval_uses_input_stats():
    rng = np.random.default_rng(4)
    e_mod, t_mod = ember.nn.InstanceNorm1d(3).eval(), torch.nn.InstanceNorm1d(3).eval()
    compare_module(e_mod, t_mod, [rng.uniform(-2, 2, (2, 3, 5))])


def test_instance_norm_momentum_none_keeps_running_stats():
    def scenario(T):
        m = T.nn.InstanceNorm2d(2, momentum=None, track_running_stats=True)
        m(T.arange(16.0).reshape(2, 2, 2, 2))
        return m.running_mean, m.running_var, m.num_batches_tracked
    same(scenario)


def test_instance_norm_checks_and_warnings():
    def scenario(T):
        nn = T.nn
        x4 = T.ones(2, 4, 3, 3)
        return [catch(nn.InstanceNorm1d(4), x4), catch(nn.InstanceNorm2d(4), T.ones(2, 4)),
                catch(nn.InstanceNorm2d(3, affine=True), x4),
                warnings_of(lambda: tuple(nn.InstanceNorm2d(3)(x4).shape)),
                warnings_of(lambda: tuple(nn.InstanceNorm3d(3)(x4).shape)),
                catch(nn.InstanceNorm1d(4), T.ones(2, 4, 1)),
                catch(f(T).instance_norm, x4, T.zeros(3), T.ones(3)),
                catch(f(T).instance_norm, x4, T.zeros(4), None),
                catch(f(T).instance_norm, x4, None, None, use_input_stats=False),
                catch(f(T).batch_norm, x4, T.zeros(3), T.ones(3)),
                catch(f(T).batch_norm, x4, T.zeros(4), T.ones(5))]
    same(scenario)


def test_unbatched_instance_norm():
    rng = np.random.default_rng(5)
    e_out, t_out = compare_module(ember.nn.InstanceNorm2d(3, affine=True),
                                  torch.nn.InstanceNorm2d(3, affine=True),
                                  [rng.uniform(-2, 2, (3, 4, 2))])
    assert graph_names(e_out.grad_fn) == graph_names(t_out.grad_fn)


def test_normalization_errors_match_torch():
    def scenario(T):
        F_, x = f(T), T.ones(2, 4, 6, 6)
        return [catch(F_.rms_norm, x, (5,)), catch(F_.rms_norm, x, (4, 5)),
                catch(F_.rms_norm, x, (6,), T.ones(5)),
                catch(F_.local_response_norm, T.ones(2, 3), 3),
                tuple(F_.local_response_norm(T.ones(0, 3, 4), 3).shape)]
    same(scenario)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_rms_norm_of_half_inputs_computes_in_float32(dtype):
    def scenario(T):
        x = T.linspace(-1, 2, 8).reshape(2, 4).to(getattr(T, dtype)).requires_grad_()
        w = T.linspace(0.5, 1.5, 4).to(getattr(T, dtype)).requires_grad_()
        y = f(T).rms_norm(x, (4,), w)
        y.sum().backward()
        return y, graph_names(y.grad_fn), x.grad, w.grad
    same(scenario, rtol=1e-2, atol=1e-2)
