"""Where the modules above the op registry plug into it: amp, forward AD, the profiler, and the
few nn functions some ops and Tensor methods are built on.

The registry (and the tensor printer) import none of those modules; each fills in its entry
here when it is imported, and the hot paths test one list each (empty, or a zero count, while
unused). This module imports nothing of ember's, so anything may import it.
"""
import functools
import inspect

# amp: the number of autocast regions open in any thread, and while one is, the names of the
# ops that run in the lower-precision dtype and the function that casts their inputs
autocast_regions = [0]
autocast_ops = frozenset()
autocast_cast = None

# forward AD: its active dual levels (always [] or [0]); while one is active, the registry
# gives every op's outputs tangents through `propagate` / `propagate_inplace`, and the printer
# shows a tensor's tangent (`tangent_of`)
dual_levels = []
forward_propagate = None
forward_propagate_inplace = None
tangent_of = None

# the profiler: its op timer while it records, else empty (the registry swaps in timed op calls
# through `ops.registry.profile_ops`)
profiling = []

# nn.functional's functions that ops below nn use: stft pads with F.pad and istft folds with
# F.fold; x.hardshrink() and x.prelu(w) are F's. nn is built on the ops, so ember.nn.functional
# hands them over here when it is imported (by name: {"pad": F.pad, ...})
nn_functions = {}


def register_autocast(ops, cast):
    """amp's entry: `cast(inputs)` runs for the ops named in `ops` inside an autocast region."""
    global autocast_ops, autocast_cast
    autocast_ops, autocast_cast = frozenset(ops), cast
    return autocast_regions


def autocast_entry(fn):
    """Decorates the public function of a lower-precision op (`mm`, `linear`, `conv2d`, ...):
    inside an autocast region its tensor arguments are cast before the function's own checks,
    as torch's dispatcher casts before the kernel looks at dtypes (a float32 input @ a bfloat16
    weight is no dtype error under autocast).

    The wrapper is written with fn's own parameters (`def linear(input, weight, bias=None)`),
    so that a call outside autocast costs one plain call more (~0.07 us) rather than packing
    *args and **kwargs (~0.3-0.6 us on every product)."""
    try:
        return _exact_entry(fn)
    except (TypeError, ValueError, SyntaxError):      # (no Python signature to copy)
        return _generic_entry(fn)


def _cast_call(fn, args, kwargs):
    args = autocast_cast(args)
    if kwargs:
        kwargs = dict(zip(kwargs, autocast_cast(list(kwargs.values()))))
    return fn(*args, **kwargs)


def _generic_entry(fn):
    @functools.wraps(fn)
    def entry(*args, **kwargs):
        if autocast_regions[0]:
            return _cast_call(fn, args, kwargs)
        return fn(*args, **kwargs)
    return entry


def _exact_entry(fn):
    """The entry as generated source with fn's signature: parameters passed straight on."""
    P = inspect.Parameter
    env = {"_fn": fn, "_regions": autocast_regions, "_cast_call": _cast_call}
    params, positional, keywords, star = [], [], [], None
    slash = False
    for i, (name, p) in enumerate(inspect.signature(fn).parameters.items()):
        if not name.isidentifier() or name.startswith("_fn") or name in env:
            raise ValueError(name)
        text = name
        if p.default is not P.empty:
            env[f"_default{i}"] = p.default
            text += f"=_default{i}"
        if p.kind is P.POSITIONAL_ONLY:
            slash = True
        elif slash:
            params.append("/")
            slash = False
        if p.kind is P.VAR_POSITIONAL:
            params.append("*" + name)
            positional.append("*" + name)
            star = True
            continue
        if p.kind is P.VAR_KEYWORD:
            params.append("**" + name)
            keywords.append("**" + name)
            continue
        if p.kind is P.KEYWORD_ONLY:
            if star is None:
                params.append("*")
                star = True
            keywords.append(f"{name!r}: {name}")
        else:
            positional.append(name)
        params.append(text)
    if slash:
        params.append("/")
    call = ", ".join(positional + [k if k.startswith("**") else
                                   f"{k.split(':')[0][1:-1]}={k.split(': ')[1]}"
                                   for k in keywords])
    source = (f"def {fn.__name__}({', '.join(params)}):\n"
              f"    if _regions[0]:\n"
              f"        return _cast_call(_fn, ({''.join(a + ', ' for a in positional)}), "
              f"{{{', '.join(keywords)}}})\n"
              f"    return _fn({call})\n")
    exec(compile(source, f"<autocast entry of {fn.__qualname__}>", "exec"), env)
    return functools.wraps(fn)(env[fn.__name__])


def register_nn_functions(**functions):
    """nn.functional's entry: the functions named in `nn_functions`."""
    nn_functions.update(functions)


def register_forward_ad(propagate, propagate_inplace, tangent):
    """forward AD's entry: the tangent rules the registry runs while a dual level is active."""
    global forward_propagate, forward_propagate_inplace, tangent_of
    forward_propagate, forward_propagate_inplace, tangent_of = propagate, propagate_inplace, tangent
    return dual_levels
