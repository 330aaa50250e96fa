"""A hook that communicates nothing (torch's noop_hook), to measure DDP without its all-reduce."""
from ....futures import Future


def noop_hook(_, bucket):
    future = Future()
    future.set_result(bucket.buffer())
    return future
