"""Data sets of the batched LSTM benchmark `rnn` (benches/paper/rnn.fut; paper 000, §7.7, Table 6).

Names: rnn_bs{BS}_n{N}_d{D}_h{H}: a batch of BS sequences of N steps, input (and output) width D,
hidden width H. Values, all f32, in the entry's parameter order:

  xs [N][BS][D], targets [N][BS][D]   ~ N(0, 1)
  W [4][H][D], U [4][H][H], b [4][H]  ~ U(-1/sqrt(H), 1/sqrt(H))  (gates i, f, g, o; as
                                      torch.nn.LSTM initialises its weights)
  Wy [D][H], by [D]                   ~ U(-1/sqrt(H), 1/sqrt(H))  (as torch.nn.Linear(H, D))
  h0 [BS][H], c0 [BS][H]              ~ U(-0.1, 0.1)              (a small non-zero state, so
                                      the first step's recurrent terms are exercised too)

drawn in that order from the generator the caller seeds (CRC-32 of the name). numpy only.
"""
import numpy as np

PATTERN = r"rnn_bs(\d+)_n(\d+)_d(\d+)_h(\d+)"
SMALL = "rnn_bs3_n4_d5_h6"
DEFAULT = ["rnn_bs16_n10_d30_h32", "rnn_bs64_n10_d30_h32"]
PAPER = ["rnn_bs1024_n20_d300_h192", "rnn_bs1024_n300_d80_h256"]
ENTRIES = ("objective", "grad")
TOL = 1e-3
WHAT = ("batched LSTM (gates by matrix products) with an output layer, mean squared error, f32; "
        "vjp w.r.t. W, U, b, Wy, by")
PAPER_OVERHEAD = "2.0-4.0× (Table 6: A100 2.0 / 4.0, RTX 2080 Ti 2.6 / 4.0 on D0 / D1)"
DEFAULT_NOTE = ("RNN LSTM: (bs, n, d, h) = (16 and 64, 10, 30, 32) instead of the paper's D0 = (1024, 20, 300, 192) "
                "and D1 = (1024, 300, 80, 256).")


def generate(rng, m):
    bs, n, d, h = map(int, m.groups())
    k = 1.0 / np.sqrt(h)

    def u(shape, a):
        return rng.uniform(-a, a, size=shape).astype(np.float32)

    xs = rng.standard_normal((n, bs, d)).astype(np.float32)
    targets = rng.standard_normal((n, bs, d)).astype(np.float32)
    w = u((4, h, d), k)
    uu = u((4, h, h), k)
    b = u((4, h), k)
    wy = u((d, h), k)
    by = u((d,), k)
    h0 = u((bs, h), 0.1)
    c0 = u((bs, h), 0.1)
    return [xs, targets, w, uu, b, wy, by, h0, c0]
