"""Lazy modules (LazyLinear, LazyConv1d/2d/3d, LazyBatchNorm1d/2d/3d) and their placeholders
(UninitializedParameter / UninitializedBuffer) against PyTorch."""
import copy
import pickle

import numpy as np
import pytest
import torch

import ember
from nn_helpers import assert_close, copy_weights, em
from differential import catch, same, warnings_of
import io
from nn_helpers import param_grads as _grads

RNG = np.random.default_rng(5)


def _use_error_tail(fn):
    """The part of the 'uninitialized parameter' error after the operation's name."""
    result = catch(fn)
    assert isinstance(result, tuple) and result[0] == "raised", result
    return result[1], result[2].split(". ", 1)[1].replace("torch.", "ember.")


LAZY = [
    ("LazyLinear", (3,), {}, (2, 5)),
    ("LazyLinear", (4,), dict(bias=False), (2, 3, 6)),
    ("LazyConv1d", (4, 3), dict(stride=2), (2, 6, 9)),
    ("LazyConv1d", (4, 3), dict(bias=False), (6, 9)),                 # unbatched
    ("LazyConv2d", (4, 3), dict(groups=2, padding=1), (1, 6, 5, 5)),
    ("LazyConv3d", (2, (1, 2, 3)), dict(stride=2, padding=1, dilation=2,
                                        padding_mode="circular"), (1, 3, 4, 5, 6)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm1d", (), dict(bias=False, momentum=None), (4, 3, 5)),
    ("LazyBatchNorm2d", (), dict(affine=False), (2, 3, 4, 4)),
    ("LazyBatchNorm2d", (), dict(affine=False, track_running_stats=False), (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), dict(eps=1e-3), (2, 3, 2, 3, 4)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY)
def test_lazy_module_before_and_after_its_first_forward(name, args, kwargs, shape):
    x = RNG.standard_normal(shape)

    def scenario(T):
        m = getattr(T.nn, name)(*args, **kwargs)
        before = [repr(m), type(m).__name__, m.has_uninitialized_params(),
                  [(k, repr(v), type(v).__name__) for k, v in m.state_dict().items()],
                  [(k, type(p).__name__, p.requires_grad) for k, p in m.named_parameters()],
                  [(k, type(b).__name__) for k, b in m.named_buffers()]]
        placeholders = list(m.parameters())
        y = m(T.tensor(x, dtype=T.float32))
        after = [repr(m), type(m).__name__, m.has_uninitialized_params()
                 if hasattr(m, "has_uninitialized_params") else "gone",
                 [(k, tuple(v.shape), v.dtype) for k, v in m.state_dict().items()],
                 [type(p).__name__ for p in m.parameters()],
                 all(a is b for a, b in zip(placeholders, m.parameters())),
                 len(m._forward_pre_hooks), tuple(y.shape), y.dtype]
        return before, after
    same(scenario)


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_materialized_lazy_module_computes_like_torch(name, args, kwargs, shape, dtype):
    tm = getattr(torch.nn, name)(*args, dtype=dtype, **kwargs)
    emod = getattr(ember.nn, name)(*args, dtype=em(torch.zeros(0, dtype=dtype)).dtype,
                                   **kwargs)
    x = torch.tensor(RNG.standard_normal(shape), dtype=dtype)
    tm(x)
    emod(em(x))
    assert type(emod).__name__ == type(tm).__name__
    copy_weights(tm, emod)            # strict load: same names and shapes
    t_in = x.clone().requires_grad_(True)
    e_in = em(t_in, requires_grad=True)
    t_out, e_out = tm(t_in), emod(e_in)
    assert_close(e_out, t_out)
    g = RNG.standard_normal(tuple(t_out.shape))
    t_out.backward(torch.tensor(g, dtype=dtype))
    e_out.backward(ember.tensor(g, dtype=e_out.dtype))
    assert_close(e_in.grad, t_in.grad)
    e_params = dict(emod.named_parameters())
    for k, p in tm.named_parameters():
        assert_close(e_params[k].grad, p.grad, what=k)
    for (k, b), (_, eb) in zip(tm.named_buffers(), emod.named_buffers()):
        assert_close(eb, b, what=k)


def test_materialized_parameters_get_the_default_initialisation():
    ember.manual_seed(0)
    m = ember.nn.LazyLinear(50)
    m(ember.ones(2, 16))
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert 0.2 < np.abs(w).max() <= 0.25 and 0.2 < np.abs(b).max() <= 0.25   # U(+-1/sqrt(16))
    bn = ember.nn.LazyBatchNorm1d()
    bn.eval()
    bn(ember.ones(2, 3))
    assert bn.weight.tolist() == [1.0] * 3 and bn.bias.tolist() == [0.0] * 3
    assert bn.running_mean.tolist() == [0.0] * 3 and bn.running_var.tolist() == [1.0] * 3


def test_placeholders_refuse_to_be_used_like_torch():
    def scenario(T):
        w = T.nn.LazyLinear(3).weight
        return [repr(w), str(w), w.requires_grad, w.dtype, str(w.device), w.is_leaf, w.grad,
                tuple(w.size()), isinstance(w, T.nn.Parameter),
                T.nn.parameter.is_lazy(w), catch(lambda: w.shape)]
    same(scenario)
    for op in (lambda w: w + 1, lambda w: w.sum(), lambda w: w.numel(), lambda w: w.dim(),
               lambda w: w.requires_grad_(False)):
        def use(T):
            return _use_error_tail(lambda: op(T.nn.LazyLinear(3).weight))
        same(use)


def test_standalone_placeholders_materialize_like_torch():
    def scenario(T):
        p = T.nn.parameter.UninitializedParameter(dtype=T.float64)
        b = T.nn.parameter.UninitializedBuffer()
        seen = [repr(p), p.requires_grad, p.dtype, repr(b), b.requires_grad]
        p.materialize((2, 3))
        b.materialize((4,), dtype=T.float64)
        return seen + [type(p).__name__, tuple(p.shape), p.requires_grad, p.dtype,
                       type(b).__name__, tuple(b.shape), b.dtype,
                       T.nn.parameter.is_lazy(p), T.nn.parameter.is_lazy(b),
                       catch(lambda: T.nn.parameter.UninitializedParameter(dtype=T.int64))]
    same(scenario)


def test_dtype_conversion_before_the_first_forward():
    def scenario(T):
        lin = T.nn.LazyLinear(3).double()
        seen = [lin.weight.dtype]
        lin(T.ones(2, 5, dtype=T.float64))
        bn = T.nn.LazyBatchNorm3d().to(T.float64)
        seen += [lin.weight.dtype, bn.running_mean.dtype, bn.weight.dtype,
                 bn.num_batches_tracked.dtype]
        bn.float()
        return seen + [bn.running_var.dtype,
                       _use_error_tail(lambda: T.nn.LazyLinear(3).requires_grad_())]
    same(scenario)


def test_errors_on_the_first_forward_match_torch():
    def scenario(T):
        return [catch(lambda: T.nn.LazyConv2d(4, 3, groups=2)(T.ones(1, 5, 5, 5))),
                catch(lambda: T.nn.LazyConv2d(4, 3)(T.ones(5, 5))),
                catch(lambda: T.nn.LazyConv3d(4, 3)(T.ones(1, 2, 5, 5, 5, 5))),
                catch(lambda: T.nn.LazyBatchNorm2d()(T.ones(2, 3, 4))),
                catch(lambda: T.nn.LazyBatchNorm1d()(T.ones(2, 3, 4, 5)))]
    same(scenario)


def test_load_state_dict_into_a_lazy_module_like_torch():
    def scenario(T):
        lin = T.nn.LazyLinear(3)
        result = [repr(lin.load_state_dict(T.nn.Linear(5, 4).state_dict())), repr(lin),
                  type(lin).__name__, tuple(lin.weight.shape), type(lin.weight).__name__]
        lin = T.nn.LazyLinear(3)
        lin.load_state_dict(T.nn.Linear(5, 3).state_dict())
        result.append(catch(lambda: lin(T.ones(2, 6))))
        lin(T.ones(2, 5))
        conv = T.nn.LazyConv2d(4, 3)
        conv.load_state_dict(T.nn.Conv2d(2, 4, 3).state_dict())
        conv(T.ones(1, 2, 5, 5))
        bn = T.nn.LazyBatchNorm1d()
        bn.load_state_dict(T.nn.BatchNorm1d(3).state_dict())
        bn(T.ones(2, 3))
        return result + [repr(lin), repr(conv), repr(bn),
                         catch(lambda: T.nn.Linear(5, 3).load_state_dict(
                             T.nn.LazyLinear(3).state_dict()))]
    same(scenario)


def test_copies_pickles_and_optimizers_of_lazy_modules():
    lin = ember.nn.LazyLinear(3, dtype=ember.float64)
    twin = copy.deepcopy(lin)
    twin(ember.ones(2, 4, dtype=ember.float64))
    assert type(lin).__name__ == "LazyLinear" and lin.has_uninitialized_params()
    assert type(twin).__name__ == "Linear" and tuple(twin.weight.shape) == (3, 4)
    bn = pickle.loads(pickle.dumps(ember.nn.LazyBatchNorm1d(dtype=ember.float64)))
    assert repr(bn.running_mean) == "<UninitializedBuffer>" and bn.running_mean.persistent
    bn(ember.ones(2, 3, dtype=ember.float64))
    assert type(bn).__name__ == "BatchNorm1d" and bn.running_mean.dtype is ember.float64
    # an optimizer built before the first forward trains the materialized parameters
    net = ember.nn.Sequential(ember.nn.LazyLinear(3), ember.nn.ReLU(), ember.nn.LazyLinear(1))
    opt = ember.optim.SGD(net.parameters(), lr=0.1)
    x = ember.ones(4, 5)
    net(x)
    before = net[0].weight.detach().clone()
    net(x).sum().backward()
    opt.step()
    assert not bool((net[0].weight == before).all())


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


# ----------------------------------------------------------------------------- lazy modules
@pytest.mark.parametrize("d,kw", [(1, dict()), (1, dict(stride=2, output_padding=1)),
                                  (1, dict(groups=2, bias=False)),
                                  (2, dict(stride=2, padding=1, dilation=2)),
                                  (2, dict(groups=2, output_padding=(1, 0), stride=(2, 1))),
                                  (3, dict(stride=1, padding=1))])
def test_lazy_conv_transpose(d, kw):
    def scenario(T):
        cls = getattr(T.nn, f"LazyConvTranspose{d}d")
        m = cls(4, 3, **kw)
        before = [repr(m), repr(m.weight), str(list(m.state_dict())), m.in_channels]
        x = _x(T, (2, 4) + (5,) * d, requires_grad=True)
        m = m.double()
        m(x)                                   # materializes
        _load_same(T, m)
        y = m(x)
        y.backward(_x(T, tuple(y.shape), seed=7))
        return before, repr(m), type(m).__name__, y, x.grad, _grads(m), tuple(m.weight.shape)
    same(scenario)


def test_lazy_conv_transpose_errors():
    def scenario(T):
        nn = T.nn
        return [catch(lambda: nn.LazyConvTranspose1d(4, 3, groups=2)(_x(T, (3, 7), "float32"))),
                catch(lambda: nn.LazyConvTranspose1d(4, 3)(_x(T, (2, 3, 4, 7), "float32"))),
                catch(lambda: nn.LazyConvTranspose2d(4, 3, padding_mode="reflect")),
                # unbatched input: in_channels from dim 0
                tuple(nn.LazyConvTranspose1d(4, 3, groups=2)(_x(T, (4, 7), "float32")).shape)]
    same(scenario)


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("kw", [dict(), dict(affine=False), dict(track_running_stats=False),
                                dict(affine=False, track_running_stats=False),
                                dict(bias=False, momentum=0.3)])
def test_lazy_instance_norm(d, kw):
    def scenario(T):
        m = getattr(T.nn, f"LazyInstanceNorm{d}d")(**kw)
        before = [repr(m), str(list(m.state_dict()))]
        x = _x(T, (2, 3) + (4,) * d, "float32", requires_grad=True)
        y, warns = warnings_of(lambda: m(x))
        y.backward(_x(T, tuple(y.shape), "float32", seed=3))
        return before, repr(m), type(m).__name__, y, x.grad, warns, m.state_dict(), _grads(m)
    same(scenario)


def test_lazy_instance_norm_unbatched():
    # the lazy norm reads num_features from dim 1 even for an unbatched input, as torch does
    def scenario(T):
        nn = T.nn
        return [catch(lambda: nn.LazyInstanceNorm1d(affine=True)(_x(T, (4, 5), "float32"))),
                catch(lambda: nn.LazyInstanceNorm2d()(_x(T, (3, 4, 5), "float32"))),
                catch(lambda: nn.LazyInstanceNorm1d()(_x(T, (2, 4, 5, 6), "float32"))),
                warnings_of(lambda: nn.LazyInstanceNorm1d(affine=False, track_running_stats=False)(
                    _x(T, (4, 5), "float32")))]
    same(scenario)


# ---------------------------------------------------------------------------- lazy state_dict
def _lazy_state(T):
    m = T.nn.LazyLinear(3)
    m.register_buffer("running", T.nn.parameter.UninitializedBuffer())
    return m.state_dict()


def _describe(state):
    return {k: (type(v).__name__, v.requires_grad) for k, v in state.items()}


@pytest.mark.parametrize("writer,reader", [(ember, torch), (torch, ember), (ember, ember)])
def test_save_lazy_state_dict(writer, reader):
    state = _lazy_state(writer)
    buf = io.BytesIO()
    writer.save(state, buf)
    buf.seek(0)
    loaded = reader.load(buf, weights_only=False)
    assert _describe(loaded) == _describe(_lazy_state(torch)) == {
        "weight": ("UninitializedParameter", True), "bias": ("UninitializedParameter", True),
        "running": ("UninitializedBuffer", False)}
    assert isinstance(loaded["weight"], reader.nn.parameter.UninitializedParameter)
    buf.seek(0)
    # a placeholder is not one of the types a weights-only load accepts, in torch as in ember
    refused = catch(reader.load, buf)
    assert refused[:2] == ("raised", "UnpicklingError")
    assert "UninitializedParameter" in refused[2]
