"""Reductions, scans and softmax vs torch: values, dtypes, gradients, node names, errors."""
import pytest

from opinfo import (REDUCTION_OPS, params, check_forward, check_backward, check_gradcheck,
                    check_gradgradcheck, check_node_names)

GRAD_OPS = [op for op in REDUCTION_OPS if op.grad]


@pytest.mark.parametrize("op,dtype", params(REDUCTION_OPS))
def test_forward(op, dtype):
    check_forward(op, dtype)


@pytest.mark.parametrize("op,dtype", params(GRAD_OPS, "grad_dtypes"))
def test_backward(op, dtype):
    check_backward(op, dtype)


@pytest.mark.parametrize("op", [op for op in GRAD_OPS if op.gradcheck], ids=str)
def test_gradcheck(op):
    check_gradcheck(op)


@pytest.mark.parametrize("op", [op for op in GRAD_OPS if op.gradgrad], ids=str)
def test_gradgradcheck(op):
    check_gradgradcheck(op)


@pytest.mark.parametrize("op", GRAD_OPS, ids=str)
def test_node_names(op):
    check_node_names(op)
