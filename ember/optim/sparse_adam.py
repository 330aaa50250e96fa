"""SparseAdam: Adam's update applied only where a sparse gradient has entries (the gradient of
nn.Embedding(sparse=True)); the update itself is in ember/sparse/_optim.py, with SGD's and
Adagrad's for sparse gradients. A dense gradient is refused with PyTorch's error."""
from .._tensor import Tensor
from .optimizer import Optimizer, check_lr


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        check_lr(lr)
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)

    def _update_group(self, group, ws):
        # (reached only when no gradient of the group is sparse: Optimizer.step sends those
        # to the sparse update)
        if any(p._grad is not None for p in group["params"]):
            raise RuntimeError("SparseAdam does not support dense gradients, please consider "
                               "Adam instead")
