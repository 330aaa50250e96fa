"""torch.func.rearrange: einops-style reordering of a tensor's dimensions by a pattern such
as "b c h w -> b (h w) c". Each side names the dimensions (a parenthesised group is one
dimension made of several, "..." stands for the dimensions not named, "1" or "()" for a size-1
dimension); the tensor is split into its named axes, permuted, and merged again."""
from .ops.joining import stack


class DimensionBindError(Exception):
    """A pattern's dimensions do not fit the tensor's sizes."""


_ELLIPSIS = "…"     # "..." as one token


def _parse(side):
    """The dimensions of one side: an axis name (str) or a group of names (list; empty for a
    size-1 dimension)."""
    dims, group = [], None
    text = side.replace("...", f" {_ELLIPSIS} ").replace("(", " ( ").replace(")", " ) ")
    for token in text.split():
        if token == "(":
            if group is not None:
                raise ValueError("Axis composition is one-level (brackets inside brackets "
                                 "not allowed)")
            group = []
        elif token == ")":
            if group is None:
                raise ValueError("Brackets are not balanced")
            dims.append(group)
            group = None
        elif token == "1":          # a size-1 dimension (inside a group it adds nothing)
            if group is None:
                dims.append([])
        else:
            if token != _ELLIPSIS and not token.isidentifier():
                raise ValueError(f"Invalid axis identifier: {token}")
            if group is not None:
                group.append(token)
            else:
                dims.append(token)
    if group is not None:
        raise ValueError("Brackets are not balanced")
    return dims


def _names(dims):
    return [a for d in dims for a in ([d] if isinstance(d, str) else d)]


def _expand_ellipsis(dims, axes):
    """The dimensions with "..." replaced by `axes` (one dimension each, or merged into the
    group "(...)" stands in)."""
    out = []
    for d in dims:
        if d == _ELLIPSIS:
            out += [[a] for a in axes]
        elif isinstance(d, str):
            out.append([d])
        elif _ELLIPSIS in d:
            i = d.index(_ELLIPSIS)
            out.append(d[:i] + axes + d[i + 1:])
        else:
            out.append(d)
    return out


def rearrange(tensor, pattern, **axes_lengths):
    if isinstance(tensor, (list, tuple)):
        tensor = stack(tensor)
    if "->" not in pattern or pattern.count("->") != 1:
        raise ValueError("Pattern must contain a single '->' separator")
    left_text, right_text = pattern.split("->")
    left, right = _parse(left_text), _parse(right_text)
    for dims in (left, right):
        names = _names(dims)
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f"Indexing expression contains duplicate dimension '{name}'")
    only_one_side = set(_names(left)) ^ set(_names(right))
    if only_one_side:
        raise ValueError("Identifiers only on one side of rearrange expression (should be on "
                         f"both): {only_one_side}")

    # the ellipsis stands for as many dimensions as the pattern leaves unnamed
    ndim = tensor.dim()
    extra = ndim - (len(left) - 1) if _ELLIPSIS in left else 0
    axes = [f"{_ELLIPSIS}{i}" for i in range(max(extra, 0))]
    left, right = _expand_ellipsis(left, axes), _expand_ellipsis(right, axes)
    if len(left) != ndim:
        raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the "
                         f"number of dimensions in the tensor ({ndim})")

    sizes = dict(axes_lengths)
    for dim, group in zip(tensor.shape, left):
        unknown = [a for a in group if a not in sizes]
        known = 1
        for a in group:
            if a in sizes:
                known *= sizes[a]
        if len(unknown) > 1:
            raise DimensionBindError(f"cannot infer the sizes of {unknown} in a dimension of "
                                     f"size {dim}")
        if unknown:
            if known == 0 or dim % known:
                raise DimensionBindError("inferred dimension does not evenly fit into larger "
                                         f"dimension: {dim} vs {tuple(group)}")
            sizes[unknown[0]] = dim // known
        elif known != dim:
            raise DimensionBindError(f"Dimension sizes to do not match ({dim} != {known}) when "
                                     f"matching dimension pack {tuple(group)}")
    elementary = _names(left)
    split = tensor.reshape([sizes[a] for a in elementary])
    order = [elementary.index(a) for a in _names(right)]
    moved = split.permute(order)
    merged = []
    for group in right:
        size = 1
        for a in group:
            size *= sizes[a]
        merged.append(size)
    return moved.reshape(merged)
