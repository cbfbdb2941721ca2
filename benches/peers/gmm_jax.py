"""ADBench's GMM objective (with the Wishart prior) in JAX, and its gradient with respect to
alphas, means and icf (`jax.grad`)."""
import math

import jax
import jax.numpy as jnp
import numpy as np

from jax_peer import lse


def _lower_indices(d):
    rows, cols = [], []
    for j in range(d):
        for i in range(j + 1, d):
            rows.append(i)
            cols.append(j)
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)


def _log_gamma_distrib(a, p):
    return 0.25 * p * (p - 1) * math.log(math.pi) + sum(math.lgamma(a + 0.5 * (1 - j)) for j in range(1, p + 1))


def gmm_objective(alphas, means, icf, x, gamma, m):
    n, d = x.shape
    k = alphas.shape[0]
    rows, cols = _lower_indices(d)
    qdiag = icf[:, :d]
    sum_qs = jnp.sum(qdiag, axis=1)
    q = jnp.zeros((k, d, d), dtype=icf.dtype).at[:, rows, cols].set(icf[:, d:])
    q = q + jax.vmap(jnp.diag)(jnp.exp(qdiag))
    xc = x[:, None, :] - means[None, :, :]
    qxc = jnp.einsum("kij,nkj->nki", q, xc)
    main = alphas[None, :] + sum_qs[None, :] - 0.5 * jnp.sum(qxc * qxc, axis=-1)
    slse = jnp.sum(lse(main, axis=1))
    constant = -n * d * 0.5 * math.log(2 * math.pi)
    nn = d + int(m) + 1
    c = nn * d * (jnp.log(gamma) - 0.5 * math.log(2)) - _log_gamma_distrib(0.5 * nn, d)
    frob = jnp.sum(jnp.exp(qdiag) ** 2, axis=1) + jnp.sum(icf[:, d:] ** 2, axis=1)
    prior = jnp.sum(0.5 * gamma * gamma * frob - m * sum_qs) - k * c
    return constant + slse - n * lse(alphas) + prior


def make(values):
    alphas, means, icf, x = map(jnp.asarray, values[:4])
    gamma, m = float(values[4]), int(values[5])
    p = jax.jit(lambda a, mu, q, xs: gmm_objective(a, mu, q, xs, gamma, m))
    g = jax.jit(jax.grad(lambda a, mu, q, xs: gmm_objective(a, mu, q, xs, gamma, m), argnums=(0, 1, 2)))
    return (lambda: np.asarray(p(alphas, means, icf, x)),
            lambda: tuple(np.asarray(v) for v in g(alphas, means, icf, x)))
