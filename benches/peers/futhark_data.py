"""Futhark's binary value format (reading) and text value format (writing), numpy only.

Binary: per value, b'b', version 2, rank (1 byte), the element type as 4 ASCII bytes (' f64',
' i64', ...), rank dimensions as little-endian i64, then the elements, little-endian, row-major.
"""
import struct

import numpy as np

_TYPES = {b"  i8": "<i1", b" i16": "<i2", b" i32": "<i4", b" i64": "<i8", b"  u8": "<u1",
          b" u16": "<u2", b" u32": "<u4", b" u64": "<u8", b" f16": "<f2", b" f32": "<f4",
          b" f64": "<f8", b"bool": "?"}
_SUFFIX = {"int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
           "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16", "float32": "f32",
           "float64": "f64"}


def read_values(path):
    """Every value of a file in Futhark's binary format, as numpy arrays (0-d for scalars)."""
    with open(path, "rb") as f:
        data = f.read()
    out, pos = [], 0
    while pos < len(data):
        if data[pos:pos + 1].isspace():
            pos += 1
            continue
        if data[pos:pos + 2] != b"b\x02":
            raise ValueError(f"{path}: offset {pos}: not a binary value (text values are not read here)")
        rank = data[pos + 2]
        ty = data[pos + 3:pos + 7]
        if ty not in _TYPES:
            raise ValueError(f"{path}: unknown element type {ty!r}")
        dims = struct.unpack_from("<%dq" % rank, data, pos + 7)
        pos += 7 + 8 * rank
        dt = np.dtype(_TYPES[ty])
        count = int(np.prod(dims)) if rank else 1
        a = np.frombuffer(data, dtype=dt, count=count, offset=pos).reshape(dims)
        pos += count * dt.itemsize
        out.append(a.astype(dt.newbyteorder("=")))
    return out


def _scalar(x, suffix):
    if suffix.startswith("f"):
        x = float(x)
        if x != x:
            return f"f{suffix[1:]}.nan"
        if x in (float("inf"), float("-inf")):
            return ("-" if x < 0 else "") + f"f{suffix[1:]}.inf"
        return repr(x) + suffix
    if suffix == "bool":
        return "true" if x else "false"
    return str(int(x)) + suffix


def to_text(value):
    """A value in Futhark's text format (floats as Python's shortest round-tripping repr)."""
    a = np.asarray(value)
    suffix = "bool" if a.dtype == np.bool_ else _SUFFIX[a.dtype.name]

    def go(x):
        if x.ndim == 0:
            return _scalar(x[()], suffix)
        return "[" + ", ".join(go(r) for r in x) + "]"

    if a.size == 0:
        return "empty(" + "".join(f"[{d}]" for d in a.shape) + suffix + ")"
    return go(a)
