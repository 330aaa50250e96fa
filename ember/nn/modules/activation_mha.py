"""MultiheadAttention, with PyTorch's parameters (in_proj_weight, in_proj_bias, out_proj...)."""
import math
import warnings

from ..._dtype import bool_
from ...ops.creation import empty, zeros
from ...ops.pointwise import where
from ...ops.joining import cat
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under the name PyTorch gives MultiheadAttention's output projection."""


def _float_mask(mask, dtype):
    """A boolean 'True = may not attend' mask as an additive float mask (-inf where True)."""
    if mask is None or mask.dtype.is_floating_point:
        return mask
    return where(mask, float("-inf"), 0.0).to(dtype)


def _canonical_mask(mask, mask_name, other, other_name, target_dtype):
    """Check a bool or float mask (warning when its type differs from `other`, the mask it is
    used with) and return it as an additive float mask (see _float_mask)."""
    if mask is None:
        return None
    if not (mask.dtype.is_floating_point or mask.dtype is bool_):
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if other is not None and other.dtype != mask.dtype:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      f"same type for both instead.", stacklevel=3)
    return _float_mask(mask, target_dtype)


class MultiheadAttention(Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        kw = dict(device=device, dtype=dtype)
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _projections(self):
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            ws = (w[:e], w[e:2 * e], w[2 * e:])
        else:
            ws = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        b = self.in_proj_bias
        bs = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        return ws, bs

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        from .. import functional as F
        from .._conv import scaled_dot_product_attention, pad
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", attn_mask,
                                           "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype)
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                               "Transformer module method `generate_square_subsequent_mask` to "
                               "create this mask.")
        # PyTorch trusts the hint (and drops the mask) only where it can use a causal kernel
        if is_causal and key_padding_mask is None and not need_weights:
            attn_mask = None
        else:
            is_causal = False
        if query.dim() not in (2, 3):
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but "
                                 f"received {query.dim()}-D query tensor")
        batched = query.dim() == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        tgt_len, bsz, embed_dim = query.shape
        if embed_dim != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but "
                                 f"got {embed_dim}")
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        heads, head_dim = self.num_heads, self.head_dim
        (wq, wk, wv), (bq, bk, bv) = self._projections()
        q = F.linear(query, wq, bq)
        k = F.linear(key, wk, bk)
        v = F.linear(value, wv, bv)
        if self.bias_k is not None:
            k = cat([k, self.bias_k.expand(1, bsz, embed_dim)])
            v = cat([v, self.bias_v.expand(1, bsz, embed_dim)])
            if attn_mask is not None:
                attn_mask = pad(attn_mask, (0, 1))
            if key_padding_mask is not None:
                key_padding_mask = pad(key_padding_mask, (0, 1))
        # (L, N, E) -> (N*H, L, head_dim)
        q = q.reshape(tgt_len, bsz * heads, head_dim).transpose(0, 1)
        k = k.reshape(k.shape[0], bsz * heads, head_dim).transpose(0, 1)
        v = v.reshape(v.shape[0], bsz * heads, head_dim).transpose(0, 1)
        if self.add_zero_attn:
            k = cat([k, zeros((bsz * heads, 1, head_dim), dtype=k.dtype)], 1)
            v = cat([v, zeros((bsz * heads, 1, head_dim), dtype=v.dtype)], 1)
            if attn_mask is not None:
                attn_mask = pad(attn_mask, (0, 1))
            if key_padding_mask is not None:
                key_padding_mask = pad(key_padding_mask, (0, 1))
        src_len = k.shape[1]
        if attn_mask is not None:
            if attn_mask.dim() == 2:
                if tuple(attn_mask.shape) != (tgt_len, src_len):
                    raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, "
                                       f"but should be {(tgt_len, src_len)}.")
                attn_mask = attn_mask.unsqueeze(0)
            elif attn_mask.dim() == 3:
                if tuple(attn_mask.shape) != (bsz * heads, tgt_len, src_len):
                    raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, "
                                       f"but should be {(bsz * heads, tgt_len, src_len)}.")
            else:
                raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (bsz, src_len):
                raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, "
                                     f"but got {key_padding_mask.shape}")
            pad = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(
                bsz, heads, 1, src_len).reshape(bsz * heads, 1, src_len)
            attn_mask = pad if attn_mask is None else attn_mask + pad
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            scores = (q * math.sqrt(1.0 / head_dim)).matmul(k.transpose(-2, -1))
            if attn_mask is not None:
                scores = scores + attn_mask
            weights = F.softmax(scores, dim=-1)
            if dropout_p > 0.0:
                weights = F.dropout(weights, p=dropout_p)
            out = weights.matmul(v)                                   # N*H, L, head_dim
        else:
            if attn_mask is not None and attn_mask.shape[0] == 1:
                attn_mask = attn_mask.expand(bsz * heads, tgt_len, src_len)
            out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
            weights = None
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, self.out_proj.weight, self.out_proj.bias)
        out = out.view(tgt_len, bsz, embed_dim)
        if weights is not None:
            weights = weights.view(bsz, heads, tgt_len, src_len)
            if average_attn_weights:
                weights = weights.mean(dim=1)
            if not batched:
                weights = weights.squeeze(0)
        if not batched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, weights
