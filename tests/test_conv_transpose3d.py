"""F.conv_transpose3d and nn.ConvTranspose3d against PyTorch: values, gradients, errors, repr."""
import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from differential import same, catch

RNG = np.random.default_rng(77)

CASES = [
    dict(),
    dict(stride=2),
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=(2, 1, 3), padding=(1, 0, 1), output_padding=(1, 0, 2)),
    dict(dilation=2, padding=1),
    dict(stride=2, dilation=(1, 2, 1), output_padding=(1, 1, 0)),
    dict(groups=2, stride=(1, 2, 2)),
    dict(groups=4, padding=(0, 1, 0), dilation=(2, 1, 1)),
]


def _in_out(kw):
    groups = kw.get("groups", 1)
    return 4, 2 * groups        # in channels, out channels


@pytest.mark.parametrize("kw", CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose3d_values_and_grads(kw, bias):
    cin, cout = _in_out(kw)
    groups = kw.get("groups", 1)
    x = RNG.standard_normal((2, cin, 3, 4, 2))
    w = RNG.standard_normal((cin, cout // groups, 2, 3, 2))
    b = RNG.standard_normal(cout)
    out_grad_seed = RNG.integers(0, 1000)

    def scenario(T):
        tx, tw = T.tensor(x, requires_grad=True), T.tensor(w, requires_grad=True)
        tb = T.tensor(b, requires_grad=True) if bias else None
        y = T.nn.functional.conv_transpose3d(tx, tw, tb, **kw)
        g = T.tensor(np.random.default_rng(out_grad_seed).standard_normal(tuple(y.shape)))
        y.backward(g)
        return y, tx.grad, tw.grad, (tb.grad if bias else None), type(y.grad_fn).__name__
    same(scenario, rtol=1e-10, atol=1e-10)


def test_conv_transpose3d_float32_and_unbatched():
    x = RNG.standard_normal((2, 3, 3, 3)).astype(np.float32)
    w = RNG.standard_normal((2, 3, 2, 2, 2)).astype(np.float32)

    def scenario(T):
        tx, tw = T.tensor(x, requires_grad=True), T.tensor(w, requires_grad=True)
        y = T.nn.functional.conv_transpose3d(tx, tw, stride=2, output_padding=1)
        y.pow(2).sum().backward()
        return y, tx.grad, tw.grad
    same(scenario, rtol=2e-5, atol=2e-5)


def test_conv_transpose3d_gradcheck_and_gradgradcheck():
    x = ember.tensor(RNG.standard_normal((1, 2, 2, 3, 2)), requires_grad=True)
    w = ember.tensor(RNG.standard_normal((2, 2, 2, 2, 2)), requires_grad=True)
    b = ember.tensor(RNG.standard_normal(4), requires_grad=True)

    def fn(x, w, b):
        return ember.nn.functional.conv_transpose3d(x, w, b, stride=2, padding=1,
                                                    output_padding=1, groups=2)
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_conv_transpose3d_double_backward_matches_torch():
    x, w = RNG.standard_normal((1, 2, 3, 2, 3)), RNG.standard_normal((2, 3, 2, 2, 2))

    def scenario(T):
        tx, tw = T.tensor(x, requires_grad=True), T.tensor(w, requires_grad=True)
        y = T.nn.functional.conv_transpose3d(tx, tw, stride=(1, 2, 1), dilation=(2, 1, 1))
        gx, gw = T.autograd.grad((y * y).sum(), (tx, tw), create_graph=True)
        ((gx * gx).sum() + (gw ** 3).sum()).backward()
        return gx, gw, tx.grad, tw.grad, type(gx.grad_fn).__name__
    same(scenario, rtol=1e-9, atol=1e-9)


def test_conv_transpose3d_errors():
    def scenario(T):
        F = T.nn.functional
        x, w = T.zeros(1, 2, 3, 3, 3), T.zeros(2, 2, 2, 2, 2)
        return [catch(F.conv_transpose3d, x, w, stride=2, output_padding=2),
                catch(F.conv_transpose3d, x, w, stride=(2, 1, 1), output_padding=(1, 1, 0)),
                catch(F.conv_transpose3d, x, w, stride=(2, 1, 1), padding=5),
                catch(F.conv_transpose3d, x[0, 0], w),
                catch(F.conv_transpose3d, x, w, stride=(1, 2)),
                catch(F.conv_transpose3d, x, w[:1]),
                catch(F.conv_transpose3d, x.double(), w),
                catch(F.conv_transpose3d, x, w, T.zeros(3)),
                catch(F.conv_transpose3d, x, w, stride=0),
                catch(F.conv_transpose3d, x, w, padding=-1),
                F.conv_transpose3d(x, w, groups=2).shape]
    same(scenario)


def test_conv_transpose3d_layer():
    def scenario(T):
        T.manual_seed(3)
        layers = [T.nn.ConvTranspose3d(2, 4, 3, stride=2, padding=1, output_padding=1,
                                       groups=2, dilation=2, bias=False),
                  T.nn.ConvTranspose3d(2, 4, (3, 2, 1)),
                  T.nn.ConvTranspose3d(4, 2, 2, stride=(2, 1, 2))]
        reprs = [repr(m) for m in layers]
        x = T.arange(54.).reshape(1, 2, 3, 3, 3) / 10
        m = layers[1]
        with T.no_grad():
            for p in m.parameters():
                p.copy_(T.linspace(-1, 1, p.numel()).reshape(p.shape))
        y = m(x)
        y.sum().backward()
        m3 = layers[2]
        return (reprs, y, m.weight.grad, m.bias.grad,
                [tuple(p.shape) for p in layers[0].parameters()],
                m3(T.zeros(4, 3, 3, 3), output_size=(6, 4, 6)).shape,
                m3(T.zeros(4, 3, 3, 3), output_size=[2, 7, 4, 7]).shape,
                m3(T.zeros(1, 4, 3, 3, 3), output_size=(1, 2, 7, 4, 6)).shape,
                catch(m3, T.zeros(4, 3, 3, 3), output_size=(6, 3, 6)),
                catch(m3, T.zeros(4, 3, 3, 3), output_size=[6, 4, 6, 7]),
                catch(layers[1], x, output_size=(5, 5)),
                catch(m3, T.zeros(1, 4, 3, 3, 3), output_size=(9, 3, 6)),
                catch(T.nn.ConvTranspose3d, 2, 4, 3, padding_mode="reflect"),
                catch(T.nn.ConvTranspose3d, 3, 4, 3, groups=2))
    same(scenario, rtol=1e-5, atol=1e-5)


def test_conv_transpose3d_default_init_bounds():
    m = ember.nn.ConvTranspose3d(4, 6, (2, 3, 1))
    t = torch.nn.ConvTranspose3d(4, 6, (2, 3, 1))
    assert tuple(m.weight.shape) == tuple(t.weight.shape)
    # torch's fan-in for a transposed weight (in, out/groups, *k) is out/groups * prod(k)
    bound = 1 / np.sqrt(6 * 2 * 3 * 1)
    assert np.abs(m.bias.detach().numpy()).max() <= bound
    assert np.abs(m.weight.detach().numpy()).max() <= bound
