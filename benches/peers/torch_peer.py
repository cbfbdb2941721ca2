"""The paper benchmarks (benches/paper) in PyTorch (eager, CPU, 64-bit floats); see peers.py.

k-means' Newton step is forward-over-reverse (`torch.func.jvp` of `torch.func.grad`), the
gradients of GMM and LSTM are reverse mode (`torch.autograd.grad`)."""
import math

import numpy as np
import torch

NAME = "torch"


def version():
    return torch.__version__


def _lse(v, dim=-1):
    m = torch.amax(v, dim=dim, keepdim=True)
    return m.squeeze(dim) + torch.log(torch.sum(torch.exp(v - m), dim=dim))


# ---------------------------------------------------------------- k-means (paper 000, §7.4)
def kmeans_cost(points, centres):
    d2 = torch.sum((points[:, None, :] - centres[None, :, :]) ** 2, dim=-1)
    return torch.sum(torch.amin(d2, dim=1))


def kmeans_newton(points, centres):
    g, h = torch.func.jvp(torch.func.grad(lambda c: kmeans_cost(points, c)), (centres,),
                          (torch.ones_like(centres),))
    step = torch.where(h == 0, torch.zeros_like(g), g / torch.where(h == 0, torch.ones_like(h), h))
    return g, h, centres - step


# ---------------------------------------------------------------- GMM (ADBench)
def _lower_indices(d):
    rows, cols = [], []
    for j in range(d):
        for i in range(j + 1, d):
            rows.append(i)
            cols.append(j)
    return torch.tensor(rows, dtype=torch.long), torch.tensor(cols, dtype=torch.long)


def _log_gamma_distrib(a, p):
    return 0.25 * p * (p - 1) * math.log(math.pi) + sum(math.lgamma(a + 0.5 * (1 - j)) for j in range(1, p + 1))


def gmm_objective(alphas, means, icf, x, gamma, m, idx):
    n, d = x.shape
    k = alphas.shape[0]
    rows, cols = idx
    qdiag = icf[:, :d]
    sum_qs = torch.sum(qdiag, dim=1)
    q = torch.zeros((k, d, d), dtype=icf.dtype)
    q = q.index_put((torch.arange(k)[:, None], rows[None, :], cols[None, :]), icf[:, d:])
    q = q + torch.diag_embed(torch.exp(qdiag))
    xc = x[:, None, :] - means[None, :, :]
    qxc = torch.einsum("kij,nkj->nki", q, xc)
    main = alphas[None, :] + sum_qs[None, :] - 0.5 * torch.sum(qxc * qxc, dim=-1)
    slse = torch.sum(_lse(main, dim=1))
    constant = -n * d * 0.5 * math.log(2 * math.pi)
    nn = d + m + 1
    c = nn * d * (math.log(gamma) - 0.5 * math.log(2)) - _log_gamma_distrib(0.5 * nn, d)
    frob = torch.sum(torch.exp(qdiag) ** 2, dim=1) + torch.sum(icf[:, d:] ** 2, dim=1)
    prior = torch.sum(0.5 * gamma * gamma * frob - m * sum_qs) - k * c
    return constant + slse - n * _lse(alphas) + prior


# ---------------------------------------------------------------- LSTM (ADBench)
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
        total = total + torch.sum(seq[t + 1] * (y - _lse(y)))
    return -total / ((c - 1) * b)


# ---------------------------------------------------------------- the functions peers.py times
def make(bench, values):
    """(primal, gradient): functions of no arguments returning numpy values (tuples for several)."""
    t = [torch.from_numpy(np.ascontiguousarray(v)) for v in values]
    if bench == "kmeans":
        points, centres = t

        def primal():
            with torch.no_grad():
                return kmeans_cost(points, centres).numpy()

        return primal, lambda: tuple(v.detach().numpy() for v in kmeans_newton(points, centres))
    if bench == "gmm":
        alphas, means, icf, x = t[:4]
        gamma, m = float(values[4]), int(values[5])
        idx = _lower_indices(x.shape[1])

        def primal():
            with torch.no_grad():
                return gmm_objective(alphas, means, icf, x, gamma, m, idx).numpy()

        def grad():
            ps = [v.clone().requires_grad_(True) for v in (alphas, means, icf)]
            f = gmm_objective(*ps, x, gamma, m, idx)
            return tuple(v.numpy() for v in torch.autograd.grad(f, ps))

        return primal, grad
    if bench == "lstm":
        main, extra, state, seq = t

        def primal():
            with torch.no_grad():
                return lstm_objective(main, extra, state, seq).numpy()

        def grad():
            ps = [v.clone().requires_grad_(True) for v in (main, extra)]
            f = lstm_objective(*ps, state, seq)
            return tuple(v.numpy() for v in torch.autograd.grad(f, ps))

        return primal, grad
    raise ValueError(bench)
