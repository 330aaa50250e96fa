"""DataParallel as torch runs it with no accelerator: the wrapped module's forward."""
from ..modules.module import Module


class DataParallel(Module):
    """torch's DataParallel where no accelerator is available: it keeps no device ids and its
    forward is the wrapped module's (device_ids, output_device and dim are then ignored)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """The functional DataParallel. It needs an accelerator: with none, torch raises this."""
    raise RuntimeError("device type could not be determined")
