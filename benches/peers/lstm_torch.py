"""ADBench's LSTM objective in PyTorch (a Python loop over the characters), and its gradient
with respect to the main and extra parameters (`torch.autograd.grad`)."""
import torch

from torch_peer import host, lse, tensors


def _predict(main, extra, state, x):
    x = x * extra[0]
    new = []
    for i in range(main.shape[0]):
        w, b = main[i, 0], main[i, 1]
        h, c = state[i][0], state[i][1]
        forget = torch.sigmoid(x * w[0] + b[0])
        ingate = torch.sigmoid(h * w[1] + b[1])
        outgate = torch.sigmoid(x * w[2] + b[2])
        change = torch.tanh(h * w[3] + b[3])
        c = c * forget + ingate * change
        h = outgate * torch.tanh(c)
        new.append((h, c))
        x = h
    return new, x * extra[1] + extra[2]


def lstm_objective(main, extra, state, seq):
    c, b = seq.shape
    st = [(state[i, 0], state[i, 1]) for i in range(state.shape[0])]
    total = torch.zeros((), dtype=seq.dtype)
    for t in range(c - 1):
        st, y = _predict(main, extra, st, seq[t])
        total = total + torch.sum(seq[t + 1] * (y - lse(y)))
    return -total / ((c - 1) * b)


def make(values):
    main, extra, state, seq = tensors(values)

    def primal():
        with torch.no_grad():
            return host(lstm_objective(main, extra, state, seq))

    def grad():
        ps = [v.clone().requires_grad_(True) for v in (main, extra)]
        f = lstm_objective(*ps, state, seq)
        return tuple(host(v) for v in torch.autograd.grad(f, ps))

    return primal, grad
