"""The key generators: record keys and partition paths of Arrow rows (Hudi ``SimpleAvroKeyGenerator``,
``ComplexAvroKeyGenerator``, ``NonpartitionedAvroKeyGenerator``, ``TimestampBasedAvroKeyGenerator``,
``CustomAvroKeyGenerator``, ``GlobalAvroDeleteKeyGenerator`` and Spark SQL's ``SqlKeyGenerator``)."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from engine.config import HoodieConfig, KeyGenConfig, TableConfig, parse_list
from engine.errors import ConfigError, InvalidRecordKey, UnsafePartitionPath
from engine.joda import Zone, resolve_java_zone
from engine.keygen.escaping import (
    COLUMN_VALUE_SEPARATOR,
    DEFAULT_PARTITION_PATH,
    EMPTY_RECORDKEY_PLACEHOLDER,
    NULL_RECORDKEY_PLACEHOLDER,
    PARTITION_PATH_SEPARATOR,
    RECORD_KEY_PARTS_SEPARATOR,
    SQL_KEYGEN,
    escape_path_name,
    escape_path_names,
    unescape_path_name,
)
from engine.keygen.spec import (
    _CLASS_TO_TYPE,
    _TYPE_TO_CLASS,
    KeyGenType,
    TimestampKeyGenSpec,
    _bool_conf,
    _raw,
)
from engine.keygen.timestamps import timestamp_segment
from engine.keygen.values import (
    _SQL_TS_FORMAT,
    _example_row,
    _first_true,
    _map_distinct,
    _resolve_field,
    _Stringifier,
    _trunc_div,
)
from engine.partition_path import escape_leading_dot, first_unsafe, unsafe_partition_message

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------------------
# Key generators
# ---------------------------------------------------------------------------------------------------------


def _parse_sql_partition_schema(ddl: str) -> dict[str, str]:
    """Column name -> upper-case type name from a Spark ``StructType.toDDL`` string."""
    out: dict[str, str] = {}
    for m in re.finditer(r"`((?:[^`]|``)+)`\s+([A-Za-z_]+)", ddl):
        out[m.group(1).replace("``", "`")] = m.group(2).upper()
    if not out:
        for part in ddl.split(","):
            bits = part.strip().split()
            if len(bits) >= 2:
                out[bits[0]] = bits[1].upper()
    return out


class KeyGenerator:
    """Vectorized Hudi key generator (base of the Simple/Complex/... generators below).

    Build one with :meth:`from_config`. Attributes: ``record_key_fields`` and ``partition_fields`` (names,
    type suffixes of CustomKeyGenerator stripped), ``hive_style``, ``url_encode``, ``key_class_name`` (the
    class name to persist in ``hoodie.table.keygenerator.class``), ``kind`` (:class:`KeyGenType`),
    ``sql_writer`` (apply ``SqlKeyGenerator``'s TIMESTAMP partition rewrite).
    """

    kind: KeyGenType = KeyGenType.SIMPLE

    def __init__(
        self,
        record_key_fields: Sequence[str],
        partition_fields: Sequence[str],
        *,
        hive_style: bool = False,
        url_encode: bool = False,
        consistent_logical_timestamp: bool = False,
        jvm_zone: Zone | None = None,
        encode_single_complex_field_name: bool = True,
        key_class_name: str | None = None,
        sql_writer: bool = False,
        sql_partition_types: dict[str, str] | None = None,
        table_name: str | None = None,
    ) -> None:
        self.table_name = table_name
        self.record_key_fields = list(record_key_fields)
        self.partition_fields = list(partition_fields)
        self.hive_style = hive_style
        self.url_encode = url_encode
        self.consistent_logical_timestamp = consistent_logical_timestamp
        self.jvm_zone = jvm_zone or Zone.utc()
        self.encode_single_complex_field_name = encode_single_complex_field_name
        self.key_class_name = key_class_name or _TYPE_TO_CLASS[self.kind]
        self.sql_writer = sql_writer
        self.sql_partition_types = dict(sql_partition_types or {})
        self._stringifier = _Stringifier(consistent_logical_timestamp, self.jvm_zone)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(record_key_fields={self.record_key_fields}, "
            f"partition_fields={self.partition_fields}, hive_style={self.hive_style}, "
            f"url_encode={self.url_encode})"
        )

    # -- construction ----------------------------------------------------------------------------------

    @staticmethod
    def from_config(conf: HoodieConfig, *, sql_writer: bool | None = None) -> KeyGenerator:
        """Build the key generator a Hudi writer would use for ``conf``.

        ``conf`` holds the table config (``hoodie.table.*``, hive style, urlencode, timebased keys), possibly
        overlaid with write options. Write options win: ``hoodie.datasource.write.keygenerator.class`` /
        ``.type`` over ``hoodie.table.keygenerator.class``; ``hoodie.datasource.write.recordkey.field`` over
        ``hoodie.table.recordkey.fields``; ``hoodie.datasource.write.partitionpath.field`` over
        ``hoodie.table.partition.fields`` (CustomKeyGenerator needs the typed ``field:simple|timestamp`` form,
        which only the write option carries). Without a class the type is inferred like
        ``KeyGenUtils.inferKeyGeneratorType`` (no partition field: non-partitioned; one partition and one key
        field: simple; else complex).

        Args:
            conf: the configuration.
            sql_writer: force (True/False) the Spark SQL ``SqlKeyGenerator`` TIMESTAMP partition rewrite;
                None = on when the configured class is ``SqlKeyGenerator``.

        Raises:
            ConfigError: unknown class/type, several record key fields for a simple/timestamp generator,
                bad timebased settings.
        """
        cls_name = (_raw(conf, KeyGenConfig.KEYGEN_CLASS.key) or "").strip()
        table_cls = (conf.raw(TableConfig.KEYGEN_CLASS) or "").strip()
        is_sql = cls_name == SQL_KEYGEN
        if is_sql:
            cls_name = (_raw(conf, KeyGenConfig.SQL_ORIGIN_KEYGEN_CLASS.key) or table_cls).strip()
        elif not cls_name:
            cls_name = table_cls
        if cls_name == SQL_KEYGEN:
            raise ConfigError(
                f"SqlKeyGenerator needs the original class in '{KeyGenConfig.SQL_ORIGIN_KEYGEN_CLASS.key}'"
            )
        if sql_writer is None:
            sql_writer = is_sql

        rk_raw = _raw(conf, KeyGenConfig.RECORDKEY_FIELD.key)
        if rk_raw is None or not rk_raw.strip():
            rk_raw = conf.raw(TableConfig.RECORDKEY_FIELDS) or ""
        record_keys = parse_list(rk_raw)
        pp_raw = _raw(conf, KeyGenConfig.PARTITIONPATH_FIELD.key)
        if pp_raw is None:
            pp_raw = conf.raw(TableConfig.PARTITION_FIELDS) or ""
        partition_specs = parse_list(pp_raw)

        kind: KeyGenType
        if cls_name:
            if cls_name not in _CLASS_TO_TYPE:
                raise ConfigError(
                    f"key generator class {cls_name!r} is not supported (supported: "
                    f"{', '.join(sorted(_TYPE_TO_CLASS.values()))})"
                )
            kind = _CLASS_TO_TYPE[cls_name]
        else:
            type_name = (_raw(conf, KeyGenConfig.KEYGEN_TYPE.key) or "").strip().upper()
            if type_name:
                type_name = type_name.removesuffix("_AVRO")
                aliases = {
                    "NON_PARTITION": KeyGenType.NON_PARTITION,
                    "GLOBAL_DELETE": KeyGenType.GLOBAL_DELETE,
                }
                try:
                    kind = aliases.get(type_name) or KeyGenType[type_name]
                except KeyError as exc:
                    raise ConfigError(
                        f"'{KeyGenConfig.KEYGEN_TYPE.key}' has an unsupported value {type_name!r}"
                    ) from exc
            elif not partition_specs:
                kind = KeyGenType.NON_PARTITION
            elif ":" in partition_specs[0]:
                kind = KeyGenType.CUSTOM
            elif len(partition_specs) == 1 and len(record_keys) <= 1:
                kind = KeyGenType.SIMPLE
            else:
                kind = KeyGenType.COMPLEX
            cls_name = _TYPE_TO_CLASS[kind]

        jvm_zone = resolve_java_zone(conf.get(KeyGenConfig.JVM_TIMEZONE))
        sql_types: dict[str, str] = {}
        ddl = _raw(conf, KeyGenConfig.SQL_PARTITION_SCHEMA.key)
        if ddl and ddl.strip():
            sql_types = _parse_sql_partition_schema(ddl)
        common: dict[str, Any] = dict(
            hive_style=_bool_conf(conf, TableConfig.HIVE_STYLE_PARTITIONING.key, False),
            url_encode=_bool_conf(conf, TableConfig.URL_ENCODE_PARTITIONING.key, False),
            consistent_logical_timestamp=_bool_conf(
                conf, KeyGenConfig.CONSISTENT_LOGICAL_TIMESTAMP.key, False
            ),
            jvm_zone=jvm_zone,
            encode_single_complex_field_name=_bool_conf(
                conf, KeyGenConfig.COMPLEX_KEYGEN_ENCODE_SINGLE_FIELD_NAME.key, True
            ),
            key_class_name=cls_name,
            sql_writer=sql_writer,
            sql_partition_types=sql_types,
            table_name=conf.raw(TableConfig.NAME),
        )
        if kind in (KeyGenType.SIMPLE, KeyGenType.TIMESTAMP) and len(record_keys) > 1:
            raise ConfigError(
                f"{cls_name} needs a single record key field, got {record_keys} (use ComplexKeyGenerator)"
            )
        names = [spec.split(":")[0].strip() for spec in partition_specs]
        if kind is KeyGenType.SIMPLE:
            if len(names) > 1:
                raise ConfigError(
                    f"{cls_name} needs a single partition field, got {names} (use ComplexKeyGenerator)"
                )
            return SimpleKeyGenerator(record_keys, names, **common)
        if kind is KeyGenType.COMPLEX:
            return ComplexKeyGenerator(record_keys, names, **common)
        if kind is KeyGenType.NON_PARTITION:
            return NonpartitionedKeyGenerator(record_keys, [], **common)
        if kind is KeyGenType.GLOBAL_DELETE:
            return GlobalDeleteKeyGenerator(record_keys, [], **common)
        if kind is KeyGenType.TIMESTAMP:
            if len(names) > 1:
                logger.warning("TimestampBasedKeyGenerator uses only the first partition field of %s", names)
            return TimestampBasedKeyGenerator(
                record_keys, names[:1], TimestampKeyGenSpec.from_config(conf), **common
            )
        types: list[str | None] = []
        for spec in partition_specs:
            bits = spec.split(":")
            if len(bits) == 1:
                types.append(None)
            elif len(bits) == 2 and bits[1].strip().upper() in ("SIMPLE", "TIMESTAMP"):
                types.append(bits[1].strip().upper())
            else:
                raise ConfigError(
                    f"CustomKeyGenerator partition field {spec!r} must be 'field:simple' or 'field:timestamp'"
                )
        spec_ts: TimestampKeyGenSpec | None = None
        if "TIMESTAMP" in types:
            spec_ts = TimestampKeyGenSpec.from_config(conf)
        return CustomKeyGenerator(record_keys, names, types, spec_ts, **common)

    # -- public API ------------------------------------------------------------------------------------

    @property
    def is_partitioned(self) -> bool:
        """Whether partition paths are non-empty."""
        return bool(self.partition_fields)

    def record_keys(self, data: pa.Table | pa.RecordBatch) -> pa.Array:
        """``_hoodie_record_key`` of every row (``pa.string()``, no nulls, same length as ``data``).

        Raises:
            ConfigError: no record key field is configured (auto-generated keys are not supported).
            InvalidRecordKey: a key field is missing, has an unsupported type, or is null/empty (the message
                names the field, the row number and the row's values).
        """
        if not self.record_key_fields:
            raise ConfigError(
                "no record key field configured ('hoodie.table.recordkey.fields'); "
                "auto-generated record keys are not supported"
            )
        if self.single_value_record_key:
            return self._simple_record_keys(data, self.record_key_fields[0])
        return self._complex_record_keys(data)

    @property
    def single_value_record_key(self) -> bool:
        """Whether the record key is the bare value of its one field (``1``) rather than the complex
        ``field:value,...`` form (``id:1``): one key field and a Simple/Timestamp/Nonpartitioned/Custom
        generator, or a Complex one with
        ``hoodie.write.complex.keygen.encode.single.record.key.field.name=false``."""
        return len(self.record_key_fields) == 1 and (
            self.kind
            in (KeyGenType.SIMPLE, KeyGenType.TIMESTAMP, KeyGenType.NON_PARTITION, KeyGenType.CUSTOM)
            or (self.kind is KeyGenType.COMPLEX and not self.encode_single_complex_field_name)
        )

    def partition_paths(self, data: pa.Table | pa.RecordBatch) -> pa.Array:
        """``_hoodie_partition_path`` of every row (``pa.string()``, no nulls; ``""`` when non-partitioned).

        Raises:
            InvalidRecordKey: a partition field is missing, has an unsupported type or cannot be parsed.
            UnsafePartitionPath: a field's segment would leave the base path or is not a valid folder
                name (:mod:`engine.partition_path`); the message names table, field, value and setting.
            ConfigError: a CustomKeyGenerator field has no ``:simple``/``:timestamp`` type.
        """
        n = data.num_rows
        if not self.partition_fields:
            return pa.array([""] * n, pa.string()) if n else pa.array([], pa.string())
        segments = [self._partition_segment(data, i) for i in range(len(self.partition_fields))]
        for i, segment in enumerate(segments):
            row = first_unsafe(segment)
            if row is not None:
                field = self.partition_fields[i]
                value = _resolve_field(data, field)[row].as_py()
                raise UnsafePartitionPath(unsafe_partition_message(
                    self.table_name, field, value, str(segment[row].as_py()), self.url_encode))
        if len(segments) == 1:
            paths = segments[0]
        else:
            paths = pc.binary_join_element_wise(*segments, PARTITION_PATH_SEPARATOR)
        if self.sql_writer:
            paths = self._sql_rewrite(data, paths)
        return paths

    def partition_values(self, partition_path: str) -> list[str]:
        """Split a relative partition path back into one value per partition field: strips the
        ``field=`` prefix (hive style) and unescapes ``%XX`` when urlencode is on. A path with a different
        number of segments than fields (e.g. a timestamp format ``yyyy/MM/dd``) gives the whole path as
        the value of a single field. ``__HIVE_DEFAULT_PARTITION__`` is returned as is.

        Raises:
            InvalidRecordKey: the segment count does not fit several partition fields.
        """
        if not self.partition_fields:
            return []
        segments = partition_path.split(PARTITION_PATH_SEPARATOR) if partition_path else [""]
        fields = self.partition_fields
        if len(segments) != len(fields):
            if len(fields) != 1:
                raise InvalidRecordKey(
                    f"partition path {partition_path!r} has {len(segments)} segments but the "
                    f"table has partition fields {fields}"
                )
            segments = [partition_path]
        values: list[str] = []
        for field, seg in zip(fields, segments, strict=True):
            if self.hive_style and seg.startswith(field + "="):
                seg = seg[len(field) + 1 :]
            if self.url_encode or self.sql_writer:
                seg = unescape_path_name(seg)
            values.append(seg)
        return values

    # -- internals -------------------------------------------------------------------------------------

    def _render(self, data: pa.Table | pa.RecordBatch, field: str) -> pa.Array:
        return self._stringifier.render(_resolve_field(data, field), field)

    def _simple_record_keys(self, data: pa.Table | pa.RecordBatch, field: str) -> pa.Array:
        keys = self._render(data, field)
        bad = pc.or_kleene(pc.is_null(keys), pc.equal(pc.utf8_length(keys), 0)).fill_null(True)
        if pc.any(bad).as_py():
            row = _first_true(bad)
            value = keys[row].as_py()
            raise InvalidRecordKey(
                f"record key field '{field}' is {'null' if value is None else 'empty'} in row {row} "
                f"(example row: {_example_row(data, row, [field])}); Hudi requires a non-null, non-empty key "
                "(KeyGenUtils.getRecordKey)"
            )
        return keys

    def _complex_record_keys(self, data: pa.Table | pa.RecordBatch) -> pa.Array:
        parts: list[Any] = []
        all_bad: pa.Array | None = None
        for i, field in enumerate(self.record_key_fields):
            values = self._render(data, field)
            empty = pc.equal(pc.utf8_length(values), 0)
            bad = pc.or_kleene(pc.is_null(values), empty).fill_null(True)
            all_bad = bad if all_bad is None else pc.and_(all_bad, bad)
            filled = pc.if_else(empty.fill_null(False), EMPTY_RECORDKEY_PLACEHOLDER, values)
            filled = filled.fill_null(NULL_RECORDKEY_PLACEHOLDER)
            prefix = ("" if i == 0 else RECORD_KEY_PARTS_SEPARATOR) + field + COLUMN_VALUE_SEPARATOR
            parts.extend([pa.scalar(prefix, pa.string()), filled])
        assert all_bad is not None
        if pc.any(all_bad).as_py():
            row = _first_true(all_bad)
            raise InvalidRecordKey(
                f"record key fields {self.record_key_fields} are all null or empty in row {row} "
                f"(example row: {_example_row(data, row, self.record_key_fields)}); Hudi requires at least "
                "one non-empty value (KeyGenUtils.getRecordKey)"
            )
        return pc.binary_join_element_wise(*parts, "")

    def _simple_segment(self, data: pa.Table | pa.RecordBatch, field: str) -> pa.Array:
        """One partition segment as ``KeyGenUtils.getPartitionPath`` / ``getRecordPartitionPath`` build it."""
        values = self._render(data, field)
        default = pc.or_kleene(pc.is_null(values), pc.equal(pc.utf8_length(values), 0)).fill_null(True)
        if self.url_encode:
            values = escape_path_names(values)
            if not self.hive_style:
                values = escape_leading_dot(values)
        values = pc.if_else(default, DEFAULT_PARTITION_PATH, values)
        if self.hive_style:
            values = pc.binary_join_element_wise(pa.scalar(field + "=", pa.string()), values, "")
        return values

    def _partition_segment(self, data: pa.Table | pa.RecordBatch, index: int) -> pa.Array:
        return self._simple_segment(data, self.partition_fields[index])

    def _sql_timestamp_fields(self, data: pa.Table | pa.RecordBatch) -> list[int]:
        out: list[int] = []
        for i, field in enumerate(self.partition_fields):
            if self.sql_partition_types:
                typ = self.sql_partition_types.get(field)
                if typ is None:
                    lowered = {k.lower(): v for k, v in self.sql_partition_types.items()}
                    typ = lowered.get(field.lower())
                if typ == "TIMESTAMP":
                    out.append(i)
                continue
            try:
                col = _resolve_field(data, field)
            except InvalidRecordKey:
                continue
            if pa.types.is_timestamp(col.type) and col.type.tz is not None:
                out.append(i)
        return out

    def _sql_rewrite(self, data: pa.Table | pa.RecordBatch, paths: pa.Array) -> pa.Array:
        """``SqlKeyGenerator.convertPartitionPathToSqlType`` (Avro-record path)."""
        ts_fields = self._sql_timestamp_fields(data)
        if not ts_fields or len(paths) == 0:
            return paths
        n_fields = len(self.partition_fields)
        fields = self.partition_fields
        zone = self.jvm_zone
        consistent = self.consistent_logical_timestamp

        def convert(path: str) -> str:
            frags = path.split(PARTITION_PATH_SEPARATOR)
            if len(frags) != n_fields:
                return path
            for i in ts_fields:
                prefix = f"{fields[i]}="
                hive = frags[i].startswith(prefix)
                value = frags[i][len(prefix) :] if hive else frags[i]
                if value == DEFAULT_PARTITION_PATH:
                    continue
                try:
                    if consistent:
                        millis = _parse_sql_timestamp(value, zone)
                    else:
                        millis = _trunc_div(int(value), 1000)
                except ValueError as exc:
                    raise InvalidRecordKey(
                        f"partition field '{fields[i]}' value {value!r} is not a timestamp "
                        "(SqlKeyGenerator cannot convert it)"
                    ) from exc
                text = escape_path_name(_SQL_TS_FORMAT.format(millis, zone))
                frags[i] = prefix + text if hive else text
            return PARTITION_PATH_SEPARATOR.join(frags)

        return _map_distinct(paths, convert)


_SQL_TS_RE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?$")


def _parse_sql_timestamp(text: str, zone: Zone) -> int:
    """``java.sql.Timestamp.valueOf(text).getTime()`` in ``zone`` (epoch ms)."""
    m = _SQL_TS_RE.match(text)
    if not m:
        raise ValueError(f"Timestamp format must be yyyy-mm-dd hh:mm:ss[.fffffffff]: {text!r}")
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = int(((m.group(7) or "") + "000")[:3])
    local = datetime(y, mo, d, h, mi, s)
    off = local.replace(tzinfo=zone.tz).utcoffset() or timedelta(0)
    return (
        (local - datetime(1970, 1, 1)) // timedelta(milliseconds=1) + frac - off // timedelta(milliseconds=1)
    )


class SimpleKeyGenerator(KeyGenerator):
    """``SimpleKeyGenerator`` / ``SimpleAvroKeyGenerator``: key = the single field's value; partition path =
    the single partition field's value (``__HIVE_DEFAULT_PARTITION__`` when null/empty; escaped when
    urlencode; ``field=value`` when hive style)."""

    kind = KeyGenType.SIMPLE


class ComplexKeyGenerator(KeyGenerator):
    """``ComplexKeyGenerator`` / ``ComplexAvroKeyGenerator``: key ``f1:v1,f2:v2`` with ``__null__`` /
    ``__empty__`` placeholders (error if every part is null/empty); partition path = segments of every
    partition field joined by ``/``."""

    kind = KeyGenType.COMPLEX


class NonpartitionedKeyGenerator(KeyGenerator):
    """``NonpartitionedKeyGenerator``: key like Simple (one field) or Complex (several); partition ``""``."""

    kind = KeyGenType.NON_PARTITION


class GlobalDeleteKeyGenerator(KeyGenerator):
    """``GlobalDeleteKeyGenerator``: complex-format key (``f:v`` even for one field); partition ``""``."""

    kind = KeyGenType.GLOBAL_DELETE


class TimestampBasedKeyGenerator(KeyGenerator):
    """``TimestampBasedKeyGenerator`` / ``TimestampBasedAvroKeyGenerator``: key like Simple; partition path
    = the first partition field read as a timestamp (``hoodie.keygen.timebased.*``) and printed with the
    output pattern, then escaped (urlencode, the whole formatted text incl. ``/``) and prefixed (hive).

    Value handling (as Hudi): strings are parsed with the input patterns (DATE_STRING/MIXED only);
    integers, ``float``/``double`` (truncated), decimals (truncated) and dates (epoch *days*) are numbers in
    the configured unit; a timestamp column is its epoch micros taken as a number in that unit, or its
    milliseconds when the consistent-logical-timestamp option is on. A null value becomes epoch + 1 (unit)
    (DATE_STRING: epoch + 1 ms printed with the first input pattern), not the default partition. Numbers
    are printed in the output zone (unset: JVM zone); strings in the output zone (unset: the zone parsed
    from the value, else input zone, else JVM zone).
    """

    kind = KeyGenType.TIMESTAMP

    def __init__(
        self,
        record_key_fields: Sequence[str],
        partition_fields: Sequence[str],
        spec: TimestampKeyGenSpec,
        **kwargs: Any,
    ) -> None:
        super().__init__(record_key_fields, partition_fields, **kwargs)
        self.spec = spec

    def _partition_segment(self, data: pa.Table | pa.RecordBatch, index: int) -> pa.Array:
        return timestamp_segment(self, self.spec, data, self.partition_fields[index])


class CustomKeyGenerator(KeyGenerator):
    """``CustomKeyGenerator`` / ``CustomAvroKeyGenerator``: key like Simple (one field) or Complex;
    partition fields ``name:simple`` (as SimpleKeyGenerator) or ``name:timestamp`` (as
    TimestampBasedKeyGenerator), joined by ``/``."""

    kind = KeyGenType.CUSTOM

    def __init__(
        self,
        record_key_fields: Sequence[str],
        partition_fields: Sequence[str],
        partition_types: Sequence[str | None],
        spec: TimestampKeyGenSpec | None,
        **kwargs: Any,
    ) -> None:
        super().__init__(record_key_fields, partition_fields, **kwargs)
        self.partition_types = list(partition_types)
        self.spec = spec

    def _partition_segment(self, data: pa.Table | pa.RecordBatch, index: int) -> pa.Array:
        field = self.partition_fields[index]
        typ = self.partition_types[index]
        if typ is None:
            raise ConfigError(
                f"CustomKeyGenerator needs the type of partition field '{field}': set "
                f"'{KeyGenConfig.PARTITIONPATH_FIELD.key}' to 'field:simple' or 'field:timestamp'"
            )
        if typ == "SIMPLE":
            return self._simple_segment(data, field)
        assert self.spec is not None
        return timestamp_segment(self, self.spec, data, field)
