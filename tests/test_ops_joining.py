"""Joining ops (cat, stack and friends) against torch: values, dtypes, errors and the argument forms.
"""
import pytest
from differential import catch, same, warnings_of


def _warned(fn):
    """(result or error, warnings) with PyTorch's '(Triggered internally at ...)' tail cut."""
    result, caught = warnings_of(lambda: catch(fn))
    return result, [w.split(" (Triggered internally at")[0] for w in caught]


def _out_call(T, fn, out):
    """The result of fn(out=out) and out itself afterwards (or the error)."""
    return catch(lambda: (fn(out), out))


# ----------------------------------------------------------------------------- joining
JOINING = {
    "cat_zero_dim_later": lambda T: catch(T.cat, [T.ones(2, 3), T.ones(3), T.tensor(1.)]),
    "cat_zero_dim_after_empty": lambda T: catch(T.cat, [T.tensor([]), T.tensor(1.)]),
    "cat_nothing": lambda T: catch(T.cat, []),
    "cat_out_is_input": lambda T: _warned(lambda: (lambda a: T.cat([a, a], out=a))(T.ones(2))),
    "cat_out_overlaps_input": lambda T: catch(
        lambda: (lambda o: T.cat([o[:2], T.ones(2)], out=o))(T.zeros(4))),
    "cat_out": lambda T: _out_call(T, lambda o: T.cat([T.ones(2), T.zeros(2)], out=o),
                                   T.empty(4)),
    **{f"{f}_empty_list": (lambda T, f=f: catch(getattr(T, f), []))
       for f in ("hstack", "vstack", "dstack", "column_stack")},
    "dstack_0d": lambda T: T.dstack([T.tensor(1.), T.tensor(2.)]),
    "scatter_reduce_max_min": lambda T: [
        T.scatter_reduce(T.tensor([1., 5.]), 0, T.tensor([0, 1]), T.tensor([3., 2.]), r,
                         include_self=s) for r in ("max", "min") for s in (True, False)],
    "scatter_reduce_max_backward": lambda T: catch(lambda: T.scatter_reduce(
        T.tensor([1., 5.], requires_grad=True), 0, T.tensor([0, 1]), T.tensor([3., 2.]),
        "max").sum().backward()),
    "scatter_reduce_bad": lambda T: catch(T.scatter_reduce, T.tensor([1.]), 0, T.tensor([0]),
                                          T.tensor([1.]), "add"),
}


@pytest.mark.parametrize("name", sorted(JOINING))
def test_joining(name):
    same(JOINING[name])


# ----------------------------------------------------------------------------- joining
# the tensors argument must be a list or tuple: no generator, set or other sequence
@pytest.mark.parametrize("op", ["cat", "concat", "concatenate", "stack", "hstack", "vstack",
                                "dstack", "column_stack", "row_stack"])
@pytest.mark.parametrize("kind", ["generator", "set", "range"])
def test_joining_takes_list_or_tuple(op, kind):
    def scenario(T):
        x = T.ones(2)
        given = {"generator": (t for t in [x, x]), "set": {x}, "range": range(2)}[kind]
        return catch(getattr(T, op), given)
    same(scenario)
