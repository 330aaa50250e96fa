"""F.grid_sample and F.affine_grid against torch: values, gradients w.r.t. input, grid and
theta (and their gradients, create_graph), node names, warnings and errors."""
import itertools

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from differential import same, catch, warnings_of

RNG = np.random.default_rng(0)
X2 = RNG.normal(size=(2, 3, 4, 5))
G2 = RNG.uniform(-1.3, 1.3, size=(2, 3, 4, 2))      # reaches past the borders
X3 = RNG.normal(size=(2, 2, 3, 4, 5))
G3 = RNG.uniform(-1.3, 1.3, size=(2, 2, 3, 4, 3))
OUT_W2 = RNG.normal(size=(2, 3, 3, 4))
OUT_W3 = RNG.normal(size=(2, 2, 2, 3, 4))
THETA = RNG.normal(size=(2, 2, 3))

MODES_2D = list(itertools.product(["bilinear", "nearest", "bicubic"],
                                  ["zeros", "border", "reflection"], [True, False]))
MODES_3D = list(itertools.product(["bilinear", "nearest"], ["zeros", "border", "reflection"],
                                  [True, False]))


def sampled(x, g, out_w, mode, padding, align_corners):
    def scenario(T):
        xt = T.tensor(x, requires_grad=True)
        gt = T.tensor(g, requires_grad=True)
        y = T.nn.functional.grid_sample(xt, gt, mode=mode, padding_mode=padding,
                                        align_corners=align_corners)
        # a weighted sum, so that every output point's gradient differs
        (y * T.tensor(out_w)).sum().backward()
        return y, xt.grad, gt.grad, type(y.grad_fn).__name__
    return scenario


@pytest.mark.parametrize("mode,padding,align_corners", MODES_2D)
def test_grid_sample_2d(mode, padding, align_corners):
    same(sampled(X2, G2, OUT_W2, mode, padding, align_corners), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode,padding,align_corners", MODES_3D)
def test_grid_sample_3d(mode, padding, align_corners):
    same(sampled(X3, G3, OUT_W3, mode, padding, align_corners), rtol=1e-10, atol=1e-12)


def test_grid_sample_points_on_the_grid():
    # coordinates exactly on pixels, on the borders and at the halfway points: the slopes of
    # clipping and reflection at their ends are torch's (0 at the ends)
    g = np.array(np.meshgrid(np.linspace(-1.5, 1.5, 7), np.linspace(-1, 1, 5),
                             indexing="xy")).transpose(1, 2, 0)[None]
    for mode, padding in itertools.product(["bilinear", "bicubic", "nearest"],
                                           ["zeros", "border", "reflection"]):
        for align_corners in (True, False):
            same(sampled(X2[:1], g, np.ones((1, 3, 5, 7)), mode, padding, align_corners),
                 rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode,padding,align_corners", [
    ("bilinear", "zeros", False), ("bilinear", "reflection", True), ("bicubic", "border", False),
    ("bicubic", "reflection", False), ("nearest", "zeros", True)])
def test_grid_sample_double_backward(mode, padding, align_corners):
    def scenario(T):
        x = T.tensor(X2, requires_grad=True)
        g = T.tensor(G2, requires_grad=True)
        y = T.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding,
                                        align_corners=align_corners)
        gx, gg = T.autograd.grad((y * y).sum(), (x, g), create_graph=True)
        return [gx, gg] + list(T.autograd.grad((gx * gx).sum() + (gg ** 3).sum(), (x, g)))
    same(scenario, rtol=1e-9, atol=1e-10)


def test_grid_sample_float32():
    def scenario(T):
        x = T.tensor(X2, dtype=T.float32, requires_grad=True)
        g = T.tensor(G2, dtype=T.float32, requires_grad=True)
        y = T.nn.functional.grid_sample(x, g, align_corners=False)
        y.sum().backward()
        return y, x.grad, g.grad
    same(scenario, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode,padding", [("bilinear", "zeros"), ("bicubic", "reflection")])
def test_grid_sample_gradcheck(mode, padding):
    # inside the image and away from the pixel lines, where the sampling is smooth
    x = ember.tensor(X2[:1, :2, :3, :4], requires_grad=True)
    g = ember.tensor(np.array([[[[0.13, -0.41], [-0.62, 0.27]], [[0.33, 0.71], [0.05, -0.2]]]]),
                     requires_grad=True)

    def fn(x, g):
        return ember.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding,
                                               align_corners=False)
    assert gradcheck(fn, (x, g))
    assert gradgradcheck(fn, (x, g))


def test_grid_sample_default_align_corners_warns():
    def scenario(T):
        return warnings_of(lambda: T.nn.functional.grid_sample(T.tensor(X2), T.tensor(G2)))
    same(scenario)


GRID_ERRORS = [
    ("mode", lambda T, x, g: T.nn.functional.grid_sample(x, g, mode="area",
                                                         align_corners=False)),
    ("padding", lambda T, x, g: T.nn.functional.grid_sample(x, g, padding_mode="wrap",
                                                            align_corners=False)),
    ("last-dim", lambda T, x, g: T.nn.functional.grid_sample(x, g[..., :1],
                                                             align_corners=True)),
    ("batch", lambda T, x, g: T.nn.functional.grid_sample(x[:1], g, align_corners=True)),
    ("dims", lambda T, x, g: T.nn.functional.grid_sample(x[0], g[0], align_corners=True)),
    ("dims-3d", lambda T, x, g: T.nn.functional.grid_sample(x[0], g[0, ..., :1],
                                                            align_corners=True)),
    ("dims-mismatch", lambda T, x, g: T.nn.functional.grid_sample(x.unsqueeze(2), g,
                                                                  align_corners=True)),
    ("empty-spatial", lambda T, x, g: T.nn.functional.grid_sample(x[:, :, :0], g,
                                                                  align_corners=True)),
    ("dtype", lambda T, x, g: T.nn.functional.grid_sample(x, g.float(), align_corners=True)),
    ("bicubic-3d", lambda T, x, g: T.nn.functional.grid_sample(
        x.unsqueeze(2), g.unsqueeze(1).expand(2, 1, 3, 4, 2).repeat(1, 1, 1, 1, 2)[..., :3],
        mode="bicubic", align_corners=True)),
]


@pytest.mark.parametrize("case", GRID_ERRORS, ids=[c[0] for c in GRID_ERRORS])
def test_grid_sample_errors(case):
    _, op = case
    result = same(lambda T: catch(op, T, T.tensor(X2), T.tensor(G2)))
    assert result[0] == "raised"


def test_torch_grid_sampler():
    def scenario(T):
        x, g = T.tensor(X2, requires_grad=True), T.tensor(G2)
        y = T.grid_sampler(x, g, 2, 2, False)         # bicubic, reflection
        y.sum().backward()
        return y, x.grad
    same(scenario, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------- affine_grid
@pytest.mark.parametrize("size,align_corners", list(itertools.product(
    [(2, 3, 4, 5), (2, 1, 3, 1), (1, 2, 3, 4, 5), (2, 1, 1, 3, 2)], [True, False])))
def test_affine_grid(size, align_corners):
    k = len(size) - 2
    theta = RNG.normal(size=(size[0], k, k + 1))

    def scenario(T):
        th = T.tensor(theta, requires_grad=True)
        grid, caught = warnings_of(lambda: T.nn.functional.affine_grid(th, size,
                                                                      align_corners))
        w = T.tensor(np.linspace(-1, 2, grid.numel()).reshape(grid.shape))
        gt, = T.autograd.grad((grid * grid * w).sum(), th, create_graph=True)
        gg, = T.autograd.grad((gt * gt).sum(), th)
        single, _ = warnings_of(lambda: T.nn.functional.affine_grid(
            T.tensor(theta, dtype=T.float32), size, align_corners=align_corners))
        return grid, gt, gg, type(grid.grad_fn).__name__, caught, single
    same(scenario, rtol=1e-10, atol=1e-6)


def test_affine_grid_then_sample():
    theta = np.array([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.05]], [[1.0, 0.0, 0.2], [0.0, 0.8, 0.0]]])

    def scenario(T):
        th = T.tensor(theta, requires_grad=True)
        x = T.tensor(X2, requires_grad=True)
        grid = T.nn.functional.affine_grid(th, (2, 3, 6, 7), align_corners=False)
        y = T.nn.functional.grid_sample(x, grid, align_corners=False)
        (y * y).sum().backward()
        return y, th.grad, x.grad
    same(scenario, rtol=1e-10, atol=1e-12)


AFFINE_ERRORS = [
    ("default-warns", lambda T, th: warnings_of(
        lambda: T.nn.functional.affine_grid(th, (2, 1, 3, 4)))),
    ("integer", lambda T, th: T.nn.functional.affine_grid(th.int(), (2, 1, 3, 4), False)),
    ("shape-2d", lambda T, th: T.nn.functional.affine_grid(th[0], (2, 1, 3, 4), False)),
    ("shape-3d", lambda T, th: T.nn.functional.affine_grid(th, (2, 1, 3, 4, 5), False)),
    ("size-3", lambda T, th: T.nn.functional.affine_grid(th, (2, 1, 3), False)),
    ("batch", lambda T, th: T.nn.functional.affine_grid(th, (3, 1, 3, 4), False)),
    ("zero-size", lambda T, th: T.nn.functional.affine_grid(th, (2, 1, 0, 4), False)),
    ("generator", lambda T, th: T.affine_grid_generator(th, (2, 1, 3, 4), True)),
]


@pytest.mark.parametrize("case", AFFINE_ERRORS, ids=[c[0] for c in AFFINE_ERRORS])
def test_affine_grid_errors_and_warnings(case):
    _, op = case
    same(lambda T: catch(op, T, T.tensor(THETA)))
