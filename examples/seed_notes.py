"""The seed notes' examples, run as written (modern PyTorch spelling) on ember.

    python examples/seed_notes.py

Swap the import for `import torch` and the printout is the same (object addresses aside).
"""
import ember as torch
from ember import nn
from ember.autograd import Function

# --- the graph of z = w * x + b
x = torch.ones(1)
b = torch.tensor([0.25], requires_grad=True)
w = torch.tensor([0.5], requires_grad=True)
y = w * x
z = y + b
print(z.grad_fn.name(), [f.name() if f else None for f, _ in z.grad_fn.next_functions])
z.backward()
print("w.grad", w.grad, "b.grad", b.grad)

# --- non-scalar outputs need a gradient to weight them
x = torch.ones(2, requires_grad=True)
z = x + 2
z.backward(torch.ones_like(z))
print("x.grad", x.grad)

# --- autograd.grad and higher-order gradients
x = torch.tensor([2.0], requires_grad=True)
g, = torch.autograd.grad(x ** 3, x, create_graph=True)
g2, = torch.autograd.grad(g, x)
print("d/dx x^3 =", g, " d2/dx2 =", g2)


# --- a custom Function
class MultiplyAdd(Function):
    @staticmethod
    def forward(ctx, w, x, b):
        ctx.save_for_backward(w, x)
        return w * x + b

    @staticmethod
    def backward(ctx, grad_output):
        w, x = ctx.saved_tensors
        return grad_output * x, grad_output * w, grad_output


x = torch.ones(1)
w = torch.tensor([0.3], requires_grad=True)
b = torch.tensor([0.6], requires_grad=True)
MultiplyAdd.apply(w, x, b).backward()
print("custom Function grads", w.grad, b.grad)

# --- detach() is tracked, .data is not
a = torch.tensor([7., 0, 0], requires_grad=True)
b = a + 2
loss = torch.mean(b * b)
b.detach().zero_()
try:
    loss.backward()
except RuntimeError as e:
    print("detach + in-place:", str(e).splitlines()[0][:80], "...")

# --- the Simple network: one SGD step
class Simple(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, padding=1, bias=False)
        self.conv2 = nn.Conv2d(16, 32, 3, 1, padding=1, bias=False)
        self.linear = nn.Linear(32 * 10 * 10, 20, bias=False)

    def forward(self, x):
        x = self.conv1(x)
        x = self.conv2(x)
        return self.linear(x.view(x.size(0), -1))


model = Simple()
for m in model.parameters():
    m.data.fill_(0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
loss = nn.CrossEntropyLoss()(model(torch.ones(8, 3, 10, 10)), torch.ones(8, dtype=torch.long))
loss.backward()
optimizer.step()
print("loss", loss.item(), "conv1 weight after the step", model.conv1.weight[0][0][0])
optimizer.zero_grad()
print("grad after zero_grad:", model.conv1.weight.grad)
