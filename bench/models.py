"""The benchmark networks, written once for any torch-like module `T` (torch or ember)."""
import numpy as np


def copy_weights(src, dst, T):
    """torch module -> ember module (same architecture), through numpy."""
    dst.load_state_dict({k: T.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


def mlp(T):
    nn = T.nn
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def simple(T):
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
            return self.linear(x.view(x.size(0), -1))
    return Simple()


def lenet(T):
    nn = T.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


CASES = {
    "mlp": (mlp, (128, 784), 10, dict(lr=0.01, momentum=0.9)),
    "simple": (simple, (8, 3, 10, 10), 20, dict(lr=1.0)),
    "lenet": (lenet, (64, 1, 28, 28), 10, dict(lr=0.01, momentum=0.9)),
}


def make_step(T, case, torch_model=None):
    build, shape, classes, opt_args = CASES[case]
    rng = np.random.default_rng(0)
    x = T.tensor(rng.standard_normal(shape).astype(np.float32))
    y = T.tensor(rng.integers(0, classes, shape[0]))
    model = build(T)
    if torch_model is not None:
        copy_weights(torch_model, model, T)
    opt = T.optim.SGD(model.parameters(), **opt_args)
    loss_fn = T.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return step, model


