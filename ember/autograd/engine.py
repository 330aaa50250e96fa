"""The backward walk.

Iterative, never recursive. Nodes run from a heap ordered by creation sequence, newest first.
Every edge points from a node to one made before it (an op's inputs exist before the op's node
is recorded), so by the time a node is the newest one holding gradient, every node that could
still send it gradient has run: no per-node dependency counts are needed. Each node's incoming
gradients wait in a per-node buffer that is dropped as soon as the node runs. Derivatives run
with grad mode set to `create_graph`, which is all higher-order gradients need.
"""
import heapq

from . import grad_mode
from . import anomaly_mode
from .graph import AccumulateGrad

_heappush, _heappop = heapq.heappush, heapq.heappop


def run_backward(roots, grads, keep_graph, create_graph, inputs=None, accumulate=True):
    """Propagate `grads` from the (node, output_nr) edges in `roots`.

    accumulate=True (backward): leaves' .grad receive gradients, restricted to `inputs` if given.
    accumulate=False (autograd.grad): gradients for `inputs` are captured and returned instead.
    """
    # where gradients are captured (autograd.grad, or backward(inputs=...)), and the nodes
    # that lead there: only those run
    captures = needed = None
    captured = []
    if inputs is not None:
        captures = {}
        for i, t in enumerate(inputs):
            edge = t._edge()
            if edge[0] is not None:
                captures.setdefault(edge, []).append(i)
        needed = _nodes_leading_to({node for node, _ in captures}, roots)
        captured = [None] * len(inputs)

    buffers = {}            # node -> the gradients received so far for each of its outputs
    heap = []
    for (node, nr), g in zip(roots, grads):
        if node is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._n_outputs
            _heappush(heap, (-node._seq, node))
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    check_nan = anomaly_mode.state.enabled and anomaly_mode.state.check_nan
    previous_mode = grad_mode.state.enabled
    grad_mode.state.enabled = create_graph
    try:
        while heap:
            node = _heappop(heap)[1]
            grads_in = buffers.pop(node)
            extras = node._extras
            if extras is not None and (extras.tensor_pre_hooks or extras.pre_hooks):
                grads_in = _run_pre_hooks(extras, grads_in)
            if captures is not None:
                for nr, g in enumerate(grads_in):
                    for i in captures.get((node, nr), ()):
                        captured[i] = g if captured[i] is None else captured[i] + g
            if node.__class__ is AccumulateGrad:
                if accumulate and grads_in[0] is not None and \
                        (captures is None or (node, 0) in captures):
                    node.apply(grads_in, ())
                continue
            if needed is not None and node not in needed:
                continue
            if extras is not None and extras.retain_grad:
                _retain_grads(extras.retain_grad, grads_in)
            children = node._next_nodes
            # which inputs want a gradient: None means all that have a node
            needs = None if needed is None else [
                child is not None and child in needed for child in children]
            try:
                outputs = node.apply(grads_in, needs)
            except Exception:
                if node._trace is not None:
                    anomaly_mode.report_trace(node)
                raise
            if check_nan:
                anomaly_mode.check_nan(node, outputs)
            if extras is not None and extras.post_hooks:
                for hook in list(extras.post_hooks.values()):
                    replaced = hook(outputs, grads_in)
                    if replaced is not None:
                        outputs = replaced
            if not keep_graph:
                node.release()
            # hand each gradient to the node it flows into
            for child, nr, g in zip(children, node._next_nrs, outputs):
                if child is None or g is None:
                    continue
                buf = buffers.get(child)
                if buf is None:
                    buf = buffers[child] = [None] * child._n_outputs
                    _heappush(heap, (-child._seq, child))
                buf[nr] = g if buf[nr] is None else buf[nr] + g
    finally:
        grad_mode.state.enabled = previous_mode
    return captured


def _run_pre_hooks(extras, grads):
    grads = list(grads)
    if extras.tensor_pre_hooks:
        for nr, hooks in extras.tensor_pre_hooks.items():
            for hook in list(hooks.values()):
                if grads[nr] is None:
                    continue
                new = hook(grads[nr])
                if new is not None:
                    grads[nr] = new
    if extras.pre_hooks:
        for hook in list(extras.pre_hooks.values()):
            new = hook(tuple(grads))
            if new is not None:
                grads = list(new)
    return grads


def _retain_grads(retained, grads):
    for nr, ref in retained.items():
        t = ref()
        g = grads[nr]
        if t is None or g is None:
            continue
        if t._grad is None:
            t._grad = g if grad_mode.state.enabled else g.detach()
        else:
            t._grad = t._grad + g


def _nodes_leading_to(targets, roots):
    """The nodes reachable from the roots from which some target node is reachable (targets
    included)."""
    parents = {}
    seen = set()
    stack = [node for node, _ in roots if node is not None]
    seen.update(stack)
    while stack:
        node = stack.pop()
        for child in node._next_nodes:
            if child is not None:
                parents.setdefault(child, []).append(node)
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
    needed = set(targets)
    stack = list(targets)
    while stack:
        n = stack.pop()
        for p in parents.get(n, ()):
            if p not in needed:
                needed.add(p)
                stack.append(p)
    return needed
