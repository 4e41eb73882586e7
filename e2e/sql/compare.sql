-- Row-by-row comparison of a mart table with the join over the source tables.
-- psql variables: mart (table, e.g. mart.users_domains), expected (view, e.g.
-- mart.expected_users_domains; its columns in the mart table's order), limit (differences to show),
-- key (the columns that identify a row, to order and show differences by, e.g. id, domain_id),
-- show (what to print of a differing row: * or a column list). Multiset semantics (EXCEPT ALL),
-- NULLs compare equal, every column compared.
-- Prints one line "COMPARE <mart> expected=N mart=N missing=N extra=N" and the first differences;
-- ends with an error (psql exit 3 under ON_ERROR_STOP) when they differ.
\set QUIET on
\pset footer off
BEGIN ISOLATION LEVEL REPEATABLE READ;  -- one snapshot for both sides

CREATE TEMP TABLE _exp ON COMMIT DROP AS SELECT * FROM :expected;
CREATE TEMP TABLE _mart ON COMMIT DROP AS SELECT * FROM :mart;
CREATE TEMP TABLE _missing ON COMMIT DROP AS SELECT * FROM _exp EXCEPT ALL SELECT * FROM _mart;
CREATE TEMP TABLE _extra ON COMMIT DROP AS SELECT * FROM _mart EXCEPT ALL SELECT * FROM _exp;

SELECT (SELECT count(*) FROM _exp) AS n_expected, (SELECT count(*) FROM _mart) AS n_mart,
       (SELECT count(*) FROM _missing) AS n_missing, (SELECT count(*) FROM _extra) AS n_extra
\gset
\echo COMPARE :mart expected=:n_expected mart=:n_mart missing=:n_missing extra=:n_extra
SELECT (:n_missing + :n_extra = 0) AS same \gset
\if :same
\else
  \pset tuples_only off
  \echo first differences (missing = in the join but not in the mart, extra = in the mart only):
  SELECT * FROM (
      (SELECT 'missing' AS diff, :show FROM _missing ORDER BY :key LIMIT :limit)
      UNION ALL
      (SELECT 'extra', :show FROM _extra ORDER BY :key LIMIT :limit)) x
  ORDER BY :key, diff;
\endif
COMMIT;
\if :same
\else
  DO $$ BEGIN RAISE EXCEPTION 'mart differs from the join'; END $$;
\endif
