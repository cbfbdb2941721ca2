-- Strings and characters (as in Futhark): a string literal is sugar for the array of its
-- UTF-8 bytes, of type [n]u8; a character literal is an integer literal whose value is the
-- character's code point, typed like any integer literal (i32 unless the context says
-- otherwise). Expected values are worked out independently (Python: list("...".encode()),
-- ord(c)).

-- "héllo\n" is the bytes 104 195 169 108 108 111 10 (é is U+00E9, two bytes in UTF-8).
-- ==
-- entry: bytes
-- input {} output { [104u8, 195u8, 169u8, 108u8, 108u8, 111u8, 10u8] 7i64 }
entry bytes = let s = "héllo\n" in (s, length s)

-- The escapes: \t \\ \" \' and the code points \65 (decimal), \x42 (hex), \o103 (octal),
-- then \xe9 (é, two UTF-8 bytes). The empty string is empty([0]u8).
-- ==
-- entry: escapes
-- input {} output { [9u8, 92u8, 34u8, 39u8, 65u8, 66u8, 67u8, 195u8, 169u8] empty([0]u8) }
entry escapes = ("\t\\\"\'\65\x42\o103\xe9", "")

-- Character literals: 'a' alone is an i32 (97); next to a u8 it is a u8; 'é' is 233 and
-- '\n' is 10; '\x41' is 65. A character literal is also a pattern.
-- ==
-- entry: chars
-- input {} output { 97 98u8 233 10u8 65 2 }
entry chars =
  let kind (c: u8) = match c case 'a' -> 1 case '\n' -> 2 case _ -> 3
  in ('a', 'a' + 1u8, 'é', '\n' : u8, '\x41', kind 10)

-- Strings as arguments: upper-casing maps over the bytes; "hello world" has three 'l's;
-- string equality compares lengths and bytes.
-- ==
-- entry: functions
-- input {} output { "HI THERE!" 3i64 true false }
def upper (s: []u8) = map (\c -> if c >= 'a' && c <= 'z' then c - ('a' - 'A') else c) s
def count (c: u8) (s: []u8) = i64.sum (map (\d -> i64.bool (c == d)) s)
def streq [n] [m] (a: [n]u8) (b: [m]u8) =
  n == m && and (map2 (==) a (b :> [n]u8))

entry functions =
  (upper "Hi there!", count 'l' "hello world", streq "abc" "abc", streq "abc" "abd")

-- A string as input (the value format's strings use the same escapes): the sum of the bytes
-- of "abc\n" is 97 + 98 + 99 + 10 = 304, and the input reversed.
-- ==
-- entry: input_string
-- input { "abc\n" } output { 304 "\ncba" }
-- input { "" } output { 0 "" }
entry input_string (s: []u8) = (i32.sum (map i32.u8 s), reverse s)
