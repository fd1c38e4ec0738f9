-- sqlext quickstart: a partitioned copy-on-write Hudi table, written and read with plain SQL.
-- Run with:  sqlext -f examples/quickstart.sql
SET spark.sql.cli.print.header=true;

DROP TABLE IF EXISTS trips PURGE;

CREATE TABLE trips (
  trip_id   BIGINT,
  rider     STRING,
  driver    STRING,
  fare      DECIMAL(10,2),
  ts        BIGINT,
  city      STRING
) USING hudi
PARTITIONED BY (city)
TBLPROPERTIES (type = 'cow', primaryKey = 'trip_id', preCombineField = 'ts');

INSERT INTO trips VALUES
  (1, 'rider-A', 'driver-K', 19.10, 1000, 'san_francisco'),
  (2, 'rider-B', 'driver-L', 27.70, 1000, 'san_francisco'),
  (3, 'rider-C', 'driver-M', 33.90, 1000, 'sao_paulo'),
  (4, 'rider-D', 'driver-N', 34.15, 1000, 'chennai'),
  (5, 'rider-E', 'driver-O', 17.85, 1000, 'chennai');

SELECT trip_id, rider, fare, city FROM trips ORDER BY trip_id;

-- Upsert changed and new trips in one statement.
MERGE INTO trips AS t
USING (SELECT * FROM VALUES
         (2, 'rider-B', 'driver-L', 29.00, 2000, 'san_francisco'),
         (6, 'rider-F', 'driver-P', 41.06, 2000, 'sao_paulo')
       AS s(trip_id, rider, driver, fare, ts, city)) AS s
ON t.trip_id = s.trip_id
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED THEN INSERT *;

UPDATE trips SET fare = fare * 2 WHERE rider = 'rider-C';

DELETE FROM trips WHERE city = 'chennai' AND trip_id = 5;

SELECT trip_id, rider, fare, city, _hoodie_commit_time FROM trips ORDER BY trip_id;

SHOW PARTITIONS trips;

SELECT city, count(*) AS trips, sum(fare) AS revenue FROM trips GROUP BY city ORDER BY city;
