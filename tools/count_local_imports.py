"""Count the imports inside function bodies in ember/ (`python tools/count_local_imports.py`).

An import belongs at the top of its module unless a real import cycle or an optional dependency
needs it inside a function; each such import carries a one-line comment (on its line or the line
above) that says why. `-v` lists them; tests/test_layout_rules.py holds the limit.
"""
import ast
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ember")


def _imports_in_functions(tree):
    """Every Import/ImportFrom node nested (at any depth) inside a function or method."""
    found = []

    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                       ast.Lambda))
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            walk(child, inside)

    walk(tree, False)
    return found


def local_imports(root=ROOT):
    """(path relative to the repository, line number, commented?) for each in-function import."""
    rows = []
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                source = f.read()
            lines = source.splitlines()
            for node in _imports_in_functions(ast.parse(source, path)):
                n = node.lineno
                end = getattr(node, "end_lineno", n) or n
                here = any("#" in lines[i - 1] for i in range(n, end + 1))
                above = n >= 2 and lines[n - 2].strip().startswith("#")
                rows.append((os.path.relpath(path, os.path.dirname(root)), n, here or above))
    return sorted(rows)


if __name__ == "__main__":
    rows = local_imports()
    if "-v" in sys.argv:
        for path, line, commented in rows:
            print(f"{path}:{line}{'' if commented else '  (no comment)'}")
    print(f"{len(rows)} in-function imports, {sum(not c for _, _, c in rows)} without a comment")
