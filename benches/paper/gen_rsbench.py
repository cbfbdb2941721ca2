"""RSBench data sets (benches/paper/rsbench.fut): the windowed multipole cross-section data of
Tramm, Siegel, Forget and Josey (EASC 2014; the ANL-CESAR/RSBench mini-app) and a batch of
lookups, numpy only.

Names: rsbench_n{N}_p{P}_w{W}_l{L}: N nuclides, each with P poles in W windows, and L lookups.
RSBench's "small" problem (the H-M small reactor) is N = 68, P = 1000, W = 100.

Values, in the order of the entry points' parameters (everything uniform on [0, 1) unless said):

  mp_ea  [N][P][2]f64   the poles (re, im); the real part is scaled by EA_SCALE = 48, so that
                        Z = (sqrt(E) - MP_EA) / 2 has |Z| < 6 (the Abrarov branch of the
                        Faddeeva function) for about a quarter of the pole evaluations and the
                        asymptotic branch for the rest
  mp_rt, mp_ra, mp_rf [N][P][2]f64   the residues for the total, absorption and fission
                        cross sections (re, im)
  l_value [N][P]i64     the angular momentum of each pole, uniform in 0..3 (numL = 4)
  fit_t, fit_a, fit_f [N][W]f64      the window fits (the background of the poles outside it)
  w_start, w_end [N][W]i64           window j covers the poles [w_start, w_end): the poles in
                        order, P // W each, the first P % W windows one more (as RSBench, but
                        with an exclusive end, so every pole belongs to a window)
  pseudo_k0rs [N][4]f64 the pseudo K0RS values (the phase of the potential scattering term)
  mats [12][K]i64       the nuclides of RSBench's 12 materials, padded with 0 to K, the largest
                        count; for N = 68 exactly RSBench's lists (fuel 34 nuclides, cladding 5,
                        cold and hot borated water 4 each, RPV 27, reflector, plates and nozzles
                        21 each, fuel assembly tops and bottoms 9 each); for other N, RSBench's
                        counts scaled by N/68 (rounded, at least 1, at most N), nuclides drawn
                        without replacement
  num_nucs [12]i64      the number of nuclides of each material
  concs [12][K]f64      the concentrations (0 in the padding)
  energies [L]f64       the lookups' energies (in the unit range of RSBench)
  mat_idx [L]i64        the lookups' materials, drawn from RSBench's volume fractions (pick_mat:
                        cold borated water 27.5%, RPV 15.4%, fuel 14%, ...)
"""
import numpy as np

PATTERN = r"rsbench_n(\d+)_p(\d+)_w(\d+)_l(\d+)"
SMALL = "rsbench_n8_p22_w4_l64"
DEFAULT = ["rsbench_n68_p1000_w100_l250", "rsbench_n68_p1000_w100_l1000"]
PAPER = ["rsbench_n68_p1000_w100_l1000000"]
ENTRIES = ("lookup", "grad")
TOL = 1e-6
WHAT = ("windowed-multipole cross-section lookups with Doppler broadening (Faddeeva function, complex "
        "arithmetic); vjp w.r.t. the poles and window fits")
PAPER_OVERHEAD = "3.6× (Table 2, RTX 2080 Ti; Enzyme 4.2×)"
DEFAULT_NOTE = ("RSBench: the paper's \"small\" problem (68 nuclides, 1000 poles, 100 windows) with 250 and 1000 "
                "lookups.")

EA_SCALE = 48.0
NUM_L = 4

# RSBench's H-M small materials (material.c); nuclide indices < 68.
_MATS_68 = [
    [58, 59, 60, 61, 40, 42, 43, 44, 45, 46, 1, 2, 3, 7, 8, 9, 10, 29, 57, 47, 48, 0, 62, 15, 33,
     34, 52, 53, 54, 55, 56, 18, 23, 41],                                        # fuel
    [63, 64, 65, 66, 67],                                                        # cladding
    [24, 41, 4, 5],                                                              # cold borated water
    [24, 41, 4, 5],                                                              # hot borated water
    [19, 20, 21, 22, 35, 36, 37, 38, 39, 25, 27, 28, 29, 30, 31, 32, 26, 49, 50, 51, 11, 12, 13,
     14, 6, 16, 17],                                                             # RPV
] + [[24, 41, 4, 5, 19, 20, 21, 22, 35, 36, 37, 38, 39, 25, 49, 50, 51, 11, 12, 13, 14]] * 5 \
  + [[24, 41, 4, 5, 63, 64, 65, 66, 67]] * 2                                     # reflector ... FA ends

# RSBench's volume fractions of the materials (pick_mat); they sum to 1.001, normalised here.
_DIST = np.array([0.140, 0.052, 0.275, 0.134, 0.154, 0.064, 0.066, 0.055, 0.008, 0.015, 0.025,
                  0.013])


def _materials(rng, n):
    if n == 68:
        mats = [list(m) for m in _MATS_68]
    else:
        mats = []
        for m in _MATS_68:
            c = int(min(max(round(len(m) * n / 68), 1), n))
            mats.append(sorted(rng.choice(n, size=c, replace=False).tolist()))
    k = max(len(m) for m in mats)
    idx = np.zeros((12, k), dtype=np.int64)
    num = np.array([len(m) for m in mats], dtype=np.int64)
    concs = np.zeros((12, k))
    for i, m in enumerate(mats):
        idx[i, :len(m)] = m
        concs[i, :len(m)] = rng.uniform(0.0, 1.0, size=len(m))
    return idx, num, concs


def generate(rng, m):
    n, p, w, l = map(int, m.groups())
    if not (n >= 1 and w >= 1 and p >= w and l >= 1):
        raise ValueError(f"rsbench: need N >= 1, P >= W >= 1, L >= 1 (got N={n}, P={p}, W={w}, L={l})")

    def cplx(scale_re=1.0):
        v = rng.uniform(0.0, 1.0, size=(n, p, 2))
        v[..., 0] *= scale_re
        return v

    mp_ea = cplx(EA_SCALE)
    mp_rt, mp_ra, mp_rf = cplx(), cplx(), cplx()
    l_value = rng.integers(0, NUM_L, size=(n, p), dtype=np.int64)
    fit_t, fit_a, fit_f = (rng.uniform(0.0, 1.0, size=(n, w)) for _ in range(3))
    space, rem = divmod(p, w)
    lens = np.array([space + (1 if j < rem else 0) for j in range(w)], dtype=np.int64)
    ends = np.cumsum(lens)
    w_start = np.tile(ends - lens, (n, 1))
    w_end = np.tile(ends, (n, 1))
    k0rs = rng.uniform(0.0, 1.0, size=(n, NUM_L))
    mats, num_nucs, concs = _materials(rng, n)
    energies = rng.uniform(0.0, 1.0, size=l)
    mat_idx = rng.choice(12, size=l, p=_DIST / _DIST.sum()).astype(np.int64)
    return [mp_ea, mp_rt, mp_ra, mp_rf, l_value, fit_t, fit_a, fit_f, w_start, w_end, k0rs,
            mats, num_nucs, concs, energies, mat_idx]
