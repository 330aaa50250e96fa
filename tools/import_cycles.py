"""Measure the import cycles among ember/'s modules (`python tools/import_cycles.py [-v] [--loading]`).

The graph has an edge A -> B when module A imports module B anywhere in its source: an import
inside a function is a dependency as much as one at the top (putting it there hides the cycle
from Python's loader, not from the design). `--loading` keeps only the imports outside function
bodies, the ones that run when A is first imported. `from pkg import name` points at pkg.name
when that is a module, else at pkg. The parent packages Python runs on the way to a module are
not edges: `ember/__init__.py` runs before any ember module, whatever imports what.

A strongly connected component of this graph is a set of modules that all reach each other by
imports: none of them can be understood, tested or loaded without all the others. The largest
one is the number tests/test_layout_rules.py holds. `-v` lists its modules and the edges inside it.
"""
import ast
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.join(REPO, "ember")


def _module_files(root=ROOT):
    """{module name: file path} for every .py file under root."""
    found = {}
    base = os.path.dirname(root)
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            parts = os.path.relpath(path, base)[:-3].split(os.sep)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imports(tree, loading):
    """The Import/ImportFrom nodes of a module: all of them, or (loading) those outside any
    function or lambda body."""
    if not loading:
        return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    found = []

    def walk(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            walk(child)

    walk(tree)
    return found


def import_graph(root=ROOT, loading=False):
    """{module: set of ember modules it imports}."""
    modules = _module_files(root)
    graph = {}
    for name, path in modules.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        targets = set()
        for node in _imports(tree, loading):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                targets.add(sub if sub in modules else source)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def strongly_connected(graph):
    """The strongly connected components of graph, each sorted (Tarjan's algorithm, without
    recursion)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        work = [(start, iter(sorted(graph[start])))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:                       # every child seen: node's component is complete
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def largest_cycle(root=ROOT, loading=False):
    """The modules of the largest import cycle (strongly connected component), sorted."""
    return max(strongly_connected(import_graph(root, loading)), key=len)


if __name__ == "__main__":
    graph = import_graph(loading="--loading" in sys.argv)
    cycles = sorted((c for c in strongly_connected(graph) if len(c) > 1), key=len, reverse=True)
    print(f"{len(graph)} modules; import cycles of {[len(c) for c in cycles]} modules")
    if "-v" in sys.argv and cycles:
        members = set(cycles[0])
        for name in cycles[0]:
            print(f"{name} -> {', '.join(sorted(graph[name] & members))}")
