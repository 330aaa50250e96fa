"""Deterministic synthetic stand-ins for the data files the programs would download."""
import io
import os
import tarfile

import numpy as np

WORDS = ("the of and to in a is that for it as was with be by on not he this are or his from at "
         "which but have an they you were her she there one all we their been has when who will "
         "more no if out so said what up its about into than them can only other new some could "
         "time these two may then do first any my now such like our over man me even most made "
         "after also did many before must through back years where much your way well down "
         "should because each just those people how too little state good very make world still "
         "own see men work long get here between both life being under never day same another "
         "know while last might us great old year off come since against go came right used take "
         "three chip").split()


def text_lines(n_lines, seed, words_per_line=(5, 20)):
    """Sentences drawn from a small Zipf-like vocabulary."""
    rng = np.random.RandomState(seed)
    p = 1.0 / np.arange(1, len(WORDS) + 1)
    p /= p.sum()
    lines = []
    for _ in range(n_lines):
        k = rng.randint(*words_per_line)
        lines.append(" ".join(WORDS[i] for i in rng.choice(len(WORDS), size=k, p=p)))
    return lines


def write_text(path, n_lines, seed):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(text_lines(n_lines, seed)) + "\n")


def cora_files(n_nodes=1700, n_features=64, n_classes=7, n_edges=3000, seed=0):
    """Text of cora.content and cora.cites with Cora's layout: paper id, 0/1 features, label;
    and 'cited citing' id pairs. Features and edges lean towards the node's class."""
    rng = np.random.RandomState(seed)
    ids = rng.choice(np.arange(100, 100 + 50 * n_nodes), size=n_nodes, replace=False)
    labels = rng.randint(0, n_classes, size=n_nodes)
    names = [f"Class_{c}" for c in range(n_classes)]
    content = []
    for pid, c in zip(ids, labels):
        p = np.full(n_features, 0.03)
        p[c * (n_features // n_classes):(c + 1) * (n_features // n_classes)] = 0.3
        feats = (rng.rand(n_features) < p).astype(int)
        feats[rng.randint(n_features)] = 1  # no empty rows
        content.append(f"{pid}\t" + "\t".join(map(str, feats)) + f"\t{names[c]}")
    edges = set()
    while len(edges) < n_edges:
        a = rng.randint(n_nodes)
        same = np.flatnonzero(labels == labels[a]) if rng.rand() < 0.8 else np.arange(n_nodes)
        b = rng.choice(same)
        if a != b:
            edges.add((a, b))
    cites = [f"{ids[a]}\t{ids[b]}" for a, b in sorted(edges)]
    return "\n".join(content) + "\n", "\n".join(cites) + "\n"


def write_cora(folder, **kwargs):
    content, cites = cora_files(**kwargs)
    os.makedirs(folder, exist_ok=True)
    for name, text in (("cora.content", content), ("cora.cites", cites)):
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)


def cora_tgz(**kwargs):
    """Bytes of a cora.tgz laid out like the LINQS download (cora/cora.content, cora/cora.cites)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in zip(("cora.content", "cora.cites"), cora_files(**kwargs)):
            data = text.encode()
            info = tarfile.TarInfo(f"cora/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def install_fake_requests(payload):
    """A stand-in ``requests`` whose get() serves ``payload`` bytes, whatever the URL."""
    import sys
    import types

    class _Response:
        def __init__(self):
            self.raw = io.BytesIO(payload)
            self.content = payload
            self.status_code = 200

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    module = types.ModuleType("requests")
    module.get = lambda url, **kwargs: _Response()
    sys.modules["requests"] = module
