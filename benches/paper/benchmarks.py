"""The paper benchmarks' registry: for each benchmark B, `benches/paper/B.fut` (the vkad
program), `gen_B.py` (its data sets: PATTERN, generate, ENTRIES, TOL, SMALL, DEFAULT, PAPER),
`benches/peers/B_jax.py` and `B_torch.py` (the same maths in JAX and PyTorch). A data set's name
starts with its benchmark's name and `_`; `small/B_small.in` is the CI-sized one."""
import importlib
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
if here not in sys.path:
    sys.path.insert(0, here)

NAMES = ("kmeans", "skmeans", "gmm", "lstm", "rnn", "rsbench", "xsbench")


def present():
    """The benchmarks whose generator module exists (all of NAMES in a complete checkout)."""
    return [b for b in NAMES if os.path.exists(os.path.join(here, f"gen_{b}.py"))]


def module(bench):
    """The generator module of a benchmark name."""
    if bench not in NAMES:
        raise SystemExit(f"unknown benchmark {bench!r} (known: {', '.join(NAMES)})")
    return importlib.import_module(f"gen_{bench}")


def bench_of(data_name):
    """The benchmark a data set name (or data file path) belongs to."""
    return os.path.basename(data_name).split("_")[0]


def entries(bench):
    return module(bench).ENTRIES


def tolerance(bench):
    return module(bench).TOL


def match(name):
    """(generator module, regex match) of a concrete data set name, or exit with a message."""
    mod = module(bench_of(name))
    m = re.fullmatch(mod.PATTERN, name)
    if not m:
        raise SystemExit(f"data set name {name!r} does not have the form {mod.PATTERN}")
    return mod, m


if __name__ == "__main__":
    # `benchmarks.py default|paper|small`: the data set names of that kind, one per line;
    # `benchmarks.py note`: what the default sizes leave out of the paper's (run.sh's note).
    kind = sys.argv[1] if len(sys.argv) > 1 else "default"
    for b in present():
        mod = module(b)
        if kind == "note":
            if getattr(mod, "DEFAULT_NOTE", ""):
                print(mod.DEFAULT_NOTE, end=" ")
        else:
            names = getattr(mod, kind.upper())
            print("\n".join(names if isinstance(names, list) else [names]))
