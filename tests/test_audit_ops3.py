"""Differential audit of the ops against torch, third round: each scenario is a case where
ember once differed from PyTorch 2.13 (values, dtypes, errors, reprs or autograd records),
kept so that it stays fixed."""
import numpy as np
import pytest

from differential import catch, same, warnings_of

NAN = float("nan")


# ----------------------------------------------------------------------------- numbers only
# sub/div take a number `input` as a tensor; pow, remainder, the bitwise ops and rsub refuse
NUMBERS = {
    **{f"{op}_{a}_{b}": (lambda T, op=op, a=a, b=b: catch(getattr(T, op), a, b))
       for op in ("sub", "subtract", "div", "true_divide", "divide", "pow", "float_power",
                  "remainder", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                  "bitwise_right_shift", "rsub")
       for a, b in ((2, 3), (2.5, 3), (2, 3.5), (2j, 1), (True, 3))},
    "sub_alpha": lambda T: T.sub(2, 3, alpha=2),
    "div_floor": lambda T: T.div(7, 2, rounding_mode="floor"),
    "div_out": lambda T: (lambda o: (T.div(2, 3, out=o), o))(T.zeros(())),
}


@pytest.mark.parametrize("name", sorted(NUMBERS))
def test_numbers_only(name):
    same(NUMBERS[name])


# ----------------------------------------------------------------------------- NumPy scalars
# a NumPy scalar given for a Number is read as a Python int (integers) or float (anything else:
# np.bool_ is 1.0, a complex one loses its imaginary part with NumPy's warning)
_NP_SCALARS = {"bool": np.bool_(True), "f64": np.float64(1.5), "f32": np.float32(1.5),
               "i64": np.int64(3), "i8": np.int8(3), "c64": np.complex64(1j)}


def _tci(T):
    return T.tensor([1.5, 2.5]), T.tensor([True, False]), T.tensor([1, 2])


NP_OPS = {
    "where_float": lambda T, t, c, i, v: T.where(c, t, v),
    "where_first": lambda T, t, c, i, v: T.where(c, v, t),
    "where_int": lambda T, t, c, i, v: T.where(c, i, v),
    "where_both": lambda T, t, c, i, v: T.where(c, v, v),
    "where_python": lambda T, t, c, i, v: T.where(c, v, 2),
    "where_method": lambda T, t, c, i, v: i.where(c, v),
    "clamp": lambda T, t, c, i, v: T.clamp(t, v),
    "clamp_int": lambda T, t, c, i, v: T.clamp(i, v),
    "clamp_max": lambda T, t, c, i, v: T.clamp(i, max=v),
    "clip": lambda T, t, c, i, v: T.clip(i, v),
    "clamp_min_fn": lambda T, t, c, i, v: T.clamp_min(i, v),
    "clamp_max_fn": lambda T, t, c, i, v: T.clamp_max(i, v),
    "clamp_inplace": lambda T, t, c, i, v: i.clamp_(v),
    "clamp_inplace_float": lambda T, t, c, i, v: t.clamp_(v),
    "lerp": lambda T, t, c, i, v: T.lerp(t, t * 2, v),
    "lerp_inplace": lambda T, t, c, i, v: t.lerp_(t * 2, v),
    "masked_fill": lambda T, t, c, i, v: t.masked_fill(c, v),
    "masked_fill_int": lambda T, t, c, i, v: i.masked_fill(c, v),
    "masked_fill_inplace": lambda T, t, c, i, v: i.masked_fill_(c, v),
    "masked_fill_complex": lambda T, t, c, i, v: (t * 1j).masked_fill(c, v),
    "where_complex": lambda T, t, c, i, v: T.where(c, t * 1j, v),
    "lerp_complex": lambda T, t, c, i, v: T.lerp(t * 1j, t, v),
    "add_complex": lambda T, t, c, i, v: t * 1j + v,
}


@pytest.mark.parametrize("op", sorted(NP_OPS))
@pytest.mark.parametrize("kind", sorted(_NP_SCALARS))
def test_numpy_scalar_operands(op, kind):
    same(lambda T: warnings_of(lambda: catch(NP_OPS[op], T, *_tci(T), _NP_SCALARS[kind])))


# ----------------------------------------------------------------------------- printing, nodes
def _stale_no_grad_view(T):
    """A view made in no_grad whose base is then changed in place with grad on: reading its
    grad_fn raises, and its repr says grad_fn=<Invalid>."""
    x = T.ones(3, requires_grad=True).clone()
    with T.no_grad():
        u = x[1:]
    x.add_(1)
    return u


def _nodes(T):
    class MyFn(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g
    x = T.ones(3, requires_grad=True)
    z = x.clone()
    z[0] = 5
    return {"accumulate": (x * 2).grad_fn.next_functions[0][0], "copy_slices": z.grad_fn,
            "mul": (x * 2).grad_fn, "custom": MyFn.apply(x).grad_fn}


GRAPH_PRINTS = {
    "stale_view_repr": lambda T: repr(_stale_no_grad_view(T)),
    "stale_view_grad_fn": lambda T: catch(lambda: _stale_no_grad_view(T).grad_fn),
    **{f"node_type_{k}": (lambda T, k=k: (str(type(_nodes(T)[k])), type(_nodes(T)[k]).__module__,
                                          _nodes(T)[k].name()))
       for k in ("accumulate", "copy_slices", "mul", "custom")},
}


@pytest.mark.parametrize("name", sorted(GRAPH_PRINTS))
def test_graph_prints(name):
    same(GRAPH_PRINTS[name])


# ----------------------------------------------------------------------------- unwritable views
def _tracked(T):
    return T.ones(4, 2, requires_grad=True).clone()


_MULTI = {
    "unbind": lambda T, x: x.unbind(), "unbind_dim1": lambda T, x: T.unbind(x, 1),
    "split": lambda T, x: x.split(2), "split_sizes": lambda T, x: x.split([1, 3]),
    "split_with_sizes": lambda T, x: x.split_with_sizes([2, 2]), "split_whole": lambda T, x:
    x.split(4), "chunk": lambda T, x: x.chunk(2), "chunk_one": lambda T, x: x.chunk(1),
    # (not multi-output views in PyTorch: pieces made as slices, or copies)
    "tensor_split": lambda T, x: x.tensor_split(2), "hsplit": lambda T, x: T.hsplit(x, 2),
    "unsafe_split": lambda T, x: x.unsafe_split(2),
}


def _custom_views(T):
    class One(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.view_as(a)

        @staticmethod
        def backward(ctx, g):
            return g

    class Two(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a[0], a * 2

        @staticmethod
        def backward(ctx, g, h):
            return h

    class WithNumber(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a[0], 3

        @staticmethod
        def backward(ctx, g, h):
            return None
    return One, Two, WithNumber


def _written_then_grad_fn(T, outs):
    outs[0]._base.add_(1)
    return outs[0].grad_fn


def _in_no_grad(T, outs):
    with T.no_grad():
        outs[-1].mul_(2)
    return repr(outs[-1])


def _split_in_no_grad(T):
    with T.no_grad():
        return _tracked(T).split(2)


UNWRITABLE = {
    **{f"{k}_inplace": (lambda T, k=k: catch(lambda: _MULTI[k](T, _tracked(T))[-1].mul_(2)))
       for k in _MULTI},
    **{f"{k}_view_of_output": (lambda T, k=k: catch(lambda: _MULTI[k](T, _tracked(T))[-1][0]
                                                     .mul_(2))) for k in _MULTI},
    **{f"{k}_setitem": (lambda T, k=k: catch(lambda: _MULTI[k](T, _tracked(T))[0].__setitem__(
        0, 2.))) for k in _MULTI},
    **{f"{k}_base_written": (lambda T, k=k: catch(lambda: _written_then_grad_fn(
        T, _MULTI[k](T, _tracked(T))) is not None)) for k in _MULTI},
    **{f"{k}_written_in_no_grad": (lambda T, k=k: catch(_in_no_grad, T, _MULTI[k](T, _tracked(T))))
       for k in _MULTI},
    **{f"{k}_untracked": (lambda T, k=k: _MULTI[k](T, T.ones(4, 2))[-1].mul_(2)) for k in _MULTI},
    "split_made_in_no_grad": lambda T: catch(lambda: _split_in_no_grad(T)[0].mul_(2)),
    "custom_one_view": lambda T: catch(lambda: _custom_views(T)[0].apply(_tracked(T)).mul_(2)),
    "custom_one_view_of_leaf": lambda T: catch(lambda: _custom_views(T)[0].apply(
        T.ones(2, requires_grad=True)).mul_(2)),
    "custom_two_outputs": lambda T: catch(lambda: _custom_views(T)[1].apply(_tracked(T))[0]
                                          .mul_(2)),
    "custom_two_outputs_copy": lambda T: _custom_views(T)[1].apply(_tracked(T))[1].mul_(2),
    "custom_view_and_number": lambda T: catch(lambda: _custom_views(T)[2].apply(_tracked(T))[0]
                                              .mul_(2)),
    "custom_base_written": lambda T: catch(lambda: _written_then_grad_fn(
        T, [_custom_views(T)[0].apply(_tracked(T))]) is not None),
}


@pytest.mark.parametrize("name", sorted(UNWRITABLE))
def test_unwritable_views(name):
    same(UNWRITABLE[name])


def test_function_in_inference_mode_with_grad_enabled():
    """Inside inference_mode, enable_grad() lets a custom Function record (as PyTorch), while
    the built-in ops record nothing."""
    def scenario(T):
        class Double(T.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g
        x = T.ones(2, requires_grad=True)
        with T.inference_mode(), T.enable_grad():
            y, z = Double.apply(x), x * 2
        return (y.requires_grad, y.grad_fn is not None, T.is_inference(y), z.requires_grad,
                z.grad_fn)
    same(scenario)


# ----------------------------------------------------------------------------- random fills
RANDOM_FILLS = {"uniform_": (), "normal_": (), "random_": (), "random_high": (5,),
                "bernoulli_": (), "exponential_": ()}


@pytest.mark.parametrize("name", sorted(RANDOM_FILLS))
def test_random_fill_of_expanded_tensor_refused(name):
    method = name if name.endswith("_") else name.split("_")[0] + "_"
    same(lambda T: catch(getattr(T.zeros(1).expand(3), method), *RANDOM_FILLS[name]))


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


def test_long_float32_sums_along_a_leading_dim_are_as_accurate_as_torchs():
    # NumPy adds along a leading dim one term at a time (30,000 terms of 1/30,000 gave 0.9997)
    def scenario(T):
        x = T.full((30000, 2), 1 / 30000)
        l = T.tensor([1., -1.], requires_grad=True)
        g, = T.autograd.grad((l + x).mean(0).sum(), [l])     # (the broadcast's sum_to_size)
        return x.sum(0), x.mean(0), x.sum((0,)), x.reshape(300, 100, 2).sum((0, 1)), g
    same(scenario, rtol=1e-6, atol=0)
