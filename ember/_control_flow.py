"""torch's control-flow operators and its async pair in their eager meaning: torch.cond calls
one of two functions, torch.while_loop calls a body while a condition holds (under
torch.compile these become graph operators; ember has no compiler, so they are just calls), and
torch.fork / torch.wait run a call (at once, in this thread) and fetch its result through a
Future (ember.jit's)."""
from ._tensor import Tensor
from .jit import Future

__all__ = ["cond", "while_loop", "fork", "wait", "Future"]


def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands); pred is a bool or a one-element
    tensor."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        pred = bool(pred.item())
    return (true_fn if pred else false_fn)(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """The carried values after body_fn has run while cond_fn(*carried) is true: body_fn takes
    and returns them all (a single value may come back bare)."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError("torch.while_loop: carried_inputs must be a tuple or list of "
                           "values")
    carried = tuple(carried_inputs)
    result = carried
    while _truth(cond_fn(*carried)):
        result = body_fn(*carried)
        carried = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    return result


def _truth(value):
    if isinstance(value, Tensor):
        if value.dim() != 0 or value.dtype.name != "bool":
            raise RuntimeError(f"torch.while_loop: expected cond_fn to return a scalar bool "
                               f"tensor or a bool, but got a tensor of dtype {value.dtype} "
                               f"and shape {tuple(value.shape)}")
        return bool(value.item())
    return bool(value)


def fork(func, *args, **kwargs):
    """func(*args, **kwargs), run now; its Future holds the result."""
    future = Future()
    future.set_result(func(*args, **kwargs))
    return future


def wait(future):
    return future.wait()
