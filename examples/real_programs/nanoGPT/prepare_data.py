"""Stand-in shakespeare_char data and the small training flags for nanoGPT's train.py."""
import os
import pickle

import numpy as np

from _synthetic import text_lines


def prepare(workdir, program_dir):
    # train.py exec()s configurator.py from the working folder
    if not os.path.exists(os.path.join(workdir, "configurator.py")):
        os.symlink(os.path.join(program_dir, "configurator.py"), os.path.join(workdir, "configurator.py"))
    folder = os.path.join(workdir, "data", "shakespeare_char")
    os.makedirs(folder, exist_ok=True)
    text = "\n".join(text_lines(400, 0))
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = np.array([stoi[c] for c in text], dtype=np.uint16)
    cut = int(0.9 * len(ids))
    ids[:cut].tofile(os.path.join(folder, "train.bin"))
    ids[cut:].tofile(os.path.join(folder, "val.bin"))
    with open(os.path.join(folder, "meta.pkl"), "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": dict(enumerate(chars)), "stoi": stoi}, f)


def train_args(program_dir):
    return [
        os.path.join(program_dir, "config", "train_shakespeare_char.py"),
        "--device=cpu", "--compile=False", "--dtype=float32", "--max_iters=20", "--eval_iters=2",
        "--eval_interval=10", "--log_interval=1", "--block_size=32", "--batch_size=8", "--n_layer=2",
        "--n_head=2", "--n_embd=32", "--dropout=0.0", "--lr_decay_iters=20", "--warmup_iters=2",
        "--out_dir=out"]
