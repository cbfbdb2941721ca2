"""The paper benchmarks (benches/paper) in PyTorch (eager); see peers.py. Each benchmark B is in
`B_torch.py`, whose `make(values)` returns (primal, gradient) functions of no arguments returning
numpy values. The device is the environment's VKAD_PEER_DEVICE (`cpu`, the default, or `gpu`:
CUDA's first device, which then is torch's default device, so that every tensor a benchmark makes
lives there); results come back to the host through `host`, which waits for the device."""
import importlib
import os

import numpy as np
import torch

NAME = "torch"
DEVICE = "cuda" if os.environ.get("VKAD_PEER_DEVICE", "cpu") == "gpu" else "cpu"
if DEVICE == "cuda":
    torch.set_default_device(DEVICE)


def version():
    return torch.__version__


def device():
    """The device the tensors live on, in words."""
    return torch.cuda.get_device_name(0) if DEVICE == "cuda" else "CPU"


def host(v):
    """A tensor's value as a numpy array on the host (waiting for the device's work)."""
    return v.detach().cpu().numpy()


def lse(v, dim=-1):
    """log Σ exp along a dimension, shifted by the maximum."""
    m = torch.amax(v, dim=dim, keepdim=True)
    return m.squeeze(dim) + torch.log(torch.sum(torch.exp(v - m), dim=dim))


def tensors(values, dtype=None):
    """The input values as tensors on DEVICE (sharing the numpy arrays' memory on the CPU),
    converted to the numpy dtype `dtype` if one is given."""
    return [torch.from_numpy(np.ascontiguousarray(v, dtype=dtype)).to(DEVICE) for v in values]


def make(bench, values):
    """(primal, gradient): functions of no arguments returning numpy values (tuples for several)."""
    return importlib.import_module(f"{bench}_torch").make(values)
