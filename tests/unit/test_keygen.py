"""Key generators: keys and partition paths exactly as Hudi 0.14 writes them.

Expected strings in the table-driven cases were produced by the real Java implementations (OpenJDK 17
``Double/Float.toString``, ``BigDecimal``, ``java.sql.Timestamp``, joda-time 2.x ``DateTimeFormat``) or read
from the Hudi-written fixture tables.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.config import HoodieConfig
from engine.errors import ConfigError, InvalidRecordKey
from engine.keygen import (
    DEFAULT_PARTITION_PATH,
    ComplexKeyGenerator,
    CustomKeyGenerator,
    JodaDateFormat,
    KeyGenerator,
    NonpartitionedKeyGenerator,
    SimpleKeyGenerator,
    TimestampBasedKeyGenerator,
    escape_path_name,
    escape_path_names,
    extract_record_keys,
    java_decimal_to_string,
    java_double_to_string,
    java_float_to_string,
    java_local_date_to_string,
    resolve_java_zone,
    unescape_path_name,
)
from tests.unit.fixture_tables import table_properties

SIMPLE = "org.apache.hudi.keygen.SimpleKeyGenerator"
COMPLEX = "org.apache.hudi.keygen.ComplexKeyGenerator"
NONPART = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
TIMESTAMP = "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
CUSTOM = "org.apache.hudi.keygen.CustomKeyGenerator"

FIXTURES_WITH_DATA = [
    "sample_table/cow/v6_complexkeygen_hivestyle",
    "sample_table/cow/v6_nonpartitioned",
    "sample_table/cow/v6_simplekeygen_hivestyle_no_metafields",
    "sample_table/cow/v6_simplekeygen_nonhivestyle",
    "sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable",
    "sample_table/cow/v6_timebasedkeygen_nonhivestyle",
    "sample_table/mor/parquet/v6_complexkeygen_hivestyle",
    "sample_table/mor/parquet/v6_nonpartitioned",
    "sample_table/mor/parquet/v6_simplekeygen_hivestyle_no_metafields",
    "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle",
    "quickstart_trips_table/mor/avro/v6_trips_8i1u",
]


def conf(
    cls: str | None, keys: str, partitions: str = "", hive: bool = False, encode: bool = False, **extra: str
) -> KeyGenerator:
    props = {
        "hoodie.table.recordkey.fields": keys,
        "hoodie.table.partition.fields": partitions,
        "hoodie.datasource.write.hive_style_partitioning": str(hive).lower(),
        "hoodie.datasource.write.partitionpath.urlencode": str(encode).lower(),
    }
    if cls:
        props["hoodie.table.keygenerator.class"] = cls
    props.update(extra)
    return KeyGenerator.from_config(HoodieConfig(props))


# --------------------------------------------------------------------------------------------------------
# Hudi-written fixtures
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FIXTURES_WITH_DATA)
def test_fixture_keys_and_partitions(name: str, hudi_fixture: Callable[..., str]) -> None:
    base = Path(hudi_fixture(name))
    gen = KeyGenerator.from_config(HoodieConfig(table_properties(base)))
    files = sorted(p for p in base.rglob("*.parquet") if ".hoodie" not in p.parts)
    assert files
    for path in files:
        data = pq.read_table(path)
        keys = gen.record_keys(data).to_pylist()
        parts = gen.partition_paths(data).to_pylist()
        stored_keys = data.column("_hoodie_record_key")
        rel = path.parent.relative_to(base)
        folder = "" if rel == Path(".") else rel.as_posix()
        if stored_keys.null_count == 0:  # meta fields populated: byte-exact with Hudi's values
            assert keys == stored_keys.to_pylist(), path
            assert parts == data.column("_hoodie_partition_path").to_pylist(), path
        else:  # hoodie.populate.meta.fields=false: the folder is the partition path
            assert set(parts) == {folder}, path
        assert set(parts) == {folder}, path
        assert all(gen.partition_values(p) for p in parts) or not gen.partition_fields


def test_fixture_generator_kinds(hudi_fixture: Callable[..., str]) -> None:
    kinds = {}
    for name in [
        "sample_table/cow/v6_complexkeygen_hivestyle",
        "sample_table/cow/v6_nonpartitioned",
        "sample_table/cow/v6_simplekeygen_nonhivestyle",
        "sample_table/cow/v6_timebasedkeygen_nonhivestyle",
        "sample_table/cow/v6_empty",
    ]:
        gen = KeyGenerator.from_config(HoodieConfig(table_properties(Path(hudi_fixture(name)))))
        kinds[name.rsplit("/", 1)[1]] = type(gen)
    assert kinds == {
        "v6_complexkeygen_hivestyle": ComplexKeyGenerator,
        "v6_nonpartitioned": NonpartitionedKeyGenerator,
        "v6_simplekeygen_nonhivestyle": SimpleKeyGenerator,
        "v6_timebasedkeygen_nonhivestyle": TimestampBasedKeyGenerator,
        "v6_empty": NonpartitionedKeyGenerator,
    }


def test_fixture_partition_values_roundtrip(hudi_fixture: Callable[..., str]) -> None:
    base = Path(hudi_fixture("sample_table/cow/v6_complexkeygen_hivestyle"))
    gen = KeyGenerator.from_config(HoodieConfig(table_properties(base)))
    assert gen.partition_values("byteField=10/shortField=300") == ["10", "300"]
    base = Path(hudi_fixture("sample_table/cow/v6_timebasedkeygen_nonhivestyle"))
    gen = KeyGenerator.from_config(HoodieConfig(table_properties(base)))
    assert gen.partition_values("2023/04/01/12") == ["2023/04/01/12"]


# --------------------------------------------------------------------------------------------------------
# Record keys
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("array", "expected"),
    [
        (pa.array([1, -2, 2**40], pa.int64()), ["1", "-2", "1099511627776"]),
        (pa.array([10, -128], pa.int8()), ["10", "-128"]),
        (pa.array([300], pa.int16()), ["300"]),
        (pa.array([True, False]), ["true", "false"]),
        (pa.array(["a b", "x:y,z"]), ["a b", "x:y,z"]),
        (pa.array(["q"], pa.large_string()), ["q"]),
        (pa.array(["u", "v", "u"]).dictionary_encode(), ["u", "v", "u"]),
        (
            pa.array([1.0, 0.1, 1e7, 12345678.9, 0.001, 0.0001, -2.5, 1e-10, -0.0, 2.0**60]),
            [
                "1.0",
                "0.1",
                "1.0E7",
                "1.23456789E7",
                "0.001",
                "1.0E-4",
                "-2.5",
                "1.0E-10",
                "-0.0",
                "1.15292150460684698E18",
            ],
        ),
        (
            pa.array([1.1, 3.4028235e38, 16777216.0, 123456789.0, -7.25], pa.float32()),
            ["1.1", "3.4028235E38", "1.6777216E7", "1.23456792E8", "-7.25"],
        ),
        (pa.array([float("nan"), float("inf"), float("-inf")]), ["NaN", "Infinity", "-Infinity"]),
        (
            pa.array([Decimal("12345.67890"), Decimal("0.00000")], pa.decimal128(10, 5)),
            ["12345.67890", "0.00000"],
        ),
        (pa.array([Decimal("0.0000001000"), Decimal("0E-10")], pa.decimal128(20, 10)), ["1.000E-7", "0E-10"]),
        (pa.array([dt.date(2023, 4, 1), dt.date(1, 1, 1)], pa.date32()), ["2023-04-01", "0001-01-01"]),
        (pa.array([dt.datetime(2023, 4, 1, 12, 1)], pa.timestamp("us", tz="UTC")), ["1680350460000000"]),
        (pa.array([dt.datetime(2023, 4, 1, 12, 1)], pa.timestamp("ms", tz="UTC")), ["1680350460000000"]),
        (pa.array([dt.datetime(2023, 4, 1, 12, 1)], pa.timestamp("us")), ["1680350460000000"]),
        (pa.array([b"binary data", b"\x00\xff"]), ["62696e6172792064617461", "00ff"]),
    ],
)
def test_simple_key_stringification(array: pa.Array, expected: list[str]) -> None:
    gen = conf(SIMPLE, "k", "p")
    data = pa.table({"k": array, "p": pa.array(["x"] * len(array))})
    assert gen.record_keys(data).to_pylist() == expected


def test_consistent_logical_timestamp_key() -> None:
    data = pa.table(
        {"k": pa.array([1680350460000000, 1680350460123000, -1000], pa.timestamp("us", tz="UTC"))}
    )
    gen = conf(
        NONPART, "k", **{"hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled": "true"}
    )
    assert gen.record_keys(data).to_pylist() == [
        "2023-04-01 12:01:00.0",
        "2023-04-01 12:01:00.123",
        "1969-12-31 23:59:59.999",
    ]
    la = conf(
        NONPART,
        "k",
        **{
            "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled": "true",
            "hoodie.keygen.engine.jvm.timezone": "America/Los_Angeles",
        },
    )
    assert la.record_keys(data.slice(0, 1)).to_pylist() == ["2023-04-01 05:01:00.0"]


def test_complex_keys_placeholders_and_errors() -> None:
    gen = conf(COMPLEX, "id,name", "p")
    data = pa.table({"id": pa.array([1, None, 3, None]), "name": ["Alice", "Bob", "", None], "p": ["a"] * 4})
    with pytest.raises(InvalidRecordKey, match=r"\['id', 'name'\].*row 3"):
        gen.record_keys(data)
    keys = gen.record_keys(data.slice(0, 3)).to_pylist()
    assert keys == ["id:1,name:Alice", "id:__null__,name:Bob", "id:3,name:__empty__"]


def test_complex_single_field_encoding_flag() -> None:
    data = pa.table({"id": [7], "p": ["a"]})
    assert conf(COMPLEX, "id", "p").record_keys(data).to_pylist() == ["id:7"]
    off = conf(
        COMPLEX, "id", "p", **{"hoodie.write.complex.keygen.encode.single.record.key.field.name": "false"}
    )
    assert off.record_keys(data).to_pylist() == ["7"]


def test_nonpartitioned_and_global_delete() -> None:
    data = pa.table({"id": [1, 2], "name": ["a", "b"]})
    assert conf(NONPART, "id").record_keys(data).to_pylist() == ["1", "2"]
    assert conf(NONPART, "id,name").record_keys(data).to_pylist() == ["id:1,name:a", "id:2,name:b"]
    assert conf(NONPART, "id").partition_paths(data).to_pylist() == ["", ""]
    gd = conf("org.apache.hudi.keygen.GlobalDeleteKeyGenerator", "id", "name")
    assert gd.record_keys(data).to_pylist() == ["id:1", "id:2"]
    assert gd.partition_paths(data).to_pylist() == ["", ""]


@pytest.mark.parametrize(("values", "row", "word"), [([1, None, 3], 1, "null"), (["a", "b", ""], 2, "empty")])
def test_simple_key_null_or_empty_names_field_and_row(values: list[object], row: int, word: str) -> None:
    gen = conf(SIMPLE, "uuid", "city")
    data = pa.table({"uuid": values, "city": ["sf", "nyc", "la"]})
    with pytest.raises(InvalidRecordKey) as err:
        gen.record_keys(data)
    message = str(err.value)
    assert "'uuid'" in message and f"row {row}" in message and word in message
    assert ["sf", "nyc", "la"][row] in message  # the example row is shown


def test_missing_and_unsupported_fields() -> None:
    gen = conf(SIMPLE, "nope", "p")
    with pytest.raises(InvalidRecordKey, match="'nope' does not exist"):
        gen.record_keys(pa.table({"id": [1], "p": ["a"]}))
    gen = conf(SIMPLE, "k", "p")
    with pytest.raises(InvalidRecordKey, match="type list"):
        gen.record_keys(pa.table({"k": pa.array([[1]]), "p": ["a"]}))
    with pytest.raises(ConfigError, match="auto-generated"):
        conf(NONPART, "").record_keys(pa.table({"k": [1]}))


def test_nested_and_case_insensitive_fields() -> None:
    data = pa.table(
        {
            "Rec": pa.array(
                [{"inner": {"id": 5}}, {"inner": None}],
                pa.struct([("inner", pa.struct([("id", pa.int32())]))]),
            ),
            "P": ["x", None],
        }
    )
    gen = conf(COMPLEX, "rec.inner.id", "p")
    assert gen.record_keys(data.slice(0, 1)).to_pylist() == ["rec.inner.id:5"]
    assert gen.partition_paths(data).to_pylist() == ["x", DEFAULT_PARTITION_PATH]
    with pytest.raises(InvalidRecordKey, match="row 1"):
        gen.record_keys(data)


# --------------------------------------------------------------------------------------------------------
# Partition paths
# --------------------------------------------------------------------------------------------------------

SPECIAL = [chr(c) for c in range(0x20)] + list("\"#%'*/:=?\\\x7f{[]^")


def test_escape_every_special_character() -> None:
    for ch in SPECIAL:
        assert escape_path_name(f"a{ch}b") == f"a%{ord(ch):02X}b"
        assert unescape_path_name(f"a%{ord(ch):02X}b") == f"a{ch}b"
    kept = " !$&()+,-.;<>@`|}~é中"
    assert escape_path_name(kept) == kept
    assert escape_path_name("") == DEFAULT_PARTITION_PATH
    assert escape_path_name(None) == DEFAULT_PARTITION_PATH
    assert unescape_path_name("100%") == "100%" and unescape_path_name("%zz%4") == "%zz%4"
    values = pa.array(["".join(SPECIAL), None, "", "plain"])
    escaped = escape_path_names(values).to_pylist()
    assert escaped[0] == "".join(f"%{ord(c):02X}" for c in SPECIAL)
    assert escaped[1:] == [None, "", "plain"]


@pytest.mark.parametrize(
    ("cls", "hive", "encode", "expected"),
    [
        (SIMPLE, False, False, ["a/b", DEFAULT_PARTITION_PATH, DEFAULT_PARTITION_PATH, "x=1 y"]),
        (
            SIMPLE,
            True,
            False,
            ["city=a/b", f"city={DEFAULT_PARTITION_PATH}", f"city={DEFAULT_PARTITION_PATH}", "city=x=1 y"],
        ),
        (SIMPLE, False, True, ["a%2Fb", DEFAULT_PARTITION_PATH, DEFAULT_PARTITION_PATH, "x%3D1 y"]),
        (
            COMPLEX,
            True,
            True,
            [
                "city=a%2Fb",
                f"city={DEFAULT_PARTITION_PATH}",
                f"city={DEFAULT_PARTITION_PATH}",
                "city=x%3D1 y",
            ],
        ),
    ],
)
def test_single_partition_field(cls: str, hive: bool, encode: bool, expected: list[str]) -> None:
    data = pa.table({"id": [1, 2, 3, 4], "city": ["a/b", None, "", "x=1 y"]})
    assert conf(cls, "id", "city", hive=hive, encode=encode).partition_paths(data).to_pylist() == expected


def test_multi_field_partition_and_values() -> None:
    data = pa.table(
        {
            "id": [1, 2],
            "b": pa.array([10, None], pa.int8()),
            "s": pa.array([300, 100], pa.int16()),
            "d": pa.array([dt.date(2023, 4, 1), dt.date(2023, 4, 2)]),
        }
    )
    gen = conf(COMPLEX, "id", "b,s,d", hive=True)
    assert gen.partition_paths(data).to_pylist() == [
        "b=10/s=300/d=2023-04-01",
        f"b={DEFAULT_PARTITION_PATH}/s=100/d=2023-04-02",
    ]
    assert gen.partition_values("b=10/s=300/d=2023-04-01") == ["10", "300", "2023-04-01"]
    enc = conf(COMPLEX, "id", "a,b", encode=True)
    assert enc.partition_values("x%2Fy/z%3A1") == ["x/y", "z:1"]
    with pytest.raises(InvalidRecordKey):
        enc.partition_values("only-one")
    assert conf(NONPART, "id").partition_values("") == []


def test_float_and_binary_partitions() -> None:
    data = pa.table({"id": [1, 2], "f": [1e7, 0.5], "bin": [b"\x01", b""]})
    assert conf(COMPLEX, "id", "f,bin").partition_paths(data).to_pylist() == [
        "1.0E7/01",
        f"0.5/{DEFAULT_PARTITION_PATH}",
    ]


def test_empty_batch() -> None:
    data = pa.table({"id": pa.array([], pa.int32()), "p": pa.array([], pa.string())})
    gen = conf(SIMPLE, "id", "p")
    assert gen.record_keys(data).to_pylist() == [] and gen.partition_paths(data).to_pylist() == []
    assert conf(NONPART, "id").partition_paths(data).to_pylist() == []


# --------------------------------------------------------------------------------------------------------
# Spark SQL (SqlKeyGenerator) TIMESTAMP partitions
# --------------------------------------------------------------------------------------------------------


def test_sql_timestamp_partition_rewrite() -> None:
    ts = pa.array([dt.datetime(2023, 4, 1, 12, 1), None], pa.timestamp("us", tz="UTC"))
    data = pa.table({"id": [1, 2], "ts": ts, "d": pa.array([dt.date(2023, 4, 1)] * 2)})
    plain = conf(COMPLEX, "id", "ts,d", hive=True)
    assert plain.partition_paths(data).to_pylist()[0] == "ts=1680350460000000/d=2023-04-01"
    sql = conf(
        None,
        "id",
        "ts,d",
        hive=True,
        **{
            "hoodie.datasource.write.keygenerator.class": "org.apache.spark.sql.hudi.command.SqlKeyGenerator",
            "hoodie.sql.origin.keygen.class": COMPLEX,
        },
    )
    assert sql.sql_writer and isinstance(sql, ComplexKeyGenerator)
    assert sql.partition_paths(data).to_pylist() == [
        "ts=2023-04-01 12%3A01%3A00/d=2023-04-01",
        f"ts={DEFAULT_PARTITION_PATH}/d=2023-04-01",
    ]
    assert sql.partition_values("ts=2023-04-01 12%3A01%3A00/d=2023-04-01") == [
        "2023-04-01 12:01:00",
        "2023-04-01",
    ]
    kolkata = KeyGenerator.from_config(
        HoodieConfig(
            {
                "hoodie.table.recordkey.fields": "id",
                "hoodie.table.partition.fields": "ts",
                "hoodie.table.keygenerator.class": SIMPLE,
                "hoodie.sql.partition.schema": "`ts` TIMESTAMP",
                "hoodie.keygen.engine.jvm.timezone": "Asia/Kolkata",
            }
        ),
        sql_writer=True,
    )
    assert kolkata.partition_paths(data.slice(0, 1)).to_pylist() == ["2023-04-01 17%3A31%3A00"]


# --------------------------------------------------------------------------------------------------------
# TimestampBasedKeyGenerator
# --------------------------------------------------------------------------------------------------------


def ts_gen(
    ts_type: str | None, out: str, inp: str = "", hive: bool = False, encode: bool = False, **extra: str
) -> KeyGenerator:
    props = {"hoodie.keygen.timebased.output.dateformat": out}
    if ts_type:
        props["hoodie.keygen.timebased.timestamp.type"] = ts_type
    if inp:
        props["hoodie.keygen.timebased.input.dateformat"] = inp
    props.update(extra)
    return conf(TIMESTAMP, "id", "ts", hive=hive, encode=encode, **props)


def test_timestamp_date_string_fixture_format(caplog: pytest.LogCaptureFixture) -> None:
    data = pa.table(
        {"id": [1, 2, 3], "ts": ["2023-04-01T12:01:00.123Z", "2023-04-04T13:01:00.123+0530", None]}
    )
    with caplog.at_level(logging.WARNING):
        gen = ts_gen(None, "yyyy/MM/dd/HH", "yyyy-MM-dd'T'HH:mm:ss.SSSZ")
    assert gen.partition_paths(data).to_pylist() == ["2023/04/01/12", "2023/04/04/13", "1970/01/01/00"]
    assert gen.record_keys(data).to_pylist() == ["1", "2", "3"]
    utc = ts_gen(
        "DATE_STRING",
        "yyyy/MM/dd/HH",
        "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
        **{"hoodie.keygen.timebased.output.timezone": "UTC"},
    )
    assert utc.partition_paths(data).to_pylist()[1] == "2023/04/04/07"


@pytest.mark.parametrize(
    ("inp", "in_tz", "out_tz", "text", "out", "expected"),
    [
        ("yyyy-MM-dd HH:mm:ss", "", "", "2023-04-01 23:30:00", "yyyy/MM/dd", "2023/04/01"),
        ("yyyy-MM-dd HH:mm:ss", "Asia/Kolkata", "", "2023-04-01 23:30:00", "yyyyMMddHH", "2023040123"),
        ("yyyy-MM-dd HH:mm:ss", "Asia/Kolkata", "UTC", "2023-04-01 23:30:00", "yyyyMMddHH", "2023040118"),
        ("yyyy-MM-dd'T'HH:mm:ssZ", "", "", "2023-04-01T23:30:00+0530", "yyyy-MM-dd HH", "2023-04-01 23"),
        ("yyyy-MM-dd'T'HH:mm:ssZ", "", "UTC", "2023-04-01T23:30:00+0530", "yyyy-MM-dd HH", "2023-04-01 18"),
        ("yyyyMMdd,yyyy-MM-dd", "", "", "2023-04-01", "yyyy/MM/dd", "2023/04/01"),
        ("yyyyMMdd,yyyy-MM-dd", "", "", "20230401", "yyyy/MM/dd", "2023/04/01"),
    ],
)
def test_timestamp_date_string_zones(
    inp: str, in_tz: str, out_tz: str, text: str, out: str, expected: str
) -> None:
    extra = {}
    if in_tz:
        extra["hoodie.keygen.timebased.input.timezone"] = in_tz
    if out_tz:
        extra["hoodie.keygen.timebased.output.timezone"] = out_tz
    gen = ts_gen("DATE_STRING", out, inp, **extra)
    assert gen.partition_paths(pa.table({"id": [1], "ts": [text]})).to_pylist() == [expected]


def test_timestamp_numeric_types() -> None:
    secs = pa.table({"id": [1, 2], "ts": pa.array([1680350460, None], pa.int64())})
    assert ts_gen("UNIX_TIMESTAMP", "yyyy/MM/dd/HH").partition_paths(secs).to_pylist() == [
        "2023/04/01/12",
        "1970/01/01/00",
    ]
    ny = ts_gen(
        "UNIX_TIMESTAMP", "yyyy/MM/dd/HH", **{"hoodie.keygen.timebased.output.timezone": "America/New_York"}
    )
    assert ny.partition_paths(secs.slice(0, 1)).to_pylist() == ["2023/04/01/08"]
    millis = pa.table({"id": [1], "ts": pa.array([1680350460123], pa.int64())})
    assert ts_gen("EPOCHMILLISECONDS", "yyyy-MM-dd HH:mm:ss.SSS", hive=True).partition_paths(
        millis
    ).to_pylist() == ["ts=2023-04-01 12:01:00.123"]
    assert ts_gen("EPOCHMILLISECONDS", "yyyy-MM-dd HH:mm:ss", encode=True).partition_paths(
        millis
    ).to_pylist() == ["2023-04-01 12%3A01%3A00"]
    scalar = pa.table({"id": [1, 2], "ts": pa.array([19448.0, 19448.9])})
    days = ts_gen("SCALAR", "yyyy/MM/dd", **{"hoodie.keygen.timebased.timestamp.scalar.time.unit": "days"})
    assert days.partition_paths(scalar).to_pylist() == ["2023/04/01", "2023/04/01"]
    date_col = pa.table({"id": [1], "ts": pa.array([dt.date(2023, 4, 1)])})
    assert days.partition_paths(date_col).to_pylist() == ["2023/04/01"]  # LocalDate -> epoch days in the unit
    ts_col = pa.table(
        {"id": [1], "ts": pa.array([dt.datetime(2023, 4, 1, 12, 1)], pa.timestamp("us", tz="UTC"))}
    )
    micros = ts_gen("EPOCHMICROSECONDS", "yyyyMMddHH")
    assert micros.partition_paths(ts_col).to_pylist() == ["2023040112"]
    consistent = ts_gen(
        "EPOCHMILLISECONDS",
        "yyyyMMddHH",
        **{"hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled": "true"},
    )
    assert consistent.partition_paths(ts_col).to_pylist() == ["2023040112"]
    dec = pa.table({"id": [1], "ts": pa.array([Decimal("1680350460.9")], pa.decimal128(12, 1))})
    assert ts_gen("UNIX_TIMESTAMP", "yyyy/MM/dd/HH/mm/ss").partition_paths(dec).to_pylist() == [
        "2023/04/01/12/01/00"
    ]


def test_timestamp_errors() -> None:
    with pytest.raises(InvalidRecordKey, match="unable to parse"):
        ts_gen("DATE_STRING", "yyyy", "yyyy-MM-dd").partition_paths(
            pa.table({"id": [1], "ts": ["01/04/2023"]})
        )
    with pytest.raises(InvalidRecordKey, match="Missing input formatter"):
        ts_gen("UNIX_TIMESTAMP", "yyyy").partition_paths(pa.table({"id": [1], "ts": ["2023"]}))
    with pytest.raises(InvalidRecordKey, match="must be strings"):
        ts_gen("DATE_STRING", "yyyy", "yyyy").partition_paths(pa.table({"id": [1], "ts": [5]}))
    with pytest.raises(ConfigError, match="timestamp.type"):
        ts_gen(None, "yyyy")
    with pytest.raises(ConfigError, match="output.dateformat"):
        ts_gen("UNIX_TIMESTAMP", "")
    with pytest.raises(ConfigError, match="invalid value"):
        ts_gen("WEEKLY", "yyyy")
    with pytest.raises(ConfigError, match="single record key"):
        conf(
            TIMESTAMP,
            "a,b",
            "ts",
            **{
                "hoodie.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP",
                "hoodie.keygen.timebased.output.dateformat": "yyyy",
            },
        )


@pytest.mark.parametrize(
    "pattern", ["yyyy-MM-dd'T'HH:mm:ssX", "G yyyy", "xxxx-ww", "e", "uuuu", "zzzz", "'open"]
)
def test_unsupported_pattern_letters(pattern: str) -> None:
    with pytest.raises(ConfigError):
        JodaDateFormat(pattern)


@pytest.mark.parametrize(
    ("pattern", "zone", "millis", "expected"),
    [  # joda-time 2.x output
        ("yyyy/MM/dd/HH", "UTC", 1680350460000, "2023/04/01/12"),
        ("yyyy/MM/dd/HH", "America/New_York", 1680350460000, "2023/04/01/08"),
        ("yyyyMMdd", "UTC", 19448000, "19700101"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "UTC", 1, "1970-01-01T00:00:00.001+0000"),
        ("dd MMM yyyy hh:mm a EEE", "UTC", 1680350460000, "01 Apr 2023 12:01 PM Sat"),
        (
            "yyyy/MM/dd/HH SSS S SSSS a h z Z ZZ ZZZ",
            "America/Los_Angeles",
            1680350460120,
            "2023/04/01/05 120 1 1200 AM 5 PDT -0700 -07:00 America/Los_Angeles",
        ),
        ("yyyy-MM-dd HH:mm:ss", "Asia/Kolkata", 1680350460000, "2023-04-01 17:31:00"),
        ("'quoted''s' yy", "GMT+08:00", 0, "quoted's 70"),
    ],
)
def test_joda_format(pattern: str, zone: str, millis: int, expected: str) -> None:
    fmt = JodaDateFormat(pattern)
    z = resolve_java_zone(zone)
    assert fmt.format(millis, z) == expected
    vec = fmt.format_many(np.array([millis, 0], np.int64), np.array([True, False]), z).to_pylist()
    assert vec == [expected, None]


def test_joda_format_many_matches_scalar() -> None:
    rng = np.random.default_rng(7)
    millis = rng.integers(-2_000_000_000_000, 4_000_000_000_000, 2000)
    valid = rng.random(2000) > 0.1
    for pattern in ["yyyy/MM/dd/HH", "yyyy-MM-dd HH:mm:ss", "yyyyMMdd'T'HH"]:
        fmt = JodaDateFormat(pattern)
        for zone in ["UTC", "Europe/Berlin", "GMT-03:30"]:
            z = resolve_java_zone(zone)
            got = fmt.format_many(millis, valid, z).to_pylist()
            assert got == [fmt.format(int(m), z) if v else None for m, v in zip(millis, valid, strict=True)]


def test_joda_parse_rules() -> None:
    utc = resolve_java_zone("UTC")
    fmt = JodaDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSZ")
    assert fmt.parse("2023-04-01T12:01:00.1-08:00", None, utc)[0] == 1680379260100
    with pytest.raises(ValueError):
        fmt.parse("2023-04-01T12:01:00.123456Z", None, utc)  # SSS takes at most 3 digits
    with pytest.raises(ValueError):  # DST gap: Joda's IllegalInstantException
        JodaDateFormat("yyyy-MM-dd HH:mm:ss").parse("2023-03-12 02:30:00", None, resolve_java_zone("EST"))


def test_zone_resolution() -> None:
    assert resolve_java_zone("EST").joda_id == "America/New_York"
    assert resolve_java_zone("PST").joda_id == "America/Los_Angeles"
    assert resolve_java_zone("GMT+8").joda_id == "+08:00"
    assert resolve_java_zone("GMT").joda_id == "UTC"
    assert resolve_java_zone("UTC+8").joda_id == "UTC"  # not a Java custom id: GMT


# --------------------------------------------------------------------------------------------------------
# CustomKeyGenerator, inference, helpers
# --------------------------------------------------------------------------------------------------------


def test_custom_keygen() -> None:
    data = pa.table({"id": [1], "region": ["eu/west"], "ts": pa.array([1680350460], pa.int64())})
    gen = conf(
        CUSTOM,
        "id",
        "region,ts",
        hive=True,
        encode=True,
        **{
            "hoodie.datasource.write.partitionpath.field": "region:simple,ts:timestamp",
            "hoodie.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP",
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
        },
    )
    assert isinstance(gen, CustomKeyGenerator)
    assert gen.partition_fields == ["region", "ts"]
    assert gen.record_keys(data).to_pylist() == ["1"]
    assert gen.partition_paths(data).to_pylist() == ["region=eu%2Fwest/ts=2023%2F04%2F01"]
    untyped = conf(CUSTOM, "id", "region")
    with pytest.raises(ConfigError, match="field:simple"):
        untyped.partition_paths(data)
    with pytest.raises(ConfigError):
        conf(CUSTOM, "id", "", **{"hoodie.datasource.write.partitionpath.field": "region:weird"})


@pytest.mark.parametrize(
    ("keys", "parts", "kind"),
    [
        ("id", "", NonpartitionedKeyGenerator),
        ("id", "p", SimpleKeyGenerator),
        ("id,n", "p", ComplexKeyGenerator),
        ("id", "p,q", ComplexKeyGenerator),
        ("id", "p:simple", CustomKeyGenerator),
    ],
)
def test_inferred_generator(keys: str, parts: str, kind: type) -> None:
    gen = KeyGenerator.from_config(
        HoodieConfig(
            {
                "hoodie.datasource.write.recordkey.field": keys,
                "hoodie.datasource.write.partitionpath.field": parts,
            }
        )
    )
    assert type(gen) is kind
    assert gen.key_class_name.startswith("org.apache.hudi.keygen.")


def test_config_errors() -> None:
    with pytest.raises(ConfigError, match="not supported"):
        conf("com.example.MyKeyGen", "id")
    with pytest.raises(ConfigError, match="single record key"):
        conf(SIMPLE, "a,b", "p")
    with pytest.raises(ConfigError, match="single partition"):
        conf(SIMPLE, "a", "p,q")


def test_write_options_override_table_config() -> None:
    gen = conf(
        SIMPLE,
        "id",
        "p",
        **{
            "hoodie.datasource.write.keygenerator.class": COMPLEX,
            "hoodie.datasource.write.recordkey.field": "id,name",
        },
    )
    assert isinstance(gen, ComplexKeyGenerator) and gen.record_key_fields == ["id", "name"]
    avro = conf("org.apache.hudi.keygen.SimpleAvroKeyGenerator", "id", "p")
    assert isinstance(avro, SimpleKeyGenerator)


def test_extract_record_keys() -> None:
    assert extract_record_keys("plain") == ["plain"]
    assert extract_record_keys("id:1,name:Alice") == ["1", "Alice"]
    assert extract_record_keys("id:__null__,name:__empty__") == [None, ""]
    assert extract_record_keys("a:1,ts:2014-10-22 13:50:42,c:3") == ["1", "2014-10-22 13:50:42", "3"]
    assert extract_record_keys("id:1,name:Alice", ["name"]) == ["Alice"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1.0"),
        (100.0, "100.0"),
        (1234567.0, "1234567.0"),
        (1e7, "1.0E7"),
        (0.001, "0.001"),
        (1e-4, "1.0E-4"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (1.2345678901234568e17, "1.2345678901234568E17"),
    ],
)
def test_java_double(value: float, expected: str) -> None:
    assert java_double_to_string(value) == expected


def test_java_misc_formats() -> None:
    assert java_float_to_string(0.3) == "0.3"
    assert java_decimal_to_string(Decimal("-1.5000000000")) == "-1.5000000000"
    assert java_local_date_to_string(2932897) == "+10000-01-01"
    assert java_local_date_to_string(-719163) == "0000-12-31"
    assert java_local_date_to_string(-758081) == "-0106-06-12"


# --------------------------------------------------------------------------------------------------------
# Throughput
# --------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_many_rows_vectorized() -> None:
    """200,000 rows through each vectorized path give a key and a path per row (the speed of these paths is
    measured by bench/, never asserted in a test: a loaded machine made the old 5-second bound fail)."""
    n = 200_000
    rng = np.random.default_rng(1)
    data = pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "name": pa.array([f"n{i % 1000}" for i in range(n)]),
            "city": pa.array(np.array(["sf", "nyc", "la/x", "sao paulo"])[rng.integers(0, 4, n)]),
            "ts": pa.array(rng.integers(1_600_000_000, 1_700_000_000, n), pa.int64()),
        }
    )
    cases = [
        conf(SIMPLE, "id", "city", hive=True, encode=True),
        conf(COMPLEX, "id,name", "city,name", hive=True),
        ts_gen("UNIX_TIMESTAMP", "yyyy/MM/dd/HH"),
    ]
    for gen in cases:
        if isinstance(gen, TimestampBasedKeyGenerator):
            gen_data = data.select(["id", "ts"])
        else:
            gen_data = data
        keys = gen.record_keys(gen_data)
        paths = gen.partition_paths(gen_data)
        assert len(keys) == n and len(paths) == n and keys.null_count == 0 and paths.null_count == 0
