"""Payload decoding: protobuf through the FileDescriptorSets embedded in the bag (``google.protobuf`` descriptor pool
and message factory), JSON and text by their ser name, CBOR by the url's message encoding (``cbor2``), as the server's
``decode=true`` does. Also the flattening of decoded messages into DataFrame columns."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from .frames import Message

__all__ = ["PayloadDecoder", "JSON_SERS", "TEXT_SERS"]

JSON_SERS = frozenset({"json", "application/json", "text/json"})
# MCAP's well-known schemaless CBOR message encoding (packages/decode/src/encodings.ts).
CBOR_ENCODINGS = frozenset({"cbor", "application/cbor"})
TEXT_SERS = frozenset({"text", "string", "std::string"})
PROTOBUF = 3
MAX_FLATTEN_DEPTH = 8

_SCALAR, _ENUM, _MESSAGE, _REPEATED, _MAP, _REPEATED_MESSAGE, _REPEATED_ENUM = range(7)


class PayloadDecoder:
    """Decodes payloads of one bag. Built from the bag's schemas (``RemoteBag.schemas()``); the protobuf descriptor
    pool is built on first use. Without the ``protobuf`` package, protobuf payloads stay undecoded (``decode_error``
    says so)."""

    def __init__(self, schemas: Iterable[Mapping[str, Any]], urls: Iterable[Mapping[str, Any]] = ()) -> None:
        schemas = list(schemas)
        # Urls whose payloads are CBOR by their message encoding (``Info.urls[].encoding`` of foreign files).
        self._cbor_urls = frozenset(str(u.get("url")) for u in urls if str(u.get("encoding") or "").strip().lower() in CBOR_ENCODINGS)
        self._schemas = [s for s in schemas if s.get("schemaType") == PROTOBUF]
        # MCAP channels whose schema is a JSON Schema carry JSON, whatever the type is named.
        self._json_types = frozenset(str(s.get("name")) for s in schemas if str(s.get("encoding", "")).strip().lower() in ("jsonschema", "json"))
        self._cdr = {str(s.get("name")): s for s in schemas if str(s.get("encoding", "")).strip().lower() in ("ros2msg", "ros2idl")}
        self._cdr_decoders: dict[str, Any] = {}
        self._pool: Any = None
        self._build_errors: list[str] = []
        # Why a schema could not be used, by the file or schema name it concerns (not shown for other types).
        self._errors_by_name: dict[str, str] = {}
        self._classes: dict[str, Any] = {}
        self._plans: dict[str, list[tuple[Any, ...]]] = {}

    # -- protobuf -----------------------------------------------------------------------------------------------
    def _ensure_pool(self) -> Any:
        if self._pool is not None:
            return self._pool
        try:
            from google.protobuf import descriptor_pb2, descriptor_pool
        except ImportError:
            self._build_errors.append("the protobuf package is not installed (pip install 'vlink-bag[pandas]')")
            self._pool = False
            return self._pool
        files: dict[str, Any] = {}
        for schema in self._schemas:
            fds = descriptor_pb2.FileDescriptorSet()
            try:
                fds.ParseFromString(bytes(schema["data"]))
            except Exception as error:  # noqa: BLE001 - any parse failure means "not a FileDescriptorSet"
                why = f"schema {schema.get('name')} is not a FileDescriptorSet: {error}"
                self._build_errors.append(why)
                self._errors_by_name[str(schema.get("name"))] = why
                continue
            for file in fds.file:
                files.setdefault(file.name, file)
        pool = descriptor_pool.DescriptorPool()
        default_pool = descriptor_pool.Default()
        added: set[str] = set()

        def add(name: str, stack: tuple[str, ...] = ()) -> bool:
            if name in added:
                return True
            file = files.get(name)
            if file is None:
                # Not embedded: the well-known types (google/protobuf/*.proto) ship with the protobuf package; their
                # modules register them in the default pool when imported.
                stem = name[len("google/protobuf/") : -len(".proto")] if name.startswith("google/protobuf/") and name.endswith(".proto") else ""
                if stem and "/" not in stem:
                    try:
                        importlib.import_module(f"google.protobuf.{stem}_pb2")
                    except ImportError:
                        pass
                try:
                    found = default_pool.FindFileByName(name)
                except KeyError:
                    self._build_errors.append(f"{name} is imported but not embedded in the bag")
                    return False
                file = descriptor_pb2.FileDescriptorProto()
                found.CopyToProto(file)
            if name in stack:
                self._build_errors.append(f"import cycle through {name}")
                return False
            ok = all([add(dep, (*stack, name)) for dep in file.dependency])
            try:
                pool.Add(file)
                added.add(name)
            except Exception as error:  # noqa: BLE001 - a broken file must not hide the others
                self._build_errors.append(f"{name}: {error}")
                return False
            return ok

        for name in files:
            add(name)
        self._pool = pool
        return pool

    def message_class(self, type_name: str) -> Any:
        """The generated protobuf class for ``type_name`` (e.g. ``"demo.Pose"``), or None when the bag embeds no
        descriptor for it."""
        if type_name in self._classes:
            return self._classes[type_name]
        pool = self._ensure_pool()
        cls = None
        if pool:
            from google.protobuf import message_factory

            try:
                desc = pool.FindMessageTypeByName(type_name)
            except KeyError:
                desc = None
            if desc is not None:
                if hasattr(message_factory, "GetMessageClass"):  # protobuf ≥ 4.22
                    cls = message_factory.GetMessageClass(desc)
                else:
                    cls = message_factory.MessageFactory(pool).GetPrototype(desc)
        self._classes[type_name] = cls
        return cls

    def _missing(self, type_name: str) -> str:
        # Only a failure that concerns this type explains its absence (another url's broken schema does not).
        why = self._errors_by_name.get(type_name)
        if why is None and self._pool is False and self._build_errors:
            why = self._build_errors[0]  # protobuf itself is missing: that concerns every type
        return f"no descriptor embedded for {type_name}" + (f" ({why})" if why else "")

    def may_decode(self, message: Message) -> bool:
        """Whether payloads of this message's type and family are meant to decode (protobuf, JSON, text, CDR);
        rows of other types keep their bytes without a ``decode_error``."""
        return (
            message.schema_type == PROTOBUF
            or message.data_type in JSON_SERS
            or message.data_type in TEXT_SERS
            or message.data_type in self._json_types
            or message.data_type in self._cdr
            or message.topic in self._cbor_urls
        )

    # -- decoding -----------------------------------------------------------------------------------------------
    def decode(self, message: Message) -> tuple[str | None, Any, str | None]:
        """``(kind, value, error)``: kind ``"protobuf"`` (value: a protobuf message), ``"json"`` (the parsed value),
        ``"text"`` (a str), or None (value None) with ``error`` telling why a payload that looked decodable was not."""
        if message.schema_type == PROTOBUF:
            cls = self.message_class(message.data_type)
            if cls is None:
                return None, None, self._missing(message.data_type)
            try:
                value = cls()
                value.ParseFromString(message.message)
            except Exception as error:  # noqa: BLE001 - DecodeError and friends
                return None, None, f"protobuf decode failed: {error}"
            return "protobuf", value, None
        if message.topic in self._cbor_urls:
            return self._decode_cbor(message)
        ser = message.data_type
        if ser in self._cdr:
            return self._decode_cdr(message)
        if ser in JSON_SERS or ser in self._json_types:
            try:
                text = message.message.decode("utf-8")
            except UnicodeDecodeError:
                return None, None, "payload is not UTF-8"
            if not text:
                return "json", None, None
            try:
                return "json", json.loads(text), None
            except ValueError:
                return "text", text, None
        if ser in TEXT_SERS:
            try:
                return "text", message.message.decode("utf-8"), None
            except UnicodeDecodeError:
                return None, None, "payload is not UTF-8"
        return None, None, None

    def _decode_cdr(self, message: Message) -> tuple[str | None, Any, str | None]:
        """ROS 2 CDR through ``mcap-ros2-support`` (the ``[ros2]`` extra), from the bag's embedded ``ros2msg`` schema."""
        name = message.data_type
        decoder = self._cdr_decoders.get(name)
        if decoder is None:
            try:
                from mcap.records import Schema
                from mcap_ros2.decoder import DecoderFactory
            except ImportError:
                return None, None, "CDR decoding needs mcap-ros2-support: pip install 'vlink-bag[ros2]'"
            schema = self._cdr[name]
            try:
                decoder = DecoderFactory().decoder_for("cdr", Schema(id=1, name=name, encoding=str(schema["encoding"]), data=bytes(schema["data"])))
            except Exception as error:  # noqa: BLE001 - a bad schema concerns this type only
                return None, None, f"schema {name} does not parse: {error}"
            self._cdr_decoders[name] = decoder
        if decoder is None:
            return None, None, f"no CDR decoder for {name}"
        try:
            return "cdr", decoder(message.message), None
        except Exception as error:  # noqa: BLE001
            return None, None, f"CDR decode failed: {error}"

    def _decode_cbor(self, message: Message) -> tuple[str | None, Any, str | None]:
        """Schemaless CBOR through ``cbor2`` (the ``[cbor]`` extra): maps become dicts, tags ``{"tag", "value"}``."""
        try:
            import cbor2
        except ImportError:
            return None, None, "CBOR decoding needs cbor2: pip install 'vlink-bag[cbor]'"
        try:
            return "cbor", _cbor_to_python(cbor2.loads(message.message)), None
        except Exception as error:  # noqa: BLE001 - CBORDecodeError, RecursionError (deep nesting) and friends
            return None, None, f"cbor decode failed: {error}"

    def fields(self, message: Message) -> tuple[dict[str, Any] | None, str | None]:
        """The decoded payload as flat columns: protobuf fields and JSON object keys (nested ones joined with ``.``),
        ``{"value": …}`` for other JSON values, ``{"text": …}`` for text; None when it does not decode."""
        kind, value, error = self.decode(message)
        if kind is None:
            return None, error
        if kind == "protobuf":
            out: dict[str, Any] = {}
            _flatten_proto(value, self._plan(value.DESCRIPTOR), out)
            return out, None
        if kind == "cdr":
            flat_cdr: dict[str, Any] = {}
            _flatten_json(_ros_to_python(value), "", flat_cdr, 0)
            return flat_cdr, None
        if kind in ("json", "cbor"):
            if isinstance(value, dict):
                flat: dict[str, Any] = {}
                _flatten_json(value, "", flat, 0)
                return flat, None
            return {"value": value}, None
        return {"text": value}, None

    def _plan(self, descriptor: Any, prefix: str = "", depth: int = 0) -> list[tuple[Any, ...]]:
        key = f"{descriptor.full_name}\x00{prefix}"
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        plan = []
        self._plans[key] = plan  # registered before recursing: recursive types stop at MAX_FLATTEN_DEPTH
        from google.protobuf.descriptor import FieldDescriptor as FD

        for fd in descriptor.fields:
            name = prefix + fd.name
            repeated = _is_repeated(fd)
            if fd.type == FD.TYPE_MESSAGE or fd.type == FD.TYPE_GROUP:
                if repeated and fd.message_type.GetOptions().map_entry:
                    plan.append((fd.name, name, _MAP, None))
                elif repeated:
                    plan.append((fd.name, name, _REPEATED_MESSAGE, None))
                elif depth + 1 >= MAX_FLATTEN_DEPTH:
                    plan.append((fd.name, name, _REPEATED_MESSAGE, None))  # deep: kept as a dict
                else:
                    plan.append((fd.name, name, _MESSAGE, self._plan(fd.message_type, name + ".", depth + 1)))
            elif fd.type == FD.TYPE_ENUM:
                names = {v.number: v.name for v in fd.enum_type.values}
                plan.append((fd.name, name, _REPEATED_ENUM if repeated else _ENUM, names))
            else:
                plan.append((fd.name, name, _REPEATED if repeated else _SCALAR, None))
        return plan


def _flatten_proto(msg: Any, plan: list[tuple[Any, ...]], out: dict[str, Any]) -> None:
    for field, name, kind, extra in plan:
        if kind == _SCALAR:
            out[name] = getattr(msg, field)
        elif kind == _ENUM:
            value = getattr(msg, field)
            out[name] = extra.get(value, value)
        elif kind == _MESSAGE:
            if msg.HasField(field):
                _flatten_proto(getattr(msg, field), extra, out)
        elif kind == _REPEATED:
            out[name] = list(getattr(msg, field))
        elif kind == _REPEATED_ENUM:
            out[name] = [extra.get(v, v) for v in getattr(msg, field)]
        else:  # maps, repeated messages, messages nested too deep: plain Python values
            fd = msg.DESCRIPTOR.fields_by_name[field]
            if kind == _REPEATED_MESSAGE and not _is_repeated(fd) and not msg.HasField(field):
                out[name] = None
            else:
                out[name] = _field_value(fd, getattr(msg, field))


def _is_repeated(fd: Any) -> bool:
    if hasattr(fd, "is_repeated"):
        return bool(fd.is_repeated)
    return bool(fd.label == fd.LABEL_REPEATED)


def _to_python(msg: Any) -> dict[str, Any]:
    """A protobuf message as a dict of Python values (int64 stay ints, bytes stay bytes, enums become names)."""
    return {fd.name: _field_value(fd, value) for fd, value in msg.ListFields()}


def _field_value(fd: Any, value: Any) -> Any:
    if fd.type == fd.TYPE_MESSAGE and fd.message_type.GetOptions().map_entry:
        value_fd = fd.message_type.fields_by_name["value"]
        return {key: _single(value_fd, value[key]) for key in value}
    if _is_repeated(fd):
        return [_single(fd, item) for item in value]
    return _single(fd, value)


def _single(fd: Any, value: Any) -> Any:
    if fd.type == fd.TYPE_MESSAGE or fd.type == fd.TYPE_GROUP:
        return _to_python(value)
    if fd.type == fd.TYPE_ENUM:
        found = fd.enum_type.values_by_number.get(value)
        return found.name if found is not None else value
    return value


def _flatten_json(value: Mapping[str, Any], prefix: str, out: dict[str, Any], depth: int) -> None:
    for key, item in value.items():
        name = prefix + str(key)
        if isinstance(item, dict) and item and depth + 1 < MAX_FLATTEN_DEPTH:
            _flatten_json(item, name + ".", out, depth + 1)
        else:
            out[name] = item


def _cbor_to_python(value: Any) -> Any:
    """A decoded CBOR item as the TypeScript decoder gives it (packages/decode/src/cbor.ts): map keys as text, tags
    as ``{"tag": n, "value": …}``, ``undefined`` as None; byte strings stay bytes."""
    import cbor2

    if isinstance(value, dict):
        return {key if isinstance(key, str) else str(key): _cbor_to_python(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cbor_to_python(item) for item in value]
    if isinstance(value, cbor2.CBORTag):
        return {"tag": value.tag, "value": _cbor_to_python(value.value)}
    if value is cbor2.undefined:
        return None
    return value


def _ros_to_python(value: Any) -> Any:
    """A decoded ROS 2 message (mcap_ros2's dynamic classes, with ``__slots__``) as plain dicts and lists."""
    slots = getattr(value, "__slots__", None)
    if slots:
        return {name: _ros_to_python(getattr(value, name)) for name in slots}
    if isinstance(value, (list, tuple)):
        return [_ros_to_python(v) for v in value]
    return value
