"""F.conv_tbc (a time-major 1-D convolution) and F.multi_head_attention_forward (the functional
form of MultiheadAttention, run by the module's own forward)."""
import types

from ._conv import pad as _pad, _type_name


def conv_tbc(input, weight, bias, pad=0):
    """input (time, batch, in), weight (kernel, in, out), bias (out): out[t] = bias +
    sum_k padded[t + k] @ weight[k]; a negative pad crops the time axis."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1 or bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if isinstance(pad, bool) or not isinstance(pad, int):
        raise TypeError(f"conv_tbc(): argument 'pad' (position 4) must be int, not "
                        f"{type(pad).__name__}")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_type_name(input.dtype)} and {_type_name(weight.dtype)}")
    x = _pad(input, (0, 0, 0, 0, pad, pad))
    kernel = weight.shape[0]
    steps = max(x.shape[0] - kernel + 1, 0)
    # (the bias is added in the input's dtype) one product per kernel offset (the kernel is short; the batch and time are not)
    out = bias.to(input.dtype).expand(steps, input.shape[1], weight.shape[2])
    for k in range(kernel):
        out = out + x[k:k + steps].matmul(weight[k])
    return out


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    from .modules.activation_mha import MultiheadAttention
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
