"""DistributedDataParallel training, written as for torch.distributed.

Run with N processes on this machine:
    python -m ember.distributed.run --nproc-per-node 2 examples/ddp_train.py
or with MPI's launcher directly:
    mpiexec -n 2 python examples/ddp_train.py
(with real PyTorch, `torchrun --nproc-per-node 2 examples/ddp_train.py --torch`).
"""
import argparse
import os
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch-size", type=int, default=32, help="per process")
parser.add_argument("--torch", action="store_true", help="run on PyTorch instead of ember")
args = parser.parse_args()

if args.torch:
    import torch
else:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import ember as torch

# attribute access, not `import torch.distributed`: the import statement would load PyTorch's
# module even when `torch` is ember
dist = torch.distributed
nn = torch.nn
DDP = torch.nn.parallel.DistributedDataParallel
DataLoader = torch.utils.data.DataLoader
DistributedSampler = torch.utils.data.DistributedSampler
TensorDataset = torch.utils.data.TensorDataset


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    # a synthetic task: which of 4 quadrants an 8x8 blob sits in
    images = torch.randn(1024, 1, 8, 8) * 1.5
    labels = torch.randint(0, 4, (1024,))
    for i, q in enumerate(labels.tolist()):
        images[i, 0, (q // 2) * 4:(q // 2) * 4 + 4, (q % 2) * 4:(q % 2) * 4 + 4] += 0.5
    dataset = TensorDataset(images, labels)
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)

    model = DDP(nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(8 * 4 * 4, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total, correct, loss_sum = 0, 0, 0.0
        for x, y in loader:
            opt.zero_grad()
            out = model(x)
            loss = nn.functional.cross_entropy(out, y)
            loss.backward()
            opt.step()
            loss_sum += loss.item() * len(y)
            correct += (out.argmax(1) == y).sum().item()
            total += len(y)
        stats = torch.tensor([loss_sum, correct, total], dtype=torch.float64)
        dist.all_reduce(stats)
        if rank == 0:
            print(f"epoch {epoch}: loss {stats[0].item() / stats[2].item():.4f} "
                  f"accuracy {stats[1].item() / stats[2].item():.3f} ({world} processes)")
    if rank == 0:
        torch.save(model.module.state_dict(), os.environ.get("DDP_EXAMPLE_OUT", os.devnull))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
