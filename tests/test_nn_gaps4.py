"""Differential tests (torch vs ember) of the remaining torch.nn names: LazyConvTranspose1d/2d/3d,
LazyInstanceNorm1d/2d/3d, SyncBatchNorm, DataParallel, CrossMapLRN2d, Container,
LinearCrossEntropyLoss / F.linear_cross_entropy, init.sparse_ and the deprecated init aliases,
the fusion utils, skip_init, stateless.functional_call, the conv weight memory-format
conversion, F.multi_head_attention_forward, F.conv_tbc and nn.grad."""
import numpy as np
import pytest

from differential import catch, same, warnings_of


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


def _grads(module):
    return {k: p.grad for k, p in module.named_parameters()}


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


# ----------------------------------------------------------------------------- SyncBatchNorm
@pytest.mark.parametrize("shape", [(3, 4), (3, 4, 5), (2, 4, 3, 3), (2, 4, 2, 3, 2),
                                   (2, 4, 2, 1, 2, 2)])
@pytest.mark.parametrize("kw", [dict(), dict(momentum=None), dict(affine=False),
                                dict(track_running_stats=False), dict(bias=False)])
def test_sync_batch_norm(shape, kw):
    def scenario(T):
        m = _load_same(T, T.nn.SyncBatchNorm(4, **kw).double())
        out = [repr(m), m.process_group]
        for training in (True, True, False):
            m.train(training)
            x = _x(T, shape, requires_grad=True, seed=len(out))
            y = m(x)
            y.backward(_x(T, shape, seed=11))
            out += [y, x.grad, m.state_dict()]
        return out, _grads(m)
    same(scenario)


def test_sync_batch_norm_errors_and_convert():
    def scenario(T):
        nn = T.nn
        m = nn.SyncBatchNorm(4)
        errors = [catch(m, _x(T, (4,), "float32")), catch(m, _x(T, (1, 4), "float32")),
                  catch(nn.SyncBatchNorm(0), _x(T, (2, 0, 3), "float32"))]
        net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4),
                            nn.Sequential(nn.BatchNorm1d(4, affine=False, momentum=None)),
                            nn.LayerNorm(3), nn.BatchNorm3d(2, bias=False).eval())
        bn = net[1]
        bn.qconfig = "q"
        conv = nn.SyncBatchNorm.convert_sync_batchnorm(net)
        shared = [conv[1].weight is bn.weight, conv[1].running_mean is bn.running_mean,
                  conv[1].num_batches_tracked is bn.num_batches_tracked, conv[1].qconfig,
                  conv[4].training, conv is net]
        lone = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(3), process_group=None)
        return errors, repr(conv), shared, repr(lone)
    same(scenario)


# ----------------------------------------------------------------------------- DataParallel
def test_data_parallel():
    def scenario(T):
        nn = T.nn
        lin = _load_same(T, nn.Linear(3, 2).double())
        dp, warns = warnings_of(lambda: nn.DataParallel(lin))
        x = _x(T, (4, 3), requires_grad=True)
        y = dp(x)
        y.sum().backward()
        dp.eval()
        seq = nn.DataParallel(nn.Sequential(nn.Linear(3, 2), nn.ReLU()), device_ids=[0],
                              output_device=0, dim=1)

        class Scale(nn.Module):
            def forward(self, a, b=2):
                return a * b
        return [repr(dp), warns, dp.module is lin, list(dp.state_dict()), dp.device_ids, y,
                x.grad, lin.weight.grad, lin.training, repr(seq),
                [n for n, _ in seq.named_parameters()], catch(lambda: dp.output_device),
                nn.DataParallel(Scale())(x, b=3)]
    same(scenario)


# ----------------------------------------------------------------------------- CrossMapLRN2d
@pytest.mark.parametrize("size", [2, 3, 4, 5, 9])
@pytest.mark.parametrize("channels", [1, 3, 6])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_map_lrn2d(size, channels, dtype):
    def scenario(T):
        m = T.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.6, k=2.0)
        x = _x(T, (2, channels, 3, 4), dtype, requires_grad=True)
        y = m(x)
        y.backward(_x(T, tuple(y.shape), dtype, seed=5))
        return repr(m), y, x.grad, type(y.grad_fn).__name__, m.state_dict()
    same(scenario, rtol=1e-4, atol=1e-5)


def test_cross_map_lrn2d_errors():
    def scenario(T):
        m = T.nn.CrossMapLRN2d(3)
        out = [catch(m, _x(T, s, "float32")) for s in [(5, 4, 4), (2, 5, 4), (2, 5, 4, 4, 3)]]
        # size 1: the forward works, torch's backward fails on its narrow
        x = _x(T, (2, 3, 2, 2), requires_grad=True)
        y = T.nn.CrossMapLRN2d(1, 0.1)(x)
        out += [repr(T.nn.CrossMapLRN2d(4)), y, catch(lambda: y.sum().backward())]
        return out
    same(scenario)


# ----------------------------------------------------------------------------- Container
def test_container():
    def scenario(T):
        nn = T.nn
        c, warns = warnings_of(lambda: nn.Container(a=nn.Linear(2, 3), b=nn.ReLU()))
        empty, warns2 = warnings_of(nn.Container)
        return [repr(c), warns, list(c.state_dict()), repr(empty), warns2,
                catch(c, _x(T, (2,), "float32")), isinstance(c, nn.Module)]
    same(scenario)


# ----------------------------------------------------------------------------- linear_cross_entropy
LCE_CASES = [dict(), dict(reduction="sum"), dict(reduction="none"), dict(ignore_index=1),
             dict(label_smoothing=0.2), dict(weight=True), dict(weight=True, reduction="none"),
             dict(bias=True)]


@pytest.mark.parametrize("kw", LCE_CASES)
@pytest.mark.parametrize("out_features", [(), (2,), (2, 3)])
def test_linear_cross_entropy_loss(kw, out_features):
    def scenario(T):
        kw2 = dict(kw)
        if kw2.pop("weight", False):
            kw2["weight"] = _x(T, (5,), seed=9).abs()
        m = _load_same(T, T.nn.LinearCrossEntropyLoss(4, 5, out_features=out_features,
                                                       dtype=T.float64, **kw2))
        x = _x(T, (3, 4), requires_grad=True)
        t = T.tensor(np.random.default_rng(2).integers(0, 5, (3,) + out_features))
        t[0].fill_(1)
        loss = m(x, t)
        loss.sum().backward()
        # class probabilities
        p = _x(T, (3, 5) + out_features, seed=4).softmax(1)
        probs = catch(m, x, p)
        return repr(m), loss, x.grad, _grads(m), probs, list(m.state_dict())
    same(scenario)


def test_linear_cross_entropy_functional():
    def scenario(T):
        F = T.nn.functional
        x = _x(T, (3, 4), requires_grad=True)
        w = _x(T, (5, 2, 4), seed=1, requires_grad=True)
        b = _x(T, (5, 2), seed=2, requires_grad=True)
        t = T.tensor([[0, 4], [2, 2], [1, 3]])
        y = F.linear_cross_entropy(x, w, t, linear_bias=b)
        y.backward()
        opts = T.nn.LinearCrossEntropyOptions()
        w2 = w.detach()[:, 0]
        out = [y, x.grad, w.grad, b.grad, repr(opts),
               F.linear_cross_entropy(x[0], w2, T.tensor(3)),
               F.linear_cross_entropy(x, w2, t[:, 0], options=opts),
               warnings_of(lambda: F.linear_cross_entropy(x, w, t, options=opts)),
               warnings_of(lambda: F.linear_cross_entropy(x, w2, t[:, 0], options=opts,
                                                          label_smoothing=0.1))]
        bad = [lambda: F.linear_cross_entropy(x[None], w2, t),
               lambda: F.linear_cross_entropy(x, w2[0], t),
               lambda: F.linear_cross_entropy(x, w2[:, :3], t),
               lambda: F.linear_cross_entropy(x, w, t, linear_bias=b[:, 0]),
               lambda: F.linear_cross_entropy(x[0], w, t),
               lambda: F.linear_cross_entropy(x, w2, _x(T, (3, 5)), ignore_index=0),
               lambda: T.nn.LinearCrossEntropyLoss(4, 5, weight=_x(T, (4,))),
               lambda: T.nn.LinearCrossEntropyLoss(4, 5, label_smoothing=1.5),
               lambda: T.nn.LinearCrossEntropyOptions(acc_policy="x"),
               lambda: T.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:0"),
               lambda: T.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
               lambda: T.nn.LinearCrossEntropyOptions(acc_dtype=T.int32)]
        return out, [catch(f) for f in bad], repr(T.nn.LinearCrossEntropyOptions(
            chunking_method="aspect_ratio:2", acc_dtype=T.float32))
    same(scenario)


# ----------------------------------------------------------------------------- init
def test_init_sparse():
    def scenario(T):
        init = T.nn.init
        out = []
        for rows, cols, sparsity in [(5, 4, 0.5), (10, 3, 0.25), (4, 6, 0.0), (3, 3, 1.0)]:
            w = init.sparse_(T.empty(rows, cols), sparsity, std=0.5)
            out += [(w == 0).sum(0), bool(w.abs().max() < 5)]
        w, warns = warnings_of(lambda: init.sparse(T.empty(6, 2), 0.5))
        out += [(w == 0).sum(0), warns, catch(init.sparse_, T.empty(2, 2, 2), 0.1),
                init.sparse_(T.empty(3, 3, requires_grad=True), 0.3).grad_fn]
        return out
    same(scenario)


def test_init_deprecated_aliases():
    def scenario(T):
        init = T.nn.init
        return [warnings_of(lambda: init.eye(T.empty(3, 4))),
                warnings_of(lambda: init.dirac(T.empty(4, 2, 3))),
                warnings_of(lambda: init.constant(T.empty(2), 1.5)),
                sorted(init.__all__)]
    same(scenario)


# ----------------------------------------------------------------------------- fusion utils
@pytest.mark.parametrize("kind,bias,affine", [("conv2d", True, True), ("conv1d", False, True),
                                              ("conv3d", True, False),
                                              ("convt2d", True, True), ("linear", True, True),
                                              ("linear", False, True), ("linear1", True, True)])
def test_fuse_bn(kind, bias, affine):
    def scenario(T):
        nn, U = T.nn, T.nn.utils
        if kind == "linear" or kind == "linear1":
            layer = nn.Linear(3, 4, bias=bias)
            bn = nn.BatchNorm1d(1 if kind == "linear1" else 4, affine=affine)
            x = _x(T, (5, 3))
        else:
            d = int(kind[-2])
            cls = nn.ConvTranspose2d if kind == "convt2d" else getattr(nn, f"Conv{d}d")
            layer = cls(3, 4, 2, bias=bias)
            bn = getattr(nn, f"BatchNorm{d}d")(4, affine=affine)
            x = _x(T, (2, 3) + (4,) * d)
        layer, bn = _load_same(T, layer.double()), _load_same(T, bn.double(), seed=20)
        bn.running_var.abs_()
        err = [catch(lambda: (U.fuse_linear_bn_eval if "linear" in kind else U.fuse_conv_bn_eval)(
            layer, bn))]
        layer.eval(), bn.eval()
        if "linear" in kind:
            fused = U.fuse_linear_bn_eval(layer, bn)
        else:
            fused = U.fuse_conv_bn_eval(layer, bn, transpose=kind == "convt2d")
        return [err, repr(fused), fused is layer, type(fused.weight).__name__, fused(x), catch(lambda: bn(layer(x))),
                fused.weight.requires_grad, fused.bias.requires_grad, layer.bias is None]
    same(scenario)


def test_fuse_weights_and_errors():
    def scenario(T):
        nn, U = T.nn, T.nn.utils
        w = _x(T, (4, 3, 2, 2), requires_grad=True)
        rm, rv = _x(T, (4,), seed=1), _x(T, (4,), seed=2).abs()
        fw, fb = U.fuse_conv_bn_weights(w, None, rm, rv, 1e-3, None, None)
        lw, lb = U.fuse_linear_bn_weights(w[:, :, 0, 0], _x(T, (4,), seed=3), rm, rv, 1e-5,
                                          _x(T, (4,), seed=4), _x(T, (4,), seed=5))
        f32 = U.fuse_conv_bn_weights(w.float(), _x(T, (4,), "float32"), rm, rv, 1e-5,
                                     None, None)
        lin = nn.Linear(3, 4).eval()
        errors = [catch(U.fuse_linear_bn_eval, lin, nn.BatchNorm1d(5).eval()),
                  catch(U.fuse_linear_bn_eval, lin,
                        nn.BatchNorm1d(4, track_running_stats=False).eval()),
                  catch(U.fuse_conv_bn_eval, nn.Conv2d(3, 4, 1).eval(), nn.BatchNorm2d(4))]
        return [fw, fb, type(fw).__name__, fw.requires_grad, fb.requires_grad, lw, lb,
                lw.requires_grad, f32, errors]
    same(scenario)


# ----------------------------------------------------------------------------- misc utils
def test_skip_init():
    def scenario(T):
        T.manual_seed(0)
        m = T.nn.utils.skip_init(T.nn.Linear, 3, 4, bias=False)
        after = T.rand(3)                  # the global generator was not advanced
        T.manual_seed(0)
        return [repr(m), bool((after == T.rand(3)).all()), tuple(m.weight.shape), m.weight.requires_grad,
                repr(T.nn.utils.skip_init(T.nn.Conv2d, 2, 3, 1, device="cpu")),
                catch(T.nn.utils.skip_init, int), catch(T.nn.utils.skip_init, T.nn.ReLU),
                catch(T.nn.utils.skip_init, 3)]
    same(scenario)


def test_stateless_functional_call():
    def scenario(T):
        lin = T.nn.Linear(2, 3).double()
        x = _x(T, (4, 2))
        params = {"weight": _x(T, (3, 2), seed=1), "bias": _x(T, (3,), seed=2)}
        y, warns = warnings_of(lambda: T.nn.utils.stateless.functional_call(lin, params, (x,)))
        y2, _ = warnings_of(lambda: T.nn.utils.stateless.functional_call(lin, params, x))
        return y, warns, y2, T.nn.utils.stateless.__all__
    same(scenario)


def test_convert_conv_weight_memory_format():
    def scenario(T):
        nn, U = T.nn, T.nn.utils
        m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ConvTranspose2d(4, 4, 3), nn.Linear(2, 2),
                          nn.Sequential(nn.Conv2d(4, 2, 2)))
        w = m[0].weight
        r = U.convert_conv2d_weight_memory_format(m, T.channels_last)
        m3 = nn.Conv3d(2, 3, 2)
        before = m3.weight.detach().clone()
        U.convert_conv3d_weight_memory_format(m3, T.contiguous_format)
        return [r is m, m[0].weight is w, m[0].weight.stride(), m[1].weight.stride(),
                m[2].weight.stride(), m[3][0].weight.stride(),
                m[0].weight.is_contiguous(memory_format=T.channels_last),
                m3.weight.stride(), bool((m3.weight == before).all()), U.init.skip_init.__name__]
    same(scenario)


# ----------------------------------------------------------------------------- F.conv_tbc
@pytest.mark.parametrize("time,kernel,pad", [(7, 3, 0), (7, 3, 1), (7, 3, 2), (7, 3, -1),
                                             (2, 3, 0), (5, 1, 0), (4, 4, 3)])
def test_conv_tbc(time, kernel, pad):
    def scenario(T):
        x = _x(T, (time, 2, 3), requires_grad=True)
        w = _x(T, (kernel, 3, 5), seed=1, requires_grad=True)
        b = _x(T, (5,), seed=2, requires_grad=True)
        y = T.nn.functional.conv_tbc(x, w, b, pad)
        y.backward(_x(T, tuple(y.shape), seed=3))
        return y, x.grad, w.grad, b.grad
    same(scenario)


def test_conv_tbc_errors():
    def scenario(T):
        F = T.nn.functional
        x, w, b = _x(T, (7, 2, 3), "float32"), _x(T, (3, 3, 5), "float32"), _x(T, (5,), "float32")
        return [catch(F.conv_tbc, *a) for a in [(x[0], w, b), (x, w[0], b), (x, w, b[:2]),
                                                (x, _x(T, (3, 4, 5), "float32"), b),
                                                (x, w, b, 1.5), (x.double(), w, b)]] + [
            F.conv_tbc(x, w, b, pad=1), F.conv_tbc(x, w, b.double())]
    same(scenario)


# ----------------------------------------------------------------------------- F.multi_head_attention_forward
MHA_CASES = [dict(), dict(bias=False), dict(add_bias_kv=True), dict(add_zero_attn=True),
             dict(kdim=3, vdim=5), dict(attn_mask="float"), dict(key_padding_mask=True),
             dict(need_weights=False), dict(average_attn_weights=False),
             dict(attn_mask="bool", key_padding_mask=True, add_zero_attn=True),
             dict(unbatched=True)]


@pytest.mark.parametrize("case", MHA_CASES)
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


# ----------------------------------------------------------------------------- nn.grad
@pytest.mark.parametrize("d,kw", [(1, dict()), (1, dict(stride=2, padding=1)),
                                  (2, dict(stride=2, padding=1, groups=2)),
                                  (2, dict(dilation=2, padding=(1, 2))),
                                  (3, dict(stride=(1, 2, 1), padding=1))])
def test_nn_grad(d, kw):
    def scenario(T):
        F, G = T.nn.functional, T.nn.grad
        x = _x(T, (2, 4) + (7,) * d, requires_grad=True)
        groups = kw.get("groups", 1)
        w = _x(T, (6, 4 // groups) + (3,) * d, seed=1, requires_grad=True)
        y = getattr(F, f"conv{d}d")(x, w, **kw)
        g = _x(T, tuple(y.shape), seed=2, requires_grad=True)
        gi = getattr(G, f"conv{d}d_input")(tuple(x.shape), w, g, **kw)
        gw = getattr(G, f"conv{d}d_weight")(x, tuple(w.shape), g, **kw)
        ref = T.autograd.grad(y, (x, w), g)
        (gi.sum() + (gw * gw).sum()).backward()
        return gi, gw, ref, type(gi.grad_fn).__name__, g.grad, w.grad, x.grad
    same(scenario)


def test_nn_grad_errors_and_names():
    def scenario(T):
        G = T.nn.grad
        w = _x(T, (6, 2, 3, 3))
        return [catch(G.conv2d_input, (2, 4, 7), w, _x(T, (2, 6, 5, 5)), 1, 0, 1, 2),
                sorted(n for n in dir(G) if n.startswith("conv")),
                T.nn.functional.grad is G]
    same(scenario)
