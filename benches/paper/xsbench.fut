-- XSBench's event-based macroscopic cross-section lookup (Tramm, Siegel, Islam, Schulz, "XSBench
-- - the development and verification of a performance abstraction for Monte Carlo reactor
-- analysis", PHYSOR 2014), differentiated with respect to the cross-section data as in paper 000
-- (§7.3, Table 2: Futhark's AD overhead 2.6×, Enzyme's 3.2×).
--
-- Data: `i` nuclides, each with `g` grid points: energies `egrid[n]` (sorted, in [0, 1)) and five
-- microscopic cross sections per point `xs[n][k]` (total, elastic, absorption, fission,
-- nu-fission). A material `m` holds `num_nucs[m]` nuclides `mats[m][0..]` at concentrations
-- `concs[m][0..]` (rows padded to the largest material). A lookup is an energy `e` and a
-- material `m`; its macroscopic cross sections are
--
--   Σ_c(e, m) = Σ_{j < num_nucs[m]} concs[m][j] · σ_c(mats[m][j], e)      (c = 0..4)
--
-- where σ_c(n, e) interpolates linearly between the grid points around `e` of nuclide n:
-- with `lo` the interval found by XSBench's binary search (the largest lo in [0, g-2] with
-- egrid[n][lo] <= e, where only egrid[n][1..g-2] are compared, so energies outside the grid
-- extrapolate from its first or last interval), hi = lo + 1 and
-- f = (egrid[n][hi] - e) / (egrid[n][hi] - egrid[n][lo]):
--
--   σ_c(n, e) = xs[n][hi][c] - f · (xs[n][hi][c] - xs[n][lo][c]).
--
-- This is XSBench's "nuclide grid" search (`-G nuclide`: one binary search per nuclide); its
-- default unionised grid trades memory (an index of i·g × i entries) for fewer searches and
-- computes the same values.
--
-- Entries: `lookup` (the primal: Σ for every lookup, [l][5]) and `grad` (the vjp of the sum of all
-- lookups' cross sections, i.e. a seed of ones, with respect to `xs`: for each grid point, how much
-- the total depends on it). Data: benches/paper/gen_xsbench.py; peers: benches/peers/xsbench_{jax,torch}.py.

def grid_search [g] (egrid: [g]f64) (e: f64) : i64 =
  let (lo, _) =
    loop (lo, hi) = (0, g - 1) while hi - lo > 1 do
      let mid = lo + (hi - lo) / 2
      in if egrid[mid] > e then (lo, mid) else (mid, hi)
  in lo

def micro_xs [g] (egrid: [g]f64) (xs: [g][5]f64) (e: f64) : [5]f64 =
  let lo = grid_search egrid e
  let hi = lo + 1
  let f = (egrid[hi] - e) / (egrid[hi] - egrid[lo])
  in map2 (\h l -> h - f * (h - l)) xs[hi] xs[lo]

def macro_xs [i][g][m][k] (egrid: [i][g]f64) (xs: [i][g][5]f64)
                          (num_nucs: [m]i64) (mats: [m][k]i64) (concs: [m][k]f64)
                          (e: f64) (mat: i64) : [5]f64 =
  loop acc = replicate 5 0f64 for j < num_nucs[mat] do
    let n = mats[mat, j]
    let micro = micro_xs egrid[n] xs[n] e
    in map2 (\a s -> a + concs[mat, j] * s) acc micro

def simulate [i][g][m][k][l] (egrid: [i][g]f64) (num_nucs: [m]i64) (mats: [m][k]i64)
                             (concs: [m][k]f64) (energies: [l]f64) (materials: [l]i64)
                             (xs: [i][g][5]f64) : [l][5]f64 =
  map2 (macro_xs egrid xs num_nucs mats concs) energies materials

-- ==
-- entry: lookup
-- input @ small/xsbench_small.in output @ small/xsbench_small.lookup.out
entry lookup [i][g][m][k][l] (egrid: [i][g]f64) (xs: [i][g][5]f64) (num_nucs: [m]i64)
                             (mats: [m][k]i64) (concs: [m][k]f64) (energies: [l]f64)
                             (materials: [l]i64) : [l][5]f64 =
  simulate egrid num_nucs mats concs energies materials xs

-- ==
-- entry: grad
-- input @ small/xsbench_small.in output @ small/xsbench_small.grad.out
entry grad [i][g][m][k][l] (egrid: [i][g]f64) (xs: [i][g][5]f64) (num_nucs: [m]i64)
                           (mats: [m][k]i64) (concs: [m][k]f64) (energies: [l]f64)
                           (materials: [l]i64) : [i][g][5]f64 =
  vjp (simulate egrid num_nucs mats concs energies materials) xs
      (replicate l (replicate 5 1))
