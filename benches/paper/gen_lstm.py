"""ADBench LSTM data sets: `lstm_l{L}_c{C}[_b{B}]`, hidden width B (default 14): main parameters
[L][2][4][B] and extra parameters [3][B] ~ U(-1, 1), state [L][2][B] ~ U(-1, 1), sequence [C][B]
~ U(0, 1)."""
PATTERN = r"lstm_l(\d+)_c(\d+)(?:_b(\d+))?"
ENTRIES = ("objective", "grad")
WHAT = "ADBench LSTM objective (l layers, c characters, b = 14); vjp w.r.t. the main and extra parameters"
PAPER_OVERHEAD = "3.2× for the full Jacobian on a CPU (Table 1, D-LSTM)"
TOL = 1e-6
SMALL = "lstm_l2_c6"
DEFAULT = ["lstm_l2_c256", "lstm_l2_c1024", "lstm_l2_c4096"]
DEFAULT_NOTE = "ADBench LSTM: l = 2, b = 14 and c = 256, 1024 (the smallest of ADBench) and 4096."
PAPER = [f"lstm_l{l}_c{c}" for l in (2, 4) for c in (1024, 4096)]


def generate(rng, m):
    l, c, b = m.groups()
    l, c, b = int(l), int(c), int(b or 14)
    main = rng.uniform(-1.0, 1.0, size=(l, 2, 4, b))
    extra = rng.uniform(-1.0, 1.0, size=(3, b))
    state = rng.uniform(-1.0, 1.0, size=(l, 2, b))
    seq = rng.uniform(0.0, 1.0, size=(c, b))
    return [main, extra, state, seq]
