#!/usr/bin/env bash
# The fidelity scenario, run by e2e/run.sh in its running pipeline (PostgreSQL, Kafka, Kafka Connect,
# Flink): real Debezium values of every common Postgres type, under two connector configurations,
# joined by the product and compared value for value with the same join computed in Postgres.
#
#   fid_items (every common type, REPLICA IDENTITY FULL)
#     LEFT JOIN fid_accounts (REPLICA IDENTITY DEFAULT, upsert mode, two TOASTed columns > 8 KB)
#     ON fid_accounts.id = fid_items.account_id
#
# Two Debezium connectors read both tables (lib/connect.sh: e2e-fid-a with decimal.handling.mode=
# precise, time.precision.mode=adaptive, binary.handling.mode=bytes, topics fa.*; e2e-fid-b with
# string, connect, hex, topics fb.*); one join job per connector (jobs/.../FidelityMartJob, each
# declaring the DebeziumFormat of its connector) fills its mart (mart.fid_a, mart.fid_b). While the
# workload runs: a re-delivery (Kafka Connect stopped half-way, started again on a copy of its
# offsets file taken a quarter in: both connectors replay from the earlier LSN) and an incremental
# snapshot (a row in the signal table fid_signal, inserted by the workload itself at 75 %, while
# the connectors catch up and the workload goes on). Then a message that is not Debezium's, written
# to each items topic, must come back as a bad record naming its topic, partition and offset; and
# each mart must equal
# its expected view (sql/fidelity.sql) row by row and value by value, with no stale and no
# duplicate row, and its sink must have seen a consistent changelog.
#
#   e2e/fidelity.sh prepare          generate the workload, create the tables, load the initial rows
#                                    (run.sh: before Kafka Connect starts)
#   e2e/fidelity.sh run JOIN_JAR     the scenario (run.sh: after the users/domains checks); its
#                                    checks go to $E2E_RUN/fidelity/results ("name|PASS/FAIL|detail")
#                                    and its mart lines to $E2E_RUN/fidelity/marts
#
# Environment (all optional): E2E_FID_STATEMENTS=900 E2E_FID_RATE=30 E2E_FID_ACCOUNTS=30
# E2E_FID_ITEMS=300 E2E_FID_SEED=7 E2E_FID_CONVERGE_SECS=120
set -euo pipefail
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
LIB=$E2E_DIR/lib

STATEMENTS=${E2E_FID_STATEMENTS:-900}
RATE=${E2E_FID_RATE:-30}
ACCOUNTS=${E2E_FID_ACCOUNTS:-30}
ITEMS=${E2E_FID_ITEMS:-300}
SEED=${E2E_FID_SEED:-7}
CONVERGE_SECS=${E2E_FID_CONVERGE_SECS:-120}
FDIR=$E2E_RUN/fidelity
WL=$FDIR/workload
OFFSETS=$E2E_RUN/connect/offsets.dat
BOOTSTRAP=$E2E_HOST:$E2E_KAFKA_PORT
JOB_CLASS=dev.cdcjoin.flink.e2e.FidelityMartJob
CONFIGS=(a b)
declare -A PREFIX=([a]=$E2E_FID_PREFIX_A [b]=$E2E_FID_PREFIX_B)
declare -A CONNECTOR=([a]=$E2E_FID_CONNECTOR_A [b]=$E2E_FID_CONNECTOR_B)
declare -A JOB=()

result() {
    echo "$1|$2|$3" >>"$FDIR/results"
    log "check: $1: $2 ($3)"
}

topics_of() { echo "${PREFIX[$1]}.public.fid_items ${PREFIX[$1]}.public.fid_accounts"; }

prepare() {
    rm -rf "$FDIR"
    mkdir -p "$WL"
    python3 "$LIB/fidelity_workload.py" --out "$WL" --seed "$SEED" --accounts "$ACCOUNTS" --items "$ITEMS" \
        --statements "$STATEMENTS" >"$WL/generate.json"
    e2e_psql -q -f "$E2E_DIR/sql/fidelity.sql"
    e2e_psql -q -f "$WL/snapshot.sql"
    log "fidelity: tables created, $ACCOUNTS accounts and $ITEMS items loaded, $STATEMENTS statements generated (seed $SEED)"
}

# the initial snapshot of both tables in a configuration's topics (op r, as many as rows loaded)
initial_snapshot_in_kafka() {
    local c=$1 items accounts
    read -r _ items <<<"$("$LIB/kafka.sh" offsets "${PREFIX[$c]}.public.fid_items")"
    read -r _ accounts <<<"$("$LIB/kafka.sh" offsets "${PREFIX[$c]}.public.fid_accounts")"
    ((items >= ITEMS && accounts >= ACCOUNTS))
}

# job_runs JOB: until every task of the job runs (0), or the job has failed once (1); at most 90 s
job_runs() {
    local job=$1 t0=$SECONDS
    while ((SECONDS - t0 < 90)); do
        [[ $("$LIB/flink.sh" failures "$job") == 0 ]] || return 1
        "$LIB/flink.sh" wait-running "$job" 1 >/dev/null 2>&1 && return 0
    done
    return 1
}

# submit C: the join job of configuration C, until it runs; a job that does not (it fails and
# restarts) is a failed check naming its failure, and is cancelled: the scenario goes on for the
# connectors' checks and the other configuration
submit() {
    local c=$1 t
    t=$(date +%s)
    JOB[$c]=$("$LIB/flink.sh" submit "$JOIN_JAR" "$JOB_CLASS" 2 --bootstrap "$BOOTSTRAP" --config "$c" \
        --topic-prefix "${PREFIX[$c]}" --group "e2e-fid-$c" \
        --jdbc-url "jdbc:postgresql://$E2E_HOST:$E2E_PG_PORT/$E2E_PG_DB" --jdbc-user "$E2E_PG_USER" \
        --mart-table "mart.fid_$c" --checkpoint-ms 2000) ||
        { result "fidelity job $c runs" FAIL "$JOIN_JAR $JOB_CLASS: see the REST answer above"; JOB[$c]=""; return 0; }
    if job_runs "${JOB[$c]}" && sleep 5 && [[ $("$LIB/flink.sh" failures "${JOB[$c]}") == 0 ]]; then
        log "fidelity: job $c ${JOB[$c]} RUNNING $(($(date +%s) - t)) s after upload (connector ${CONNECTOR[$c]}, topics ${PREFIX[$c]}.*)"
    else
        result "fidelity job $c runs" FAIL "${JOB[$c]} does not run: $("$LIB/flink.sh" last-failure "${JOB[$c]}")"
        "$LIB/flink.sh" cancel "${JOB[$c]}" || true
        JOB[$c]=""
    fi
}

# feed_phase FROM TO: stream.sql's lines FROM+1..TO at $RATE/s through one psql session; a failed
# statement is a failed check (1)
feed_phase() {
    sed -n "$(($1 + 1)),$2p" "$WL/stream.sql" >"$WL/phase.sql"
    if python3 "$LIB/workload.py" feed --file "$WL/phase.sql" --rate "$RATE" -- \
        psql -X -q -v ON_ERROR_STOP=1 -h "$E2E_HOST" -p "$E2E_PG_PORT" -U "$E2E_PG_USER" -d "$E2E_PG_DB" \
        >>"$WL/feed.json" 2>"$WL/feed.err"; then
        log "fidelity: statements $(($1 + 1))-$2 done: $(tail -1 "$WL/feed.json")"
    else
        cat "$WL/feed.err"
        result "fidelity workload" FAIL "statements $(($1 + 1))-$2: psql failed: $(head -3 "$WL/feed.err" | paste -sd' ' -)"
        return 1
    fi
}

# incremental_done C: the connector logged the end of its incremental snapshot of both tables
# (connect.log names the connector by Debezium's MDC dbz.connectorLogicalName: its topic prefix)
incremental_done() {
    local n
    n=$(grep -E "^\[.*\] INFO ${PREFIX[$1]} .*incremental snapshotting of table '[^']*fid_(items|accounts)' finished" \
        "$E2E_RUN/connect/logs/connect.log" | grep -oE "fid_(items|accounts)" | sort -u | wc -l)
    ((n == 2))
}

# dump C: every record in the configuration's topics (one JSON value per line)
dump() {
    local c=$1 total
    # shellcheck disable=SC2046 # the topics are words
    total=$("$LIB/kafka.sh" offsets $(topics_of "$c") | awk '{n += $2} END {print n}')
    "$LIB/kafka.sh" java org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$BOOTSTRAP" \
        --include "^${PREFIX[$c]}\\.public\\.fid_(items|accounts)\$" --from-beginning --max-messages "$total" \
        --timeout-ms 20000 --group "e2e-fid-dump-$c-$$" >"$FDIR/topics-$c.jsonl" 2>"$FDIR/dump-$c.err" || true
    echo "$total"
}

converge() {
    local todo=("$@") left m
    local -A done_in=()
    while ((${#todo[@]} > 0)); do
        left=()
        for m in "${todo[@]}"; do
            if "$LIB/mart.sh" compare "fid-$m" >"$FDIR/mart-$m.txt" 2>&1; then
                done_in[$m]=$(python3 -c "import time; print(round(time.time() - $FEED_END, 1))")
                log "fidelity: mart $m converged ${done_in[$m]} s after the workload: $(grep '^COMPARE' "$FDIR/mart-$m.txt")"
            else
                left+=("$m")
            fi
        done
        todo=("${left[@]}")
        ((${#todo[@]} == 0)) && break
        python3 -c "import sys, time; sys.exit(0 if time.time() - $FEED_END > $CONVERGE_SECS else 1)" && break
        sleep 1
    done
    for m in "${!done_in[@]}"; do echo "$m ${done_in[$m]}"; done >"$FDIR/converged"
}

run() {
    JOIN_JAR=$1
    mkdir -p "$FDIR"
    : >"$FDIR/results"
    : >"$FDIR/marts"
    local c t
    for c in "${CONFIGS[@]}"; do
        wait_until 120 "the initial snapshot of fid_* in ${PREFIX[$c]}.* topics" initial_snapshot_in_kafka "$c"
    done
    for c in "${CONFIGS[@]}"; do submit "$c"; done

    # the workload in four phases (fractions of stream.sql, in line with fidelity_workload.py's
    # defaults): 0-25 %; the copy of Connect's offsets file (the worker writes it every second);
    # 25-50 %; Connect stopped; 50-70 % while it is down (the changes wait in the slots); Connect
    # started on the copy: both connectors re-deliver from the earlier LSN; 70-100 % (the
    # incremental snapshot signal at 75 %), streamed live while they catch up and snapshot
    local n
    n=$(wc -l <"$WL/stream.sql")
    log "fidelity: workload: $n statements at $RATE/s in four phases (the incremental snapshot signal among them)"
    : >"$WL/feed.json"
    feed_phase 0 $((n / 4)) || return 0
    sleep 2
    cp "$OFFSETS" "$FDIR/offsets.early"
    feed_phase $((n / 4)) $((n / 2)) || return 0
    t=$(date +%s)
    "$LIB/connect.sh" stop
    feed_phase $((n / 2)) $((n * 7 / 10)) || return 0
    cp "$OFFSETS" "$FDIR/offsets.at-stop"
    cp "$FDIR/offsets.early" "$OFFSETS"
    "$LIB/connect.sh" start
    log "fidelity: Kafka Connect restarted on the offsets file copied a quarter in, down $(($(date +%s) - t)) s: it re-delivers from there"
    feed_phase $((n * 7 / 10)) "$n" || return 0
    FEED_END=$(date +%s.%N)

    t=$(date +%s)
    for c in "${CONFIGS[@]}"; do
        if poll_until 120 incremental_done "$c"; then
            result "incremental snapshot ($c)" PASS "connector ${CONNECTOR[$c]} finished both tables $(($(date +%s) - t)) s after the workload"
        else
            result "incremental snapshot ($c)" FAIL "connector ${CONNECTOR[$c]}: no 'incremental snapshotting of table ... finished' for both tables in connect.log"
        fi
    done
    local running=()
    for c in "${CONFIGS[@]}"; do [[ -n ${JOB[$c]} ]] && running+=("$c"); done
    : >"$FDIR/converged"
    ((${#running[@]} > 0)) && converge "${running[@]}"

    for c in "${CONFIGS[@]}"; do check_topics "$c"; done
    for c in "${running[@]}"; do check_bad_record "$c"; done
    for c in "${running[@]}"; do check_mart "$c"; done
    for c in "${running[@]}"; do "$LIB/flink.sh" cancel "${JOB[$c]}"; done
    log "fidelity: jobs cancelled"
}

# check_topics C: what the connector wrote (re-delivered and incremental-snapshot records)
check_topics() {
    local c=$1 total out
    total=$(dump "$c")
    if out=$(python3 "$LIB/fidelity_topics.py" "$FDIR/topics-$c.jsonl" "$total"); then
        result "re-delivery and snapshot in topics ($c)" PASS "$out"
    else
        result "re-delivery and snapshot in topics ($c)" FAIL "$out"
    fi
}

# bad_record_row C MESSAGE: "topic|partition|offset|reason" of the bad record row of configuration
# C's job whose record is MESSAGE (exit 1 while there is none)
bad_record_row() {
    local r
    r=$(e2e_psql -tA -c "select kafka_topic, kafka_partition, kafka_offset, reason from mart.fid_bad_records where mart_table = 'mart.fid_$1' and record = '$2' limit 1")
    [[ -n $r ]] && echo "$r"
}

# check_bad_record C: a message Debezium never wrote, put in the configuration's items topic after
# the topics' checks (check_topics read them first): the job reports it as a bad record whose
# topic, partition and offset (BadRecord's fields; the job reads KafkaMessages) are those its
# reason ends with, the record read back from that partition and offset is the message, and the
# mart (checked next) is still right. The row is then deleted, so that "no bad records" still holds
# for every other record.
check_bad_record() {
    local c=$1
    local topic=${PREFIX[$c]}.public.fid_items msg t p o reason got
    msg="{\"op\":\"x\",\"after\":{\"e2e\":\"not from Debezium, config $c\"}}"
    if ! echo "$msg" | "$LIB/kafka.sh" java org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$BOOTSTRAP" \
        --topic "$topic" >"$FDIR/produce-$c.log" 2>&1; then
        result "bad record named by its offset (fid-$c)" FAIL "could not write it: $(tail -3 "$FDIR/produce-$c.log" | paste -sd' ' -)"
        return 0
    fi
    if ! poll_until 60 bad_record_row "$c" "$msg" >/dev/null; then
        result "bad record named by its offset (fid-$c)" FAIL "no bad record row for it in 60 s"
        return 0
    fi
    IFS='|' read -r t p o reason <<<"$(bad_record_row "$c" "$msg")"
    if [[ $t == "$topic" && $reason == *"(Kafka topic $t, partition $p, offset $o)" ]]; then
        got=$("$LIB/kafka.sh" java org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$BOOTSTRAP" \
            --topic "$topic" --partition "$p" --offset "$o" --max-messages 1 \
            --timeout-ms 20000 2>"$FDIR/readback-$c.err" || true)
        result "bad record named by its offset (fid-$c)" "$([[ $got == "$msg" ]] && echo PASS || echo FAIL)" "BadRecord topic $t, partition $p, offset $o; reason: $reason; the record there: $got"
        check_bad_record_metric "$c"
    else
        result "bad record named by its offset (fid-$c)" FAIL "BadRecord topic '$t', partition '$p', offset '$o' (want topic $topic, named at the end of the reason): $reason"
    fi
    e2e_psql -q -c "delete from mart.fid_bad_records where mart_table = 'mart.fid_$c' and record = '$msg'"
}

# check_bad_record_metric C: the one bad record of the configuration's job (the job runs without a
# restart, and "no bad records" checks that it had no other) is counted in the operators' metric,
# as a dashboard reads it; the REST API refreshes its metrics every 10 s.
check_bad_record_metric() {
    local c=$1
    if poll_until 30 metric_is 1 "$LIB/flink.sh" metric "${JOB[$c]}" cdcjoinBadRecords; then
        result "bad record counted in cdcjoinBadRecords (fid-$c)" PASS "1, summed over the job's subtasks (REST API)"
    else
        result "bad record counted in cdcjoinBadRecords (fid-$c)" FAIL "$("$LIB/flink.sh" metric "${JOB[$c]}" cdcjoinBadRecords) after 30 s, want 1"
    fi
}

# check_mart C: the mart against its view, its sink's counters, its bad records, its job
check_mart() {
    local c=$1 out out2 conv bad
    conv=$(awk -v m="$c" '$1 == m {print $2}' "$FDIR/converged")
    if [[ -n $conv ]] && "$LIB/mart.sh" compare "fid-$c" >"$FDIR/mart-$c.txt" 2>&1; then
        result "mart = join, value by value (fid-$c)" PASS "converged $conv s after the workload's last statement, still equal: $(grep -o 'COMPARE.*' "$FDIR/mart-$c.txt")"
    else
        "$LIB/mart.sh" columndiff "fid-$c" >>"$FDIR/mart-$c.txt" 2>&1 || true
        cat "$FDIR/mart-$c.txt"
        result "mart = join, value by value (fid-$c)" FAIL "$(grep -o 'COMPARE.*' "$FDIR/mart-$c.txt"); columns differing: $(awk -F'|' 'NF >= 5 && $2 ~ /^ *[0-9]+ *$/ {gsub(/ /, "", $1); gsub(/ /, "", $2); printf "%s(%s) ", $1, $2}' "$FDIR/mart-$c.txt")see $FDIR/mart-$c.txt"
    fi
    if out=$("$LIB/mart.sh" sink "fid-$c"); then
        result "mart sink consistent changelog (fid-$c)" PASS "$out"
    else
        result "mart sink consistent changelog (fid-$c)" FAIL "$out"
    fi
    bad=$(e2e_psql -tA -c "select count(*) || coalesce(': first: ' || left(min(reason), 300), '') from mart.fid_bad_records where mart_table = 'mart.fid_$c'")
    result "no bad records (fid-$c)" "$([[ $bad == 0 ]] && echo PASS || echo FAIL)" "$bad"
    check_join_state "fid-$c" "public.fid_items public.fid_accounts" "$LIB/flink.sh" metric "${JOB[$c]}"
    out2=$("$LIB/flink.sh" failures "${JOB[$c]}")
    result "fidelity job $c ran throughout" "$([[ $("$LIB/flink.sh" status "${JOB[$c]}") == RUNNING && $out2 == 0 ]] && echo PASS || echo FAIL)" "${JOB[$c]}: $("$LIB/flink.sh" status "${JOB[$c]}"), $out2 failures (last: $("$LIB/flink.sh" last-failure "${JOB[$c]}")), $("$LIB/flink.sh" checkpoints "${JOB[$c]}") checkpoints"
    echo "mart.fid_$c (connector ${CONNECTOR[$c]}): $(grep -o 'expected=[0-9]* mart=[0-9]*' "$FDIR/mart-$c.txt" | tail -1) rows, converged ${conv:-never} s after the workload; sink: $out" >>"$FDIR/marts"
}

case ${1:-} in
    prepare) prepare ;;
    run) [[ -n ${2:-} ]] || die "usage: $0 run JOIN_JAR"; run "$2" ;;
    *) die "usage: $0 prepare | run JOIN_JAR" ;;
esac
