"""The backward walk.

Iterative, never recursive, and in PyTorch's order: count each node's incoming edges from the
roots; a node is ready once every node that feeds it has run, and the ready node that runs next
is a leaf accumulator if there is one (PyTorch runs those first), else the newest by creation
sequence. A node runs even when all it received is "no gradient" (its hooks see None), as in
PyTorch. Each node's incoming gradients wait in a per-node buffer that is dropped as soon as the
node runs. Derivatives run with grad mode set to `create_graph`, which is all higher-order
gradients need.
"""
import collections
import heapq
import threading

from . import grad_mode
from . import anomaly_mode
from .graph import AccumulateGrad, _sparse


def _sum(a, b):
    """Two gradients of one input added; a sparse one goes second (sparse + dense is refused
    as an op, dense + sparse is dense), as torch's input buffer adds them."""
    if _sparse(a) and not _sparse(b):
        return b + a
    return a + b

_heappush, _heappop = heapq.heappush, heapq.heappop


def run_backward(roots, grads, keep_graph, create_graph, inputs=None, accumulate=True):
    """Propagate `grads` from the (node, output_nr) edges in `roots`.

    accumulate=True (backward): leaves' .grad receive gradients, restricted to `inputs` if given.
    accumulate=False (autograd.grad): gradients for `inputs` are captured and returned instead.
    """
    dependencies = _count_dependencies(roots)

    # where gradients are captured (autograd.grad, or backward(inputs=...)), and the nodes
    # that lead there: only those run
    captures = needed = wanted = None
    captured = []
    if inputs is not None:
        captures = {}
        for i, t in enumerate(inputs):
            edge = t._edge()
            if edge[0] is not None:
                captures.setdefault(edge, []).append(i)
        targets = {node for node, _ in captures}
        needed = _nodes_leading_to(targets, dependencies)
        wanted = needed | targets       # the nodes whose gradient a needed node computes
        captured = [None] * len(inputs)

    buffers = {}            # node -> the gradients received so far for each of its outputs
    heap = []               # (-creation sequence, node) of the ready nodes
    # the ready leaf accumulators, in the order they became ready: they run before any node of
    # the heap (as PyTorch runs them first), so they need no heap of their own
    leaves = collections.deque()

    for (node, nr), g in zip(roots, grads):
        if node is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._n_outputs
        buf[nr] = g if buf[nr] is None else _sum(buf[nr], g)
    for node in buffers:
        if dependencies[node] == 0:     # (a root may also be fed by another root)
            if node.__class__ is AccumulateGrad:
                leaves.append(node)
            else:
                _heappush(heap, (-node._seq, node))

    check_nan = anomaly_mode.state.enabled and anomaly_mode.state.check_nan
    previous_mode = grad_mode.state.enabled
    grad_mode.state.enabled = create_graph
    runs = _runs.stack
    runs.append(Run(dependencies, wanted))
    try:
        while True:
            if leaves:
                node = leaves.popleft()
            elif heap:
                node = _heappop(heap)[1]
            else:
                break
            grads_in = buffers.pop(node)
            children = node._next_nodes
            if wanted is not None and node not in wanted:
                # leads to no input of autograd.grad or backward(inputs=): neither run nor
                # hooked, nor freed; the nodes it feeds just count it as done
                outputs = (None,) * len(children)
            else:
                extras = node._extras
                if extras is not None and (extras.tensor_pre_hooks or extras.pre_hooks):
                    grads_in = _run_pre_hooks(extras, grads_in)
                if captures is not None:
                    for nr, g in enumerate(grads_in):
                        for i in captures.get((node, nr), ()):
                            captured[i] = g if captured[i] is None else _sum(captured[i], g)
                if node.__class__ is AccumulateGrad:
                    if accumulate:              # (autograd.grad only captures)
                        # drop the last node's references to its results: a gradient that
                        # nothing else holds then becomes .grad itself, uncopied (graph._owned)
                        outputs = g = None
                        node.apply(grads_in, ())    # (post-accumulate hooks run even on None)
                        if extras is not None and extras.post_hooks:
                            _run_post_hooks(extras, (), grads_in)
                    continue
                if needed is not None and node not in needed:
                    # an input of autograd.grad with no other below it: captured, not run
                    outputs = (None,) * len(children)
                else:
                    if grads_in[0] is None and not node.runs_without_grad and \
                            all(g is None for g in grads_in):
                        outputs = (None,) * len(children)   # nothing to differentiate
                    else:
                        if extras is not None and extras.retain_grad:
                            _retain_grads(extras.retain_grad, grads_in, node)
                        # which inputs want a gradient: None means all that have a node
                        needs = None if needed is None else [
                            child is not None and child in wanted for child in children]
                        try:
                            outputs = node.apply(grads_in, needs)
                        except Exception:
                            if node._trace is not None:
                                anomaly_mode.report_trace(node)
                            raise
                        if check_nan:
                            anomaly_mode.check_nan(node, outputs)
                    if not keep_graph:
                        node.release()
                    if extras is not None and extras.post_hooks:
                        outputs = _run_post_hooks(extras, outputs, grads_in)
            # hand each gradient to the node it flows into; queue that node once all arrived
            for child, nr, g in zip(children, node._next_nrs, outputs):
                if child is None:
                    continue
                buf = buffers.get(child)
                if buf is None:
                    buf = buffers[child] = [None] * child._n_outputs
                if g is not None:
                    buf[nr] = g if buf[nr] is None else _sum(buf[nr], g)
                remaining = dependencies[child] - 1
                dependencies[child] = remaining
                if remaining == 0:
                    if child.__class__ is AccumulateGrad:
                        leaves.append(child)
                    else:
                        _heappush(heap, (-child._seq, child))
    finally:
        grad_mode.state.enabled = previous_mode
        runs.pop()
    return captured


class Run:
    """A backward in progress, as register_multi_grad_hook's hooks see it."""
    __slots__ = ("dependencies", "wanted", "hook_state")

    def __init__(self, dependencies, wanted):
        self.dependencies = dependencies
        self.wanted = wanted
        self.hook_state = {}        # each multi-grad hook's progress in this backward

    def will_execute(self, node):
        return node in self.dependencies and (self.wanted is None or node in self.wanted)


class _Runs(threading.local):
    # the backward runs in progress in this thread, innermost last (a hook may run a backward);
    # per thread, as torch's: backwards in two threads never see each other's run
    def __init__(self):
        self.stack = []


_runs = _Runs()


def current_run():
    runs = _runs.stack
    if not runs:
        raise AssertionError("expected this hook to be called inside a backward call")
    return runs[-1]


def _count_dependencies(roots):
    """Incoming-edge counts of every node reachable from the roots."""
    dependencies = {}
    stack = []
    for node, _ in roots:
        if node is not None and node not in dependencies:
            dependencies[node] = 0
            stack.append(node)
    while stack:
        node = stack.pop()
        for child in node._next_nodes:
            if child is not None:
                count = dependencies.get(child)
                if count is None:
                    dependencies[child] = 1
                    stack.append(child)
                else:
                    dependencies[child] = count + 1
    return dependencies


def _run_pre_hooks(extras, grads):
    grads = list(grads)
    if extras.tensor_pre_hooks:
        for nr, hooks in extras.tensor_pre_hooks.items():
            for hook in list(hooks.values()):
                new = hook(grads[nr])       # (called with None too, as in PyTorch)
                if new is not None:
                    grads[nr] = new
    if extras.pre_hooks:
        for hook in list(extras.pre_hooks.values()):
            new = hook(tuple(grads))
            if new is not None:
                grads = list(new)
    return grads


def _run_post_hooks(extras, outputs, grads_in):
    for hook in list(extras.post_hooks.values()):
        replaced = hook(outputs, grads_in)
        if replaced is not None:
            outputs = replaced
    return outputs


def _retain_grads(retained, grads, node=None):
    for nr, ref in retained.items():
        t = ref()
        g = grads[nr]
        if t is None or g is None:
            continue
        if node is not None and (t._grad_fn is not node or t._output_nr != nr):
            continue        # the tensor has a new grad_fn since: its entry there counts
        if t._grad is None:
            t._grad = g if grad_mode.state.enabled else g.detach()
        else:
            t._grad = t._grad + g


def _nodes_leading_to(targets, graph_nodes):
    """The nodes of the graph from which some target node is reachable through an edge (a
    target itself only if another target is below it: its own gradient is captured before it
    would run)."""
    parents = {}
    for node in graph_nodes:
        for child in node._next_nodes:
            if child is not None:
                parents.setdefault(child, []).append(node)
    needed = set()
    stack = list(targets)
    while stack:
        n = stack.pop()
        for p in parents.get(n, ()):
            if p not in needed:
                needed.add(p)
                stack.append(p)
    return needed
