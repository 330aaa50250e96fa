"""torch.jit.isinstance: isinstance for typing's container types (List[int], Dict[str,
Tensor], Tuple[int, str], Optional[int], Union[...]), checked element by element in eager
mode."""
import builtins
import typing
import warnings

_EMPTY = ("The inner type of a container is lost when calling torch.jit.isinstance in eager "
          "mode. For example, List[int] would become list and therefore falsely return True "
          "for List[float] or List[str].")


def isinstance(obj, target_type):
    origin = typing.get_origin(target_type)
    args = typing.get_args(target_type)
    if origin is None:
        return builtins.isinstance(obj, target_type)
    if origin is typing.Union or type(target_type).__name__ == "UnionType":
        return any(isinstance(obj, arg) for arg in args)
    if origin is list:
        if not builtins.isinstance(obj, list):
            return False
        if not obj:
            warnings.warn(_EMPTY, stacklevel=2)
        return not args or all(isinstance(x, args[0]) for x in obj)
    if origin is dict:
        if not builtins.isinstance(obj, dict):
            return False
        if not obj:
            warnings.warn(_EMPTY, stacklevel=2)
        return not args or all(isinstance(k, args[0]) and isinstance(v, args[1])
                               for k, v in obj.items())
    if origin is tuple:
        if not builtins.isinstance(obj, tuple):
            return False
        return not args or (len(obj) == len(args) and
                            all(isinstance(x, t) for x, t in zip(obj, args)))
    return builtins.isinstance(obj, origin)
