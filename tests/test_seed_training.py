"""The seed notes' training programs (shared/seeds/001_*), run under torch 2.13 and ember.

The notes print a conv1 gradient of [-0.0782, -0.0842, -0.0782]: float32 noise of PyTorch 1.1.
With every weight 0.1 all 20 logits are equal, so the loss is log(20) and the true gradient is
0. torch 2.13 gives exactly equal logits and a gradient noise of ~3e-7; ember gives the same
logits, loss and logit gradients, and a noise of ~1.6e-6. The noise starts in the linear
layer's backward (logit gradients @ weights): torch's float32 GEMM accumulates each dot product
with fused multiply-adds in sequence (-1.4e-11 here), NumPy's rounds every product
(+9.3e-10); the exact value is -5.6e-10. Both leave the weight printing as 0.1000.
"""
import numpy as np
import torch

import ember
from differential import same


def simple_net(T):
    nn = T.nn

    class Simple(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3, 1, padding=1, bias=False)
            self.conv2 = nn.Conv2d(16, 32, 3, 1, padding=1, bias=False)
            self.linear = nn.Linear(32 * 10 * 10, 20, bias=False)

        def forward(self, x):
            x = self.conv1(x)
            x = self.conv2(x)
            x = self.linear(x.view(x.size(0), -1))
            return x
    return Simple()


def _setup(T, distinct_linear):
    model = simple_net(T)
    for m in model.parameters():
        m.data.fill_(0.1)
    if distinct_linear:
        w = np.linspace(-0.05, 0.05, 20 * 3200, dtype=np.float32).reshape(20, 3200)
        with T.no_grad():
            model.linear.weight.copy_(T.tensor(w))
    criterion = T.nn.CrossEntropyLoss()
    optimizer = T.optim.SGD(model.parameters(), lr=1.0)
    images = T.ones(8, 3, 10, 10)
    targets = T.ones(8, dtype=T.long)
    return model, criterion, optimizer, images, targets


def test_all_weights_point_one_gives_torch_2_13s_tiny_gradient_not_the_old_noise():
    def scenario(T):
        model, criterion, optimizer, images, targets = _setup(T, distinct_linear=False)
        model.train()
        output = model(images)
        r = [output.shape, bool((output == output[0, 0]).all())]     # all 160 logits equal
        loss = criterion(output, targets)
        r.append(loss.item())                                         # log(20), exactly
        r.append(model.conv1.weight.grad)
        loss.backward()
        g = model.conv1.weight.grad[0][0][0]
        r.append(bool(g.abs().max() < 1e-4))     # not the old 0.078 noise
        optimizer.step()
        r.append(repr(model.conv1.weight[0][0][0]))
        return r
    result = same(scenario, rtol=0, atol=0)
    assert result[1] is True and result[2] == 2.995732307434082 and result[4] is True


def test_distinct_weights_gradients_step_and_zero_grad_match_torch():
    def scenario(T):
        model, criterion, optimizer, images, targets = _setup(T, distinct_linear=True)
        model.train()
        loss = criterion(model(images), targets)
        loss.backward()
        first = model.conv1.weight.grad[0][0][0].clone()
        before = model.conv1.weight[0][0][0].detach().clone()
        optimizer.step()
        after = model.conv1.weight[0][0][0].detach().clone()
        optimizer.zero_grad()
        none_after_zero_grad = model.conv1.weight.grad
        loss = criterion(model(images), targets)
        loss.backward()
        optimizer.zero_grad(set_to_none=False)
        zeros = model.conv1.weight.grad[0][0][0].clone()
        return [loss.item(), first, before, after, none_after_zero_grad, zeros]
    same(scenario, rtol=1e-4, atol=1e-6)


def test_skipping_zero_grad_doubles_the_gradient_and_model_zero_grad_equals_optimizer():
    def scenario(T):
        model, criterion, optimizer, images, targets = _setup(T, distinct_linear=True)
        criterion(model(images), targets).backward()
        once = model.conv1.weight.grad[0][0][0].clone()
        criterion(model(images), targets).backward()
        twice = model.conv1.weight.grad[0][0][0].clone()
        model.zero_grad()
        by_model = [p.grad for p in model.parameters()]
        return [once, twice, twice / once, by_model]
    same(scenario, rtol=1e-4, atol=1e-6)


def test_requires_grad_propagates_and_freezing_stops_it():
    def scenario(T):
        T.manual_seed(0)
        inp = T.randn(8, 3, 50, 100)
        net = T.nn.Sequential(T.nn.Conv2d(3, 16, 3, 1), T.nn.Conv2d(16, 32, 3, 1))
        r = [inp.requires_grad, [(n, p.requires_grad) for n, p in net.named_parameters()],
             net(inp).requires_grad]
        for _, p in net.named_parameters():
            p.requires_grad = False
        r.append(net(inp).requires_grad)
        return r
    same(scenario)


def test_fine_tuning_only_a_replaced_head_trains_only_that_head():
    def scenario(T):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(6, 5), T.nn.ReLU(), T.nn.Linear(5, 4))
        with T.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(T.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1))
        for p in model.parameters():
            p.requires_grad = False
        model[2] = T.nn.Linear(5, 3)
        with T.no_grad():
            model[2].weight.copy_(T.linspace(-0.2, 0.3, 15).reshape(3, 5))
            model[2].bias.zero_()
        frozen = [p.detach().clone() for p in list(model.parameters())[:2]]
        opt = T.optim.SGD(model[2].parameters(), lr=1e-2, momentum=0.9)
        x = T.linspace(-1, 1, 24).reshape(4, 6)
        y = T.tensor([0, 1, 2, 1])
        for _ in range(3):
            opt.zero_grad()
            T.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        return [[p.requires_grad for p in model.parameters()],
                [bool((a == b).all()) for a, b in zip(frozen, list(model.parameters())[:2])],
                model[2].weight, model[2].bias, model[0].weight.grad]
    same(scenario, rtol=1e-4, atol=1e-6)


def test_small_cnn_trains_like_torch_for_50_steps():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 1, 12, 12)).astype(np.float32)
    y = rng.integers(0, 5, 16)

    def build(T):
        nn = T.nn
        return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(4, 8, 3), nn.ReLU(), nn.Flatten(),
                             nn.Linear(8 * 4 * 4, 5))

    torch.manual_seed(0)
    t_model = build(torch)
    e_model = build(ember)
    e_model.load_state_dict({k: ember.tensor(v.numpy()) for k, v in
                             t_model.state_dict().items()})
    curves = []
    for T, model in ((torch, t_model), (ember, e_model)):
        opt = T.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        xs, ys = T.tensor(x), T.tensor(y)
        losses = []
        for _ in range(50):
            opt.zero_grad()
            loss = T.nn.functional.cross_entropy(model(xs), ys)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        curves.append(np.array(losses))
    assert curves[0][-1] < curves[0][0] * 0.5          # it really trains
    np.testing.assert_allclose(curves[1], curves[0], rtol=2e-3, atol=1e-4)


def test_the_seed_notes_example_script_runs():
    import runpy
    from pathlib import Path
    script = Path(__file__).resolve().parent.parent / "examples" / "seed_notes.py"
    namespace = runpy.run_path(str(script), run_name="__main__")
    assert namespace["loss"].item() == 2.995732307434082       # log(20): all logits equal
    assert namespace["model"].conv1.weight.grad is None          # zero_grad sets None
