"""Pictures of the backward graph, as Graphviz DOT text.

    from ember.viz import make_dot
    dot = make_dot(loss, params=dict(model.named_parameters()))
    print(dot.source)              # DOT text, always available
    dot.render("graph.svg")        # needs the Graphviz `dot` program

The graph is read only through the public autograd interface (`grad_fn`, `next_functions`,
`name()`, `AccumulateGrad.variable`, saved tensors), which ember shares with PyTorch, so the
same function also draws a torch tensor's graph.

Nodes: the output in green, each backward function as a grey box named as PyTorch names it,
each leaf (AccumulateGrad) in blue with its parameter name and shape, and, with
`show_saved=True`, each saved tensor in orange with its name and shape (other saved values are
listed inside their function's box). Edges follow the forward data flow.
"""
import os
import shutil
import subprocess

__all__ = ["make_dot", "Digraph", "GraphvizNotFoundError"]


class GraphvizNotFoundError(RuntimeError):
    """Rendering needs the Graphviz `dot` program."""


class Digraph:
    """DOT source with a `render` method (a small stand-in for graphviz.Digraph)."""

    def __init__(self, source):
        self.source = source

    def __str__(self):
        return self.source

    def __repr__(self):
        return f"<ember.viz.Digraph: {self.source.count(chr(10))} lines of DOT>"

    def save(self, path):
        """Write the DOT source to `path`; return the path."""
        with open(path, "w") as f:
            f.write(self.source)
        return path

    def pipe(self, format="svg"):
        """The picture as bytes in `format` ('svg', 'png', 'pdf', ...), drawn by `dot`."""
        program = shutil.which("dot")
        if program is None:
            raise GraphvizNotFoundError(
                "drawing the graph needs the Graphviz 'dot' program, which is not on PATH. "
                "Install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew "
                "install graphviz; conda: conda install graphviz), or save the DOT text with "
                ".save('graph.dot') and draw it elsewhere.")
        done = subprocess.run([program, f"-T{format}"], input=self.source.encode("utf-8"),
                              capture_output=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"dot failed: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout

    def render(self, path, format=None):
        """Draw the graph into `path`; the format is `format` or else the path's extension."""
        if format is None:
            format = os.path.splitext(os.fspath(path))[1].lstrip(".") or "svg"
        data = self.pipe(format)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def _repr_svg_(self):           # drawn inline in Jupyter when dot is installed
        try:
            return self.pipe("svg").decode("utf-8")
        except GraphvizNotFoundError:
            return None


def _shape(t):
    return "(" + ", ".join(str(n) for n in t.shape) + ")"


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _is_tensor(x):
    return hasattr(x, "grad_fn") and hasattr(x, "shape") and hasattr(x, "requires_grad")


def _saved_values(fn):
    """(name, value) for what a backward node saved; empty once it has been freed."""
    try:
        saved = getattr(fn, "_saved", None)
    except RuntimeError:                    # an ember node whose saved values were freed
        return []
    if saved is None and hasattr(type(fn), "_op"):
        return []
    op = getattr(fn, "_op", None)
    if op is not None:                      # an ember op node
        names = list(op.save)
    else:                                   # torch exposes saved values as _saved_<name>
        names = [a[len("_saved_"):] for a in dir(fn) if a.startswith("_saved_")]
    out = []
    for name in names:
        try:
            value = getattr(fn, "_saved_" + name)
        except Exception:                   # freed by a backward without retain_graph
            continue
        out.append((name, value))
    return out


def make_dot(output, params=None, show_saved=False):
    """The backward graph of `output` (a tensor or a sequence of tensors) as a Digraph.

    `params` maps names to tensors (e.g. dict(model.named_parameters())) to label the leaves.
    """
    outputs = tuple(output) if isinstance(output, (tuple, list)) else (output,)
    names = {id(t): name for name, t in (params or {}).items()}
    lines = ["digraph {",
             '\tgraph [size="12,12"]',
             '\tnode [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 '
             'shape=box style=filled]']
    ids = {}                # id(node) -> DOT id, in the order nodes are first reached
    keep = []               # the nodes themselves, so their ids stay unique during the walk

    def node_id(fn):
        key = id(fn)
        if key not in ids:
            ids[key] = f"n{len(ids)}"
            keep.append(fn)
        return ids[key]

    def add_node(fn):
        fid = node_id(fn)
        if fn.name().endswith("AccumulateGrad"):                 # a leaf
            variable = fn.variable
            label = f"{names.get(id(variable), '')}\n{_shape(variable)}".lstrip("\n")
            lines.append(f"\t{fid} [label={_quote(label)} fillcolor=lightblue "
                         f"tooltip={_quote(fn.name())}]")
            return
        label = fn.name()
        if show_saved:
            for name, value in _saved_values(fn):
                if _is_tensor(value):
                    sid = f"{fid}_{name}"
                    lines.append(f"\t{sid} [label={_quote(name + chr(10) + _shape(value))} "
                                 f"fillcolor=orange]")
                    lines.append(f"\t{sid} -> {fid} [dir=none style=dotted]")
                elif isinstance(value, (list, tuple)) and value and all(
                        _is_tensor(v) for v in value):
                    shapes = ", ".join(_shape(v) for v in value)
                    label += f"\n{name}: [{shapes}]"
                else:
                    label += f"\n{name}: {value}"
        lines.append(f"\t{fid} [label={_quote(label)} fillcolor=lightgrey]")

    # walk from the outputs' functions, breadth first, each node once
    pending = []
    for i, t in enumerate(outputs):
        oid = f"out{i}"
        lines.append(f"\t{oid} [label={_quote('output' + chr(10) + _shape(t))} "
                     f"fillcolor=darkolivegreen1]")
        fn = t.grad_fn
        if fn is not None:
            known = id(fn) in ids
            lines.append(f"\t{node_id(fn)} -> {oid}")
            if not known:
                pending.append(fn)
    seen = set()
    while pending:
        fn = pending.pop(0)
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        add_node(fn)
        for child, _ in fn.next_functions:
            if child is None:
                continue
            lines.append(f"\t{node_id(child)} -> {node_id(fn)}")
            if id(child) not in seen:
                pending.append(child)
    lines.append("}")
    return Digraph("\n".join(lines) + "\n")


def graph_structure(output):
    """The backward graph as (node names in the order reached, edges as index pairs).

    A plain-data view of what make_dot draws, used to compare ember's graphs with torch's.
    """
    outputs = tuple(output) if isinstance(output, (tuple, list)) else (output,)
    order, index, edges = [], {}, []
    pending = [t.grad_fn for t in outputs if t.grad_fn is not None]
    keep = []
    while pending:
        fn = pending.pop(0)
        if id(fn) in index:
            continue
        index[id(fn)] = len(order)
        order.append(fn.name())
        keep.append(fn)
        pending.extend(c for c, _ in fn.next_functions if c is not None)
    for fn in keep:
        for child, nr in fn.next_functions:
            if child is not None:
                edges.append((index[id(child)], index[id(fn)], nr))
    return order, edges
