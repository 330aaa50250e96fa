"""Patterns from real third-party PyTorch programs that ember once got wrong, each reduced to a
minimal differential check against torch (see examples/real_programs/README.md for the
programs).

Most are about indexing: a program may index with any object torch accepts — a Python
``range``, lists and tuples of them, NumPy integer/bool arrays and scalars, 0-d tensors,
objects with ``__index__`` — mixed with slices, None and Ellipsis (issue 12, point 4).
"""
import numpy as np
import pytest
import torch

import ember
from tensor_compare import check


class Idx:
    """An index-like object (as a program's own integer type might be)."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


ENV = {"Idx": Idx}
X = "t.arange(24).view(2, 3, 4)"

# what goes between the brackets of x[...]
GET_INDICES = [
    # a Python range, alone, in tuples, with slices / None / Ellipsis / ints
    "range(2)", "range(0)", "range(1, 3)", "range(0, 3, 2)", "range(-1, 1)", "range(5)",
    "range(2), range(2)", "range(2), [0, 2]", ":, range(3)", "range(2), :, None",
    "None, range(2)", "..., range(2)", "range(2), 1", "0, range(3)", "range(2), ...",
    "range(2), t.tensor([0, 1])", "range(2), range(3)", "range(2), range(2), range(2)",
    "t.tensor([0, 1]), range(2), 1:3", "None, range(2), None, np.int64(1), ...",
    "tuple(range(2))",
    # lists holding ranges / arrays / tensors read as tuples (with torch's warning)
    "[range(2), range(2)]", "[range(2)]", "[[0, 1], range(2)]", "[range(2), [0, 1], range(2)]",
    "[np.array([0, 1]), np.array([1, 0])]", "[[0, 1], [1, 0]]", "[1, None]",
    "[t.tensor(True), t.tensor(False)]", "[np.int64(1), 0]", "[True, False]",
    # NumPy arrays: int of any width, float (truncated), bool masks, uint8 (a deprecated mask)
    "np.array([0, 1])", "np.array([0, 1], dtype=np.int32)", "np.array([0, 1], dtype=np.int16)",
    "np.array([0, 1], dtype=np.int8)", "np.array([0, 1], dtype=np.uint16)",
    "np.array([0, 1], dtype=np.uint64)", "np.array([0, 1], dtype=np.float32)",
    "np.array([[0, 1], [1, 0]])", "np.array([1, 0], dtype=np.uint8)",
    "np.array([True, False])", "np.array([[True, False, True], [False, True, True]])",
    ":, np.array([True, False, True])", "0, np.array([True, False, True])",
    "np.array([0, 1]), :, np.array([1, 2])", "np.array([], dtype=np.int64)", "np.array([5])",
    "np.array(1)", "np.array(True)", "np.array(1, dtype=np.uint8)", "np.array(1), 0",
    "np.array(['a'])",
    # NumPy scalars: integers index, bools and floats do not
    "np.int64(1)", "np.int32(1)", "np.int8(-1)", "np.uint8(1)", "np.int64(1), np.int64(2)",
    ":, np.int64(2)", "np.bool_(True)", "np.bool_(False)", "np.float64(1.0)",
    # 0-d tensors: integers select, bool and uint8 act as a mask
    "t.tensor(1)", "t.tensor(1, dtype=t.int32)", "t.tensor(True)", "t.tensor(False)",
    "t.tensor(1), :, t.tensor(2)", ":, t.tensor(1), None", "t.tensor(1), [0, 2]",
    "t.tensor(1, dtype=t.uint8)", "t.tensor(0, dtype=t.uint8)", "t.tensor(1.0)",
    "[t.tensor(0), t.tensor(1)]",
    # objects with __index__, also as slice bounds
    "Idx(1)", "Idx(1),", ":, Idx(2)", "[Idx(0), Idx(1)]", "slice(Idx(0), Idx(2))",
    "np.int64(1):", ":np.array(2)", "t.tensor(0):t.tensor(1)", "1.5:",
    # the mixture from the program that found the gap
    "range(2), np.array([0, 1]), t.tensor([1, 2])",
    # what torch refuses
    "'a'", "1, 'a'", "b'a'", "1.5", ":, 1.5", "np.array([1.5])", "object()", "{1: 2}", "{1, 0}",
    "t.tensor([0, 1], dtype=t.int16)",
]


@pytest.mark.parametrize("index", GET_INDICES)
def test_getitem_index_kinds(index):
    check(f"{X}[{index}]", ENV)


SET_CASES = [
    ("range(2), [0, 1]", "-1"), ("range(2), t.tensor([0, 2])", "t.tensor([-5, -6])"),
    ("range(2)", "0"), (":, range(3)", "t.zeros(2, 3, 4)"), (":, range(3)", "t.zeros(2, 3, 4).long()"),
    ("np.array([0, 1])", "7"), ("np.array([True, False])", "7"), ("np.int64(1)", "7"),
    ("np.bool_(True)", "7"), ("t.tensor(1)", "7"),
    ("t.tensor(1), :, t.tensor(2)", "t.tensor([1, 2, 3])"), ("[np.int64(0), np.int64(1)]", "3"),
    ("range(2), :, None", "5"), ("Idx(1)", "9"),
    ("range(2), np.array([0, 1]), t.tensor([1, 2])", "t.tensor(8)"), ("range(3)", "1"),
    ("range(2), 1, range(2)", "np.int64(4)"), ("np.array([1, 0], dtype=np.uint8)", "-2"),
    ("t.tensor(1, dtype=t.uint8)", "-3"), ("[range(2), [0, 1]]", "6"),
]


@pytest.mark.parametrize("index,value", SET_CASES)
def test_setitem_index_kinds(index, value):
    check(f"(lambda x: (x.__setitem__(({index}), {value}), x)[1])({X})", ENV)


def _grad_of_range_index(t):
    x = t.arange(12.).view(3, 4).requires_grad_()
    y = x[range(3), [0, 2, 3]] * t.tensor([1., 2., 3.])
    y.sum().backward()
    z = x.detach().clone().requires_grad_()
    w = z.clone()
    w[range(1, 3), np.array([1, 0])] = t.tensor(5.)  # in-place write through autograd
    (w * w).sum().backward()
    return y, x.grad, w, z.grad


def test_range_index_gradients():
    got = _grad_of_range_index(ember)
    want = _grad_of_range_index(torch)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.detach().numpy(), w.detach().numpy())
    assert type(got[0].grad_fn).__name__ == type(want[0].grad_fn).__name__


def test_forward_forward_overlay_pattern():
    """pytorch/examples mnist_forward_forward: `x_[range(x.shape[0]), y] = x.max()` writes
    the label into the first pixels of a copy of the batch."""
    def overlay(t):
        x = t.linspace(-1, 1, 30).view(3, 10)
        y = t.tensor([2, 0, 9])
        x_ = x.clone()
        x_[:, :10] *= 0.0
        x_[range(x.shape[0]), y] = x.max()
        return x_
    check("f(t)", {"f": overlay})


# the module paths programs import or reach as attributes
MODULE_PATHS = [
    "t.nn.modules.activation.MultiheadAttention", "t.nn.modules.transformer.TransformerEncoder",
    "t.nn.modules.transformer.TransformerEncoderLayer", "t.nn.modules.linear.Linear",
    "t.nn.modules.dropout.Dropout", "t.nn.modules.sparse.Embedding",
    "t.nn.modules.normalization.LayerNorm", "t.nn.modules.container.ModuleList",
    "t.nn.modules.conv.Conv2d", "t.nn.modules.rnn.LSTM", "t.nn.modules.batchnorm.BatchNorm2d",
    "t.nn.modules.loss.CrossEntropyLoss", "t.nn.modules.module.Module",
    "t.nn.parallel.data_parallel", "t.backends.cudnn.benchmark",
    "t.utils.data.dataloader.DataLoader", "t.optim.lr_scheduler.StepLR",
    "t.autograd.Variable", "t.accelerator.is_available()",
]


@pytest.mark.parametrize("path", MODULE_PATHS)
def test_module_paths(path):
    # same object kind under torch and ember (a class, a function, a value)
    check(f"(lambda o: o if isinstance(o, (bool, int)) else type(o).__name__ + ':' + "
          f"getattr(o, '__name__', ''))({path})")


def _reload_whole_transformer(t):
    """word_language_model saves its whole model with torch.save and reloads it with
    torch.load under safe_globals naming torch.nn.modules.<file>.<class> paths."""
    import io
    t.manual_seed(0)
    model = t.nn.TransformerEncoder(t.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2,
                                    enable_nested_tensor=False)
    model.eval()
    buf = io.BytesIO()
    t.save(model, buf)
    allowed = [t.nn.functional.relu, t.nn.modules.activation.MultiheadAttention,
               t.nn.modules.container.ModuleList, t.nn.modules.dropout.Dropout,
               t.nn.modules.linear.Linear, t.nn.modules.linear.NonDynamicallyQuantizableLinear,
               t.nn.modules.normalization.LayerNorm, t.nn.modules.sparse.Embedding,
               t.nn.modules.transformer.TransformerEncoder,
               t.nn.modules.transformer.TransformerEncoderLayer]
    buf.seek(0)
    with t.serialization.safe_globals(allowed):
        again = t.load(buf)
    x = t.linspace(-1, 1, 48).view(3, 2, 8)
    return type(again).__name__, len(again.layers), (again(x) - model(x)).abs().max()


def test_word_language_model_whole_model_reload():
    check("f(t)", {"f": _reload_whole_transformer})


def test_zero_dim_data_index_error():
    """spro/char-rnn returns `loss.data[0]`: torch 2.13 refuses, ember must say the same."""
    check("t.tensor(2.5, requires_grad=True).sum().data[0]")


def test_torch_load_numpy_array_needs_weights_only_false():
    """time_sequence_prediction saves a NumPy array with torch.save and loads it back with a
    plain torch.load: since torch 2.6 that is refused (weights_only=True) in both."""
    import io
    import pickle

    def attempt(t):
        buf = io.BytesIO()
        t.save(np.sin(np.arange(6.0)).reshape(2, 3), buf)
        buf.seek(0)
        try:
            t.load(buf)
        except pickle.UnpicklingError as err:
            first = str(err).split("\n")[0]
            buf.seek(0)
            return first, t.load(buf, weights_only=False)
        return None

    want, got = attempt(torch), attempt(ember)
    assert want is not None and got is not None
    assert got[0].replace("ember", "torch") == want[0]
    np.testing.assert_array_equal(got[1], want[1])


def test_variable_is_a_class_over_tensors():
    """char-rnn and other pre-0.4 programs wrap tensors in Variable and test isinstance."""
    check("(lambda V, x: (isinstance(x, V), isinstance(3, V), V(x) is x, V(x).requires_grad, "
          "V(x, requires_grad=True).requires_grad, x.requires_grad, "
          "V((x * 2).requires_grad_()).grad_fn, V(x).is_leaf, type(V).__name__))"
          "(t.autograd.Variable, t.ones(2))")
    check("t.autograd.Variable(3)")
    check("t.autograd.Variable(t.ones(2), volatile=True)")


def test_functional_data_parallel_without_accelerator():
    check("t.nn.parallel.data_parallel(t.nn.Linear(2, 3), t.ones(4, 2))")


def test_real_program_harness_alias_and_sync(tmp_path):
    """examples/real_programs/_harness.py: under --backend ember every torch import resolves to
    ember, and --sync gives the ember run torch's initial weights (equal first losses)."""
    import json
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    program = tmp_path / "prog"
    program.mkdir()
    (program / "main.py").write_text(
        "import torch\n"
        "import torch.nn.functional as F\n"
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "from torch import nn, optim\n"
        "print('modules', torch.__name__, F.__name__, DataLoader.__module__)\n"
        "torch.manual_seed(0)\n"
        "model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))\n"
        "x = torch.linspace(-1, 1, 40).view(10, 4)\n"
        "y = torch.arange(10) % 3\n"
        "opt = optim.SGD(model.parameters(), lr=0.5)\n"
        "for xb, yb in DataLoader(TensorDataset(x, y), batch_size=5):\n"
        "    loss = F.cross_entropy(model(xb), yb)\n"
        "    opt.zero_grad(); loss.backward(); opt.step()\n")
    runner = ("import sys; sys.path.insert(0, {!r}); from _harness import run_program; "
              "run_program('main.py')").format(os.path.join(root, "examples", "real_programs"))
    sync = tmp_path / "sync"
    out = {}
    for backend in ("torch", "ember"):
        p = subprocess.run([sys.executable, "-c", runner, "--backend", backend, "--sync",
                            str(sync), "--workdir", str(tmp_path / backend), str(program)],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONPATH": root})
        assert p.returncode == 0, p.stderr
        out[backend] = p.stdout
        with open(sync / f"losses_{backend}.json") as f:
            out[backend + "_losses"] = json.load(f)
    assert "modules torch torch.nn.functional torch.utils.data.dataloader" in out["torch"]
    assert "modules ember ember.nn.functional ember.utils.data.dataloader" in out["ember"]
    assert out["ember_losses"]["notes"] == ["loaded torch weights into Sequential #0"]
    t, e = out["torch_losses"]["losses"], out["ember_losses"]["losses"]
    assert len(t) == len(e) == 2
    np.testing.assert_allclose(e, t, rtol=1e-6)


@pytest.mark.parametrize("probs,sample_shape", [
    ([[0.3, 0.7]], ()), ([0.3, 0.7], ()), ([0.1, 0.2, 0.7], (4,)),
    ([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]], (2, 3))])
def test_categorical_sample_draws_torchs_classes(probs, sample_shape):
    # pytorch/examples reinforcement_learning: a seeded policy samples its actions with
    # Categorical(probs).sample(); torch draws them as one multinomial with replacement
    draws = {}
    for lib in (torch, ember):
        lib.manual_seed(543)
        dist = lib.distributions.Categorical(lib.tensor(probs))
        samples = [dist.sample(sample_shape) for _ in range(6)]
        draws[lib.__name__] = ([s.tolist() for s in samples], str(samples[0].dtype).split(".")[1], tuple(samples[0].shape),
                               lib.rand(2).tolist())
    assert draws["ember"] == draws["torch"]


def test_multinomial_with_replacement_of_no_rows():
    for lib in (torch, ember):
        lib.manual_seed(0)
    got = [lib.multinomial(lib.ones(0, 3), 2, True) for lib in (torch, ember)]
    assert tuple(got[1].shape) == tuple(got[0].shape) == (0, 2)
    assert ember.rand(2).tolist() == torch.rand(2).tolist()     # nothing drawn


@pytest.mark.parametrize("make,num_samples,replacement", [
    ("T.ones(2, 3, 4)", 0, False), ("-T.ones(2, 3)", 0, False), ("T.ones(2, 3)", 0, True),
    ("T.ones(2, 3)", -1, False), ("T.ones(2, 3)", 5, False), ("T.ones(0, 3)", 0, True)])
def test_multinomial_errors(make, num_samples, replacement):
    errors = []
    for T in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            T.multinomial(eval(make), num_samples, replacement)
        errors.append(str(info.value))
    assert errors[0] == errors[1]
