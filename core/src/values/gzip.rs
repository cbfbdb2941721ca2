//! Decompressing gzip files (RFC 1952) with a small DEFLATE decoder (RFC 1951), for test data
//! files such as `foo.out.gz` that Futhark's test suite uses. Decoding is bit by bit (in the
//! style of zlib's `puff`): simple, and fast enough for test data.

/// Bits of a byte slice, least significant first.
struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
    bit: u32,
    nbits: u32,
}

const TRUNCATED: &str = "gzip: unexpected end of data";

impl<'a> Bits<'a> {
    fn new(data: &'a [u8]) -> Bits<'a> {
        Bits {
            data,
            pos: 0,
            bit: 0,
            nbits: 0,
        }
    }
    /// `n` (at most 24) bits as a number, first bit least significant.
    fn bits(&mut self, n: u32) -> Result<u32, String> {
        while self.nbits < n {
            let b = *self.data.get(self.pos).ok_or(TRUNCATED)?;
            self.pos += 1;
            self.bit |= (b as u32) << self.nbits;
            self.nbits += 8;
        }
        let v = self.bit & ((1u32 << n) - 1);
        self.bit >>= n;
        self.nbits -= n;
        Ok(v)
    }
    /// Drop the bits left in the current byte.
    fn align(&mut self) {
        self.bit = 0;
        self.nbits = 0;
    }
}

/// A canonical Huffman code: the number of codes of each length and the symbols in code order.
struct Huffman {
    counts: [u16; 16],
    symbols: Vec<u16>,
}

impl Huffman {
    fn new(lengths: &[u8]) -> Result<Huffman, String> {
        let mut counts = [0u16; 16];
        for &l in lengths {
            counts[l as usize] += 1;
        }
        counts[0] = 0;
        let mut left: i32 = 1;
        for &c in &counts[1..] {
            left = left * 2 - c as i32;
            if left < 0 {
                return Err("gzip: over-subscribed Huffman code".into());
            }
        }
        let mut offs = [0u16; 16];
        for l in 1..15 {
            offs[l + 1] = offs[l] + counts[l];
        }
        let mut symbols = vec![0u16; lengths.len()];
        for (sym, &l) in lengths.iter().enumerate() {
            if l != 0 {
                symbols[offs[l as usize] as usize] = sym as u16;
                offs[l as usize] += 1;
            }
        }
        Ok(Huffman { counts, symbols })
    }

    fn decode(&self, bits: &mut Bits) -> Result<u16, String> {
        let (mut code, mut first, mut index) = (0i32, 0i32, 0i32);
        for len in 1..16 {
            code |= bits.bits(1)? as i32;
            let count = self.counts[len] as i32;
            if code - first < count {
                return self
                    .symbols
                    .get((index + code - first) as usize)
                    .copied()
                    .ok_or_else(|| "gzip: bad code".into());
            }
            index += count;
            first = (first + count) << 1;
            code <<= 1;
        }
        Err("gzip: invalid Huffman code".into())
    }
}

const LEN_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LEN_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

fn inflate_block(
    bits: &mut Bits,
    out: &mut Vec<u8>,
    lit: &Huffman,
    dist: &Huffman,
) -> Result<(), String> {
    loop {
        let sym = lit.decode(bits)?;
        match sym {
            0..=255 => out.push(sym as u8),
            256 => return Ok(()),
            _ => {
                let i = (sym - 257) as usize;
                if i >= LEN_BASE.len() {
                    return Err("gzip: invalid length code".into());
                }
                let len = LEN_BASE[i] as usize + bits.bits(LEN_EXTRA[i] as u32)? as usize;
                let d = dist.decode(bits)? as usize;
                if d >= DIST_BASE.len() {
                    return Err("gzip: invalid distance code".into());
                }
                let back = DIST_BASE[d] as usize + bits.bits(DIST_EXTRA[d] as u32)? as usize;
                if back > out.len() {
                    return Err("gzip: distance too far back".into());
                }
                let start = out.len() - back;
                for k in 0..len {
                    out.push(out[start + k]);
                }
            }
        }
    }
}

fn dynamic_tables(bits: &mut Bits) -> Result<(Huffman, Huffman), String> {
    const ORDER: [usize; 19] = [
        16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
    ];
    let nlen = bits.bits(5)? as usize + 257;
    let ndist = bits.bits(5)? as usize + 1;
    let ncode = bits.bits(4)? as usize + 4;
    if nlen > 286 || ndist > 30 {
        return Err("gzip: bad code counts".into());
    }
    let mut cl = [0u8; 19];
    for &o in &ORDER[..ncode] {
        cl[o] = bits.bits(3)? as u8;
    }
    let clh = Huffman::new(&cl)?;
    let mut lengths = Vec::with_capacity(nlen + ndist);
    while lengths.len() < nlen + ndist {
        let sym = clh.decode(bits)?;
        let (value, repeat) = match sym {
            0..=15 => (sym as u8, 1),
            16 => (
                *lengths
                    .last()
                    .ok_or("gzip: repeat with no previous length")?,
                3 + bits.bits(2)? as usize,
            ),
            17 => (0, 3 + bits.bits(3)? as usize),
            18 => (0, 11 + bits.bits(7)? as usize),
            _ => return Err("gzip: bad code length code".into()),
        };
        if lengths.len() + repeat > nlen + ndist {
            return Err("gzip: too many code lengths".into());
        }
        lengths.extend(std::iter::repeat_n(value, repeat));
    }
    Ok((
        Huffman::new(&lengths[..nlen])?,
        Huffman::new(&lengths[nlen..])?,
    ))
}

/// Decompress a raw DEFLATE stream; returns the data and the number of input bytes used.
fn inflate(data: &[u8]) -> Result<(Vec<u8>, usize), String> {
    let mut bits = Bits::new(data);
    let mut out = Vec::new();
    loop {
        let last = bits.bits(1)? == 1;
        match bits.bits(2)? {
            0 => {
                bits.align();
                let p = bits.pos;
                let hdr = data.get(p..p + 4).ok_or(TRUNCATED)?;
                let len = u16::from_le_bytes([hdr[0], hdr[1]]);
                let nlen = u16::from_le_bytes([hdr[2], hdr[3]]);
                if len != !nlen {
                    return Err("gzip: corrupt stored block".into());
                }
                let body = data.get(p + 4..p + 4 + len as usize).ok_or(TRUNCATED)?;
                out.extend_from_slice(body);
                bits.pos = p + 4 + len as usize;
            }
            1 => {
                let mut l = [0u8; 288];
                l[..144].fill(8);
                l[144..256].fill(9);
                l[256..280].fill(7);
                l[280..].fill(8);
                let lit = Huffman::new(&l)?;
                let dist = Huffman::new(&[5u8; 30])?;
                inflate_block(&mut bits, &mut out, &lit, &dist)?;
            }
            2 => {
                let (lit, dist) = dynamic_tables(&mut bits)?;
                inflate_block(&mut bits, &mut out, &lit, &dist)?;
            }
            _ => return Err("gzip: invalid block type".into()),
        }
        if last {
            return Ok((out, bits.pos));
        }
    }
}

/// The CRC-32 (IEEE) of `data`, as gzip stores it.
pub fn crc32(data: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *t = c;
    }
    let mut crc = !0u32;
    for &b in data {
        crc = table[((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// Whether `data` starts with the gzip magic bytes.
pub fn is_gzip(data: &[u8]) -> bool {
    data.starts_with(&[0x1f, 0x8b])
}

/// Decompress gzip data (one or more members), checking each member's CRC-32 and size.
pub fn gunzip(data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut p = 0;
    while p < data.len() {
        let d = &data[p..];
        if d.len() < 18 || !is_gzip(d) || d[2] != 8 {
            return Err("gzip: not a gzip (deflate) member".into());
        }
        let flags = d[3];
        let mut q = 10;
        if flags & 4 != 0 {
            let x = d.get(q..q + 2).ok_or(TRUNCATED)?;
            q += 2 + u16::from_le_bytes([x[0], x[1]]) as usize;
        }
        for bit in [8u8, 16] {
            if flags & bit != 0 {
                let z = d
                    .get(q..)
                    .ok_or(TRUNCATED)?
                    .iter()
                    .position(|&b| b == 0)
                    .ok_or(TRUNCATED)?;
                q += z + 1;
            }
        }
        if flags & 2 != 0 {
            q += 2;
        }
        let (member, used) = inflate(d.get(q..).ok_or(TRUNCATED)?)?;
        let t = d.get(q + used..q + used + 8).ok_or(TRUNCATED)?;
        let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        let size = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
        if crc != crc32(&member) || size != member.len() as u32 {
            return Err("gzip: checksum mismatch (corrupt data)".into());
        }
        out.extend_from_slice(&member);
        p += q + used + 8;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gzip member holding `payload` in one stored (uncompressed) block.
    fn stored_gzip(payload: &[u8]) -> Vec<u8> {
        let mut g = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
        g.push(1); // BFINAL=1, BTYPE=00
        let n = payload.len() as u16;
        g.extend_from_slice(&n.to_le_bytes());
        g.extend_from_slice(&(!n).to_le_bytes());
        g.extend_from_slice(payload);
        g.extend_from_slice(&crc32(payload).to_le_bytes());
        g.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        g
    }

    #[test]
    fn crc() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn stored_and_multi_member() {
        let mut g = stored_gzip(b"[1, 2, 3]\n");
        g.extend(stored_gzip(b"4i64\n"));
        assert_eq!(gunzip(&g).unwrap(), b"[1, 2, 3]\n4i64\n");
        let mut bad = stored_gzip(b"abc");
        let n = bad.len();
        bad[n - 8] ^= 1;
        assert!(gunzip(&bad).unwrap_err().contains("checksum"));
        assert!(gunzip(&g[..g.len() - 3]).is_err());
        assert!(gunzip(b"not gzip at all, no").is_err());
    }

    #[test]
    fn fixed_huffman() {
        // `printf 'hello hello hello hello\\n' | gzip -n -9`: a fixed-Huffman block with a
        // back-reference.
        let g: &[u8] = &[
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48, 0xcd, 0xc9,
            0xc9, 0x57, 0xc8, 0x40, 0x27, 0xb9, 0x00, 0x00, 0x88, 0x59, 0x0b, 0x18, 0x00, 0x00,
            0x00,
        ];
        assert_eq!(gunzip(g).unwrap(), b"hello hello hello hello\n");
    }

    #[test]
    fn dynamic_huffman() {
        // Python's `gzip.compress(text, mtime=0)` of the text below: a dynamic-Huffman block.
        let g: &[u8] = &[
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x5d, 0xd2, 0xb9, 0x09,
            0x03, 0x41, 0x10, 0x44, 0x51, 0x5f, 0x51, 0x6c, 0x00, 0x42, 0xf4, 0x35, 0x57, 0x2c,
            0xcb, 0xba, 0x02, 0xe5, 0x9f, 0x80, 0x60, 0x60, 0x8c, 0x5f, 0x66, 0x39, 0x0f, 0xaa,
            0xba, 0x6f, 0xfb, 0x65, 0xbc, 0x2f, 0xfb, 0xb4, 0x6f, 0xc6, 0x73, 0xdd, 0x63, 0x47,
            0x3f, 0xd1, 0x77, 0x8c, 0x13, 0xe7, 0x8e, 0x79, 0x62, 0xec, 0x58, 0x27, 0x2e, 0x52,
            0x29, 0x94, 0xd1, 0x2a, 0x5a, 0xee, 0xc4, 0x1a, 0x31, 0x0f, 0x6a, 0x9d, 0x98, 0x11,
            0x1b, 0xb4, 0x9c, 0xd6, 0x24, 0x15, 0xa4, 0x16, 0xa9, 0x14, 0x4a, 0xf6, 0x2a, 0x29,
            0x29, 0x83, 0x35, 0x29, 0x29, 0x8b, 0x75, 0x62, 0x46, 0x6c, 0xd0, 0x72, 0x5a, 0x93,
            0x54, 0x90, 0x5a, 0xa4, 0x52, 0x28, 0xd9, 0xab, 0xa4, 0xa4, 0x0c, 0xd6, 0xa4, 0xa4,
            0x2c, 0xd6, 0x89, 0x19, 0xb1, 0x21, 0x87, 0xa4, 0x35, 0x49, 0x05, 0xa9, 0x45, 0x2a,
            0x85, 0x92, 0xbd, 0x4a, 0x4a, 0xca, 0x60, 0x4d, 0x4a, 0xca, 0x62, 0x9d, 0x98, 0x7c,
            0xeb, 0x90, 0x43, 0xd2, 0x9a, 0xa4, 0xe4, 0x57, 0x17, 0xa9, 0x14, 0x8a, 0x7b, 0xbd,
            0xfe, 0xbc, 0x6f, 0x58, 0x29, 0x92, 0x03, 0x00, 0x00,
        ];
        let text: String = (0..60)
            .map(|i| format!("[{}i32, {}.5f32] ", i * 7 % 13, i % 5))
            .collect::<String>()
            + "\n";
        assert_eq!(gunzip(g).unwrap(), text.as_bytes());
    }

    #[test]
    fn futhark_test_data_file() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../futhark-ref/tests/ad/reducebyindexminmax7.out.gz");
        let Ok(bytes) = std::fs::read(path) else {
            return; // The reference tree is not available here.
        };
        let data = gunzip(&bytes).unwrap();
        let vs = crate::values::parse_values(&data).unwrap();
        // The expected result of the entry points: one [m][n][k]f32 array.
        assert_eq!(vs.len(), 1);
        assert_eq!(vs[0].type_name(), "[100][500][30]f32");
    }

    #[test]
    fn garbage_never_panics() {
        let mut g = stored_gzip(b"some payload here");
        for i in 10..g.len() {
            let mut h = g.clone();
            h[i] ^= 0x5a;
            let _ = gunzip(&h);
            h.truncate(i);
            let _ = gunzip(&h);
        }
        g[10] = 0b101; // a dynamic block header followed by garbage
        let _ = gunzip(&g);
    }
}
