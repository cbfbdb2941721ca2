"""The paper benchmarks (benches/paper) in PyTorch (eager, CPU); see peers.py. Each benchmark B
is in `B_torch.py`, whose `make(values)` returns (primal, gradient) functions of no arguments
returning numpy values."""
import importlib

import numpy as np
import torch

NAME = "torch"


def version():
    return torch.__version__


def lse(v, dim=-1):
    """log Σ exp along a dimension, shifted by the maximum."""
    m = torch.amax(v, dim=dim, keepdim=True)
    return m.squeeze(dim) + torch.log(torch.sum(torch.exp(v - m), dim=dim))


def tensors(values):
    """The input values as tensors (sharing the numpy arrays' memory where they can)."""
    return [torch.from_numpy(np.ascontiguousarray(v)) for v in values]


def make(bench, values):
    """(primal, gradient): functions of no arguments returning numpy values (tuples for several)."""
    return importlib.import_module(f"{bench}_torch").make(values)
