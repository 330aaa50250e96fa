"""Tensor methods, argument parsing and top-level op calls against torch (the pointwise,
reduction, joining, linalg, indexing and complex cases live in their test_ops_* files): each
scenario is a case where ember once differed
from PyTorch 2.13 (values, dtypes, errors or warnings), kept so that it stays fixed."""
import numpy as np
import pytest

from differential import catch, same, warnings_of

NAN, INF = float("nan"), float("inf")


def _warned(fn):
    """(result or error, warnings) with PyTorch's '(Triggered internally at ...)' tail cut."""
    result, caught = warnings_of(lambda: catch(fn))
    return result, [w.split(" (Triggered internally at")[0] for w in caught]


# ----------------------------------------------------------------------------- reductions
def _x3(T):
    return T.arange(24.).reshape(2, 3, 4)


# ----------------------------------------------------------------------------- more ops
_SORTED = np.sort(np.random.default_rng(0).integers(0, 20, 37)).tolist()
_VALUES = np.random.default_rng(1).integers(-2, 22, (5, 7)).tolist()
_SORTED_ROWS = np.sort(np.random.default_rng(2).standard_normal((3, 2, 9)), -1).tolist()
_ROW_VALUES = np.random.default_rng(3).standard_normal((3, 2, 4)).tolist()

MORE = {
    # searchsorted bisects as PyTorch does, so NaNs land where PyTorch puts them
    **{f"searchsorted_{name}_{right}": (lambda T, f=f, right=right: f(T, right))
       for right in (False, True) for name, f in {
           "nan": lambda T, r: T.searchsorted(T.tensor([1., 3., NAN]), T.tensor([NAN, 2., 5.]),
                                              right=r),
           "nan_inside": lambda T, r: T.searchsorted(T.tensor([1., NAN, 3., 4., NAN, NAN]),
                                                     T.tensor([NAN, 2., 3., 5., 0.]), right=r),
           "ints": lambda T, r: T.searchsorted(T.tensor(_SORTED), T.tensor(_VALUES), right=r),
           "rows": lambda T, r: T.searchsorted(T.tensor(_SORTED_ROWS), T.tensor(_ROW_VALUES),
                                               right=r),
           "empty_boundaries": lambda T, r: T.searchsorted(T.tensor([]), T.tensor([1.]),
                                                           right=r),
           "empty_rows": lambda T, r: T.searchsorted(T.ones(0, 3), T.ones(0, 2), right=r),
           "scalar": lambda T, r: T.searchsorted(T.tensor([1., 2., 2.]), 2, right=r),
           "sorter": lambda T, r: T.searchsorted(T.tensor([3., 1., 2.]), T.tensor([2.]),
                                                 right=r, sorter=T.tensor([1, 2, 0])),
           "bucketize_nan": lambda T, r: T.bucketize(T.tensor([[NAN, 1.], [3., 9.]]),
                                                     T.tensor([1., 3., NAN]), right=r)}.items()},
    # diff: prepend/append must be tensors with input's dims
    "diff_prepend_fewer_dims": lambda T: catch(T.diff, T.ones(2, 3), prepend=T.ones(3)),
    "diff_prepend_0d": lambda T: catch(T.diff, T.ones(3), prepend=T.tensor(5.)),
    "diff_prepend_shape": lambda T: catch(T.diff, T.ones(2, 3), prepend=T.ones(3, 3)),
    "diff_append_shape_dim0": lambda T: catch(T.diff, T.ones(2, 3), dim=0,
                                              append=T.ones(2, 2)),
    "diff_append_number": lambda T: catch(T.diff, T.ones(3), append=5),
    "diff_append_prepend": lambda T: T.diff(T.ones(2, 3), dim=0, append=T.zeros(1, 3),
                                            prepend=T.full((2, 3), 5.)),
    # dist is norm(input - other)
    "dist_int": lambda T: catch(T.dist, T.ones(2, dtype=T.int64), T.ones(2, dtype=T.int64)),
    "dist_int_float": lambda T: T.dist(T.ones(2, dtype=T.int64), T.tensor([3., 4.])),
    "dist_bool": lambda T: catch(T.dist, T.ones(2, dtype=T.bool), T.ones(2)),
    "inner_dtypes": lambda T: catch(T.inner, T.ones(3, dtype=T.float64), T.ones(3)),
    "inner_0d_mixed": lambda T: T.inner(T.tensor(2), T.ones(2, 2)),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_ops(name):
    same(MORE[name])


METHODS = {
    # reflected and in-place shifts
    "rlshift": lambda T: (3 << T.tensor([0, 1, 3]), 100 >> T.tensor([0, 1, 3]),
                          True << T.tensor([1, 2])),
    "rlshift_float": lambda T: catch(lambda: 2.5 << T.tensor([1])),
    "ilshift": lambda T: (lambda t: (t.__ilshift__(2), t))(T.tensor([1, 2])),
    "irshift_float": lambda T: catch(lambda: T.tensor([1., 2.]).__irshift__(2)),
    # in-place bitwise ops check the cast before the kernel's dtype
    "irshift_int_by_float": lambda T: catch(lambda: T.tensor([1, 2]).__irshift__(T.ones(2))),
    "bitwise_and_int_float": lambda T: catch(lambda: T.tensor([1, 2]).bitwise_and_(T.ones(2))),
    "bitwise_or_bool_int": lambda T: catch(lambda: T.tensor([True]).bitwise_or_(T.tensor([2]))),
    "bitwise_or_int_bool": lambda T: (lambda t: (t.bitwise_or_(T.tensor([True, False])), t))(
        T.tensor([1, 2])),
    # cumsum_/cumprod_ scan in self's dtype
    "cumsum_bool": lambda T: catch(lambda: T.tensor([True, False]).cumsum_(0)),
    "cumprod_bool": lambda T: catch(lambda: T.tensor([True, False]).cumprod_(0)),
    "cumsum_int8_wraps": lambda T: (lambda t: (t.cumsum_(0), t))(T.tensor([100, 100],
                                                                            dtype=T.int8)),
    "cumsum_dtype_mismatch": lambda T: catch(lambda: T.tensor([1, 2], dtype=T.int8).cumsum_(
        0, dtype=T.int64)),
    "cumsum_same_dtype": lambda T: (lambda t: (t.cumsum_(0, dtype=T.float32), t))(
        T.tensor([1., 2.])),
    # (torch's zero gradient is a ZeroTensor: + 0 makes it a plain one)
    "sgn_inplace_grad": lambda T: (lambda a: (lambda b: (b.sgn_().sum().backward(), a.grad + 0,
                                                         b.grad_fn.name()))(a * 1))(
        T.tensor([1., -2.], requires_grad=True)),
    "cumprod_grad": lambda T: (lambda a: (lambda b: (b.cumprod_(0).sum().backward(), a.grad))(
        a * 1))(T.tensor([1., 2., 3.], requires_grad=True)),
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_methods(name):
    same(METHODS[name])


# ----------------------------------------------------------------------------- arguments
ARGUMENTS = {
    **{f"{f}_{case}": (lambda T, f=f, call=call: catch(call, T, f))
       for f in ("softmax", "log_softmax", "cumsum", "cumprod", "logsumexp")
       for case, call in {
           "missing_dim": lambda T, f: getattr(T, f)(T.ones(2)),
           "dim_none": lambda T, f: getattr(T, f)(T.ones(2), None),
           "method_missing_dim": lambda T, f: getattr(T.ones(2), f)(),
           "dim_given": lambda T, f: getattr(T, f)(T.ones(2), 0)}.items()},
    **{f"{f}_dim_{kind}": (lambda T, f=f, bad=bad: catch(getattr(T, f), _x3(T), bad))
       for f in ("argmax", "argmin", "median", "nanmedian", "mode", "softmax", "cumsum")
       for kind, bad in {"tuple": (1,), "bool": True, "float": 1.0, "none": None}.items()
       if not (kind == "none" and f in ("argmax", "argmin"))},
    "argmax_dim_numpy_int": lambda T: T.argmax(_x3(T), np.int64(1)),
    "median_no_dim": lambda T: (T.median(_x3(T)), T.nanmedian(_x3(T))),
    "functional_softmax_implicit_dim": lambda T: _warned(
        lambda: T.nn.functional.softmax(T.ones(2, 3))),
    "tensor_has_no_rsub": lambda T: hasattr(T.ones(1), "rsub"),
    "rsub_function": lambda T: T.rsub(T.ones(2), T.full((2,), 3.), alpha=2),
}


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_arguments(name):
    same(ARGUMENTS[name])


# ----------------------------------------------------------------------------- tensor methods
def _version_change(T, op, base=None):
    """How much op(x) moved x's version counter, and x's geometry after it."""
    x = T.ones(2, 3) if base is None else base(T)
    before = int(x._version)
    result = op(x)
    return int(x._version) - before, result is x, tuple(x.shape), x.stride()


def _inplace_view_history(T, op):
    """An in-place view op on a view of a non-leaf: its node, and the gradients through it."""
    z = T.arange(6., requires_grad=True)
    y = z.mul(1).reshape(2, 3)
    v, other = y[0:1], y[1]
    op(v)
    (v * T.arange(1., 1 + v.numel()).reshape(v.shape)).sum().backward()
    return v.grad_fn.name(), z.grad, other.grad_fn.name(), int(y._version)


METHODS_second_round = {
    # x.new_*(size): PyTorch's size errors, naming the method
    "new_zeros_negative": lambda T: catch(lambda: T.ones(2).new_zeros(-1)),
    "new_zeros_negative_second": lambda T: catch(lambda: T.ones(2).new_zeros(2, -3)),
    "new_ones_negative": lambda T: catch(lambda: T.ones(2).new_ones(-1)),
    "new_empty_negative": lambda T: catch(lambda: T.ones(2).new_empty((-1,))),
    "new_full_negative": lambda T: catch(lambda: T.ones(2).new_full((-1,), 2.)),
    "new_zeros_float": lambda T: catch(lambda: T.ones(2).new_zeros(2.5)),
    "new_ones_float": lambda T: catch(lambda: T.ones(2).new_ones(2.5)),
    "new_empty_str": lambda T: catch(lambda: T.ones(2).new_empty("a")),
    "new_full_float": lambda T: catch(lambda: T.ones(2).new_full(2.5, 1.)),
    "new_full_float_element": lambda T: catch(lambda: T.ones(2).new_full((2.5,), 1.)),
    "new_zeros_float_later": lambda T: catch(lambda: T.ones(2).new_zeros(2, 2.5)),
    "new_zeros_size_keyword": lambda T: T.ones(2).new_zeros(size=(2, 3)),
    "new_ones_size_keyword": lambda T: T.ones(2, dtype=T.int8).new_ones(size=[2]),
    "new_zeros_size_twice": lambda T: catch(lambda: T.ones(2).new_zeros(2, size=(2, 3))),
    "new_zeros_no_size": lambda T: catch(lambda: T.ones(2).new_zeros()),
    "new_empty_memory_format": lambda T: catch(lambda: T.ones(2).new_empty(
        2, memory_format=T.contiguous_format)),
    "new_zeros_empty_tuple": lambda T: T.ones(2).new_zeros(()),
    # resize_ with a negative size: PyTorch's numel overflows
    "resize_negative": lambda T: catch(lambda: T.arange(6.).resize_(-1)),
    "resize_negative_second": lambda T: catch(lambda: T.arange(6.).resize_(2, -1)),
    "resize_negative_requires_grad": lambda T: catch(
        lambda: T.ones(2, requires_grad=True).resize_(-1)),
    # versions: resize_ to the same size changes nothing; in-place view ops count as writes
    "version_resize_same": lambda T: _version_change(T, lambda x: x.resize_(2, 3)),
    "version_resize_other": lambda T: _version_change(T, lambda x: x.resize_(3, 2)),
    "version_resize_same_transposed": lambda T: _version_change(
        T, lambda x: x.resize_(2, 3), lambda T: T.ones(3, 2).t()),
    "version_resize_as_same": lambda T: _version_change(
        T, lambda x: x.resize_as_(T.ones(2, 3)), lambda T: T.ones(3, 2).t()),
    "version_unsqueeze_": lambda T: _version_change(T, lambda x: x.unsqueeze_(0)),
    "version_squeeze_": lambda T: _version_change(T, lambda x: x.squeeze_()),
    "version_squeeze_dim": lambda T: _version_change(T, lambda x: x.squeeze_(0)),
    "version_t_": lambda T: _version_change(T, lambda x: x.t_()),
    "version_transpose_": lambda T: _version_change(T, lambda x: x.transpose_(0, 1)),
    "version_swapdims_": lambda T: _version_change(T, lambda x: x.swapdims_(0, 1)),
    "version_as_strided_": lambda T: _version_change(T, lambda x: x.as_strided_((2, 2), (1, 2))),
    "version_unsqueeze_of_view": lambda T: _version_change(
        T, lambda x: x.unsqueeze_(0), lambda T: T.ones(2, 3)[0]),
    "as_strided_of_view": lambda T: (lambda x: (x.as_strided_((2, 2), (1, 2)), x.stride(),
                                                x.storage_offset()))(T.arange(6.)[1:]),
    "as_strided_out_of_bounds": lambda T: catch(
        lambda: T.arange(6.).as_strided_((2, 2), (1, 2), 10)),
    # ... and take the view op's history (under the in-place node name)
    "unsqueeze_leaf": lambda T: catch(lambda: T.ones(2, requires_grad=True).unsqueeze_(0)),
    "unsqueeze_history": lambda T: _inplace_view_history(T, lambda v: v.unsqueeze_(0)),
    "squeeze_history": lambda T: _inplace_view_history(T, lambda v: v.squeeze_()),
    "squeeze_dim_history": lambda T: _inplace_view_history(T, lambda v: v.squeeze_(0)),
    "squeeze_dims_history": lambda T: _inplace_view_history(T, lambda v: v.squeeze_((0,))),
    "t_history": lambda T: _inplace_view_history(T, lambda v: v.t_()),
    "transpose_history": lambda T: _inplace_view_history(T, lambda v: v.transpose_(0, 1)),
    "as_strided_history": lambda T: _inplace_view_history(T, lambda v: v.as_strided_((3,),
                                                                                     (2,))),
    "t_no_grad": lambda T: (lambda y: (T.set_grad_enabled(False), y.t_(), y.grad_fn.name(),
                                       T.set_grad_enabled(True)))(
        T.ones(2, 3, requires_grad=True) * 2)[2],
    # flatten of a scalar still range-checks its dims
    "flatten_scalar_start_1": lambda T: catch(T.flatten, T.tensor(1.), 1),
    "flatten_scalar_start_keyword": lambda T: catch(T.flatten, T.tensor(1.), start_dim=1),
    "flatten_scalar_end_1": lambda T: catch(T.flatten, T.tensor(1.), 0, 1),
    "flatten_scalar_end_minus_2": lambda T: catch(T.flatten, T.tensor(1.), 0, -2),
    "flatten_scalar_ok": lambda T: T.flatten(T.tensor(1.), -1, 0),
    "flatten_scalar_method": lambda T: catch(lambda: T.tensor(1.).flatten(1)),
    "flatten_module_scalar": lambda T: catch(T.nn.Flatten(), T.tensor(1.)),
}


@pytest.mark.parametrize("name", sorted(METHODS_second_round))
def test_methods_second_round(name):
    same(METHODS_second_round[name])


# ----------------------------------------------------------------------------- top level
TOP_LEVEL = {
    "row_stack": lambda T: T.row_stack([T.ones(2), T.zeros(1, 2)]),
    "row_stack_tensor": lambda T: catch(T.row_stack, T.ones(2)),
    "row_stack_empty": lambda T: catch(T.row_stack, []),
    "vstack_tensor": lambda T: catch(T.vstack, T.ones(2)),
    "hstack_tensor": lambda T: catch(T.hstack, T.ones(2)),
    "stack_tensor": lambda T: catch(T.stack, T.ones(2)),
    "cat_tensor": lambda T: catch(T.cat, T.ones(2)),
    "concat_tensor": lambda T: catch(T.concat, T.ones(2)),
    "concatenate_tensor": lambda T: catch(T.concatenate, T.ones(2)),
    "cat_number": lambda T: catch(T.cat, 3),
    # broadcast_shapes: merged right to left, shape by shape
    "broadcast_shapes_mismatch": lambda T: catch(T.broadcast_shapes, (2, 1), (3, 3)),
    "broadcast_shapes_size": lambda T: catch(T.broadcast_shapes, T.Size([2, 1]),
                                             T.Size([3, 3])),
    "broadcast_shapes_list": lambda T: catch(T.broadcast_shapes, [2, 1], [3, 3]),
    "broadcast_shapes_three": lambda T: catch(T.broadcast_shapes, (4, 2, 1), (3, 3), (1,)),
    "broadcast_shapes_ints": lambda T: catch(T.broadcast_shapes, 2, 3),
    "broadcast_shapes_int_later": lambda T: catch(T.broadcast_shapes, (1, 3), 4),
    "broadcast_shapes_negative_first": lambda T: catch(T.broadcast_shapes, (-1,), (3,)),
    "broadcast_shapes_negative_later": lambda T: catch(T.broadcast_shapes, (3,), (-1,)),
    "broadcast_shapes_float": lambda T: catch(T.broadcast_shapes, (2,), 2.5),
    "broadcast_shapes_tensor": lambda T: catch(T.broadcast_shapes, T.tensor(2), (2,)),
    "broadcast_shapes_zero": lambda T: catch(T.broadcast_shapes, (2, 1), (0, 1)),
    "broadcast_shapes_ok": lambda T: T.broadcast_shapes(2, 1, (3, 1), (4, 1, 2)),
    "broadcast_shapes_zero_ok": lambda T: T.broadcast_shapes((1, 0), (3, 1)),
    "broadcast_shapes_none": lambda T: T.broadcast_shapes(),
    "broadcast_tensors_mismatch": lambda T: catch(T.broadcast_tensors, T.ones(2, 1),
                                                  T.ones(3, 3)),
    "broadcast_tensors_three": lambda T: catch(T.broadcast_tensors, T.ones(1), T.ones(2),
                                               T.ones(3)),
    "broadcast_tensors_ok": lambda T: T.broadcast_tensors(T.ones(3, 1), T.arange(2.)),
    # norm_except_dim and _weight_norm as torch exports them
    "norm_except_dim": lambda T: T.norm_except_dim(T.arange(6.).reshape(2, 3), 2, 0),
    "norm_except_dim_1": lambda T: T.norm_except_dim(T.arange(6.).reshape(2, 3), 2, 1),
    "norm_except_dim_all": lambda T: T.norm_except_dim(T.arange(6.).reshape(2, 3), 2, -1),
    "norm_except_dim_pow3": lambda T: T.norm_except_dim(T.arange(6.).reshape(2, 3), 3, 1),
    "norm_except_dim_default": lambda T: T.norm_except_dim(T.arange(6.).reshape(2, 3)),
    "weight_norm": lambda T: T._weight_norm(T.arange(6.).reshape(2, 3), T.ones(2, 1), 0),
    "weight_norm_1": lambda T: T._weight_norm(T.arange(6.).reshape(2, 3), T.ones(1, 3), 1),
    "weight_norm_all": lambda T: T._weight_norm(T.arange(6.).reshape(2, 3), T.ones(1, 1), -1),
    "weight_norm_default": lambda T: T._weight_norm(T.arange(6.).reshape(2, 3), T.ones(2, 1)),
}


@pytest.mark.parametrize("name", sorted(TOP_LEVEL))
def test_top_level(name):
    same(TOP_LEVEL[name])


def test_out_arguments():
    def f(T):
        o1 = T.empty(2, dtype=T.int64)
        o2 = T.empty(0)
        o3 = T.empty(2, 2)
        r1 = T.gcd(T.tensor([4, 6]), T.tensor([6, 9]), out=o1)
        r2 = T.i0(T.tensor([0.5, 1.0]), out=o2)
        r3 = T.renorm(T.ones(2, 2), 2, 0, 1.0, out=o3)
        x = T.ones(2, 2, requires_grad=True)
        return [r1 is o1, o1, r2 is o2, o2, r3 is o3, o3,
                catch(T.renorm, x, 2, 0, 1.0, out=T.empty(2, 2)),
                catch(T.i0, T.tensor([1 + 1j]))]
    same(f)
