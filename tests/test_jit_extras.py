"""torch.jit.isinstance (typing containers checked in eager mode, with torch's warning for
empty containers) and torch.jit.Error, against torch."""
from typing import Dict, List, Optional, Tuple, Union

import pytest

from differential import catch, same, warnings_of


@pytest.mark.parametrize("case", range(20))
def test_jit_isinstance(case):
    def scenario(T):
        obj, target = [
            ([1, 2], List[int]), ([1, "a"], List[int]), ([1, 2], list[int]),
            ({"a": T.ones(1)}, Dict[str, T.Tensor]), ({"a": 1}, Dict[str, T.Tensor]),
            ({1: "a"}, dict[int, str]), (3, int), ((1, "a"), Tuple[int, str]),
            ((1, "a", 2), Tuple[int, str]), ((1, 2), tuple[int, int]), (None, type(None)),
            (None, Optional[int]), (3, Optional[int]), ("x", Optional[int]), ([], List[int]),
            ({}, Dict[str, int]), ([1], List[str]), (3, Union[int, str]),
            ([[1], [2, 3]], List[List[int]]), (T.ones(1), T.Tensor),
        ][case]
        return warnings_of(lambda: T.jit.isinstance(obj, target))
    same(scenario)


def test_jit_error():
    def scenario(T):
        def boom():
            raise T.jit.Error("scripted failure")
        return [issubclass(T.jit.Error, Exception), issubclass(T.jit.Error, RuntimeError),
                catch(boom)]
    same(scenario)
