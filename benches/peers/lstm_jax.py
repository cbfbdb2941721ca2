"""ADBench's LSTM objective in JAX (`jax.lax.scan` over the characters), and its gradient with
respect to the main and extra parameters (`jax.grad`)."""
import jax
import jax.numpy as jnp
import numpy as np

from jax_peer import lse


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
        return (st, total + jnp.sum(ygold * (y - lse(y)))), None

    (_, total), _ = jax.lax.scan(step, (state, jnp.float64(0)), (seq[:-1], seq[1:]))
    return -total / ((c - 1) * b)


def make(values):
    main, extra, state, seq = map(jnp.asarray, values)
    p = jax.jit(lstm_objective)
    g = jax.jit(jax.grad(lstm_objective, argnums=(0, 1)))
    return (lambda: np.asarray(p(main, extra, state, seq)),
            lambda: tuple(np.asarray(v) for v in g(main, extra, state, seq)))
