-- Index sections (.[i]) are not supported.
-- ==
-- error: not supported

entry main (xss: [][]i32) : []i32 = map (.[0]) xss
