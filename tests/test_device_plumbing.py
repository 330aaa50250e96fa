"""CUDA devices without a GPU: the device plumbing, on the CPU stand-in for CuPy.

tests/fake_cupy.py behaves as CuPy does towards NumPy (a distinct array type; implicit
conversions refused; host transfers counted). Bound as ember's CUDA backend (`fake` fixture),
it runs everything a GPU user touches: devices and their reprs, moves between devices,
modules and optimizer state following their parameters, torch's errors, serialization,
autocast and GradScaler on cuda, and whole training steps that must not copy arrays between
host and device. Without the stand-in, ember answers as a torch built without CUDA (checked
against the installed torch, a CPU build). The values a GPU computes are checked on a GPU by
tests/gpu/.
"""
import io
import os
import sys

import numpy as np
import pytest
import torch

import ember
import ember.nn as nn
import ember.nn.functional as F
import fake_cupy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu"))
import cuda_env  # noqa: E402

CUDA0 = ember.device("cuda", 0)
CUDA1 = ember.device("cuda", 1)


@pytest.fixture
def fake():
    """Two CUDA devices on the stand-in for the test's duration."""
    with fake_cupy.installed(device_count=2) as module:
        yield module


def is_device_array(t):
    return type(t._data) is fake_cupy.ndarray


def errors_match(ember_thunk, torch_thunk):
    """The same exception type and message from both (each must raise)."""
    with pytest.raises(Exception) as t_err:
        torch_thunk()
    with pytest.raises(Exception) as e_err:
        ember_thunk()
    assert type(e_err.value).__name__ == type(t_err.value).__name__
    assert str(e_err.value) == str(t_err.value)


# ----------------------------------------------------------------------------- no CUDA
@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(1, device="cuda"),
    lambda lib: lib.ones(2, device="cuda:1"),
    lambda lib: lib.zeros(1).cuda(),
    lambda lib: lib.zeros(1).to("cuda:1"),
    lambda lib: lib.nn.Linear(2, 2).cuda(),
    lambda lib: lib.cuda.current_device(),
    lambda lib: lib.cuda.get_device_name(),
    lambda lib: lib.device(0),
], ids=["factory", "factory_index", "tensor_cuda", "tensor_to", "module_cuda",
        "current_device", "device_name", "bare_index"])
def test_without_cuda_errors_as_torch(call):
    errors_match(lambda: call(ember), lambda: call(torch))


def test_without_cuda_queries_as_torch():
    assert ember.cuda.is_available() is torch.cuda.is_available() is False
    assert ember.cuda.device_count() == torch.cuda.device_count() == 0
    assert ember.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0
    assert repr(ember.device("cuda")) == repr(torch.device("cuda"))
    assert repr(ember.device("cuda:1")) == repr(torch.device("cuda:1"))
    assert str(ember.device("cuda", 0)) == str(torch.device("cuda", 0))


def test_gpu_tests_say_why_they_skip():
    if cuda_env.FAKE or ember.cuda.is_available():
        pytest.skip("a CUDA device (or the stand-in) is present")
    assert "CuPy" in cuda_env.skip_reason()


def test_stand_in_is_removed_after_use():
    with fake_cupy.installed():
        assert ember.cuda.is_available()
    assert not ember.cuda.is_available()
    errors_match(lambda: ember.zeros(1, device="cuda"), lambda: torch.zeros(1, device="cuda"))


# ----------------------------------------------------------------------------- devices
def test_factories_and_reprs(fake):
    t = ember.zeros(2, device="cuda")
    assert t.device == CUDA0 and t.is_cuda and not t.is_cpu and t.get_device() == 0
    assert is_device_array(t)
    assert repr(t) == "tensor([0., 0.], device='cuda:0')"
    w = ember.ones(2, 2, device="cuda:1", requires_grad=True)
    assert w.device == CUDA1 and w.get_device() == 1
    assert repr(w) == ("tensor([[1., 1.],\n        [1., 1.]], device='cuda:1', "
                       "requires_grad=True)")
    assert repr(ember.arange(3, device=ember.device("cuda"))) == \
        "tensor([0, 1, 2], device='cuda:0')"
    assert ember.tensor([1.5], device=0).device == CUDA0
    assert ember.rand(3, device="cuda").device == CUDA0
    assert ember.randn(3, device="cuda").device == CUDA0
    assert ember.zeros_like(t).device == CUDA0
    assert ember.empty(0, device="cuda").device == CUDA0
    assert ember.full((2,), 7, device="cuda").tolist() == [7, 7]


def test_moves(fake):
    c = ember.tensor([1.0, 2.0])
    g = c.cuda()
    assert g.device == CUDA0 and is_device_array(g)
    assert c.cuda(1).device == CUDA1
    assert g.to("cuda:1").device == CUDA1
    assert g.to(CUDA0) is g                     # already there: the same tensor, as in torch
    back = g.cpu()
    assert back.device == ember.device("cpu") and type(back._data) is np.ndarray
    assert back.tolist() == [1.0, 2.0]
    other = ember.zeros(1, dtype=ember.float64, device="cuda:1")
    moved = c.to(other)
    assert moved.device == CUDA1 and moved.dtype is ember.float64
    half = g.to(ember.float16)
    assert half.device == CUDA0 and half.dtype is ember.float16
    assert g.double().device == CUDA0


def test_move_is_differentiable(fake):
    c = ember.tensor([1.0, 2.0], requires_grad=True)
    g = c.cuda()
    assert g.grad_fn.name() == "ToCopyBackward0"
    (g * g).sum().backward()
    assert c.grad.device == ember.device("cpu")
    assert c.grad.tolist() == [2.0, 4.0]
    w = ember.tensor([3.0], device="cuda", requires_grad=True)
    w.cpu().sum().backward()
    assert w.grad.device == CUDA0 and w.grad.tolist() == [1.0]


def test_scalars_and_host_copies(fake):
    t = ember.tensor([[1.5, 2.5]], device="cuda")
    assert t.tolist() == [[1.5, 2.5]]
    assert t[0, 1].item() == 2.5
    assert float(t[0, 0]) == 1.5 and int(t[0, 1]) == 2 and bool(t[0, 0])
    assert ember.tensor([1.5], device="cuda", dtype=ember.bfloat16).item() == 1.5
    assert ember.tensor([1.5, 2.0], device="cuda", dtype=ember.float16).tolist() == [1.5, 2.0]
    with pytest.raises(TypeError, match="^can't convert cuda:0 device type tensor to numpy. "
                                        r"Use Tensor.cpu\(\) to copy the tensor to host memory "
                                        "first.$"):
        t.numpy()
    assert t.cpu().numpy().tolist() == [[1.5, 2.5]]
    with pytest.raises(TypeError):
        np.asarray(t._data)           # CuPy's refusal of an implicit host copy


def test_mixing_devices_is_torchs_error(fake):
    a = ember.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match="^Expected all tensors to be on the same device, "
                                           "but found at least two devices, cuda:0 and cpu!$"):
        a + ember.ones(2)
    with pytest.raises(RuntimeError, match="cuda:0 and cuda:1!$"):
        a + ember.ones(2, device="cuda:1")
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cpu!$"):
        a @ ember.ones(2)
    # a zero-dim CPU tensor joins a computation on another device, as in torch
    s = a * ember.tensor(3.0)
    assert s.device == CUDA0 and s.tolist() == [3.0, 3.0]
    assert (a + ember.tensor(2, dtype=ember.int64)).tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="^indices should be either on cpu or on the same "
                                           r"device as the indexed tensor \(cpu\)$"):
        ember.ones(3)[ember.tensor([0], device="cuda")]
    # CPU indices index a cuda tensor (copied over)
    assert a[ember.tensor([1, 0])].device == CUDA0


# ----------------------------------------------------------------------------- modules
def test_module_to_and_cuda(fake):
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    assert m.cuda() is m
    for name, t in list(m.named_parameters()) + list(m.named_buffers()):
        assert t.device == CUDA0, name
    assert isinstance(m[0].weight, nn.Parameter) and m[0].weight.is_leaf
    m.to("cuda:1")
    assert all(p.device == CUDA1 for p in m.parameters())
    m.to(ember.device("cpu"))
    assert all(p.device == ember.device("cpu") for p in m.parameters())
    m.to("cuda")
    out = m(ember.randn(5, 3, device="cuda"))
    out.sum().backward()
    assert all(p.grad.device == CUDA0 for p in m.parameters())


@pytest.mark.parametrize("make", [
    lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: ember.optim.Adam(ps, lr=0.1),
    lambda ps: ember.optim.AdamW(ps, lr=0.1),
    lambda ps: ember.optim.RMSprop(ps, lr=0.1),
], ids=["SGD", "Adam", "AdamW", "RMSprop"])
def test_optimizer_state_follows_parameters(fake, make):
    m = nn.Linear(3, 2).cuda()
    opt = make(m.parameters())
    m(ember.randn(4, 3, device="cuda")).sum().backward()
    opt.step()
    for p in m.parameters():
        for key, value in opt.state[p].items():
            if isinstance(value, ember.Tensor) and value.dim():
                assert value.device == CUDA0, key
    # a state saved from CPU parameters loads onto the parameters' device, as in torch
    cpu_model = nn.Linear(3, 2)
    cpu_opt = make(cpu_model.parameters())
    cpu_model(ember.randn(4, 3)).sum().backward()
    cpu_opt.step()
    opt.load_state_dict(cpu_opt.state_dict())
    for p in m.parameters():
        for key, value in opt.state[p].items():
            if isinstance(value, ember.Tensor) and value.dim():
                assert value.device == CUDA0, key
    opt.step()


# ----------------------------------------------------------------------------- serialization
def test_save_and_load_cuda_tensors(fake):
    t = ember.tensor([1.0, 2.0], device="cuda")
    buffer = io.BytesIO()
    ember.save({"t": t, "m": nn.Linear(2, 1).cuda().state_dict()}, buffer)
    buffer.seek(0)
    loaded = ember.load(buffer)
    assert loaded["t"].device == CUDA0 and loaded["t"].tolist() == [1.0, 2.0]
    assert loaded["m"]["weight"].device == CUDA0
    for location in ("cpu", ember.device("cpu"), {"cuda:0": "cpu"}):
        buffer.seek(0)
        assert ember.load(buffer, map_location=location)["t"].device == ember.device("cpu")
    buffer.seek(0)
    assert ember.load(buffer, map_location="cuda:1")["t"].device == CUDA1
    # torch reads ember's checkpoint: the storages are recorded on cuda:0
    buffer.seek(0)
    assert torch.load(buffer, map_location="cpu")["t"].tolist() == [1.0, 2.0]
    buffer.seek(0)
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torch.load(buffer)          # (the installed torch has no CUDA)


# ----------------------------------------------------------------------------- mixed precision
def test_autocast_on_cuda(fake):
    a = ember.randn(2, 3, device="cuda")
    b = ember.randn(3, 2, device="cuda")
    with ember.autocast("cuda"):
        assert (a @ b).dtype is ember.float16        # torch's CUDA autocast default
        assert (a.cpu() @ b.cpu()).dtype is ember.float32
    with ember.autocast("cuda", dtype=ember.bfloat16):
        assert (a @ b).dtype is ember.bfloat16
    assert (a @ b).dtype is ember.float32


def test_grad_scaler_on_cuda(fake):
    m = nn.Linear(2, 1).cuda()
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    scaler = ember.amp.GradScaler("cuda", init_scale=8.0, growth_interval=1)
    before = [p.detach().cpu().tolist() for p in m.parameters()]
    loss = m(ember.ones(1, 2, device="cuda")).sum()
    scaled = scaler.scale(loss)
    assert scaled.device == CUDA0 and scaled.item() == pytest.approx(8 * loss.item())
    scaled.backward()
    m.weight.grad[0, 0] = float("inf")
    fake_cupy.reset_transfers()
    scaler.step(opt)
    # one read of the found-inf flag for the whole optimizer, not one per parameter
    assert fake_cupy.transfers == {"to_host": 0, "to_device": 0, "scalar_reads": 1}
    scaler.update()
    assert [p.detach().cpu().tolist() for p in m.parameters()] == before     # skipped
    assert scaler.get_scale() == 4.0
    opt.zero_grad()
    scaler.scale(m(ember.ones(1, 2, device="cuda")).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert [p.detach().cpu().tolist() for p in m.parameters()] != before
    assert scaler.get_scale() == 8.0


# ----------------------------------------------------------------------------- ember.cuda
def test_cuda_module_queries(fake):
    assert ember.cuda.is_available() and ember.cuda.device_count() == 2
    assert ember.cuda.current_device() == 0
    ember.cuda.synchronize()
    assert isinstance(ember.cuda.memory_allocated(), int)
    props = ember.cuda.get_device_properties(0)
    assert (props.name, props.major, props.minor) == ("fake device", 9, 0)
    assert ember.cuda.get_device_name() == "fake device"
    assert ember.cuda.get_device_capability() == (9, 0)
    with ember.cuda.device(1):
        assert ember.cuda.current_device() == 1
    assert ember.cuda.current_device() == 0


# ----------------------------------------------------------------------------- training steps
def _mlp():
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))


def _cnn():
    # (no bias before the batch norm: its gradient is rounding noise, which Adam amplifies)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(4, 8, 3), nn.ReLU(), nn.Flatten(),
                         nn.Linear(8 * 2 * 2, 10))


class _TinyGPT(nn.Module):
    def __init__(self, vocab=12, width=16, block=8, heads=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(block, width)
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))
        self.head = nn.Linear(width, vocab)
        self.heads = heads

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok(idx) + self.pos(ember.arange(t, device=idx.device))
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=2)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, -1))
        x = x + self.mlp(self.ln2(x))
        return self.head(x)


class _TinyLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(12, 8)
        self.rnn = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.out = nn.Linear(16, 12)

    def forward(self, idx):
        return self.out(self.rnn(self.emb(idx))[0])


def _batch(case, device):
    rng = np.random.default_rng(0)
    if case in ("gpt", "lstm"):
        x = ember.tensor(rng.integers(0, 12, (4, 8)), device=device)
        y = ember.tensor(rng.integers(0, 12, (4, 8)), device=device)
        return x, y
    shape = (8, 16) if case == "mlp" else (8, 1, 8, 8)
    return (ember.tensor(rng.standard_normal(shape).astype(np.float32), device=device),
            ember.tensor(rng.integers(0, 10, (8,)), device=device))


_MODELS = {"mlp": (_mlp, lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9)),
           "cnn": (_cnn, lambda ps: ember.optim.Adam(ps, lr=0.01)),
           # (not Adam: the key bias's gradient is exactly zero up to rounding, which Adam's
           # normalisation amplifies into different updates on differently rounding devices)
           "gpt": (_TinyGPT, lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9,
                                                        nesterov=True)),
           # (nor for the LSTM, whose embedding's normal_ init made Adam amplify the same)
           "lstm": (_TinyLSTM, lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9))}


def _train(case, device, steps=3, counter=None):
    make_model, make_opt = _MODELS[case]
    ember.manual_seed(0)
    model = make_model().to(device)
    opt = make_opt(model.parameters())
    x, y = _batch(case, device)
    losses = []
    for _ in range(steps):
        if counter is not None:
            fake_cupy.reset_transfers()
            fake_cupy.record[0] = []
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if counter is not None:
            counter.extend(r for r in fake_cupy.record[0] if r[0] != "scalar_reads")
            fake_cupy.record[0] = None
        losses.append(loss.item())
    return losses, [p.detach().cpu() for p in model.parameters()]


@pytest.mark.parametrize("case", sorted(_MODELS))
def test_training_step_stays_on_the_device(fake, case):
    """Forward, backward, gradient clipping and the optimizer step copy no array between
    host and device, and train exactly as on the CPU."""
    copies = []
    losses, params = _train(case, "cuda", counter=copies)
    assert copies == []
    cpu_losses, cpu_params = _train(case, "cpu")
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-6)
    for p, q in zip(params, cpu_params):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)


def test_dropout_draws_come_from_the_host_generator(fake):
    """Dropout's mask is drawn by ember's CPU generator (torch's CPU stream) and copied over:
    one host-to-device copy per dropout call, nothing back."""
    ember.manual_seed(0)
    x = ember.ones(4, 5, device="cuda")
    fake_cupy.reset_transfers()
    y = F.dropout(x, 0.5, training=True)
    assert fake_cupy.transfers["to_device"] == 1 and fake_cupy.transfers["to_host"] == 0
    ember.manual_seed(0)
    assert y.cpu().tolist() == F.dropout(ember.ones(4, 5), 0.5, training=True).tolist()


def test_demo_trains_on_cuda(fake, tmp_path, capsys):
    from ember import demo
    threads = ember.get_num_threads()
    try:
        result = demo.run(demo.parse_args(["--device", "cuda", "--epochs", "1",
                                           "--out", str(tmp_path)]))
    finally:
        ember.set_num_threads(threads)     # (run() sets the demo's; main() would restore it)
    assert result["test_accuracy"] > 0.5
    assert result["reloaded_accuracy"] == result["test_accuracy"]
    assert "test accuracy" in capsys.readouterr().out


# ----------------------------------------------------------------------------- more ops
def _arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# name -> (input arrays, fn(x, *others) on ember tensors); the first input requires grad when
# it is float and fn's result is differentiable
_OPS = {
    "interpolate_bilinear": ([_arr(1, 2, 4, 4)], lambda x: F.interpolate(
        x, scale_factor=2, mode="bilinear")),
    "interpolate_bicubic": ([_arr(1, 1, 4, 4)], lambda x: F.interpolate(
        x, size=(6, 5), mode="bicubic", align_corners=True)),
    "interpolate_antialias": ([_arr(1, 1, 8, 8)], lambda x: F.interpolate(
        x, size=(3, 3), mode="bilinear", antialias=True)),
    "grid_sample": ([_arr(1, 1, 4, 4), _arr(1, 3, 3, 2, seed=1) * 0.5],
                    lambda x, g: F.grid_sample(x, g, align_corners=False)),
    "avg_pool2d": ([_arr(1, 2, 5, 5)], lambda x: F.avg_pool2d(x, 2, ceil_mode=True)),
    "adaptive_avg_pool2d": ([_arr(1, 2, 5, 5)], lambda x: F.adaptive_avg_pool2d(x, 3)),
    "max_pool2d_indices": ([_arr(1, 2, 4, 4)], lambda x: F.max_unpool2d(
        *F.max_pool2d(x, 2, return_indices=True), 2)),
    "conv1d": ([_arr(2, 3, 7), _arr(4, 3, 3, seed=1)], lambda x, w: F.conv1d(x, w, stride=2)),
    "conv3d": ([_arr(1, 2, 4, 4, 4), _arr(2, 2, 2, 2, 2, seed=1)], F.conv3d),
    "conv_transpose2d": ([_arr(1, 2, 3, 3), _arr(2, 3, 2, 2, seed=1)],
                         lambda x, w: F.conv_transpose2d(x, w, stride=2)),
    "group_norm": ([_arr(2, 4, 3)], lambda x: F.group_norm(x, 2)),
    "instance_norm": ([_arr(2, 3, 4)], F.instance_norm),
    "embedding_bag": ([_arr(5, 3)], lambda w: F.embedding_bag(
        ember.tensor([0, 2, 4, 1], device=w.device), w, ember.tensor([0, 2], device=w.device))),
    "ctc_loss": ([_arr(6, 2, 4)], lambda x: F.ctc_loss(
        x.log_softmax(2), ember.tensor([[1, 2], [3, 3]], device=x.device), [6, 5], [2, 2])),
    "unfold_fold": ([_arr(1, 2, 4, 4)], lambda x: F.fold(F.unfold(x, 2), (4, 4), 2)),
    "pad_reflect": ([_arr(1, 1, 4, 4)], lambda x: F.pad(x, (1, 2, 1, 0), mode="reflect")),
    "pixel_shuffle": ([_arr(1, 4, 2, 2)], lambda x: F.pixel_shuffle(x, 2)),
    "cdist": ([_arr(3, 2), _arr(4, 2, seed=1)], ember.cdist),
    "normalize": ([_arr(3, 4)], F.normalize),
    "kl_div": ([_arr(3, 4)], lambda x: F.kl_div(x.log_softmax(1), x.softmax(1),
                                                 reduction="batchmean")),
    "smooth_l1": ([_arr(3, 4), _arr(3, 4, seed=1)], F.smooth_l1_loss),
    "bce_with_logits": ([_arr(3, 4), _arr(3, 4, seed=1)],
                        lambda x, y: F.binary_cross_entropy_with_logits(x, y.sigmoid())),
    "nll_ignore_index": ([_arr(4, 3)], lambda x: F.cross_entropy(
        x, ember.tensor([0, -100, 2, 1], device=x.device), label_smoothing=0.1)),
    "sdpa_mask": ([_arr(1, 2, 3, 4), _arr(1, 2, 3, 4, seed=1)],
                  lambda q, k: F.scaled_dot_product_attention(
                      q, k, k, attn_mask=ember.ones(3, 3, dtype=ember.bool, device=q.device).tril())),
    "unique_sorted": ([_arr(6)], lambda x: (x.round().unique(return_inverse=True)[1] + 0.0)),
    "unique_consecutive": ([_arr(6)], lambda x: x.round().unique_consecutive() + 0.0),
    "searchsorted": ([_arr(8)], lambda x: ember.searchsorted(x.sort().values, x) + 0.0),
    "sort_topk": ([_arr(3, 5)], lambda x: x.sort(1).values + x.topk(2, 1).values.sum()),
    "cumsum_cumprod": ([_arr(3, 4)], lambda x: x.cumsum(1) + x.cumprod(0)),
    "einsum": ([_arr(2, 3), _arr(3, 4, seed=1)], lambda a, b: ember.einsum("ij,jk->ik", a, b)),
    "linalg_solve": ([_arr(3, 3) + 3 * np.eye(3, dtype=np.float32), _arr(3, 2, seed=1)],
                     ember.linalg.solve),
    "masked_select": ([_arr(3, 4)], lambda x: x[x > 0]),
    "nonzero_index": ([_arr(3, 4)], lambda x: x[(x > 0).nonzero(as_tuple=True)]),
    "index_add_scatter": ([_arr(4, 3)], lambda x: x.index_add(
        0, ember.tensor([0, 0, 2], device=x.device), x[:3]).scatter_add(
        1, ember.zeros(4, 3, dtype=ember.int64, device=x.device), x)),
    "one_hot_bincount": ([_arr(3)], lambda x: x * F.one_hot(
        ember.tensor([0, 2, 1], device=x.device)).sum(0) + ember.bincount(
        ember.tensor([0, 2, 2], device=x.device))),
    "fft": ([_arr(8)], lambda x: ember.fft.rfft(x).abs()),
    "where_scalar": ([_arr(3, 4)], lambda x: ember.where(x > 0, x, 0.5) ** 2),
    "clamp_tensor": ([_arr(3, 4), _arr(4, seed=1)], lambda x, m: x.clamp(min=m)),
}


# ops that read their integer arguments back to check them, as torch's CPU kernels do
_HOST_CHECKED = {"ctc_loss"}


@pytest.mark.parametrize("name", sorted(_OPS))
def test_op_on_device_as_on_cpu(fake, name):
    """Forward and backward on cuda give the CPU's values, on cuda, and bring no array back
    to the host (host-planned constants, such as interpolation weights, may go over)."""
    arrays, fn = _OPS[name]
    results = {}
    for device in ("cpu", "cuda"):
        inputs = [ember.tensor(a, device=device) for a in arrays]
        inputs[0].requires_grad_()
        fake_cupy.reset_transfers()
        fake_cupy.record[0] = []
        out = fn(*inputs)
        if out.requires_grad:
            out.backward(ember.ones_like(out))
        copies = [r for r in fake_cupy.record[0] if r[0] == "to_host"]
        fake_cupy.record[0] = None
        if device == "cuda":
            assert copies == [] or name in _HOST_CHECKED
            assert out.device == CUDA0 and is_device_array(out)
        grad = inputs[0].grad
        results[device] = (out.detach().cpu().numpy(),
                           None if grad is None else grad.cpu().numpy())
    np.testing.assert_allclose(results["cuda"][0], results["cpu"][0], rtol=1e-5, atol=1e-6)
    if results["cpu"][1] is None:
        assert results["cuda"][1] is None
    else:
        np.testing.assert_allclose(results["cuda"][1], results["cpu"][1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["normal_", "uniform_", "kaiming_uniform_", "trunc_normal_",
                                  "orthogonal_", "bernoulli", "multinomial", "poisson",
                                  "randint", "randperm", "rand"])
def test_random_draws_on_device_match_cpu(fake, name):
    """Draws on cuda are the CPU generator's numbers (torch's CPU stream), moved over."""
    make = {
        "normal_": lambda d: ember.empty(3, 4, device=d).normal_(),
        "uniform_": lambda d: ember.empty(3, 4, device=d).uniform_(-1, 1),
        "kaiming_uniform_": lambda d: nn.init.kaiming_uniform_(ember.empty(3, 4, device=d)),
        "trunc_normal_": lambda d: nn.init.trunc_normal_(ember.empty(3, 4, device=d)),
        "orthogonal_": lambda d: nn.init.orthogonal_(ember.empty(3, 4, device=d)),
        "bernoulli": lambda d: ember.bernoulli(ember.full((3, 4), 0.3, device=d)),
        "multinomial": lambda d: ember.multinomial(ember.ones(2, 5, device=d), 3),
        "poisson": lambda d: ember.poisson(ember.full((3, 4), 2.0, device=d)),
        "randint": lambda d: ember.randint(0, 9, (3, 4), device=d),
        "randperm": lambda d: ember.randperm(7, device=d),
        "rand": lambda d: ember.rand(3, 4, device=d),
    }[name]
    values = []
    for device in ("cpu", "cuda"):
        ember.manual_seed(3)
        t = make(device)
        assert t.device == (CUDA0 if device == "cuda" else ember.device("cpu"))
        assert is_device_array(t) == (device == "cuda")
        values.append(t.cpu().numpy())
    np.testing.assert_allclose(values[1], values[0], rtol=1e-6, atol=1e-6)
