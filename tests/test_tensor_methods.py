"""ember/ops/tensor_methods.py: Tensor's one method table. Its binder refuses a name bound
twice, so no method can shadow another (dead code); the names bound report PyTorch's names."""
import pytest
import torch

import ember
from ember.ops import tensor_methods


def test_binding_a_bound_name_again_is_refused():
    with pytest.raises(RuntimeError, match=r"Tensor.add is bound twice"):
        tensor_methods._bind({"add": lambda self: None})
    with pytest.raises(RuntimeError, match=r"Tensor.numel is bound twice"):     # class body
        tensor_methods._bind({"numel": lambda self: None})
    assert ember.Tensor.add is not None and ember.tensor([1.0, 2.0]).numel() == 2


def test_a_name_declared_in_two_tables_is_refused(monkeypatch):
    monkeypatch.setitem(tensor_methods.OTHER_METHODS, "sum", lambda self: None)
    with pytest.raises(RuntimeError, match=r"Tensor.sum is declared twice"):
        tensor_methods._table()


def test_the_table_binds_every_method_once():
    table = tensor_methods._table()        # (built again: the same names)
    assert set(table) <= set(vars(ember.Tensor))
    assert len(table) > 550
    for name, value in table.items():
        assert isinstance(vars(ember.Tensor)[name], property) == isinstance(value, property)


@pytest.mark.parametrize("name", ["less", "swapaxes", "multiply_", "clip_",
                                  "arctan2", "true_divide_", "split", "sum", "addmv_"])
def test_aliases_report_their_own_names(name):
    # a wrong keyword names the method as PyTorch's error does (aliases get renamed copies)
    def call(T):
        x = T.ones(2, 2)
        getattr(x, name)(bogus=1)

    with pytest.raises(TypeError) as expected:
        call(torch)
    with pytest.raises(TypeError) as got:
        call(ember)
    # (the name only: torch's native ops list their signatures after it)
    assert str(got.value).split("(")[0] == str(expected.value).split("(")[0]
