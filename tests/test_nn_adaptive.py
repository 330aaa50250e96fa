"""nn.AdaptiveLogSoftmaxWithLoss against torch: forward/backward, unbatched input, log_prob and predict, errors.
"""
import numpy as np
import pytest
from differential import catch, same, warnings_of


# ----------------------------------------------------------------------------- adaptive softmax
def _asm(T, in_features=8, n_classes=12, cutoffs=(3, 7), dtype="float32", **kw):
    """The module with weights copied from one NumPy draw (the same in both libraries)."""
    m = T.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs),
                                        dtype=getattr(T, dtype), **kw)
    rng = np.random.default_rng(3)
    with T.no_grad():
        for p in m.parameters():
            if p.numel():          # (div_value may leave a cluster with no hidden units)
                p.copy_(T.tensor(rng.standard_normal(tuple(p.shape))))
    return m


def _asm_input(T, n=6, in_features=8, dtype="float32", seed=4):
    rng = np.random.default_rng(seed)
    return T.tensor(rng.standard_normal((n, in_features)), dtype=getattr(T, dtype),
                    requires_grad=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", [dict(), dict(head_bias=True, div_value=2.0),
                                dict(cutoffs=(5,), n_classes=9)], ids=str)
def test_adaptive_log_softmax_forward_backward(dtype, kw):
    def scenario(T):
        m = _asm(T, dtype=dtype, **kw)
        x = _asm_input(T, dtype=dtype)
        n_classes = kw.get("n_classes", 12)
        target = T.tensor([0, n_classes - 1, 4, 2, 8 % n_classes, 6])
        out = m(x, target)
        out.loss.backward()
        return [type(out).__name__, out._fields, out.output, out.loss,
                type(out.output.grad_fn).__name__, type(out.loss.grad_fn).__name__, x.grad,
                [(name, p.grad) for name, p in m.named_parameters()], repr(m)]
    same(scenario, **({} if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)))


def test_adaptive_log_softmax_unbatched_single_row_and_errors():
    def scenario(T):
        m = _asm(T)
        x = _asm_input(T)
        single = m(x[:1], T.tensor([9]))
        unbatched = m(x[0], T.tensor(5))
        errors = [catch(m, x, T.tensor([0, 1])), catch(m, x[0], T.tensor([0])),
                  catch(m, x[0, :2], T.tensor([0, 1])), catch(m, x, T.tensor(1)),
                  catch(m, x, T.zeros(6, 1, dtype=T.int64)),
                  catch(m, x, T.tensor([0, 1, 2, 12, 3, -1])),
                  catch(m, x, T.tensor([0, 1, 2, 11, 3, 13]))]
        ctor = [catch(T.nn.AdaptiveLogSoftmaxWithLoss, 8, 10, c)
                for c in ([], [5, 3], [0, 4], [3, 10], [3, 3], [2.5, 4])]
        return single, unbatched, errors, ctor
    same(scenario)


def test_adaptive_log_softmax_log_prob_and_predict():
    def scenario(T):
        m = _asm(T, head_bias=True)
        x = _asm_input(T, n=10)
        log_prob = m.log_prob(x)
        out = [log_prob, log_prob.exp().sum(1), m.predict(x), log_prob.argmax(1)]
        # all rows in the shortlist, all rows in clusters
        with T.no_grad():
            m.head.bias.copy_(T.tensor([50.0, 0, 0, 0, 0]))
        out.append(m.predict(x))
        with T.no_grad():
            m.head.bias.copy_(T.tensor([0.0, 0, 0, 0, 50]))
        out.append(m.predict(x))
        out.append(type(m.log_prob(x).grad_fn).__name__)
        return out
    same(scenario)
