"""Memory formats and layouts as objects of their own types (torch.memory_format,
torch.layout), and channels_last_3d beside channels_last."""
import pytest

from differential import same, catch


def test_formats_are_typed_and_print_as_torch():
    def scenario(T):
        names = ["contiguous_format", "preserve_format", "channels_last", "channels_last_3d"]
        return ([repr(getattr(T, n)) for n in names] + [str(T.channels_last), repr(T.strided)] +
                [isinstance(getattr(T, n), T.memory_format) for n in names] +
                [isinstance(T.strided, T.layout), T.ones(2).layout == T.strided,
                 repr(T.ones(2).layout), T.channels_last == T.channels_last,
                 T.channels_last != T.channels_last_3d])
    same(scenario)


@pytest.mark.parametrize("make", ["to", "contiguous", "empty", "clone", "empty_like"])
def test_channels_last_3d_strides(make):
    def scenario(T):
        x = T.arange(2 * 3 * 4 * 5 * 6.0).view(2, 3, 4, 5, 6)
        cl = T.channels_last_3d
        y = {"to": lambda: x.to(memory_format=cl),
             "contiguous": lambda: x.contiguous(memory_format=cl),
             "empty": lambda: T.empty(2, 3, 4, 5, 6, memory_format=cl),
             "clone": lambda: x.to(memory_format=cl).clone(),
             "empty_like": lambda: T.empty_like(x.to(memory_format=cl))}[make]()
        r = [y.stride(), y.is_contiguous(), y.is_contiguous(memory_format=cl),
             y.is_contiguous(memory_format=T.channels_last)]
        if make != "empty" and make != "empty_like":
            r.append(y)
        return r
    same(scenario)


def test_channels_last_3d_errors_and_other_ranks():
    def scenario(T):
        cl = T.channels_last_3d
        return [catch(lambda: T.ones(2, 3, 4, 5).to(memory_format=cl)),
                catch(lambda: T.empty(2, 3, 4, memory_format=cl)),
                catch(lambda: T.ones(2, 3, 4, 5, 6).contiguous(memory_format=T.channels_last)),
                T.ones(2, 3, 4, 5).is_contiguous(memory_format=cl),
                T.ones(1, 1, 1, 1, 1).to(memory_format=cl).stride()]
    same(scenario)


def test_conv_tbc_at_the_top_level():
    def scenario(T):
        x = T.arange(24.0).view(4, 2, 3)
        w = T.ones(2, 3, 5)
        return T.conv_tbc(x, w, T.zeros(5), 1)
    same(scenario)


@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d"])
def test_module_to_memory_format_lays_out_4d_and_5d_parameters(fmt):
    def scenario(T):
        torch_fmt = getattr(T, fmt)
        m = T.nn.Sequential(T.nn.Conv2d(4, 3, 3), T.nn.Conv3d(3, 2, 2), T.nn.Linear(3, 3),
                            T.nn.BatchNorm2d(3))
        return catch(lambda: [p.stride() for p in m.to(memory_format=torch_fmt).parameters()])
    same(scenario)


def test_module_to_dtype_and_memory_format():
    def scenario(T):
        m = T.nn.Conv2d(4, 3, 3).to(T.float64, memory_format=T.channels_last)
        return m.weight.stride(), m.weight.dtype, m.weight.is_contiguous(
            memory_format=T.channels_last)
    same(scenario)


def test_to_memory_format_aliases_by_torchs_stride_order_rule():
    # .to(memory_format=f) returns the tensor itself when torch's suggested format of it is f:
    # judged by the order of the strides (a strided slice of an NHWC tensor is NHWC), not by
    # is_contiguous(f)
    def scenario(T):
        x = T.ones(2, 3, 8, 8).to(memory_format=T.channels_last)[:, :, ::2, ::2]
        z = T.ones(1, 1, 4, 4).to(memory_format=T.channels_last)
        w = T.ones(2, 3, 4, 4).to(memory_format=T.channels_last)
        return (x.to(memory_format=T.channels_last) is x,
                z.to(memory_format=T.contiguous_format) is z,
                z.to(memory_format=T.contiguous_format).stride(),
                w.to(memory_format=T.channels_last) is w, T.ones(2, 3).to(
                    memory_format=T.contiguous_format).stride())
    same(scenario)
