"""torch.serialization's settings and helpers against torch: load endianness, crc32 and mmap
options, skip_data, get_unsafe_globals_in_checkpoint, storage locations (location_tag,
default_restore_location, register_package, validate_*_device), version checks, StorageType,
mkdtemp; and files torch writes under these settings, read by ember."""
import collections
import importlib
import io
import mmap
import os
import types

import numpy as np
import pytest
import torch

import ember
from differential import catch, same, warnings_of


def _S(T):
    return importlib.import_module(T.__name__ + ".serialization")


class Custom:
    """A class a checkpoint can refer to."""


def test_load_endianness_setting():
    def scenario(T):
        S = _S(T)
        out = [S.get_default_load_endianness(),
               [(n, m.value) for n, m in S.LoadEndianness.__members__.items()],
               catch(S.set_default_load_endianness, "little"),
               catch(S.set_default_load_endianness, 2)]
        S.set_default_load_endianness(S.LoadEndianness.BIG)
        out.append(S.get_default_load_endianness().name)
        S.set_default_load_endianness(None)
        out.append(S.get_default_load_endianness())
        return out
    same(scenario)


def _without_byteorder(raw):
    """A checkpoint with its byteorder record dropped (as files before torch 2.1 were)."""
    import zipfile
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            if not info.filename.endswith("/byteorder"):
                dst.writestr(info, src.read(info))
    return out.getvalue()


@pytest.mark.parametrize("order", [None, "LITTLE", "BIG", "NATIVE"])
def test_a_file_without_byteorder_uses_the_default(order):
    buf = io.BytesIO()
    torch.save({"x": torch.arange(4, dtype=torch.int32), "y": torch.tensor([1.5, -2.0])}, buf)
    raw = _without_byteorder(buf.getvalue())

    def scenario(T):
        S = _S(T)
        S.set_default_load_endianness(None if order is None else
                                      getattr(S.LoadEndianness, order))
        try:
            return T.load(io.BytesIO(raw))
        finally:
            S.set_default_load_endianness(None)
    same(scenario)


def test_crc32_and_mmap_settings():
    def scenario(T):
        S = _S(T)
        out = [S.get_crc32_options(), S.set_crc32_options(False), S.get_crc32_options()]
        S.set_crc32_options(True)
        out.append(S.get_default_mmap_options())
        setter = S.set_default_mmap_options(mmap.MAP_SHARED)
        out += [type(setter).__name__, S.get_default_mmap_options()]
        with S.set_default_mmap_options(mmap.MAP_PRIVATE):
            out.append(S.get_default_mmap_options())
        out.append(S.get_default_mmap_options())
        S.set_default_mmap_options(mmap.MAP_PRIVATE)
        out += [catch(S.set_default_mmap_options, 5), S.get_default_mmap_options()]
        return out
    same(scenario)


def test_reading_a_torch_file_saved_without_crc32():
    torch.serialization.set_crc32_options(False)
    try:
        buf = io.BytesIO()
        torch.save({"w": torch.arange(6.0).view(2, 3), "n": 3}, buf)
    finally:
        torch.serialization.set_crc32_options(True)
    loaded = ember.load(io.BytesIO(buf.getvalue()))
    assert loaded["n"] == 3
    np.testing.assert_array_equal(loaded["w"].numpy(), np.arange(6.0).reshape(2, 3))
    # a record that is really damaged is still caught where it carries a checksum
    good = io.BytesIO()
    torch.save({"w": torch.arange(6.0)}, good)
    raw = bytearray(good.getvalue())
    at = raw.index(np.arange(6.0, dtype=np.float32).tobytes())
    raw[at] ^= 0xFF
    with pytest.raises(ember.serialization.CheckpointError, match="CRC"):
        ember.load(io.BytesIO(bytes(raw)))


def test_skip_data():
    def scenario(T):
        S = _S(T)
        obj = {"a": T.arange(4.0), "b": T.ones(2, 3, dtype=T.int64)}
        buf = io.BytesIO()
        with S.skip_data():
            T.save(obj, buf)
        written = T.load(io.BytesIO(buf.getvalue()))    # the structure, with zeros
        full = io.BytesIO()
        T.save(obj, full)
        with S.skip_data() as ctx:
            skipped = T.load(io.BytesIO(full.getvalue()))
        return {"written": written, "shapes": {k: (v.shape, v.dtype) for k, v in
                                               skipped.items()},
                "ctx": type(ctx).__name__, "flag": S.skip_data().materialize_fake_tensors,
                "after": T.load(io.BytesIO(full.getvalue()))}
    same(scenario)


def test_get_unsafe_globals_in_checkpoint(tmp_path):
    def scenario(T):
        S = _S(T)

        def audit(obj):
            buf = io.BytesIO()
            T.save(obj, buf)
            buf.seek(0)
            # (torch collects them in a set: its order varies from run to run)
            return sorted(S.get_unsafe_globals_in_checkpoint(buf))
        out = [audit({"a": T.ones(2), "b": [1, 2.0, "x", None, (3,)],
                      "p": T.nn.Parameter(T.ones(1)), "dt": T.float16,
                      "dev": T.device("cpu"), "size": T.Size([2]), "s": {1}, "c": 1j,
                      "by": b"abc", "counter": collections.Counter("ab"),
                      "od": collections.OrderedDict(a=1)}),
               audit({"cls": Custom, "obj": Custom(), "fn": os.path.join})]
        S.add_safe_globals([Custom])
        out.append(audit({"obj": Custom()}))
        S.clear_safe_globals()
        path = os.path.join(str(tmp_path), T.__name__ + ".pt")
        T.save({"cls": Custom}, path)
        out.append(sorted(S.get_unsafe_globals_in_checkpoint(path)))
        out.append(catch(S.get_unsafe_globals_in_checkpoint, io.BytesIO(b"not a zip file")))
        return out
    same(scenario)


def test_unsafe_globals_of_a_torch_module_checkpoint():
    buf = io.BytesIO()
    torch.save(torch.nn.Linear(2, 2), buf)
    want = torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(buf.getvalue()))
    assert ember.serialization.get_unsafe_globals_in_checkpoint(
        io.BytesIO(buf.getvalue())) == want == ["torch.nn.modules.linear.Linear"]


def test_counter_loads_weights_only():
    buf = io.BytesIO()
    torch.save({"c": collections.Counter("abca")}, buf)
    assert ember.load(io.BytesIO(buf.getvalue())) == torch.load(io.BytesIO(buf.getvalue()))


def test_storage_locations():
    def scenario(T):
        S = _S(T)
        storage = T.ones(2).untyped_storage()
        restored = S.default_restore_location(storage, "cpu")
        return [S.location_tag(storage), restored is storage,
                catch(S.default_restore_location, storage, "xyz"),
                catch(S.location_tag, 3)[:2],
                catch(S.validate_cuda_device, "cuda:0"), catch(S.validate_cuda_device, "cuda"),
                catch(S.default_restore_location, storage, "cuda:0"),
                catch(S.validate_hpu_device, "hpu:0")]
    same(scenario)


def test_register_package_changes_saved_locations():
    def scenario(T):
        S = _S(T)
        seen = []

        def tagger(storage):
            seen.append("tag")
            return None         # leave the storage to the built-in taggers

        def deserializer(storage, location):
            return storage if location == "special" else None
        S.register_package(5, tagger, deserializer)
        storage = T.ones(1).untyped_storage()
        out = [S.location_tag(storage), S.default_restore_location(storage, "special")
               is storage, len(seen) > 0]
        buf = io.BytesIO()
        T.save(T.ones(2), buf)
        out.append(T.load(io.BytesIO(buf.getvalue())))
        return out
    same(scenario)


@pytest.mark.parametrize("version,req,strict", [
    ("1.2.3+cu", (1, 2), True), ("1.2.3+cu", (1, 3), True), ("1.2.3+cu", (0, 9), True),
    ("1.2.3+cu", (1, 2, 3), True), ("1.x", (1, 0), True), ("1.x", (1, 0), False),
    ("2.1", (2, 1, 0), True), ("2.10.0", (2, 9), True), ("3", ("3",), True)])
def test_check_module_version_greater_or_equal(version, req, strict):
    def scenario(T):
        module = types.ModuleType("mod")
        module.__version__ = version
        return warnings_of(lambda: catch(_S(T).check_module_version_greater_or_equal, module,
                                         req, error_if_malformed=strict))
    same(scenario)


def test_storage_type_and_names():
    def scenario(T):
        S = _S(T)
        return [str(S.StorageType("LongStorage")), S.StorageType("HalfStorage").dtype,
                catch(S.StorageType, "Foo"), S.normalize_storage_type(T.FloatStorage).__name__,
                catch(S.storage_to_tensor_type, T.ones(1).untyped_storage())[:2],
                issubclass(S.SourceChangeWarning, Warning)]
    same(scenario)


def test_mkdtemp():
    def scenario(T):
        with _S(T).mkdtemp() as path:
            inside = [type(path).__name__, os.path.isdir(path)]
            with open(os.path.join(path, "f"), "w") as f:
                f.write("x")
        return inside, os.path.exists(path)
    same(scenario)


def test_load_with_mmap(tmp_path):
    def scenario(T):
        S = _S(T)
        path = os.path.join(str(tmp_path), T.__name__ + "_mm.pt")
        base = T.arange(6.0).view(2, 3)
        T.save({"a": base, "b": T.arange(3), "view": base[:, 1], "empty": T.ones(0)}, path)
        out = {"not_a_path": catch(T.load, io.BytesIO(open(path, "rb").read()), mmap=True)}
        with open(path, "rb") as f:
            out["file_object"] = catch(T.load, f, mmap=True)
        private = T.load(path, mmap=True)
        private["a"].add_(1)                     # copy-on-write: the file keeps its values
        out["private"] = [private, T.load(path)["a"]]
        S.set_default_mmap_options(mmap.MAP_SHARED)
        try:
            shared = T.load(path, mmap=True)
            shared["a"].mul_(10)                 # written through to the file
            del shared
        finally:
            S.set_default_mmap_options(mmap.MAP_PRIVATE)
        out["shared"] = T.load(path, mmap=True)["a"]
        out["other_args"] = [T.load(path, mmap=True, weights_only=False)["b"],
                             T.load(path, mmap=True, map_location="cpu")["view"]]
        return out
    same(scenario)


def test_mmap_load_of_an_ember_file_shares_the_file(tmp_path):
    path = str(tmp_path / "e.pt")
    ember.save({"w": ember.arange(4.0)}, path)
    loaded = ember.load(path, mmap=True)
    np.testing.assert_array_equal(loaded["w"].numpy(), np.arange(4.0, dtype=np.float32))
    assert torch.load(path, mmap=True)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
