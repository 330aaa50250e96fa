"""torch.nn.parallel.replicate: a copy of a module on each device (sharing nothing with the
original but the code). As in torch it works on accelerator tensors only."""
import copy

from .scatter_gather import check_not_cpu

__all__ = ["replicate"]


def replicate(network, devices, detach=False):
    targets = check_not_cpu(devices)
    tensors = list(network.parameters()) + list(network.buffers())
    if any(t.device.type == "cpu" for t in tensors):
        raise AssertionError("Broadcast function not implemented for CPU tensors")
    replicas = []
    for dev in targets:
        replica = copy.deepcopy(network).to(dev)
        if detach:
            for p in replica.parameters():
                p.requires_grad_(False)
        replicas.append(replica)
    return replicas


