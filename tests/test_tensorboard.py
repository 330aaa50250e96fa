"""ember.utils.tensorboard against torch.utils.tensorboard: the same calls write, through each
library's SummaryWriter, into two folders; the event files are read back and compared event by
event, field by field (wall times and file names aside), with the other files (embeddings)
compared byte for byte. Also: the import errors without tensorboard, bad input errors."""
import glob
import importlib.util
import os
import re
import socket
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest
import torch

import ember

pytest.importorskip("tensorboard", reason="the optional tensorboard package is not installed "
                    "(pip install tensorboard, or ember's 'test' extra)")
pytest.importorskip("PIL", reason="images need Pillow (installed with tensorboard's extras)")

from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader  # noqa: E402
from tensorboard.compat.proto.event_pb2 import Event  # noqa: E402
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

from ember.utils.tensorboard import FileWriter, SummaryWriter as EmberWriter  # noqa: E402

LIBS = {"torch": (torch, TorchWriter), "ember": (ember, EmberWriter)}


def read_run(folder):
    """{relative folder of each event file: [events without wall_time]}, hparams plugin
    contents parsed (their map's byte order is not fixed), and {relative path: bytes} of the
    other files."""
    events, others = {}, {}
    for path in sorted(glob.glob(os.path.join(folder, "**", "*"), recursive=True)):
        if os.path.isdir(path):
            continue
        rel = os.path.relpath(path, folder)
        if "tfevents" not in os.path.basename(path):
            with open(path, "rb") as f:
                others[rel] = f.read()
            continue
        out = events.setdefault(os.path.dirname(rel), [])
        for record in RawEventFileLoader(path).Load():
            event = Event.FromString(record)
            event.ClearField("wall_time")
            hparams = []
            for value in event.summary.value:
                if value.metadata.plugin_data.plugin_name == "hparams":
                    hparams.append(HParamsPluginData.FromString(
                        value.metadata.plugin_data.content))
                    value.metadata.plugin_data.ClearField("content")
            out.append((event, hparams))
    return events, others


def run_both(tmp_path, calls, **writer_kwargs):
    """calls(writer, lib) with each library's SummaryWriter; both runs as read_run gives them."""
    runs = {}
    for name, (lib, Writer) in LIBS.items():
        folder = str(tmp_path / name)
        with Writer(folder, **writer_kwargs) as w:
            calls(w, lib)
        runs[name] = read_run(folder)
    return runs["torch"], runs["ember"]


def assert_same_runs(tmp_path, calls, min_events=1, **writer_kwargs):
    (t_events, t_files), (e_events, e_files) = run_both(tmp_path, calls, **writer_kwargs)
    assert sorted(t_events) == sorted(e_events)
    for folder in t_events:
        t, e = t_events[folder], e_events[folder]
        assert len(t) == len(e), folder
        for (t_ev, t_hp), (e_ev, e_hp) in zip(t, e):
            assert e_ev == t_ev, f"{folder}:\ntorch:\n{t_ev}\nember:\n{e_ev}"
            assert e_hp == t_hp
    assert e_files == t_files
    # the comparison compared something: at least min_events summaries were written
    count = sum(ev.HasField("summary") for v in t_events.values() for ev, _ in v)
    assert count >= min_events
    return t_events


def errors_of(call):
    """(type, message) that call(writer, lib) raises in each library."""
    out = []
    for name, (lib, Writer) in LIBS.items():
        with tempfile.TemporaryDirectory() as d, Writer(d) as w:
            with pytest.raises(Exception) as info:
                call(w, lib)
        out.append((info.type, str(info.value)))
    return out


def assert_same_error(call):
    (t_type, t_msg), (e_type, e_msg) = errors_of(call)
    # a shape in a message prints as its library's Size (ember.Size([6, 3]))
    assert e_type is t_type and e_msg.replace("ember.Size", "torch.Size") == t_msg


# ---- scalars ----------------------------------------------------------------------------------

def test_scalars(tmp_path):
    def calls(w, lib):
        w.add_scalar("a", 1.5, 3)
        w.add_scalar("a", lib.tensor(2.25), 4)
        w.add_scalar("a", lib.tensor([0.1], dtype=lib.float64), 5)
        w.add_scalar("a", np.float32(0.3), 6)
        w.add_scalar("b", 7)
        w.add_scalar("b", True, 1.7)                   # a float step is truncated
        w.add_scalar("b", lib.tensor(3, dtype=lib.int64), lib.tensor(9))
        w.add_scalar("b", lib.tensor(1e10, dtype=lib.bfloat16), 2)   # via float16: inf
        w.add_scalar("Loss/train", lib.tensor(0.7, requires_grad=True) * 2, 8)
        w.add_scalar("n", lib.tensor(0.1), 1, new_style=True)
        w.add_scalar("n", lib.tensor(0.1), 2, new_style=True, double_precision=True)
        w.add_scalar("n", 0.1, 3, new_style=True, double_precision=True)
        w.add_scalar("w", 1.0, 1, walltime=123.0)
    assert_same_runs(tmp_path, calls, min_events=13)


def test_scalars_purge_step_and_reopen_after_close(tmp_path):
    def calls(w, lib):
        w.add_scalar("a", 1, 6)
        w.close()
        w.add_scalar("a", 2, 7)          # a closed writer opens a new event file
    events = assert_same_runs(tmp_path, calls, min_events=2, purge_step=5)
    assert any(ev.session_log.status for ev, _ in events[""])


def test_add_scalars(tmp_path):
    def calls(w, lib):
        w.add_scalars("run/loss", {"train": lib.tensor(1.5), "test": 2.5}, 1)
        w.add_scalars("run/loss", {"train": 1.0, "test": np.float64(2.0)}, 2)
    events = assert_same_runs(tmp_path, calls, min_events=4)
    assert sorted(events) == ["", "run_loss_test", "run_loss_train"]


def test_scalar_errors():
    assert_same_error(lambda w, lib: w.add_scalar("a", lib.tensor([1.0, 2.0])))
    assert_same_error(lambda w, lib: w.add_scalar("a", lib.tensor([1.0, 2.0]), new_style=True))
    assert_same_error(lambda w, lib: w.add_scalar("a", "abc"))
    assert_same_error(lambda w, lib: w.add_scalar("a", [1.0]))
    assert_same_error(lambda w, lib: w.add_scalar("a", None))
    assert_same_error(lambda w, lib: w.add_scalar("a", lib.tensor(1 + 2j)))
    assert_same_error(lambda w, lib: w.add_scalars("a", [1]))


# ---- histograms -------------------------------------------------------------------------------

def test_histograms(tmp_path):
    rng = np.random.default_rng(0)
    data = (rng.standard_normal(1000) * 3).astype(np.float32)
    wide = rng.standard_normal(500) * 1e6

    def calls(w, lib):
        w.add_histogram("tf", lib.tensor(data), 1)
        w.add_histogram("tf", np.array([1.0, 2, 2, 3, 10]), 2)
        w.add_histogram("tf", wide, 3)
        w.add_histogram("tf", lib.tensor([0.0]), 4)
        w.add_histogram("tf", 3.0, 5)
        w.add_histogram("tf", lib.arange(10), 6)
        w.add_histogram("tf", lib.tensor(data).reshape(10, 100).double(), 7, max_bins=10)
        w.add_histogram("tf", lib.tensor(data, dtype=lib.float16), 8)
        for i, bins in enumerate(["auto", "fd", "doane", "scott", "stone", "rice", "sturges",
                                  "sqrt", 3, 30, [-5.0, 0.0, 5.0]]):
            w.add_histogram(f"np/{bins}", lib.tensor(data), i, bins=bins)
        w.add_histogram("np/max", lib.tensor(data), 1, bins="auto", max_bins=5)
        w.add_histogram_raw("raw", 0, 10, 5, 20, 200, [1, 5, 10], [1, 2, 2], 3)
        w.add_histogram_raw("raw", min=-1.0, max=1.0, num=2, sum=0.0, sum_squares=2.0,
                            bucket_limits=np.array([0.0, 1.0]),
                            bucket_counts=np.array([1, 1]), global_step=4)
    assert_same_runs(tmp_path, calls, min_events=22)


def test_histogram_errors():
    assert_same_error(lambda w, lib: w.add_histogram("h", np.array([])))
    assert_same_error(lambda w, lib: w.add_histogram("h", lib.zeros(0)))
    assert_same_error(lambda w, lib: w.add_histogram("h", "abc"))
    assert_same_error(lambda w, lib: w.add_histogram("h", [1.0, 2.0]))
    assert_same_error(lambda w, lib: w.add_histogram("h", np.array([1e30])))   # no bucket holds it
    assert_same_error(lambda w, lib: w.add_histogram("h", lib.arange(3.0), bins="nope"))
    assert_same_error(lambda w, lib: w.add_histogram_raw("h", 0, 1, 1, 1, 1, [1, 2], [1]))


# ---- images -----------------------------------------------------------------------------------

def test_images(tmp_path):
    rng = np.random.default_rng(1)
    chw = rng.random((3, 5, 7)).astype(np.float32)
    batch = rng.random((10, 3, 4, 6))
    rgba, two = rng.random((4, 5, 6)), rng.random((5, 6, 2))

    def calls(w, lib):
        w.add_image("chw", lib.tensor(chw), 1)
        w.add_image("chw", chw * 1.4 - 0.2, 2)              # cut to [0, 1]
        w.add_image("rgba", rgba, 3)
        w.add_image("gray", lib.tensor(chw[:1]), 4)
        w.add_image("hwc", lib.tensor(chw).permute(1, 2, 0), 5, dataformats="HWC")
        w.add_image("hwc1", lib.tensor(chw[:1]).permute(1, 2, 0), 5, dataformats="HWC")
        w.add_image("hwc2", two, 5, dataformats="HWC")
        w.add_image("hw", lib.tensor(chw[0]), 6, dataformats="HW")
        w.add_image("wh", chw[0], 6, dataformats="WH")
        w.add_image("lower", chw, 6, dataformats="chw")
        w.add_image("u8", lib.tensor((chw * 255).astype(np.uint8)), 7)
        w.add_image("i64", lib.tensor([[[3, 200]]]), 7)
        w.add_image("bool", np.array([[[0, 1]]], dtype=bool), 7)
        w.add_image("f64", lib.tensor(chw, dtype=lib.float64), 7)
        w.add_image("bf16", lib.tensor(chw, dtype=lib.bfloat16), 7)
        w.add_images("nchw", lib.tensor(batch), 8)
        w.add_images("nchw5", batch[:5], 8)
        w.add_images("nchw17", np.concatenate([batch, batch[:7]]), 8)
        w.add_images("n1hw", lib.tensor(batch[:, :1]), 8)
        w.add_images("nhwc", lib.tensor(batch).permute(0, 2, 3, 1), 8, dataformats="NHWC")
    assert_same_runs(tmp_path, calls, min_events=20)


def test_images_with_boxes(tmp_path):
    rng = np.random.default_rng(6)
    image = rng.random((3, 40, 60)).astype(np.float32)
    boxes = np.array([[1, 1, 5, 4], [3.5, 12.2, 45.7, 38.1]])

    def calls(w, lib):
        w.add_image_with_boxes("b", lib.tensor(image), lib.tensor(boxes), 1)
        w.add_image_with_boxes("b", image, boxes, 2, labels=["cat", "Dog 2"])
        w.add_image_with_boxes("b", lib.tensor(image), lib.tensor(boxes), 3, rescale=2)
        w.add_image_with_boxes("b", lib.tensor(image), lib.tensor(boxes), 4, rescale=0.7,
                               labels=["x", "y"])
        w.add_image_with_boxes("b", image, boxes, 5, labels=["one"])   # not one per box: none
        w.add_image_with_boxes("b", lib.tensor(image), lib.tensor(boxes[:1]), 6, labels="one")
        w.add_image_with_boxes("b", lib.tensor(image).permute(1, 2, 0), boxes, 7,
                               dataformats="HWC")
    assert_same_runs(tmp_path, calls, min_events=7)
    assert_same_error(lambda w, lib: w.add_image_with_boxes("b", lib.zeros(3, 4, 4),
                                                            lib.tensor([1, 1, 2, 2])))


def test_video_without_moviepy(tmp_path, capsys):
    if importlib.util.find_spec("moviepy") is not None:
        pytest.skip("moviepy is installed: ember does not encode videos")

    def calls(w, lib):
        w.add_video("v", lib.rand(1, 4, 3, 8, 8), 3)
        w.add_video("v", np.zeros((2, 4, 3, 8, 8)), 4, fps=10)
    assert_same_runs(tmp_path, calls, min_events=2)
    assert capsys.readouterr().out.splitlines() == ["add_video needs package moviepy"] * 4
    assert_same_error(lambda w, lib: w.add_video("v", lib.rand(4, 3, 8, 8)))


def test_figures(tmp_path):
    if importlib.util.find_spec("matplotlib") is None:     # then both fail alike
        assert_same_error(lambda w, lib: w.add_figure("f", None))
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def figure(k):
        f = plt.figure(figsize=(2, 1.5))
        plt.plot([1, 2, 3], [3, k, 2])
        return f
    kept = []

    def calls(w, lib):
        closed = figure(1)
        w.add_figure("f", closed, 1)
        assert not plt.fignum_exists(closed.number)
        w.add_figure("f", [figure(2), figure(3)], 2)
        kept.append(figure(4))
        w.add_figure("f", kept[-1], 3, close=False)
        assert plt.fignum_exists(kept[-1].number)
    assert_same_runs(tmp_path, calls, min_events=3)
    for f in kept:
        plt.close(f)


def test_image_errors():
    assert_same_error(lambda w, lib: w.add_image("i", np.zeros((2, 3))))
    assert_same_error(lambda w, lib: w.add_image("i", lib.zeros(2, 3, 4), dataformats="HW"))
    assert_same_error(lambda w, lib: w.add_image("i", np.zeros((2, 3, 4)), dataformats="CHWC"))
    assert_same_error(lambda w, lib: w.add_image("i", np.zeros((2, 3, 4)), dataformats="XYZ"))
    assert_same_error(lambda w, lib: w.add_image("i", [[1.0]], dataformats="HW"))
    assert_same_error(lambda w, lib: w.add_images("i", lib.zeros(2, 2, 3, 4)))   # 2 channels


# ---- text, hparams, PR curves, custom scalars, tensors, embeddings ---------------------------

def test_text(tmp_path):
    def calls(w, lib):
        w.add_text("t", "hello", 1)
        w.add_text("t", "**markdown** é ✓", 2)
        w.add_text("other/tag", "", None)
    assert_same_runs(tmp_path, calls, min_events=3)
    assert_same_error(lambda w, lib: w.add_text("t", ["a"]))
    assert_same_error(lambda w, lib: w.add_text("t", 3))


def test_hparams(tmp_path):
    def calls(w, lib):
        w.add_hparams({"lr": 0.1, "bs": 32, "opt": "adam", "flag": True, "skip": None,
                       "t": lib.tensor([3.5])},
                      {"hp/acc": 0.5, "hp/loss": lib.tensor(2.0)}, run_name="first")
        w.add_hparams({"lr": 0.2, "opt": "sgd", "flag": False},
                      {"hp/acc": 0.75},
                      hparam_domain_discrete={"opt": ["adam", "sgd"], "lr": [0.1, 0.2],
                                              "flag": [True, False]},
                      run_name="second", global_step=7)
    events = assert_same_runs(tmp_path, calls, min_events=9)
    assert sorted(events) == ["", "first", "second"]


def test_hparams_errors():
    assert_same_error(lambda w, lib: w.add_hparams([1], {}))
    assert_same_error(lambda w, lib: w.add_hparams({"a": [1]}, {"m": 1}, run_name="r"))
    assert_same_error(lambda w, lib: w.add_hparams({"a": lib.tensor(2.0)}, {"m": 1}, run_name="r"))
    assert_same_error(lambda w, lib: w.add_hparams({"a": 1}, {"m": 1}, {"b": [1, 2]}, "r"))
    assert_same_error(lambda w, lib: w.add_hparams({"a": 1}, {"m": 1}, {"a": 3}, "r"))
    assert_same_error(lambda w, lib: w.add_hparams({"a": 1}, {"m": 1}, {"a": [1.5]}, "r"))
    assert_same_error(lambda w, lib: w.add_hparams({"a": 1}, {"m": 1}, [1], "r"))


def test_pr_curves(tmp_path):
    rng = np.random.default_rng(2)
    labels = rng.random(200) > 0.5
    predictions = rng.random(200).astype(np.float32)
    weights = rng.random(200)

    def calls(w, lib):
        w.add_pr_curve("pr", np.array([1, 0, 1, 1, 0]), np.array([0.9, 0.1, 0.4, 0.6, 0.5]), 1,
                       num_thresholds=5)
        w.add_pr_curve("pr", lib.tensor(labels), lib.tensor(predictions), 2)
        w.add_pr_curve("pr", lib.tensor(labels).long(), predictions, 3, weights=weights,
                       num_thresholds=500)
        w.add_pr_curve("pr", labels, lib.tensor(predictions, dtype=lib.float64), 4,
                       num_thresholds=33)
        w.add_pr_curve_raw("raw", [3, 2], [2, 1], [0, 1], [0, 1], [0.6, 0.66], [1.0, 0.5], 5,
                           num_thresholds=2)
    assert_same_runs(tmp_path, calls, min_events=5)


def test_custom_scalars_and_tensors(tmp_path):
    def calls(w, lib):
        w.add_custom_scalars({"cat": {"lines": ["Multiline", ["a", "b"]],
                                      "band": ["Margin", ["x", "lo", "hi"]]},
                              "other": {"one": ["Multiline", ["c"]]}})
        w.add_custom_scalars_multilinechart(["a", "b"], category="c2", title="t")
        w.add_custom_scalars_marginchart(["x", "lo", "hi"])
        w.add_tensor("tt", lib.tensor([[1.0, 2.0], [3.0, 4.5]]), 4)
    assert_same_runs(tmp_path, calls, min_events=4)


def test_embeddings(tmp_path):
    rng = np.random.default_rng(3)
    mat = rng.standard_normal((4, 3)).astype(np.float32)

    def calls(w, lib):
        w.add_embedding(lib.tensor(mat), metadata=["a", "b", "c", "d"], global_step=2, tag="emb")
        w.add_embedding(mat.astype(np.float64), metadata=[["a", 1], ["b", 2], ["c", 3], ["d", 4]],
                        metadata_header=["name", "n"], global_step=3, tag="a/b c")
        w.add_embedding(lib.tensor(mat), metadata=lib.tensor([1, 2, 3, 4]))
        w.add_embedding(lib.tensor(mat), global_step=4, tag="p%q\\r s")
        w.add_scalar("s", 1.0)       # an event, so the event files are compared too
    assert_same_runs(tmp_path, calls)
    assert_same_error(lambda w, lib: w.add_embedding(np.zeros(3)))
    assert_same_error(lambda w, lib: w.add_embedding(np.zeros((2, 2)), metadata=["a"]))
    assert_same_error(lambda w, lib: w.add_embedding(np.zeros((2, 2)),
                                                     label_img=lib.zeros(3, 3, 2, 2)))
    assert_same_error(lambda w, lib: w.add_embedding(np.zeros((2, 2)),
                                                     label_img=lib.zeros(2, 4, 2, 2)))
    assert_same_error(lambda w, lib: w.add_embedding(np.zeros((2, 2)),      # taller than wide
                                                     label_img=lib.zeros(2, 3, 5, 1)))
    assert_same_error(lambda w, lib: w.add_embedding(np.zeros((2, 2)),      # only tensors
                                                     label_img=np.zeros((2, 3, 2, 2))))


def test_embedding_sprites(tmp_path):
    rng = np.random.default_rng(4)
    images = rng.random((5, 3, 4, 6)).astype(np.float32)
    gray = rng.random((3, 1, 4, 4))   # float64

    def calls(w, lib):
        w.add_embedding(np.zeros((5, 2)), label_img=lib.tensor(images))
        w.add_embedding(np.zeros((3, 2)), label_img=lib.tensor(gray), global_step=1, tag="gray")
        w.add_embedding(np.zeros((2, 2)), global_step=2,
                        label_img=lib.tensor((images[:2] * 255).astype(np.uint8)))
        w.add_scalar("s", 1.0)
    assert_same_runs(tmp_path, calls)


def test_embedding_dir_exists_warning(tmp_path):
    # in a fresh process: torch's logger holds the stream of its import time, which under
    # pytest is pytest's own capture (and it picks stdout or stderr by its own rules: the
    # two are read together)
    code = textwrap.dedent("""
        import sys, numpy as np
        for lib in ("torch", "ember"):
            SummaryWriter = __import__(lib + ".utils.tensorboard", fromlist=["x"]).SummaryWriter
            with SummaryWriter(sys.argv[1] + "/" + lib) as w:
                w.add_embedding(np.zeros((1, 1)))
                w.add_embedding(np.zeros((1, 1)))
                print("after", lib, flush=True)
    """)
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, timeout=300, env=_env(), )
    assert out.returncode == 0, out.stderr
    warning = "warning: Embedding dir exists, did you set global_step for add_embedding()?"
    lines = out.stdout.splitlines() + out.stderr.splitlines()
    assert lines.count(warning) == 2
    assert [line for line in lines if line != warning] == ["after torch", "after ember"]


def test_audio(tmp_path, capsys):
    samples = np.sin(np.linspace(0, 20, 300)) * 1.2       # beyond [-1, 1]: cut, with a warning

    def calls(w, lib):
        w.add_audio("a", lib.tensor(samples, dtype=lib.float32), 1, sample_rate=8000)
        w.add_audio("a", samples[None, :100] / 2, 2)
        w.add_audio("a", lib.tensor([0.0, 0.5, -0.25]), 3)
    assert_same_runs(tmp_path, calls, min_events=3)
    out = capsys.readouterr().out.splitlines()
    assert out == ["warning: audio amplitude out of range, auto clipped."] * 2
    assert_same_error(lambda w, lib: w.add_audio("a", lib.zeros(2, 3)))


def test_meshes(tmp_path):
    rng = np.random.default_rng(5)
    vertices = rng.standard_normal((1, 6, 3)).astype(np.float32)
    colors = rng.integers(0, 256, (1, 6, 3)).astype(np.int32)
    faces = np.array([[[0, 1, 2], [3, 4, 5]]], dtype=np.int32)

    def calls(w, lib):
        w.add_mesh("m", lib.tensor(vertices), colors=lib.tensor(colors),
                   faces=lib.tensor(faces), global_step=3,
                   config_dict={"material": {"cls": "PointsMaterial", "size": 2},
                                "camera": {"fov": 75, "cls": "PerspectiveCamera"}})
        w.add_mesh("points", vertices)
        w.add_mesh("colored", lib.tensor(vertices), colors=colors, global_step=1)
    assert_same_runs(tmp_path, calls, min_events=3)
    assert_same_error(lambda w, lib: w.add_mesh("m", lib.zeros(6, 3)))


# ---- the writer itself ------------------------------------------------------------------------

def test_default_log_dir_and_suffix(tmp_path, monkeypatch):
    folders = {}
    for name, (lib, Writer) in LIBS.items():
        (tmp_path / name).mkdir()
        monkeypatch.chdir(tmp_path / name)
        w = Writer(comment="_lr0.1", filename_suffix=".mine")
        folders[name] = w.get_logdir()
        files = os.listdir(w.get_logdir())
        w.close()
        assert len(files) == 1 and files[0].startswith("events.out.tfevents.")
        assert files[0].endswith(".mine")
    # same pattern, runs/<Mon><DD>_<HH>-<MM>-<SS>_<host>_lr0.1; the seconds may differ
    t, e = folders["torch"], folders["ember"]
    assert e.startswith("runs" + os.sep) and e.endswith("_lr0.1")
    assert e.split("_", 2)[2] == t.split("_", 2)[2]      # host and comment
    host = re.escape(socket.gethostname())
    pattern = r"runs/[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_" + host + "_lr0.1"
    assert re.fullmatch(pattern, t.replace(os.sep, "/"))
    assert re.fullmatch(pattern, e.replace(os.sep, "/"))


def test_writer_attributes_and_flush(tmp_path):
    w = EmberWriter(str(tmp_path), flush_secs=30, max_queue=3)
    t = TorchWriter(str(tmp_path / "t"), flush_secs=30, max_queue=3)
    assert w.get_logdir() == str(tmp_path)
    assert (w.max_queue, w.flush_secs, w.filename_suffix) == (t.max_queue, t.flush_secs,
                                                               t.filename_suffix)
    assert w.default_bins == t.default_bins
    assert isinstance(w.file_writer, FileWriter)
    assert w.file_writer.get_logdir() == str(tmp_path)
    w.add_scalar("a", 1.0, 1)
    w.flush()
    events, _ = read_run(str(tmp_path))
    assert [ev.summary.value[0].simple_value for ev, _ in events[""][1:]] == [1.0]
    w.close()
    w.close()          # twice is fine, as in torch
    t.close()


def test_file_writer(tmp_path):
    from tensorboard.compat.proto.summary_pb2 import Summary
    from torch.utils.tensorboard import FileWriter as TorchFileWriter
    runs = []
    for name, Writer in (("torch", TorchFileWriter), ("ember", FileWriter)):
        folder = str(tmp_path / name)
        w = Writer(folder, max_queue=2, filename_suffix=".x")
        assert w.get_logdir() == folder
        w.add_summary(Summary(value=[Summary.Value(tag="a", simple_value=2.5)]), 3)
        w.add_event(Event(step=1, file_version="brain.Event:2"), step=4.7, walltime=5.0)
        w.flush()
        w.close()
        # tensorboard's EventFileWriter has no reopen(): the same AttributeError in both
        with pytest.raises(AttributeError, match="'EventFileWriter' object has no attribute"):
            w.reopen()
        assert all(f.endswith(".x") for f in os.listdir(folder))
        runs.append(read_run(folder))
    assert runs[1] == runs[0]
    assert len(runs[0][0][""]) == 3      # a header, the summary, the event


def test_add_graph_is_not_provided(tmp_path):
    with EmberWriter(str(tmp_path)) as w:
        with pytest.raises(NotImplementedError, match="graph"):
            w.add_graph(ember.nn.Linear(2, 2), ember.zeros(1, 2))


# ---- the import errors ------------------------------------------------------------------------

_HIDE_TENSORBOARD = textwrap.dedent("""
    import importlib.abc, sys
    class Hide(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "tensorboard" or name.startswith("tensorboard."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, Hide())
""")


def _env(first_path=None):
    """This process's environment, with the repository (and first_path before it) on
    PYTHONPATH."""
    env = dict(os.environ)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in [first_path, repo, env.get("PYTHONPATH")]
                                        if p)
    return env


def _import_errors(prelude, env_path=None):
    """What importing torch's and then ember's tensorboard module raises, in one fresh
    process (each: 'type | message | name')."""
    code = prelude + textwrap.dedent("""
        for module in ("torch.utils.tensorboard", "ember.utils.tensorboard"):
            try:
                __import__(module)
                print("imported")
            except Exception as e:
                print(type(e).__name__, "|", e, "|", getattr(e, "name", None))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(env_path), timeout=300)
    return out.stdout.strip().splitlines()


def test_import_fails_without_tensorboard():
    t, e = _import_errors(_HIDE_TENSORBOARD)
    assert t == "ModuleNotFoundError | No module named 'tensorboard' | tensorboard"
    assert e == t


@pytest.mark.parametrize("version_line", ["__version__ = '1.14.0'", ""])
def test_import_fails_with_old_tensorboard(tmp_path, version_line):
    (tmp_path / "tensorboard").mkdir()
    (tmp_path / "tensorboard" / "__init__.py").write_text(version_line + "\n")
    t, e = _import_errors("", str(tmp_path))
    assert t == ("ImportError | TensorBoard logging requires TensorBoard version 1.15 or above "
                 "| None")
    assert e == t


def test_torch_alias_import(tmp_path):
    """`from torch.utils.tensorboard import SummaryWriter` under the real-program harness's
    alias gives ember's writer: the module's public names are torch's."""
    import torch.utils.tensorboard as tmod
    import ember.utils.tensorboard as emod
    assert sorted(tmod.__all__) == sorted(emod.__all__)
    assert emod.RecordWriter is tmod.RecordWriter
