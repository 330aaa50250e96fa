"""The backward walk.

Iterative, never recursive: count each node's incoming edges from the roots, then run nodes from a
heap ordered by creation sequence (newest first). Each node's incoming gradients wait in a
per-node buffer that is dropped as soon as the node runs. Derivatives run with grad mode set to
`create_graph`, which is all higher-order gradients need.
"""
import heapq

from . import grad_mode
from .graph import AccumulateGrad


def run_backward(roots, grads, keep_graph, create_graph, inputs=None, accumulate=True,
                 allow_unused=False):
    """Propagate `grads` from the (node, output_nr) edges in `roots`.

    accumulate=True (backward): leaves' .grad receive gradients, restricted to `inputs` if given.
    accumulate=False (autograd.grad): gradients for `inputs` are captured and returned instead.
    """
    # ---- the graph reachable from the roots, with incoming-edge counts
    dependencies = {}
    seen = set()
    stack = [node for node, _ in roots if node is not None]
    for node in stack:
        seen.add(node)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is not None:
                dependencies[child] = dependencies.get(child, 0) + 1
                if child not in seen:
                    seen.add(child)
                    stack.append(child)

    # ---- where gradients are captured (autograd.grad, or backward(inputs=...))
    captures = None
    needed = None
    if inputs is not None:
        captures = {}
        for i, t in enumerate(inputs):
            edge = t._edge()
            if edge[0] is None:
                continue
            captures.setdefault(edge, []).append(i)
        needed = _nodes_leading_to({node for node, _ in captures}, seen)

    captured = [None] * (len(inputs) if inputs is not None else 0)
    buffers = {}
    heap = []
    for (node, nr), g in zip(roots, grads):
        if node is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * _n_outputs(node)
            heapq.heappush(heap, (-node._seq, node))
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    queued = set(buffers)

    previous_mode = grad_mode.state.enabled
    grad_mode.state.enabled = create_graph
    try:
        while heap:
            _, node = heapq.heappop(heap)
            if dependencies.get(node, 0) > 0:
                continue              # more gradient is still on its way; it is pushed again
            grads_in = buffers.pop(node)
            grads_in = _run_pre_hooks(node, grads_in)
            if captures is not None:
                for nr, g in enumerate(grads_in):
                    for i in captures.get((node, nr), ()):
                        captured[i] = g if captured[i] is None else captured[i] + g
            if needed is not None and node not in needed:
                outputs = ()
            elif node.__class__ is AccumulateGrad:
                if accumulate and grads_in[0] is not None and \
                        (captures is None or (node, 0) in captures):
                    node.apply(grads_in, ())
                    _run_post_accumulate_hooks(node.variable)
                outputs = ()
            else:
                if node._retain_grad_hooks:
                    _retain_grads(node, grads_in)
                if all(g is None for g in grads_in):
                    outputs = (None,) * len(node.next_functions)
                else:
                    needs = tuple(child is not None and (needed is None or child in needed)
                                  for child, _ in node.next_functions)
                    outputs = _call_node(node, grads_in, needs)
                if node._post_hooks:
                    for hook in list(node._post_hooks.values()):
                        replaced = hook(outputs, grads_in)
                        if replaced is not None:
                            outputs = replaced
                if not keep_graph:
                    node.release()
            for (child, nr), g in zip(node.next_functions, outputs):
                if child is None:
                    continue
                if g is not None:
                    buf = buffers.get(child)
                    if buf is None:
                        buf = buffers[child] = [None] * _n_outputs(child)
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
                remaining = dependencies[child] - 1
                dependencies[child] = remaining
                if remaining == 0 and child in buffers:
                    heapq.heappush(heap, (-child._seq, child))
                    queued.add(child)
                elif remaining == 0 and child not in buffers:
                    _propagate_nothing(child, dependencies, buffers, heap)
    finally:
        grad_mode.state.enabled = previous_mode
    return captured


def _propagate_nothing(node, dependencies, buffers, heap):
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
                    heapq.heappush(heap, (-child._seq, child))
                else:
                    stack.append(child)


def _n_outputs(node):
    op = getattr(node, "_op", None)
    if op is not None:
        return op.differentiable_outputs if op.n_outputs != 1 else 1
    return getattr(node, "_n_outputs", 1)


def _call_node(node, grads_in, needs):
    try:
        return node.apply(grads_in, needs)
    except Exception as exc:
        trace = node._trace
        if trace is not None:
            from .anomaly_mode import report_trace
            report_trace(node)
        raise exc


def _run_pre_hooks(node, grads):
    if node._tensor_pre_hooks:
        grads = list(grads)
        for nr, hooks in node._tensor_pre_hooks.items():
            for hook in list(hooks.values()):
                if grads[nr] is None:
                    continue
                new = hook(grads[nr])
                if new is not None:
                    grads[nr] = new
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            new = hook(tuple(grads))
            if new is not None:
                grads = list(new)
    from .anomaly_mode import state as anomaly
    if anomaly.enabled and anomaly.check_nan:
        from .anomaly_mode import check_nan
        check_nan(node, grads)
    return grads


def _retain_grads(node, grads):
    for nr, ref in node._retain_grad_hooks.items():
        t = ref()
        g = grads[nr]
        if t is None or g is None:
            continue
        if t._grad is None:
            t._grad = g if grad_mode.state.enabled else g.detach()
        else:
            t._grad = t._grad + g


def _run_post_accumulate_hooks(variable):
    extra = variable._extra
    if extra and extra.get("post_accumulate_hooks"):
        for hook in list(extra["post_accumulate_hooks"].values()):
            hook(variable)


def _nodes_leading_to(targets, graph_nodes):
    """The nodes of the graph from which some target node is reachable (targets included)."""
    # reverse edges once, then walk back from the targets
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
