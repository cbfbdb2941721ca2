-- The vjp of matrix multiplication. Its return sweep accumulates both adjoints in a withacc
-- inside a map nest; the accumulator-to-reduction pass (core/src/passes/acc_to_reduce.rs, paper
-- 000 §6.1) turns each accumulation into a map/reduce nest: Ā = C̄·Bᵀ, B̄ = Aᵀ·C̄.

def matmul [n][m][p] (a: [n][m]f64) (b: [m][p]f64) : [n][p]f64 =
  map (\xs -> map (\ys -> reduce (+) 0 (map2 (*) xs ys)) (transpose b)) a

-- A = [[1,2],[3,4]], B = [[5,6],[7,8]], C̄ = I: Ā = Bᵀ, B̄ = Aᵀ. Then A (2×3), B (3×1), C̄ = [[1],[2]]:
-- Ā[i,k] = C̄[i]·B[k], B̄[k] = Σᵢ A[i,k]·C̄[i].
-- ==
-- entry: grad
-- input { [[1.0, 2.0], [3.0, 4.0]] [[5.0, 6.0], [7.0, 8.0]] [[1.0, 0.0], [0.0, 1.0]] }
-- output { [[5.0, 7.0], [6.0, 8.0]] [[1.0, 3.0], [2.0, 4.0]] }
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [[1.0], [-1.0], [2.0]] [[1.0], [2.0]] }
-- output { [[1.0, -1.0, 2.0], [2.0, -2.0, 4.0]] [[9.0], [12.0], [15.0]] }
-- input { empty([0][2]f64) [[1.0], [2.0]] empty([0][1]f64) }
-- output { empty([0][2]f64) [[0.0], [0.0]] }
entry grad [n][m][p] (a: [n][m]f64) (b: [m][p]f64) (cbar: [n][p]f64) : ([n][m]f64, [m][p]f64) =
  vjp (\(a, b) -> matmul a b) (a, b) cbar
