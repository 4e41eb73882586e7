-- Row-by-row comparison of a mart table with the join over the source tables.
-- psql variables: mart (table, e.g. mart.users_domains), expected (view, e.g.
-- mart.expected_users_domains), limit (differences to show). Multiset semantics (EXCEPT ALL), NULLs
-- compare equal; the columns are (id, firstname, lastname, domain_id, user_id, domain_name).
-- Prints one line "COMPARE <mart> expected=N mart=N missing=N extra=N" and the first differences;
-- ends with an error (psql exit 3 under ON_ERROR_STOP) when they differ.
\set QUIET on
\pset footer off
BEGIN ISOLATION LEVEL REPEATABLE READ;  -- one snapshot for both sides

CREATE TEMP TABLE _exp ON COMMIT DROP AS
    SELECT id, firstname, lastname, domain_id, user_id, domain_name FROM :expected;
CREATE TEMP TABLE _mart ON COMMIT DROP AS
    SELECT id, firstname, lastname, domain_id, user_id, domain_name FROM :mart;
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
      (SELECT 'missing' AS diff, * FROM _missing ORDER BY id, domain_id LIMIT :limit)
      UNION ALL
      (SELECT 'extra', * FROM _extra ORDER BY id, domain_id LIMIT :limit)) x
  ORDER BY id, domain_id NULLS FIRST, diff;
\endif
COMMIT;
\if :same
\else
  DO $$ BEGIN RAISE EXCEPTION 'mart differs from the join'; END $$;
\endif
