"""The paper benchmarks (benches/paper) in JAX, 64-bit floats, jitted; see peers.py."""
import math

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

NAME = "jax"


def version():
    return jax.__version__


def _lse(v, axis=-1):
    m = jnp.max(v, axis=axis, keepdims=True)
    return jnp.squeeze(m, axis) + jnp.log(jnp.sum(jnp.exp(v - m), axis=axis))


# ---------------------------------------------------------------- k-means (paper 000, §7.4)
def kmeans_cost(points, centres):
    d2 = jnp.sum((points[:, None, :] - centres[None, :, :]) ** 2, axis=-1)
    return jnp.sum(jnp.min(d2, axis=1))


def kmeans_newton(points, centres):
    g, h = jax.jvp(jax.grad(lambda c: kmeans_cost(points, c)), (centres,), (jnp.ones_like(centres),))
    step = jnp.where(h == 0, 0.0, g / jnp.where(h == 0, 1.0, h))
    return g, h, centres - step


# ---------------------------------------------------------------- GMM (ADBench)
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
    slse = jnp.sum(_lse(main, axis=1))
    constant = -n * d * 0.5 * math.log(2 * math.pi)
    nn = d + int(m) + 1
    c = nn * d * (jnp.log(gamma) - 0.5 * math.log(2)) - _log_gamma_distrib(0.5 * nn, d)
    frob = jnp.sum(jnp.exp(qdiag) ** 2, axis=1) + jnp.sum(icf[:, d:] ** 2, axis=1)
    prior = jnp.sum(0.5 * gamma * gamma * frob - m * sum_qs) - k * c
    return constant + slse - n * _lse(alphas) + prior


# ---------------------------------------------------------------- LSTM (ADBench)
def _sigmoid(v):
    return 1 / (1 + jnp.exp(-v))


def _predict(main, extra, state, x):
    x = x * extra[0]
    new = []
    for i in range(main.shape[0]):
        w, b = main[i, 0], main[i, 1]
        h, c = state[i, 0], state[i, 1]
        forget = _sigmoid(x * w[0] + b[0])
        ingate = _sigmoid(h * w[1] + b[1])
        outgate = _sigmoid(x * w[2] + b[2])
        change = jnp.tanh(h * w[3] + b[3])
        c = c * forget + ingate * change
        h = outgate * jnp.tanh(c)
        new.append(jnp.stack([h, c]))
        x = h
    return jnp.stack(new), x * extra[1] + extra[2]


def lstm_objective(main, extra, state, seq):
    c, b = seq.shape

    def step(carry, xs):
        st, total = carry
        x, ygold = xs
        st, y = _predict(main, extra, st, x)
        return (st, total + jnp.sum(ygold * (y - _lse(y)))), None

    (_, total), _ = jax.lax.scan(step, (state, jnp.float64(0)), (seq[:-1], seq[1:]))
    return -total / ((c - 1) * b)


# ---------------------------------------------------------------- the functions peers.py times
def make(bench, values):
    """(primal, gradient): functions of no arguments returning numpy values (tuples for several)."""
    if bench == "kmeans":
        points, centres = map(jnp.asarray, values)
        p = jax.jit(kmeans_cost)
        g = jax.jit(kmeans_newton)
        return (lambda: np.asarray(p(points, centres)),
                lambda: tuple(np.asarray(v) for v in g(points, centres)))
    if bench == "gmm":
        alphas, means, icf, x = map(jnp.asarray, values[:4])
        gamma, m = float(values[4]), int(values[5])
        p = jax.jit(lambda a, mu, q, xs: gmm_objective(a, mu, q, xs, gamma, m))
        g = jax.jit(jax.grad(lambda a, mu, q, xs: gmm_objective(a, mu, q, xs, gamma, m), argnums=(0, 1, 2)))
        return (lambda: np.asarray(p(alphas, means, icf, x)),
                lambda: tuple(np.asarray(v) for v in g(alphas, means, icf, x)))
    if bench == "lstm":
        main, extra, state, seq = map(jnp.asarray, values)
        p = jax.jit(lstm_objective)
        g = jax.jit(jax.grad(lstm_objective, argnums=(0, 1)))
        return (lambda: np.asarray(p(main, extra, state, seq)),
                lambda: tuple(np.asarray(v) for v in g(main, extra, state, seq)))
    raise ValueError(bench)
