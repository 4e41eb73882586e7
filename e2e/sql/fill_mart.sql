-- Fills a mart table with the very join it will be compared with. Used by `e2e/lib/mart.sh
-- selftest` to test the comparison (and the mart's keys) without the product's job.
-- psql variables: mart, expected.
BEGIN;
DELETE FROM :mart;
INSERT INTO :mart (id, firstname, lastname, domain_id, user_id, domain_name)
    SELECT id, firstname, lastname, domain_id, user_id, domain_name FROM :expected;
COMMIT;
