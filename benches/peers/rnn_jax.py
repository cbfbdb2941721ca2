"""The batched LSTM benchmark `rnn` (benches/paper/rnn.fut) in JAX, 32-bit floats, jitted.

The time loop is `jax.lax.scan` over the steps, the gates one batched matrix product each for the
input and recurrent weights (`einsum` over the stacked [4][h][.] weights), the output layer one
matrix product over all steps' hidden states; the gradient is `jax.grad` of the loss with respect
to (W, U, b, Wy, by)."""
import jax
import jax.numpy as jnp
import numpy as np

NAME = "jax"


def version():
    return jax.__version__


def rnn_loss(w, u, b, wy, by, xs, targets, h0, c0):
    def step(carry, x):
        h, c = carry
        a = jnp.einsum("bd,khd->kbh", x, w) + jnp.einsum("bj,khj->kbh", h, u) + b[:, None, :]
        i, f, g, o = jax.nn.sigmoid(a[0]), jax.nn.sigmoid(a[1]), jnp.tanh(a[2]), jax.nn.sigmoid(a[3])
        c = f * c + i * g
        h = o * jnp.tanh(c)
        return (h, c), h

    _, hs = jax.lax.scan(step, (h0, c0), xs)
    ys = hs @ wy.T + by
    return jnp.mean((ys - targets) ** 2)


def make(values):
    """(primal, gradient): functions of no arguments returning numpy values (a tuple for the
    gradient: W, U, b, Wy, by)."""
    xs, targets, w, u, b, wy, by, h0, c0 = (jnp.asarray(np.asarray(v, dtype=np.float32)) for v in values)
    p = jax.jit(rnn_loss)
    g = jax.jit(jax.grad(rnn_loss, argnums=(0, 1, 2, 3, 4)))
    return (lambda: np.asarray(p(w, u, b, wy, by, xs, targets, h0, c0)),
            lambda: tuple(np.asarray(v) for v in g(w, u, b, wy, by, xs, targets, h0, c0)))
