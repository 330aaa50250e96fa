"""F.ctc_loss / nn.CTCLoss against torch: values, gradients, argument forms, blanks and repeats, unbatched input, errors.
"""
import numpy as np
import pytest
from differential import catch, same, warnings_of


# ----------------------------------------------------------------------------- CTC loss
def _ctc_data(T, dtype="float32", n_frames=8, n_batch=4, n_classes=5, max_len=3, seed=0,
              normalised=True, blank=0):
    """Log-probabilities (T, N, C) requiring grad, padded targets (N, S) avoiding `blank`."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_frames, n_batch, n_classes))
    if normalised:
        x = x - np.log(np.exp(x).sum(-1, keepdims=True))
    labels = np.array([c for c in range(n_classes) if c != blank])
    targets = labels[rng.integers(0, len(labels), (n_batch, max_len))]
    return (T.tensor(x, dtype=getattr(T, dtype), requires_grad=True),
            T.tensor(targets, dtype=T.int64))


def _concatenated(T, targets, target_lengths):
    return T.cat([targets[i, :int(n)] for i, n in enumerate(target_lengths)])


def _ctc_run(T, lp, targets, il, tl, **kw):
    """The loss, its grad_fn name and the gradient of (a weighted sum of) it."""
    loss = T.nn.functional.ctc_loss(lp, targets, il, tl, **kw)
    weights = T.linspace(0.5, 1.5, loss.numel(), dtype=loss.dtype).reshape(loss.shape)
    (grad,) = T.autograd.grad((loss * weights).sum(), lp)
    return loss, type(loss.grad_fn).__name__, grad


CTC_LENGTHS = {
    "full": ([8, 8, 8, 8], [3, 3, 3, 3]),
    "varied": ([8, 6, 5, 7], [3, 1, 2, 0]),
    # items 0 and 2 cannot fit their target (3 labels, 2 of them repeated, need 4 frames):
    # their loss is inf and their gradient nan, unless zero_infinity
    "impossible": ([2, 6, 3, 0], [3, 2, 3, 1]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("lengths", list(CTC_LENGTHS))
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_values_and_grads(dtype, reduction, lengths, zero_infinity):
    il, tl = CTC_LENGTHS[lengths]

    def scenario(T):
        lp, targets = _ctc_data(T, dtype)
        if lengths == "impossible":
            targets[0, 1] = targets[0, 0]                  # a repeat needs a blank between
        return _ctc_run(T, lp, targets, il, tl, reduction=reduction,
                        zero_infinity=zero_infinity)
    same(scenario, **({} if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)))


@pytest.mark.parametrize("form", ["tensor", "list", "tuple", "int32", "concatenated"])
def test_ctc_loss_argument_forms(form):
    def scenario(T):
        lp, targets = _ctc_data(T, seed=1)
        il, tl = [8, 7, 5, 6], [2, 3, 1, 2]
        if form == "tensor":
            il, tl = T.tensor(il), T.tensor(tl)
        elif form == "tuple":
            il, tl = tuple(il), tuple(tl)
        elif form == "int32":
            il, tl = T.tensor(il, dtype=T.int32), T.tensor(tl, dtype=T.int32)
            targets = targets.int()
        elif form == "concatenated":
            targets = _concatenated(T, targets, tl)
        return _ctc_run(T, lp, targets, il, tl, reduction="none")
    same(scenario)


@pytest.mark.parametrize("blank", [0, 2, 4])
def test_ctc_loss_blank_index_and_unnormalised_input(blank):
    def scenario(T):
        lp, targets = _ctc_data(T, "float64", blank=blank, normalised=False, seed=blank)
        return [_ctc_run(T, lp, targets, [8, 6, 7, 3], [3, 2, 3, 1], blank=blank,
                         reduction=r) for r in ("none", "mean")]
    same(scenario, rtol=1e-10, atol=1e-12)


def test_ctc_loss_repeats_and_blank_labels_in_target():
    def scenario(T):
        lp, _ = _ctc_data(T, "float64", n_frames=7)
        targets = T.tensor([[1, 1, 1], [2, 2, 3], [0, 2, 0], [3, 1, 3]])
        return _ctc_run(T, lp, targets, [7, 5, 7, 6], [3, 3, 3, 3], reduction="none")
    same(scenario, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss_unbatched(reduction):
    def scenario(T):
        lp, targets = _ctc_data(T, n_batch=1)
        lp2 = lp.detach()[:, 0].requires_grad_()
        out = [_ctc_run(T, lp2, targets[0], [8], [3], reduction=reduction),
               _ctc_run(T, lp2, targets[0, :2], T.tensor(8), T.tensor(2), reduction=reduction),
               _ctc_run(T, lp2, targets, [6], [3], reduction=reduction)]
        return out
    same(scenario)


def test_ctc_loss_module_and_grad_chain():
    def scenario(T):
        lp, targets = _ctc_data(T)
        out = []
        for kw in [dict(), dict(blank=2, reduction="sum", zero_infinity=True),
                   dict(reduction="none")]:
            m = T.nn.CTCLoss(**kw)
            loss = m(lp, targets, [8, 8, 8, 8], [3, 2, 1, 3])
            node, chain = loss.grad_fn, []
            while node is not None:
                chain.append(node.name())
                node = next((n for n, _ in node.next_functions
                             if n is not None and "Accumulate" not in n.name()), None)
            out.append([repr(m), m.blank, m.reduction, m.zero_infinity, loss, chain])
        return out
    same(scenario)


def test_ctc_loss_double_backward_raises():
    def scenario(T):
        lp, targets = _ctc_data(T)
        loss = T.nn.functional.ctc_loss(lp, targets, [8, 7, 6, 5], [3, 2, 1, 3])
        (g,) = T.autograd.grad(loss, lp, create_graph=True)
        return g.requires_grad, g.grad_fn.name(), catch(lambda: g.sum().backward())
    same(scenario)


def test_ctc_loss_no_grad_input():
    def scenario(T):
        lp, targets = _ctc_data(T)
        loss = T.nn.functional.ctc_loss(lp.detach(), targets, [8, 7, 6, 5], [3, 2, 1, 3],
                                        reduction="none")
        return loss, loss.requires_grad, loss.grad_fn is None
    same(scenario)


def test_ctc_loss_errors():
    def scenario(T):
        F = T.nn.functional
        lp, tg = _ctc_data(T, n_batch=3, n_frames=6)
        il, tl = [6, 5, 4], [3, 2, 3]
        t = T.tensor
        cases = [
            (lp, tg, il, tl, dict(reduction="avg")),
            (lp, tg, t(il), tl, {}), (lp, tg, il, t(tl), {}), (lp, tg, 6, 3, {}),
            (lp, tg, (6, 5, 4), t(tl), {}), (lp, tg, [6.0, 5, 4], tl, {}),
            (lp, tg, None, t(tl), {}), (lp, tg, t(il), t(tl), dict(blank=1.5)),
            (lp, tg, t([6.0, 5, 4]), t(tl), {}), (lp, tg, t(il), t([3.0, 2, 3]), {}),
            (lp, tg, t([True] * 3), t(tl), {}),
            (lp.long(), tg, il, tl, {}), (lp.half(), tg, il, tl, dict(blank=9)),
            (lp.double().to(T.complex128), tg, il, tl, {}),
            (lp[:0], tg, il, tl, dict(blank=9)), (lp[:, :0], tg, il, tl, {}),
            (lp[None], tg[None], il, tl, {}), (lp[0, 0], tg, il, tl, {}),
            (lp, tg[None], il, tl, dict(blank=9)), (lp, tg[0, 0], il, tl, {}),
            (lp, tg, il, tl, dict(blank=5)), (lp, tg, il, tl, dict(blank=-1)),
            (lp, tg, [6, 5], [3, 2], {}), (lp, tg, il, [3, 2], {}),
            (lp, tg, [6, 5], [-1, 2, 3], {}),
            (lp, tg, [-1, 5, 4], [4, -1, 3], {}), (lp, tg, [7, 5, 4], [4, 2, 3], {}),
            (lp, tg.flatten()[:7], [7, 5, 4], tl, {}), (lp, tg.flatten(), il, [3, -1, 3], {}),
            (lp, tg, [6, 5, 7], tl, {}), (lp, tg, [6, -2, 4], tl, {}),
            (lp[:, 0], tg[0], [6], [2], {}), (lp[:, 0], tg[0], [6, 5], [3, 3], {}),
        ]
        return [catch(F.ctc_loss, a, b, c, d, **kw) for a, b, c, d, kw in cases]
    same(scenario)
