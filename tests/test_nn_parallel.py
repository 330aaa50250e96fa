"""nn.SyncBatchNorm (single process) and nn.DataParallel (CPU) against torch: forward, gradients, conversion and errors.
"""
import numpy as np
import pytest
from differential import catch, same, warnings_of
from nn_helpers import param_grads as _grads


def _x(T, shape, dtype="float64", seed=0, requires_grad=False):
    data = np.random.default_rng(seed).standard_normal(shape)
    return T.tensor(data, dtype=getattr(T, dtype), requires_grad=requires_grad)


def _load_same(T, module, seed=1):
    """Give every parameter and buffer of `module` seeded values (the same under both)."""
    state = {k: _x(T, tuple(v.shape), str(v.dtype).split(".")[-1], seed + i)
             if v.dtype.is_floating_point else v
             for i, (k, v) in enumerate(module.state_dict().items())}
    module.load_state_dict(state)
    return module


# ----------------------------------------------------------------------------- SyncBatchNorm
@pytest.mark.parametrize("shape", [(3, 4), (3, 4, 5), (2, 4, 3, 3), (2, 4, 2, 3, 2),
                                   (2, 4, 2, 1, 2, 2)])
@pytest.mark.parametrize("kw", [dict(), dict(momentum=None), dict(affine=False),
                                dict(track_running_stats=False), dict(bias=False)])
def test_sync_batch_norm(shape, kw):
    def scenario(T):
        m = _load_same(T, T.nn.SyncBatchNorm(4, **kw).double())
        out = [repr(m), m.process_group]
        for training in (True, True, False):
            m.train(training)
            x = _x(T, shape, requires_grad=True, seed=len(out))
            y = m(x)
            y.backward(_x(T, shape, seed=11))
            out += [y, x.grad, m.state_dict()]
        return out, _grads(m)
    same(scenario)


def test_sync_batch_norm_errors_and_convert():
    def scenario(T):
        nn = T.nn
        m = nn.SyncBatchNorm(4)
        errors = [catch(m, _x(T, (4,), "float32")), catch(m, _x(T, (1, 4), "float32")),
                  catch(nn.SyncBatchNorm(0), _x(T, (2, 0, 3), "float32"))]
        net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4),
                            nn.Sequential(nn.BatchNorm1d(4, affine=False, momentum=None)),
                            nn.LayerNorm(3), nn.BatchNorm3d(2, bias=False).eval())
        bn = net[1]
        bn.qconfig = "q"
        conv = nn.SyncBatchNorm.convert_sync_batchnorm(net)
        shared = [conv[1].weight is bn.weight, conv[1].running_mean is bn.running_mean,
                  conv[1].num_batches_tracked is bn.num_batches_tracked, conv[1].qconfig,
                  conv[4].training, conv is net]
        lone = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(3), process_group=None)
        return errors, repr(conv), shared, repr(lone)
    same(scenario)


# ----------------------------------------------------------------------------- DataParallel
def test_data_parallel():
    def scenario(T):
        nn = T.nn
        lin = _load_same(T, nn.Linear(3, 2).double())
        dp, warns = warnings_of(lambda: nn.DataParallel(lin))
        x = _x(T, (4, 3), requires_grad=True)
        y = dp(x)
        y.sum().backward()
        dp.eval()
        seq = nn.DataParallel(nn.Sequential(nn.Linear(3, 2), nn.ReLU()), device_ids=[0],
                              output_device=0, dim=1)

        class Scale(nn.Module):
            def forward(self, a, b=2):
                return a * b
        return [repr(dp), warns, dp.module is lin, list(dp.state_dict()), dp.device_ids, y,
                x.grad, lin.weight.grad, lin.training, repr(seq),
                [n for n, _ in seq.named_parameters()], catch(lambda: dp.output_device),
                nn.DataParallel(Scale())(x, b=3)]
    same(scenario)
