-- Where a mart differs from its join: per column, how many rows (matched by key) hold another
-- value, with the first such row's key and both values (excerpts); then how many keys are only on
-- one side. For marts too wide to print whole rows (the fidelity marts), after compare.sql failed.
-- psql variables: mart, expected, key (the columns identifying a row, e.g. item_id, account_id).
-- Values are compared as to_jsonb renders them (numbers by value, so 1.5 = 1.50).
\set QUIET on
\pset footer off
BEGIN ISOLATION LEVEL REPEATABLE READ;
CREATE TEMP TABLE _e ON COMMIT DROP AS SELECT ROW(:key)::text AS k, to_jsonb(x) AS j FROM :expected x;
CREATE TEMP TABLE _m ON COMMIT DROP AS SELECT ROW(:key)::text AS k, to_jsonb(x) AS j FROM :mart x;
SELECT c.col AS "column", count(*) AS rows_differ,
       (array_agg(e.k ORDER BY e.k))[1] AS first_key,
       left((array_agg(e.j -> c.col ORDER BY e.k))[1]::text, 70) AS expected,
       left((array_agg(m.j -> c.col ORDER BY e.k))[1]::text, 70) AS mart
FROM _e e JOIN _m m USING (k) CROSS JOIN LATERAL jsonb_object_keys(e.j) AS c(col)
WHERE (e.j -> c.col) IS DISTINCT FROM (m.j -> c.col)
GROUP BY c.col ORDER BY c.col;
SELECT (SELECT count(*) FROM _e e WHERE NOT EXISTS (SELECT 1 FROM _m m WHERE m.k = e.k)) AS keys_only_in_join,
       (SELECT count(*) FROM _m m WHERE NOT EXISTS (SELECT 1 FROM _e e WHERE e.k = m.k)) AS keys_only_in_mart;
COMMIT;
