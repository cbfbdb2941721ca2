-- Every point reads the whole matrix `m` and adds the outer product of 2 (m x) and x into its
-- adjoint. The value each update needs, (m x)_i, is an inner reduction: flattening stores it
-- per point and row (core/src/flatten/acc_store.rs) and turns the contended
-- updates into a reduction over the points, one thread per element of the matrix or a
-- segmented reduction (core/src/flatten/acc_red.rs). The results are the interpreter's.
-- ==
-- entry: grad
-- input { [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [0.1, 0.2, 0.3]]
--         [[1.0, 0.5, -0.4], [0.2, 0.3, 0.4], [-0.7, 0.9, 1.1], [2.0, -1.0, 0.5]] }
-- output { [[9.309999999999999, -4.7299999999999995, 6.210000000000001],
--           [15.645, -5.545, -1.8450000000000006],
--           [0.22400000000000003, 0.6920000000000002, 1.2140000000000002]] }
entry grad [n][d] (m: [d][d]f64) (xs: [n][d]f64) : [d][d]f64 =
  vjp (\m -> f64.sum (map (\x -> let v = map (\row -> f64.sum (map2 (*) row x)) m
                                 in f64.sum (map (\a -> a * a) v)) xs))
      m 1
