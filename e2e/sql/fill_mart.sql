-- Fills a mart table with the very join it will be compared with. Used by `e2e/lib/mart.sh
-- selftest` to test the comparison (and the mart's keys) without the product's job.
-- psql variables: mart, expected (its columns in the mart table's order).
BEGIN;
DELETE FROM :mart;
INSERT INTO :mart SELECT * FROM :expected;
COMMIT;
