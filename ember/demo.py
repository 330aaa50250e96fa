"""ember's end-to-end demo: train a small CNN on 8x8 handwritten digits, on the CPU, in seconds.

    python -m ember.demo                 # or the console script: ember-demo
    python -m ember.demo --epochs 3 --out /tmp/run

No network and no arguments needed: the digits data set ships with ember (ember/data/). The
code is ordinary PyTorch code with `import ember as torch`: a DataLoader, a CNN built from
ember.nn, cross-entropy loss and SGD with momentum. It prints the loss and test accuracy of each
epoch, saves a checkpoint (in PyTorch's format: torch.load reads it), reloads it and checks the
accuracy again, and writes a plot of the loss (loss.png, if matplotlib is installed) and a
picture of the backward graph (graph.svg, or graph.dot if Graphviz is not installed).

--data reads another data set: an .npz with 'images' (N, H, W) and 'labels' (N,), or an
MNIST-style IDX pair (give both files, or just the images file when the labels file's name
follows MNIST's: ...-images-idx3-ubyte -> ...-labels-idx1-ubyte; .gz files are fine).
"""
import argparse
import gzip
import os
import struct
import sys
import time

import numpy as np

import ember as torch
from ember.utils.data import DataLoader, Subset, TensorDataset, random_split
from ember.viz import make_dot, GraphvizNotFoundError

DEFAULT_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "digits.npz")


# ------------------------------------------------------------------------------- data
def read_idx(path):
    """An array from an IDX file (the MNIST format): magic, big-endian dims, raw data."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{path} is not an IDX file")
    types = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    code, ndim = raw[2], raw[3]
    if code not in types:
        raise ValueError(f"{path}: unknown IDX data type 0x{code:02x}")
    dims = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
    data = np.frombuffer(raw, types[code], offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path}: truncated IDX file ({data.size} values, expected "
                         f"{int(np.prod(dims))})")
    return data.reshape(dims).astype(data.dtype.newbyteorder("="))


def load_images(paths):
    """(images as float32 in [0, 1] of shape (N, 1, H, W), int64 labels of shape (N,))."""
    paths = list(paths or [DEFAULT_DATA])
    if len(paths) == 1 and paths[0].endswith(".npz"):
        with np.load(paths[0]) as archive:
            images, labels = archive["images"], archive["labels"]
    else:
        if len(paths) == 1:
            labels_path = paths[0].replace("images-idx3", "labels-idx1").replace(
                "images.idx3", "labels.idx1")
            if labels_path == paths[0]:
                raise SystemExit("--data: give both IDX files (images, then labels)")
            paths.append(labels_path)
        images, labels = read_idx(paths[0]), read_idx(paths[1])
    if images.ndim != 3 or labels.shape != images.shape[:1]:
        raise SystemExit(f"--data: expected images (N, H, W) and labels (N,), got "
                         f"{images.shape} and {labels.shape}")
    scale = float(images.max()) or 1.0
    x = (images.astype(np.float32) / scale)[:, None]
    return x, labels.astype(np.int64)


# ------------------------------------------------------------------------------- model
def make_model(height, width, classes):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * (height // 4) * (width // 4), 128), nn.ReLU(),
        nn.Linear(128, classes),
    )


def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            correct += int((model(x).argmax(1) == y).sum())
            total += len(y)
    model.train()
    return correct / max(total, 1)


# ------------------------------------------------------------------------------- progress
class _PlainBar:
    """A progress bar for when tqdm is not installed: redrawn in place on a terminal."""

    def __init__(self, iterable, desc, total):
        self.iterable, self.desc, self.total = iterable, desc, total
        self.tty = sys.stdout.isatty()
        self.postfix = ""

    def __iter__(self):
        start = time.perf_counter()
        for i, item in enumerate(self.iterable, 1):
            yield item
            if self.tty:
                filled = 30 * i // max(self.total, 1)
                print(f"\r{self.desc} [{'#' * filled}{'.' * (30 - filled)}] {i}/{self.total} "
                      f"{self.postfix}", end="", flush=True)
        if self.tty:
            print(f" {time.perf_counter() - start:.1f}s")

    def set_postfix_str(self, text):
        self.postfix = text


def progress(iterable, desc, total):
    try:
        from tqdm import tqdm  # (optional dependency: tqdm)
    except ImportError:
        return _PlainBar(iterable, desc, total)
    return tqdm(iterable, desc=desc, total=total, leave=False, ncols=80,
                disable=not sys.stdout.isatty())


# ------------------------------------------------------------------------------- outputs
def plot_losses(batch_losses, epoch_losses, path):
    try:
        import matplotlib  # (optional dependency: matplotlib)
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # (optional dependency: matplotlib)
    except ImportError:
        return "matplotlib is not installed: skipped loss.png (pip install matplotlib)"
    fig, ax = plt.subplots(figsize=(6, 3.5))
    steps_per_epoch = len(batch_losses) / max(len(epoch_losses), 1)
    ax.plot(np.arange(1, len(batch_losses) + 1) / steps_per_epoch, batch_losses, lw=0.7,
            alpha=0.6, label="batch")
    ax.plot(np.arange(1, len(epoch_losses) + 1), epoch_losses, "o-", label="epoch mean")
    ax.set_xlabel("epoch")
    ax.set_ylabel("cross-entropy loss")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title("ember demo: 8x8 digits CNN")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return f"wrote {path}"


def draw_graph(model, x, y, loss_fn, directory):
    loss = loss_fn(model(x), y)
    dot = make_dot(loss, params=dict(model.named_parameters()))
    try:
        return f"wrote {dot.render(os.path.join(directory, 'graph.svg'))}"
    except GraphvizNotFoundError:
        path = dot.save(os.path.join(directory, "graph.dot"))
        return (f"Graphviz 'dot' is not installed: wrote the graph as DOT text to {path} "
                f"(install Graphviz to get graph.svg)")


# ------------------------------------------------------------------------------- main
def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m ember.demo", description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1,
                   help="BLAS threads (default 1: this model's matrices are too small to gain "
                        "from more, and busy threads on a loaded machine cost a lot)")
    p.add_argument("--data", nargs="+", metavar="PATH",
                   help="an .npz (images, labels) or an IDX images file [and labels file]")
    p.add_argument("--out", default="ember-demo-output", help="directory for the outputs")
    return p.parse_args(argv)


def run(args):
    """Train, evaluate, save, reload; returns the numbers (printed along the way)."""
    t0 = time.perf_counter()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)     # main() restores the previous setting
    device = torch.device(args.device)
    os.makedirs(args.out, exist_ok=True)

    images, labels = load_images(args.data)
    classes = int(labels.max()) + 1
    split = torch.Generator().manual_seed(args.seed)
    train_idx, test_idx = random_split(range(len(labels)), [0.8, 0.2], generator=split)
    # standardise the pixels with the training images' mean and spread
    train_pixels = images[list(train_idx)]
    images = (images - train_pixels.mean()) / train_pixels.std()
    dataset = TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))
    train_set = Subset(dataset, list(train_idx))
    test_set = Subset(dataset, list(test_idx))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              generator=torch.Generator().manual_seed(args.seed + 1))
    test_loader = DataLoader(test_set, batch_size=256)
    print(f"data: {len(dataset)} images of {images.shape[2]}x{images.shape[3]}, {classes} "
          f"classes; {len(train_set)} for training, {len(test_set)} for testing")

    model = make_model(images.shape[2], images.shape[3], classes).to(device)
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: a CNN with {n_params:,} parameters; SGD lr={args.lr} "
          f"momentum={args.momentum}, batch size {args.batch_size}")

    batch_losses, epoch_losses, test_acc = [], [], 0.0
    for epoch in range(1, args.epochs + 1):
        bar = progress(train_loader, f"epoch {epoch}/{args.epochs}", len(train_loader))
        total, count = 0.0, 0
        for x, y in bar:
            x, y = x.to(device), y.to(device)
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            value = loss.item()
            batch_losses.append(value)
            total += value * len(y)
            count += len(y)
            bar.set_postfix_str(f"loss {value:.4f}")
        epoch_losses.append(total / count)
        test_acc = accuracy(model, test_loader, device)
        print(f"epoch {epoch:2d}/{args.epochs}  loss {epoch_losses[-1]:.4f}  "
              f"test accuracy {100 * test_acc:.2f}%")

    checkpoint = os.path.join(args.out, "checkpoint.pt")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "epoch": args.epochs, "test_accuracy": test_acc}, checkpoint)
    restored = make_model(images.shape[2], images.shape[3], classes).to(device)
    state = torch.load(checkpoint)
    restored.load_state_dict(state["model"])
    reloaded_acc = accuracy(restored, test_loader, device)
    verdict = "matches" if reloaded_acc == test_acc else "DIFFERS"
    print(f"saved {checkpoint}; reloaded it: test accuracy {100 * reloaded_acc:.2f}% "
          f"({verdict})")

    print(plot_losses(batch_losses, epoch_losses, os.path.join(args.out, "loss.png")))
    x, y = next(iter(test_loader))
    print(draw_graph(model, x[:4].to(device), y[:4].to(device), loss_fn, args.out))
    seconds = time.perf_counter() - t0
    print(f"done in {seconds:.1f}s; outputs are in {os.path.abspath(args.out)}")
    return {"epoch_losses": epoch_losses, "test_accuracy": test_acc,
            "reloaded_accuracy": reloaded_acc, "out": os.path.abspath(args.out),
            "seconds": seconds}


def main(argv=None):
    args = parse_args(argv)
    threads = torch.get_num_threads()
    try:
        run(args)
    finally:
        torch.set_num_threads(threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
