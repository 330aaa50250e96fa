"""nn.Transformer and its encoder/decoder (layers) against PyTorch.

Numerics are compared on PyTorch's reference ("math") path: in training mode with dropout=0.0
(PyTorch takes its fused inference kernels only in eval mode), in float32 and float64, outputs
and the gradients of inputs and of every parameter. Eval mode is compared separately, without
gradients, where PyTorch takes its fast path (fused layer kernel, nested tensors).
"""
import warnings

import numpy as np
import pytest
import torch

import ember
from nn_helpers import assert_close, copy_weights, em, outcome

RNG = np.random.default_rng(11)
F32 = dict(rtol=1e-4, atol=2e-5)          # several layer norms and softmaxes deep
F64 = dict(rtol=1e-9, atol=1e-10)


def _build(name, *args, **kwargs):
    """The torch module and its ember twin holding the same weights."""
    tm = getattr(torch.nn, name)(*args, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # the nested-tensor warning, tested below
        e_args = [_ember_layer(a) for a in args]
        emod = getattr(ember.nn, name)(*e_args, **kwargs)
    copy_weights(tm, emod)
    return tm, emod


def _ember_layer(arg):
    """An ember layer built like a torch layer argument (for the Encoder/Decoder stacks)."""
    if isinstance(arg, torch.nn.LayerNorm):
        return ember.nn.LayerNorm(arg.normalized_shape, arg.eps)
    if isinstance(arg, torch.nn.Module):
        return arg.ember_twin
    return arg


def _layer(name, *args, **kwargs):
    """A torch layer that remembers its ember twin (construct args are replayed)."""
    tl = getattr(torch.nn, name)(*args, **kwargs)
    tl.ember_twin = getattr(ember.nn, name)(*args, **kwargs)
    return tl


def _seq(n, batch, d, batch_first):
    if batch is None:
        return RNG.standard_normal((n, d))
    return RNG.standard_normal((batch, n, d) if batch_first else (n, batch, d))


def _run(tm, emod, arrays, masks, dtype, call=None):
    """Forward + backward of both modules; compare outputs, input and parameter gradients."""
    if dtype == torch.float64:
        tm.double()
        emod.double()
    tol = F64 if dtype == torch.float64 else F32
    t_in = [torch.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    e_in = [em(t, requires_grad=True) for t in t_in]
    t_kw, e_kw = dict(call or {}), dict(call or {})
    for k, m in masks.items():
        t_mask = torch.tensor(m)
        if t_mask.is_floating_point():
            t_mask = t_mask.to(dtype)
        t_kw[k], e_kw[k] = t_mask, em(t_mask)
    t_out = tm(*t_in, **t_kw)
    e_out = emod(*e_in, **e_kw)
    assert_close(e_out, t_out, what="output", **tol)
    g = RNG.standard_normal(tuple(t_out.shape))
    t_out.backward(torch.tensor(g, dtype=dtype))
    e_out.backward(ember.tensor(g, dtype=em(t_out).dtype))
    for i, (e, t) in enumerate(zip(e_in, t_in)):
        assert_close(e.grad, t.grad, what=f"grad of input {i}", **tol)
    e_params = dict(emod.named_parameters())
    t_params = dict(tm.named_parameters())
    assert e_params.keys() == t_params.keys()
    for name, p in t_params.items():
        assert_close(e_params[name].grad, p.grad, what=f"grad of {name}", **tol)


def _causal(n):
    return np.triu(np.full((n, n), -np.inf), 1)


def _key_padding(batch, n):
    m = np.zeros((batch, n), bool)
    m[1, n - 2:] = True                       # the second sequence ends in two pad tokens
    return m


S, T_LEN, N, D = 5, 4, 2, 8

LAYER_OPTIONS = [
    dict(),
    dict(batch_first=True),
    dict(norm_first=True),
    dict(batch_first=True, norm_first=True, activation="gelu"),
    dict(bias=False, layer_norm_eps=1e-3),
    dict(activation=torch.nn.functional.gelu),
]

ENCODER_MASKS = [
    ({}, {}),
    (dict(src_mask=_causal(S)), {}),
    (dict(src_mask=_causal(S)), dict(is_causal=True)),
    (dict(src_mask=np.triu(np.ones((S, S), bool), 1)), {}),
    (dict(src_key_padding_mask=_key_padding(N, S)), {}),
    (dict(src_mask=_causal(S), src_key_padding_mask=np.where(_key_padding(N, S), -np.inf, 0.0)),
     {}),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("options", LAYER_OPTIONS)
@pytest.mark.parametrize("masks,call", ENCODER_MASKS)
def test_encoder_layer_matches_torch(options, masks, call, dtype):
    kwargs = {k: v for k, v in options.items() if k != "activation"}
    act = options.get("activation", "relu")
    tm = torch.nn.TransformerEncoderLayer(D, 2, 16, 0.0, act, **kwargs)
    emod = ember.nn.TransformerEncoderLayer(
        D, 2, 16, 0.0, ember.nn.functional.gelu if callable(act) else act, **kwargs)
    copy_weights(tm, emod)
    src = _seq(S, N, D, options.get("batch_first", False))
    _run(tm, emod, [src], masks, dtype, call)


def test_encoder_layer_unbatched_and_activation_module():
    tm = torch.nn.TransformerEncoderLayer(D, 4, 12, 0.0, torch.nn.GELU(approximate="tanh"))
    emod = ember.nn.TransformerEncoderLayer(D, 4, 12, 0.0, ember.nn.GELU(approximate="tanh"))
    assert repr(emod) == repr(tm)
    assert emod.activation_relu_or_gelu == tm.activation_relu_or_gelu == 2
    copy_weights(tm, emod)
    _run(tm, emod, [_seq(S, None, D, False)], dict(src_mask=_causal(S)), torch.float64)


DECODER_MASKS = [
    {},
    dict(tgt_mask=_causal(T_LEN)),
    dict(tgt_mask=_causal(T_LEN), tgt_key_padding_mask=_key_padding(N, T_LEN),
         memory_key_padding_mask=_key_padding(N, S)),
    dict(memory_mask=RNG.standard_normal((T_LEN, S)),
         tgt_mask=np.triu(np.ones((T_LEN, T_LEN), bool), 1)),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("options", LAYER_OPTIONS[:5])
@pytest.mark.parametrize("masks", DECODER_MASKS)
def test_decoder_layer_matches_torch(options, masks, dtype):
    tm, emod = _build("TransformerDecoderLayer", D, 2, 16, 0.0, **options)
    bf = options.get("batch_first", False)
    _run(tm, emod, [_seq(T_LEN, N, D, bf), _seq(S, N, D, bf)], masks, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("options", [dict(), dict(batch_first=True, norm_first=True)])
@pytest.mark.parametrize("masks,call", [({}, {}), (dict(mask=_causal(S)), {}),
                                        (dict(mask=_causal(S)), dict(is_causal=True)),
                                        (dict(src_key_padding_mask=_key_padding(N, S)), {})])
def test_encoder_stack_matches_torch(options, masks, call, dtype):
    layer = _layer("TransformerEncoderLayer", D, 2, 16, 0.0, **options)
    tm, emod = _build("TransformerEncoder", layer, 3, torch.nn.LayerNorm(D),
                      enable_nested_tensor=False)
    _run(tm, emod, [_seq(S, N, D, options.get("batch_first", False))], masks, dtype, call)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("options", [dict(), dict(batch_first=True, norm_first=True)])
def test_decoder_stack_matches_torch(options, dtype):
    layer = _layer("TransformerDecoderLayer", D, 2, 16, 0.0, **options)
    tm, emod = _build("TransformerDecoder", layer, 2)
    bf = options.get("batch_first", False)
    masks = dict(tgt_mask=_causal(T_LEN), memory_key_padding_mask=_key_padding(N, S))
    _run(tm, emod, [_seq(T_LEN, N, D, bf), _seq(S, N, D, bf)], masks, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("options", [dict(), dict(batch_first=True),
                                     dict(norm_first=True, activation="gelu", bias=False)])
def test_transformer_matches_torch(options, dtype):
    tm, emod = _build("Transformer", D, 2, 2, 1, 16, 0.0, **options)
    assert repr(emod) == repr(tm)
    bf = options.get("batch_first", False)
    masks = dict(tgt_mask=_causal(T_LEN), src_key_padding_mask=_key_padding(N, S),
                 memory_key_padding_mask=_key_padding(N, S))
    _run(tm, emod, [_seq(S, N, D, bf), _seq(T_LEN, N, D, bf)], masks, dtype)


def test_transformer_unbatched_matches_torch():
    tm, emod = _build("Transformer", D, 2, 1, 1, 16, 0.0)
    _run(tm, emod, [_seq(S, None, D, False), _seq(T_LEN, None, D, False)],
         dict(tgt_mask=_causal(T_LEN)), torch.float64, dict(tgt_is_causal=True))


def test_a_wrong_is_causal_hint_is_trusted_as_torch_does():
    # with no key padding mask PyTorch applies a causal mask for is_causal=True, whatever the mask
    layer = _layer("TransformerEncoderLayer", D, 2, 16, 0.0)
    tm, emod = _build("TransformerEncoder", layer, 1, enable_nested_tensor=False)
    _run(tm, emod, [_seq(S, N, D, False)], dict(mask=np.zeros((S, S))), torch.float64,
         dict(is_causal=True))


# ----------------------------------------------------------------------------- eval mode
@pytest.mark.parametrize("padding", [_key_padding(N, S), np.array([[False] * S, [True] * S])])
def test_encoder_inference_zeroes_padded_positions_like_torch(padding):
    # eval + no grad + batch_first + only a key padding mask: PyTorch runs the unpadded tokens
    # as a nested tensor and pads the result with zeros (before the final norm)
    layer = _layer("TransformerEncoderLayer", D, 2, 16, batch_first=True)
    tm, emod = _build("TransformerEncoder", layer, 2, torch.nn.LayerNorm(D))
    tm.eval()
    emod.eval()
    src = torch.tensor(_seq(S, N, D, True), dtype=torch.float32)
    kpm = torch.tensor(padding)
    with torch.no_grad():
        expected = tm(src, src_key_padding_mask=kpm)
    with ember.no_grad():
        actual = emod(em(src), src_key_padding_mask=em(kpm))
    # the scenario does reach PyTorch's nested path: its padded rows are the final norm of 0
    assert torch.equal(expected[1, S - 2:], tm.norm.bias.expand(2, D))
    assert_close(actual, expected, **F32)


@pytest.mark.parametrize("kind", ["not_left_aligned", "with_grad", "float64_layer"])
def test_encoder_and_layer_in_eval_mode_match_torch(kind):
    padding = _key_padding(N, S)
    if kind == "not_left_aligned":
        padding = np.array([[False, True, False, False, False], [False] * S])
    layer = _layer("TransformerEncoderLayer", D, 2, 16, batch_first=True)
    tm, emod = _build("TransformerEncoder", layer, 2)
    tm.eval()
    emod.eval()
    if kind == "float64_layer":       # the single layer: PyTorch's fused layer kernel
        tm, emod = tm.layers[0].double(), emod.layers[0].double()
    dtype = torch.float64 if kind == "float64_layer" else torch.float32
    src = torch.tensor(_seq(S, N, D, True), dtype=dtype, requires_grad=kind == "with_grad")
    kpm = torch.tensor(padding)
    expected = tm(src, src_key_padding_mask=kpm)
    actual = emod(em(src, requires_grad=src.requires_grad), src_key_padding_mask=em(kpm))
    assert_close(actual, expected, **(F64 if kind == "float64_layer" else F32))


# ----------------------------------------------------------------------------- structure
@pytest.mark.parametrize("name,args,kwargs", [
    ("TransformerEncoderLayer", (D, 2), dict(dim_feedforward=16)),
    ("TransformerEncoderLayer", (D, 2, 16, 0.2, "gelu", 1e-6, True, True, False), {}),
    ("TransformerDecoderLayer", (D, 2), dict(dim_feedforward=16, bias=False)),
    ("Transformer", (D, 2, 2, 1, 16), dict(batch_first=True)),
    ("Transformer", (D, 2, 1, 1, 16), dict(norm_first=True, bias=False, dropout=0.3)),
])
def test_structure_state_dict_and_repr_match_torch(name, args, kwargs):
    tm, emod = _build(name, *args, **kwargs)        # _build loads torch's state_dict strictly
    assert repr(emod) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in emod.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    for attr in ("norm_first", "activation_relu_or_gelu", "d_model", "nhead", "batch_first"):
        assert getattr(emod, attr, None) == getattr(tm, attr, None), attr


def test_encoder_and_decoder_stacks_clone_their_layer():
    for T in (torch, ember):
        layer = T.nn.TransformerEncoderLayer(D, 2, 16)
        enc = T.nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
        assert all(lay is not layer for lay in enc.layers)
        assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
        assert torch.equal(torch.tensor(enc.layers[0].linear1.weight.detach().numpy()),
                           torch.tensor(layer.linear1.weight.detach().numpy()))
    tenc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(D, 2, 16), 3,
                                       enable_nested_tensor=False, mask_check=False)
    eenc = ember.nn.TransformerEncoder(ember.nn.TransformerEncoderLayer(D, 2, 16), 3,
                                       enable_nested_tensor=False, mask_check=False)
    assert repr(eenc) == repr(tenc)
    for attr in ("num_layers", "enable_nested_tensor", "use_nested_tensor", "mask_check"):
        assert getattr(eenc, attr) == getattr(tenc, attr)


def test_transformer_initialises_matrices_xavier_uniform():
    ember.manual_seed(0)
    m = ember.nn.Transformer(16, 2, 1, 1, 64, 0.0)
    w = m.encoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6.0 / (16 + 64))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert m.encoder.layers[0].self_attn.in_proj_bias.detach().numpy().tolist() == [0.0] * 48


def test_generate_square_subsequent_mask_matches_torch():
    for kw in ({}, dict(dtype="float64"), dict(dtype="bool")):
        targs = {k: getattr(torch, v) for k, v in kw.items()}
        eargs = {k: getattr(ember, v) for k, v in kw.items()}
        t = torch.nn.Transformer.generate_square_subsequent_mask(4, **targs)
        e = ember.nn.Transformer.generate_square_subsequent_mask(4, **eargs)
        assert_close(e, t)
        assert str(e) == str(t).replace("torch.", "ember.")


# ----------------------------------------------------------------------------- warnings/errors
def _warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [f"{w.category.__name__}: {w.message}" for w in caught]


@pytest.mark.parametrize("layer_kwargs", [
    dict(), dict(norm_first=True), dict(batch_first=True, bias=False),
    dict(batch_first=True, activation=torch.tanh), dict(batch_first=True, nhead=1),
    dict(batch_first=True), dict(batch_first=True, activation="gelu"),
])
def test_enable_nested_tensor_warning_matches_torch(layer_kwargs):
    def build(T):
        kw = dict(layer_kwargs)
        if kw.get("activation") is torch.tanh:
            kw["activation"] = T.tanh
        nhead = kw.pop("nhead", 2)
        layer = T.nn.TransformerEncoderLayer(D, nhead, 16, **kw)
        box = []
        caught = _warnings(lambda: box.append(T.nn.TransformerEncoder(layer, 2)))
        return caught, box[0].use_nested_tensor
    assert build(ember) == build(torch)


def test_transformer_warns_about_nested_tensors_like_torch():
    assert _warnings(lambda: ember.nn.Transformer(D, 2, 1, 1, 16)) == \
        _warnings(lambda: torch.nn.Transformer(D, 2, 1, 1, 16))


def test_mismatched_mask_types_warn_like_torch():
    def calls(T):
        layer = T.nn.TransformerEncoderLayer(D, 2, 16, 0.0)
        enc = T.nn.TransformerEncoder(T.nn.TransformerEncoderLayer(D, 2, 16, 0.0), 1,
                                      enable_nested_tensor=False)
        x = T.zeros(S, N, D)
        float_mask, bool_kpm = T.zeros(S, S), T.zeros(N, S, dtype=T.bool)
        return [_warnings(lambda: layer(x, src_mask=float_mask, src_key_padding_mask=bool_kpm)),
                _warnings(lambda: enc(x, mask=float_mask, src_key_padding_mask=bool_kpm)),
                _warnings(lambda: layer(x, src_mask=T.zeros(S, S, dtype=T.bool),
                                        src_key_padding_mask=T.zeros(N, S)))]
    expected = calls(torch)
    assert all(expected) and calls(ember) == expected


def test_errors_match_torch():
    def cases(T):
        nn = T.nn
        layer = nn.TransformerEncoderLayer(D, 2, 16)
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, 2, 16), 1,
                                    enable_nested_tensor=False)
        model = nn.Transformer(D, 2, 1, 1, 16)
        x = T.zeros(S, N, D)
        return [
            outcome(lambda: nn.TransformerEncoderLayer(D, 2, activation="tanh")),
            outcome(lambda: nn.TransformerDecoderLayer(D, 2, activation="swish")),
            outcome(lambda: nn.TransformerEncoderLayer(D, 3)),
            outcome(lambda: layer(x, src_key_padding_mask=T.zeros(N, S, dtype=T.int64))),
            outcome(lambda: layer(x, src_mask=T.zeros(S, S, dtype=T.int32))),
            outcome(lambda: enc(x, mask=T.zeros(S, S, dtype=T.int32))),
            outcome(lambda: layer(x, is_causal=True)),
            outcome(lambda: model(x, T.zeros(T_LEN, N + 1, D))),
            outcome(lambda: nn.Transformer(D, 2, 1, 1, 16, batch_first=True)(
                T.zeros(N, S, D), T.zeros(N + 1, T_LEN, D))),
            outcome(lambda: model(x, T.zeros(T_LEN, N, D + 2))),
            outcome(lambda: model(T.zeros(S, N, D - 2), T.zeros(T_LEN, N, D - 2))),
        ]
    expected = cases(torch)
    assert all(e[0] != "ok" for e in expected)
    assert cases(ember) == expected



def test_transformer_with_custom_encoder_and_decoder_matches_torch():
    enc_layer = _layer("TransformerEncoderLayer", D, 2, 16, 0.0, batch_first=True)
    dec_layer = _layer("TransformerDecoderLayer", D, 2, 16, 0.0, batch_first=True)
    t_enc, e_enc = _build("TransformerEncoder", enc_layer, 2)
    t_dec, e_dec = _build("TransformerDecoder", dec_layer, 1, torch.nn.LayerNorm(D))
    tm = torch.nn.Transformer(D, 2, custom_encoder=t_enc, custom_decoder=t_dec, batch_first=True)
    emod = ember.nn.Transformer(D, 2, custom_encoder=e_enc, custom_decoder=e_dec,
                                batch_first=True)
    assert repr(emod) == repr(tm)
    copy_weights(tm, emod)           # the custom parts were re-initialised (xavier) by both
    _run(tm, emod, [_seq(S, N, D, True), _seq(T_LEN, N, D, True)],
         dict(tgt_mask=_causal(T_LEN)), torch.float64)
