"""Module, Parameter and the containers against torch: registration, iteration, state dicts and
their errors, modes, hooks, dtype moves, copying and printing."""
import copy
import warnings
import pickle
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember
from nn_helpers import outcome, torch_repr, em, assert_close
import differential  # its same(); this file's own same() compares plain results
from differential import catch, warnings_of


def both(scenario):
    """Run scenario(lib) under torch and ember; return (ember_result, torch_result)."""
    return scenario(ember), scenario(torch)


def same(scenario):
    e, t = both(scenario)
    assert e == t, f"\nember: {e}\ntorch: {t}"
    return e


def text(x):
    return str(x).replace("torch.", "ember.").replace("torch Tensor", "ember Tensor")


def make_net(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)
            self.scale = nn.Parameter(lib.ones(4))
            self.register_buffer("count", lib.zeros(1))
            self.register_buffer("cache", lib.zeros(2), persistent=False)
            self.act = nn.ReLU()

        def forward(self, x):
            return self.act(self.fc(x)) * self.scale

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = nn.Sequential(nn.Linear(4, 2), nn.Tanh())
            self.shared = self.block.fc          # the same module twice
            self.none_param = None
            self.register_parameter("empty", None)

        def forward(self, x):
            return self.head(self.block(x))

    return Net()


# ---------------------------------------------------------------------------- Parameter
def test_parameter_repr_and_type():
    same(lambda T: repr(T.nn.Parameter(T.tensor([1.0, 2.0]))))
    same(lambda T: repr(T.nn.Parameter(T.tensor([[1.5, 2.0]]), requires_grad=False)))
    same(lambda T: repr(T.nn.Parameter()))
    e, t = both(lambda T: str(T.nn.Parameter(T.ones(2, dtype=T.float64))))
    assert e == text(t)
    same(lambda T: outcome(lambda: T.nn.Parameter(T.tensor([1, 2]))))
    p = ember.nn.Parameter(ember.ones(2))
    assert isinstance(p, ember.Tensor) and isinstance(p, ember.nn.Parameter)
    assert p.requires_grad and p.is_leaf
    for r in (p * 2, p + p, p.sum(), p[0], p.detach(), p.data, p.view(2)):
        assert type(r) is ember.Tensor


def test_parameter_shares_memory_and_version():
    t = ember.ones(3)
    p = ember.nn.Parameter(t)
    t.add_(1)
    assert p.tolist() == [2.0, 2.0, 2.0]
    assert p._version == t._version == 1


def test_parameter_deepcopy_and_pickle():
    p = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
    p.grad = ember.tensor([0.5, 0.5])
    q = copy.deepcopy(p)
    assert type(q) is ember.nn.Parameter and q.requires_grad and q.tolist() == [1.0, 2.0]
    assert q.grad.tolist() == [0.5, 0.5]
    q.data.add_(1)
    assert p.tolist() == [1.0, 2.0]
    r = pickle.loads(pickle.dumps(ember.nn.Parameter(ember.ones(2), requires_grad=False)))
    assert type(r) is ember.nn.Parameter and not r.requires_grad
    assert repr(r) == "Parameter containing:\ntensor([1., 1.])"


# ---------------------------------------------------------------------------- iteration
def test_named_members_and_state_dict_keys():
    def scenario(T):
        net = make_net(T)
        return dict(
            params=[n for n, _ in net.named_parameters()],
            params_dup=[n for n, _ in net.named_parameters(remove_duplicate=False)],
            params_local=[n for n, _ in net.block.named_parameters(recurse=False)],
            prefixed=[n for n, _ in net.named_parameters(prefix="model")],
            buffers=[n for n, _ in net.named_buffers()],
            children=[n for n, _ in net.named_children()],
            modules=[n for n, _ in net.named_modules()],
            modules_dup=[n for n, _ in net.named_modules(remove_duplicate=False)],
            n_params=len(list(net.parameters())),
            n_modules=len(list(net.modules())),
            n_children=len(list(net.children())),
            state=list(net.state_dict().keys()),
            state_prefix=list(net.state_dict(prefix="x.").keys()),
            metadata=list(net.state_dict()._metadata.items()),
            dir_has=[k in dir(net) for k in ("block", "head", "empty", "count", "forward")],
        )
    same(scenario)


def test_state_dict_detached_and_keep_vars():
    net = make_net(ember)
    sd = net.state_dict()
    assert not sd["block.fc.weight"].requires_grad
    assert type(sd["block.fc.weight"]) is ember.Tensor
    assert sd["block.fc.weight"].data_ptr() == net.block.fc.weight.data_ptr()
    kv = net.state_dict(keep_vars=True)
    assert kv["block.fc.weight"] is net.block.fc.weight


def test_get_submodule_parameter_buffer():
    def scenario(T):
        net = make_net(T)
        return [
            type(net.get_submodule("head.0")).__name__,
            net.get_submodule("") is net,
            tuple(net.get_parameter("block.fc.weight").shape),
            tuple(net.get_buffer("block.count").shape),
            outcome(lambda: net.get_submodule("block.nope")),
            outcome(lambda: net.get_submodule("block.scale")),
            outcome(lambda: net.get_parameter("block.nope")),
            outcome(lambda: net.get_parameter("block.count")),
            outcome(lambda: net.get_buffer("block.scale")),
        ]
    same(scenario)


# ---------------------------------------------------------------------------- registration
def test_registration_errors():
    def scenario(T):
        nn = T.nn
        m = nn.Linear(2, 3)
        cases = [
            lambda: setattr(m, "weight", T.ones(2)),
            lambda: m.register_parameter("a.b", None),
            lambda: m.register_parameter("", None),
            lambda: m.register_parameter(1, None),
            lambda: m.register_parameter("training", None),
            lambda: m.register_parameter("x", T.ones(1)),
            lambda: m.register_parameter("y", nn.Parameter(T.ones(2)) * 2),
            lambda: m.register_buffer("x", 3),
            lambda: m.register_buffer("weight", T.ones(1)),
            lambda: m.register_buffer("a.b", T.ones(1)),
            lambda: m.add_module("x", 3),
            lambda: m.add_module("a.b", nn.ReLU()),
            lambda: m.add_module("", nn.ReLU()),
            lambda: m.add_module(1, nn.ReLU()),
            lambda: m.add_module("weight", nn.ReLU()),
            lambda: m.foo,
            lambda: nn.Module()(1),
            lambda: m.train(3),
            lambda: nn.Module(3),
            lambda: nn.Module(x=3),
            lambda: nn.Hardtanh(2.0, 1.0),
        ]
        return [outcome(c) for c in cases]
    e, t = both(scenario)
    assert text(e) == text(t)


def test_assignment_moves_between_kinds():
    def scenario(T):
        nn = T.nn
        m = nn.Module()
        m.a = nn.Parameter(T.ones(1))
        m.register_buffer("b", T.zeros(1))
        m.c = nn.ReLU()
        out = [sorted(m._parameters), sorted(m._buffers), sorted(m._modules)]
        m.b = T.ones(2)                  # still a buffer
        m.a = None                       # a parameter slot set to None
        m.c = None
        out += [sorted(m._parameters), m.a, m._buffers["b"].tolist(), m.c]
        out.append(outcome(lambda: setattr(m, "b", 3)))
        out.append(outcome(lambda: setattr(m, "c", 3)))
        m.x = 5                           # plain attributes stay plain
        del m.b
        out += [m.x, "b" in m._buffers, outcome(lambda: m.b)]
        m.z = nn.Parameter(T.ones(1))
        out.append(outcome(lambda: setattr(m, "z", nn.Linear(1, 1))))
        m.y = nn.Linear(1, 1)
        m.y = nn.Parameter(T.ones(1))     # a module slot re-registered as a parameter
        out += [sorted(m._parameters), sorted(m._modules)]
        return out
    same(scenario)


def test_buffer_persistence():
    def scenario(T):
        m = T.nn.Module()
        m.register_buffer("p", T.ones(1))
        m.register_buffer("q", T.ones(1), persistent=False)
        m.register_buffer("n", None)
        m.x = T.nn.Buffer(T.ones(2))
        m.y = T.nn.Buffer(T.ones(1), persistent=False)
        return (list(m.state_dict().keys()), [n for n, _ in m.named_buffers()],
                type(m.x).__name__, m.x.requires_grad, repr(m.y))
    same(scenario)


# ---------------------------------------------------------------------------- state dicts
def test_load_state_dict_roundtrip_and_errors():
    def scenario(T):
        nn = T.nn
        T.manual_seed(0)
        m = nn.Linear(2, 3)
        seq = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.Linear(3, 1)))
        sd = seq.state_dict()
        return [
            repr(m.load_state_dict(m.state_dict())),
            repr(m.load_state_dict({"weight": T.ones(3, 2)}, strict=False)),
            text(outcome(lambda: m.load_state_dict({"weight": T.ones(3, 3),
                                                    "foo": T.ones(1)}))),
            text(outcome(lambda: m.load_state_dict(3))),
            text(outcome(lambda: m.load_state_dict({"weight": 3, "bias": T.ones(3)}))),
            text(outcome(lambda: seq.load_state_dict({**sd, "0.x.y": T.ones(1),
                                                      "2.w": T.ones(1)}))),
            text(outcome(lambda: seq.load_state_dict({k: v for k, v in sd.items()
                                                      if "bias" not in k}))),
            repr(seq.load_state_dict({**sd, "extra": T.ones(1)}, strict=False)),
            m.load_state_dict({"weight": T.ones(3, 2), "bias": T.zeros(3)}).missing_keys,
            m.weight.tolist(),
        ]
    same(scenario)


def test_load_state_dict_copies_in_place():
    m = ember.nn.Linear(2, 2)
    w = m.weight
    ptr = w.data_ptr()
    m.load_state_dict({"weight": ember.ones(2, 2, dtype=ember.float64), "bias": ember.zeros(2)})
    assert m.weight is w and w.data_ptr() == ptr and w.dtype == ember.float32
    assert w.tolist() == [[1.0, 1.0], [1.0, 1.0]] and w.requires_grad


def test_state_dict_transfers_torch_weights():
    t = make_net(torch)
    e = make_net(ember)
    e.load_state_dict({k: em(v) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 3))
    assert_close(e(ember.tensor(x, dtype=ember.float32)),
                 t(torch.tensor(x, dtype=torch.float32)).detach(), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------- modes, grads
def test_train_eval_requires_grad_zero_grad_apply():
    def scenario(T):
        net = make_net(T)
        out = [net.training, net.head[0].training]
        net.eval()
        out += [net.training, net.block.act.training, net.train() is net, net.head[1].training]
        net(T.ones(2, 3)).sum().backward()
        out.append([p.grad is not None for p in net.parameters()])
        net.zero_grad(set_to_none=False)
        out.append([p.grad.abs().sum().item() for p in net.parameters()])
        net.zero_grad()
        out.append([p.grad for p in net.parameters()])
        net.requires_grad_(False)
        out.append([p.requires_grad for p in net.parameters()])
        seen = []
        net.apply(lambda m: seen.append(type(m).__name__))
        out.append(seen)
        return out
    same(scenario)


def test_to_and_dtype_casts_keep_parameter_objects():
    net = make_net(ember)
    w = net.block.fc.weight
    net.block.fc.weight.grad = ember.ones(4, 3)
    assert net.double() is net
    assert net.block.fc.weight is w and w.dtype == ember.float64 and w.grad.dtype == ember.float64
    assert net.block.count.dtype == ember.float64
    net.to(ember.float32)
    assert w.dtype == ember.float32 and isinstance(w, ember.nn.Parameter)
    net.to("cpu", dtype=ember.float64)
    assert w.dtype == ember.float64
    net.to(ember.zeros(1, dtype=ember.float32))
    assert w.dtype == ember.float32
    net.half()
    assert w.dtype == ember.float16
    net.float()
    emb = ember.nn.Embedding(3, 2)
    emb.register_buffer("idx", ember.tensor([1, 2]))
    emb.double()
    assert emb.idx.dtype == ember.int64
    assert outcome(lambda: net.to(ember.int64))[0] == "TypeError"


# ---------------------------------------------------------------------------- hooks
def test_forward_hooks():
    def scenario(T):
        calls = []
        m = T.nn.Linear(2, 2)
        with T.no_grad():
            m.weight.copy_(T.eye(2))
            m.bias.zero_()

        def pre(mod, args):
            calls.append(("pre", len(args)))
            return (args[0] * 2,)

        def pre_kw(mod, args, kwargs):
            calls.append(("pre_kw", sorted(kwargs)))

        def post(mod, args, out):
            calls.append(("post", args[0].tolist()))
            return out + 1

        def first(mod, args, out):
            calls.append("first")

        h1 = m.register_forward_pre_hook(pre)
        h2 = m.register_forward_pre_hook(pre_kw, with_kwargs=True)
        h3 = m.register_forward_hook(post)
        h4 = m.register_forward_hook(first, prepend=True)
        y1 = m(T.ones(1, 2)).tolist()
        h1.remove()
        h3.remove()
        y2 = m(T.ones(1, 2)).tolist()
        h2.remove()
        with m.register_forward_pre_hook(lambda mod, a: a[0] * 3):   # a lone tensor is wrapped
            y3 = m(T.ones(1, 2)).tolist()
        h4.remove()
        y4 = m(T.ones(1, 2)).tolist()
        return calls, y1, y2, y3, y4
    same(scenario)


def test_forward_hook_always_call():
    def scenario(T):
        calls = []

        class Boom(T.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m = Boom()
        m.register_forward_hook(lambda mod, a, out: calls.append(("always", out)),
                                always_call=True)
        m.register_forward_hook(lambda mod, a, out: calls.append("normal"))
        return outcome(lambda: m(T.ones(1))), calls
    same(scenario)


def test_full_backward_hooks():
    def scenario(T):
        log = []
        m = T.nn.Linear(3, 2)
        with T.no_grad():
            m.weight.copy_(T.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]))

        def hook(mod, grad_input, grad_output):
            log.append(("hook", [None if g is None else g.tolist() for g in grad_input],
                        [g.tolist() for g in grad_output]))
            return None if grad_input[0] is None else (grad_input[0] * 10,)

        def pre(mod, grad_output):
            log.append(("pre", [g.tolist() for g in grad_output]))
            return (grad_output[0] * 2,)

        h = m.register_full_backward_hook(hook)
        hp = m.register_full_backward_pre_hook(pre)
        x = T.ones(1, 3, requires_grad=True)
        y = m(x)
        name = type(y.grad_fn).__name__
        y.sum().backward()
        xgrad = x.grad.tolist()
        wgrad = m.weight.grad.tolist()
        # an input that does not require grad: the hook still runs, with None, and warns
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m(T.ones(1, 3)).sum().backward()
        log.append([str(w.message).replace("torch.", "ember.") for w in caught])
        h.remove()
        hp.remove()
        x2 = T.ones(1, 3, requires_grad=True)
        m(x2).sum().backward()
        return log, name, xgrad, wgrad, x2.grad.tolist()
    same(scenario)


def test_backward_hook_on_sequential_child_order():
    def scenario(T):
        order = []
        seq = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.ReLU(), T.nn.Linear(2, 1))
        for i, m in enumerate(seq):
            m.register_full_backward_hook(lambda mod, gi, go, i=i: order.append(i))
        seq(T.ones(3, 2, requires_grad=True)).sum().backward()
        return order
    same(scenario)


# ---------------------------------------------------------------------------- printing
def test_nested_repr():
    e, t = both(make_net)
    assert repr(e) == torch_repr(t)

    def custom(T):
        class Odd(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = T.nn.Linear(1, 1)

            def extra_repr(self):
                return "two\nlines"
        m = T.nn.Module()
        m.odd = Odd()
        m.empty = T.nn.Sequential()
        m.none = None
        m.add_module("list", T.nn.ModuleList([T.nn.ReLU(), T.nn.ReLU(), T.nn.Linear(1, 2),
                                              T.nn.ReLU()]))
        return repr(m)
    e, t = both(custom)
    assert e == t.replace("torch.", "ember.")


# ---------------------------------------------------------------------------- containers
def test_sequential():
    def scenario(T):
        nn = T.nn
        s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
        od = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
        out = [len(s), type(s[-1]).__name__, type(s[1:]).__name__, len(s[1:]),
               list(s[1:]._modules), repr(od), type(od.fc).__name__, repr(od[0:1]),
               outcome(lambda: s[3]), outcome(lambda: s[-4])]
        s.append(nn.Sigmoid())
        out.append(list(s._modules))
        del s[1]
        out.append(repr(s))
        s[0] = nn.Identity()
        out.append(repr(s))
        out.append([type(m).__name__ for m in s])
        s.insert(1, nn.ReLU())
        s.extend([nn.Tanh()])
        out.append(repr(s))
        out.append(type(s.pop(0)).__name__)
        out.append(repr(s + nn.Sequential(nn.ReLU())))
        return out
    same(scenario)
    T = ember
    s = T.nn.Sequential(T.nn.Linear(2, 3), T.nn.ReLU())
    assert tuple(s(T.ones(4, 2)).shape) == (4, 3)


def test_module_list_and_dict():
    def scenario(T):
        nn = T.nn
        ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
        ml.append(nn.ReLU())
        ml += [nn.Tanh()]
        ml.insert(0, nn.Sigmoid())
        out = [len(ml), repr(ml), repr(ml[1:3]), type(ml[-1]).__name__,
               outcome(lambda: ml[10]), [n for n, _ in ml.named_parameters()]]
        del ml[0]
        out.append(list(ml._modules))
        out.append(repr(nn.ModuleList()))
        out.append(outcome(lambda: ml(1)))
        md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Linear(1, 2)})
        md["c"] = nn.Tanh()
        out += [list(md.keys()), len(md), "a" in md, repr(md), type(md.pop("b")).__name__,
                list(md), [n for n, _ in md.named_parameters()]]
        md.update([("z", nn.Identity())])
        out.append(list(md.keys()))
        return out
    same(scenario)


def test_parameter_list_and_dict():
    def scenario(T):
        nn = T.nn
        pl = nn.ParameterList([nn.Parameter(T.ones(2)), T.zeros(2, 3)])
        pl.append(nn.Parameter(T.ones(1, dtype=T.float64)))
        out = [len(pl), repr(pl), [n for n, _ in pl.named_parameters()],
               type(pl[1]).__name__, pl[1].requires_grad, list(pl.state_dict())]
        pd = nn.ParameterDict({"w": nn.Parameter(T.ones(2)), "b": T.zeros(3)})
        pd["c"] = nn.Parameter(T.ones(1))
        out += [list(pd.keys()), len(pd), "w" in pd, repr(pd), [n for n, _ in pd.named_parameters()],
                type(pd["b"]).__name__, list(pd.state_dict())]
        del pd["w"]
        out.append(list(pd.keys()))
        return out
    e, t = both(scenario)
    assert text(e) == text(t)


def test_deepcopy_and_pickle_module():
    net = make_net(ember)
    net2 = copy.deepcopy(net)
    assert net2.block.fc.weight is not net.block.fc.weight
    assert net2.shared is net2.block.fc                      # sharing is preserved
    assert net2.block.fc.weight.tolist() == net.block.fc.weight.tolist()
    assert isinstance(net2.block.fc.weight, ember.nn.Parameter)
    net3 = pickle.loads(pickle.dumps(ember.nn.Sequential(ember.nn.Linear(2, 2),
                                                         ember.nn.BatchNorm1d(2))))
    assert list(net3.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias",
                                       "1.running_mean", "1.running_var",
                                       "1.num_batches_tracked"]
    assert isinstance(net3[0].weight, ember.nn.Parameter) and net3[0].weight.requires_grad


# ---------------------------------------------------------------------------- nn.utils
def _grads_model(T, scale=1.0):
    T.manual_seed(0)
    m = T.nn.Linear(3, 2)
    with T.no_grad():
        m.weight.copy_(T.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]]))
        m.bias.copy_(T.tensor([0.1, -0.2]))
    (m(T.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])) ** 2).sum().mul(scale).backward()
    return m


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm(norm_type, max_norm):
    def scenario(T):
        m = _grads_model(T)
        total = T.nn.utils.clip_grad_norm_(m.parameters(), max_norm, norm_type=norm_type)
        return (round(total.item(), 4), type(total).__name__, total.dim(),
                [np.round(p.grad.numpy(), 5).tolist() for p in m.parameters()])
    e, t = both(scenario)
    assert e[1:] == t[1:] and abs(e[0] - t[0]) <= 1e-4 * abs(t[0])


def test_clip_grad_norm_nonfinite_and_single_tensor():
    def scenario(T):
        m = _grads_model(T)
        m.bias.grad[0] = float("nan")
        err = outcome(lambda: T.nn.utils.clip_grad_norm_(m.parameters(), 1.0,
                                                         error_if_nonfinite=True))
        total = T.nn.utils.clip_grad_norm_(m.weight, 1.0)      # a lone tensor
        return err, round(total.item(), 4)
    e, t = both(scenario)
    assert e == t


def test_clip_grad_value():
    def scenario(T):
        m = _grads_model(T)
        out = T.nn.utils.clip_grad_value_(m.parameters(), 0.7)
        return out, [p.grad.tolist() for p in m.parameters()]
    same(scenario)


def test_parameters_to_vector_and_back():
    def scenario(T):
        m = _grads_model(T)
        vec = T.nn.utils.parameters_to_vector(m.parameters())
        name = type(vec.grad_fn).__name__
        T.nn.utils.vector_to_parameters(T.arange(8.0), m.parameters())
        return (vec.detach().tolist(), name, [p.tolist() for p in m.parameters()],
                [type(p).__name__ for p in m.parameters()],
                outcome(lambda: T.nn.utils.vector_to_parameters([1.0], m.parameters())))
    e, t = both(scenario)
    assert text(e) == text(t)


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
    differential.same(f)


def test_load_state_dict_assign_keeps_the_checkpoint_dtype():
    def f(T):
        m = _net(T)
        sd = {k: v.double() if v.is_floating_point() else v for k, v in m.state_dict().items()}
        m.load_state_dict(sd, assign=True)
        kept = _net(T)
        kept.load_state_dict(sd)
        return m[0].weight.dtype, m[2].running_mean.dtype, kept[0].weight.dtype
    differential.same(f)


def test_load_state_dict_accepts_a_one_element_vector_for_a_scalar():
    def f(T):
        m = _net(T)
        sd = m.state_dict()
        sd["2.num_batches_tracked"] = T.tensor([7])
        m.load_state_dict(sd)
        return m[2].num_batches_tracked
    differential.same(f)


# ----------------------------------------------------------------------------- parametrize
def _filled(T, module, seed=0):
    """The module with its parameters set from a NumPy generator (the same in both)."""
    rng = np.random.default_rng(seed)
    with T.no_grad():
        for p in module.parameters():
            p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
    return module


# ----------------------------------------------------------------------------- Module hooks
def test_state_dict_hooks():
    def scenario(T):
        seen = []
        m = T.nn.Sequential(_filled(T, T.nn.Linear(2, 2)))
        m[0].register_state_dict_pre_hook(
            lambda mod, prefix, keep_vars: seen.append(("pre", prefix, keep_vars)))

        def post(mod, sd, prefix, meta):
            seen.append(("post", prefix, sorted(sd), dict(meta)))
            sd[prefix + "extra"] = T.ones(1)
        h = m[0].register_state_dict_post_hook(post)
        sd = m.state_dict(keep_vars=True)
        out = [list(sd), seen[:]]
        h.remove()
        out.append(list(m.state_dict()))
        m._register_state_dict_hook(lambda mod, sd, prefix, meta: {"replaced": T.zeros(1)})
        out.append(m.state_dict())
        out.append(catch(m._register_state_dict_hook, post))
        bad = T.nn.Linear(2, 2)
        bad.register_state_dict_post_hook(lambda *a: {})
        out.append(catch(bad.state_dict))
        out.append(warnings_of(lambda: list(bad.__class__.state_dict(T.nn.Linear(1, 1), None,
                                                                         "p."))))
        return out
    differential.same(scenario)


def test_load_state_dict_hooks():
    def scenario(T):
        seen = []
        m = T.nn.Sequential(_filled(T, T.nn.Linear(2, 2)))
        src = {k: v + 1 for k, v in m.state_dict().items()}
        src["0.old_name"] = src.pop("0.bias")

        def pre(mod, sd, prefix, meta, strict, missing, unexpected, errors):
            seen.append(("pre", type(mod).__name__, prefix, sorted(sd), strict))
            if prefix + "old_name" in sd:
                sd[prefix + "bias"] = sd.pop(prefix + "old_name")

        def post(mod, keys):
            seen.append(("post", type(mod).__name__, list(keys.missing_keys),
                         list(keys.unexpected_keys)))
        m[0].register_load_state_dict_pre_hook(pre)
        m[0].register_load_state_dict_post_hook(post)
        m.register_load_state_dict_post_hook(post)
        m[0]._register_load_state_dict_pre_hook(
            lambda sd, prefix, *rest: seen.append(("private", prefix, len(rest))))
        result = m.load_state_dict(src)
        out = [repr(result), seen, sorted(src), m[0].bias]
        m.register_load_state_dict_post_hook(lambda mod, keys: 1)
        out.append(catch(m.load_state_dict, m.state_dict()))
        return out
    differential.same(scenario)


# ----------------------------------------------------------------------------- set_submodule
def test_set_submodule():
    def scenario(T):
        nn = T.nn
        m = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU()))
        m.foo = 3
        seen = []
        for args, kw in [(("", nn.ReLU()), {}), (("0", 5), {}), (("x.y", nn.ReLU()), {}),
                         (("1.0.z", nn.ReLU()), {}), (("0.weight", nn.ReLU()), {}),
                         (("2", nn.Tanh()), {}), (("3", nn.ReLU()), dict(strict=True)),
                         (("1.0", nn.Sigmoid()), dict(strict=True)), (("foo", nn.ReLU()), {}),
                         (("1.0.z.w", nn.ReLU()), {})]:
            seen.append([catch(m.set_submodule, *args, **kw), repr(m)])
        return seen
    differential.same(scenario)


# ----------------------------------------------------------------------------- to_empty
def test_to_empty():
    def scenario(T):
        nn = T.nn
        m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
        m.register_parameter("p", nn.Parameter(T.ones(2, dtype=T.float64)))
        w, p = m[0].weight, m.p
        top = m.to_empty(device="cpu", recurse=False)
        after_top = [m.p is p, m.p.shape, m.p.dtype, m.p.requires_grad, m[0].weight is w]
        m.to_empty(device=T.device("cpu"))
        kept = [m[0].weight is w, m[0].weight.requires_grad, type(m[0].weight).__name__]
        return [top is m, after_top, kept,
                [(k, v.shape, v.dtype) for k, v in m.state_dict().items()],
                catch(m.to_empty, "cpu"), catch(m.to_empty)]
    differential.same(scenario)


# ----------------------------------------------------------------------------- Module.to(complex)
def test_to_complex_warns():
    def scenario(T):
        nn = T.nn
        lin = nn.Linear(2, 2)
        out = [warnings_of(lambda: lin.to(T.complex64).weight.dtype),
               warnings_of(lambda: nn.Linear(2, 2).to(dtype=T.cdouble).bias.dtype),
               warnings_of(lambda: nn.Linear(2, 2).to(T.float64).bias.dtype),
               warnings_of(lambda: nn.Linear(2, 2).to("cpu", T.complex128).bias.dtype),
               catch(lambda: nn.Linear(2, 2).to(T.int32))]
        return out
    differential.same(scenario)


def _x(T, shape, dtype="float64", seed=0, requires_grad=False):
    data = np.random.default_rng(seed).standard_normal(shape)
    return T.tensor(data, dtype=getattr(T, dtype), requires_grad=requires_grad)


# ----------------------------------------------------------------------------- Container
def test_container():
    def scenario(T):
        nn = T.nn
        c, warns = warnings_of(lambda: nn.Container(a=nn.Linear(2, 3), b=nn.ReLU()))
        empty, warns2 = warnings_of(nn.Container)
        return [repr(c), warns, list(c.state_dict()), repr(empty), warns2,
                catch(c, _x(T, (2,), "float32")), isinstance(c, nn.Module)]
    differential.same(scenario)
