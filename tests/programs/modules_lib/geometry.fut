-- A helper file imported by ../modules_import.fut; it imports util.fut from its own directory.

import "util"

def dist (a: (f64, f64)) (b: (f64, f64)) : f64 =
  f64.sqrt (square (a.0 - b.0) + square (a.1 - b.1))

def circle_area (r: f64) : f64 = f64.pi * square r
