-- A helper file imported by geometry.fut and by ../modules_import.fut (no tests of its own).

def square (x: f64) : f64 = x * x

-- Not visible to importers.
local def secret : f64 = 42.0

module util_consts = {
  def half : f64 = 0.5
  def secret_half : f64 = secret / 2.0
}
