"""RSBench (benches/paper/rsbench.fut) in PyTorch (eager, 64-bit floats, complex128):
macroscopic cross-section lookups in the windowed multipole representation, vectorised over the
lookups, the nuclide slots of their materials (masked past num_nucs) and the poles of their
windows (padded to the longest window, masked). The gradient is reverse mode
(`torch.autograd.grad`). See rsbench.fut's header for the maths."""
import torch

from torch_peer import host, tensors

DOPP = 0.5
ABRAROV_A = [2.758402e-01, 2.245740e-01, 1.594149e-01, 9.866577e-02, 5.324414e-02,
             2.505215e-02, 1.027747e-02, 3.676164e-03, 1.146494e-03, 3.117570e-04]
ABRAROV_N2PI2 = [9.869604e+00, 3.947842e+01, 8.882644e+01, 1.579137e+02, 2.467401e+02,
                 3.553058e+02, 4.836106e+02, 6.316547e+02, 7.994380e+02, 9.869604e+02]
QW_A, QW_B = 0.5124242247547685, 0.27525512860841095
QW_C, QW_D = 0.05176535879298782, 2.724744871391589


def faddeeva(z):
    """RSBench's fast_nuclear_W: Abrarov's 10-term series for |z| < 6, else the asymptotic form."""
    e = torch.exp(12j * z)
    z2 = z * z
    s = torch.zeros_like(z)
    for n in range(10):
        sign = -1.0 if n % 2 == 0 else 1.0
        s = s + ABRAROV_A[n] * ((sign * e - 1) / (ABRAROV_N2PI2[n] - 144 * z2))
    near = 1j * (1 - e) / (12 * z) + 81.24330j * (z * s)
    far = (1j * z) * (QW_A / (z2 - QW_B) + QW_C / (z2 - QW_D))
    return torch.where(torch.abs(z) < 6, near, far)


def sig_t_factors(k0rs, sqrt_e):
    """exp(-i φ_l) for each l (last axis), k0rs [..., 4], sqrt_e of k0rs[..., 0]'s shape."""
    phi = k0rs * sqrt_e[..., None]
    p1, p2, p3 = phi[..., 1], phi[..., 2], phi[..., 3]
    phi = torch.stack([phi[..., 0],
                       p1 - torch.atan(p1),
                       p2 - torch.atan(3 * p2 / (3 - p2 * p2)),
                       p3 - torch.atan(p3 * (15 - p3 * p3) / (15 - 6 * p3 * p3))], dim=-1)
    return torch.exp(-2j * phi)


def lookup(mp_ea, mp_rt, mp_ra, mp_rf, fit_t, fit_a, fit_f, l_value, w_start, w_end, k0rs, mats,
           num_nucs, concs, energies, mat_idx, wmax):
    n_poles = mp_ea.shape[1]
    n_windows = fit_t.shape[1]
    k = mats.shape[1]
    nuc = mats[mat_idx]                                            # [L, K]
    conc = concs[mat_idx]
    nuc_ok = torch.arange(k)[None, :] < num_nucs[mat_idx][:, None]
    j = torch.clamp((energies / (1.0 / n_windows)).to(torch.int64), max=n_windows - 1)
    jw = j[:, None].expand(nuc.shape)                               # [L, K]
    q = w_start[nuc, jw][..., None] + torch.arange(wmax)            # [L, K, Q]
    pole_ok = q < w_end[nuc, jw][..., None]
    q = torch.clamp(q, max=n_poles - 1)
    nq = nuc[..., None]

    def pole(a):
        return torch.complex(a[nq, q, 0], a[nq, q, 1])

    sqrt_e = torch.sqrt(energies)
    z = DOPP * (sqrt_e[:, None, None] - pole(mp_ea))
    w = faddeeva(z)
    facs = sig_t_factors(k0rs[nuc], sqrt_e[:, None].expand(nuc.shape))   # [L, K, 4]
    fac = torch.take_along_dim(facs, l_value[nq, q], dim=-1)
    e = energies[:, None]
    zero = torch.zeros((), dtype=energies.dtype)
    sig_t = e * fit_t[nuc, jw] + torch.sum(torch.where(pole_ok, torch.real(pole(mp_rt) * (w * fac)) * DOPP, zero), -1)
    sig_a = e * fit_a[nuc, jw] + torch.sum(torch.where(pole_ok, torch.real(pole(mp_ra) * w) * DOPP, zero), -1)
    sig_f = e * fit_f[nuc, jw] + torch.sum(torch.where(pole_ok, torch.real(pole(mp_rf) * w) * DOPP, zero), -1)
    micro = torch.stack([sig_t, sig_a, sig_f, sig_t - sig_a], dim=-1)  # [L, K, 4]
    return torch.sum(torch.where(nuc_ok[..., None], conc[..., None] * micro, zero), dim=1)


def make(values):
    """(primal, gradient): functions of no arguments returning numpy values (the gradient a
    tuple: MP_EA, MP_RT, MP_RA, MP_RF, T, A, F), as rsbench.fut's `lookup` and `grad`."""
    t = tensors(values)
    (mp_ea, mp_rt, mp_ra, mp_rf, l_value, fit_t, fit_a, fit_f, w_start, w_end, k0rs, mats,
     num_nucs, concs, energies, mat_idx) = t
    wmax = int(torch.max(w_end - w_start))
    diff = (mp_ea, mp_rt, mp_ra, mp_rf, fit_t, fit_a, fit_f)
    rest = (l_value, w_start, w_end, k0rs, mats, num_nucs, concs, energies, mat_idx)

    def primal():
        with torch.no_grad():
            return host(lookup(*diff, *rest, wmax))

    def grad():
        ps = [v.clone().requires_grad_(True) for v in diff]
        f = torch.sum(lookup(*ps, *rest, wmax))
        return tuple(host(v) for v in torch.autograd.grad(f, ps))

    return primal, grad
