"""karpathy/pytorch-made run.py (MADE: masked linear layers with masks rebuilt from NumPy orderings,
`binary_cross_entropy_with_logits(size_average=False)`, Adam with weight decay,
`StepLR.step(epoch)`, `torch.set_grad_enabled(flag)`, `Variable`, `loss.data.item()`) on a
stand-in binarized_mnist.npz (200 training rows, 100 validation rows, so its 100 hard-coded
epochs take 2 steps each). The program calls `.cuda()` on its tensors and model and there is no
GPU here: this runner alone makes `Tensor.cuda` and `Module.cuda` return their object unchanged,
in both the torch and the ember run (as word2vec's runner does for `torch.device('cuda')`).

    python examples/real_programs/compare.py pytorch_made /work/progs_src/pytorch-made -n 2 -r 1
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402


def prepare(workdir, program_dir):
    rng = np.random.RandomState(0)
    # "digits": each row switches on a class-dependent band of pixels, plus flipped noise
    def rows(n):
        labels = rng.randint(0, 10, size=n)
        x = np.zeros((n, 784), dtype=np.float32)
        for i, c in enumerate(labels):
            x[i, 60 * c:60 * c + 120] = 1
        flip = rng.rand(n, 784) < 0.05
        return np.where(flip, 1 - x, x).astype(np.float32)
    np.savez(os.path.join(workdir, "binarized_mnist.npz"), train_data=rows(200),
             valid_data=rows(100), test_data=rows(100))
    torch = sys.modules["torch"]
    torch.Tensor.cuda = lambda self, *args, **kwargs: self
    torch.nn.Module.cuda = lambda self, *args, **kwargs: self


run_program("run.py", ["-d", "binarized_mnist.npz", "-q", "100"], prepare=prepare)
