"""Attention: scaled_dot_product_attention and multi_head_attention_forward."""
import math
import types

from ... import _dtype as D
from ..._tensor import Tensor
from ...ops.registry import primitive, xp_of
from ._utils import _mul_scalar
from .dropout import _keep_mask
from ...ops.softmax import _softmax_backward


# ============================================================================ attention
def _attention_bias(xp, mask, is_causal, L, S, dtype):
    """The additive score bias of a boolean/float mask and/or causal masking (None if none)."""
    bias = None
    if mask is not None:
        if mask.dtype == bool:
            bias = xp.where(mask, 0, -xp.inf).astype(dtype)
        else:
            bias = mask.astype(dtype)
    if is_causal:
        causal = xp.where(xp.tril(xp.ones((L, S), dtype=bool)), 0, -xp.inf).astype(dtype)
        bias = causal if bias is None else bias + causal
    return bias


def _safe_softmax(xp, s):
    """Softmax over the last axis; a row whose scores are all -inf gives zeros, as in torch."""
    m = s.max(axis=-1, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    e = xp.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return xp.where(total > 0, e / xp.where(total > 0, total, 1), 0)


@primitive("_safe_softmax", node="SafeSoftmaxBackward0", save=("result",))
def _safe_softmax_op(xp, self):
    """Softmax over the last dim that gives zeros for a fully masked row (torch's math path)."""
    return _safe_softmax(xp, self).astype(self.dtype, copy=False)


@_safe_softmax_op.derivative
def _(ctx, grad):
    return _softmax_backward(grad, ctx.result, dim=-1)


@primitive("scaled_dot_product_attention", node="ScaledDotProductFlashAttentionForCpuBackward0",
           save=("query", "key", "value"))
def _sdpa(xp, query, key, value, *, mask, is_causal, scale, groups=1):
    if groups > 1:          # grouped-query attention: each key/value head serves `groups` heads
        key, value = (xp.repeat(t, groups, axis=-3) for t in (key, value))
    s = xp.matmul(query, xp.swapaxes(key, -1, -2)) * scale
    bias = _attention_bias(xp, mask, is_causal, s.shape[-2], s.shape[-1], s.dtype)
    if bias is not None:
        s = s + bias
    return xp.matmul(_safe_softmax(xp, s), value)


def _attention_probs(q, k, mask, is_causal, scale):
    """softmax(q k^T * scale + bias) written in ember ops (so it is differentiable)."""
    s = q.matmul(k.transpose(-1, -2)) * scale
    bias = _attention_bias(xp_of(s._device), mask, is_causal, s.shape[-2], s.shape[-1],
                           s._dtype.np)
    if bias is not None:
        s = s + Tensor._make(bias, s._dtype, s._device)
    return _safe_softmax_op(s)


@_sdpa.derivative
def _(ctx, grad):
    q, k, v = ctx.query, ctx.key, ctx.value
    if ctx.groups > 1:
        k, v = _repeat_heads(k, ctx.groups), _repeat_heads(v, ctx.groups)
    p = _attention_probs(q, k, ctx.mask, ctx.is_causal, ctx.scale)
    dv = p.transpose(-1, -2).matmul(grad)
    dp = grad.matmul(v.transpose(-1, -2))
    ds = p * (dp - (dp * p).sum(-1, keepdim=True))
    dq = ds.matmul(k) * ctx.scale
    dk = ds.transpose(-1, -2).matmul(q) * ctx.scale
    if ctx.groups > 1:      # each shared head's gradient is the sum over the heads it served
        dk, dv = (_sum_head_groups(t, ctx.groups) for t in (dk, dv))
    return dq, dk, dv


def _repeat_heads(t, groups):
    """(..., H, S, E) -> (..., H * groups, S, E), each head repeated `groups` times in turn
    (torch's repeat_interleave: unsqueeze, expand, contiguous copy, view)."""
    shape = tuple(t.shape[:-3])
    heads = t.shape[-3]
    expanded = t.unsqueeze(-3).expand(*shape, heads, groups, *t.shape[-2:])
    return expanded.contiguous().view(*shape, heads * groups, *t.shape[-2:])


def _sum_head_groups(t, groups):
    shape = tuple(t.shape[:-3])
    return t.reshape(*shape, t.shape[-3] // groups, groups, *t.shape[-2:]).sum(-3)


def _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, groups):
    """PyTorch's math path, op for op, so that the graph shows its nodes: both operands of the
    score product scaled by sqrt(scale), the mask added, a safe softmax, dropout, the product."""
    if groups > 1:
        key, value = _repeat_heads(key, groups), _repeat_heads(value, groups)
    root = math.sqrt(scale)
    scores = _mul_scalar(query, other=root).matmul(_mul_scalar(key.transpose(-2, -1),
                                                               other=root))
    if attn_mask is not None and attn_mask._dtype is not D.bool_:
        scores = scores + attn_mask         # a float mask stays in the graph (it may want grad)
    else:
        bias = _attention_bias(xp_of(scores._device), None if attn_mask is None else
                               attn_mask._data, is_causal, scores.shape[-2], scores.shape[-1],
                               scores._dtype.np)
        if bias is not None:
            scores = scores + Tensor._make(bias, scores._dtype, scores._device)
    attn = _safe_softmax_op(scores)
    if dropout_p > 0.0:
        attn = attn * _keep_mask(attn, dropout_p, attn.shape)
    return attn.matmul(value)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    groups = 1
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        groups = query.shape[-3] // key.shape[-3]
    # PyTorch's fused CPU kernel takes 4-D float inputs with one batch size, one head size and
    # the key/value heads serving whole groups of query heads, no dropout, and a mask that does
    # not want a gradient; anything else takes its math path
    fused = (dropout_p == 0.0 and query._dtype in (D.float32, D.float64) and query.dim() == 4 and
             query.shape[0] == key.shape[0] == value.shape[0] and
             key.shape[1] == value.shape[1] and query.shape[1] == key.shape[1] * groups and
             query.shape[-1] == value.shape[-1] and
             (attn_mask is None or not attn_mask.requires_grad))
    if not fused:
        return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, groups)
    mask = None if attn_mask is None else attn_mask._data
    return _sdpa(query, key, value, mask=mask, is_causal=is_causal, scale=scale, groups=groups)


# ==================================================================== multi_head_attention_forward
# the functional form of MultiheadAttention: the module's own forward, run on the arguments
def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    from ..modules.activation import MultiheadAttention   # (late: the modules import F)
    if static_k is not None or static_v is not None:
        raise NotImplementedError("ember: multi_head_attention_forward with static_k/static_v "
                                  "is not supported")
    head_dim = embed_dim_to_check // num_heads
    if head_dim * num_heads != embed_dim_to_check:
        raise AssertionError(f"embed_dim {embed_dim_to_check} not divisible by num_heads "
                             f"{num_heads}")
    if not use_separate_proj_weight and in_proj_weight is None:
        raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
    if use_separate_proj_weight:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     f"is None")
    # the attributes MultiheadAttention.forward reads, taken from the arguments
    attention = types.SimpleNamespace(
        embed_dim=embed_dim_to_check, num_heads=num_heads, head_dim=head_dim,
        _qkv_same_embed_dim=not use_separate_proj_weight, in_proj_weight=in_proj_weight,
        q_proj_weight=q_proj_weight, k_proj_weight=k_proj_weight, v_proj_weight=v_proj_weight,
        in_proj_bias=in_proj_bias, bias_k=bias_k, bias_v=bias_v, add_zero_attn=add_zero_attn,
        dropout=dropout_p, training=training, batch_first=False,
        out_proj=types.SimpleNamespace(weight=out_proj_weight, bias=out_proj_bias))
    attention._projections = types.MethodType(MultiheadAttention._projections, attention)
    return MultiheadAttention.forward(attention, query, key, value, key_padding_mask,
                                      need_weights, attn_mask, average_attn_weights, is_causal)
