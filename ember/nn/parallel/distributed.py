"""DistributedDataParallel: one model replica per MPI rank, gradients averaged during backward.

At construction the parameters and buffers are broadcast from rank 0, so every replica starts
equal. Parameters are grouped into buckets (in reverse order of registration, about the order
backward produces their gradients). Each parameter's post-accumulate-grad hook marks it ready;
when a bucket is complete its gradients are flattened and a non-blocking all-reduce (MPI
Iallreduce) starts at once, so communication overlaps the rest of backward. When the last
expected parameter is ready, backward's reduction is waited for and each `.grad` becomes the
average over the ranks.
"""
import contextlib

import numpy as np

from ... import distributed as dist
from ...autograd import grad_mode
from ...autograd.graph import AccumulateGrad
from ..._tensor import Tensor
from ..modules.module import Module

_EXPECTED_FINISH = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss.")


class _Bucket:
    """Some parameters' gradients, reduced together as one flat buffer."""

    def __init__(self, params):
        self.params = params
        self.sizes = [p.numel() for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(int).tolist()
        self.dtype = params[0].dtype
        self.pending = 0
        self.work = None
        self.flat = None


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        self.module = module
        self.process_group = process_group if process_group is not None else \
            dist.distributed_c10d._world()
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 ** 2)
        self._params = [p for p in module.parameters() if p.requires_grad]
        if init_sync:
            self._sync_module_states()
        self._buckets = self._make_buckets()
        self._bucket_of = {}
        for b in self._buckets:
            for i, p in enumerate(b.params):
                self._bucket_of[id(p)] = (b, i)
        self._reducing = False      # a backward's reduction is under way
        self._unused = set()        # ids of the parameters this forward did not use
        self._used_work = None
        self._used = None
        for p in self._params:
            p.register_post_accumulate_grad_hook(self._on_grad_ready)

    # ------------------------------------------------------------------ set-up
    def _sync_module_states(self):
        src = self.process_group._ranks[0]
        with grad_mode.no_grad():
            for t in list(self.module.parameters()) + list(self.module.buffers()):
                dist.broadcast(t, src, group=self.process_group)

    def _make_buckets(self):
        buckets, current, size = [], [], 0
        for p in reversed(self._params):
            nbytes = p.numel() * p.element_size()
            if current and (size + nbytes > self.bucket_bytes_cap or p.dtype != current[0].dtype):
                buckets.append(_Bucket(current))
                current, size = [], 0
            current.append(p)
            size += nbytes
        if current:
            buckets.append(_Bucket(current))
        return buckets

    # ------------------------------------------------------------------ forward
    def forward(self, *inputs, **kwargs):
        if self._reducing:
            raise RuntimeError(_EXPECTED_FINISH)
        if self.broadcast_buffers and self.require_forward_param_sync and \
                self.process_group.size() > 1:
            src = self.process_group._ranks[0]
            with grad_mode.no_grad():
                for b in self.module.buffers():
                    dist.broadcast(b, src, group=self.process_group)
        output = self.module(*inputs, **kwargs)
        if grad_mode.is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare_for_backward(output)
        return output

    def _prepare_for_backward(self, output):
        for b in self._buckets:
            b.pending, b.work = len(b.params), None
        self._ready = [False] * len(self._params)
        self._expected = len(self._params)
        self._reducing = True
        self._unused = set()
        if self.find_unused_parameters:
            reached = _parameters_reached(output)
            self._unused = {id(p) for p in self._params if id(p) not in reached}
            # which parameters any rank used: a parameter no rank used keeps its .grad
            used = np.array([id(p) not in self._unused for p in self._params], dtype=np.uint8)
            self._used = used
            self._used_work = self.process_group._comm.Iallreduce(
                dist._mpi.MPI.IN_PLACE, used, op=dist._mpi.MPI.MAX)
            for p in self._params:
                if id(p) in self._unused:
                    self._mark_ready(p)

    # ------------------------------------------------------------------ backward
    def _on_grad_ready(self, param):
        if self._reducing and self.require_backward_grad_sync:
            self._mark_ready(param)

    def _mark_ready(self, param):
        bucket, i = self._bucket_of[id(param)]
        if bucket.work is not None:
            return                  # (a parameter reached twice: its bucket is already off)
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch(bucket)
        self._expected -= 1
        if self._expected == 0:
            self._finish()

    def _launch(self, bucket):
        # one flat buffer per bucket, kept across steps (a fresh large array each step costs
        # page faults as large as the copy itself)
        if bucket.flat is None:
            bucket.flat = Tensor._make(np.empty(bucket.offsets[-1], dtype=bucket.dtype.np),
                                       bucket.dtype)
        flat = bucket.flat._data
        for p, start, end in zip(bucket.params, bucket.offsets, bucket.offsets[1:]):
            if id(p) in self._unused or p.grad is None:
                flat[start:end] = 0
            else:
                flat[start:end] = p.grad.detach()._host().reshape(-1)
        bucket.work = dist.all_reduce(bucket.flat, group=self.process_group, async_op=True)

    def _finish(self):
        """The end of backward: wait for every bucket and write the averaged gradients."""
        self._reducing = False
        n = self.process_group.size()
        if self._used_work is not None:
            dist._mpi.wait(self._used_work, self.process_group._timeout, "DDP unused params")
            self._used_work = None
        used = self._used
        index = {id(p): k for k, p in enumerate(self._params)}
        with grad_mode.no_grad():
            for bucket in self._buckets:
                bucket.work.wait()
                flat = bucket.flat._data
                np.divide(flat, n, out=flat, casting="unsafe")
                for p, start, end in zip(bucket.params, bucket.offsets, bucket.offsets[1:]):
                    if used is not None and not used[index[id(p)]]:
                        continue        # no rank used it: .grad stays as it was
                    value = bucket.flat[start:end].view(p.shape)
                    grad = p.grad
                    if self.gradient_as_bucket_view or grad is None:
                        p.grad = value if self.gradient_as_bucket_view else value.clone()
                    elif grad._data.__class__ is np.ndarray and grad._data.flags.writeable:
                        np.copyto(grad._data, flat[start:end].reshape(grad._data.shape))
                        grad._version_counter.bump()
                    else:
                        grad.copy_(value)
        self._used = None

    # ------------------------------------------------------------------ torch's API
    @contextlib.contextmanager
    def no_sync(self):
        """Backward inside this block accumulates gradients locally, without all-reducing."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def join(self, *args, **kwargs):
        return contextlib.nullcontext()

    def _set_static_graph(self):
        self.static_graph = True


def _parameters_reached(output):
    """ids of the leaf tensors backward from `output` would reach."""
    roots = []

    def collect(o):
        if isinstance(o, Tensor):
            if o.grad_fn is not None:
                roots.append(o.grad_fn)
        elif isinstance(o, dict):
            for v in o.values():
                collect(v)
        elif isinstance(o, (list, tuple)):
            for v in o:
                collect(v)
    collect(output)
    seen, reached, stack = set(), set(), roots
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            reached.add(id(node.variable))
        stack.extend(node._next_nodes)
    return reached
