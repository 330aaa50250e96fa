"""ember.viz.make_dot: ember's backward graph drawn like torch's graph of the same program."""
import shutil

import numpy as np
import pytest
import torch

import ember
from ember import viz


def seed_notes(m):
    x = m.ones(1)
    b = m.tensor([0.25], requires_grad=True)
    w = m.tensor([0.75], requires_grad=True)
    y = w * x
    z = y + b
    return z, {"w": w, "b": b}


def mlp(m):
    rng = np.random.default_rng(0)
    x = m.tensor(rng.standard_normal((4, 3)).astype(np.float32))
    w1 = m.tensor(rng.standard_normal((3, 5)).astype(np.float32), requires_grad=True)
    b1 = m.tensor(rng.standard_normal(5).astype(np.float32), requires_grad=True)
    w2 = m.tensor(rng.standard_normal((5, 2)).astype(np.float32), requires_grad=True)
    h = (x @ w1 + b1).relu()
    out = (h @ w2).exp().sum()
    return out, {"w1": w1, "b1": b1, "w2": w2}


def diamond(m):
    a = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    s = a.sin()
    return (s * s.cos() + s.t()).mean(), {"a": a}


def two_outputs(m):
    a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = m.tensor(2.0, requires_grad=True)
    return (a * c, (a - c).pow(2).sum()), {"a": a, "c": c}


@pytest.mark.parametrize("program", [seed_notes, mlp, diamond, two_outputs])
def test_graph_matches_torch(program):
    out_e, params_e = program(ember)
    out_t, params_t = program(torch)
    names_e, edges_e = viz.graph_structure(out_e)
    names_t, edges_t = viz.graph_structure(out_t)
    assert names_e == names_t
    assert edges_e == edges_t
    # the whole picture, labels and shapes included, is the same text for both libraries
    dot_e = viz.make_dot(out_e, params=params_e).source
    assert dot_e == viz.make_dot(out_t, params=params_t).source
    for name, p in params_e.items():
        assert f'"{name}\\n({", ".join(map(str, p.shape))})"' in dot_e


def test_seed_notes_graph_text():
    z, params = seed_notes(ember)
    src = viz.make_dot(z, params=params).source
    assert src.startswith("digraph {") and src.rstrip().endswith("}")
    assert 'n0 [label="AddBackward0" fillcolor=lightgrey]' in src
    assert 'n1 [label="MulBackward0" fillcolor=lightgrey]' in src
    assert '[label="w\\n(1)" fillcolor=lightblue tooltip="torch::autograd::AccumulateGrad"]' in src
    assert '[label="b\\n(1)" fillcolor=lightblue tooltip="torch::autograd::AccumulateGrad"]' in src
    assert "n0 -> out0" in src and "n1 -> n0" in src and "n2 -> n0" in src


def test_show_saved_lists_saved_tensors():
    a = ember.ones(2, 3, requires_grad=True)
    b = ember.ones(3, requires_grad=True)
    y = a * b
    src = viz.make_dot(y, show_saved=True).source
    assert '[label="self\\n(2, 3)" fillcolor=orange]' in src
    assert '[label="other\\n(3)" fillcolor=orange]' in src
    ta, tb = torch.ones(2, 3, requires_grad=True), torch.ones(3, requires_grad=True)
    tsrc = viz.make_dot(ta * tb, show_saved=True).source
    assert '[label="self\\n(2, 3)" fillcolor=orange]' in tsrc
    y.sum().backward()                      # saved tensors are freed: the picture still draws
    after = viz.make_dot(y, show_saved=True).source
    assert "MulBackward0" in after and "orange" not in after


def test_render_without_dot_says_how_to_install(monkeypatch, tmp_path):
    z, params = seed_notes(ember)
    dot = viz.make_dot(z, params)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(viz.GraphvizNotFoundError, match="apt-get install graphviz"):
        dot.render(tmp_path / "g.svg")
    assert dot.save(tmp_path / "g.dot") == tmp_path / "g.dot"
    assert (tmp_path / "g.dot").read_text() == dot.source


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' is not installed")
def test_render_svg_with_dot(tmp_path):
    z, params = seed_notes(ember)
    path = viz.make_dot(z, params).render(tmp_path / "g.svg")
    text = open(path).read()
    assert "<svg" in text and "MulBackward0" in text


def test_cnn_graph_matches_torch():
    # a network like the demo's: conv, pooling, flatten, linear and cross-entropy nodes
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 1, 8, 8)).astype(np.float32)
    y = np.array([3, 7])
    graphs = []
    for m in (ember, torch):
        nn = m.nn
        model = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(64, 10))
        loss = nn.CrossEntropyLoss()(model(m.tensor(x)), m.tensor(y))
        graphs.append(viz.make_dot(loss, params=dict(model.named_parameters())).source)
    assert graphs[0] == graphs[1]
    assert "ConvolutionBackward0" in graphs[0] and '"0.weight\\n(4, 1, 3, 3)"' in graphs[0]
