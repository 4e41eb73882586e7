#!/usr/bin/env bash
# The data mart's checks: row-by-row comparison of a mart table with the join over the sources.
#
# usage: e2e/lib/mart.sh COMMAND
#   compare inner|left        one comparison (sql/compare.sql); exit 0 iff equal
#   wait inner|left [SECS]    compares every second until equal (default 120 s); prints the time
#   selftest                  tests the comparison itself without the product's job: fills both
#                             marts with the join (sql/fill_mart.sql) -> equal; perturbs them
#                             (a changed name, a lost row, a duplicate) -> must differ; upserts
#                             through the marts' keys as a changelog sink would -> equal again
#   sink MART                 what the join job's sink applied (mart.sink_progress); exit 1 on an anomaly
#   clear                     empties the mart tables
#   columndiff MART           which columns differ, where the key matches (sql/column_diff.sql)
# MART: inner | left | inner-late | left-late (the late ones: the job submitted mid-run) |
#       inner-1.20 | left-1.20 | star-1.20 (the jobs on run.sh's second cluster, of Flink 1.20) |
#       fid-a | fid-b (e2e/fidelity.sh: every common type, two connector configurations) |
#       star (orders LEFT JOIN customers JOIN products: three tables, chained joins)
#
# inner = mart.users_domains      vs users JOIN domains ON users.id = domains.user_id
# left  = mart.users_domains_left vs users LEFT JOIN domains ON users.id = domains.user_id
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SQL=$E2E_DIR/sql

# mart_of MART: sets MART_TABLE, MART_EXPECTED (the view it must equal), MART_KEY (the columns
# that identify a row) and MART_SHOW (what compare prints of a differing row).
mart_of() {
    MART_KEY="id, domain_id"
    MART_SHOW="*"
    case $1 in
        inner) MART_TABLE=mart.users_domains MART_EXPECTED=mart.expected_users_domains ;;
        left) MART_TABLE=mart.users_domains_left MART_EXPECTED=mart.expected_users_domains_left ;;
        inner-late) MART_TABLE=mart.users_domains_late MART_EXPECTED=mart.expected_users_domains ;;
        left-late) MART_TABLE=mart.users_domains_left_late MART_EXPECTED=mart.expected_users_domains_left ;;
        inner-1.20) MART_TABLE=mart.users_domains_1_20 MART_EXPECTED=mart.expected_users_domains ;;
        left-1.20) MART_TABLE=mart.users_domains_left_1_20 MART_EXPECTED=mart.expected_users_domains_left ;;
        fid-a | fid-b)
            # the fidelity marts (e2e/fidelity.sh): rows too wide to print; columndiff names the columns
            MART_TABLE=mart.${1/-/_} MART_EXPECTED=mart.expected_${1/-/_}
            MART_KEY="item_id, account_id" MART_SHOW="item_id, account_id, acc_id"
            ;;
        star | star-1.20)
            # orders LEFT JOIN customers JOIN products (the star job, CdcStar); the TOASTed notes
            # shown by their length and digest
            MART_TABLE=mart.star_orders
            [[ $1 == star ]] || MART_TABLE=mart.star_orders_1_20
            MART_EXPECTED=mart.expected_star_orders MART_KEY="order_id, product_id"
            MART_SHOW="order_id, customer_id, product_id, qty, status, customer_name, customer_tier,
                length(customer_notes) AS notes_len, left(md5(customer_notes), 8) AS notes_md5, product_title, price_cents"
            ;;
        *) die "mart must be inner, left, inner-late, left-late, inner-1.20, left-1.20, fid-a, fid-b, star or star-1.20, not '$1'" ;;
    esac
}

# table MART: the mart's table name
table() { mart_of "$1" && echo "$MART_TABLE"; }

# sink MART: what the join job's sink did to the mart (mart.sink_progress, summed over its
# subtasks): "batches=N changes=N inserted=N upserted_existing=N deleted=N delete_missed=N
# subtasks=N rows=N"; exit 1 if an anomaly counter is not 0 or nothing was applied.
sink() {
    local t out
    t=$(table "$1")
    out=$(e2e_psql -tA -F' ' -c "select 'batches=' || coalesce(sum(batches), 0), 'changes=' || coalesce(sum(changes), 0),
            'inserted=' || coalesce(sum(inserted), 0), 'upserted_existing=' || coalesce(sum(upserted_existing), 0),
            'deleted=' || coalesce(sum(deleted), 0), 'delete_missed=' || coalesce(sum(delete_missed), 0),
            'subtasks=' || count(*), 'rows=' || (select count(*) from $t)
        from mart.sink_progress where mart_table = '$t'")
    echo "$out"
    [[ $out == *" upserted_existing=0 "* && $out == *" delete_missed=0 "* && $out != "batches=0 "* ]]
}

compare() {
    mart_of "$1"
    e2e_psql -q -v mart="$MART_TABLE" -v expected="$MART_EXPECTED" -v limit="${2:-10}" -v key="$MART_KEY" \
        -v show="$MART_SHOW" -f "$SQL/compare.sql" 2>&1 |
        grep -v 'mart differs from the join' | sed '/^CONTEXT:/d'
    return "${PIPESTATUS[0]}"
}

wait_converged() {
    local join=$1 secs=${2:-120} t0 out
    t0=$(date +%s.%N)
    while true; do
        if out=$(compare "$join" 5); then
            log "mart: converged ($join) in $(python3 -c "import time; print(round(time.time() - $t0, 1))") s: $(echo "$out" | grep '^COMPARE')"
            return 0
        fi
        if (($(date +%s) - ${t0%.*} >= secs)); then
            echo "$out"
            log "mart: NOT converged ($join) after ${secs}s"
            return 1
        fi
        sleep 1
    done
}

expect_differ() {
    local join=$1 what=$2 out
    if out=$(compare "$join" 3); then
        echo "$out"
        die "selftest: comparison missed: $what"
    fi
    log "selftest: $what -> detected: $(echo "$out" | grep '^COMPARE')"
}

expect_same() {
    local join=$1 what=$2 out
    out=$(compare "$join") || { echo "$out"; die "selftest: comparison failed after: $what"; }
    log "selftest: $what -> $(echo "$out" | grep '^COMPARE')"
}

# columndiff MART: per column, how many rows of the mart differ from the join where the key
# matches, with one example (sql/column_diff.sql); for a failed comparison of a wide mart.
columndiff() {
    mart_of "$1"
    e2e_psql -q -v mart="$MART_TABLE" -v expected="$MART_EXPECTED" -v key="$MART_KEY" -f "$SQL/column_diff.sql"
}

fill() {
    mart_of "$1"
    e2e_psql -q -v mart="$MART_TABLE" -v expected="$MART_EXPECTED" -f "$SQL/fill_mart.sql"
}

selftest() {
    local j
    for j in inner left; do
        fill "$j"
        expect_same "$j" "$j mart filled with the join"
    done
    [[ $(e2e_psql -tAc 'select count(*) from mart.users_domains') -gt 0 ]] || die "selftest needs source rows joined"

    # perturbations the comparison must catch
    e2e_psql -q -c "update mart.users_domains set firstname = coalesce(firstname, '') || 'X' where domain_id = (select min(domain_id) from mart.users_domains)"
    expect_differ inner "one changed firstname"
    fill inner
    e2e_psql -q -c "delete from mart.users_domains where domain_id = (select max(domain_id) from mart.users_domains)"
    expect_differ inner "one lost row"
    fill inner
    e2e_psql -q -c "delete from mart.users_domains_left where domain_id is null and id = (select min(id) from mart.users_domains_left where domain_id is null)"
    expect_differ left "one lost null-padded row"
    fill left
    e2e_psql -q -c "alter table mart.users_domains_left drop constraint users_domains_left_key"
    e2e_psql -q -c "insert into mart.users_domains_left select * from mart.users_domains_left limit 1"
    expect_differ left "one duplicated row"
    fill left
    e2e_psql -q -c "alter table mart.users_domains_left add constraint users_domains_left_key unique nulls not distinct (id, domain_id)"

    # the marts' keys take a changelog sink's upserts and deletes (+I/+U upsert, -U/-D delete),
    # including the left join's null-padded rows (domain_id NULL)
    e2e_psql -q <<'EOF'
BEGIN;
-- -D then +I of the same row through the key, then an upsert of an existing row: net no change
CREATE TEMP TABLE _r ON COMMIT DROP AS
    SELECT * FROM mart.users_domains WHERE domain_id = (SELECT min(domain_id) FROM mart.users_domains);
DELETE FROM mart.users_domains WHERE domain_id IN (SELECT domain_id FROM _r);
INSERT INTO mart.users_domains SELECT * FROM _r
    ON CONFLICT (id, domain_id) DO UPDATE SET firstname = EXCLUDED.firstname,
        lastname = EXCLUDED.lastname, user_id = EXCLUDED.user_id, domain_name = EXCLUDED.domain_name;
INSERT INTO mart.users_domains SELECT * FROM _r
    ON CONFLICT (id, domain_id) DO UPDATE SET firstname = EXCLUDED.firstname,
        lastname = EXCLUDED.lastname, user_id = EXCLUDED.user_id, domain_name = EXCLUDED.domain_name;
-- an upsert of an existing null-padded row must hit the (id, NULL) key, not add a row
INSERT INTO mart.users_domains_left
    SELECT * FROM mart.users_domains_left WHERE domain_id IS NULL LIMIT 1
    ON CONFLICT (id, domain_id) DO UPDATE SET firstname = EXCLUDED.firstname, lastname = EXCLUDED.lastname;
COMMIT;
EOF
    expect_same inner "delete + upsert through (id, domain_id)"
    expect_same left "upsert of a null-padded row through (id, domain_id) NULLS NOT DISTINCT"
    e2e_psql -q -c "delete from mart.users_domains; delete from mart.users_domains_left"
    log "selftest: PASS (marts emptied again)"
}

cmd=${1:-}
shift || true
case $cmd in
    compare) compare "$@" ;;
    wait) wait_converged "$@" ;;
    selftest) selftest ;;
    fill) fill "$1" ;;
    sink) sink "$1" ;;
    table) table "$1" ;;
    columndiff) columndiff "$1" ;;
    clear) e2e_psql -q -c "delete from mart.users_domains; delete from mart.users_domains_left; delete from mart.users_domains_late; delete from mart.users_domains_left_late; delete from mart.users_domains_1_20; delete from mart.users_domains_left_1_20; delete from mart.star_orders; delete from mart.star_orders_1_20; delete from mart.sink_progress" ;;
    *) die "usage: $0 compare MART | wait MART [SECS] | sink MART | table MART | selftest | fill MART | clear   (MART: inner|left|inner-late|left-late|inner-1.20|left-1.20|fid-a|fid-b|star|star-1.20)" ;;
esac
