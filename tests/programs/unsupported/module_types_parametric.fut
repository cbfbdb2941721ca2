-- Module types of parametric modules (`(P: S) -> S'`) are not supported (valid Futhark,
-- rejected by vkad); parametric modules themselves are.
-- ==
-- error: not supported

module type monoid = { type t val op : t -> t -> t }

module type mk_monoid = (M: monoid) -> monoid

entry main (y: i32) : i32 = y
