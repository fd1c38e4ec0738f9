"""The bucket index's pure part (engine.index.bucket): Hudi's BucketIdentifier hash bit for bit, file ids,
settings and the bucket → file group mapping."""

from __future__ import annotations

import random
import re

import pyarrow as pa
import pytest

from engine.config import HoodieConfig
from engine.errors import ConfigError, IndexLookupError, InvalidRecordKey
from engine.index.bucket import (
    BucketSpec,
    bucket_file_groups,
    bucket_file_id,
    bucket_id,
    bucket_ids,
    bucket_of_file_id,
    hash_keys,
    java_list_hash,
    new_bucket_groups,
)
from engine.java_hash import java_string_hash


def _signed(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


@pytest.mark.parametrize(("text", "java"), [
    ("", 0),
    ("a", 97),
    ("hello", 99162322),
    ("Aa", 2112),
    ("BB", 2112),
    ("polygenelubricants", -2147483648),   # the classic Integer.MIN_VALUE string
    ("\U0001F600", 0xD83D * 31 + 0xDE00),  # one code point, two UTF-16 units
])
def test_java_string_hash_matches_java(text: str, java: int) -> None:
    assert _signed(java_string_hash(text)) == java


def test_java_list_hash_is_list_hashcode() -> None:
    # java.util.List.of("a").hashCode() == 31 + 97; Arrays.asList(null, "a") == 31 * 31 + 97
    assert java_list_hash(["a"]) == 128
    assert java_list_hash([None, "a"]) == 31 * 31 + 97
    assert java_list_hash([]) == 1


def test_bucket_of_a_simple_key_is_not_the_string_hash_alone() -> None:
    # docs/FORMAT.md §7: (31 + key.hashCode()) & MAX_VALUE, then mod.
    for key in ("id1", "uuid-0001", "polygenelubricants"):
        assert bucket_id(key, ["id"], 1000) == ((31 + java_string_hash(key)) & 0x7FFFFFFF) % 1000


def test_hash_keys_split_as_hudi_015_keygenutils() -> None:
    # KeyGenUtils.extractRecordKeysByFields (0.13-0.15): split on ',', each part on its first ':'; values of the
    # hash fields and parts without ':' kept, in the key's order.
    assert hash_keys("42", ["id"]) == ["42"]
    assert hash_keys("id:42,name:x", ["name", "id"]) == ["42", "x"]
    assert hash_keys("id:42,name:x", ["id"]) == ["42"]
    assert hash_keys("id:42", ["other"]) == []
    assert hash_keys("ts:10:00", ["ts"]) == ["10:00"]  # split(":", 2)
    assert hash_keys("f1:abc,f2:bcd,efg", ["f1", "f2"]) == ["abc", "bcd", "efg"]  # Hudi's TestBucketIdentifier
    assert hash_keys("a,b", ["id"]) == ["a", "b"]  # a simple key holding ',' is cut too
    assert hash_keys("a,,b,,", ["id"]) == ["a", "", "b"]  # Java split drops trailing empty strings only
    assert hash_keys("", ["id"]) == [""]
    assert hash_keys("id:1,name:__null__,c:__empty__", ["id", "name", "c"]) == ["1", None, ""]


def test_buckets_of_keys_with_separators_match_java_by_hand() -> None:
    # List("a","b").hashCode = 31 * (31 * 1 + 'a'(97)) + 'b'(98) = 4066; 4066 % 7 = 6
    # (as one string, "a,b" would hash 31 + 94679 = 94710 -> bucket 0).
    assert bucket_id("a,b", ["id"], 7) == 6
    # "abc".hashCode = 96354, "bcd" = 97347, "efg" = 100326; h = 1 -> 96385 -> 3085282 -> 95744068; % 16 = 4
    assert bucket_id("f1:abc,f2:bcd,efg", ["f1", "f2"], 16) == 4
    # "10:00".hashCode = 49*31^4 + 48*31^3 + 58*31^2 + 48*31 + 48 = 46739771; + 31 = 46739802; % 10 = 2
    assert bucket_id("ts:10:00", ["ts"], 10) == 2
    # the vectorized path sends keys holding ',' or ':' through the same rule
    keys = ["a,b", "f1:abc,f2:bcd,efg", "plain"]
    assert bucket_ids(pa.array(keys), ["f1", "f2"], 16).to_pylist() == [bucket_id(k, ["f1", "f2"], 16) for k in keys]


def test_vectorized_bucket_ids_equal_the_scalar_rule() -> None:
    rng = random.Random(14)
    alphabet = "abcXYZ019-_ é中\U0001F600"
    keys = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(2000)]
    keys += [f"id:{i},name:n{i}" for i in range(50)] + ["a" * 300, "x,y", "1,2,,"]
    for num in (1, 4, 7, 256):
        got = bucket_ids(pa.array(keys), ["id"], num).to_pylist()
        assert got == [bucket_id(k, ["id"], num) for k in keys]
    sliced = pa.chunked_array([pa.array(keys[:10]), pa.array(keys[10:30])])
    assert bucket_ids(sliced, ["id"], 8).to_pylist() == [bucket_id(k, ["id"], 8) for k in keys[:30]]
    assert bucket_ids(pa.array(keys).slice(5, 7), ["id"], 8).to_pylist() == [bucket_id(k, ["id"], 8) for k in keys[5:12]]
    with pytest.raises(InvalidRecordKey, match="null"):
        bucket_ids(pa.array(["a", None]), ["id"], 4)


def test_vectorized_composite_keys_equal_the_scalar_rule() -> None:
    """Composite keys (``f1:v1,f2:v2``) hashed at once: parts without ``:``, values holding ``:``, placeholders
    for null and empty values, empty parts, fields not hashed, trailing commas and non-ASCII values."""
    rng = random.Random(32)
    keys = [",".join(rng.choice(["f1:", "f2:", "f3:", ""]) + "".join(rng.choice("ab:_1é") for _ in range(
        rng.randint(0, 4))) for _ in range(rng.randint(1, 4))) for _ in range(5000)]
    keys += ["f1:__null__,f2:x", "f1:__empty__", "__null__", "", ",", "a,,b", "f1:a:b,f2:c", ":x", "f1:",
             "f1:1,f2:2,", "l_orderkey:1,l_linenumber:7"]
    for fields in (["f1", "f2"], [], ["f3"], ["l_orderkey", "l_linenumber"]):
        for num in (1, 16, 256):
            got = bucket_ids(pa.array(keys), fields, num).to_pylist()
            assert got == [bucket_id(k, fields, num) for k in keys], (fields, num)
    sliced = pa.array(keys).slice(100, 50)
    assert bucket_ids(sliced, ["f1"], 8).to_pylist() == [bucket_id(k, ["f1"], 8) for k in keys[100:150]]


def test_bucket_file_ids() -> None:
    fid = bucket_file_id(3)
    assert re.fullmatch(r"00000003-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-0", fid)
    assert bucket_of_file_id(fid) == 3
    assert bucket_of_file_id(bucket_file_id(12345678)) == 12345678
    assert bucket_of_file_id("9c4f1a2b-0000-0000-0000-000000000000-0") is None


def test_bucket_spec_validation() -> None:
    conf = HoodieConfig({"hoodie.datasource.write.recordkey.field": "id,name", "hoodie.index.type": "BUCKET"})
    spec = BucketSpec.from_config(conf, "/t")
    assert spec == BucketSpec(256, ("id", "name"))  # Hudi's default number of buckets
    assert BucketSpec.from_config(conf.overlay({"hoodie.bucket.index.hash.field": "name",
                                                "hoodie.bucket.index.num.buckets": "16"}), "/t") == \
        BucketSpec(16, ("name",))
    with pytest.raises(ConfigError, match="subset of the record key fields"):
        BucketSpec.from_config(conf.overlay({"hoodie.bucket.index.hash.field": "ts"}), "/t")
    with pytest.raises(ConfigError, match="positive number of buckets"):
        BucketSpec.from_config(conf.overlay({"hoodie.bucket.index.num.buckets": "0"}), "/t")
    with pytest.raises(ConfigError, match="hoodie.index.bucket.engine=CONSISTENT_HASHING is not supported"):
        BucketSpec.from_config(conf.overlay({"hoodie.index.bucket.engine": "consistent_hashing"}), "/t")


def test_bucket_to_file_group_mapping() -> None:
    a, b = bucket_file_id(0), bucket_file_id(2)
    assert bucket_file_groups("p", [a, b], "/t") == {0: a, 2: b}
    with pytest.raises(IndexLookupError, match="same bucket id = 2"):
        bucket_file_groups("p", [b, bucket_file_id(2)], "/t")
    with pytest.raises(IndexLookupError, match="not a bucket file group"):
        bucket_file_groups("p", ["9c4f1a2b-aaaa-bbbb-cccc-000000000000-0"], "/t")
    groups = new_bucket_groups([("p", 0), ("p", 1), ("q", 0)], {"p": {0: a}})
    assert groups[("p", 0)] == a
    assert bucket_of_file_id(groups[("p", 1)]) == 1 and bucket_of_file_id(groups[("q", 0)]) == 0
