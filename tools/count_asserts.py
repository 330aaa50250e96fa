"""Count the checks in the test suite: assert statements and calls to the comparison helpers.

Used to show that moving tests between files kept every check: run it before and after a
regrouping and compare the totals. A "helper call" is a call whose name is `same`, `check`,
`same_error`, starts with `assert_` / `check_` / `compare_` (differential.py, opinfo.py,
nn_helpers.py, tensor_compare.py, numpy.testing, ...), or is pytest.raises / pytest.warns.

    python tools/count_asserts.py            # totals over tests/
    python tools/count_asserts.py --files    # one line per file as well
"""
import ast
import pathlib
import sys

HELPER_NAMES = {"same", "check", "same_error", "raises", "warns"}
HELPER_PREFIXES = ("assert_", "check_", "compare_")


def _called_name(call):
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def is_helper_call(node):
    if not isinstance(node, ast.Call):
        return False
    name = _called_name(node)
    return name is not None and (name in HELPER_NAMES or name.startswith(HELPER_PREFIXES))


def count_file(path):
    """(assert statements, helper calls, test functions) in one file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    asserts = helpers = tests = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            asserts += 1
        elif is_helper_call(node):
            helpers += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            tests += 1
    return asserts, helpers, tests


def main(argv):
    root = pathlib.Path(__file__).resolve().parent.parent / "tests"
    totals = [0, 0, 0]
    for path in sorted(root.rglob("*.py")):
        counts = count_file(path)
        totals = [a + b for a, b in zip(totals, counts)]
        if "--files" in argv:
            print(f"{path.relative_to(root)}: asserts={counts[0]} helper_calls={counts[1]} test_defs={counts[2]}")
    print(f"asserts={totals[0]} helper_calls={totals[1]} total_checks={totals[0] + totals[1]} "
          f"test_defs={totals[2]}")


if __name__ == "__main__":
    main(sys.argv[1:])
