"""torch.thread_safe_generator: the random generator a data-loading worker thread should draw
from, or None (the global generator) elsewhere. ember's DataLoader workers are processes, each
with its own global generator, so the answer is None."""
from .utils.data.dataloader import get_worker_info

__all__ = ["thread_safe_generator"]


def thread_safe_generator():
    info = get_worker_info()
    return getattr(info, "generator", None) if info is not None else None
