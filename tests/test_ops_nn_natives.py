"""torch's native nn entry points (constant_pad_nd, convolution, native_layer_norm/batch_norm/group_norm, native_dropout, native_channel_shuffle, ctc_loss with its native arguments) against torch.
"""
import numpy as np
from differential import same, catch, warnings_of
from differential import grad_fn_name as _node


def _randn(T, *shape):
    """Normal float64 samples, the same in torch and ember (a seed from the shape)."""
    return T.tensor(np.random.RandomState(hash(shape) % 2 ** 32).randn(*shape))


# ----------------------------------------------------------------------------- native nn entries
def test_constant_pad_nd_and_convolution():
    def f(T):
        x = _randn(T, 2, 3, 5).requires_grad_()
        w = _randn(T, 4, 3, 2).requires_grad_()
        w2 = _randn(T, 2, 3, 2, 2)
        outs = [T.constant_pad_nd(x, (1, 2)), T.constant_pad_nd(x, [1, 1, -1, 0], 2.5),
                T.convolution(x, w, None, [1], [0], [1], False, [0], 1),
                T.convolution(x, w, T.ones(4, dtype=T.float64), [2], [1], [1], False, [0], 1),
                T.convolution(x, w.transpose(0, 1), None, [1], [0], [1], True, [0], 1),
                T.convolution(x.reshape(2, 3, 5, 1).expand(2, 3, 5, 3), w2, None, [1, 1],
                              [0, 0], [1, 1], False, [0, 0], 1)]
        sum(o.sum() for o in outs[:5]).backward()
        return (outs, [_node(o) for o in outs], x.grad, w.grad,
                catch(T.constant_pad_nd, x, (1,)),
                catch(T.convolution, x, w, None, 1, [0], [1], False, [0], 1),
                catch(T.convolution, x, w, None, [1], "same", [1], False, [0], 1))
    same(f)


def test_native_norms():
    def f(T):
        x = _randn(T, 2, 4, 3).requires_grad_()
        ln = T.native_layer_norm(x, (3,), None, None, 1e-5)
        ln2 = T.native_layer_norm(x, [4, 3], T.ones(4, 3, dtype=T.float64),
                                  T.zeros(4, 3, dtype=T.float64), 1e-5)
        rm, rv = T.zeros(4, dtype=T.float64), T.ones(4, dtype=T.float64)
        bn = T.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
        bn_eval = T.native_batch_norm(x, T.ones(4, dtype=T.float64), None, rm, rv, False, 0.1,
                                      1e-5)
        gn = T.native_group_norm(x, None, None, 2, 4, 3, 2, 1e-5)
        (ln[0].sum() + ln2[0].pow(2).sum() + bn[0].pow(3).sum() + bn_eval[0].sum()
         + gn[0].pow(2).sum()).backward()
        return ([type(r).__name__ for r in (ln, bn, gn)], ln, ln2, bn, bn_eval, rm, rv,
                gn[0], [_node(t) for t in ln + bn], _node(gn[0]), x.grad,
                catch(T.native_layer_norm, x, (5,), None, None, 1e-5))
    same(f)


def test_native_dropout_and_channel_shuffle():
    def f(T):
        x = T.ones(200, 50, requires_grad=True)
        out, mask = T.native_dropout(x, 0.3, True)
        out.sum().backward()
        kept = mask.float().mean().item()
        ev, ev_mask = T.native_dropout(x, 0.3, False)
        return (mask.dtype, _node(out), abs(kept - 0.7) < 0.02,
                bool((out == mask.float() / 0.7).all()), bool((x.grad == out).all()),
                ev, ev_mask, _node(ev), T.native_dropout(x, 1.0, True)[0].sum(),
                T.native_channel_shuffle(T.arange(8.).reshape(1, 4, 2), 2),
                catch(T.native_channel_shuffle, T.ones(2, 3, 4), 2))
    same(f)


def test_ctc_loss_native_arguments():
    def f(T):
        lp = _randn(T, 5, 2, 4).log_softmax(2).requires_grad_()
        tg = T.tensor([[1, 2], [1, 1]])
        outs = [T.ctc_loss(lp, tg, [5, 5], [2, 2]), T.ctc_loss(lp, tg, [5, 5], [2, 2], 0, 0),
                T.ctc_loss(lp, tg, T.tensor([5, 4]), T.tensor([2, 1]), 0, 2),
                T.ctc_loss(lp, tg, [5, 5], [2, 2], 3, 1, True)]
        sum(o.sum() for o in outs).backward()
        return outs, [_node(o) for o in outs], lp.grad
    same(f)
