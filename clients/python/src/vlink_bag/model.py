"""VLink's enums and their text forms (format reference §10): SchemaType families, ActionType, url kinds; the same
rules as ``packages/core/src/model`` so local reading derives the same values the server reports."""

from __future__ import annotations

from .frames import ACTIONS

__all__ = [
    "SCHEMA_LABELS",
    "parse_schema_type",
    "resolve_schema_type",
    "schema_type_label",
    "parse_action",
    "url_kind",
    "ser_for_action",
    "counts_for_frequency",
]

UNKNOWN, RAW, ZEROCOPY, PROTOBUF, FLATBUFFERS, CDR = range(6)
SCHEMA_LABELS = {UNKNOWN: "", RAW: "raw", ZEROCOPY: "zerocopy", PROTOBUF: "protobuf", FLATBUFFERS: "flatbuffers", CDR: "cdr"}
_ACCEPTED = {
    **{s: RAW for s in ("raw", "json", "text", "blob", "string", "std::string", "application/json", "text/json")},
    "zerocopy": ZEROCOPY,
    "vlink_msg": ZEROCOPY,
    "protobuf": PROTOBUF,
    "proto": PROTOBUF,
    **{s: FLATBUFFERS for s in ("flatbuffers", "flatbuffer", "fbs", "bfbs")},
    "cdr": CDR,
    "ros2msg": CDR,
    "ros2idl": CDR,
}
#: The labels ``parse_schema_type`` knows, for messages.
SCHEMA_TYPE_LABELS = frozenset(_ACCEPTED)
_RAW_SERS = frozenset({"raw", "string", "std::string", "text", "json", "application/json", "text/json"})
_ACTION_VALUES = {text: i for i, text in enumerate(ACTIONS)}


def schema_type_label(family: int) -> str:
    return SCHEMA_LABELS.get(family, "")


def parse_schema_type(encoding: str | None) -> int:
    """An encoding label, trimmed and case-insensitive (``convert_encoding``)."""
    return _ACCEPTED.get(encoding.strip().lower(), UNKNOWN) if encoding else UNKNOWN


def _infer(ser: str | None) -> int:
    if not ser:
        return UNKNOWN
    if ser.startswith("vlink::zerocopy::"):
        return ZEROCOPY
    return RAW if ser in _RAW_SERS else UNKNOWN


def resolve_schema_type(explicit: int | None, ser: str, encoding: str | None = None) -> int:
    """Explicit valid family wins, then the encoding label, then a guess from the ser (``resolve_type``)."""
    if explicit is not None and UNKNOWN < explicit <= CDR:
        return explicit
    found = parse_schema_type(encoding)
    return found if found != UNKNOWN else _infer(ser)


def parse_action(text: str | None) -> int:
    """Exact, case-sensitive; anything else is Unknown (0)."""
    return _ACTION_VALUES.get(text or "", 0)


def url_kind(action: int) -> str:
    if 1 <= action <= 4:
        return "Method"
    if action in (5, 6):
        return "Event"
    if action in (7, 8):
        return "Field"
    return "Unknown"


def counts_for_frequency(action: int) -> bool:
    return 5 <= action <= 8


def ser_for_action(ser: str, action: int) -> str:
    """RPC urls carry ``"Req|Resp"``: requests use the left half, responses the right (§2.6)."""
    if not 1 <= action <= 4:
        return ser
    bar = ser.find("|")
    if bar < 0:
        return ser
    return ser[:bar] if action in (1, 3) else ser[bar + 1 :]
