"""Helpers torch.nn.functional exposes for writing functional ops: the __torch_function__
checks (ember.overrides'), boolean_dispatch (pick one of two implementations by a boolean
argument, as F.max_pool2d picks by return_indices), assert_int_or_pair and grid_sample's mode
numbers."""
from ..._torch_function import (handle_torch_function, has_torch_function,  # noqa: F401
                          has_torch_function_unary, has_torch_function_variadic)

__all__ = ["boolean_dispatch", "assert_int_or_pair", "GRID_SAMPLE_INTERPOLATION_MODES",
           "GRID_SAMPLE_PADDING_MODES", "handle_torch_function", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic"]

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function calling if_true or if_false by the truth of its argument `arg_name` (passed
    by keyword, or positionally at arg_index, else `default`). It takes the docstring of the
    one of the two that has one (and gives it to the other)."""
    def fn(*args, **kwargs):
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        else:
            flag = default
        return (if_true if flag else if_false)(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        doc = if_false.__doc__
    elif if_true.__doc__ is not None and if_false.__doc__ is not None:
        raise RuntimeError("only one function can have a docstring")
    else:
        doc = if_true.__doc__
    if doc is not None:
        if_true.__doc__ = if_false.__doc__ = doc     # (as torch: both then carry it)
    fn.__doc__ = doc
    fn.__name__ = func_name
    fn.__module__ = module_name
    return fn


def assert_int_or_pair(arg, arg_name, message):
    assert isinstance(arg, int) or len(arg) == 2, message.format(arg_name)
