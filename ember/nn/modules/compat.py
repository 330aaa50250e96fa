"""DataParallel as it behaves in one process with no GPU."""
from .module import Module


class DataParallel(Module):
    """torch's DataParallel where no accelerator is available: it keeps no device ids and its
    forward is the wrapped module's (device_ids, output_device and dim are then ignored)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
