"""Conversions out of a tensor: item, tolist, numpy (shared memory), __array__, Python number
protocols, len/iter/format, copy.deepcopy and pickle — against torch."""
import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember
from tensor_compare import check, fresh_process_output

CASES = [
    "t.tensor(3.5).item(), t.tensor([7]).item(), t.tensor([[True]]).item(), "
    "t.tensor(2+1j).item(), type(t.tensor(1, dtype=t.int8).item()), "
    "type(t.tensor(1.5, dtype=t.float16).item()), t.tensor(1.1, dtype=t.bfloat16).item(), "
    "t.tensor(0.1).item(), t.tensor(1, dtype=t.uint8).item()",
    "t.tensor([1., 2]).item()", "t.tensor([]).item()",
    "t.tensor([[1, 2], [3, 4]]).tolist(), t.tensor(2.5).tolist(), "
    "t.tensor([1.5], dtype=t.float16).tolist(), t.tensor([1.1], dtype=t.bfloat16).tolist(), "
    "t.tensor([1.1]).tolist(), t.tensor([True]).tolist(), t.tensor([1j]).tolist(), "
    "t.zeros(2, 0).tolist(), t.zeros(2, 3).t().tolist()",
    "float(t.tensor([2.5])), int(t.tensor(2.7)), int(t.tensor(-2.7)), bool(t.tensor([0.])), "
    "bool(t.tensor(1)), float(t.tensor(3)), int(t.tensor(True)), float(t.tensor([[1.5]]))",
    "float(t.tensor([1., 2]))", "int(t.tensor([1, 2]))", "int(t.tensor([]))",
    "bool(t.tensor([1, 2]))", "bool(t.tensor([]))", "complex(t.tensor([1., 2]))",
    "[1, 2, 3][t.tensor(1)], [1, 2, 3][t.tensor([2])], t.tensor(2).__index__(), "
    "[1, 2, 3][t.tensor(True)], list(range(5))[t.tensor(1):t.tensor(3)]",
    "[1, 2, 3][t.tensor(1.)]", "[1, 2, 3][t.tensor([1, 2])]",
    "len(t.zeros(3, 2)), list(t.tensor([1, 2])), [r.tolist() for r in t.tensor([[1, 2], [3, 4]])]",
    "len(t.tensor(1))", "iter(t.tensor(1))",
    "format(t.tensor(2.5), '.3f'), format(t.tensor(3), 'd'), f'{t.tensor([1., 2])}', "
    "format(t.tensor(1.5)), '{:.2f}'.format(t.tensor([2.5])), '{}'.format(t.tensor(2)), "
    "f'{t.tensor(7):>4}'",
    "format(t.tensor([1., 2]), '.2f')",
    "complex(t.tensor(1+2j)), complex(t.tensor(2.))",
    "t.tensor([1., 2], requires_grad=True).numpy()",
    "t.tensor([1., 2], dtype=t.bfloat16).numpy()",
    "t.tensor([1., 2]).numpy(), t.tensor([1., 2], requires_grad=True).numpy(force=True), "
    "t.tensor([1., 2], requires_grad=True).detach().numpy()",
    "t.tensor(1.5).numpy(), t.tensor([1, 2], dtype=t.int16).numpy().dtype, "
    "t.tensor([1.], dtype=t.float16).numpy().dtype, t.zeros(2, 3).t().numpy().strides",
    "t.tensor([1., 2], requires_grad=True)[0].item()",
    "t.tensor([1., 2], requires_grad=True).tolist()",
    "t.tensor([1, 2]).__array__(), t.tensor([1, 2]).__array__(np.float64)",
    "np.asarray(t.tensor([1., 2])), np.array(t.tensor([[1, 2]])), np.asarray(t.tensor(3.))",
    "np.array(t.tensor([1., 2], requires_grad=True))",
    "(lambda x: (x.element_size(), x.itemsize, x.nbytes, x.nelement(), x.ndimension()))"
    "(t.zeros(2, 3, dtype=t.float16))",
]


@pytest.mark.parametrize("expr", CASES)
def test_conversions_match_torch(expr):
    # torch's __array__ lacks numpy 2's `copy` keyword and so warns in np.array(); ember not
    check(expr, warns="np.a" not in expr)


def test_numpy_shares_memory_both_ways():
    x = ember.zeros(2, 3)
    a = x.numpy()
    a[0, 1] = 5
    x[1, 2] = 7
    assert x[0, 1].item() == 5 and a[1, 2] == 7
    v = x.t()                      # a view's numpy() shares too
    v.numpy()[0, 1] = -1
    assert x[1, 0].item() == -1


def test_float_of_a_grad_tensor_warns_once_per_process():
    """PyTorch warns the first time float() reads a tensor that requires grad (once per
    process), so the check runs in fresh interpreters."""
    torch_out, ember_out = fresh_process_output(
        "import warnings, {lib}\n"
        "x = {lib}.tensor([1., 2], requires_grad=True)\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    float(x[0]); float(x[1]); int(x[0]); complex(x[1])\n"
        "print(len(w)); print(w[0].message)")
    assert ember_out == torch_out and torch_out.startswith("1\n")


# ----------------------------------------------------------------------------- copies
@pytest.mark.parametrize("expr", [
    "(lambda x: (copy.deepcopy(x), copy.deepcopy(x) is x, copy.deepcopy(x).requires_grad))"
    "(t.tensor([1., 2], requires_grad=True))",
    "copy.deepcopy(t.tensor([1., 2], requires_grad=True) * 2)",
    "(lambda x: copy.copy(x) is x)(t.tensor([1.]))",
    "(lambda x: (lambda y: (y.__setitem__(0, 5.), x)[1])(copy.deepcopy(x)))(t.tensor([1., 2]))",
    "(lambda x: (lambda y: (y[0] is y[1], y[0].data_ptr() == y[1].data_ptr()))"
    "(copy.deepcopy([x, x])))(t.tensor([1.]))",
    "(lambda x: pickle.loads(pickle.dumps(x)))(t.tensor([[1., 2], [3, 4]]))",
    "(lambda x: pickle.loads(pickle.dumps(x)))(t.tensor([1., 2], requires_grad=True))",
    "(lambda x: pickle.loads(pickle.dumps(x)))(t.tensor([1, 2], dtype=t.bfloat16))",
    "(lambda x: pickle.loads(pickle.dumps(x)))(t.tensor([True, False]))",
    "(lambda x: pickle.loads(pickle.dumps(x[1:])))(t.tensor([1., 2, 3]))",
    "(lambda x: pickle.loads(pickle.dumps(x)))(t.device('cuda:1'))",
    "(lambda x: pickle.loads(pickle.dumps(x)))(t.float16)",
    "(lambda x: pickle.loads(pickle.dumps(x)))(t.Size([2, 3]))",
])
def test_copy_and_pickle(expr):
    check(expr, {"copy": copy, "pickle": pickle})


def test_deepcopy_keeps_grad_and_attributes():
    x = ember.tensor([1., 2], requires_grad=True)
    (x * 3).sum().backward()
    x.tag = "weights"
    y = copy.deepcopy(x)
    assert y.grad.tolist() == [3., 3.] and y.grad is not x.grad and y.tag == "weights"
    assert y.is_leaf and y.requires_grad


def test_np_array_copies_np_asarray_shares():
    got = []
    for lib in (torch, ember):
        x = lib.tensor([1., 2, 3])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # torch's numpy-2 copy-keyword warning
            np.array(x)[0] = 5
            np.asarray(x)[1] = 7
            np.array(x, dtype=np.float64)[2] = 9
        got.append(x.tolist())
    assert got[1] == got[0] == [1., 7., 3.]


def test_dlpack_round_trips():
    t = torch.arange(6.).reshape(2, 3)
    e = ember.from_dlpack(t)
    assert e.dtype is ember.float32 and e.tolist() == t.tolist()
    t.add_(1)                                   # shares torch's memory
    assert e.tolist() == t.tolist()
    e2 = ember.arange(4, dtype=ember.int64)
    back = torch.from_dlpack(e2)
    assert back.dtype == torch.int64 and back.tolist() == [0, 1, 2, 3]
    e2.add_(5)
    assert back.tolist() == [5, 6, 7, 8]
    caps = ember.to_dlpack(ember.tensor([1., 2.]))
    assert torch.from_dlpack(caps).tolist() == [1., 2.]
    assert ember.from_dlpack(torch.to_dlpack(torch.tensor([3, 4]))).tolist() == [3, 4]
    assert ember.from_dlpack(np.array([True, False])).dtype is ember.bool
    assert type(ember.to_dlpack(ember.ones(1))).__name__ == type(torch.to_dlpack(
        torch.ones(1))).__name__
