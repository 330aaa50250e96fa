"""Differential audit of the ops against torch, second round: each scenario is a case where
ember once differed from PyTorch 2.13 (values, dtypes, errors or version counters), kept so that
it stays fixed."""
import numpy as np
import pytest

from differential import catch, same

NAN, INF = float("nan"), float("inf")


def _x(T):
    return T.arange(6).reshape(2, 3)


# ----------------------------------------------------------------------------- indexing
INDEXING = {
    # topk/kthvalue have no CPU kernel for bool or complex (checked after k's range)
    "topk_bool": lambda T: catch(T.topk, T.tensor([True, False]), 1),
    "topk_bool_k_out_of_range": lambda T: catch(T.topk, T.tensor([True]), 5),
    "topk_bool_scalar": lambda T: catch(T.topk, T.tensor(True), 1),
    "topk_complex": lambda T: catch(T.topk, T.tensor([1j, 2]), 1),
    "topk_dim_bool": lambda T: catch(T.topk, T.tensor([3., 1., 2.]), 1, True),
    "kthvalue_bool": lambda T: catch(T.kthvalue, T.tensor([True, False]), 1),
    "kthvalue_bool_scalar": lambda T: T.kthvalue(T.tensor(True), 1),
    "kthvalue_bool_k_out_of_range": lambda T: catch(T.kthvalue, T.tensor([True]), 2),
    "kthvalue_complex": lambda T: catch(T.kthvalue, T.tensor([1j, 2]), 1),
    "kthvalue_empty": lambda T: catch(T.kthvalue, T.tensor([]), 1),
    "kthvalue_empty_other_dim": lambda T: T.kthvalue(T.ones(2, 0), 1, 0),
    # a 1-d input gives 0-d results (NaN counts as the largest)
    "kthvalue_1d_nan": lambda T: tuple(T.kthvalue(T.tensor([3., NAN, 1.]), 3)),
    "kthvalue_1d": lambda T: tuple(T.kthvalue(T.tensor([3., 2., 1.]), 2)),
    "kthvalue_1d_keepdim": lambda T: tuple(T.kthvalue(T.tensor([3., 2., 1.]), 2, keepdim=True)),
    # gather/scatter take no negative index; the first bad index is the one reported
    "gather_negative": lambda T: catch(T.gather, T.ones(2, 3), 1, T.tensor([[-1]])),
    "gather_first_bad": lambda T: catch(T.gather, T.ones(2, 3), 1, T.tensor([[0, 4], [5, 0]])),
    "gather_first_bad_dim0": lambda T: catch(T.gather, T.ones(2, 3), 0,
                                             T.tensor([[0, 5], [4, 0]])),
    "scatter_too_big": lambda T: catch(T.scatter, T.ones(2, 3), 1, T.tensor([[3]]),
                                       T.zeros(1, 1)),
    "scatter_value_negative": lambda T: catch(T.scatter, T.ones(2, 3), 1, T.tensor([[-1]]), 1.),
    "scatter_add_too_big": lambda T: catch(T.scatter_add, T.ones(2, 3), 1, T.tensor([[3]]),
                                           T.zeros(1, 1)),
    "scatter_inplace_negative": lambda T: catch(lambda: T.ones(2, 3).scatter_(
        1, T.tensor([[-2]]), T.zeros(1, 1))),
    "scatter_reduce_max": lambda T: catch(T.scatter, T.ones(2, 3), 1, T.tensor([[0]]), 2.,
                                          reduce="max"),
    "scatter_inplace_reduce_mean": lambda T: catch(lambda: T.ones(2, 3).scatter_(
        1, T.tensor([[0]]), 2., reduce="mean")),
    "scatter_reduce_multiply": lambda T: T.scatter(T.ones(2, 3), 1, T.tensor([[0]]), 2.,
                                                   reduce="multiply"),
    # index_select: its dim-1 kernel has its own message; negative indices are out of range
    "index_select_dim1_too_big": lambda T: catch(T.index_select, T.ones(2, 3), 1,
                                                 T.tensor([0, 5, -1])),
    "index_select_dim1_negative": lambda T: catch(T.index_select, T.ones(2, 3, 4), -2,
                                                  T.tensor([-1])),
    "index_select_dim0_negative": lambda T: catch(T.index_select, T.ones(2, 3), 0,
                                                  T.tensor([-1])),
    "index_select_last_dim_3d": lambda T: catch(T.index_select, T.ones(2, 3, 4), 2,
                                                T.tensor([4])),
    "index_select_1d_negative": lambda T: catch(T.index_select, T.ones(3), 0, T.tensor([-1])),
    "index_select_scalar_two": lambda T: catch(T.index_select, T.tensor(1.), 0,
                                               T.tensor([0, 0])),
    "index_select_scalar_one": lambda T: catch(T.index_select, T.tensor(1.), 0, T.tensor([1])),
    "index_select_scalar_ok": lambda T: T.index_select(T.tensor(1.), 0, T.tensor(0)),
    # sort: a bool dim matches no signature; complex has no CPU kernel
    "sort_bool_dim": lambda T: catch(T.sort, T.ones(3), True),
    "sort_bool_dim_descending": lambda T: catch(T.sort, T.ones(3), True, True),
    "sort_method_bool_dim": lambda T: catch(lambda: T.ones(3).sort(True)),
    "sort_method_float_dim": lambda T: catch(lambda: T.ones(3).sort(1.5)),
    "argsort_bool_dim": lambda T: catch(T.argsort, T.ones(3), True),
    "argsort_method_bool_dim": lambda T: catch(lambda: T.ones(3).argsort(True)),
    "sort_complex": lambda T: catch(T.sort, T.tensor([1j, 2])),
    "sort_complex_scalar": lambda T: catch(T.sort, T.tensor(1j)),
    "argsort_complex": lambda T: catch(T.argsort, T.tensor([1j, 2])),
    "msort_complex": lambda T: catch(T.msort, T.tensor([1j, 2])),
    "sort_bool": lambda T: tuple(T.sort(T.tensor([True, False]))),
    # flip: torch.flip takes a sequence; the method takes ints, a sequence or dims=
    "flip_repeated_dim": lambda T: catch(T.flip, _x(T), (0, -2)),
    "flip_method_repeated_dim": lambda T: catch(lambda: _x(T).flip(1, -1)),
    "flip_int": lambda T: catch(T.flip, _x(T), 0),
    "flip_two_ints": lambda T: catch(T.flip, _x(T), 0, 1),
    "flip_no_dims": lambda T: catch(T.flip, _x(T)),
    "flip_none": lambda T: catch(T.flip, _x(T), None),
    "flip_float_element": lambda T: catch(T.flip, _x(T), (0.5,)),
    "flip_bool_element": lambda T: catch(T.flip, _x(T), (True,)),
    "flip_keyword": lambda T: T.flip(_x(T), dims=(0,)),
    "flip_keyword_input": lambda T: T.flip(input=_x(T), dims=[1]),
    "flip_keyword_int": lambda T: catch(T.flip, _x(T), dims=0),
    "flip_keyword_float_element": lambda T: catch(T.flip, _x(T), dims=(0.5,)),
    "flip_method_int": lambda T: _x(T).flip(0),
    "flip_method_ints": lambda T: _x(T).flip(0, 1),
    "flip_method_list": lambda T: _x(T).flip([0]),
    "flip_method_keyword": lambda T: _x(T).flip(dims=[0, 1]),
    "flip_method_keyword_int": lambda T: catch(lambda: _x(T).flip(dims=1)),
    "flip_method_both": lambda T: catch(lambda: _x(T).flip(0, dims=1)),
    "flip_method_none": lambda T: catch(lambda: _x(T).flip()),
    "flip_method_float": lambda T: catch(lambda: _x(T).flip(0.5)),
    "flip_method_float_later": lambda T: catch(lambda: _x(T).flip(0, 0.5)),
    "flip_method_tuple_then_int": lambda T: catch(lambda: _x(T).flip((0,), 1)),
    "flip_scalar": lambda T: T.flip(T.tensor(1.), (0,)),
    "flip_scalar_repeated": lambda T: catch(T.flip, T.tensor(1.), (0, -1)),
    "flip_grad": lambda T: (lambda x: (x.flip(0).mul(T.arange(3.)).sum().backward(), x.grad))(
        T.ones(3, requires_grad=True)),
    "fliplr_1d": lambda T: catch(T.fliplr, T.ones(3)),
    "flipud_scalar": lambda T: catch(T.flipud, T.tensor(1.)),
    # roll: shifts and dims pair up
    "roll_more_shifts": lambda T: catch(T.roll, _x(T), (1, 2), (0,)),
    "roll_more_dims": lambda T: catch(T.roll, _x(T), 1, (0, 1)),
    "roll_shifts_no_dims": lambda T: catch(T.roll, _x(T), (1, 2)),
    "roll_method_more_shifts": lambda T: catch(lambda: _x(T).roll((1, 2), 1)),
    "roll_no_shifts": lambda T: catch(T.roll, _x(T), (), ()),
    "roll_empty_dims": lambda T: T.roll(_x(T), 1, ()),
    "roll_one_shift_list": lambda T: T.roll(_x(T), [2]),
    "roll_pairs": lambda T: T.roll(_x(T), (1, 2), (0, 1)),
    "roll_scalar_dim": lambda T: catch(T.roll, T.tensor(1.), 1, -1),
    "roll_scalar_flat": lambda T: T.roll(T.tensor(1.), 1),
    # repeat: the result's size is checked
    "repeat_negative": lambda T: catch(lambda: T.ones(2).repeat(-1)),
    "repeat_negative_second": lambda T: catch(lambda: T.ones(2).repeat(2, -3)),
    "repeat_negative_of_empty": lambda T: T.ones(0).repeat(-1),
    "repeat_negative_scalar": lambda T: catch(lambda: T.tensor(1.).repeat(-1, 1)),
    # masked_select: PyTorch's broadcast error, mask first
    "masked_select_mismatch": lambda T: catch(T.masked_select, T.ones(2),
                                              T.tensor([True, False, True])),
    "masked_select_mismatch_2d": lambda T: catch(T.masked_select, T.ones(3, 2),
                                                 T.tensor([True, False, True])),
    "masked_select_broadcast": lambda T: T.masked_select(T.ones(3, 1), T.tensor([True, False])),
}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing(name):
    same(INDEXING[name])


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


METHODS = {
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


@pytest.mark.parametrize("name", sorted(METHODS))
def test_methods(name):
    same(METHODS[name])


# ----------------------------------------------------------------------------- products, norms
def _m(T, dtype, shape=(2, 2)):
    return T.ones(shape, dtype=getattr(T, dtype))


PRODUCTS = {
    # addmm checks self against mat2, then mat1 against mat2, before the shapes
    **{f"addmm_{a}_{b}_{c}": (lambda T, a=a, b=b, c=c: catch(T.addmm, _m(T, a), _m(T, b),
                                                              _m(T, c)))
       for a, b, c in [("float32", "float64", "float32"), ("float64", "float32", "float32"),
                       ("float32", "float32", "float64"), ("float64", "int64", "float32"),
                       ("int64", "float64", "int64"), ("float32", "float64", "int64")]},
    "addmm_dtype_before_shape": lambda T: catch(T.addmm, _m(T, "float32"),
                                                _m(T, "float64", (2, 3)), _m(T, "float32")),
    "addmm_dtype_before_ndim": lambda T: catch(T.addmm, _m(T, "float32"), _m(T, "float64", (2,)),
                                               _m(T, "float32")),
    "addmm_method": lambda T: catch(lambda: _m(T, "float32").addmm(_m(T, "float64"),
                                                                   _m(T, "float32"))),
    "addmm_inplace": lambda T: catch(lambda: _m(T, "float32").addmm_(_m(T, "float64"),
                                                                     _m(T, "float32"))),
    "mm": lambda T: catch(T.mm, _m(T, "float64"), _m(T, "float32")),
    "matmul": lambda T: catch(T.matmul, _m(T, "float64"), _m(T, "float32")),
    "bmm": lambda T: catch(T.bmm, _m(T, "float64", (2, 2, 2)), _m(T, "float32", (2, 2, 2))),
    "linear_input_double": lambda T: catch(T.nn.functional.linear, _m(T, "float64"),
                                           _m(T, "float32"), _m(T, "float32", (2,))),
    "linear_weight_double": lambda T: catch(T.nn.functional.linear, _m(T, "float32"),
                                            _m(T, "float64"), _m(T, "float32", (2,))),
    "linear_no_bias": lambda T: catch(T.nn.functional.linear, _m(T, "float64"),
                                      _m(T, "float32")),
    "Linear_double_input": lambda T: catch(T.nn.Linear(2, 2), _m(T, "float64")),
    "Linear_double_input_1d": lambda T: catch(T.nn.Linear(2, 2), _m(T, "float64", (2,))),
    "Linear_double_input_3d": lambda T: catch(T.nn.Linear(2, 2), _m(T, "float64", (2, 2, 2))),
    "addbmm_mat1": lambda T: catch(T.addbmm, _m(T, "float32"), _m(T, "float64", (2, 2, 2)),
                                   _m(T, "float32", (2, 2, 2))),
    "addbmm_self": lambda T: catch(T.addbmm, _m(T, "float64"), _m(T, "float32", (2, 2, 2)),
                                   _m(T, "float32", (2, 2, 2))),
    "baddbmm_batch1": lambda T: catch(T.baddbmm, _m(T, "float32", (2, 2, 2)),
                                      _m(T, "float64", (2, 2, 2)), _m(T, "float32", (2, 2, 2))),
    "baddbmm_names": lambda T: catch(T.baddbmm, _m(T, "float32", (2, 2, 2)),
                                     _m(T, "int64", (2, 2)), _m(T, "float16", (2, 2, 2))),
    "baddbmm_batch2": lambda T: catch(T.baddbmm, _m(T, "float32", (2, 2, 2)),
                                      _m(T, "float32", (2, 2, 2)), _m(T, "int64", (2, 2, 2))),
    "addmv": lambda T: catch(T.addmv, _m(T, "float32", (2,)), _m(T, "float64"),
                             _m(T, "float32", (2,))),
    "addmv_self": lambda T: catch(T.addmv, _m(T, "float64", (2,)), _m(T, "float32"),
                                  _m(T, "float32", (2,))),
    # matrix norms need a 2-tuple dim
    "norm_nuc_3d": lambda T: catch(T.norm, T.ones(2, 3, 4), "nuc"),
    "norm_nuc_3d_dims": lambda T: catch(T.norm, T.ones(2, 3, 4), "nuc", dim=(0, 1, 2)),
    "matrix_norm_one_dim": lambda T: catch(T.linalg.matrix_norm, T.ones(2, 3), "fro", dim=(0,)),
    "matrix_norm_three_dims": lambda T: catch(T.linalg.matrix_norm, T.ones(2, 3, 4), 2,
                                              dim=(0, -1, 5)),
    "matrix_norm_1d_first": lambda T: catch(T.linalg.matrix_norm, T.ones(3), "nuc",
                                            dim=(0, 1, 2)),
    "matrix_norm_int_first": lambda T: catch(T.linalg.matrix_norm, T.ones(2, 3, dtype=T.int64),
                                             "fro", dim=(0, 1, 2)),
    "linalg_norm_3d_ord": lambda T: catch(T.linalg.norm, T.ones(2, 3, 4), "nuc"),
    "linalg_norm_3d_fro": lambda T: catch(T.linalg.norm, T.ones(2, 3, 4), "fro"),
    "linalg_norm_1d_fro": lambda T: catch(T.linalg.norm, T.ones(3), "fro"),
    "linalg_norm_three_dims": lambda T: catch(T.linalg.norm, T.ones(2, 3, 4), None,
                                              dim=(0, 1, 2)),
    "linalg_norm_3d_no_ord": lambda T: T.linalg.norm(T.ones(2, 3, 4)),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products(name):
    same(PRODUCTS[name])


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


# ----------------------------------------------------------------------------- reductions
REDUCTIONS = {
    # var_mean/std_mean's running mean: an infinity followed by another value gives NaN
    **{f"var_mean_{i}": (lambda T, v=v: T.var_mean(T.tensor(v)))
       for i, v in enumerate([[-INF, -INF], [INF, 1.], [1., INF], [INF], [1., INF, 2.],
                              [-INF, INF], [1.] * 10 + [INF], [1.] * 100 + [INF] + [1.] * 50,
                              [1., -INF]])},
    "std_mean_inf_first": lambda T: T.std_mean(T.tensor([INF, 1.])),
    "std_mean_double_keepdim": lambda T: T.std_mean(
        T.tensor([[INF, 1.], [2., -INF]], dtype=T.float64), 1, keepdim=True),
    "var_mean_dim0": lambda T: T.var_mean(T.tensor([[1., INF, 3.], [INF, 2., 5.],
                                                    [4., 4., 4.]]), 0),
    "var_mean_all_dims": lambda T: T.var_mean(T.tensor([[1., 2., 3.], [4., 2., INF]]), (0, 1)),
    "var_mean_all_dims_early": lambda T: T.var_mean(T.tensor([[1., 2., INF], [4., 2., 1.]]),
                                                    (1, 0)),
    "std_mean_3d": lambda T: T.std_mean(T.tensor([[[1., INF], [3., 4.]], [[1., 2.], [3., INF]]]),
                                        (0, 2), keepdim=True),
    "var_mean_half": lambda T: T.var_mean(T.tensor([INF, 1.], dtype=T.float16)),
    "var_mean_complex": lambda T: T.var_mean(T.tensor([1 + 1j, 2.])),
    # ldexp: a float input's exponent may not be bool
    "ldexp_float_bool": lambda T: catch(T.ldexp, T.ones(2), T.tensor([True, False])),
    "ldexp_double_bool_scalar": lambda T: catch(T.ldexp, T.ones(2, dtype=T.float64),
                                                T.tensor(True)),
    "ldexp_inplace_bool": lambda T: catch(lambda: T.ones(2).ldexp_(T.tensor([True, False]))),
    "ldexp_bool_bool": lambda T: T.ldexp(T.tensor([True]), T.tensor([True, False])),
    "ldexp_int_bool": lambda T: T.ldexp(T.tensor([1, 3]), T.tensor([True, False])),
    "ldexp_float_int": lambda T: T.ldexp(T.ones(2), T.tensor([1, 2])),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name):
    same(REDUCTIONS[name])


# ----------------------------------------------------------------------------- add with alpha
def _pair(T, n=1000, dtype="float32"):
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    return T.tensor(a).to(getattr(T, dtype)), T.tensor(b).to(getattr(T, dtype))


ALPHA = {
    # float32 a + alpha * b: PyTorch's kernel is a fused multiply-add (one rounding)
    "reproducer": lambda T: T.tensor([-1.3333332538604736]).add(
        T.tensor([-0.6666667461395264]), alpha=-1.999999761581421),
    **{f"{op}_{alpha}": (lambda T, op=op, alpha=alpha: getattr(T, op)(*_pair(T), alpha=alpha))
       for op in ("add", "sub") for alpha in (-1.999999761581421, 0.1, 3.7)},
    "add_inplace": lambda T: (lambda a, b: a.add_(b, alpha=-0.3))(*_pair(T)),
    "sub_inplace": lambda T: (lambda a, b: a.sub_(b, alpha=0.3))(*_pair(T)),
    # (with a number, PyTorch's scalar tail past the last 32-element block rounds otherwise;
    # 1024 elements have no tail)
    "add_number": lambda T: _pair(T, 1024)[0].add(0.7, alpha=0.3),
    "rsub_number": lambda T: T.rsub(_pair(T)[0], 2., alpha=0.3),
    "add_broadcast": lambda T: (lambda a, b: a.reshape(10, 100).add(b[:100], alpha=0.1))(
        *_pair(T)),
    # float16 below PyTorch's 32-element vector blocks: the product and sum round in float16
    "add_half_small": lambda T: T.add(*_pair(T, 31, "float16"), alpha=3.7),
    "add_alpha_one": lambda T: T.add(*_pair(T), alpha=1),
}


@pytest.mark.parametrize("name", sorted(ALPHA))
def test_add_alpha_rounds_once(name):
    same(ALPHA[name], rtol=0, atol=0)


