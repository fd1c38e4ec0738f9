"""Avro (de)serialization of timeline files (Hudi ``TimelineMetadataUtils``), table version 6.

Table-service plans and metadata on the v6 timeline (``.replacecommit.requested``, ``.compaction.requested``,
``.clean.requested``, ``.clean``, ``.rollback.requested``, ``.rollback``, ``.restore*``, ``.savepoint``,
``.indexing*``) are Avro **object container files**: magic ``Obj\\x01``, a metadata map holding only
``avro.schema`` (no ``avro.codec``: null codec), a 16-byte sync marker, then one block with one record.

Schemas come from the Hudi 0.14/0.15 ``.avsc`` files shipped in ``engine/timeline/avro/`` (Apache Hudi's own
files; where each comes from and the few adjusted to the 0.14/0.15 shape: ``engine/timeline/avro/README.md``).
They reference each other by name across files, so all files are parsed into one named-type registry.

The embedded writer schema is rendered exactly like Java's ``Schema.toString()`` of the generated
``SpecificRecord`` class (``SCHEMA$``): compact JSON, keys in Avro-Java order, named types expanded at first
use and referenced by (namespace-relative) name afterwards, ``"avro.java.string":"String"`` on every string
and map (the avro-maven-plugin ``stringType=String`` setting), ``doc`` kept only on records/fields/enums.
With the same sync marker, :func:`serialize` therefore reproduces Java-written files byte for byte.
"""

from __future__ import annotations

import copy
import io
import json
import logging
import os
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import fastavro
import fastavro.validation

from engine.errors import CorruptFile, SchemaMismatch

LOG = logging.getLogger(__name__)

AVSC_DIR = Path(__file__).with_name("avro")
"""Directory of the bundled ``.avsc`` files (when the package is a folder; see :func:`bundled_schemas`)."""


def bundled_schemas() -> list[tuple[str, str]]:
    """``(file name, text)`` of every bundled ``.avsc`` file, by name. Read through :mod:`importlib.resources`,
    so they are found also when the package is imported from a zip (``--py-files`` / ``spark.submit.pyFiles``
    on Spark executors, which decode delete blocks with these schemas)."""
    folder = resources.files(__package__).joinpath("avro")
    return sorted((entry.name, entry.read_text(encoding="utf-8")) for entry in folder.iterdir()
                  if entry.name.endswith(".avsc"))

NAMESPACE = "org.apache.hudi.avro.model"
"""Namespace of every Hudi timeline record."""

MAGIC = b"Obj\x01"
SYNC_SIZE = 16

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
# Avro-Java Schema.SCHEMA_RESERVED / FIELD_RESERVED / ENUM_RESERVED
_SCHEMA_RESERVED = frozenset({"doc", "fields", "items", "name", "namespace", "size", "symbols", "values",
                              "type", "aliases"})
_ENUM_RESERVED = _SCHEMA_RESERVED | {"default"}
_FIELD_RESERVED = frozenset({"default", "doc", "name", "order", "type", "aliases"})
_JAVA_STRING_PROP = "avro.java.string"


# ---------------------------------------------------------------------------------------------- loading


def strip_json_comments(text: str) -> str:
    """Remove ``/* ... */`` and ``// ...`` comments that are outside JSON strings (the Java Avro parser
    accepts them, :func:`json.loads` does not). Newlines are kept so error positions stay meaningful."""
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if ch == '"':
                in_string = False
            i += 1
            continue
        if ch == '"':
            in_string = True
            out.append(ch)
            i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _fullname(name: str, namespace: str | None) -> str:
    if "." in name or not namespace:
        return name
    return f"{namespace}.{name}"


def _split_fullname(fullname: str) -> tuple[str, str | None]:
    if "." in fullname:
        ns, short = fullname.rsplit(".", 1)
        return short, ns
    return fullname, None


@dataclass(frozen=True)
class _NamedDef:
    """A named type (record/enum/fixed) as written in an ``.avsc`` file."""

    fullname: str
    node: dict[str, Any]
    source: str


def _collect_named(node: Any, namespace: str | None, source: str, out: dict[str, _NamedDef]) -> None:
    """Register every named type defined (inline) under ``node``."""
    if isinstance(node, list):
        for branch in node:
            _collect_named(branch, namespace, source, out)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if not isinstance(kind, str):
        _collect_named(kind, namespace, source, out)
        return
    if kind in ("record", "error", "enum", "fixed"):
        ns = node.get("namespace", namespace)
        full = _fullname(node["name"], ns)
        _, own_ns = _split_fullname(full)
        if full in out and out[full].node != node:
            LOG.warning("Avro type %s defined differently in %s and %s; keeping the first",
                        full, out[full].source, source)
        out.setdefault(full, _NamedDef(full, node, source))
        for fld in node.get("fields", []) if kind in ("record", "error") else []:
            _collect_named(fld.get("type"), own_ns, source, out)
    elif kind == "array":
        _collect_named(node.get("items"), namespace, source, out)
    elif kind == "map":
        _collect_named(node.get("values"), namespace, source, out)


class _Registry:
    """All named Avro types of the bundled ``.avsc`` files, plus fastavro-parsed top-level schemas."""

    def __init__(self, schemas: list[tuple[str, str]]) -> None:
        self.files: dict[str, Any] = {}
        for name, text in schemas:
            try:
                self.files[name] = json.loads(strip_json_comments(text))
            except json.JSONDecodeError as exc:
                raise CorruptFile(f"Avro schema file {name} under {AVSC_DIR} is not valid JSON: {exc}") from exc
        if not self.files:
            raise CorruptFile(f"no bundled Avro schema files (.avsc) found in package {__package__}.avro")
        self.named: dict[str, _NamedDef] = {}
        for name, schema in self.files.items():
            _collect_named(schema, None, name, self.named)
        self.fastavro_named = self._resolve_with_fastavro()

    def _resolve_with_fastavro(self) -> dict[str, Any]:
        """Parse every file with fastavro, retrying files whose dependencies are not parsed yet (the
        cross-file name resolution of the reference README). Raises if a reference stays unresolved."""
        named: dict[str, Any] = {}
        pending = dict(self.files)
        while pending:
            progress = False
            for name, schema in list(pending.items()):
                trial = dict(named)
                try:
                    fastavro.parse_schema(copy.deepcopy(schema), named_schemas=trial)
                except Exception:  # unresolved dependency: retry later
                    continue
                named.update(trial)
                del pending[name]
                progress = True
            if not progress:
                raise CorruptFile(f"unresolved Avro type references in {sorted(pending)} under {AVSC_DIR}")
        return named

    def lookup(self, name: str, namespace: str | None) -> _NamedDef | None:
        for candidate in (_fullname(name, namespace), name, _fullname(name, NAMESPACE)):
            if candidate in self.named:
                return self.named[candidate]
        return None


@cache
def _registry() -> _Registry:
    return _Registry(bundled_schemas())


def record_names() -> list[str]:
    """Short names of every record type defined by the bundled schemas (e.g. ``HoodieRollbackMetadata``)."""
    return sorted(_split_fullname(n)[0] for n, d in _registry().named.items()
                  if d.node.get("type") in ("record", "error"))


# ---------------------------------------------------------------------------------------------- Java rendering


class _JavaRenderer:
    """Renders a schema node the way Avro-Java ``Schema.toJson`` renders a compiled ``SCHEMA$``."""

    def __init__(self, registry: _Registry) -> None:
        self.registry = registry
        self.written: set[str] = set()

    def render(self, node: Any, space: str | None) -> Any:
        if isinstance(node, str):
            if node in _PRIMITIVES:
                return self._primitive(node, {})
            definition = self.registry.lookup(node, space)
            if definition is None:
                raise SchemaMismatch(f"unknown Avro type '{node}' (namespace {space})")
            return self._named(definition.node, _split_fullname(definition.fullname)[1], space)
        if isinstance(node, list):
            return [self.render(branch, space) for branch in node]
        if not isinstance(node, dict):
            raise SchemaMismatch(f"invalid Avro schema node: {node!r}")
        kind = node.get("type")
        if not isinstance(kind, str):
            return self.render(kind, space)
        if kind in _PRIMITIVES:
            return self._primitive(kind, {k: v for k, v in node.items() if k not in _SCHEMA_RESERVED})
        if kind in ("record", "error", "enum", "fixed"):
            ns = node.get("namespace", space)
            full = _fullname(node["name"], ns)
            return self._named(node, _split_fullname(full)[1], space)
        if kind == "array":
            out: dict[str, Any] = {"type": "array", "items": self.render(node["items"], space)}
            out.update({k: v for k, v in node.items() if k not in _SCHEMA_RESERVED})
            return out
        if kind == "map":
            out = {"type": "map", "values": self.render(node["values"], space)}
            out.update({k: v for k, v in node.items() if k not in _SCHEMA_RESERVED})
            out.setdefault(_JAVA_STRING_PROP, "String")
            return out
        definition = self.registry.lookup(kind, space)
        if definition is None:
            raise SchemaMismatch(f"unknown Avro type '{kind}' (namespace {space})")
        return self._named(definition.node, _split_fullname(definition.fullname)[1], space)

    @staticmethod
    def _primitive(kind: str, props: dict[str, Any]) -> Any:
        props = dict(props)
        if kind == "string":
            props.setdefault(_JAVA_STRING_PROP, "String")
        if not props:
            return kind
        return {"type": kind, **props}

    def render_named(self, node: dict[str, Any], namespace: str | None, space: str | None) -> Any:
        """Render the named type ``node`` (full namespace ``namespace``) inside enclosing ``space``."""
        return self._named(node, namespace, space)

    def _named(self, node: dict[str, Any], namespace: str | None, space: str | None) -> Any:
        short = node["name"].rsplit(".", 1)[-1]
        full = _fullname(short, namespace)
        if full in self.written:
            return short if namespace == space else full
        self.written.add(full)
        kind = node["type"]
        out: dict[str, Any] = {"type": kind, "name": short}
        if namespace is not None:
            if namespace != space:
                out["namespace"] = namespace
        elif space is not None:
            out["namespace"] = ""
        if node.get("doc") is not None:
            out["doc"] = node["doc"]
        if kind in ("record", "error"):
            out["fields"] = [self._field(f, namespace) for f in node.get("fields", [])]
            reserved = _SCHEMA_RESERVED
        elif kind == "enum":
            out["symbols"] = list(node["symbols"])
            if "default" in node:
                out["default"] = node["default"]
            reserved = _ENUM_RESERVED
        else:  # fixed
            out["size"] = node["size"]
            reserved = _SCHEMA_RESERVED
        out.update({k: v for k, v in node.items() if k not in reserved})
        if node.get("aliases"):
            out["aliases"] = list(node["aliases"])
        return out

    def _field(self, field: dict[str, Any], space: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"name": field["name"], "type": self.render(field["type"], space)}
        if field.get("doc") is not None:
            out["doc"] = field["doc"]
        if "default" in field:
            out["default"] = field["default"]
        if field.get("order", "ascending") != "ascending":
            out["order"] = field["order"]
        if field.get("aliases"):
            out["aliases"] = list(field["aliases"])
        out.update({k: v for k, v in field.items() if k not in _FIELD_RESERVED})
        return out


def _lookup_record(record_name: str) -> _NamedDef:
    definition = _registry().lookup(record_name, NAMESPACE)
    if definition is None or definition.node.get("type") not in ("record", "error"):
        raise SchemaMismatch(f"unknown Hudi Avro record '{record_name}'; known: {', '.join(record_names())}")
    return definition


@cache
def schema_json(record_name: str) -> str:
    """The writer-schema JSON Java embeds for ``record_name`` (``SCHEMA$.toString()``), compact.

    Args:
        record_name: short or full name, e.g. ``"HoodieRollbackMetadata"``.

    Raises:
        SchemaMismatch: unknown record name.
    """
    definition = _lookup_record(record_name)
    namespace = _split_fullname(definition.fullname)[1]
    rendered = _JavaRenderer(_registry()).render_named(definition.node, namespace, None)
    return json.dumps(rendered, separators=(",", ":"), ensure_ascii=False)


def schema(record_name: str) -> dict[str, Any]:
    """The fully expanded schema of ``record_name`` as a JSON dict (a fresh copy)."""
    result: dict[str, Any] = json.loads(schema_json(record_name))
    return result


@cache
def _parsed(record_name: str) -> Any:
    return fastavro.parse_schema(json.loads(schema_json(record_name)))


# ---------------------------------------------------------------------------------------------- defaults


def _fill_defaults(node: Any, value: Any, names: dict[str, Any]) -> Any:
    """Deep copy of ``value`` with missing record fields set to their schema defaults (what Java's
    ``SpecificRecordBuilder`` does). ``node`` is a node of the expanded (rendered) schema."""
    if isinstance(node, str):
        if node in names:
            return _fill_defaults(names[node], value, names)
        return value
    if isinstance(node, list):
        if value is None:
            return None
        records = [b for b in node if _is_record(b, names)]
        if len(records) == 1 and isinstance(value, dict):
            return _fill_defaults(records[0], value, names)
        containers = [b for b in node if _kind(b, names) in ("array", "map")]
        if len(containers) == 1 and isinstance(value, list | dict):
            return _fill_defaults(containers[0], value, names)
        return value
    if not isinstance(node, dict):
        return value
    kind = node.get("type")
    if kind in ("record", "error"):
        names.setdefault(node["name"], node)
        if not isinstance(value, dict):
            return value
        out = dict(value)
        for fld in node["fields"]:
            fname = fld["name"]
            if fname not in out and "default" in fld:
                out[fname] = copy.deepcopy(fld["default"])
            if fname in out:
                out[fname] = _fill_defaults(fld["type"], out[fname], names)
        return out
    if kind in ("enum", "fixed"):
        names.setdefault(node["name"], node)
        return value
    if kind == "array" and isinstance(value, list):
        return [_fill_defaults(node["items"], v, names) for v in value]
    if kind == "map" and isinstance(value, dict):
        return {k: _fill_defaults(node["values"], v, names) for k, v in value.items()}
    return value


def _kind(node: Any, names: dict[str, Any]) -> str | None:
    if isinstance(node, str):
        return str(names[node].get("type")) if node in names else node
    if isinstance(node, dict):
        return str(node.get("type"))
    return None


def _is_record(node: Any, names: dict[str, Any]) -> bool:
    return _kind(node, names) in ("record", "error")


# ---------------------------------------------------------------------------------------------- binary


def _zigzag(n: int) -> bytes:
    value = (n << 1) ^ (n >> 63)
    out = bytearray()
    while value & ~0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_datum(record_name: str, record: dict[str, Any]) -> bytes:
    """Raw Avro binary of one record (no container; e.g. the body of a DELETE log block).

    Missing fields with defaults are filled in first.

    Raises:
        SchemaMismatch: unknown record, or ``record`` does not fit the schema (message names the field).
    """
    full = schema(record_name)
    filled = _fill_defaults(full, record, {})
    parsed = _parsed(record_name)
    try:
        fastavro.validation.validate(filled, parsed, raise_errors=True)
    except fastavro.validation.ValidationError as exc:
        raise SchemaMismatch(f"{record_name} record does not match its Avro schema: {exc}") from exc
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, parsed, filled)
    return buf.getvalue()


def decode_datum(record_name: str, data: bytes, writer_schema_json: str | None = None) -> dict[str, Any]:
    """Decode raw Avro binary of one ``record_name`` record.

    Args:
        record_name: reader schema (bundled).
        data: the datum bytes.
        writer_schema_json: schema the bytes were written with, if different (resolved Avro-style).

    Raises:
        CorruptFile: the bytes do not decode.
    """
    reader = _parsed(record_name)
    writer = fastavro.parse_schema(json.loads(writer_schema_json)) if writer_schema_json else reader
    try:
        result = fastavro.schemaless_reader(io.BytesIO(data), writer, reader if writer_schema_json else None)
    except Exception as exc:  # fastavro raises assorted error types
        raise CorruptFile(f"cannot decode {record_name} Avro datum ({len(data)} bytes): {exc}") from exc
    if not isinstance(result, dict):
        raise CorruptFile(f"{record_name} Avro datum did not decode to a record")
    return result


@dataclass(frozen=True)
class AvroContainer:
    """A decoded Avro object container file.

    Attributes:
        schema_json: the embedded writer schema (``avro.schema`` metadata), verbatim.
        metadata: every header metadata entry (bytes values).
        sync_marker: the 16-byte sync marker.
        records: decoded records (with the writer schema, or resolved to a reader schema).
    """

    schema_json: str
    metadata: dict[str, bytes]
    sync_marker: bytes
    records: list[dict[str, Any]]

    @property
    def record_name(self) -> str:
        """Short name of the writer schema's top-level record."""
        return str(json.loads(self.schema_json).get("name", ""))


def serialize(record_name: str, record: dict[str, Any], *, sync_marker: bytes | None = None) -> bytes:
    """One record as an Avro object container file, as ``TimelineMetadataUtils.serializeAvroMetadata``
    writes it (header with only ``avro.schema``, null codec, one block).

    Args:
        record_name: e.g. ``"HoodieRollbackMetadata"``, ``"HoodieRequestedReplaceMetadata"``,
            ``"HoodieCompactionPlan"``, ``"HoodieCleanerPlan"``.
        record: field values; missing fields with defaults are filled in.
        sync_marker: 16 bytes; random by default (Java uses a random marker too).

    Returns:
        the file bytes.

    Raises:
        SchemaMismatch: unknown record or invalid data (names the field).
        ValueError: ``sync_marker`` is not 16 bytes.
    """
    if sync_marker is None:
        sync_marker = os.urandom(SYNC_SIZE)
    if len(sync_marker) != SYNC_SIZE:
        raise ValueError(f"sync marker must be {SYNC_SIZE} bytes, got {len(sync_marker)}")
    datum = encode_datum(record_name, record)
    schema_bytes = schema_json(record_name).encode("utf-8")
    key = b"avro.schema"
    header = (MAGIC + _zigzag(1) + _zigzag(len(key)) + key + _zigzag(len(schema_bytes)) + schema_bytes
              + _zigzag(0) + sync_marker)
    block = _zigzag(1) + _zigzag(len(datum)) + datum + sync_marker
    return header + block


def read_container(data: bytes, reader_record: str | None = None, source: str = "") -> AvroContainer:
    """Decode an Avro object container file.

    Args:
        data: file bytes.
        reader_record: resolve records against this bundled record schema (fills defaults of fields the
            writer did not have, as Java's reader-schema resolution does); ``None`` = writer schema.
        source: path/instant named in errors.

    Raises:
        CorruptFile: not an Avro container, or it does not decode / resolve.
    """
    where = f" {source}" if source else ""
    if not data.startswith(MAGIC):
        raise CorruptFile(f"Avro file{where} has no 'Obj\\x01' magic ({len(data)} bytes)")
    try:
        reader = fastavro.reader(io.BytesIO(data),
                                 reader_schema=_parsed(reader_record) if reader_record else None)
        records = [dict(r) for r in reader if isinstance(r, dict)]
        metadata = {k: (v if isinstance(v, bytes) else str(v).encode("utf-8"))
                    for k, v in reader.metadata.items()}
        sync = bytes(reader._header["sync"])  # fastavro exposes the sync only here
    except SchemaMismatch:
        raise
    except Exception as exc:  # fastavro raises assorted error types
        raise CorruptFile(f"cannot decode Avro file{where}: {exc}") from exc
    schema_text = metadata.get("avro.schema", b"").decode("utf-8")
    return AvroContainer(schema_text, metadata, sync, records)


def deserialize(data: bytes, record_name: str | None = None, source: str = "") -> dict[str, Any]:
    """The single record of a timeline Avro file (Hudi ``TimelineMetadataUtils.deserializeAvroMetadata``).

    Args:
        data: file bytes.
        record_name: optional reader schema to resolve against (defaults of missing fields filled).
        source: path/instant named in errors.

    Raises:
        CorruptFile: empty, not Avro, or not exactly one record.
    """
    where = f" {source}" if source else ""
    if not data:
        raise CorruptFile(f"Avro timeline file{where} is empty")
    container = read_container(data, record_name, source)
    if len(container.records) != 1:
        raise CorruptFile(f"Avro timeline file{where} holds {len(container.records)} records, expected 1")
    return container.records[0]
