"""ember.set_num_threads/get_num_threads, the autocast state and GradScaler, against torch."""
import warnings

import numpy as np
import pytest
import torch

import ember
from ember import _threads


def raised(fn):
    try:
        fn()
    except Exception as e:
        return type(e), str(e)
    return None


# ------------------------------------------------------------------------------ threads
@pytest.fixture
def restore_threads():
    before = ember.get_num_threads()
    yield
    _threads._requested = None
    ember.set_num_threads(before)
    _threads._requested = None


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_set_num_threads_errors_match_torch(bad):
    expected = raised(lambda: torch.set_num_threads(bad))
    assert expected is not None and expected[0] is RuntimeError
    assert raised(lambda: ember.set_num_threads(bad)) == expected


def test_set_and_get_num_threads(restore_threads):
    ember.set_num_threads(1)
    assert ember.get_num_threads() == 1
    threadpoolctl = pytest.importorskip("threadpoolctl")
    np.ones((64, 64)) @ np.ones((64, 64))       # make sure NumPy's BLAS pool is loaded
    for pool in threadpoolctl.threadpool_info():
        if pool["user_api"] == "blas":
            assert pool["num_threads"] == 1


def test_fallback_without_threadpoolctl_uses_the_environment(monkeypatch, restore_threads):
    monkeypatch.setattr(_threads, "_threadpoolctl", lambda: None)
    for var in _threads._ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    _threads._requested = None
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert ember.get_num_threads() == 3          # honours the environment by default
    ember.set_num_threads(2)
    assert ember.get_num_threads() == 2
    assert all(__import__("os").environ[v] == "2" for v in _threads._ENV_VARS)


# ------------------------------------------------------------------------------ autocast
def autocast_trace(m):
    """What a program observes about the autocast state (m is torch or ember)."""
    seen = [m.is_autocast_enabled(), m.is_autocast_enabled("cpu"),
            str(m.get_autocast_dtype("cpu"))]
    with m.autocast("cpu"):
        seen += [m.is_autocast_enabled(), m.is_autocast_enabled("cpu"),
                 str(m.get_autocast_dtype("cpu"))]
        with m.autocast("cpu", enabled=False):
            seen.append(m.is_autocast_enabled("cpu"))
        with m.amp.autocast("cpu", dtype=m.float16):
            seen.append(str(m.get_autocast_dtype("cpu")))
        seen.append(str(m.get_autocast_dtype("cpu")))

    @m.autocast("cpu")
    def decorated():
        return m.is_autocast_enabled("cpu")
    seen += [decorated(), m.is_autocast_enabled("cpu")]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with m.autocast("cpu", dtype=m.float32):
            seen.append(m.is_autocast_enabled("cpu"))
        with m.autocast("cuda"):
            seen.append(m.is_autocast_enabled("cuda"))
    seen.append([str(x.message) for x in w])
    seen.append(raised(lambda: m.autocast("xyz")))
    return [s.replace("torch.", "").replace("ember.", "") if isinstance(s, str) else s
            for s in seen]


def test_autocast_state_matches_torch():
    assert autocast_trace(ember) == autocast_trace(torch)


# ------------------------------------------------------------------------------ GradScaler
class TinySGD:
    """The part of an optimizer GradScaler uses: param_groups and step()."""

    def __init__(self, params, lr):
        self.param_groups = [{"params": list(params), "lr": lr}]
        self.steps = 0

    def step(self):
        with ember.no_grad():
            for p in self.param_groups[0]["params"]:
                p.sub_(p.grad * self.param_groups[0]["lr"])
        self.steps += 1

    def zero_grad(self):
        for p in self.param_groups[0]["params"]:
            p.grad = None


def scaler_trace(m):
    p = m.ones(2, requires_grad=True)
    if m is torch:
        opt = torch.optim.SGD([p], lr=1.0)
    else:
        opt = TinySGD([p], lr=1.0)
    s = m.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
    seen = [s.is_enabled(), s.get_scale(), s.state_dict()]
    factors = [3.0, 3.0, float("inf"), 1.0, float("nan")]
    for i, factor in enumerate(factors):
        opt.zero_grad()
        loss = (p * factor).sum()
        scaled = s.scale(loss)
        seen.append(str(scaled.item()))   # str: NaN != NaN
        scaled.backward()
        if i == 0:
            s.unscale_(opt)
            seen.append(p.grad.tolist())
            seen.append(raised(lambda: s.unscale_(opt)))
        result = s.step(opt)
        seen.append(result is None)
        seen.append(raised(lambda: s.step(opt)))
        s.update()
        seen += [p.tolist(), s.get_scale(), s.state_dict()]
    s.update(new_scale=64.0)
    seen.append(s.get_scale())
    s2 = m.amp.GradScaler("cpu")
    s2.load_state_dict(s.state_dict())
    seen.append(s2.state_dict())
    seen.append(raised(lambda: s2.load_state_dict({})))
    return seen


def test_grad_scaler_matches_torch():
    assert scaler_trace(ember) == scaler_trace(torch)


def test_disabled_grad_scaler_is_a_no_op_like_torch():
    for m in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            cuda_scaler = m.amp.GradScaler()          # CUDA scaler without CUDA: disabled
        assert [str(x.message) for x in w] == [
            "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."]
        s = m.amp.GradScaler("cpu", enabled=False)
        for scaler in (s, cuda_scaler):
            loss = m.tensor(2.0)
            assert scaler.scale(loss) is loss
            assert scaler.get_scale() == 1.0 and scaler.state_dict() == {}
            assert not scaler.is_enabled()
    p = ember.ones(1, requires_grad=True)
    opt = TinySGD([p], lr=0.5)
    (p * 2).sum().backward()
    s = ember.amp.GradScaler("cpu", enabled=False)
    s.step(opt)
    s.update()
    assert opt.steps == 1 and p.tolist() == [0.0]


def test_cast_inputs_casts_like_torch_autocast():
    # cast_inputs is the op-level hook (not yet called by ember's ops): same dtypes and graph
    # as torch's CPU autocast of a matmul
    from ember import viz
    names = {}
    for m in (torch, ember):
        w = m.ones(2, 2, requires_grad=True)
        d = m.ones(2, 2, dtype=m.float64)
        h = m.ones(2, 2, dtype=m.float16)
        with m.autocast("cpu"):
            if m is torch:
                out, dbl, half = w @ w, d @ d, h @ h
            else:
                a, b = ember.amp.cast_inputs((w, w))
                out = a @ b
                dbl = ember.matmul(*ember.amp.cast_inputs((d, d)))
                half = ember.matmul(*ember.amp.cast_inputs((h, h)))
        names[m.__name__] = (viz.graph_structure(out), str(out.dtype).split(".")[1],
                             str(dbl.dtype).split(".")[1], str(half.dtype).split(".")[1])
    assert names["ember"] == names["torch"]
    assert names["torch"][0][0] == ["MmBackward0", "ToCopyBackward0",
                                    "torch::autograd::AccumulateGrad"]
    x = ember.ones(2)
    assert ember.amp.cast_inputs((x, 3)) == (x, 3)              # autocast off: unchanged


def test_autocast_casts_matmul_like_ops_as_torch():
    from differential import same

    def scenario(T):
        a = T.ones(4, 4, requires_grad=True)
        b = T.ones(4, 4)
        with T.autocast("cpu"):
            c = a @ b
            d = a + b
            e = T.nn.functional.linear(a, b)
            f = T.mm(a, b.t())
            conv = T.nn.functional.conv2d(T.ones(1, 1, 5, 5), T.ones(2, 1, 3, 3), T.ones(2))
        c.float().sum().backward()
        return [c.dtype, d.dtype, e.dtype, f.dtype, conv.dtype, c.grad_fn.name(),
                c.grad_fn.next_functions[0][0].name(), a.grad.dtype, a.grad]
    same(scenario)


def test_backend_flags_read_and_set_as_on_torchs_cpu_build():
    from differential import same

    def scenario(T):
        b = T.backends
        r = [b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32,
             b.cudnn.is_available(), b.cudnn.version(), b.cuda.matmul.allow_tf32,
             b.cuda.matmul.allow_fp16_reduced_precision_reduction,
             b.cuda.matmul.allow_bf16_reduced_precision_reduction, b.cuda.is_built(),
             b.mps.is_available(), b.mps.is_built(), b.mkldnn.is_available(),
             b.openmp.is_available(), T.get_float32_matmul_precision()]
        b.cudnn.benchmark = True
        b.cuda.matmul.allow_tf32 = True
        T.set_float32_matmul_precision("high")
        r += [b.cudnn.benchmark, b.cuda.matmul.allow_tf32, T.get_float32_matmul_precision()]
        b.cudnn.benchmark = False
        b.cuda.matmul.allow_tf32 = False
        T.set_float32_matmul_precision("highest")
        return r
    same(scenario)


def test_autocast_accepts_mixed_dtypes_of_matmul_like_ops():
    # torch casts before the op checks dtypes: float32 @ bfloat16 is no error under autocast;
    # float64 is not cast (the error stays), and in-place forms are not autocast
    from differential import same

    def scenario(T):
        a, b, c = T.ones(2, 3), T.ones(3, 2).bfloat16(), T.zeros(2, 2)
        out = []
        with T.autocast("cpu", dtype=T.bfloat16):
            for f in (lambda: a @ b, lambda: T.mm(a, b), lambda: a.matmul(b),
                      lambda: T.addmm(c, a, b), lambda: T.bmm(a[None], b[None]),
                      lambda: T.baddbmm(c[None], a[None], b[None]),
                      lambda: T.addbmm(c, a[None], b[None]),
                      lambda: T.nn.functional.linear(a, b.t(), bias=T.zeros(2)),
                      lambda: T.nn.functional.conv2d(T.ones(1, 2, 4, 4), T.ones(3, 2, 3, 3).bfloat16()),
                      lambda: T.nn.functional.conv_transpose1d(T.ones(1, 2, 4), T.ones(2, 3, 3).bfloat16()),
                      lambda: T.mm(a.double(), b),
                      lambda: c[None].clone().baddbmm_(a[None], b[None])):
                try:
                    r = f()
                    out.append((r.dtype, r))
                except RuntimeError as e:
                    out.append(str(e))
        return out
    same(scenario)
