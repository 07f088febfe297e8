"""Apollo's own wire types, written and read without Apollo installed (protobuf wire format by hand):

* ``apollo.cyber.proto.ProtoDesc`` (``cyber/proto/proto_desc.proto``): ``bytes desc = 1`` (a serialized
  ``FileDescriptorProto``) and ``repeated ProtoDesc dependencies = 2`` — what Apollo's ``get_protodesc`` returns and
  its ``RecordWriter.write_channel`` takes;
* ``apollo.cyber.proto.Header`` (``cyber/proto/record.proto``): what ``get_headerstring`` returns.

VLink bags embed a ``FileDescriptorSet`` per type instead; these convert both ways.
"""

from __future__ import annotations

from typing import Any

__all__ = ["fds_to_proto_desc", "to_file_descriptor_set", "apollo_header", "parse_fields", "APOLLO_HEADER_FIELDS"]

#: Field numbers of ``apollo.cyber.proto.Header`` (all varints).
APOLLO_HEADER_FIELDS = {
    "major_version": 1,
    "minor_version": 2,
    "compress": 3,
    "chunk_interval": 4,
    "segment_interval": 5,
    "index_position": 6,
    "chunk_number": 7,
    "channel_number": 8,
    "begin_time": 9,
    "end_time": 10,
    "message_number": 11,
    "size": 12,
    "is_complete": 13,
    "chunk_raw_size": 14,
    "segment_raw_size": 15,
}


def _varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _bytes_field(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def parse_fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of a serialized message: varints as int, length-delimited as bytes."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    n = len(data)

    def varint() -> int:
        nonlocal pos
        shift = result = 0
        while True:
            if pos >= n:
                raise ValueError("truncated varint")
            b = data[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 70:
                raise ValueError("varint too long")

    while pos < n:
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            out.append((number, wire, varint()))
        elif wire == 2:
            length = varint()
            if pos + length > n:
                raise ValueError("truncated field")
            out.append((number, wire, data[pos : pos + length]))
            pos += length
        elif wire == 1:
            out.append((number, wire, data[pos : pos + 8]))
            pos += 8
        elif wire == 5:
            out.append((number, wire, data[pos : pos + 4]))
            pos += 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
    return out


def _files_of(fds: bytes) -> dict[str, bytes]:
    """name → serialized FileDescriptorProto of a FileDescriptorSet, in order."""
    files: dict[str, bytes] = {}
    for number, wire, value in parse_fields(fds):
        if number == 1 and wire == 2:
            name = next((v.decode() for n, w, v in parse_fields(value) if n == 1 and w == 2), "")
            files.setdefault(name, value)
    return files


def _deps_of(file: bytes) -> list[str]:
    return [v.decode() for n, w, v in parse_fields(file) if n == 3 and w == 2]


def _declares(file: bytes, type_name: str) -> bool:
    fields = parse_fields(file)
    package = next((v.decode() for n, w, v in fields if n == 2 and w == 2), "")
    for n, w, v in fields:
        if n == 4 and w == 2:  # message_type
            name = next((x.decode() for nn, ww, x in parse_fields(v) if nn == 1 and ww == 2), "")
            if (f"{package}.{name}" if package else name) == type_name:
                return True
    return False


def fds_to_proto_desc(fds: bytes, type_name: str) -> bytes:
    """A FileDescriptorSet → Apollo's ProtoDesc for ``type_name``: the file declaring it, its imports as nested
    dependencies (imports the set does not hold are left out, as Apollo leaves out what it cannot find)."""
    files = _files_of(fds)
    root = next((name for name, file in files.items() if _declares(file, type_name)), None)
    if root is None:
        root = next(iter(files), None)
    if root is None:
        return b""

    def build(name: str, stack: tuple[str, ...]) -> bytes:
        file = files[name]
        out = _bytes_field(1, file)
        for dep in _deps_of(file):
            if dep in files and dep not in stack:
                out += _bytes_field(2, build(dep, (*stack, dep)))
        return out

    return build(root, (root,))


def to_file_descriptor_set(desc: bytes) -> bytes:
    """Apollo's ProtoDesc or a FileDescriptorSet → a FileDescriptorSet (dependencies first, each file once). The two
    share field 1; only a ProtoDesc has field 2 (its dependencies)."""
    fields = parse_fields(desc)
    if not any(n == 2 for n, _w, _v in fields):
        return desc  # a FileDescriptorSet (or a ProtoDesc without dependencies: the same bytes)
    ordered: dict[str, bytes] = {}

    def walk(proto_desc: bytes) -> None:
        own = parse_fields(proto_desc)
        for n, w, v in own:
            if n == 2 and w == 2:
                walk(v)
        for n, w, v in own:
            if n == 1 and w == 2:
                name = next((x.decode() for nn, ww, x in parse_fields(v) if nn == 1 and ww == 2), "")
                ordered.setdefault(name, v)

    walk(desc)
    return b"".join(_bytes_field(1, file) for file in ordered.values())


def apollo_header(info: dict[str, Any]) -> bytes:
    """``apollo.cyber.proto.Header`` filled from a bag's info: version, begin/end time (absolute ns), message and
    channel numbers, size, completeness; ``compress`` 0 (COMPRESS_NONE: chunks are not Apollo's)."""
    major, minor = (int(p) if p.isdigit() else 0 for p in (str(info.get("version", "0.0")).split(".") + ["0"])[:2])
    start_ns = int(info.get("startTimestamp", 0)) * 1_000_000
    values = {
        "major_version": major,
        "minor_version": minor,
        "compress": 0,
        "chunk_number": 0,
        "channel_number": len({u["url"] for u in info.get("urls", [])}),
        "begin_time": start_ns + int(info.get("blankDuration", 0)) * 1_000_000,
        "end_time": start_ns + int(round(float(info.get("totalDuration", 0)) * 1_000_000)),
        "message_number": int(info.get("messageCount", 0)),
        "size": int(info.get("fileSize", 0)),
        "is_complete": 1 if info.get("hasCompleted") else 0,
        "segment_interval": int(info.get("splitByTime", 0)) * 1_000_000,
        "segment_raw_size": int(info.get("splitBySize", 0)),
    }
    out = b""
    for name, number in sorted(APOLLO_HEADER_FIELDS.items(), key=lambda kv: kv[1]):
        if name in values:
            out += _varint(number << 3) + _varint(values[name])
    return out
