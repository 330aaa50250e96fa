"""ember.func: torch.func's function transforms (grad, vjp, jvp, jacrev, jacfwd, hessian,
linearize, vmap, functional_call), built on ember's one autograd engine.

How the transforms relate to PyTorch's:

* Every derivative is taken by `autograd.grad` on fresh inputs: an input that the caller is
  differentiating (it requires grad and grad mode is on) enters as a view of itself, so the
  result stays linked to it (`grad(grad(f))`, or a plain `.backward()` through `grad(f)(x)`);
  any other input enters as a detached leaf. The caller's tensors never get a `.grad`, nor a
  changed `requires_grad`.
* A result keeps its graph only where that graph reaches a tensor from outside the transform
  (an input being differentiated further out, a closed-over parameter); everything else is
  detached, which is what PyTorch's levels give. Under `no_grad` every result is detached.
* Forward mode (jvp, jacfwd, linearize) is the double-backward trick: u -> J^T u is linear in
  u, so its vjp with the tangent is J t. jacfwd is therefore jacrev with jacfwd's messages:
  the same numbers, shapes and dtypes.
* vmap is a loop: it calls the function once per index of the mapped dimension and stacks the
  results. That gives batched semantics for everything a function may do per sample (and makes
  `vmap(grad(f))`, per-sample gradients, simply work) at the cost of speed, which matters
  little on a NumPy CPU backend. Where the loop cannot see what a batching transform sees,
  it approximates: an `out_dims=None` output must be the same in every slice (PyTorch asks
  that it not depend on the mapped inputs), `randomness='error'` is detected by the random
  generator's state changing, `.item()` is not refused, and a batch of size 0 runs the
  function once on zeros to learn its outputs' shapes.
"""
import functools

from . import autograd
from .autograd.grad_mode import enable_grad, is_grad_enabled
from .autograd.graph import AccumulateGrad
from ._tensor import Tensor
from .autograd.functional import jacobian
from .ops.creation import zeros_like, zeros
from .ops.joining import stack
from .ops.random import get_rng_state, set_rng_state

__all__ = ["functional_call", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd",
           "hessian", "linearize", "vmap", "stack_module_state", "replace_all_batch_norm_modules_",
           "functionalize", "debug_unwrap", "rearrange"]


# ---------------------------------------------------------------------------------------------
# pytrees: tuples, lists and dicts of leaves (a namedtuple is a tuple)

class _Spec:
    """The shape of a pytree: a container kind (None for a leaf), its keys and children."""
    __slots__ = ("kind", "keys", "children")

    def __init__(self, kind, keys, children):
        self.kind, self.keys, self.children = kind, keys, children

    def __eq__(self, other):
        return isinstance(other, _Spec) and (self.kind, self.keys, self.children) == \
            (other.kind, other.keys, other.children)

    def __repr__(self):         # PyTorch's TreeSpec repr, which its messages show
        return _spec_repr(self, 1)

    def __str__(self):          # the compact form vjp's message shows: (*, [*], {'a': *})
        return _spec_str(self)


_LEAF = _Spec(None, None, ())


def _spec_repr(spec, depth):
    if spec.kind is None:
        return "*"
    keys = None if spec.kind is not dict else list(spec.keys)
    children = (",\n" + "  " * depth).join(_spec_repr(c, depth + 1) for c in spec.children)
    return f"TreeSpec({spec.kind.__name__}, {keys}, [{children}])"


def _spec_str(spec):
    if spec.kind is None:
        return "*"
    parts = [_spec_str(c) for c in spec.children]
    if spec.kind is dict:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(spec.keys, parts)) + "}"
    if spec.kind is list:
        return "[" + ", ".join(parts) + "]"
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _node(tree):
    """(kind, keys, children) of a container, or None for a leaf."""
    if isinstance(tree, tuple):
        return tuple, type(tree), list(tree)
    if isinstance(tree, list):
        return list, None, list(tree)
    if isinstance(tree, dict):
        return dict, tuple(tree), list(tree.values())
    return None


def _flatten(tree):
    """(leaves, spec) of a pytree."""
    leaves = []

    def walk(t):
        node = _node(t)
        if node is None:
            leaves.append(t)
            return _LEAF
        kind, keys, children = node
        return _Spec(kind, keys if kind is dict else None, tuple(walk(c) for c in children))

    spec = walk(tree)
    return leaves, spec


def _unflatten(leaves, spec):
    it = iter(leaves)

    def build(s):
        if s.kind is None:
            return next(it)
        children = [build(c) for c in s.children]
        if s.kind is dict:
            return dict(zip(s.keys, children))
        return children if s.kind is list else tuple(children)

    return build(spec)


def _map(fn, tree):
    leaves, spec = _flatten(tree)
    return _unflatten([fn(x) for x in leaves], spec)


def _broadcast_prefix(prefix, tree):
    """One entry of `prefix` per leaf of `tree`, where `prefix` matches `tree` down to some
    depth and each of its leaves covers the subtree below; None if the structures differ."""
    out = []

    def walk(p, t):
        node_p, node_t = _node(p), _node(t)
        if node_p is None:
            out.extend([p] * len(_flatten(t)[0]))
            return True
        if node_t is None or node_p[0] is not node_t[0] or len(node_p[2]) != len(node_t[2]) \
                or (node_p[0] is dict and set(node_p[1]) != set(node_t[1])):
            return False
        pairs = zip([p[k] for k in t] if node_p[0] is dict else node_p[2], node_t[2])
        return all(walk(a, b) for a, b in pairs)

    return out if walk(prefix, tree) else None


# ---------------------------------------------------------------------------------------------
# the derivative transforms' common steps

def _check_argnums(argnums, n_args):
    """argnums as a tuple of non-negative ints, with PyTorch's errors."""
    if isinstance(argnums, int):
        items = (argnums,)
    elif isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        items = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for a in items:
        if not isinstance(a, int):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnum={a}, but only {n_args} positional inputs")
    normalised = tuple(a % n_args for a in items)
    if len(set(normalised)) != len(normalised):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return normalised


def _check_tensors(leaves):
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")


def _enter(leaves, outer):
    """The inputs a transform differentiates with respect to: linked to the caller's graph
    where the caller differentiates them (`outer`: grad mode was on), otherwise fresh leaves."""
    _check_tensors(leaves)
    with enable_grad():
        return [x.view_as(x) if x._requires_grad and outer
                else x.detach().requires_grad_() for x in leaves]


_RETIRED = "func_retired"      # (the mark, in a tensor's extras, of a finished call's leaf)


def _outside(t, own):
    """Whether a leaf is from outside a transform: neither its own (ids in `own`) nor one of
    a finished transform (nothing can differentiate with respect to those any more)."""
    return id(t) not in own and not (t._extra and t._extra.get(_RETIRED))


def _escapes(t, own):
    """Whether the graph of `t` reaches a leaf from outside the transform."""
    if not t._requires_grad:
        return False
    fn = t.grad_fn
    if fn is None:
        return _outside(t, own)
    seen, stack = {fn}, [fn]
    while stack:
        node = stack.pop()
        if node.__class__ is AccumulateGrad:
            if _outside(node.variable, own):
                return True
            continue
        for child in node._next_nodes:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return False


def _leave(tree, own, outer):
    """A transform's results as its caller sees them: detached unless linked to the outside."""
    def one(x):
        if isinstance(x, Tensor) and not (outer and _escapes(x, own)):
            return x.detach()
        return x
    return _map(one, tree)


def _grads(outputs, inputs, cotangents, create_graph):
    """autograd.grad of the outputs that require grad, zeros for the inputs none reaches."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o._requires_grad]
    found = autograd.grad([o for o, _ in pairs], inputs, [c for _, c in pairs],
                          retain_graph=True, create_graph=create_graph,
                          allow_unused=True) if pairs else [None] * len(inputs)
    return [zeros_like(x) if g is None else g for g, x in zip(found, inputs)]


def _split_aux(out, has_aux, where):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True")
    return out


def _check_aux(aux):
    for x in _flatten(aux)[0]:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")


def _output_leaves(out, where):
    leaves, spec = _flatten(out)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{where}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(x)}")
    return leaves, spec


class _Call:
    """One call of a function on differentiable copies of some of its arguments."""

    def __init__(self, args, argnums):
        self.outer = is_grad_enabled()
        self.argnums = argnums
        chosen = tuple(args[i] for i in argnums)
        leaves, self.spec = _flatten(chosen)
        self.inputs = _enter(leaves, self.outer)
        self.originals = {id(e): x for e, x in zip(self.inputs, leaves)}
        self.leaves = list(self.inputs)         # the leaves this call made (and its views)
        self.own = {id(x) for x in self.leaves}
        rebuilt = list(args)
        for i, value in zip(argnums, _unflatten(self.inputs, self.spec)):
            rebuilt[i] = value
        self.args = tuple(rebuilt)

    def run(self, func, kwargs=None):
        with enable_grad():
            return func(*self.args, **(kwargs or {}))

    def per_input(self, flat, single):
        """Values for the inputs, shaped like the differentiated arguments."""
        values = _unflatten(flat, self.spec)
        return values[0] if single else values

    def add_leaves(self, tensors):
        self.leaves += tensors
        self.own.update(id(x) for x in tensors)

    def leave(self, tree):
        """The results as the caller sees them; this call's leaves are done with."""
        for x in self.leaves:
            if x.grad_fn is None:
                x._get_extra()[_RETIRED] = True
        # an input returned as it came in is the caller's own tensor again, as in PyTorch
        tree = _map(lambda x: self.originals.get(id(x), x), tree)
        return _leave(tree, self.own, self.outer)


# ---------------------------------------------------------------------------------------------
# grad, grad_and_value

def grad_and_value(func, argnums=0, has_aux=False):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        where = "grad_and_value(f)(*args)"
        call = _Call(args, _check_argnums(argnums, len(args)))
        out, aux = _split_aux(call.run(func, kwargs), has_aux, where)
        if has_aux:
            _check_aux(aux)
        if not isinstance(out, Tensor):
            raise RuntimeError(f"{where}: Expected f(*args) to return a Tensor, got {type(out)}")
        if out.dim() != 0:
            raise RuntimeError(f"{where}: Expected f(*args) to return a scalar Tensor, got "
                               f"tensor with {out.dim()} dims. Maybe you wanted to use the vjp "
                               f"or jacrev APIs instead?")
        with enable_grad():
            grads = _grads([out], call.inputs, [None], create_graph=call.outer)
        grads = call.per_input(grads, isinstance(argnums, int))
        value = (out, aux) if has_aux else out
        return call.leave(grads), call.leave(value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    value_and_grad = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = value_and_grad(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


# ---------------------------------------------------------------------------------------------
# vjp, jvp, linearize

def vjp(func, *primals, has_aux=False):
    where = "vjp(f, *primals)"
    call = _Call(primals, tuple(range(len(primals))))
    out, aux = _split_aux(call.run(func), has_aux, where)
    outputs, out_spec = _output_leaves(out, where)
    if has_aux:
        _check_aux(aux)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        leaves, spec = _flatten(cotangents)
        if spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{spec}, primal output: {out_spec}")
        outer = call.outer or is_grad_enabled()
        with enable_grad():
            grads = _grads(outputs, call.inputs, leaves, create_graph=outer)
        return _leave(call.per_input(grads, False), call.own, outer)

    result = (call.leave(out), vjp_fn)
    return result + (call.leave(aux),) if has_aux else result


def _jvp_call(func, primals, tangents, has_aux, where):
    """(call, outputs, output spec, jvp outputs, aux) of jvp."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{where}: Expected primals to be a tuple. E.g. it should be valid "
                           f"to call f(*primals).")
    p_leaves, p_spec = _flatten(primals)
    t_leaves, t_spec = _flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{where}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure {p_spec!r} and "
                           f"tangents with structure {t_spec!r}")
    if not p_leaves:
        raise RuntimeError(f"{where}: Expected primals to contain at least one Tensor.")
    for x in p_leaves + t_leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{where}: Expected primals to only contain Tensors, got "
                               f"{type(x)}")
    _refuse_nested_forward()
    for p, t in zip(p_leaves, t_leaves):
        if p.shape != t.shape:
            raise RuntimeError(f"Trying to set a forward gradient that has a different size "
                               f"than that of the original Tensor, this is not supported. "
                               f"Tensor is of size {list(p.shape)} while the given forward "
                               f"gradient is of size {list(t.shape)}.")
    call = _Call(primals, tuple(range(len(primals))))
    out, aux = _split_aux(call.run(func), has_aux, where)
    outputs, out_spec = _output_leaves(out, where)
    if has_aux:
        _check_aux(aux)
    with enable_grad():
        # the double-backward trick: the gradient of u -> (J^T u) . t is J t
        us = [zeros_like(o).requires_grad_() for o in outputs]
        back = _grads(outputs, call.inputs, us, create_graph=True)
        tangent_outs = _grads(back, us, t_leaves, create_graph=call.outer)
    call.add_leaves(us)
    return call, out, out_spec, tangent_outs, aux


def _refuse_nested_forward():
    """PyTorch's forward-mode transforms (jvp, jacfwd) enter a dual level of their own."""
    if autograd.forward_ad._levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    call, out, out_spec, tangent_outs, aux = _jvp_call(func, primals, tangents, has_aux,
                                                       "jvp(f, primals, tangents)")
    result = (call.leave(out), call.leave(_unflatten(tangent_outs, out_spec)))
    return result + (call.leave(aux),) if has_aux else result


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the jvp at the primals (recomputed)."""
    out = jvp(func, primals, primals)[0]        # (checks the primals as jvp does)
    p_leaves = _flatten(primals)[0]

    def jvp_fn(*tangents):
        for i, (p, t) in enumerate(zip(p_leaves, _flatten(tangents)[0])):
            if p.shape != t.shape:
                raise RuntimeError(f"tangent:{i} with shape {t.shape} in flattened pytree "
                                   f"doesn't match the shape {p.shape} of the corresponding "
                                   f"primal.".replace("ember.Size", "torch.Size"))
        return jvp(func, primals, tangents)[1]

    return out, jvp_fn


# ---------------------------------------------------------------------------------------------
# jacrev, jacfwd, hessian

def _jacobian(func, argnums, has_aux, where, forward):
    def wrapper(*args):
        argnums_ = _check_argnums(argnums, len(args))
        chosen = _flatten(tuple(args[i] for i in argnums_))[0]
        if forward:
            for x in chosen:
                x.numel()   # (PyTorch sizes its basis first: a non-tensor fails right there)
            _refuse_nested_forward()
            for x in chosen:
                if not (x.dtype.is_floating_point or x.dtype.is_complex):
                    raise ValueError(f"Expected primal to be floating point or complex, but "
                                     f"got: {x.dtype}")
        call = _Call(args, argnums_)
        found = {}

        def flat_func(*inputs):
            # (autograd.functional.jacobian hands over views of call.inputs)
            rebuilt = list(args)
            for i, value in zip(argnums_, call.per_input(list(inputs), False)):
                rebuilt[i] = value
            out, found["aux"] = _split_aux(func(*rebuilt), has_aux, where)
            found["outputs"], found["spec"] = _output_leaves(out, where)
            if has_aux:
                _check_aux(found["aux"])
            # (jacobian cannot stack no rows: an empty output's blocks are filled in below)
            return tuple(o for o in found["outputs"] if o.numel())

        with enable_grad():
            rows = iter(jacobian(flat_func, tuple(call.inputs), create_graph=True))
        # a row: an output leaf's derivatives with respect to each input leaf
        rows = [next(rows) if o.numel() else
                [o.new_zeros(o.shape + x.shape, dtype=x.dtype) for x in call.inputs]
                for o in found["outputs"]]
        if forward:         # (forward mode's tangents take the output's dtype)
            rows = [[block.to(o.dtype) for block in row]
                    for o, row in zip(found["outputs"], rows)]
        jac = _unflatten([call.per_input(list(row), isinstance(argnums, int)) for row in rows],
                         found["spec"])
        jac = call.leave(jac)
        return (jac, call.leave(found["aux"])) if has_aux else jac
    return functools.wraps(func)(wrapper)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian(func, argnums, has_aux, "vjp(f, *primals)", forward=False)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    return _jacobian(func, argnums, has_aux, "jvp(f, primals, tangents)", forward=True)


def hessian(func, argnums=0):
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------------------------------------
# vmap

_RANDOMNESS = ("error", "different", "same")


def _name(func):
    return getattr(func, "__name__", repr(func))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        leaves, args_spec, dims, size = _mapped_inputs(func, in_dims, args)
        run = functools.partial(_call_slice, func, leaves, dims, args_spec, kwargs)
        if size == 0:
            return _empty_outputs(func, out_dims, run(None))
        results = _run_slices(run, size, randomness)
        return _stack_outputs(func, out_dims, results)
    return wrapper


def _mapped_inputs(func, in_dims, args):
    """The flat arguments, their spec, each one's mapped dimension (or None) and the size."""
    name = _name(func)
    where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         f"inputs, or you are trying to vmap over a function with no inputs. "
                         f"The latter is unsupported.")
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) "
                         f"tuple matching the structure of inputs, got: {type(in_dims)}.")
    leaves, spec = _flatten(args)
    dims = _broadcast_prefix(in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args),
                             args)
    if dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {_flatten(in_dims)[1]!r} but inputs has "
                         f"structure {spec!r}.")
    sizes = []
    for i, (x, d) in enumerate(zip(leaves, dims)):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either "
                             f"an integer dimension or None.")
        if not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please use "
                             f"None as the respective in_dim")
        n = x.dim()
        if not -n <= d < n:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a "
                             f"Tensor of dimensionality {n} so expected in_dim to satisfy "
                             f"-{n} <= in_dim < {n}.")
        dims[i] = d % n
        sizes.append(x.shape[dims[i]])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return leaves, spec, dims, sizes[0]


def _call_slice(func, leaves, dims, spec, kwargs, index):
    """func on slice `index` of the mapped inputs (index None: zeros of a slice's shape)."""

    def take(x, d):
        if d is None:
            return x
        if index is None:
            shape = x.shape[:d] + x.shape[d + 1:]
            return zeros(shape, dtype=x.dtype, device=x.device)
        return x.select(d, index)
    return func(*_unflatten([take(x, d) for x, d in zip(leaves, dims)], spec), **kwargs)


def _run_slices(run, size, randomness):
    """The function's results for each index; random draws checked or repeated as asked."""
    state = get_rng_state()
    results = []
    for i in range(size):
        if randomness == "same" and i:
            set_rng_state(state)        # every slice draws what the first one drew
        results.append(run(i))
        if randomness == "error" and i == 0 and \
                get_rng_state()._data.tobytes() != state._data.tobytes():
            raise RuntimeError("vmap: called random operation while in randomness error mode. "
                               "Please either use the 'same' or 'different' randomness flags "
                               "on vmap or perform the randomness operation out of vmap")
    return results


def _output_dims(func, out_dims, example):
    """Each output leaf's out_dim, checked against the structure of the outputs."""
    name = _name(func)
    where = f"vmap({name}, ..., out_dims={out_dims})(<inputs>)"
    dim_leaves = _flatten(out_dims)[0]
    if not all(d is None or isinstance(d, int) for d in dim_leaves):
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, "
                         f"None or a python collection of ints representing where in the "
                         f"outputs the vmapped dimension should appear.")
    leaves, spec = _flatten(example)
    if isinstance(out_dims, tuple) and len(out_dims) == 1 and spec.kind is None:
        out_dims = out_dims[0]          # (a one-element tuple for a single output is allowed)
    dims = _broadcast_prefix(out_dims, example)
    if dims is None:
        raise ValueError(f"{where}: out_dims is not compatible with the structure of `outputs`. "
                         f"out_dims has structure {_flatten(out_dims)[1]!r} but outputs has "
                         f"structure {spec!r}.")
    for x, d in zip(leaves, dims):
        if d is not None and not isinstance(x, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(x)}. Did you mean to set out_dims= to None for output?")
    return leaves, spec, dims


def _stack_outputs(func, out_dims, results):
    leaves, spec, dims = _output_dims(func, out_dims, results[0])
    per_slice = [_flatten(r)[0] for r in results]
    out = []
    for k, d in enumerate(dims):
        column = [leaves_k[k] for leaves_k in per_slice]
        if d is not None:
            out.append(stack(column, dim=d))
            continue
        first = column[0]
        if isinstance(first, Tensor) and not all(
                c is first or (c.shape == first.shape and bool((c == first).all()))
                for c in column[1:]):
            name = _name(func)
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when "
                             f"out_dim is None")
        out.append(first)
    return _unflatten(out, spec)


def _empty_outputs(func, out_dims, example):
    """The outputs of a vmap over a batch of size 0, shaped after one example slice."""
    leaves, spec, dims = _output_dims(func, out_dims, example)
    return _unflatten([x if d is None else x.unsqueeze(0)[:0].movedim(0, d)
                       for x, d in zip(leaves, dims)], spec)


# ---------------------------------------------------------------------------------------------
# functional_call

def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    tensors = _merge_dicts(parameter_and_buffer_dicts)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _Reparametrized(module, tensors, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def _merge_dicts(given):
    if isinstance(given, dict):
        return given
    if not isinstance(given, (list, tuple)):
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(given)}")
    if not all(isinstance(d, dict) for d in given):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    merged, repeated = {}, []
    for d in given:
        for k, v in d.items():
            if k in merged and k not in repeated:
                repeated.append(k)
            merged[k] = v
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional "
                         f"call is ambiguous")
    return merged


class _Reparametrized:
    """The module with the given tensors in place of its parameters, buffers or attributes
    (by dotted name), put back as they were on exit, whatever happened inside."""

    def __init__(self, module, tensors, tie_weights, strict):
        self.module = module
        named = list(module.named_buffers(remove_duplicate=False)) + \
            list(module.named_parameters(remove_duplicate=False))
        if tie_weights:
            tensors = self._untie(named, tensors)
        if strict:
            self._check_keys({n for n, _ in named}, tensors)
        for v in tensors.values():
            if not isinstance(v, Tensor):
                raise TypeError(f"{v} is not an instance of ember.Tensor")
        self.tensors = tensors
        self.undo = []

    @staticmethod
    def _untie(named, tensors):
        """Every name of a tied tensor gets the value given for any of its names."""
        groups = {}
        for n, t in named:
            groups.setdefault(id(t), []).append(n)
        expanded = dict(tensors)
        for names in groups.values():
            given = [n for n in names if n in tensors]
            if not given:
                continue
            if any(tensors[n] is not tensors[given[0]] for n in given[1:]):
                raise ValueError(f"functional_call got multiple values for keys {sorted(given)}, "
                                 f"which are tied. Consider using tie_weights=False")
            for n in names:
                expanded[n] = tensors[given[0]]
        return expanded

    def _check_keys(self, expected, tensors):
        unexpected = sorted(k for k in tensors if k not in expected)
        missing = sorted(expected.difference(tensors))
        lines = [f"\n\t{what} key(s): " + ", ".join(f"'{k}'" for k in keys) + "."
                 for what, keys in (("Unexpected", unexpected), ("Missing", missing)) if keys]
        if lines:
            raise RuntimeError(f"Error(s) in reparametrizing for "
                               f"{type(self.module).__name__}:" + "".join(lines))

    def __enter__(self):
        try:
            for name, value in self.tensors.items():
                path, _, attr = name.rpartition(".")
                owner = self.module.get_submodule(path)
                self.undo.append((owner, attr, self._swap(owner, attr, value)))
        except BaseException:
            self.__exit__()
            raise
        return self

    _ABSENT = object()

    def _swap(self, owner, attr, value):
        """Put `value` in place of owner.attr; returns where and what was there."""
        for store in (owner._parameters, owner._buffers):
            if attr in store:
                old = store[attr]
                store[attr] = value
                return store, old
        old = owner.__dict__.get(attr, self._ABSENT)
        setattr(owner, attr, value)
        return None, old

    def __exit__(self, *exc):
        for owner, attr, (store, old) in reversed(self.undo):
            if store is not None:
                store[attr] = old
            elif old is self._ABSENT:
                delattr(owner, attr)
            else:
                setattr(owner, attr, old)
        self.undo = []
        return False


# ----------------------------------------------------------------------------- module state
def stack_module_state(models):
    """The parameters and buffers of several models of one class, each stacked along a new
    first dimension (for vmap over an ensemble with functional_call). The stacked
    parameters are new leaves, requiring grad as the originals do."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    if any(m.training != models[0].training for m in models):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]

    def stacked_leaf(tensors, name):
        flags = {t.requires_grad for t in tensors}
        if len(flags) > 1:
            raise RuntimeError(f"Expected {name} from each model to have the same "
                               ".requires_grad")
        out = stack([t.detach() for t in tensors]).detach()
        return out.requires_grad_() if flags.pop() else out

    params = {k: stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: stack([b[k] for b in all_buffers]) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Make every BatchNorm in `root` use batch statistics only (no running statistics), in
    place, as vmap over such modules needs; returns `root`."""
    from .nn.modules.batchnorm import _BatchNorm      # (ember.nn imports this module)
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


# ----------------------------------------------------------------------------- other transforms
_FUNCTIONALIZE_REMOVE = ("mutations", "mutations_and_views")


def functionalize(func, *, remove="mutations"):
    """A function computing what `func` computes, its in-place writes replaced by out-of-place
    ops (for compilers). ember runs programs eagerly, where the two give the same results,
    inputs that `func` mutates included (torch copies them back), so `func` itself is run."""
    if remove not in _FUNCTIONALIZE_REMOVE:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove="
            f"{remove}. Valid options are:\n     remove='mutations': all inplace and out= "
            "operators will be removed from the program, and replaced with their out-of-place "
            "equivalents.\n     remove='mutations_and_views': In addition to the above, all "
            "aliasing operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n")

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        return func(*args, **kwargs)
    return functionalized


def debug_unwrap(tensor, *, recurse=True):
    """The tensor under a transform's wrappers: ember's transforms do not wrap tensors, so it
    is the tensor itself."""
    return tensor


from .func_rearrange import rearrange  # noqa: E402,F401
