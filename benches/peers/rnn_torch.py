"""The batched LSTM benchmark `rnn` (benches/paper/rnn.fut) in PyTorch (eager, 32-bit floats).

The same explicit cell as rnn.fut and rnn_jax.py (not torch.nn.LSTM, so the maths is identical):
a Python loop over the steps, the gates one batched matrix product each for the input and
recurrent weights (`einsum` over the stacked [4][h][.] weights), the output layer one matrix
product over all steps' hidden states; the gradient is `torch.autograd.grad` of the loss with
respect to (W, U, b, Wy, by)."""
import numpy as np
import torch

from torch_peer import host, tensors


def rnn_loss(w, u, b, wy, by, xs, targets, h0, c0):
    h, c = h0, c0
    hs = []
    for x in xs:
        a = torch.einsum("bd,khd->kbh", x, w) + torch.einsum("bj,khj->kbh", h, u) + b[:, None, :]
        i, f, g, o = torch.sigmoid(a[0]), torch.sigmoid(a[1]), torch.tanh(a[2]), torch.sigmoid(a[3])
        c = f * c + i * g
        h = o * torch.tanh(c)
        hs.append(h)
    ys = torch.stack(hs) @ wy.T + by
    return torch.mean((ys - targets) ** 2)


def make(values):
    """(primal, gradient): functions of no arguments returning numpy values (a tuple for the
    gradient: W, U, b, Wy, by)."""
    xs, targets, w, u, b, wy, by, h0, c0 = tensors(values, np.float32)

    def primal():
        with torch.no_grad():
            return host(rnn_loss(w, u, b, wy, by, xs, targets, h0, c0))

    def grad():
        ps = [v.clone().requires_grad_(True) for v in (w, u, b, wy, by)]
        f = rnn_loss(*ps, xs, targets, h0, c0)
        return tuple(host(v) for v in torch.autograd.grad(f, ps))

    return primal, grad
