"""Differential audit of ember.nn and ember.optim against torch: the discrepancies found by
probing ordinary-but-unusual user code, each kept as a test (values, errors and warnings)."""
import numpy as np
import pytest

from differential import catch, same, warnings_of


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _net(T):
    """Linear -> ReLU -> BatchNorm1d with deterministic weights."""
    m = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.ReLU(), T.nn.BatchNorm1d(2))
    with T.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(T.arange(p.numel(), dtype=T.float32).reshape(p.shape) + i)
    return m


# ---------------------------------------------------------------- load_state_dict
def test_load_state_dict_assign_keeps_the_checkpoint_tensors():
    def f(T):
        m = _net(T)
        sd = {k: v.clone() + 1 for k, v in m.state_dict().items()}
        sd["0.bias"] = T.nn.Parameter(sd["0.bias"], requires_grad=False)
        result = m.load_state_dict(sd, assign=True)
        w = m[0].weight
        return (repr(result), type(w).__name__, w.requires_grad, w,
                m[0].bias.requires_grad, type(m[0].bias).__name__, m[2].running_mean,
                m[2].running_mean is sd["2.running_mean"], w is sd["0.weight"])
    same(f)


def test_load_state_dict_assign_keeps_the_checkpoint_dtype():
    def f(T):
        m = _net(T)
        sd = {k: v.double() if v.is_floating_point() else v for k, v in m.state_dict().items()}
        m.load_state_dict(sd, assign=True)
        kept = _net(T)
        kept.load_state_dict(sd)
        return m[0].weight.dtype, m[2].running_mean.dtype, kept[0].weight.dtype
    same(f)


def test_load_state_dict_accepts_a_one_element_vector_for_a_scalar():
    def f(T):
        m = _net(T)
        sd = m.state_dict()
        sd["2.num_batches_tracked"] = T.tensor([7])
        m.load_state_dict(sd)
        return m[2].num_batches_tracked
    same(f)


# ---------------------------------------------------------------- layers: errors
def test_feature_dropout_of_a_vector():
    def f(T):
        F = T.nn.functional
        x = T.ones(3)
        return [warnings_of(lambda: catch(lambda: fn(x, 0.5, training=tr).shape))
                for fn in (F.dropout2d, F.dropout3d) for tr in (True, False)]
    same(f)


def test_group_norm_affine_size_errors():
    def f(T):
        F = T.nn.functional
        x = T.ones(2, 6, 3)
        return [catch(F.group_norm, x, 2, w, b) for w, b in [
            (T.ones(4), T.ones(6)), (T.ones(6), T.ones(4)), (None, T.ones(4)),
            (T.ones(2, 3), None), (T.ones(6, 1), None), (T.ones(6), T.ones(6))]] + \
            [catch(T.nn.GroupNorm(2, 4), T.ones(2, 6, 3))]
    same(f)


@pytest.mark.parametrize("cell", ["LSTMCell", "GRUCell", "RNNCell"])
def test_rnn_cell_hidden_state_checks(cell):
    def f(T):
        c = getattr(T.nn, cell)(3, 4)

        def h(*shape):
            return (T.ones(*shape), T.ones(2, 4)) if cell == "LSTMCell" else T.ones(*shape)
        return [catch(lambda: type(c(T.ones(*x), h(*s))).__name__) for x, s in [
            ((2, 3), (2, 5)), ((2, 3), (3, 5)), ((3,), (5,)), ((2, 3), (2, 4, 1)), ((3,), (2, 4)),
            ((2, 3), (4,)), ((2, 3), (2,)), ((2, 4), (2, 4, 1)), ((2, 4), (2, 4)),
            ((2, 2, 3), (2, 3, 4)), ((2, 3), (2, 4))]]
    same(f)


def test_lstm_cell_second_state_checks():
    def f(T):
        c = T.nn.LSTMCell(3, 4)
        x = T.ones(2, 3)
        return [catch(c, x, (T.ones(2, 4), s)) for s in
                (T.ones(2, 5), T.ones(2, 5, 1), T.ones(3, 4))]
    same(f)


# ---------------------------------------------------------------- interpolate
@pytest.mark.parametrize("shape", [(1, 2, 7), (2, 1, 5, 6), (1, 1, 3, 4, 5)])
@pytest.mark.parametrize("kw", [dict(scale_factor=1.7), dict(scale_factor=0.6), dict(size=11),
                                dict(size=2), dict(scale_factor=2), dict(scale_factor=3),
                                dict(scale_factor=1.3, recompute_scale_factor=True)])
def test_interpolate_nearest_exact(shape, kw):
    x = randn(*shape)

    def f(T):
        t = T.tensor(x, requires_grad=True)
        y = T.nn.functional.interpolate(t, mode="nearest-exact", **kw)
        (y * T.arange(y.numel()).reshape(y.shape)).sum().backward()
        return y, t.grad, type(y.grad_fn).__name__
    same(f)


def test_upsample_module_nearest_exact():
    x = randn(1, 2, 3, 5)
    same(lambda T: (T.nn.Upsample(scale_factor=1.5, mode="nearest-exact")(T.tensor(x)),
                    repr(T.nn.Upsample(scale_factor=1.5, mode="nearest-exact"))))


# ---------------------------------------------------------------- losses
@pytest.mark.parametrize("loss", ["MSELoss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss",
                                  "BCEWithLogitsLoss", "L1Loss", "KLDivLoss"])
def test_mean_loss_of_nothing_is_nan_without_warnings(loss):
    def f(T):
        fn = getattr(T.nn, loss)(reduction="mean" if loss != "KLDivLoss" else "batchmean")
        return warnings_of(lambda: catch(fn, T.zeros(0), T.zeros(0)))
    same(f)


def test_cross_entropy_probability_target_refuses_ignore_index():
    x = randn(3, 4)
    same(lambda T: [catch(T.nn.functional.cross_entropy, T.tensor(x),
                          T.softmax(T.tensor(x), 1), ignore_index=i) for i in (1, -100)])


@pytest.mark.parametrize("smoothing", [-0.1, -1.0, float("nan"), 1.0, 1.5])
def test_cross_entropy_label_smoothing_out_of_range(smoothing):
    x = randn(3, 4)
    same(lambda T: [catch(T.nn.functional.cross_entropy, T.tensor(x), y,
                          label_smoothing=smoothing)
                    for y in (T.tensor([0, 1, 2]), T.softmax(T.tensor(x) * 2, 1))])


def test_binary_cross_entropy_range_and_dtype_errors():
    def f(T):
        F = T.nn.functional
        h = T.full((2,), 0.5)
        return [catch(F.binary_cross_entropy, x, y) for x, y in [
            (T.tensor([0.5, 1.5]), T.tensor([0., 1.])), (T.tensor([0.5, 0.5]), T.tensor([2., -1.])),
            (T.tensor([0.5, float("nan")]), T.tensor([1., 0.])),
            (T.tensor([0.5, 0.5]), T.tensor([float("nan"), 0.])),
            (h.double(), h), (h, h.double()), (h, h.half())]] + \
            [catch(F.binary_cross_entropy, h, h, weight=h.double())]
    same(f)


def test_binary_cross_entropy_weight_broadcast_errors():
    def f(T):
        x = T.full((2, 3), 0.5)
        return [catch(T.nn.functional.binary_cross_entropy, x, x, weight=T.ones(*s))
                for s in [(4,), (2, 1), (1, 3), (3, 2, 3), (2, 2, 3), (3, 1), (5, 3), (5, 4)]]
    same(f)


def test_bce_with_logits_weight_shape_errors_and_result_dtype():
    def f(T):
        F = T.nn.functional
        x, y = T.zeros(2, 3, 4), T.zeros(2, 3, 4)
        out = [catch(F.binary_cross_entropy_with_logits, x, y, pos_weight=T.ones(3)),
               catch(F.binary_cross_entropy_with_logits, x, y, weight=T.ones(3))]
        h = T.full((2,), 0.3)
        for a, b in [(h.double(), h), (h, h.double())]:
            for reduction in ("mean", "none"):
                a, b = a.clone().requires_grad_(), b.clone().requires_grad_()
                loss = F.binary_cross_entropy_with_logits(a, b, pos_weight=T.tensor([2., 3.]),
                                                          reduction=reduction)
                out += [loss, T.autograd.grad(loss.sum(), (a, b))]
        return out
    same(f)


def test_soft_margin_loss_broadcasting():
    same(lambda T: [catch(T.nn.functional.soft_margin_loss, T.zeros(a), T.ones(b)) for a, b in
                    [((3,), (3, 1)), ((3, 1), (3,)), ((3,), (4,)), ((1, 3), (2, 3)),
                     ((2, 3), (3,))]])


# ---------------------------------------------------------------- optim
@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adamax", "RAdam"])
@pytest.mark.parametrize("flags", [dict(foreach=True), dict(foreach=True, capturable=True),
                                   dict(foreach=False), dict()])
@pytest.mark.parametrize("lr", [0.01, [0.01], [0.01, 0.02]])
def test_tensor_lr_with_foreach(name, flags, lr):
    def f(T):
        p = T.nn.Parameter(T.ones(2))
        rate = T.tensor(lr) if isinstance(lr, list) else lr
        return catch(lambda: repr(getattr(T.optim, name)([p], lr=rate, **flags)))
    same(f)


def _cyclic_run(T, opt_name, opt_kw, kw, steps=14):
    p = T.nn.Parameter(T.ones(2))
    opt = getattr(T.optim, opt_name)([p], lr=0.5, **opt_kw)
    sched = T.optim.lr_scheduler.CyclicLR(opt, **kw)

    def seen():
        g = opt.param_groups[0]
        return sched.get_last_lr(), g["lr"], g.get("momentum"), g.get("betas")
    out = [seen()]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(seen())
    return out, sched.state_dict(), sorted(opt.param_groups[0])


@pytest.mark.parametrize("opt_name,opt_kw,kw", [
    ("SGD", dict(momentum=0.9), dict(base_lr=0.1, max_lr=1.0, step_size_up=3)),
    ("SGD", dict(momentum=0.9), dict(base_lr=0.1, max_lr=1.0, step_size_up=2, step_size_down=5,
                                     mode="triangular2")),
    ("SGD", dict(momentum=0.9), dict(base_lr=0.1, max_lr=1.0, step_size_up=3, mode="exp_range",
                                     gamma=0.9)),
    ("Adam", dict(), dict(base_lr=0.1, max_lr=1.0, step_size_up=3, base_momentum=0.7,
                          max_momentum=0.95)),
    ("SGD", dict(), dict(base_lr=0.1, max_lr=1.0, step_size_up=3, cycle_momentum=False)),
    ("SGD", dict(momentum=0.9), dict(base_lr=[0.1], max_lr=[1.0], step_size_up=3,
                                     scale_fn=lambda x: 0.5, scale_mode="iterations")),
])
def test_cyclic_lr(opt_name, opt_kw, kw):
    same(lambda T: _cyclic_run(T, opt_name, opt_kw, kw))


def test_cyclic_lr_errors():
    def f(T):
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([p], lr=0.5, momentum=0.9)
        C = T.optim.lr_scheduler.CyclicLR
        return (catch(lambda: repr(C(opt, 0.1, 1.0, mode="foo"))),
                catch(lambda: repr(C(T.optim.Adagrad([p]), 0.1, 1.0))),
                catch(lambda: repr(C(opt, [0.1, 0.2], 1.0))),
                catch(lambda: C(opt, 0.1, 1.0, mode="foo", scale_fn=lambda x: 1.).get_last_lr()),
                catch(C, 3, 0.1, 1.0))
    same(f)


class _Halving:
    """A scale_fn object: CyclicLR saves its attributes in state_dict."""

    def __init__(self, k=0.5):
        self.k = k

    def __call__(self, x):
        return self.k ** x


def test_cyclic_lr_state_dict_of_a_callable_scale_fn():
    def f(T):
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([p], lr=0.5, momentum=0.9)
        sched = T.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, step_size_up=2, scale_fn=_Halving())
        for _ in range(3):
            opt.step()
            sched.step()
        state = sched.state_dict()
        other = _Halving(0.1)
        resumed = T.optim.lr_scheduler.CyclicLR(T.optim.SGD([p], lr=0.5, momentum=0.9), 0.1,
                                                1.0, step_size_up=2, scale_fn=other)
        resumed.load_state_dict(dict(state))
        return state["_scale_fn_custom"], other.k, resumed.last_epoch, resumed.get_last_lr()
    same(f)
