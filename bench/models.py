"""The benchmark networks, written once for any torch-like module `T` (torch or ember)."""
import numpy as np


def copy_weights(src, dst, T):
    """torch module -> ember module (same architecture), through numpy."""
    dst.load_state_dict({k: T.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


def mlp(T):
    nn = T.nn
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def simple(T):
    nn = T.nn

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
    return Simple()


def lenet(T):
    nn = T.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


CASES = {
    "mlp": (mlp, (128, 784), 10, dict(lr=0.01, momentum=0.9)),
    "simple": (simple, (8, 3, 10, 10), 20, dict(lr=1.0)),
    "lenet": (lenet, (64, 1, 28, 28), 10, dict(lr=0.01, momentum=0.9)),
}


def make_step(T, case, torch_model=None):
    build, shape, classes, opt_args = CASES[case]
    rng = np.random.default_rng(0)
    x = T.tensor(rng.standard_normal(shape).astype(np.float32))
    y = T.tensor(rng.integers(0, classes, shape[0]))
    model = build(T)
    if torch_model is not None:
        copy_weights(torch_model, model, T)
    opt = T.optim.SGD(model.parameters(), **opt_args)
    loss_fn = T.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return step, model




# ----------------------------------------------------------------------------- bench/train_steps.py
# Four networks as their public programs write them (with `T` for `torch`), each with the
# training step its program runs. Each builder returns (model, make_optimizer, step_fn) where
# step_fn(model, opt, batch) runs one step and returns the loss tensor.

def char_gpt(T, vocab=65, block=64, n_layer=4, n_head=4, n_embd=128, dropout=0.0):
    """nanoGPT/minGPT's GPT (char-level config, smaller): token and position embeddings,
    pre-LayerNorm blocks of causal self-attention (softmax over a masked q k^T) and a GELU
    MLP, the head tied to the token embedding."""
    nn, F = T.nn, T.nn.functional
    import math

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.attn_dropout = nn.Dropout(dropout)
            self.resid_dropout = nn.Dropout(dropout)
            self.register_buffer("bias", T.tril(T.ones(block, block)).view(1, 1, block, block))

        def forward(self, x):
            B, L, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            k = k.view(B, L, n_head, C // n_head).transpose(1, 2)
            q = q.view(B, L, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, L, n_head, C // n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :L, :L] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, L, C)
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * n_embd, n_embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, n_embd), wpe=nn.Embedding(block, n_embd),
                drop=nn.Dropout(dropout), h=nn.ModuleList([Block() for _ in range(n_layer)]),
                ln_f=nn.LayerNorm(n_embd)))
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight
            self.apply(self._init_weights)

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                T.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    T.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                T.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets):
            b, t = idx.size()
            pos = T.arange(0, t, dtype=T.long)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for blk in self.transformer.h:
                x = blk(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    def step(model, opt, batch):
        x, y = batch
        loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        T.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    return GPT(), lambda m: T.optim.AdamW(m.parameters(), lr=1e-3), step


def lstm_lm(T, ntoken=1000, ninp=200, nhid=200, nlayers=2, dropout=0.2, lr=20.0):
    """pytorch/examples word_language_model's RNNModel (LSTM), its training step: detach the
    hidden state, forward, NLL loss, backward, clip_grad_norm_(0.25), SGD update."""
    nn, F = T.nn, T.nn.functional

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output).view(-1, ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            return (weight.new_zeros(nlayers, bsz, nhid), weight.new_zeros(nlayers, bsz, nhid))

    hidden = {}
    criterion = nn.NLLLoss()

    def repackage(h):
        return h.detach() if isinstance(h, T.Tensor) else tuple(repackage(v) for v in h)

    def step(model, opt, batch):
        data, targets = batch
        h = hidden.get("h")
        h = model.init_hidden(data.size(1)) if h is None else repackage(h)
        model.zero_grad()
        output, hidden["h"] = model(data, h)
        loss = criterion(output, targets)
        loss.backward()
        T.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        return loss

    return RNNModel(), lambda m: T.optim.SGD(m.parameters(), lr=lr), step


def mnist_cnn(T):
    """pytorch/examples mnist's Net and its step (Adadelta, lr 1.0)."""
    nn, F = T.nn, T.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = T.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.dropout2(x)
            return F.log_softmax(self.fc2(x), dim=1)

    def step(model, opt, batch):
        data, target = batch
        opt.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        opt.step()
        return loss

    return Net(), lambda m: T.optim.Adadelta(m.parameters(), lr=1.0), step


def tiny_mlp(T):
    """A 2-32-32-32-1 tanh MLP regressing a function of two inputs, MSE loss, Adam."""
    nn = T.nn
    model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                          nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
    loss_fn = nn.MSELoss()

    def step(model, opt, batch):
        x, y = batch
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return model, lambda m: T.optim.Adam(m.parameters(), lr=1e-3), step


def train_batch(T, name):
    """The fixed batch each network trains on (NumPy's generator: the same in both libraries)."""
    rng = np.random.default_rng(0)
    if name == "gpt":
        ids = rng.integers(0, 65, (16, 65))
        return T.tensor(ids[:, :-1]), T.tensor(ids[:, 1:])
    if name == "lstm":
        ids = rng.integers(0, 1000, (36, 20))
        return T.tensor(ids[:-1]), T.tensor(ids[1:].reshape(-1))
    if name == "cnn":
        return (T.tensor(rng.standard_normal((64, 1, 28, 28)).astype(np.float32)),
                T.tensor(rng.integers(0, 10, 64)))
    x = rng.uniform(-1, 1, (32, 2)).astype(np.float32)
    y = (np.sin(3 * x[:, :1]) * x[:, 1:]).astype(np.float32)
    return T.tensor(x), T.tensor(y)


TRAIN_MODELS = {
    "gpt": ("char GPT 4x4x128, block 64, batch 16, AdamW, clip 1.0", char_gpt),
    "lstm": ("LSTM LM 2x200, vocab 1000, seq 35, batch 20, SGD, clip 0.25", lstm_lm),
    "cnn": ("MNIST CNN, batch 64, Adadelta", mnist_cnn),
    "mlp": ("tiny MLP 2-32-32-32-1, batch 32, Adam", tiny_mlp),
}
