"""The backward walk.

Iterative, never recursive: count each node's incoming edges from the roots, then run nodes from a
heap ordered by creation sequence (newest first). Each node's incoming gradients wait in a
per-node buffer that is dropped as soon as the node runs. Derivatives run with grad mode set to
`create_graph`, which is all higher-order gradients need.
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
    dependencies = _count_dependencies(roots)

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
        needed = _nodes_leading_to({node for node, _ in captures}, dependencies, roots)
        captured = [None] * len(inputs)

    buffers = {}
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
            if dependencies.get(node, 0) > 0:
                continue              # more gradient is still on its way; it is pushed again
            grads_in = buffers.pop(node, None)
            if grads_in is None:
                continue              # a root also fed by another root: it already ran
            extras = node._extras
            if extras is not None and (extras.tensor_pre_hooks or extras.pre_hooks):
                grads_in = _run_pre_hooks(extras, grads_in)
            if captures is not None:
                for nr, g in enumerate(grads_in):
                    for i in captures.get((node, nr), ()):
                        captured[i] = g if captured[i] is None else captured[i] + g
            outputs = ()
            if node.__class__ is AccumulateGrad:
                if accumulate and grads_in[0] is not None and \
                        (captures is None or (node, 0) in captures):
                    node.apply(grads_in, ())
            elif needed is None or node in needed:
                if extras is not None and extras.retain_grad:
                    _retain_grads(extras.retain_grad, grads_in)
                next_functions = node.next_functions
                if grads_in[0] is None and all(g is None for g in grads_in):
                    outputs = (None,) * len(next_functions)
                else:
                    # which inputs want a gradient: None means all that have a node
                    needs = None if needed is None else [
                        child is not None and child in needed for child, _ in next_functions]
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
            # hand each gradient to the node it flows into; run that node once all arrived
            for (child, nr), g in zip(node.next_functions, outputs or _nones(node)):
                if child is None:
                    continue
                if g is not None:
                    buf = buffers.get(child)
                    if buf is None:
                        buf = buffers[child] = [None] * child._n_outputs
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
                remaining = dependencies[child] - 1
                dependencies[child] = remaining
                if remaining == 0:
                    if child in buffers:
                        _heappush(heap, (-child._seq, child))
                    else:
                        _release_subgraph(child, dependencies, buffers, heap)
    finally:
        grad_mode.state.enabled = previous_mode
    return captured


def _nones(node):
    return (None,) * len(node.next_functions)


def _count_dependencies(roots):
    """Incoming-edge counts of every node reachable from the roots."""
    dependencies = {}
    seen = set()
    stack = []
    for node, _ in roots:
        if node is not None and node not in seen:
            seen.add(node)
            stack.append(node)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is not None:
                if child in seen:
                    # get(): a root may also be the child of another root
                    dependencies[child] = dependencies.get(child, 0) + 1
                else:
                    dependencies[child] = 1
                    seen.add(child)
                    stack.append(child)
    for node, _ in roots:
        if node is not None:
            dependencies.setdefault(node, 0)
    return dependencies


def _release_subgraph(node, dependencies, buffers, heap):
    """A node that received no gradient at all: release its children's counts (iteratively)."""
    stack = [node]
    while stack:
        n = stack.pop()
        for child, _ in n.next_functions:
            if child is None:
                continue
            dependencies[child] -= 1
            if dependencies[child] == 0:
                if child in buffers:
                    _heappush(heap, (-child._seq, child))
                else:
                    stack.append(child)


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


def _nodes_leading_to(targets, graph_nodes, roots):
    """The nodes of the graph from which some target node is reachable (targets included)."""
    parents = {}
    for node in graph_nodes:
        for child, _ in node.next_functions:
            if child is not None:
                parents.setdefault(child, []).append(node)
    needed = set(targets)
    stack = list(targets)
    while stack:
        n = stack.pop()
        for p in parents.get(n, ()):
            if p not in needed:
                needed.add(p)
                stack.append(p)
    return needed
