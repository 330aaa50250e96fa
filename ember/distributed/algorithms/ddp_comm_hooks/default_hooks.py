"""DDP's built-in communication hooks (torch.distributed.algorithms.ddp_comm_hooks.default_hooks).

A hook is `hook(state, bucket) -> Future` whose value is the bucket's reduced (averaged) flat
gradient; `state` here is the process group (None: the default group).
"""
from ... import distributed_c10d as c10d
from .... import _dtype as D


def _allreduce_fut(process_group, tensor):
    """Average `tensor` over the group: a Future of the averaged tensor."""
    group = process_group if process_group is not None else c10d._world()
    tensor.div_(group.size())
    work = c10d.all_reduce(tensor, group=group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """The default: all-reduce the bucket's gradients and divide by the group's size."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group = process_group if process_group is not None else c10d._world()
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())
    work = c10d.all_reduce(compressed, group=group, async_op=True)

    def decompress(fut):
        buffer.copy_(fut.value()[0])
        return buffer
    return work.get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """The gradients travel as float16 (half the bytes), averaged, then cast back."""
    return _compress_hook(D.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """The gradients travel as bfloat16, averaged, then cast back. (torch's DDP refuses to
    register it without CUDA 11+ and NCCL 2.10+; so does ember's, as torch on CPU.)"""
    return _compress_hook(D.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapped(hook_state, bucket):
        group = hook_state.process_group if hasattr(hook_state, "process_group") else \
            hook_state
        size = (group if group is not None else c10d._world()).size()
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype).div_(size))
        future = hook(hook_state, bucket)

        def decompress(fut):
            buffer.copy_(fut.value())
            return buffer
        return future.then(decompress)
    return wrapped


def fp16_compress_wrapper(hook):
    """Wrap `hook` so its bucket travels as float16."""
    return _compress_wrapper(D.float16, hook)


def bf16_compress_wrapper(hook):
    """Wrap `hook` so its bucket travels as bfloat16."""
    return _compress_wrapper(D.bfloat16, hook)
