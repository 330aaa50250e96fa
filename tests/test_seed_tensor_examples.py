"""Every tensor example of the seed notes (shared/seeds/*.txt), run under torch 2.13 and ember.

The notes were written for old PyTorch; where torch 2.13 behaves differently (the legacy
`Tensor([1,2,3],[4,5,6])` call, the non-inplace `resize`), torch 2.13 is the expectation.
Printed output is compared as text, with 'torch.' read as 'ember.'. Where an example prints
random numbers, ember draws from its own stream, so the text is compared with digits masked.
(The autograd examples of the same notes are in test_seed_autograd_examples.py.)
"""
import re

import torch

import ember
from differential import catch, same, warnings_of


def _printed(scenario):
    """What `scenario(T, print)` prints under torch and under ember, as text."""
    out = []
    for lib in (torch, ember):
        lines = []
        scenario(lib, lambda *a: lines.append(" ".join(str(x) for x in a)))
        out.append("\n".join(lines).replace("torch.", "ember."))
    return out


def _masked(text):
    return re.sub(r"-?\d+\.\d+(e[+-]\d+)?", "#", text)


# ----------------------------------------------------------------------------- notes 000
def test_000_tensor_of_sizes_tolist_and_tuple_data():
    """a = t.Tensor(2, 3); b = a.tolist(); c = t.Tensor((2, 3))"""
    def scenario(T):
        a = T.Tensor(2, 3)            # uninitialised in torch; ember zero-fills
        b = a.tolist()
        c = T.Tensor((2, 3))
        return [a.shape, a.dtype, type(b).__name__, len(b), [len(r) for r in b],
                all(isinstance(v, float) for r in b for v in r), c, repr(c), c.size(),
                a.size() == a.shape, a.shape[1], a.size(1)]
    same(scenario)


def test_000_view_shares_memory_squeeze_unsqueeze():
    """view keeps the element count and shares memory; squeeze/unsqueeze add or drop dims"""
    def scenario(T):
        a = T.arange(0, 6)
        b = a.view(2, 3)
        b[0, 1] = 100                 # changes a as well
        c = b.unsqueeze(1)            # shape 2x1x3
        d = c.squeeze(1)
        c[1, 0, 2] = -1
        return [repr(a), repr(b), c.shape, d.shape, repr(d), b.view(-1, 2).shape,
                catch(lambda: b.view(4, 2)), repr(a.view(1, 1, -1).squeeze()),
                repr(b.unsqueeze(-2)), catch(lambda: b.squeeze(3))]
    same(scenario)


def test_000_legacy_tensor_two_lists_raises_in_torch_2():
    """b = torch.Tensor([1,2,3],[4,5,6]) -- a TypeError in torch 2.13, message compared"""
    def scenario(T):
        return [catch(lambda: T.Tensor([1, 2, 3], [4, 5, 6]))]
    same(scenario)


def test_000_resize_examples():
    """c = b.resize(1, 3); d = b.resize(3, 3) -- the note's intended b is [[1,2,3],[4,5,6]].

    In torch 2.13 the non-inplace resize is deprecated (it warns) and can only keep the
    element count, so both calls raise; resize_ is the in-place form that grows (old values
    kept in front) and shrinks."""
    def scenario(T):
        b = T.Tensor([[1, 2, 3], [4, 5, 6]])
        c = warnings_of(lambda: catch(lambda: b.resize(1, 3)))
        d = warnings_of(lambda: catch(lambda: b.resize(3, 3)))
        e = warnings_of(lambda: b.resize(3, 2))
        b.resize_(1, 3)
        small = repr(b)
        b.resize_(3, 3)
        return [c, d, repr(e[0]), e[1], small, b.shape, b.view(-1)[:6].tolist()]
    same(scenario)


# ----------------------------------------------------------------------------- notes 001
def test_001_input_does_not_require_grad():
    """input = torch.randn(8, 3, 50, 100); print(input.requires_grad) -> False"""
    t, e = _printed(lambda T, p: (p(T.randn(8, 3, 50, 100).requires_grad),
                                  p(T.randn(8, 3, 50, 100).shape)))
    assert e == t


def test_001_images_and_targets():
    """images = torch.ones(8, 3, 10, 10); targets = torch.ones(8, dtype=torch.long)"""
    def scenario(T, p):
        images = T.ones(8, 3, 10, 10)
        targets = T.ones(8, dtype=T.long)
        p(images.shape)
        p(targets)
        p(images[0][0][0])
        p(T.Size([8, 20]))
    t, e = _printed(scenario)
    assert e == t


def test_001_grad_rows_print_like_the_notes():
    """print(model.conv1.weight.grad[0][0][0]) -> tensor([-0.0782, -0.0842, -0.0782])"""
    def scenario(T, p):
        g = T.tensor([[[[-0.0782, -0.0842, -0.0782]]]])
        w = T.full((1, 1, 1, 3), 0.1, requires_grad=True)
        p(g[0][0][0])
        p(w[0][0][0])
        with T.no_grad():
            w -= g
        p(w[0][0][0])
        p(g[0][0][0] * 2)
        p(T.zeros(3))
    t, e = _printed(scenario)
    assert e == t


def test_001_detach_shares_storage():
    """b_ = b.detach(); b_.zero_(); print(b) -> the zeros show through b"""
    def scenario(T, p):
        a = T.tensor([7., 0, 0], requires_grad=True)
        b = a + 2
        p(b)
        b_ = b.detach()
        b_.zero_()
        p(b)
        p(b_.data_ptr() == b.data_ptr(), b_.requires_grad, b_._version == b._version)
        c = a + 2
        c_ = c.data
        c_.zero_()
        p(c, int(c._version))
    t, e = _printed(scenario)
    assert e == t


def test_001_cpu_gpu_patterns():
    """device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")"""
    def scenario(T):
        device = T.device("cuda") if T.cuda.is_available() else T.device("cpu")
        a = T.rand([3, 3]).to(device)
        b = T.rand([3, 3]).to(device)
        found = [repr(device), repr(a.device), a.shape, b.is_cuda]
        # the notes' GPU lines, on this CPU-only machine
        found.append(catch(lambda: T.rand([3, 3], device="cuda")))
        found.append(catch(lambda: T.rand([3, 3]).cuda()))
        x = T.rand([3, 3])
        x_ = x.cpu().numpy()
        y = T.rand([3, 3], requires_grad=True)
        found += [type(x_).__name__, x_.shape, catch(lambda: y.cpu().numpy()),
                  y.cpu().detach().numpy().shape, y.detach().cpu().numpy().shape]
        return found
    same(scenario)


def test_001_item_and_tolist():
    """x.item() of a one-element tensor is a Python float; tolist() gives nested floats"""
    def scenario(T, p):
        x = T.randn(1, requires_grad=True)
        p(x)
        y = x.item()
        p(y, type(y))
        x = T.randn([2, 2])
        y = x.tolist()
        p(y, type(y[0][0]))
        p(catch(lambda: x.item()))
        p(T.tensor(2.5).item(), T.tensor([[3]]).item(), type(T.tensor([[3]]).item()))
    t, e = _printed(scenario)
    assert _masked(e) == _masked(t)


def test_000_legacy_error_text_is_torchs_word_for_word():
    """The message names torch's own signatures ('torch.device', 'torch.Storage'): ember
    prints exactly the same text, 'torch.' included."""
    messages = []
    for lib in (torch, ember):
        try:
            lib.Tensor([1, 2, 3], [4, 5, 6])
        except TypeError as err:
            messages.append(str(err))
    assert len(messages) == 2 and messages[1] == messages[0]
    assert "torch.device device = None" in messages[1]
