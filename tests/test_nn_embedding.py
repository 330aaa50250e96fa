"""F.embedding_bag and nn.EmbeddingBag against torch: values, gradients (weight and
per_sample_weights), node names, module repr and state, errors."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from differential import same, catch

RNG = np.random.default_rng(0)
W = RNG.normal(size=(6, 3))
IDX = np.array([1, 2, 4, 5, 4, 3, 2, 0, 1, 1])
PSW = RNG.normal(size=10)
OUT_W = RNG.normal(size=(8, 3))          # weights of the outputs in the loss (first rows used)


def bagged(mode, offsets=None, idx=IDX, psw=None, **kwargs):
    def scenario(T):
        w = T.tensor(W, requires_grad=True)
        p = T.tensor(psw if idx.ndim == 1 else psw.reshape(idx.shape), requires_grad=True) \
            if psw is not None else None
        off = T.tensor(offsets) if offsets is not None else None
        y = T.nn.functional.embedding_bag(T.tensor(idx), w, off, mode=mode,
                                          per_sample_weights=p, **kwargs)
        (y * T.tensor(OUT_W[:y.shape[0]])).sum().backward()
        return y, w.grad, p.grad if p is not None else None, type(y.grad_fn).__name__
    return scenario


CASES = []
for _mode in ("sum", "mean", "max"):
    CASES += [
        (_mode, dict(offsets=[0, 2, 2, 5])),                       # an empty bag
        (_mode, dict(offsets=[0, 2, 2, 5], padding_idx=1)),
        (_mode, dict(offsets=[0, 3, 8], include_last_offset=True)),
        (_mode, dict(offsets=[0, 3, 10, 10], include_last_offset=True, padding_idx=-2)),
        (_mode, dict(offsets=[0, 4, 4], padding_idx=4)),
        (_mode, dict(idx=IDX.reshape(2, 5))),                       # fixed-length bags
        (_mode, dict(idx=np.array([[3, 3], [3, 0], [5, 3]]), padding_idx=3)),  # padded bag
        (_mode, dict(offsets=np.array([0, 3], dtype=np.int32), idx=IDX.astype(np.int32))),
    ]
CASES += [
    ("sum", dict(offsets=[0, 2, 7], psw=PSW)),
    ("sum", dict(offsets=[0, 2, 7], psw=PSW, padding_idx=4)),
    ("sum", dict(idx=IDX.reshape(5, 2), psw=PSW)),
]


@pytest.mark.parametrize("mode,kwargs", CASES)
def test_embedding_bag(mode, kwargs):
    same(bagged(mode, **kwargs), rtol=1e-12, atol=1e-12)


def test_embedding_bag_max_ties_take_the_first():
    weights = np.array([[1.0, 2.0], [1.0, 0.0], [0.0, 2.0]])

    def scenario(T):
        w = T.tensor(weights, requires_grad=True)
        y = T.nn.functional.embedding_bag(T.tensor([0, 1, 2, 2]), w, T.tensor([0, 2]),
                                          mode="max")
        y.sum().backward()
        return y, w.grad
    same(scenario)


def test_embedding_bag_float32_and_max_norm():
    def scenario(T):
        w = T.tensor(W, dtype=T.float32)
        y = T.nn.functional.embedding_bag(T.tensor(IDX), w, T.tensor([0, 4]), max_norm=1.0)
        return y, w
    same(scenario, rtol=1e-5, atol=1e-6)


def test_embedding_bag_double_backward():
    w = ember.tensor(W, requires_grad=True)
    p = ember.tensor(PSW, requires_grad=True)

    def fn(w, p):
        return ember.nn.functional.embedding_bag(ember.tensor(IDX), w, ember.tensor([0, 3, 3]),
                                                 mode="sum", per_sample_weights=p)
    assert gradcheck(fn, (w, p))
    assert gradgradcheck(fn, (w, p))


ERRORS = [
    ("no-offsets", lambda T, i, w: T.nn.functional.embedding_bag(i, w)),
    ("2d-with-offsets", lambda T, i, w: T.nn.functional.embedding_bag(
        i.view(2, 5), w, T.tensor([0, 1]))),
    ("offsets-2d", lambda T, i, w: T.nn.functional.embedding_bag(i, w, T.tensor([[0, 1]]))),
    ("input-3d", lambda T, i, w: T.nn.functional.embedding_bag(i.view(1, 2, 5), w)),
    ("input-0d", lambda T, i, w: T.nn.functional.embedding_bag(i[0], w, T.tensor([0]))),
    ("weight-1d", lambda T, i, w: T.nn.functional.embedding_bag(i, w[0], T.tensor([0]))),
    ("mode", lambda T, i, w: T.nn.functional.embedding_bag(i, w, T.tensor([0]), mode="min")),
    ("psw-mean", lambda T, i, w: T.nn.functional.embedding_bag(
        i, w, T.tensor([0]), per_sample_weights=T.ones(10, dtype=T.float64))),
    ("psw-shape", lambda T, i, w: T.nn.functional.embedding_bag(
        i, w, T.tensor([0]), mode="sum", per_sample_weights=T.ones(9, dtype=T.float64))),
    ("psw-dtype", lambda T, i, w: T.nn.functional.embedding_bag(
        i, w, T.tensor([0]), mode="sum", per_sample_weights=T.ones(10))),
    ("float-indices", lambda T, i, w: T.nn.functional.embedding_bag(i.float(), w,
                                                                    T.tensor([0]))),
    ("float-offsets", lambda T, i, w: T.nn.functional.embedding_bag(i, w, T.tensor([0.0]))),
    ("offsets-start", lambda T, i, w: T.nn.functional.embedding_bag(i, w, T.tensor([1, 2]))),
    ("offsets-end", lambda T, i, w: T.nn.functional.embedding_bag(i, w, T.tensor([0, 11]))),
    ("index-range", lambda T, i, w: T.nn.functional.embedding_bag(i + 3, w,
                                                                  T.tensor([0, 2, 2, 5]))),
    ("padding-range", lambda T, i, w: T.nn.functional.embedding_bag(i, w, T.tensor([0]),
                                                                    padding_idx=6)),
    ("padding-range-neg", lambda T, i, w: T.nn.functional.embedding_bag(
        i, w, T.tensor([0]), padding_idx=-7)),
    ("max-freq", lambda T, i, w: T.nn.functional.embedding_bag(
        i, w, T.tensor([0]), mode="max", scale_grad_by_freq=True)),
    ("module-padding", lambda T, i, w: T.nn.EmbeddingBag(6, 3, padding_idx=6)),
    ("module-weight", lambda T, i, w: T.nn.EmbeddingBag(5, 3, _weight=w)),
    ("module-pretrained-1d", lambda T, i, w: T.nn.EmbeddingBag.from_pretrained(w[0])),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(case):
    _, op = case
    result = same(lambda T: catch(op, T, T.tensor(IDX), T.tensor(W)))
    assert result[0] == "raised"


def test_module():
    def scenario(T):
        T.manual_seed(0)
        bag = T.nn.EmbeddingBag(6, 3, mode="max", padding_idx=-2)
        reprs = [repr(bag), repr(T.nn.EmbeddingBag(6, 3, max_norm=1.0, norm_type=3.0,
                                                   scale_grad_by_freq=True, sparse=True,
                                                   include_last_offset=True))]
        padding_row = bag.weight[4]
        pretrained = T.nn.EmbeddingBag.from_pretrained(T.tensor(W), mode="sum",
                                                       include_last_offset=True)
        x = T.tensor(IDX)
        y = pretrained(x, T.tensor([0, 3, 10]),
                       per_sample_weights=T.tensor(PSW))
        thawed = T.nn.EmbeddingBag.from_pretrained(T.tensor(W), freeze=False)
        z = thawed(x.view(2, 5))
        z.sum().backward()
        return (reprs, padding_row, list(bag.state_dict()), pretrained.weight.requires_grad,
                y, thawed.weight.grad, bag.weight.shape, bag.weight.dtype)
    same(scenario)


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- embedding / one_hot
@pytest.mark.parametrize("norm_type", [1.0, 2.0, 3.5, float("inf"), 0.5])
def test_embedding_max_norm_renormalises_in_place(norm_type):
    w0 = randn(6, 3) * 3

    def f(T):
        w = T.tensor(w0)
        y = T.nn.functional.embedding(T.tensor([[0, 2, 2], [5, 1, 0]]), w, max_norm=0.7,
                                      norm_type=norm_type)
        return y, w
    same(f)


def test_one_hot_errors():
    def f(T):
        F = T.nn.functional
        return [catch(F.one_hot, *a) for a in [
            (T.tensor([], dtype=T.long),), (T.tensor([], dtype=T.long), 3),
            (T.tensor([0, 3, 1]), -1), (T.tensor([0, 3, 1]), 3), (T.tensor([0, -1]),),
            (T.tensor([0., 1.]),), (T.tensor(2), 4)]]
    same(f)
