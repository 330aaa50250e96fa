"""ember on a CUDA device as users write it: the seed notes' GPU examples, reprs, errors,
moves, checkpoints, autocast and short training runs, against torch on its GPU.

Runs on a GPU (CuPy + CUDA), or anywhere with EMBER_FAKE_CUDA=1 (see cuda_env.py): there the
comparisons that need torch on a GPU are skipped with that reason, and torch's CPU stands in
for the values.
"""
import io
import re

import numpy as np
import pytest
import torch

import ember
import cuda_env
from cuda_env import cuda_device  # noqa: F401  (a fixture)

reason = cuda_env.skip_reason()
if reason:
    pytest.skip(reason, allow_module_level=True)

TORCH_GPU = cuda_env.TORCH_DEVICE == "cuda"
needs_torch_gpu = pytest.mark.skipif(not TORCH_GPU, reason="compares with torch on a GPU")


def both(fn):
    """fn(lib) for ember and for torch (on torch's device)."""
    return fn(ember), fn(torch)


# ----------------------------------------------------------------------------- seed notes
def test_device_then_to(cuda_device):
    device = ember.device("cuda" if ember.cuda.is_available() else "cpu")
    assert device.type == "cuda"
    a = ember.rand([3, 3]).to(device)
    b = ember.rand([3, 3]).to(device)
    c = ember.rand([3, 3]).to(device)
    d = a @ b + c
    assert d.device == ember.device("cuda", 0) and d.shape == (3, 3)
    expected = a.cpu().numpy() @ b.cpu().numpy() + c.cpu().numpy()
    np.testing.assert_allclose(d.cpu().numpy(), expected, rtol=1e-5)


def test_cuda_when_available(cuda_device):
    if ember.cuda.is_available():
        a = ember.rand([3, 3]).cuda()
    assert a.is_cuda and repr(a).endswith("device='cuda:0')")


def test_to_numpy_through_cpu(cuda_device):
    x = ember.rand([3, 3], device="cuda")
    x_ = x.cpu().numpy()
    assert isinstance(x_, np.ndarray) and x_.dtype == np.float32 and x_.shape == (3, 3)
    assert ((x_ >= 0) & (x_ < 1)).all()
    y = ember.rand([3, 3], requires_grad=True, device="cuda")
    y_ = y.cpu().detach().numpy()
    np.testing.assert_array_equal(y_, y.detach().cpu().numpy())
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        y.detach().numpy()


def test_item_and_tolist(cuda_device):
    x = ember.randn(1, requires_grad=True, device="cuda")
    assert re.fullmatch(r"tensor\(\[-?\d\.\d{4}\], device='cuda:0', requires_grad=True\)",
                        repr(x)), repr(x)
    y = x.item()
    assert type(y) is float and y == x.detach().cpu().numpy()[0]
    z = ember.randn([2, 2], device="cuda")
    assert z.tolist() == z.cpu().numpy().tolist()


# ----------------------------------------------------------------------------- vs torch's GPU
_REPRS = [
    lambda lib: lib.tensor([1.5, -2.25], device="cuda"),
    lambda lib: lib.tensor([[1, 2], [3, 4]], device="cuda"),
    lambda lib: lib.tensor([True, False], device="cuda"),
    lambda lib: lib.zeros(0, 3, device="cuda"),
    lambda lib: lib.tensor(3.5, device="cuda:0"),
    lambda lib: lib.tensor([1.0, 2.0], device="cuda", dtype=lib.bfloat16),
    lambda lib: lib.tensor([1.0, 2.0], device="cuda", dtype=lib.float16, requires_grad=True),
    lambda lib: lib.arange(12.0, device="cuda").reshape(3, 4) * 1e-5,
]


@needs_torch_gpu
@pytest.mark.parametrize("make", _REPRS, ids=range(len(_REPRS)))
def test_reprs_as_torch(cuda_device, make):
    e, t = both(make)
    assert repr(e) == repr(t)
    assert str(e.device) == str(t.device) and e.get_device() == t.get_device()


@needs_torch_gpu
@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(2, device="cuda") + lib.ones(2),
    lambda lib: lib.ones(2, 2, device="cuda") @ lib.ones(2, 2),
    lambda lib: lib.ones(2, device="cuda").numpy(),
    lambda lib: lib.ones(2, device="cuda", requires_grad=True).numpy(),
    lambda lib: lib.ones(3)[lib.tensor([0], device="cuda")],
], ids=["add", "matmul", "numpy", "numpy_requires_grad", "cpu_indexed_by_cuda"])
def test_errors_as_torch(cuda_device, call):
    with pytest.raises(Exception) as t_err:
        call(torch)
    with pytest.raises(Exception) as e_err:
        call(ember)
    assert type(e_err.value).__name__ == type(t_err.value).__name__
    assert str(e_err.value).split("\n")[0] == str(t_err.value).split("\n")[0]


@needs_torch_gpu
def test_checkpoints_cross_libraries(cuda_device, tmp_path):
    path = tmp_path / "e.pt"
    ember.save({"w": ember.tensor([1.0, 2.0], device="cuda")}, path)
    loaded = torch.load(path)
    assert loaded["w"].device == torch.device("cuda", 0) and loaded["w"].tolist() == [1.0, 2.0]
    torch.save({"w": torch.tensor([3.0], device="cuda")}, tmp_path / "t.pt")
    back = ember.load(tmp_path / "t.pt")
    assert back["w"].device == ember.device("cuda", 0) and back["w"].tolist() == [3.0]
    assert ember.load(tmp_path / "t.pt", map_location="cpu")["w"].device == ember.device("cpu")


_AUTOCAST_OPS = {
    "matmul": lambda lib, a, b, w: a @ b,
    "linear": lambda lib, a, b, w: lib.nn.functional.linear(a, w),
    "softmax": lambda lib, a, b, w: lib.softmax(a, dim=-1),
    "log_softmax": lambda lib, a, b, w: lib.log_softmax(a, dim=-1),
    "layer_norm": lambda lib, a, b, w: lib.nn.functional.layer_norm(a, a.shape[-1:]),
    "sum": lambda lib, a, b, w: a.sum(),
    "exp": lambda lib, a, b, w: a.exp(),
    "mm_then_sum": lambda lib, a, b, w: (a @ b).sum(),
    "cross_entropy": lambda lib, a, b, w: lib.nn.functional.cross_entropy(
        a @ b, lib.zeros(4, dtype=lib.int64, device="cuda")),
    "mse_loss": lambda lib, a, b, w: lib.nn.functional.mse_loss(a @ b, a @ b),
    "conv2d": lambda lib, a, b, w: lib.nn.functional.conv2d(a.reshape(1, 1, 4, 4),
                                                             w.reshape(1, 1, 2, 2)[:, :, :2]),
}


@needs_torch_gpu
@pytest.mark.parametrize("name", sorted(_AUTOCAST_OPS))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_autocast_dtypes_as_torch(cuda_device, name, dtype):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((4, 4), (4, 4), (4, 4))]

    def run(lib):
        a, b, w = (lib.tensor(x, device="cuda") for x in arrays)
        with lib.autocast("cuda", dtype=getattr(lib, dtype)):
            return _AUTOCAST_OPS[name](lib, a, b, w)
    e, t = both(run)
    assert str(e.dtype) == str(t.dtype).replace("torch.", "ember.")
    np.testing.assert_allclose(e.detach().float().cpu().numpy(),
                               t.detach().float().cpu().numpy(), rtol=2e-2, atol=2e-2)


# ----------------------------------------------------------------------------- training
def _copy_weights(src, dst):
    dst.load_state_dict({k: ember.tensor(v.detach().cpu().numpy(), device="cuda")
                         for k, v in src.state_dict().items()})


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5))


def _cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 4 * 4, 5))


@pytest.mark.parametrize("build,shape", [(_mlp, (16, 20)), (_cnn, (16, 1, 8, 8))],
                         ids=["mlp", "cnn"])
def test_training_matches_torch(cuda_device, build, shape):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(shape).astype(np.float32), rng.integers(0, 5, shape[0])
    torch.manual_seed(0)
    t_model = build(torch).to(cuda_env.TORCH_DEVICE)
    e_model = build(ember).to("cuda")
    _copy_weights(t_model, e_model)
    losses = {}
    for lib, model in ((torch, t_model), (ember, e_model)):
        device = cuda_env.TORCH_DEVICE if lib is torch else "cuda"
        opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = lib.tensor(x, device=device), lib.tensor(y, device=device)
        run = []
        for _ in range(5):
            loss = lib.nn.functional.cross_entropy(model(xs), ys)
            opt.zero_grad()
            loss.backward()
            opt.step()
            run.append(loss.item())
        losses[lib.__name__] = run
    np.testing.assert_allclose(losses["ember"], losses["torch"], rtol=1e-4, atol=1e-5)
    assert all(p.device == ember.device("cuda", 0) for p in e_model.parameters())


@needs_torch_gpu
def test_device_properties_as_torch(cuda_device):
    e, t = ember.cuda.get_device_properties(0), torch.cuda.get_device_properties(0)
    assert (e.name, e.major, e.minor, e.multi_processor_count) == \
        (t.name, t.major, t.minor, t.multi_processor_count)
    assert abs(e.total_memory - t.total_memory) < 64 * 2 ** 20
    assert ember.cuda.get_device_name() == torch.cuda.get_device_name()
    assert ember.cuda.get_device_capability() == torch.cuda.get_device_capability()


def test_memory_and_sync_queries(cuda_device):
    x = ember.ones(1024, 1024, device="cuda")
    ember.cuda.synchronize()
    assert ember.cuda.memory_allocated() >= (x.nbytes if not cuda_env.FAKE else 0)
    assert isinstance(ember.cuda.get_device_name(0), str)
    assert ember.cuda.device_count() >= 1
