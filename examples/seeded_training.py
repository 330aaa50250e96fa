"""A seeded training run that gives the same numbers under ember and PyTorch.

A small CNN with dropout, trained for 20 steps on shuffled batches of synthetic data from a
DataLoader. Every random draw (the data, the default weight init, the shuffling, the dropout
masks) comes from the global generator after manual_seed, and ember draws torch's stream, so
both libraries start from the same weights, visit the same batches and drop the same units.

    python examples/seeded_training.py            # ember
    python examples/seeded_training.py --torch    # PyTorch
"""
import argparse
import os
import sys


def build(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Dropout2d(0.1), nn.Flatten(),
        nn.Linear(8 * 2 * 2, 16), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(16, 3))


def run(torch, steps=20, seed=0):
    """(the initial weights as NumPy arrays by name, the loss of each step)."""
    torch.manual_seed(seed)
    # synthetic data: images whose class decides which quarter is bright
    images = torch.rand(96, 1, 8, 8)
    labels = torch.randint(0, 3, (96,))
    for k in range(3):
        rows = labels == k
        images[rows, :, 2 * k:2 * k + 4, 2 * k:2 * k + 4] += 1.0
    data = torch.utils.data.TensorDataset(images, labels)
    loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True)

    model = build(torch)
    initial = {name: p.detach().numpy().copy() for name, p in model.named_parameters()}
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    losses = []
    model.train()
    while len(losses) < steps:
        for x, y in loader:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if len(losses) == steps:
                break
    return initial, losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--torch", action="store_true", help="run on PyTorch instead of ember")
    args = parser.parse_args()
    if args.torch:
        import torch as lib
    else:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        import ember as lib
    initial, losses = run(lib)
    for name, w in initial.items():
        print(f"{name:12s} {tuple(w.shape)!s:16s} sum {float(w.astype('float64').sum()):+.8f}")
    for step, loss in enumerate(losses):
        print(f"step {step:2d}  loss {loss:.6f}")
