-- `import`: the files are relative to this one's directory; modules_lib/util.fut is imported
-- twice (here and by modules_lib/geometry.fut) and loaded once. An import does not re-export
-- what the imported file imports: `square` is in scope here because of the second import.

import "modules_lib/geometry"
import "modules_lib/util"

-- ==
-- entry: distance
-- input { 1.0 1.0 4.0 5.0 } output { 5.0 }
entry distance (x1: f64) (y1: f64) (x2: f64) (y2: f64) : f64 = dist (x1, y1) (x2, y2)

-- ==
-- entry: helpers
-- input { 3.0 } output { 4.5 21.0 }
entry helpers (x: f64) : (f64, f64) = (square x * util_consts.half, util_consts.secret_half)

-- ==
-- entry: area
-- input { 2.0 } output { 12.566370614359172 }
entry area (r: f64) : f64 = circle_area r
