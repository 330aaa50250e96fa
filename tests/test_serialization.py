"""ember.save / ember.load against torch.save / torch.load, and ember.utils.safetensors."""
import collections
import io
import json
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest
import torch

import ember
from ember.utils import safetensors as est
from differential import catch, same, warnings_of

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]


def sample(mod, dtype_name, shape=(2, 3)):
    base = np.arange(int(np.prod(shape))).reshape(shape) - 2
    t = mod.tensor(base.tolist())
    if dtype_name.startswith("complex"):
        t = t * (1 + 2j) if mod is torch else t * complex(1, 2)
    return t.to(getattr(mod, dtype_name))


def as_numpy(t):
    """Values of an ember or torch tensor as a NumPy array (bfloat16 via float32)."""
    if t.dtype in (torch.bfloat16, ember.bfloat16):
        t = t.float()
    return t.detach().numpy()


def assert_tensor_equal(e, t):
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert tuple(e.shape) == tuple(t.shape)
    assert e.stride() == t.stride()
    assert e.requires_grad == t.requires_grad
    np.testing.assert_array_equal(as_numpy(e), as_numpy(t))


def assert_same_structure(e, t):
    if isinstance(t, torch.Tensor):
        assert_tensor_equal(e, t)
    elif isinstance(t, dict):
        assert type(e) is type(t) and list(e) == list(t)
        for k in t:
            assert_same_structure(e[k], t[k])
    elif isinstance(t, (torch.dtype, torch.device, torch.Size)):
        assert str(e).replace("ember", "torch") == str(t)
    elif isinstance(t, (list, tuple)):
        assert type(e) is type(t) and len(e) == len(t)
        for a, b in zip(e, t):
            assert_same_structure(a, b)
    else:
        assert type(e) is type(t) and e == t


def nested(mod):
    return collections.OrderedDict(
        weight=sample(mod, "float32"),
        nested={"ints": [1, -2, 3], "float": 2.5, "none": None, "flags": (True, False),
                "text": "hello", "bytes": b"\x00\xff", "set": {1, 2}, "complex": 1 - 2j,
                "dtype": mod.float16, "device": mod.device("cpu"), "size": mod.Size([2, 3])},
        steps=[sample(mod, "int64", (4,)), sample(mod, "float64", (1, 1))],
    )


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_ember_saves_torch_reads_every_dtype(tmp_path, dtype_name):
    path = tmp_path / "e.pt"
    ember.save({"x": sample(ember, dtype_name), "scalar": sample(ember, dtype_name, ())}, path)
    loaded = torch.load(path, weights_only=True)
    assert_tensor_equal(ember.load(path)["x"], loaded["x"])
    assert torch.equal(loaded["x"], sample(torch, dtype_name))
    assert torch.equal(loaded["scalar"], sample(torch, dtype_name, ()))


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_torch_saves_ember_reads_every_dtype(tmp_path, dtype_name):
    path = tmp_path / "t.pt"
    torch.save({"x": sample(torch, dtype_name), "empty": sample(torch, dtype_name, (0, 2))},
               path)
    loaded = ember.load(path)
    assert_tensor_equal(loaded["x"], sample(torch, dtype_name))
    assert_tensor_equal(loaded["empty"], sample(torch, dtype_name, (0, 2)))


def test_nested_containers_both_ways(tmp_path):
    ember.save(nested(ember), tmp_path / "e.pt")
    from_ember = torch.load(tmp_path / "e.pt", weights_only=True)
    assert_same_structure(from_ember, nested(torch))
    torch.save(nested(torch), tmp_path / "t.pt")
    assert_same_structure(ember.load(tmp_path / "t.pt"), nested(torch))
    assert_same_structure(ember.load(tmp_path / "e.pt"), nested(torch))


def test_views_share_one_storage(tmp_path):
    base = ember.arange(12.0).reshape(3, 4)
    views = {"base": base, "row": base[1], "col": base[:, 2], "t": base.t(),
             "tail": base.reshape(-1)[5:], "again": base}
    ember.save(views, tmp_path / "e.pt")
    with zipfile.ZipFile(tmp_path / "e.pt") as z:
        assert [n for n in z.namelist() if "/data/" in n] == ["archive/data/0"]
    loaded = torch.load(tmp_path / "e.pt", weights_only=True)
    tb = torch.arange(12.0).reshape(3, 4)
    expected = {"base": tb, "row": tb[1], "col": tb[:, 2], "t": tb.t(),
                "tail": tb.reshape(-1)[5:], "again": tb}
    for k, t in expected.items():
        assert_tensor_equal(views[k], t)
        assert_tensor_equal(ember.load(tmp_path / "e.pt")[k], t)
        assert loaded[k].storage_offset() == t.storage_offset()
        assert loaded[k].untyped_storage().data_ptr() == \
            loaded["base"].untyped_storage().data_ptr()
    assert loaded["again"] is loaded["base"]
    # torch's views load into ember sharing memory too: a write shows through
    torch.save(expected, tmp_path / "t.pt")
    back = ember.load(tmp_path / "t.pt")
    assert back["again"] is back["base"]
    back["base"].add_(100.0)
    assert back["row"].tolist() == (tb[1] + 100).tolist()
    assert back["t"].tolist() == (tb.t() + 100).tolist()


def test_requires_grad_and_parameters_round_trip(tmp_path):
    w = ember.ones(2, 2).requires_grad_()
    ember.save({"w": w, "b": ember.zeros(2)}, tmp_path / "e.pt")
    loaded = torch.load(tmp_path / "e.pt", weights_only=True)
    assert loaded["w"].requires_grad and not loaded["b"].requires_grad
    back = ember.load(tmp_path / "e.pt")
    assert back["w"].requires_grad and back["w"].is_leaf and not back["b"].requires_grad
    torch.save({"p": torch.nn.Parameter(torch.ones(3)),
                "frozen": torch.nn.Parameter(torch.ones(1), requires_grad=False)},
               tmp_path / "t.pt")
    back = ember.load(tmp_path / "t.pt")
    assert back["p"].requires_grad and not back["frozen"].requires_grad
    back["p"].sum().backward()
    np.testing.assert_array_equal(back["p"].grad.numpy(), np.ones(3, np.float32))


def test_torch_model_and_optimizer_state(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.randn(5, 3)).sum().backward()
    opt.step()
    state = {"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}
    torch.save(state, tmp_path / "t.pt")
    loaded = ember.load(tmp_path / "t.pt")
    assert_same_structure(loaded, state)
    ember.save(loaded, tmp_path / "e.pt")           # and back again, byte for byte in torch
    again = torch.load(tmp_path / "e.pt", weights_only=True)
    assert_same_structure(loaded, again)
    model.load_state_dict(again["model"])
    opt.load_state_dict(again["opt"])


def test_file_objects(tmp_path):
    buffer = io.BytesIO()
    ember.save([sample(ember, "float32")], buffer)
    buffer.seek(0)
    assert torch.equal(torch.load(buffer, weights_only=True)[0], sample(torch, "float32"))
    buffer = io.BytesIO()
    torch.save(sample(torch, "int16"), buffer)
    buffer.seek(0)
    assert_tensor_equal(ember.load(buffer), sample(torch, "int16"))


def test_storages_are_aligned_like_torch(tmp_path):
    ember.save([ember.ones(3), ember.ones(5, dtype=ember.float64)], tmp_path / "e.pt")
    with zipfile.ZipFile(tmp_path / "e.pt") as z, open(tmp_path / "e.pt", "rb") as f:
        for info in z.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            if "/data/" in info.filename:
                f.seek(info.header_offset + 26)
                name_len, extra_len = struct.unpack("<HH", f.read(4))
                assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0
        assert z.read("archive/version") == b"3\n"
        assert z.read("archive/byteorder") == b"little"
    loaded = torch.load(tmp_path / "e.pt", weights_only=True, mmap=True)
    assert loaded[1].dtype == torch.float64 and loaded[1].sum().item() == 5


def malicious_checkpoint(path, marker):
    class Exploit:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps({"w": Exploit()}, protocol=2))
        z.writestr("archive/version", "3\n")


def test_loading_never_runs_code_from_the_file(tmp_path):
    marker = tmp_path / "pwned"
    malicious_checkpoint(tmp_path / "evil.pt", marker)
    with pytest.raises(pickle.UnpicklingError, match=r"posix\.system") as info:
        ember.load(tmp_path / "evil.pt")
    assert "weights_only=False" in str(info.value)
    assert not marker.exists()
    # torch refuses the same file for the same reason
    with pytest.raises(pickle.UnpicklingError, match=r"posix\.system"):
        torch.load(tmp_path / "evil.pt", weights_only=True)
    assert not marker.exists()


def test_truncated_and_corrupted_files(tmp_path):
    path = tmp_path / "e.pt"
    ember.save({"w": ember.arange(100.0)}, path)
    raw = path.read_bytes()
    (tmp_path / "short.pt").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(RuntimeError, match="truncated or corrupted"):
        ember.load(tmp_path / "short.pt")
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("archive/data/0")
    flipped = bytearray(raw)
    flipped[info.header_offset + 30 + len(info.filename) + len(info.extra) + 7] ^= 0xFF
    (tmp_path / "flipped.pt").write_bytes(bytes(flipped))
    with pytest.raises(RuntimeError, match=r"corrupted: reading the record 'archive/data/0'"
                                           r".*CRC"):
        ember.load(tmp_path / "flipped.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint at all")
    with pytest.raises(RuntimeError, match="not a PyTorch zip checkpoint"):
        ember.load(tmp_path / "junk.pt")


def test_tensor_that_does_not_fit_its_storage_is_rejected(tmp_path):
    # a crafted file whose tensor claims more elements than its storage holds must not read
    # memory outside the storage
    good = tmp_path / "good.pt"
    torch.save(torch.ones(4), good)
    with zipfile.ZipFile(good) as z:
        records = {n: z.read(n) for n in z.namelist()}
    prefix = next(n for n in records if n.endswith("data.pkl"))[:-len("data.pkl")]
    pkl = records[prefix + "data.pkl"]
    assert b"K\x04\x85" in pkl                        # the pickled size (4,)
    records[prefix + "data.pkl"] = pkl.replace(b"K\x04\x85", b"K\x40\x85", 1)
    with zipfile.ZipFile(tmp_path / "bad.pt", "w") as z:
        for n, data in records.items():
            z.writestr(n, data)
    with pytest.raises(RuntimeError, match=r"size \[64\].*does not fit in its storage of 4"):
        ember.load(tmp_path / "bad.pt")


def test_save_is_atomic(tmp_path):
    path = tmp_path / "ckpt.pt"
    ember.save({"w": ember.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises(Exception):
        ember.save({"w": ember.zeros(2), "bad": lambda: None}, path)   # fails while pickling
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]               # no temporary left over
    ember.save({"w": ember.zeros(2)}, str(path))
    assert ember.load(path)["w"].tolist() == [0.0, 0.0]


def test_map_location(tmp_path):
    ember.save({"w": ember.ones(2)}, tmp_path / "e.pt")
    for loc in ("cpu", ember.device("cpu"), {"cpu": "cpu"}):
        assert ember.load(tmp_path / "e.pt", map_location=loc)["w"].device.type == "cpu"


# ---------------------------------------------------------------------------- safetensors
def test_safetensors_round_trip_every_dtype(tmp_path):
    tensors = {name: sample(ember, name) for name in DTYPES if name != "complex128"}
    tensors["empty"] = ember.zeros(0, 3)
    tensors["view"] = ember.arange(12.0).reshape(3, 4).t()       # written contiguously
    est.save_file(tensors, tmp_path / "x.safetensors", metadata={"format": "pt"})
    back = est.load_file(tmp_path / "x.safetensors")
    assert sorted(back) == sorted(tensors)
    for k, t in tensors.items():
        assert back[k].dtype == t.dtype and back[k].shape == t.shape
        np.testing.assert_array_equal(as_numpy(back[k]), as_numpy(t))
    assert est.load_metadata(tmp_path / "x.safetensors") == {"format": "pt"}
    assert est.load(est.save(tensors))["view"].tolist() == tensors["view"].tolist()


def test_safetensors_hand_built_file(tmp_path):
    a = np.array([[1.5, -2.0]], np.float32)
    b = np.array([7, 8, 9], np.int64)
    header = {"b": {"dtype": "I64", "shape": [3], "data_offsets": [8, 32]},
              "a": {"dtype": "F32", "shape": [1, 2], "data_offsets": [0, 8]},
              "__metadata__": {"who": "hand"}}
    text = json.dumps(header).encode()
    (tmp_path / "h.safetensors").write_bytes(struct.pack("<Q", len(text)) + text +
                                             a.tobytes() + b.tobytes())
    back = est.load_file(tmp_path / "h.safetensors")
    assert back["a"].dtype == ember.float32 and back["a"].tolist() == [[1.5, -2.0]]
    assert back["b"].dtype == ember.int64 and back["b"].tolist() == [7, 8, 9]
    bad = dict(header, b={"dtype": "I64", "shape": [4], "data_offsets": [8, 32]})
    text = json.dumps(bad).encode()
    (tmp_path / "bad.safetensors").write_bytes(struct.pack("<Q", len(text)) + text +
                                               a.tobytes() + b.tobytes())
    with pytest.raises(ValueError, match="does not match its byte range"):
        est.load_file(tmp_path / "bad.safetensors")
    (tmp_path / "short.safetensors").write_bytes(struct.pack("<Q", 10 ** 6) + b"{}")
    with pytest.raises(ValueError, match="header length"):
        est.load_file(tmp_path / "short.safetensors")


def test_safetensors_interop_with_the_reference_package(tmp_path):
    st = pytest.importorskip("safetensors.torch",
                             reason="the safetensors package is not installed")
    tensors = {name: sample(ember, name) for name in DTYPES if name != "complex128"}
    est.save_file(tensors, tmp_path / "e.safetensors", metadata={"k": "v"})
    theirs = st.load_file(tmp_path / "e.safetensors")
    for k in tensors:
        assert_tensor_equal(tensors[k], theirs[k])
    st.save_file({k: sample(torch, k) for k in DTYPES if k != "complex128"},
                 tmp_path / "t.safetensors", metadata={"m": "1"})
    ours = est.load_file(tmp_path / "t.safetensors")
    for k in ours:
        assert_tensor_equal(ours[k], sample(torch, k))
    assert est.load_metadata(tmp_path / "t.safetensors") == {"m": "1"}


def test_cuda_checkpoint_without_cuda(tmp_path):
    # a checkpoint saved on a GPU: the storage location in data.pkl reads 'cuda:0'
    torch.save({"w": torch.arange(3.0)}, tmp_path / "cpu.pt")
    with zipfile.ZipFile(tmp_path / "cpu.pt") as z:
        records = {n: z.read(n) for n in z.namelist()}
    name = next(n for n in records if n.endswith("data.pkl"))
    cpu, gpu = b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"
    assert cpu in records[name]
    records[name] = records[name].replace(cpu, gpu)
    with zipfile.ZipFile(tmp_path / "gpu.pt", "w") as z:
        for n, data in records.items():
            z.writestr(n, data)
    if not torch.cuda.is_available() and not ember.cuda.is_available():
        with pytest.raises(RuntimeError) as te:
            torch.load(tmp_path / "gpu.pt", weights_only=True)
        with pytest.raises(RuntimeError) as ee:
            ember.load(tmp_path / "gpu.pt")
        assert str(ee.value) == str(te.value)
    for loc in ("cpu", {"cuda:0": "cpu"}, ember.device("cpu")):
        w = ember.load(tmp_path / "gpu.pt", map_location=loc)["w"]
        assert w.device.type == "cpu" and w.tolist() == [0.0, 1.0, 2.0]


def test_missing_directory_and_unseekable_streams(tmp_path):
    with pytest.raises(RuntimeError) as te:
        torch.save(1, tmp_path / "nope" / "x.pt")
    with pytest.raises(RuntimeError) as ee:
        ember.save(1, tmp_path / "nope" / "x.pt")
    assert str(ee.value) == str(te.value)

    class Stream(io.RawIOBase):          # readable, not seekable (a pipe, a socket)
        def __init__(self, data):
            self.inner = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self.inner.readinto(b)

    buffer = io.BytesIO()
    ember.save({"w": ember.ones(2)}, buffer)
    assert ember.load(Stream(buffer.getvalue()))["w"].tolist() == [1.0, 1.0]


def test_ember_parameters_load_as_torch_parameters(tmp_path):
    nn = ember.nn
    p = nn.Parameter(ember.ones(2, 3))
    frozen = nn.Parameter(ember.zeros(1), requires_grad=False)
    ember.save({"p": p, "frozen": frozen}, tmp_path / "e.pt")
    loaded = torch.load(tmp_path / "e.pt", weights_only=True)
    assert type(loaded["p"]) is torch.nn.Parameter and loaded["p"].requires_grad
    assert type(loaded["frozen"]) is torch.nn.Parameter and not loaded["frozen"].requires_grad
    back = ember.load(tmp_path / "e.pt")
    assert type(back["p"]) is nn.Parameter and back["p"].requires_grad
    assert back["p"].tolist() == [[1.0] * 3] * 2


# random views of a random base: every one is saved into the base's single storage, and torch
# reads back the same values, strides and offsets
from hypothesis import given, settings, strategies as st  # noqa: E402


@st.composite
def views_of_a_base(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    dtype = draw(st.sampled_from(DTYPES))
    ops = draw(st.lists(st.tuples(st.sampled_from(["slice", "select", "t", "expand",
                                                   "unsqueeze"]),
                                  st.integers(0, 5), st.integers(0, 5)), max_size=4))
    return shape, dtype, ops


def apply_view_ops(t, ops):
    for op, a, b in ops:
        if t.dim() == 0:
            break
        d = a % t.dim()
        n = t.shape[d]
        if op == "slice" and n > 1:
            t = t.narrow(d, b % n, max(1, n - b % n - 1))
        elif op == "select":
            t = t.select(d, b % n)
        elif op == "t" and t.dim() >= 2:
            t = t.transpose(d, (d + 1) % t.dim())
        elif op == "expand" and n == 1:
            shape = list(t.shape)
            shape[d] = 3
            t = t.expand(*shape)
        elif op == "unsqueeze":
            t = t.unsqueeze(d)
    return t


@settings(max_examples=40, deadline=None)
@given(views_of_a_base())
def test_random_views_round_trip(tmp_path_factory, case):
    shape, dtype, ops = case
    path = tmp_path_factory.mktemp("views") / "v.pt"
    base_e, base_t = sample(ember, dtype, shape), sample(torch, dtype, shape)
    view_e, view_t = apply_view_ops(base_e, ops), apply_view_ops(base_t, ops)
    assert_tensor_equal(view_e, view_t)
    ember.save({"view": view_e, "base": base_e}, path)
    loaded = torch.load(path, weights_only=True)
    assert_tensor_equal(view_e, loaded["view"])
    assert loaded["view"].storage_offset() == view_t.storage_offset()
    assert loaded["view"].untyped_storage().data_ptr() == \
        loaded["base"].untyped_storage().data_ptr()
    torch.save({"view": view_t, "base": base_t}, path)
    back = ember.load(path)
    assert_tensor_equal(back["view"], view_t)
    assert back["view"].storage_offset() == view_t.storage_offset()


class Opaque:                   # a class no weights-only load accepts by default
    def __init__(self, v=1):
        self.v = v


def round_trip(T, L, obj, **load_kw):
    """obj saved by module T, loaded by module L."""
    buf = io.BytesIO()
    T.save(obj, buf)
    buf.seek(0)
    return L.load(buf, **load_kw)


def geometry(t):
    return tuple(t.shape), t.stride(), t.storage_offset(), t.requires_grad


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("direction", ["ember->torch", "torch->ember"])
def test_optimizer_state_with_step_tensors(direction, weights_only):
    def scenario(T):
        T.manual_seed(0)
        model = T.nn.Linear(3, 2)
        opt = T.optim.Adam(model.parameters(), lr=0.1)
        model.weight.data.fill_(0.5)
        model.bias.data.fill_(-0.25)
        for _ in range(2):
            model(T.ones(4, 3)).pow(2).sum().backward()
            opt.step()
            opt.zero_grad()
        return {"model": model.state_dict(), "opt": opt.state_dict()}
    saver, loader = (ember, torch) if direction == "ember->torch" else (torch, ember)
    state = round_trip(saver, loader, scenario(saver), weights_only=weights_only)
    expected = scenario(loader)
    assert list(state["model"]) == list(expected["model"])
    assert state["opt"]["param_groups"] == expected["opt"]["param_groups"]
    for i, s in expected["opt"]["state"].items():
        got = state["opt"]["state"][i]
        assert sorted(got) == sorted(s)
        for k in s:       # 'step' is a float32 0-d tensor in both
            assert str(got[k].dtype).split(".")[1] == str(s[k].dtype).split(".")[1]
            assert geometry(got[k]) == geometry(s[k])
            np.testing.assert_allclose(got[k].numpy(), s[k].numpy(), rtol=1e-5)


@pytest.mark.parametrize("saver", ["torch", "ember"])
def test_views_keep_sharing_and_geometry(saver):
    def scenario(T):
        base = T.arange(24.0).reshape(2, 3, 4)
        obj = {"p": base.permute(2, 0, 1), "base": base, "s": base[:, 1:, ::2],
               "z": T.tensor(2.5), "e": T.zeros(0, 3),
               "g": T.ones(2, requires_grad=True)}
        out = {}
        for L in (torch, ember):
            back = round_trip(T, L, obj)
            out[L.__name__] = ({k: geometry(v) for k, v in back.items()},
                               back["p"].untyped_storage().data_ptr() ==
                               back["base"].untyped_storage().data_ptr(),
                               back["s"].contiguous().tolist())
        assert out["torch"] == out["ember"]
        return out["torch"]
    same(lambda T: scenario(torch if saver == "torch" else ember))


@pytest.mark.parametrize("weights_only", [True, False])
def test_plain_python_values_and_containers(weights_only):
    obj = {"i": 3, "f": 2.5, "s": "x", "n": None, "b": True, "bytes": b"ab", "c": 1 + 2j,
           "t": (1, [2, (3.0,)]), "od": collections.OrderedDict(b=1, a=2), "set": {1, 2},
           "neg": -(2 ** 70)}
    for saver, loader in [(ember, torch), (torch, ember), (ember, ember)]:
        back = round_trip(saver, loader, obj, weights_only=weights_only)
        assert back == obj and type(back["od"]) is collections.OrderedDict
        assert list(back["od"]) == ["b", "a"] and type(back["t"][1][1]) is tuple


def test_map_location_function_is_called_like_torch(tmp_path):
    def scenario(T):
        path = str(tmp_path / f"{T.__name__}.pt")
        T.save({"w": T.arange(3.0), "v": T.arange(4).reshape(2, 2).t()}, path)
        seen = []

        def keep(storage, location):
            seen.append(location)
            return storage
        a = T.load(path, map_location=keep)
        b = T.load(path, map_location=lambda s, loc: None)     # None: the saved location
        return (a, seen, b, a["v"].stride(), catch(T.load, path, map_location=3),
                catch(T.load, path, map_location=lambda s, loc: 1 / 0))
    same(scenario)


def test_map_location_forms(tmp_path):
    torch.save({"w": torch.arange(3.0)}, tmp_path / "t.pt")
    for loc in ("cpu", ember.device("cpu"), {"cpu": "cpu"}, {}, lambda s, l: s):
        w = ember.load(tmp_path / "t.pt", map_location=loc)["w"]
        assert w.device.type == "cpu" and w.tolist() == [0.0, 1.0, 2.0]


def torch_text(msg):
    # ember names its own functions in the message; the documentation link stays torch's
    return msg.replace("torch.serialization", "ember.serialization") \
        .replace("`torch.load`", "`ember.load`")


@pytest.mark.parametrize("value", [Opaque(), print, pickle.dumps])
def test_weights_only_refusal_text(tmp_path, value):
    torch.save({"a": value}, tmp_path / "g.pt")
    t = catch(torch.load, tmp_path / "g.pt")
    e = catch(ember.load, tmp_path / "g.pt")
    assert t[:2] == e[:2] == ("raised", "UnpicklingError")
    assert e[2] == torch_text(t[2])
    # weights_only=False loads it in both
    assert type(ember.load(tmp_path / "g.pt", weights_only=False)["a"]) is \
        type(torch.load(tmp_path / "g.pt", weights_only=False)["a"])


def test_blocked_module_refusal_text(tmp_path):
    torch.save({"a": os.system}, tmp_path / "s.pt")
    t = catch(torch.load, tmp_path / "s.pt")
    e = catch(ember.load, tmp_path / "s.pt")
    assert e[:2] == t[:2]
    assert e[2].split("\n(ember) ")[0] == torch_text(t[2])
    # not even a user allowlist unblocks it
    with torch.serialization.safe_globals([os.system]), \
            ember.serialization.safe_globals([os.system]):
        assert catch(ember.load, tmp_path / "s.pt")[:2] == catch(torch.load,
                                                                 tmp_path / "s.pt")[:2]


def test_safe_globals_allow_a_class(tmp_path):
    torch.save({"a": Opaque(7), "w": torch.ones(2)}, tmp_path / "g.pt")
    with torch.serialization.safe_globals([Opaque]):
        assert torch.load(tmp_path / "g.pt")["a"].v == 7
    with ember.serialization.safe_globals([Opaque]):
        assert ember.load(tmp_path / "g.pt")["a"].v == 7
    assert ember.serialization.get_safe_globals() == []
    assert catch(ember.load, tmp_path / "g.pt")[1] == "UnpicklingError"
    ember.serialization.add_safe_globals([(Opaque, f"{__name__}.Opaque")])
    try:
        assert ember.load(tmp_path / "g.pt")["a"].v == 7
    finally:
        ember.serialization.clear_safe_globals()


@pytest.mark.parametrize("content", [b"", b"hello", pickle.dumps(5, protocol=2),
                                     pickle.dumps([1.5, "x"], protocol=2)])
def test_files_that_are_not_zip_archives(tmp_path, content):
    (tmp_path / "j.pt").write_bytes(content)
    same(lambda T: catch(T.load, tmp_path / "j.pt", weights_only=False))
    # with weights_only=True torch's own unpickler words pickle errors its way; the type of a
    # well-formed pickle's refusal is the same
    if content[:1] == b"\x80":
        same(lambda T: catch(T.load, tmp_path / "j.pt"))


def test_missing_file_truncated_zip_and_directory(tmp_path):
    same(lambda T: catch(T.load, str(tmp_path / "nope.pt")))
    same(lambda T: catch(T.load, str(tmp_path)))
    buf = io.BytesIO()
    torch.save({"w": torch.arange(100.0)}, buf)
    (tmp_path / "short.pt").write_bytes(buf.getvalue()[:300])
    t, e = catch(torch.load, tmp_path / "short.pt"), catch(ember.load, tmp_path / "short.pt")
    assert e[:1] == t[:1] and e[2].split("\n(ember) ")[0] == t[2]
    assert isinstance(pytest.raises(RuntimeError, ember.load, tmp_path / "short.pt").value,
                      RuntimeError)


def test_bytesio_both_ways_every_dtype():
    def scenario(T):
        names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                 "float32", "float64", "complex64", "complex128"]
        obj = {n: (T.arange(6).reshape(2, 3) - 2).to(getattr(T, n)) for n in names}
        obj["param"] = T.nn.Parameter(T.ones(2))
        obj["frozen"] = T.nn.Parameter(T.ones(2), requires_grad=False)
        other = ember if T is torch else torch
        back = round_trip(T, other, obj)
        return {k: (back[k], back[k].requires_grad, type(back[k]).__name__) for k in back}
    same(scenario)


def test_save_stays_atomic_after_a_failed_pickle(tmp_path):
    path = tmp_path / "c.pt"
    ember.save({"w": ember.ones(2)}, path)
    assert catch(ember.save, {"bad": lambda: 0}, path)[0] == "raised"
    assert torch.load(path)["w"].tolist() == [1.0, 1.0]
    assert os.listdir(tmp_path) == ["c.pt"]
