"""The demo (python -m ember.demo), run end to end in-process with fewer epochs."""
import gzip
import importlib.util
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember
from ember import demo


def test_demo_trains_saves_reloads_and_draws(tmp_path, capsys):
    out = tmp_path / "run"
    threads = ember.get_num_threads()
    try:
        result = demo.run(demo.parse_args(["--epochs", "5", "--out", str(out), "--seed", "0"]))
    finally:
        ember.set_num_threads(threads)
    printed = capsys.readouterr().out
    # five epochs reach 95% on the held-out 20% for every seed tried (ten reach >= 98%)
    assert result["test_accuracy"] >= 0.95
    assert result["reloaded_accuracy"] == result["test_accuracy"]
    assert len(result["epoch_losses"]) == 5
    assert result["epoch_losses"][-1] < result["epoch_losses"][0] / 5
    assert printed.count("test accuracy") == 6          # five epochs + the reloaded check
    assert "(matches)" in printed and f"outputs are in {out}" in printed
    assert "1797 images of 8x8, 10 classes; 1438 for training, 359 for testing" in printed

    # the checkpoint is in PyTorch's format: torch reads it, and the weights fit a torch model
    state = torch.load(out / "checkpoint.pt", weights_only=True)
    assert state["epoch"] == 5 and abs(state["test_accuracy"] - result["test_accuracy"]) < 1e-12
    tmodel = torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(256, 128), torch.nn.ReLU(),
        torch.nn.Linear(128, 10))
    tmodel.load_state_dict(state["model"])
    assert state["optimizer"]["param_groups"][0]["momentum"] == 0.9

    if importlib.util.find_spec("matplotlib") is not None:
        assert (out / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert "matplotlib is not installed: skipped loss.png" in printed
    if shutil.which("dot") is not None:
        svg = (out / "graph.svg").read_text()
        assert "<svg" in svg and "ConvolutionBackward0" in svg and "0.weight" in svg
    else:
        assert "NllLossBackward0" in (out / "graph.dot").read_text()
        assert "Graphviz 'dot' is not installed" in printed


def write_idx(path, array):
    codes = {np.dtype(np.uint8): 0x08, np.dtype(np.int32): 0x0C}
    header = bytes([0, 0, codes[array.dtype], array.ndim])
    header += struct.pack(f">{array.ndim}I", *array.shape)
    data = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(data)


def test_data_option_reads_npz_and_idx(tmp_path):
    images, labels = demo.load_images(None)               # the shipped digits
    assert images.shape == (1797, 1, 8, 8) and images.dtype == np.float32
    assert images.min() == 0.0 and images.max() == 1.0
    assert labels.dtype == np.int64 and np.bincount(labels).tolist()[:3] == [178, 182, 177]
    with np.load(demo.DEFAULT_DATA) as raw:
        pixels, digits = raw["images"], raw["labels"]
    write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", pixels)
    write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", digits.astype(np.uint8))
    for paths in ([str(tmp_path / "t10k-images-idx3-ubyte.gz")],
                  [str(tmp_path / "t10k-images-idx3-ubyte.gz"),
                   str(tmp_path / "t10k-labels-idx1-ubyte.gz")]):
        x, y = demo.load_images(paths)
        np.testing.assert_array_equal(x, images)
        np.testing.assert_array_equal(y, labels)
    np.savez(tmp_path / "mine.npz", images=pixels[:50], labels=digits[:50])
    x, y = demo.load_images([str(tmp_path / "mine.npz")])
    assert x.shape == (50, 1, 8, 8) and y.tolist() == digits[:50].tolist()
    write_idx(tmp_path / "bad-images-idx3-ubyte", pixels[:3])
    raw = (tmp_path / "bad-images-idx3-ubyte").read_bytes()
    (tmp_path / "bad-images-idx3-ubyte").write_bytes(raw[:-5])
    with pytest.raises(ValueError, match="truncated IDX file"):
        demo.read_idx(str(tmp_path / "bad-images-idx3-ubyte"))


def test_plain_progress_bar_passes_everything_through():
    bar = demo._PlainBar(range(7), "epoch 1/1", 7)
    bar.set_postfix_str("loss 1.0")
    assert list(bar) == list(range(7))


def test_module_entry_point_and_no_sklearn():
    done = subprocess.run([sys.executable, "-m", "ember.demo", "--help"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and "--epochs" in done.stdout and "--data" in done.stdout
    done = subprocess.run([sys.executable, "-c", "import sys, ember, ember.demo; "
                           "print('sklearn' in sys.modules)"], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip() == "False"
