"""ADBench's GMM objective (with the Wishart prior) in PyTorch, vectorised, and its gradient
with respect to alphas, means and icf (`torch.autograd.grad`)."""
import math

import torch

from torch_peer import host, lse, tensors


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
    slse = torch.sum(lse(main, dim=1))
    constant = -n * d * 0.5 * math.log(2 * math.pi)
    nn = d + m + 1
    c = nn * d * (math.log(gamma) - 0.5 * math.log(2)) - _log_gamma_distrib(0.5 * nn, d)
    frob = torch.sum(torch.exp(qdiag) ** 2, dim=1) + torch.sum(icf[:, d:] ** 2, dim=1)
    prior = torch.sum(0.5 * gamma * gamma * frob - m * sum_qs) - k * c
    return constant + slse - n * lse(alphas) + prior


def make(values):
    alphas, means, icf, x = tensors(values[:4])
    gamma, m = float(values[4]), int(values[5])
    idx = _lower_indices(x.shape[1])

    def primal():
        with torch.no_grad():
            return host(gmm_objective(alphas, means, icf, x, gamma, m, idx))

    def grad():
        ps = [v.clone().requires_grad_(True) for v in (alphas, means, icf)]
        f = gmm_objective(*ps, x, gamma, m, idx)
        return tuple(host(v) for v in torch.autograd.grad(f, ps))

    return primal, grad
