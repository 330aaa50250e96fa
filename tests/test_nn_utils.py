"""torch.nn.utils helpers against torch: fusion (fuse_conv_bn / fuse_linear_bn and their weights), skip_init, stateless functional_call and convert_conv*d_weight_memory_format.
"""
import numpy as np
import pytest
from differential import catch, same, warnings_of


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


# ----------------------------------------------------------------------------- fusion utils
@pytest.mark.parametrize("kind,bias,affine", [("conv2d", True, True), ("conv1d", False, True),
                                              ("conv3d", True, False),
                                              ("convt2d", True, True), ("linear", True, True),
                                              ("linear", False, True), ("linear1", True, True)])
def test_fuse_bn(kind, bias, affine):
    def scenario(T):
        nn, U = T.nn, T.nn.utils
        if kind == "linear" or kind == "linear1":
            layer = nn.Linear(3, 4, bias=bias)
            bn = nn.BatchNorm1d(1 if kind == "linear1" else 4, affine=affine)
            x = _x(T, (5, 3))
        else:
            d = int(kind[-2])
            cls = nn.ConvTranspose2d if kind == "convt2d" else getattr(nn, f"Conv{d}d")
            layer = cls(3, 4, 2, bias=bias)
            bn = getattr(nn, f"BatchNorm{d}d")(4, affine=affine)
            x = _x(T, (2, 3) + (4,) * d)
        layer, bn = _load_same(T, layer.double()), _load_same(T, bn.double(), seed=20)
        bn.running_var.abs_()
        err = [catch(lambda: (U.fuse_linear_bn_eval if "linear" in kind else U.fuse_conv_bn_eval)(
            layer, bn))]
        layer.eval(), bn.eval()
        if "linear" in kind:
            fused = U.fuse_linear_bn_eval(layer, bn)
        else:
            fused = U.fuse_conv_bn_eval(layer, bn, transpose=kind == "convt2d")
        return [err, repr(fused), fused is layer, type(fused.weight).__name__, fused(x), catch(lambda: bn(layer(x))),
                fused.weight.requires_grad, fused.bias.requires_grad, layer.bias is None]
    same(scenario)


def test_fuse_weights_and_errors():
    def scenario(T):
        nn, U = T.nn, T.nn.utils
        w = _x(T, (4, 3, 2, 2), requires_grad=True)
        rm, rv = _x(T, (4,), seed=1), _x(T, (4,), seed=2).abs()
        fw, fb = U.fuse_conv_bn_weights(w, None, rm, rv, 1e-3, None, None)
        lw, lb = U.fuse_linear_bn_weights(w[:, :, 0, 0], _x(T, (4,), seed=3), rm, rv, 1e-5,
                                          _x(T, (4,), seed=4), _x(T, (4,), seed=5))
        f32 = U.fuse_conv_bn_weights(w.float(), _x(T, (4,), "float32"), rm, rv, 1e-5,
                                     None, None)
        lin = nn.Linear(3, 4).eval()
        errors = [catch(U.fuse_linear_bn_eval, lin, nn.BatchNorm1d(5).eval()),
                  catch(U.fuse_linear_bn_eval, lin,
                        nn.BatchNorm1d(4, track_running_stats=False).eval()),
                  catch(U.fuse_conv_bn_eval, nn.Conv2d(3, 4, 1).eval(), nn.BatchNorm2d(4))]
        return [fw, fb, type(fw).__name__, fw.requires_grad, fb.requires_grad, lw, lb,
                lw.requires_grad, f32, errors]
    same(scenario)


# ----------------------------------------------------------------------------- misc utils
def test_skip_init():
    def scenario(T):
        T.manual_seed(0)
        m = T.nn.utils.skip_init(T.nn.Linear, 3, 4, bias=False)
        after = T.rand(3)                  # the global generator was not advanced
        T.manual_seed(0)
        return [repr(m), bool((after == T.rand(3)).all()), tuple(m.weight.shape), m.weight.requires_grad,
                repr(T.nn.utils.skip_init(T.nn.Conv2d, 2, 3, 1, device="cpu")),
                catch(T.nn.utils.skip_init, int), catch(T.nn.utils.skip_init, T.nn.ReLU),
                catch(T.nn.utils.skip_init, 3)]
    same(scenario)


def test_stateless_functional_call():
    def scenario(T):
        lin = T.nn.Linear(2, 3).double()
        x = _x(T, (4, 2))
        params = {"weight": _x(T, (3, 2), seed=1), "bias": _x(T, (3,), seed=2)}
        y, warns = warnings_of(lambda: T.nn.utils.stateless.functional_call(lin, params, (x,)))
        y2, _ = warnings_of(lambda: T.nn.utils.stateless.functional_call(lin, params, x))
        return y, warns, y2, T.nn.utils.stateless.__all__
    same(scenario)


def test_convert_conv_weight_memory_format():
    def scenario(T):
        nn, U = T.nn, T.nn.utils
        m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ConvTranspose2d(4, 4, 3), nn.Linear(2, 2),
                          nn.Sequential(nn.Conv2d(4, 2, 2)))
        w = m[0].weight
        r = U.convert_conv2d_weight_memory_format(m, T.channels_last)
        m3 = nn.Conv3d(2, 3, 2)
        before = m3.weight.detach().clone()
        U.convert_conv3d_weight_memory_format(m3, T.contiguous_format)
        return [r is m, m[0].weight is w, m[0].weight.stride(), m[1].weight.stride(),
                m[2].weight.stride(), m[3][0].weight.stride(),
                m[0].weight.is_contiguous(memory_format=T.channels_last),
                m3.weight.stride(), bool((m3.weight == before).all()), U.init.skip_init.__name__]
    same(scenario)
