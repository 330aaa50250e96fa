"""Elementwise ops vs torch: values, dtypes, gradients, double gradients, node names, errors."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from opinfo import (POINTWISE_OPS, LOGIC_OPS, params, check_forward, check_backward,
                    check_gradcheck, check_gradgradcheck, check_node_names, check_same_error,
                    assert_same, make, NUMERIC, ALL_DTYPES, TOLERANCE)

GRAD_OPS = [op for op in POINTWISE_OPS if op.grad]


@pytest.mark.parametrize("op,dtype", params(POINTWISE_OPS + LOGIC_OPS))
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
