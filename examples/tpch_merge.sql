-- TPC-H refresh functions applied through MERGE INTO on a partitioned copy-on-write Hudi table.
--
-- Data (SF1 = 6,001,215 line items):   python bench/tpch_gen.py --sf 1 --out bench/data/sf1
-- Run:                                 sqlext --conf tpch.dir=bench/data/sf1 -f examples/tpch_merge.sql
--
-- lineitem has no natural version column, so the table has no precombine field: incoming rows win
-- (Hudi's OverwriteWithLatestAvroPayload semantics); the refresh inputs carry no duplicate keys.
SET spark.sql.cli.print.header=true;

DROP TABLE IF EXISTS lineitem PURGE;

-- Bulk insert of the whole table (CTAS), partitioned by ship year.
CREATE TABLE lineitem USING hudi
PARTITIONED BY (l_shipyear)
TBLPROPERTIES (type = 'cow', primaryKey = 'l_orderkey,l_linenumber')
AS SELECT *, year(l_shipdate) AS l_shipyear FROM parquet.`${tpch.dir}/lineitem.parquet`;

SELECT count(*) AS line_items FROM lineitem;

-- RF1: line items of new orders.
MERGE INTO lineitem AS t
USING (SELECT *, year(l_shipdate) AS l_shipyear FROM parquet.`${tpch.dir}/rf1_lineitem.parquet`) AS s
ON t.l_orderkey = s.l_orderkey AND t.l_linenumber = s.l_linenumber
WHEN NOT MATCHED THEN INSERT *;

-- About 1% of existing line items change quantity and price.
MERGE INTO lineitem AS t
USING (SELECT *, year(l_shipdate) AS l_shipyear FROM parquet.`${tpch.dir}/updates_lineitem.parquet`) AS s
ON t.l_orderkey = s.l_orderkey AND t.l_linenumber = s.l_linenumber
WHEN MATCHED THEN UPDATE SET *;

-- RF2: delete orders.
MERGE INTO lineitem AS t
USING (SELECT l.l_orderkey, l.l_linenumber
       FROM lineitem l JOIN parquet.`${tpch.dir}/rf2_orderkeys.parquet` d ON l.l_orderkey = d.l_orderkey) AS s
ON t.l_orderkey = s.l_orderkey AND t.l_linenumber = s.l_linenumber
WHEN MATCHED THEN DELETE;

-- TPC-H Q1 on the refreshed table.
SELECT l_returnflag, l_linestatus,
       sum(l_quantity) AS sum_qty,
       sum(l_extendedprice) AS sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       count(*) AS count_order
FROM lineitem
WHERE l_shipdate <= date '1998-12-01' - interval 90 days
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus;

SELECT l_shipyear, count(*) AS line_items,
       sum(CASE WHEN l_comment = 'updated' THEN 1 ELSE 0 END) AS updated
FROM lineitem GROUP BY l_shipyear ORDER BY l_shipyear;
