"""Pure-Python LZAV decoder (stream formats 3 and 2), a line-by-line port of the TypeScript decoder
(``packages/core/src/codecs/lzav/decode-v3.ts``, ``decode-v2.ts``): same acceptance rules, same error texts.

It is the fallback when the C extension (``_lzav_c``) was not built; :func:`vlink_bag.lzav.decompress` picks.
Copies use ``bytearray`` slices (memcpy speed); overlapping references repeat their period by doubling.
"""

from __future__ import annotations

from .errors import LzavError

__all__ = ["decode"]

_MIN_OFFSET = 8


def _copy_match(out: bytearray, op: int, dist: int, length: int) -> None:
    start = op - dist
    if dist >= length:
        out[op : op + length] = out[start : start + length]
        return
    # Overlap: the result repeats with period `dist`; grow the copied region geometrically.
    done = 0
    while done < length:
        step = min(done + dist, length - done)
        out[op + done : op + done + step] = out[start : start + step]
        done += step


def _long_length(src: bytes, ip: int) -> tuple[int, int]:
    """Reads the base-128 extension of a length field (at most 5 bytes): (length - 16, new ip)."""
    b = src[ip]
    ip += 1
    length = b & 0x7F
    if b & 0x80:
        scale = 128
        for _ in range(4):
            c = src[ip]
            ip += 1
            length += (c & 0x7F) * scale
            if not c & 0x80:
                break
            scale *= 128
    return length, ip


def _decode_v3(src: bytes, out: bytearray, dst_len: int, dry: bool) -> None:
    src_len = len(src)
    if src_len < 11:
        raise LzavError("stream too short")
    mref_minus1 = (src[0] & 15) - 1
    if mref_minus1 < 0 or mref_minus1 > 5:
        raise LzavError("invalid minimum match length")
    header_end = src_len - 9
    ref_limit = dst_len - 8
    ip = 1
    op = 0
    carry = 0
    carry_shift = 0
    while ip < header_end:
        bh = src[ip]
        ip += 1
        if not bh & 0x30:
            carry |= (bh >> 6) << carry_shift
            carry_shift += 2
            length = bh & 15
            if length == 0:
                length, ip = _long_length(src, ip)
                length += 16
            if length > dst_len - op:
                raise LzavError("literals overrun the output")
            if length > src_len - ip:
                raise LzavError("literals overrun the input")
            if not dry:
                out[op : op + length] = src[ip : ip + length]
            op += length
            ip += length
            if ip >= header_end:
                break
            bh = src[ip]
            ip += 1
        kind = (bh >> 4) & 3
        offset = 0
        next_carry = 0
        next_shift = 0
        if kind == 1:
            offset = (src[ip] << 2) | (bh >> 6)
        elif kind == 2:
            b1 = src[ip + 1]
            offset = ((b1 & 0x1F) << 10) | (src[ip] << 2) | (bh >> 6)
            next_carry = b1 >> 5
            next_shift = 3
        elif kind == 3:
            b2 = src[ip + 2]
            offset = ((b2 & 7) << 18) | (src[ip + 1] << 10) | (src[ip] << 2) | (bh >> 6)
            next_carry = b2 >> 3
            next_shift = 5
        dist = (offset << carry_shift) | carry
        carry = next_carry
        carry_shift = next_shift
        ip += kind
        length = bh & 15
        if length == 0:
            length, ip = _long_length(src, ip)
            length += 16
        length += mref_minus1
        if dist < _MIN_OFFSET or dist > op:
            raise LzavError("reference offset out of range")
        if length > ref_limit - op:
            raise LzavError("reference overruns the output")
        if not dry:
            _copy_match(out, op, dist, length)
        op += length
    if op != dst_len:
        raise LzavError(f"decoded {op} bytes, expected {dst_len}")


def _decode_v2(src: bytes, out: bytearray, dst_len: int, dry: bool) -> None:
    src_len = len(src)
    if src_len < 8:
        raise LzavError("stream too short")
    mref_minus1 = (src[0] & 15) - 1
    if mref_minus1 < 0 or mref_minus1 > 5:
        raise LzavError("invalid minimum match length")
    header_end = src_len - 6
    ip = 1
    op = 0
    carry = 0
    carry_shift = 0
    while ip < header_end:
        bh = src[ip]
        ip += 1
        if not bh & 0x30:
            carry |= (bh >> 6) << carry_shift
            carry_shift += 2
            length = bh & 15
            if length == 0:
                length, ip = _long_length(src, ip)
                length += 16
            if length > dst_len - op:
                raise LzavError("literals overrun the output")
            if length > src_len - ip:
                raise LzavError("literals overrun the input")
            if not dry:
                out[op : op + length] = src[ip : ip + length]
            op += length
            ip += length
            if ip >= header_end:
                break
            bh = src[ip]
            ip += 1
        kind = (bh >> 4) & 3
        raw = 0
        if kind >= 1:
            raw = src[ip]
        if kind >= 2:
            raw |= src[ip + 1] << 8
        if kind == 3:
            raw |= src[ip + 2] << 16
        dist = ((((raw << 2) | (bh >> 6)) & 0x7FFFFF) << carry_shift) | carry
        carry = raw >> 21
        carry_shift = 3 if kind == 3 else 0
        ip += kind
        length = bh & 15
        if length == 0:
            b = src[ip]
            ip += 1
            length = 16 + b
            if b == 255:
                length += src[ip]
                ip += 1
        length += mref_minus1
        if dist > op:
            raise LzavError("reference offset out of range")
        if length > dist:
            raise LzavError("overlapping reference in a format-2 stream")
        if length > dst_len - op:
            raise LzavError("reference overruns the output")
        if not dry:
            _copy_match(out, op, dist, length)
        op += length
    if op != dst_len:
        raise LzavError(f"decoded {op} bytes, expected {dst_len}")


def decode(src: bytes, raw_length: int, dry: bool = False) -> bytes:
    """Decodes a whole stream of format 3 or 2 (``src[0] >> 4``) to exactly ``raw_length`` bytes. The caller has
    handled empty streams and checked ``raw_length``. An index past the end of ``src`` means a truncated stream."""
    fmt = src[0] >> 4
    if fmt == 3:
        fn = _decode_v3
    elif fmt == 2:
        fn = _decode_v2
    else:
        raise LzavError(f"unsupported stream format {fmt}")
    out = bytearray(0 if dry else raw_length)
    try:
        fn(src, out, raw_length, dry)
    except IndexError:
        # The TypeScript decoder reads `undefined` past the end, which then fails a range check; every such stream
        # is corrupt either way. Checked against the TS decoder on truncated vectors (tests/test_lzav.py).
        raise LzavError("stream ends inside a block") from None
    return bytes(out)
