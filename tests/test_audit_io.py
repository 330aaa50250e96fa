"""Differential audit of ember.save/ember.load and ember.utils.data against torch.

Complements tests/test_serialization.py and tests/test_data.py: error texts, map_location
functions, safe globals, optimizer states and the DataLoader/dataset corners they miss.
"""
import collections
import io
import os
import pickle

import numpy as np
import pytest
import torch

import ember
from differential import catch, same, warnings_of


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


# ---------------------------------------------------------------------------- DataLoader
Point = collections.namedtuple("Point", "x y")


def batches(T, data, **kw):
    return list(T.utils.data.DataLoader(data, **kw))


def test_default_collate_element_types():
    samples = [{"f": 1.5, "i": 2, "b": True, "s": "a", "np": np.ones(2, np.float16),
                "n32": np.int32(4), "t": (1, 2.0), "pt": Point(1, np.arange(2))}] * 5
    same(lambda T: [(b, type(b["pt"]).__name__, type(b["t"]).__name__)
                    for b in batches(T, samples, batch_size=2)])
    same(lambda T: batches(T, samples, batch_size=None))
    same(lambda T: batches(T, samples, batch_size=2, drop_last=True))


def test_loader_lengths_and_custom_collate():
    same(lambda T: [len(T.utils.data.DataLoader(list(range(7)), **kw)) for kw in
                    [{}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                     {"batch_size": None}, {"batch_sampler": [[0, 1], [4]]}]])
    same(lambda T: batches(T, list(range(5)), batch_size=2, collate_fn=lambda b: b[::-1]))


def test_shuffle_with_generator_is_a_permutation():
    def scenario(T):
        got = batches(T, list(range(10)), batch_size=3, shuffle=True,
                      generator=T.Generator().manual_seed(3))
        again = batches(T, list(range(10)), batch_size=3, shuffle=True,
                        generator=T.Generator().manual_seed(3))
        flat = [v for b in got for v in b.tolist()]
        return [len(b) for b in got], sorted(flat), [b.dtype for b in got], \
            all(a.tolist() == b.tolist() for a, b in zip(got, again))
    same(scenario)


def test_sampler_option_errors():
    def scenario(T):
        DL = T.utils.data.DataLoader
        data = list(range(5))
        return [catch(DL, data, sampler=[0, 1], shuffle=True),
                catch(DL, data, batch_sampler=[[0]], batch_size=2),
                catch(DL, data, batch_sampler=[[0]], shuffle=True),
                catch(DL, data, batch_sampler=[[0]], sampler=[0]),
                catch(DL, data, batch_sampler=[[0]], drop_last=True),
                catch(DL, data, batch_size=None, drop_last=True)]
    same(scenario)


def make_stream(T, n, with_len):
    class Stream(T.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(n))
    if with_len:
        Stream.__len__ = lambda self: n
    return Stream()


def test_iterable_dataset_batches_and_len():
    for kw in [{"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None}]:
        same(lambda T: (batches(T, make_stream(T, 7, False), **kw),
                        len(T.utils.data.DataLoader(make_stream(T, 7, True), **kw)),
                        catch(len, T.utils.data.DataLoader(make_stream(T, 7, False), **kw))))


@pytest.mark.parametrize("n,lengths", [(10, [0.3, 0.7]), (7, [0.5, 0.5]), (3, [0.1, 0.1, 0.8]),
                                       (10, [0.25] * 4), (10, [-0.5, 1.5]), (10, [0.5, 0.6]),
                                       (10, [1.2, -0.2]), (10, [3, 4]), (10, [11, -1])])
def test_random_split_lengths_and_errors(n, lengths):
    def scenario(T):
        def split():
            parts = T.utils.data.random_split(range(n), lengths,
                                              generator=T.Generator().manual_seed(0))
            return [len(p) for p in parts], sorted(i for p in parts for i in p)
        return warnings_of(lambda: catch(split))
    same(scenario)


def test_concat_subset_tensor_dataset():
    def scenario(T):
        D = T.utils.data
        c = D.ConcatDataset([list(range(3)), list(range(10, 14))])
        sub = D.Subset(D.TensorDataset(T.arange(10)), [5, 2, 7])
        return ([catch(lambda i=i: c[i]) for i in (0, 3, 6, -1, -7, -8, 7)], len(c),
                c.cumulative_sizes, sub[1], sub[[0, 2]], len(sub), sub[-1],
                catch(D.TensorDataset, T.ones(3), T.ones(4)),
                catch(D.ConcatDataset, []),
                catch(D.ConcatDataset, [make_stream(T, 2, True)]))
    same(scenario)
