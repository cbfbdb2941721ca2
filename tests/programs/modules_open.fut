-- `open`, `local`, `include` and `local open`.

module consts = {
  def two : i32 = 2
  def three : i32 = 3
}

open consts

module ext = {
  -- `include` (like `open`) makes the members part of this module.
  include consts
  local def hidden (x: i32) : i32 = x * 100
  def five : i32 = two + three
  def times_hidden (x: i32) : i32 = hidden x + 1
}

local open ext

-- `five` comes from the `local open`, `two` from the `open`.
def seven : i32 = five + two

-- ==
-- entry: opens
-- input { 1 } output { 8 5 201 2 }
entry opens (x: i32) : (i32, i32, i32, i32) = (x + seven, ext.five, ext.times_hidden 2, ext.two)

-- A parameter hides an opened name.
-- ==
-- entry: shadow_open
-- input { 10 } output { 13 }
entry shadow_open (two: i32) : i32 = two + three

-- `local` top-level definitions are usable in the file.
local def twice (x: i32) : i32 = 2 * x

-- ==
-- entry: local_def
-- input { 21 } output { 42 }
entry local_def (x: i32) : i32 = twice x

-- Opening inside a module body: the names are in scope there and become members.
module more = {
  open { def six : i32 = 6 }
  def twelve : i32 = six * 2
}

-- ==
-- entry: nested_open
-- input { 0 } output { 12 6 }
entry nested_open (x: i32) : (i32, i32) = (x + more.twelve, more.six)
