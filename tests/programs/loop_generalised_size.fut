-- A loop whose matrix gets its outer size from a permutation (a `map` over an index array):
-- lowering generalises the size, so the loop must not run as the code of one thread (whose
-- results would have a size known only after it ran: an internal error on Vulkan before).
-- By hand: j = 0 swaps the rows and doubles column 0, [[6, 4], [2, 2]]; j = 1 swaps them back
-- and doubles row 1 of column 1: [[2, 2], [6, 8]]; p = [1, 1].
def permute [n] 'a (p: [n]i64) (v: [n]a) : [n]a = map (\i -> v[i]) p

def step [m] (mat: *[m][m]f64) (p: [m]i64) (j: i64) : (*[m][m]f64, [m]i64) =
  let p = copy p with [j] = p[m - 1 - j]
  let mat = permute (reverse (iota m)) mat
  let mat[j:, j] = map (* 2) mat[j:, j]
  in (mat, p)

def run [m] (mat: *[m][m]f64) : ([m][m]f64, [m]i64) =
  loop (mat, p) = (mat, iota m) for j < m do step mat p j

-- ==
-- input { [[1.0, 2.0], [3.0, 4.0]] } output { [[2.0, 2.0], [6.0, 8.0]] [1i64, 1i64] }
entry main = run
