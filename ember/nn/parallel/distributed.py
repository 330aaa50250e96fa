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
import inspect

import numpy as np

from ... import distributed as dist
from ...distributed._grad_bucket import GradBucket
from ...distributed.algorithms.ddp_comm_hooks import default_hooks
from ...distributed.algorithms.join import Join, JoinHook, Joinable
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

    def __init__(self, index, params):
        self.index = index
        self.params = params
        self.sizes = [p.numel() for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(int).tolist()
        self.dtype = params[0].dtype
        self.pending = 0
        self.work = None        # the all-reduce in flight, or the comm hook's Future
        self.flat = None


class DistributedDataParallel(Module, Joinable):
    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False):
        Module.__init__(self)
        Joinable.__init__(self)
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
        self._index = {id(p): k for k, p in enumerate(self._params)}
        if init_sync:
            self._sync_module_states()
        # As torch: unless the buckets will be rebuilt after the first iteration in the order
        # gradients became ready (without find_unused_parameters, or with a static graph), the
        # first buckets follow the parameters' registration order; with a rebuild to come,
        # the first iteration reduces everything as one bucket.
        self._rebuild = static_graph or not find_unused_parameters
        self._iterations = 0            # backward passes prepared (with gradient sync)
        self._ready_order = None        # indices of the parameters, as their gradients came
        self._order_complete = False    # the recorded backward has finished
        self._set_buckets(_assign_buckets(
            self._params, None if self._rebuild else self.bucket_bytes_cap, reverse=True))
        self._reducing = False      # a backward's reduction is under way
        self._unused = set()        # ids of the parameters this forward did not use
        self._used_work = None
        self._used = None
        self._comm_hook = None      # (state, hook) from register_comm_hook
        self._static_used = None    # static_graph: the first iteration's used mask, kept
        self._static_unused = None
        self._divide_by = self.process_group.size()     # what a bucket's sum is divided by
        self._divide_by_initial = True                  # (join's divide_by_initial_world_size)
        for p in self._params:
            p.register_post_accumulate_grad_hook(self._on_grad_ready)

    # ------------------------------------------------------------------ set-up
    def _sync_module_states(self):
        src = self.process_group._ranks[0]
        with grad_mode.no_grad():
            for t in list(self.module.parameters()) + list(self.module.buffers()):
                dist.broadcast(t, src, group=self.process_group)

    def _set_buckets(self, groups):
        self._buckets = [_Bucket(i, g) for i, g in enumerate(groups)]
        self._bucket_of = {}
        for b in self._buckets:
            for i, p in enumerate(b.params):
                self._bucket_of[id(p)] = (b, i)

    def _rebuild_buckets(self):
        """After the recorded iteration: buckets in the order that iteration's gradients
        became ready (rank 0's order, so every rank reduces the same buckets in the same
        order), so the first bucket is complete, and its all-reduce starts, earliest."""
        order = np.full(len(self._params), -1, dtype=np.int64)
        if self.process_group.rank() == 0:
            order[:len(self._ready_order)] = self._ready_order
        dist._mpi.wait(self.process_group._comm.Ibcast(order, 0), self.process_group._timeout,
                       "DDP bucket rebuild")
        order = order.tolist()
        seen = set(order)           # any parameter not recorded (never ready) goes last
        order = [i for i in order if i >= 0] + [i for i in range(len(self._params))
                                                if i not in seen]
        self._set_buckets(_assign_buckets([self._params[i] for i in order],
                                          self.bucket_bytes_cap, reverse=False))
        self._ready_order, self._order_complete, self._rebuild = None, False, False

    # ------------------------------------------------------------------ forward
    def forward(self, *inputs, **kwargs):
        if self._reducing:
            raise RuntimeError(_EXPECTED_FINISH)
        if self._join_config.enable:
            work = Join.notify_join_context(self)
            if work is not None:
                work.wait()
                if not self._divide_by_initial:      # the average over the ranks still in
                    self._divide_by = int(work._outputs[0].item())
        if self._order_complete and grad_mode.is_grad_enabled():
            self._rebuild_buckets()
        self._sync_buffers()
        output = self.module(*inputs, **kwargs)
        if grad_mode.is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare_for_backward(output)
        return output

    def _sync_buffers(self):
        """Rank 0's buffers (BatchNorm's running statistics) to every rank, before forward."""
        if self.broadcast_buffers and self.require_forward_param_sync and \
                self.process_group.size() > 1:
            src = self.process_group._ranks[0]
            with grad_mode.no_grad():
                for b in self.module.buffers():
                    dist.broadcast(b, src, group=self.process_group)

    def _prepare_for_backward(self, output):
        for b in self._buckets:
            b.pending, b.work = len(b.params), None
        self._ready = set()         # ids of the parameters whose gradient is in
        self._next_launch = 0       # buckets are reduced in index order, on every rank alike
        self._expected = len(self._params)
        self._reducing = True
        self._unused = set()
        if self._rebuild and self._iterations == (1 if self.static_graph else 0):
            # record this backward's ready order (torch: the first iteration's, or with a
            # static graph the second's)
            self._ready_order = []
        self._iterations += 1
        if self.static_graph and self._static_used is not None:
            # a static graph uses the same parameters every iteration: the first one's answer
            self._unused, self._used = self._static_unused, self._static_used
        elif self.find_unused_parameters or self.static_graph:
            reached = _parameters_reached(output)
            self._unused = {id(p) for p in self._params if id(p) not in reached}
            # which parameters any rank used: a parameter no rank used keeps its .grad
            used = np.array([id(p) not in self._unused for p in self._params], dtype=np.uint8)
            self._used = used
            self._used_work = self.process_group._comm.Iallreduce(
                dist._mpi.MPI.IN_PLACE, used, op=dist._mpi.MPI.MAX)
            if self.static_graph:
                self._static_unused, self._static_used = self._unused, used
        for p in self._params:
            if id(p) in self._unused:
                self._mark_ready(p)

    # ------------------------------------------------------------------ backward
    def _on_grad_ready(self, param):
        if self._reducing and self.require_backward_grad_sync:
            self._mark_ready(param)

    def _mark_ready(self, param):
        if id(param) in self._ready:
            return                  # (a parameter reached twice: counted once)
        self._ready.add(id(param))
        if self._ready_order is not None:
            self._ready_order.append(self._index[id(param)])
        bucket, i = self._bucket_of[id(param)]
        bucket.pending -= 1
        buckets = self._buckets
        while self._next_launch < len(buckets) and buckets[self._next_launch].pending == 0:
            self._launch(buckets[self._next_launch])
            self._next_launch += 1
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
        bucket.work = self._reduce(bucket)

    def _reduce(self, bucket):
        """Start reducing the bucket's flat buffer: the comm hook's Future, or (without one)
        an all-reduce whose sum _finish divides."""
        if self._comm_hook is not None:
            state, hook = self._comm_hook
            return hook(state, GradBucket(bucket.index, bucket.flat, bucket.params,
                                          bucket.offsets, bucket.index == len(self._buckets) - 1))
        return dist.all_reduce(bucket.flat, group=self.process_group, async_op=True)

    def _finish(self):
        """The end of backward: wait for every bucket and write the averaged gradients."""
        self._reducing = False
        if self._ready_order is not None:
            self._order_complete = True         # the next forward rebuilds the buckets
        n = self._divide_by
        if self._used_work is not None:
            dist._mpi.wait(self._used_work, self.process_group._timeout, "DDP unused params")
            self._used_work = None
        used = self._used
        index = self._index
        with grad_mode.no_grad():
            for bucket in self._buckets:
                if self._comm_hook is None:
                    bucket.work.wait()
                    flat = bucket.flat._data
                    np.divide(flat, n, out=flat, casting="unsafe")
                else:               # the hook's Future holds the averaged buffer
                    result = bucket.work.wait()
                    if result is not bucket.flat:
                        bucket.flat.copy_(result.reshape(-1))
                    flat = bucket.flat._data
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

    def _set_static_graph(self):
        self.static_graph = True

    # ------------------------------------------------------------------ comm hooks
    def register_comm_hook(self, state, hook):
        """Reduce each bucket with `hook(state, bucket: GradBucket) -> Future[Tensor]` instead of
        the default all-reduce; the Future's value is the bucket's averaged flat gradient."""
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        _check_comm_hook(hook)
        self._comm_hook = (state, hook)

    def _register_builtin_comm_hook(self, comm_hook_type):
        """torch's C++ hooks by BuiltinCommHookType: here the same default_hooks."""
        hook = {dist.BuiltinCommHookType.ALLREDUCE: default_hooks.allreduce_hook,
                dist.BuiltinCommHookType.FP16_COMPRESS: default_hooks.fp16_compress_hook
                }[comm_hook_type]
        self.register_comm_hook(self.process_group, hook)

    # ------------------------------------------------------------------ uneven inputs
    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        """The Join context for this model: ranks may run different numbers of iterations;
        one that finishes early stands in for the others' all-reduces with zeros."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return next(iter(self._params)).device if self._params else None

    @property
    def join_process_group(self):
        return self.process_group


class _DDPJoinHook(JoinHook):
    """A joined rank's part in one iteration of the others: the same collectives (buffer
    broadcast, used-parameter mask, each bucket's reduction) with zero gradients; at the end
    every rank takes the model of the last rank to join."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        ddp._divide_by = ddp.process_group.size()
        ddp._divide_by_initial = divide_by_initial_world_size

    def main_hook(self):
        ddp = self.ddp
        if ddp._order_complete:     # (the others rebuild in this forward: the same broadcast)
            ddp._rebuild_buckets()
        ddp._sync_buffers()
        if ddp.find_unused_parameters or (ddp.static_graph and ddp._static_used is None):
            # (the others start it non-blocking, and MPI matches non-blocking with non-blocking)
            used = np.zeros(len(ddp._params), dtype=np.uint8)
            dist._mpi.wait(ddp.process_group._comm.Iallreduce(
                dist._mpi.MPI.IN_PLACE, used, op=dist._mpi.MPI.MAX),
                ddp.process_group._timeout, "DDP join: unused parameters")
        for bucket in ddp._buckets:
            if bucket.flat is None:
                bucket.flat = Tensor._make(np.zeros(bucket.offsets[-1], dtype=bucket.dtype.np),
                                           bucket.dtype)
            bucket.flat._data[...] = 0
            work = ddp._reduce(bucket)
            work.wait()

    def post_hook(self, is_last_joiner):
        ddp = self.ddp
        pg = ddp.process_group
        ddp._divide_by, ddp._divide_by_initial = pg.size(), True
        last = Tensor._make(np.array([pg.rank() if is_last_joiner else -1], dtype=np.int64))
        dist.all_reduce(last, op=dist.ReduceOp.MAX, group=pg)
        src = pg._ranks[int(last.item())]
        with grad_mode.no_grad():
            for t in list(ddp.module.parameters()) + list(ddp.module.buffers()):
                dist.broadcast(t, src, group=pg)


def _assign_buckets(params, cap, reverse):
    """Parameters in buckets, as torch assigns them: in the order given, a parameter joins its
    dtype's open bucket, which closes once it holds `cap` bytes or more (None: no limit).
    `reverse` (the first assignment, in registration order): the list of buckets is reversed,
    since backward produces the last parameters' gradients first; inside a bucket the
    parameters keep their order."""
    groups, open_ = [], {}
    for p in params:
        current = open_.setdefault(p.dtype, [[], 0])
        current[0].append(p)
        current[1] += p.numel() * p.element_size()
        if cap is not None and current[1] >= cap:
            groups.append(current[0])
            del open_[p.dtype]
    groups += [current for current, _ in open_.values()]
    return groups[::-1] if reverse else groups


def _check_comm_hook(hook):
    """torch's checks of a hook's signature."""
    if not callable(hook):
        raise TypeError("Communication hook must be callable.")
    if getattr(hook, "__qualname__", None) == default_hooks.bf16_compress_hook.__qualname__:
        raise TypeError("BF16 all reduce communication hook required CUDA 11+ and NCCL 2.10+ "
                        "or XPU and XCCL")
    signature = inspect.signature(hook)
    annotation = signature.parameters["bucket"].annotation
    if annotation is not inspect.Parameter.empty and annotation is not GradBucket:
        raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")


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
