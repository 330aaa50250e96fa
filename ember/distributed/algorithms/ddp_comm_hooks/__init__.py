"""DDP communication hooks: the built-in ones by name (DDPCommHookType) and
register_ddp_comm_hook. The quantization and PowerSGD hooks are not provided (see
tools/not_provided.toml)."""
import enum
from functools import partial

from . import debugging_hooks, default_hooks  # noqa: F401 (torch's submodules)


def _ddp_comm_hook_wrapper(comm_hook, model, state):
    model.register_comm_hook(state, comm_hook)


class DDPCommHookType(enum.Enum):
    """The built-in hooks; `register_ddp_comm_hook(DDPCommHookType.FP16_COMPRESS, model)`."""
    ALLREDUCE = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.bf16_compress_hook)
    NOOP = partial(_ddp_comm_hook_wrapper, comm_hook=debugging_hooks.noop_hook)


def register_ddp_comm_hook(comm_hook_type, model, state=None):
    comm_hook_type.value(model=model, state=state)
