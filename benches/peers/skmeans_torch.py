"""Sparse k-means (benches/paper/skmeans.fut) in PyTorch, f32, as the paper's PyTorch version: the
points as a sparse COO tensor (autograd through CSR raised errors, §7.5), dot products with the
centres by `torch.sparse.mm`, the cost expanded as ‖p‖² - 2 p·c + ‖c‖²; the gradient and the
Hessian's diagonal by double backward (`torch.autograd.grad` of the gradient with a vector of
ones: H·1, the diagonal, since the Hessian is diagonal)."""
import numpy as np
import torch

from torch_peer import host, tensors


def skmeans_cost(points, pnorm, centres):
    dots = torch.sparse.mm(points, centres.T)                    # [n][k]
    cnorm = torch.sum(centres * centres, dim=1)
    return torch.sum(torch.amin(pnorm[:, None] - 2 * dots + cnorm[None, :], dim=1))


def make(values):
    vals, cols, offsets, centres = tensors(values)
    n, d = int(offsets.shape[0]) - 1, int(centres.shape[1])
    rows = tensors([np.repeat(np.arange(n), np.diff(values[2]))])[0]
    points = torch.sparse_coo_tensor(torch.stack([rows, cols]), vals, (n, d), check_invariants=True).coalesce()
    pnorm = torch.zeros(n, dtype=vals.dtype).index_add_(0, rows, vals * vals)

    def primal():
        with torch.no_grad():
            return host(skmeans_cost(points, pnorm, centres))

    def newton():
        c = centres.clone().requires_grad_(True)
        g, = torch.autograd.grad(skmeans_cost(points, pnorm, c), c, create_graph=True)
        h, = torch.autograd.grad(g, c, grad_outputs=torch.ones_like(c))
        g, h = g.detach(), h.detach()
        step = torch.where(h == 0, torch.zeros_like(g), g / torch.where(h == 0, torch.ones_like(h), h))
        return host(g), host(h), host(centres - step)

    return primal, newton
