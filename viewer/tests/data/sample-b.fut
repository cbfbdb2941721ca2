-- sample.fut after a change (the viewer tests' comparison): the loop runs 2 steps
-- instead of 4, so the forward sweep, the checkpoints and the return sweep all get
-- shorter.

def step [n] (w: [n]f64) (x: [n]f64) : [n]f64 =
  map2 (\wi xi -> f64.tanh (wi * xi + 0.5)) w x

def model [n] (w: [n]f64) (x0: [n]f64) : f64 =
  let x = loop x = x0 for _i < 2 do step w x
  let sq = map (\v -> v * v) x
  in reduce (+) 0 sq

entry loss [n] (w: [n]f64) (x0: [n]f64) : f64 =
  model w x0

entry main [n] (w: [n]f64) (x0: [n]f64) : (f64, [n]f64) =
  (model w x0, vjp (\v -> model v x0) w 1.0)
