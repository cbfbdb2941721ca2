-- RSBench: macroscopic neutron cross-section lookups in the windowed multipole representation
-- (Tramm, Siegel, Forget and Josey, "Performance analysis of a reduced data movement algorithm
-- for neutron cross section data in Monte Carlo simulations", EASC 2014; the ANL-CESAR/RSBench
-- mini-app), used in paper 000 (§7) and in Enzyme's GPU paper, differentiated with respect to
-- the cross-section data. Written for this project from the published algorithm.
--
-- Data (N nuclides, the same P poles and W windows for each, 12 materials, L lookups):
--   pole q of nuclide u: four complex numbers MP_EA (the pole), MP_RT, MP_RA, MP_RF (residues
--     for the total, absorption and fission cross sections), each stored as [2]f64 (re, im),
--     and its angular momentum l_q in 0..3;
--   window j of nuclide u: the fits T, A, F (the background of the poles outside the window)
--     and the poles [start, end) it covers (the poles in order, about P/W each);
--   K0RS[u][l] (l = 0..3), the pseudo K0RS values;
--   material m: num_nucs[m] nuclides mats[m][0 .. num_nucs[m]) with concentrations concs[m][..]
--     (both padded to the largest count);
--   lookup i: an energy E in [0, 1) and a material m.
--
-- A lookup sums, over the nuclides u of its material with concentration c,
--   macro = Σ_u c · (σT, σA, σF, σE)(u, E)
-- where the microscopic cross sections of u at E are
--   j   = min(⌊E / (1/W)⌋, W - 1)                              (the window of E)
--   φ_l = K0RS[u][l] · √E, then φ_1 -= atan φ_1,  φ_2 -= atan(3φ_2 / (3 - φ_2²)),
--         φ_3 -= atan(φ_3 (15 - φ_3²) / (15 - 6φ_3²)),  then φ_l *= 2  (φ_0 unchanged before ×2)
--   f_l = exp(-i φ_l) = (cos φ_l, -sin φ_l)                     (the sigTfactors)
--   σT = E·T_j + Σ_q Re(MP_RT_q · W(Z_q) · f_{l_q}) · D
--   σA = E·A_j + Σ_q Re(MP_RA_q · W(Z_q)) · D
--   σF = E·F_j + Σ_q Re(MP_RF_q · W(Z_q)) · D
--   σE = σT - σA
-- with the sums over the poles q of window j, the Doppler factor D = 1/2 and
-- Z_q = (√E - MP_EA_q) · D. W is RSBench's approximation of the Faddeeva function
-- (fast_nuclear_W), with τ = 12:
--   |Z| < 6 (Abrarov and Quine's series, 10 terms):
--     W(Z) = i (1 - e^{iτZ}) / (τZ)
--            + i (τ²/√π) Z Σ_{n=1..10} a_n ((-1)^n e^{iτZ} - 1) / (n²π² - τ² Z²)
--     with a_n = (2√π/τ) exp(-n²π²/τ²) and τ²/√π = 81.24330, n²π² and a_n as RSBench's tables
--     (7 significant digits: ABRAROV_A and ABRAROV_N2PI2 below);
--   |Z| ≥ 6 (two-pole asymptotic expansion, accurate to O(1e-6) by RSBench's account):
--     W(Z) = i Z (a / (Z² - b) + c / (Z² - d)),
--     a = 0.5124242247547685, b = 0.27525512860841095, c = 0.05176535879298782,
--     d = 2.724744871391589.
--
-- Differences from RSBench's C code, on purpose: Z uses √E (RSBench's doppler kernel uses E),
-- the contributions are scaled by D, φ_1 -= atan φ_1 (RSBench's code has φ_1 -= -atan φ_1),
-- e^x is the exact exponential (RSBench uses a fast approximation), and a window's pole range
-- is [start, end) covering every pole (RSBench's windows skip their last pole). Every nuclide
-- has the same numbers of poles and windows, so the data are regular arrays.
--
-- Vectorisation: map over lookups; map over the material's nuclide slots (slots past
-- num_nucs[m] give 0); map over the window's poles padded to the longest window (poles past
-- the window's end give 0).
--
-- Entries: `lookup` (primal: the [L][4] macroscopic cross sections σT, σA, σF, σE) and `grad`
-- (vjp of the sum of all macroscopic cross sections, a seed of ones, with respect to MP_EA,
-- MP_RT, MP_RA, MP_RF and the fits T, A, F). As σT + σA + σF + σE = 2σT + σF, the gradients
-- with respect to MP_RA and A are exactly 0. The expected outputs of the test blocks are JAX's
-- (benches/peers/rsbench_jax.py); the data come from benches/paper/gen_rsbench.py (seeded).

-- Complex numbers as (re, im).
type cplx = (f64, f64)

def c_add ((a, b): cplx) ((c, d): cplx) : cplx = (a + c, b + d)
def c_sub ((a, b): cplx) ((c, d): cplx) : cplx = (a - c, b - d)
def c_mul ((a, b): cplx) ((c, d): cplx) : cplx = (a * c - b * d, a * d + b * c)
def c_scale (s: f64) ((a, b): cplx) : cplx = (s * a, s * b)

def c_div ((a, b): cplx) ((c, d): cplx) : cplx =
  let den = c * c + d * d
  in ((a * c + b * d) / den, (b * c - a * d) / den)

def c_exp ((x, y): cplx) : cplx =
  let m = f64.exp x
  in (m * f64.cos y, m * f64.sin y)

def c_abs ((a, b): cplx) : f64 = f64.sqrt (a * a + b * b)

def ABRAROV_A : [10]f64 =
  [2.758402e-01, 2.245740e-01, 1.594149e-01, 9.866577e-02, 5.324414e-02,
   2.505215e-02, 1.027747e-02, 3.676164e-03, 1.146494e-03, 3.117570e-04]

def ABRAROV_N2PI2 : [10]f64 =
  [9.869604e+00, 3.947842e+01, 8.882644e+01, 1.579137e+02, 2.467401e+02,
   3.553058e+02, 4.836106e+02, 6.316547e+02, 7.994380e+02, 9.869604e+02]

-- RSBench's fast_nuclear_W (see the header).
def faddeeva (z: cplx) : cplx =
  if c_abs z < 6 then
    let e = c_exp (c_mul (0, 12) z)
    let w0 = c_div (c_mul (0, 1) (c_sub (1, 0) e)) (c_scale 12 z)
    let z2 = c_mul z z
    let s = loop s = (0, 0) for n < 10 do
              let sign = if n % 2 == 0 then -1 else 1
              let top = c_sub (c_scale sign e) (1, 0)
              let bot = c_sub (ABRAROV_N2PI2[n], 0) (c_scale 144 z2)
              in c_add s (c_scale ABRAROV_A[n] (c_div top bot))
    in c_add w0 (c_mul (0, 81.24330) (c_mul z s))
  else
    let z2 = c_mul z z
    let a = 0.5124242247547685
    let b = 0.27525512860841095
    let c = 0.05176535879298782
    let d = 2.724744871391589
    in c_mul (c_mul z (0, 1)) (c_add (c_div (a, 0) (c_sub z2 (b, 0))) (c_div (c, 0) (c_sub z2 (d, 0))))

-- exp(-i φ_l) for l = 0..3 (the sigTfactors).
def sig_t_factors (k0rs: [4]f64) (sqrt_e: f64) : [4]cplx =
  tabulate 4 (\l ->
    let phi = k0rs[l] * sqrt_e
    let phi = if l == 1 then phi - f64.atan phi
              else if l == 2 then phi - f64.atan (3 * phi / (3 - phi * phi))
              else if l == 3 then phi - f64.atan (phi * (15 - phi * phi) / (15 - 6 * phi * phi))
              else phi
    let phi = 2 * phi
    in (f64.cos phi, -f64.sin phi))

def cx [N][P] (v: [N][P][2]f64) (u: i64) (q: i64) : cplx = (v[u, q, 0], v[u, q, 1])

-- The microscopic cross sections (σT, σA, σF) of nuclide u at energy e; wmax is the length of
-- the longest window. The data are indexed as whole arrays (xs[u, q], not a row xs[u] passed
-- on): vkad's vjp gives a row taken out of an array a dense adjoint, O(P) work per nuclide and
-- lookup instead of O(wmax).
def micro_xs [N][P][W] (wmax: i64) (mp_ea: [N][P][2]f64) (mp_rt: [N][P][2]f64)
                       (mp_ra: [N][P][2]f64) (mp_rf: [N][P][2]f64) (l_value: [N][P]i64)
                       (fit_t: [N][W]f64) (fit_a: [N][W]f64) (fit_f: [N][W]f64)
                       (w_start: [N][W]i64) (w_end: [N][W]i64) (k0rs: [N][4]f64)
                       (u: i64) (e: f64) : (f64, f64, f64) =
  let dopp = 0.5
  let spacing = 1 / f64.i64 W
  let j = i64.min (i64.f64 (e / spacing)) (W - 1)
  let sqrt_e = f64.sqrt e
  let facs = sig_t_factors k0rs[u] sqrt_e
  let start = w_start[u, j]
  let end = w_end[u, j]
  let (ts, as, fs) =
    unzip3 (map (\k ->
                   let q = start + k
                   in if q < end then
                        let z = c_scale dopp (c_sub (sqrt_e, 0) (cx mp_ea u q))
                        let w = faddeeva z
                        let t = (c_mul (cx mp_rt u q) (c_mul w facs[l_value[u, q]])).0 * dopp
                        let a = (c_mul (cx mp_ra u q) w).0 * dopp
                        let f = (c_mul (cx mp_rf u q) w).0 * dopp
                        in (t, a, f)
                      else (0, 0, 0))
                (iota wmax))
  in (e * fit_t[u, j] + f64.sum ts, e * fit_a[u, j] + f64.sum as, e * fit_f[u, j] + f64.sum fs)

def rs_lookup [N][P][W][K][L] (mp_ea: [N][P][2]f64) (mp_rt: [N][P][2]f64) (mp_ra: [N][P][2]f64)
                              (mp_rf: [N][P][2]f64) (l_value: [N][P]i64)
                              (fit_t: [N][W]f64) (fit_a: [N][W]f64) (fit_f: [N][W]f64)
                              (w_start: [N][W]i64) (w_end: [N][W]i64) (k0rs: [N][4]f64)
                              (mats: [12][K]i64) (num_nucs: [12]i64) (concs: [12][K]f64)
                              (energies: [L]f64) (mat_idx: [L]i64) : [L][4]f64 =
  let wmax = i64.maximum (map2 (-) (flatten w_end) (flatten w_start))
  in map2 (\e m ->
             let (ts, as, fs, es) =
               unzip4 (map3 (\slot u c ->
                               if slot < num_nucs[m] then
                                 let (t, a, f) = micro_xs wmax mp_ea mp_rt mp_ra mp_rf l_value
                                                          fit_t fit_a fit_f w_start w_end k0rs u e
                                 in (c * t, c * a, c * f, c * (t - a))
                               else (0, 0, 0, 0))
                            (iota K) mats[m] concs[m])
             in [f64.sum ts, f64.sum as, f64.sum fs, f64.sum es])
          energies mat_idx

-- ==
-- entry: lookup
-- input @ small/rsbench_small.in output @ small/rsbench_small.lookup.out
entry lookup [N][P][W][K][L] (mp_ea: [N][P][2]f64) (mp_rt: [N][P][2]f64) (mp_ra: [N][P][2]f64)
                             (mp_rf: [N][P][2]f64) (l_value: [N][P]i64)
                             (fit_t: [N][W]f64) (fit_a: [N][W]f64) (fit_f: [N][W]f64)
                             (w_start: [N][W]i64) (w_end: [N][W]i64) (k0rs: [N][4]f64)
                             (mats: [12][K]i64) (num_nucs: [12]i64) (concs: [12][K]f64)
                             (energies: [L]f64) (mat_idx: [L]i64) : [L][4]f64 =
  rs_lookup mp_ea mp_rt mp_ra mp_rf l_value fit_t fit_a fit_f w_start w_end k0rs
            mats num_nucs concs energies mat_idx

-- ==
-- entry: grad
-- input @ small/rsbench_small.in output @ small/rsbench_small.grad.out
entry grad [N][P][W][K][L] (mp_ea: [N][P][2]f64) (mp_rt: [N][P][2]f64) (mp_ra: [N][P][2]f64)
                           (mp_rf: [N][P][2]f64) (l_value: [N][P]i64)
                           (fit_t: [N][W]f64) (fit_a: [N][W]f64) (fit_f: [N][W]f64)
                           (w_start: [N][W]i64) (w_end: [N][W]i64) (k0rs: [N][4]f64)
                           (mats: [12][K]i64) (num_nucs: [12]i64) (concs: [12][K]f64)
                           (energies: [L]f64) (mat_idx: [L]i64)
                         : ([N][P][2]f64, [N][P][2]f64, [N][P][2]f64, [N][P][2]f64,
                            [N][W]f64, [N][W]f64, [N][W]f64) =
  vjp (\(ea, rt, ra, rf, ft, fa, ff) ->
         rs_lookup ea rt ra rf l_value ft fa ff w_start w_end k0rs mats num_nucs concs
                   energies mat_idx)
      (mp_ea, mp_rt, mp_ra, mp_rf, fit_t, fit_a, fit_f)
      (replicate L (replicate 4 1))
