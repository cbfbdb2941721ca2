"""The paper benchmarks (benches/paper) in JAX (jitted, 64-bit floats enabled; the f32
benchmarks stay f32); see peers.py. Each benchmark B is in `B_jax.py`, whose `make(values)`
returns (primal, gradient) functions of no arguments returning numpy values."""
import importlib

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

NAME = "jax"


def version():
    return jax.__version__


def lse(v, axis=-1):
    """log Σ exp along an axis, shifted by the maximum."""
    m = jnp.max(v, axis=axis, keepdims=True)
    return jnp.squeeze(m, axis) + jnp.log(jnp.sum(jnp.exp(v - m), axis=axis))


def make(bench, values):
    """(primal, gradient): functions of no arguments returning numpy values (tuples for several)."""
    return importlib.import_module(f"{bench}_jax").make(values)
