"""torch.library's custom operators against torch: custom_op calls, register_autograd
(gradients, node names, the error without one), mutating ops, tuple outputs, register_fake /
impl_abstract / register_vmap, and infer_schema's schemas."""
import importlib
import itertools
from typing import Optional

import pytest
import torch
import torch.library        # noqa: F401

from differential import catch, same, warnings_of

_ids = itertools.count()


def _L(T):
    return importlib.import_module(T.__name__ + ".library")


def _name(tag):
    # torch keeps every operator for the whole process: each scenario defines new ones
    return f"embertest::{tag}_{next(_ids)}"


def test_custom_op_with_and_without_autograd():
    def scenario(T):
        L = _L(T)
        name = _name("scale")

        @L.custom_op(name, mutates_args=())
        def scale(x: T.Tensor, k: float) -> T.Tensor:
            return x * k

        x = T.ones(2, requires_grad=True)
        missing = catch(scale(x, 3.0).sum().backward)

        def setup(ctx, inputs, output):
            x, k = inputs
            ctx.k = k
            ctx.save_for_backward(x)

        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * ctx.k * x, None
        L.register_autograd(name, backward, setup_context=setup)
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = scale(x, 3.0)
        y.sum().backward()
        plain = scale(T.ones(2), 2.0)
        with T.no_grad():
            quiet = scale(x, 2.0)
        return {"repr": repr(scale).split("(")[0], "missing": missing[:2],
                "missing_text": missing[2].split(" but ")[1], "y": y, "grad": x.grad,
                "node": y.grad_fn.name().split("_embertest_")[0],
                "plain": (plain, plain.requires_grad, plain.grad_fn),
                "quiet": quiet.requires_grad, "has_name": hasattr(scale, "__name__")}
    same(scenario)


def test_custom_op_autograd_registered_on_the_op_object():
    def scenario(T):
        L = _L(T)

        @L.custom_op(_name("cube"), mutates_args=())
        def cube(x: T.Tensor) -> T.Tensor:
            return x ** 3

        def setup(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * g
        cube.register_autograd(backward, setup_context=setup)
        x = T.tensor([1.0, -2.0], requires_grad=True)
        out = cube(x)
        out.backward(T.tensor([1.0, 0.5]))
        return out, x.grad
    same(scenario)


def test_mutating_and_tuple_custom_ops():
    def scenario(T):
        L = _L(T)

        @L.custom_op(_name("twice"), mutates_args=("out",))
        def twice(x: T.Tensor, out: T.Tensor) -> None:
            out.copy_(x * 2)

        @L.custom_op(_name("split2"), mutates_args=())
        def split2(x: T.Tensor) -> tuple[T.Tensor, T.Tensor]:
            return x + 1, x - 1
        o = T.zeros(2)
        return twice(T.ones(2), o), o, split2(T.ones(1))
    same(scenario)


def test_fake_vmap_and_impl_abstract_registrations():
    def scenario(T):
        L = _L(T)
        name = _name("vm")

        @L.custom_op(name, mutates_args=())
        def vm(x: T.Tensor) -> T.Tensor:
            return x.sin()
        fake = L.register_fake(name)(lambda x: T.empty_like(x))
        L.register_vmap(name, lambda info, in_dims, x: (x.sin(), 0))
        _, seen = warnings_of(lambda: L.impl_abstract(name)(lambda x: T.empty_like(x)))
        return callable(fake), seen, T.func.vmap(vm)(T.arange(4.0).view(2, 2))
    same(scenario)


def test_custom_op_errors():
    def scenario(T):
        L = _L(T)

        def no_annotation(x):
            return x
        return [catch(lambda: L.custom_op(_name("noann"), mutates_args=())(no_annotation)),
                catch(lambda: L.custom_op(_name("nomut"))(no_annotation))]
    same(scenario)


def _f(T):
    def f(x: T.Tensor, y: Optional[T.Tensor], xs: list[T.Tensor], n: int, s: float, b: bool,
          st: str, d: T.dtype = T.float32) -> tuple[T.Tensor, T.Tensor]:
        pass
    return f


def _g(T):
    def g(x: T.Tensor, n: int = 3, s: float = 1.5, b: bool = True, st: str = "a",
          o: Optional[int] = None, ns: list[int] = None) -> None:
        pass
    return g


def _h(T):
    def h(x: T.Tensor, fs: list[float]) -> list[T.Tensor]:
        pass
    return h


@pytest.mark.parametrize("which,kwargs", [
    ("f", {"mutates_args": ("x",)}), ("f", {"mutates_args": (), "op_name": "foo"}),
    ("g", {"mutates_args": "unknown"}), ("h", {"mutates_args": ()}),
    ("f", {"mutates_args": ("x", "y")})])
def test_infer_schema(which, kwargs):
    def scenario(T):
        fn = {"f": _f, "g": _g, "h": _h}[which](T)
        return catch(_L(T).infer_schema, fn, **kwargs)
    same(scenario)


def test_register_autocast():
    def scenario(T):
        L = _L(T)
        name = _name("ac")
        seen = []

        @L.custom_op(name, mutates_args=())
        def add(x: T.Tensor, y: T.Tensor) -> T.Tensor:
            seen.append((str(x.dtype), str(y.dtype), T.is_autocast_enabled("cpu")))
            return x + y
        L.register_autocast(name, "cpu", T.float16)
        with T.autocast("cpu", dtype=T.bfloat16):
            inside = add(T.ones(2), T.ones(2, dtype=T.float64))
            ints = add(T.ones(2, dtype=T.int32), T.ones(2, dtype=T.int32))
        outside = add(T.ones(2), T.ones(2))
        return inside.dtype, ints.dtype, outside.dtype, seen
    same(scenario)
