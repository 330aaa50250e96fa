"""Every autograd example of the seed notes (shared/seeds/*), run under torch 2.13 and ember.

The notes were written for PyTorch 0.4-1.1; where they differ from torch 2.13 (volatile,
saved_variables, printed addresses), torch 2.13's behaviour is the expectation.
"""
import re

from differential import same, catch, warnings_of


def _no_address(text):
    return re.sub(r"0x[0-9a-f]+", "0x?", text)


# ----------------------------------------------------------------------------- notes 000
def test_000_variable_graph_z_equals_wx_plus_b():
    def scenario(T):
        V = T.autograd.Variable
        T.manual_seed(0)
        x = V(T.ones(1))
        b = V(T.tensor([0.25]), requires_grad=True)
        w = V(T.tensor([0.5]), requires_grad=True)
        y = w * x
        z = y + b
        return [_no_address(repr(z.grad_fn)),
                _no_address(repr(z.grad_fn.next_functions)),
                _no_address(repr(y.grad_fn.next_functions))]
    same(scenario)


def test_000_volatile_has_no_effect_and_warns():
    def scenario(T):
        V = T.autograd.Variable
        x, warned = warnings_of(lambda: V(T.ones(1), volatile=True))
        w = V(T.tensor([0.5]), requires_grad=True)
        y = x * w
        return [warned, (x.requires_grad, w.requires_grad, y.requires_grad)]
    same(scenario)


def test_000_custom_sigmoid_and_multiply_add_with_saved_variables():
    def scenario(T):
        printed = []

        class Sigmoid(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                output = 1 / (1 + T.exp(-x))
                ctx.save_for_backward(output)
                return output

            @staticmethod
            def backward(ctx, grad_output):
                output, = ctx.saved_variables          # deprecated name, as in the notes
                return output * (1 - output) * grad_output

        class MultiplyAdd(T.autograd.Function):
            @staticmethod
            def forward(ctx, w, x, b):
                printed.append(("type in forward", type(x).__name__))
                ctx.save_for_backward(w, x)
                return w * x + b

            @staticmethod
            def backward(ctx, grad_output):
                w, x = ctx.saved_variables
                printed.append(("type in backward", type(x).__name__))
                return grad_output * x, grad_output * w, grad_output * 1

        x = T.autograd.Variable(T.ones(1))
        w = T.autograd.Variable(T.tensor([0.3]), requires_grad=True)
        b = T.autograd.Variable(T.tensor([0.6]), requires_grad=True)
        (z, warned) = warnings_of(lambda: _run(MultiplyAdd, w, x, b))
        s_in = T.tensor([-2.0, 0.0, 3.0], requires_grad=True)
        (s, warned2) = warnings_of(lambda: _run_sum(Sigmoid, s_in))
        return [printed, x.grad, w.grad, b.grad, z, warned, s_in.grad, warned2]

    def _run(fn, *args):
        z = fn.apply(*args)
        z.backward()
        return z

    def _run_sum(fn, x):
        s = fn.apply(x)
        s.sum().backward()
        return s
    same(scenario)


# ----------------------------------------------------------------------------- notes 001
def test_001_no_grad():
    def scenario(T):
        x = T.randn(3, requires_grad=True)
        r = [x.requires_grad, (x ** 2).requires_grad]
        with T.no_grad():
            r.append((x ** 2).requires_grad)
        r.append((x ** 2).requires_grad)
        return r
    same(scenario)


def test_001_detach_versus_data():
    def scenario(T):
        a = T.tensor([7., 0, 0], requires_grad=True)
        b = a + 2
        r = [repr(b)]
        loss = T.mean(b * b)
        b_ = b.detach()
        b_.zero_()
        r.append(repr(b))
        err = catch(loss.backward)
        r.append(err[:2])
        r.append(err[2].split("\n")[0])
        a = T.tensor([7., 0, 0], requires_grad=True)
        b = a + 2
        loss = T.mean(b * b)
        b_ = b.data
        b_.zero_()
        r.append(repr(b))
        loss.backward()
        r.append(a.grad)                # the silently wrong gradient of the notes: zeros
        return r
    same(scenario)


def test_001_cpu_and_gpu_device_pattern():
    def scenario(T):
        device = T.device("cuda") if T.cuda.is_available() else T.device("cpu")
        a = T.rand([3, 3]).to(device)
        y = T.rand([3, 3], requires_grad=True, device=device)
        y_ = y.cpu().detach().numpy()
        y2 = y.detach().cpu().numpy()
        return [str(device), a.device.type, y_.shape, y2.shape, catch(lambda: y.numpy()),
                T.cuda.is_available()]
    same(scenario)


def test_001_item_and_tolist():
    def scenario(T):
        x = T.tensor([-0.4717], requires_grad=True)
        r = [repr(x), x.item(), type(x.item()).__name__]
        x2 = T.tensor([[-1.3069953918457031, -0.2710231840610504],
                       [-1.26217520236969, 0.5559719800949097]])
        r += [x2.tolist(), catch(lambda: x2.item())]
        return r
    same(scenario)


# ----------------------------------------------------------------------------- notes 004
def test_004_leaf_and_result_attributes():
    def scenario(T):
        x = T.tensor([0.2, 0.4, 0.6], requires_grad=True)
        y = x ** 2
        z = x + x
        return ["x requires grad: {},  is leaf: {},  grad: {},  grad_fn: {}.".format(
                    x.requires_grad, x.is_leaf, x.grad, x.grad_fn),
                "y requires grad: {},  is leaf: {},  grad: {},  grad_fn: {}.".format(
                    y.requires_grad, y.is_leaf, y.grad, _no_address(repr(y.grad_fn))),
                "z requires grad: {},  is leaf: {},  grad: {},  grad_fn: {}.".format(
                    z.requires_grad, z.is_leaf, z.grad, _no_address(repr(z.grad_fn)))]
    same(scenario)


def test_004_scalar_backward():
    def scenario(T):
        x = T.tensor(1.0, requires_grad=True)
        y = T.tensor(2.0, requires_grad=True)
        z = x ** 2 + y
        z.backward()
        return [repr(z), repr(x.grad), repr(y.grad)]
    same(scenario)


def test_004_non_scalar_backward_needs_grad_tensors():
    def scenario(T):
        x = T.ones(2, requires_grad=True)
        z = x + 2
        r = [catch(z.backward)]
        z.sum().backward()
        r.append(repr(x.grad))
        x = T.ones(2, requires_grad=True)
        z = x + 2
        z.backward(T.ones_like(z))
        r.append(repr(x.grad))
        return r
    same(scenario)


def test_004_autograd_grad_signature():
    def scenario(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = T.tensor([3.0, 4.0], requires_grad=True)
        out = (x * x * y).sum()
        g = T.autograd.grad(out, [x, y], grad_outputs=None, retain_graph=True,
                            create_graph=False, only_inputs=True, allow_unused=False)
        unused = catch(lambda: T.autograd.grad(out, [x, T.ones(1, requires_grad=True)],
                                               retain_graph=True))
        return [g, unused, x.grad]
    same(scenario)
