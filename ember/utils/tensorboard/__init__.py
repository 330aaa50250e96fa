"""ember.utils.tensorboard: TensorBoard logging (SummaryWriter), as torch.utils.tensorboard.

The events are built with the `tensorboard` package's protobufs and written by its own
event-file writer, so the files are the ones torch writes. Like torch, this needs the optional
`tensorboard` package (1.15 or newer): without it, importing this module fails with Python's
ModuleNotFoundError for 'tensorboard'.
"""
import re

import tensorboard   # optional dependency: its absence is the error torch gives too


def _version_tuple(text):
    """(major, minor) of a version string such as '2.21.0' or '1.15.0rc1'."""
    numbers = re.findall(r"\d+", text)[:2]
    return tuple(int(n) for n in numbers) + (0,) * (2 - len(numbers))


if _version_tuple(str(getattr(tensorboard, "__version__", ""))) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

# torch re-exports tensorboard's RecordWriter
from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402,F401

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
