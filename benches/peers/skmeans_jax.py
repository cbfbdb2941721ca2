"""Sparse k-means (benches/paper/skmeans.fut) in JAX, f32: the points' dot products with the
centres by a segment sum over the nonzeros (`jax.ops.segment_sum`), the cost expanded as
‖p‖² - 2 p·c + ‖c‖²; the Newton step by `jax.jvp` of `jax.grad` with a tangent of ones."""
import jax
import jax.numpy as jnp
import numpy as np


def skmeans_cost(values, cols, rows, n, centres):
    dots = jax.ops.segment_sum(values[:, None] * centres[:, cols].T, rows, num_segments=n)   # [n][k]
    pnorm = jax.ops.segment_sum(values * values, rows, num_segments=n)
    cnorm = jnp.sum(centres * centres, axis=1)
    return jnp.sum(jnp.min(pnorm[:, None] - 2 * dots + cnorm[None, :], axis=1))


def make(values):
    vals, cols, offsets, centres = map(jnp.asarray, values)
    n = int(values[2].shape[0]) - 1
    rows = jnp.asarray(np.repeat(np.arange(n), np.diff(values[2])))
    f = lambda c: skmeans_cost(vals, cols, rows, n, c)  # noqa: E731

    @jax.jit
    def newton(c):
        g, h = jax.jvp(jax.grad(f), (c,), (jnp.ones_like(c),))
        step = jnp.where(h == 0, 0.0, g / jnp.where(h == 0, 1.0, h))
        return g, h, c - step

    p = jax.jit(f)
    return (lambda: np.asarray(p(centres)),
            lambda: tuple(np.asarray(v) for v in newton(centres)))
