"""A write plan's routing rule (:class:`engine.write.planner.WritePlan`, Hudi ``UpsertPartitioner``) as a
Spark expression, so records get their bucket without a Python pass.

Same rule as :func:`engine.spark.tasks.assign_buckets_fn`, which stays the path for plans too large to
spell as one expression: an update goes to its file group's bucket; an insert goes to the first bucket of
its partition whose cumulative weight exceeds ``(_hoodie_key_hash % 10000) / 10000`` (the last one if
none does).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType

from engine.write.planner import WritePlan
from engine.write.prepare import FILE_ID, KEY_HASH, PARTITION_PATH

MAX_UPDATE_BUCKETS = 4096
"""Plans updating more file groups than this are routed in Python (their file id -> bucket map literal
grows with them)."""
MAX_INSERT_WEIGHTS = 64
"""Plans with more insert weights (over all partitions) than this are routed in Python: a CASE tests them
one by one for every record."""

_HASH_SLOTS = 10_000


def bucket_column(plan: WritePlan) -> Column | None:
    """``_hoodie_bucket`` (int) of each tagged record (columns ``_hoodie_file_id``,
    ``_hoodie_partition_path``, ``_hoodie_key_hash``), or ``None`` when the plan is larger than
    :data:`MAX_UPDATE_BUCKETS` / :data:`MAX_INSERT_WEIGHTS`. An insert into a partition the plan has no
    weights for fails the query, naming the partition."""
    if (len(plan.update_buckets) > MAX_UPDATE_BUCKETS
            or sum(len(w) for w in plan.insert_weights.values()) > MAX_INSERT_WEIGHTS):
        return None
    fraction = (F.col(KEY_HASH) % _HASH_SLOTS) / float(_HASH_SLOTS)
    no_bucket = F.raise_error(F.concat(
        F.lit("no insert bucket for partition '"), F.col(PARTITION_PATH), F.lit("' in the write plan")))
    insert: Column | None = None
    for partition, weights in plan.insert_weights.items():
        in_partition = F.col(PARTITION_PATH) == F.lit(partition)
        for cumulative, bucket in weights[:-1]:
            condition = in_partition & (fraction < F.lit(cumulative))
            insert = F.when(condition, F.lit(bucket)) if insert is None else insert.when(condition, F.lit(bucket))
        last = F.lit(weights[-1][1])
        insert = F.when(in_partition, last) if insert is None else insert.when(in_partition, last)
    insert = no_bucket if insert is None else insert.otherwise(no_bucket)
    if not plan.update_buckets:
        return insert.cast(IntegerType())
    updates = F.create_map(*[F.lit(v) for item in plan.update_buckets.items() for v in item])
    return F.coalesce(F.try_element_at(updates, F.col(FILE_ID)), insert).cast(IntegerType())
