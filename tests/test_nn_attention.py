"""scaled_dot_product_attention and MultiheadAttention against PyTorch."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn.functional import attention as EF
from ember.nn.modules.activation import MultiheadAttention
from differential import catch, same, warnings_of
from nn_helpers import param_grads as _grads

RNG = np.random.default_rng(7)


def _close(t, e, tol=1e-10):
    assert tuple(t.shape) == tuple(e.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def raised(fn):
    try:
        fn()
    except Exception as exc:   # noqa: BLE001 - the exception is what is compared
        return type(exc).__name__, str(exc).replace("torch.", "ember.")
    return None


# ----------------------------------------------------------------------------- sdpa
def _bool_mask():
    m = RNG.standard_normal((5, 6)) > 0
    m[1] = False              # a fully masked row: torch gives zeros there
    return m


SDPA_CASES = [
    ({}, (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 3)),
    (dict(is_causal=True), (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 3)),
    (dict(attn_mask=_bool_mask()), (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 3)),
    (dict(attn_mask=RNG.standard_normal((5, 6)), scale=0.3), (2, 5, 4), (2, 6, 4), (2, 6, 2)),
    (dict(is_causal=True, scale=2.0), (5, 4), (6, 4), (6, 3)),
    # PyTorch's fused CPU kernel (its own node) needs 4-D inputs of one head size
    ({}, (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4)),
    (dict(attn_mask=_bool_mask(), scale=0.5), (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4)),
    (dict(is_causal=True), (1, 2, 6, 4), (1, 2, 6, 4), (1, 2, 6, 4)),
]


@pytest.mark.parametrize("kw,qs,ks,vs", SDPA_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sdpa_matches_torch(kw, qs, ks, vs, dtype):
    tol = 1e-10 if dtype == np.float64 else 2e-5
    arrays = [RNG.standard_normal(s).astype(dtype) for s in (qs, ks, vs)]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    es = [ember.tensor(a, requires_grad=True) for a in arrays]

    def masks(T):
        out = dict(kw)
        if "attn_mask" in kw:
            m = kw["attn_mask"]
            out["attn_mask"] = T.tensor(m if m.dtype == bool else m.astype(dtype))
        return out
    ty = TF.scaled_dot_product_attention(*ts, **masks(torch))
    ey = EF.scaled_dot_product_attention(*es, **masks(ember))
    _close(ty, ey, tol)
    if type(ty.grad_fn).__name__ == "ScaledDotProductFlashAttentionForCpuBackward0":
        assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__
    g = RNG.standard_normal(tuple(ty.shape)).astype(dtype)
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    for t, e in zip(ts, es):
        _close(t.grad, e.grad, tol)


def test_sdpa_grouped_query_attention_matches_torch():
    q, k, v = (RNG.standard_normal(s) for s in ((1, 4, 3, 2), (1, 2, 5, 2), (1, 2, 5, 2)))
    ts = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    es = [ember.tensor(a, requires_grad=True) for a in (q, k, v)]
    ty = TF.scaled_dot_product_attention(*ts, enable_gqa=True)
    ey = EF.scaled_dot_product_attention(*es, enable_gqa=True)
    _close(ty, ey)
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__
    ty.sum().backward()
    ey.sum().backward()
    for t, e in zip(ts, es):
        _close(t.grad, e.grad)


def test_sdpa_gradcheck_and_gradgradcheck():
    q, k, v = [ember.tensor(RNG.standard_normal(s), requires_grad=True)
               for s in ((2, 3, 4), (2, 5, 4), (2, 5, 3))]
    mask = ember.tensor(RNG.standard_normal((3, 5)) > -0.5)
    for kw in (dict(attn_mask=mask), dict(is_causal=True)):
        def fn(q, k, v):
            return EF.scaled_dot_product_attention(q, k, v, **kw)
        assert gradcheck(fn, (q, k, v))
        assert gradgradcheck(fn, (q, k, v))
    # the fused float32 primitive's derivative is written in ember ops: check it in float64
    fused = EF._sdpa
    assert gradcheck(lambda q, k, v: fused(q, k, v, mask=mask._data, is_causal=False,
                                           scale=0.7), (q, k, v))
    assert gradgradcheck(lambda q, k, v: fused(q, k, v, mask=None, is_causal=True, scale=0.7),
                         (q, k, v))


def test_sdpa_explicit_mask_with_causal_is_an_error():
    def call(F, T):
        q = T.zeros(2, 3, 4)
        return F.scaled_dot_product_attention(q, q, q, attn_mask=T.ones(3, 3, dtype=T.bool),
                                              is_causal=True)
    expected = raised(lambda: call(TF, torch))
    assert expected is not None and raised(lambda: call(EF, ember)) == expected


def test_sdpa_dropout_zeroes_and_rescales_the_attention_weights():
    q, k = RNG.standard_normal((2, 8, 4)), RNG.standard_normal((2, 8, 4))
    v = np.broadcast_to(np.eye(8), (2, 8, 8)).copy()        # output = the weights themselves
    probs = TF.scaled_dot_product_attention(torch.tensor(q), torch.tensor(k),
                                            torch.tensor(v)).numpy()
    ember.manual_seed(0)
    out = EF.scaled_dot_product_attention(ember.tensor(q), ember.tensor(k), ember.tensor(v),
                                          dropout_p=0.25).numpy()
    kept = out != 0
    np.testing.assert_allclose(out[kept], probs[kept] / 0.75, rtol=1e-10)
    assert 0.6 < kept.mean() < 0.9


# ----------------------------------------------------------------------------- MHA
def _pair(kw):
    tm = torch.nn.MultiheadAttention(**kw).double()
    em = MultiheadAttention(**kw).double()
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, em


def run_mha(kw, L, S, N, call=None, masks=None):
    call, masks = call or {}, masks or {}
    tm, em = _pair(kw)
    assert repr(em) == repr(tm)
    E = kw["embed_dim"]
    kdim, vdim = kw.get("kdim") or E, kw.get("vdim") or E

    def shape(n, d):
        if not N:
            return (n, d)
        return (N, n, d) if kw.get("batch_first") else (n, N, d)
    arrays = [RNG.standard_normal(shape(L, E)), RNG.standard_normal(shape(S, kdim)),
              RNG.standard_normal(shape(S, vdim))]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    es = [ember.tensor(a, requires_grad=True) for a in arrays]
    tkw, ekw = dict(call), dict(call)
    for name, m in masks.items():
        tkw[name], ekw[name] = torch.tensor(m), ember.tensor(m)
    to, tw = tm(*ts, **tkw)
    eo, ew = em(*es, **ekw)
    _close(to, eo)
    g = RNG.standard_normal(tuple(to.shape))
    tloss, eloss = (to * torch.tensor(g)).sum(), (eo * ember.tensor(g)).sum()
    if tw is None:
        assert ew is None
    else:
        _close(tw, ew)
        tloss, eloss = tloss + (tw * tw).sum(), eloss + (ew * ew).sum()
    tloss.backward()
    eloss.backward()
    for t, e in zip(ts, es):
        _close(t.grad, e.grad)
    eparams = dict(em.named_parameters())
    for name, p in tm.named_parameters():
        _close(p.grad, eparams[name].grad)


KEY_PAD = np.array([[False, False, False, False], [False, True, False, True]])
ATTN = np.zeros((3, 4), bool)
ATTN[0, 1] = True
MHA_CASES = [
    (dict(embed_dim=8, num_heads=2), 3, 4, 2, {}, {}),
    (dict(embed_dim=8, num_heads=2, batch_first=True), 3, 4, 2,
     dict(average_attn_weights=False), {}),
    (dict(embed_dim=8, num_heads=4, kdim=5, vdim=6, bias=False), 3, 4, 2, {}, {}),
    (dict(embed_dim=8, num_heads=2), 3, 4, 0, {}, {}),
    (dict(embed_dim=8, num_heads=2), 3, 4, 2, dict(need_weights=False), {}),
    (dict(embed_dim=8, num_heads=2), 3, 4, 2, {}, dict(attn_mask=ATTN, key_padding_mask=KEY_PAD)),
    (dict(embed_dim=8, num_heads=2), 3, 4, 2, dict(need_weights=False),
     dict(attn_mask=ATTN, key_padding_mask=KEY_PAD)),
    (dict(embed_dim=8, num_heads=2), 3, 4, 2, {},
     dict(attn_mask=RNG.standard_normal((4, 3, 4)))),
    (dict(embed_dim=8, num_heads=2, add_bias_kv=True, add_zero_attn=True), 3, 4, 2, {},
     dict(key_padding_mask=KEY_PAD)),
]


@pytest.mark.parametrize("kw,L,S,N,call,masks", MHA_CASES)
def test_multihead_attention_matches_torch(kw, L, S, N, call, masks):
    run_mha(kw, L, S, N, call, masks)


def test_multihead_attention_parameters_and_init():
    for kw in (dict(embed_dim=8, num_heads=2), dict(embed_dim=8, num_heads=2, kdim=5, vdim=6,
                                                    bias=False, add_bias_kv=True)):
        tm, em = torch.nn.MultiheadAttention(**kw), MultiheadAttention(**kw)
        assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
        assert list(em.state_dict()) == list(tm.state_dict())
        assert repr(em) == repr(tm)
    em = MultiheadAttention(8, 2)
    assert not em.in_proj_bias.detach().numpy().any()
    assert not em.out_proj.bias.detach().numpy().any()
    bound = math.sqrt(6 / (8 + 24))                          # xavier_uniform_ on (24, 8)
    w = np.abs(em.in_proj_weight.detach().numpy())
    assert w.max() <= bound and w.max() > 0.8 * bound
    assert type(em.out_proj).__name__ == "NonDynamicallyQuantizableLinear"


MHA_ERRORS = [
    (lambda m, T: m(T.zeros(3, 2, 8), T.zeros(3, 2, 8), T.zeros(3, 2, 8), is_causal=True)),
    (lambda m, T: m(T.zeros(3, 2, 7), T.zeros(3, 2, 7), T.zeros(3, 2, 7))),
    (lambda m, T: m(T.zeros(3, 2, 8), T.zeros(4, 2, 8), T.zeros(5, 2, 8))),
    (lambda m, T: m(T.zeros(3, 2, 8), T.zeros(4, 2, 8), T.zeros(4, 2, 8),
                    attn_mask=T.zeros(3, 3))),
    (lambda m, T: m(T.zeros(3, 2, 2, 8), T.zeros(4, 2, 8), T.zeros(4, 2, 8))),
]


@pytest.mark.parametrize("case", range(len(MHA_ERRORS)))
def test_multihead_attention_errors_match_torch(case):
    fn = MHA_ERRORS[case]
    expected = raised(lambda: fn(torch.nn.MultiheadAttention(8, 2), torch))
    assert expected is not None
    assert raised(lambda: fn(MultiheadAttention(8, 2), ember)) == expected
    assert raised(lambda: MultiheadAttention(8, 3)) == \
        raised(lambda: torch.nn.MultiheadAttention(8, 3))


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


# ----------------------------------------------------------------------------- F.multi_head_attention_forward
MHA_CASES_late = [dict(), dict(bias=False), dict(add_bias_kv=True), dict(add_zero_attn=True),
             dict(kdim=3, vdim=5), dict(attn_mask="float"), dict(key_padding_mask=True),
             dict(need_weights=False), dict(average_attn_weights=False),
             dict(attn_mask="bool", key_padding_mask=True, add_zero_attn=True),
             dict(unbatched=True)]


@pytest.mark.parametrize("case", MHA_CASES_late)
def test_multi_head_attention_forward(case):
    def scenario(T):
        case2 = dict(case)
        attn_mask, kpm = case2.pop("attn_mask", None), case2.pop("key_padding_mask", None)
        need_weights = case2.pop("need_weights", True)
        average = case2.pop("average_attn_weights", True)
        unbatched = case2.pop("unbatched", False)
        mha = _load_same(T, T.nn.MultiheadAttention(6, 2, dtype=T.float64, **case2))
        L, S, N = 3, 4, 2
        batch = () if unbatched else (N,)
        q = _x(T, (L,) + batch + (6,), seed=10, requires_grad=True)
        k = _x(T, (S,) + batch + (mha.kdim,), seed=11)
        v = _x(T, (S,) + batch + (mha.vdim,), seed=12)
        kw = dict(need_weights=need_weights, average_attn_weights=average)
        if attn_mask == "float":
            kw["attn_mask"] = _x(T, (L, S), seed=13)
        elif attn_mask == "bool":
            kw["attn_mask"] = T.tensor(np.random.default_rng(3).random((L, S)) < 0.3)
        if kpm:
            kw["key_padding_mask"] = T.tensor([[False, False, True, False],
                                               [False, True, False, False]])
        sep = not mha._qkv_same_embed_dim
        out, weights = T.nn.functional.multi_head_attention_forward(
            q, k, v, 6, 2, mha.in_proj_weight, mha.in_proj_bias, mha.bias_k, mha.bias_v,
            mha.add_zero_attn, 0.0, mha.out_proj.weight, mha.out_proj.bias,
            use_separate_proj_weight=sep, q_proj_weight=mha.q_proj_weight,
            k_proj_weight=mha.k_proj_weight, v_proj_weight=mha.v_proj_weight, **kw)
        out.sum().backward()
        return out, weights, q.grad, _grads(mha)
    same(scenario)


def test_multi_head_attention_forward_errors():
    def scenario(T):
        F = T.nn.functional
        q = _x(T, (3, 2, 6))
        w, ow = _x(T, (18, 6)), _x(T, (6, 6))
        return [catch(F.multi_head_attention_forward, q, q, q, 6, 4, w, None, None, None, False,
                      0.0, ow, None),
                catch(F.multi_head_attention_forward, q, q, q, 8, 2, w, None, None, None, False,
                      0.0, ow, None),
                catch(F.multi_head_attention_forward, q, q, q, 6, 2, None, None, None, None,
                      False, 0.0, ow, None),
                catch(F.multi_head_attention_forward, q, q, q, 6, 2, None, None, None, None,
                      False, 0.0, ow, None, use_separate_proj_weight=True, q_proj_weight=ow)]
    same(scenario)
