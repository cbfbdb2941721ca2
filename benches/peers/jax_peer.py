"""The paper benchmarks (benches/paper) in JAX (jitted, 64-bit floats enabled; the f32
benchmarks stay f32); see peers.py. Each benchmark B is in `B_jax.py`, whose `make(values)`
returns (primal, gradient) functions of no arguments returning numpy values. The device is the
environment's VKAD_PEER_DEVICE: `cpu` (the default) or `gpu` (JAX's CUDA backend, which must be
installed)."""
import importlib
import os

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cuda" if os.environ.get("VKAD_PEER_DEVICE", "cpu") == "gpu" else "cpu")
import jax.numpy as jnp  # noqa: E402

NAME = "jax"


def version():
    return jax.__version__


def device():
    """The device the computations run on, in words."""
    d = jax.devices()[0]
    return "CPU" if d.platform == "cpu" else d.device_kind


def lse(v, axis=-1):
    """log Σ exp along an axis, shifted by the maximum."""
    m = jnp.max(v, axis=axis, keepdims=True)
    return jnp.squeeze(m, axis) + jnp.log(jnp.sum(jnp.exp(v - m), axis=axis))


def make(bench, values):
    """(primal, gradient): functions of no arguments returning numpy values (tuples for several)."""
    return importlib.import_module(f"{bench}_jax").make(values)
