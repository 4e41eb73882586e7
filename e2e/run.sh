#!/usr/bin/env bash
# The end-to-end scenario, one script: PostgreSQL -> Debezium (Kafka Connect) -> Kafka -> a
# standalone Flink 2.3.0 cluster (1 JobManager + 2 TaskManagers, separate JVMs) -> PostgreSQL mart.
# Everything is installed from package registries (e2e/lib/install.sh), started on 127.0.0.1, and
# stopped on exit, whatever happens (trap): no process of the run is left behind.
#
#   e2e/run.sh                 the scenario with the product's join job; exit 0 iff every check passed
#
# Environment (all optional):
#   E2E_STATEMENTS=3000 E2E_RATE=50    workload size and steady rate (statements per second)
#   E2E_USERS=300 E2E_DOMAINS=600      rows in the initial snapshot
#   E2E_SEED=42                        workload seed (deterministic)
#   E2E_KILL_TM=1                      kill -9 TaskManager tm-2 two thirds into the workload, restart it
#   E2E_JOIN=1                         run the product's join job (0: not at all; the mart checks
#                                      then test themselves: lib/mart.sh selftest)
#   E2E_JOIN_JAR=path.jar              the join job's JAR (default: e2e/jobs/users-domains-join, built
#                                      with the product by install.sh join)
#   E2E_JOIN_CLASS=...                 its entry class (default dev.cdcjoin.flink.e2e.UsersDomainsMartJob)
#   E2E_JOIN_TYPES="inner left"        join jobs started before the workload, one per join type
#   E2E_LATE_JOIN=left                 the join job submitted a third into the workload, beside the
#                                      others (its own class loader); "" = none
#   E2E_CONVERGE_SECS=120              how long the mart may take to converge after the workload
#   E2E_SKIP_INSTALL=1                 skip install.sh (already installed)
#   E2E_LIBJAR=1                       first, the product JAR in Flink's lib/ only: a short-lived
#                                      cluster of its own runs a job JAR without the product, once
#                                      per engine (e2e/lib/libjar.sh); 0 = not
#   E2E_STAR=1                         the star mart beside the users/domains marts: orders LEFT JOIN
#                                      customers JOIN products (jobs/.../StarMartJob, CdcStar: two
#                                      chained native joins), its own workload (lib/star_workload.py)
#                                      fed at the same time, through the kill; 0 = not
#   E2E_STAR_STATEMENTS=1200 E2E_STAR_SEED=15   its workload (fed over the users/domains one's duration)
#   E2E_SECOND_LINE=1.20               a second Flink cluster of another line beside the first (its own
#                                      ports, lib/common.sh, and run directory, $E2E_RUN/second),
#                                      running the product's join JAR built for that line: one job per
#                                      join type into its own mart (inner-1.20, left-1.20) and the star
#                                      job (star-1.20), through the same workloads and the same kill -9;
#                                      "" = none. Default: 1.20 when the first cluster runs 2.3
#                                      (E2E_FLINK_LINE), else none
#   E2E_SECOND_JAVA=path/bin/java      the second cluster's java; default for 1.20 a Java 11 (the
#                                      oldest Java of the 1.x clusters; java/jdk11.sh installs it),
#                                      else E2E_FLINK_JAVA
#   E2E_SECOND_STATE_BACKEND=rocksdb   the second cluster's state backend (rocksdb: incremental
#                                      checkpoints; the first cluster's is E2E_FLINK_STATE_BACKEND,
#                                      default hashmap)
#   E2E_FIDELITY=1                     then the fidelity scenario in the same pipeline (e2e/fidelity.sh:
#                                      every common Postgres type, two connector configurations,
#                                      REPLICA IDENTITY DEFAULT in upsert mode, TOAST, a re-delivery,
#                                      an incremental snapshot; its knobs E2E_FID_* are there); 0 = not
# Ports, versions, paths: e2e/lib/common.sh.
set -euo pipefail
E2E_T0=$(date +%s)
export E2E_T0
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
LIB=$E2E_DIR/lib

STATEMENTS=${E2E_STATEMENTS:-3000}
RATE=${E2E_RATE:-50}
USERS=${E2E_USERS:-300}
DOMAINS=${E2E_DOMAINS:-600}
SEED=${E2E_SEED:-42}
KILL_TM=${E2E_KILL_TM:-1}
JOIN=${E2E_JOIN:-1}
JOIN_TYPES=${E2E_JOIN_TYPES:-inner left}
LATE_JOIN=${E2E_LATE_JOIN-left}
JOIN_CLASS=${E2E_JOIN_CLASS:-dev.cdcjoin.flink.e2e.UsersDomainsMartJob}
JOIN_JAR=""
if [[ $JOIN == 1 ]]; then JOIN_JAR=${E2E_JOIN_JAR:-$E2E_JOBS/e2e-users-domains-join.jar}; else LATE_JOIN=""; fi
# the fidelity scenario and the star mart need the product's job JAR (FidelityMartJob, StarMartJob);
# connect.sh reads E2E_FIDELITY
STAR=${E2E_STAR:-1}
[[ $JOIN == 1 && -z ${E2E_JOIN_JAR:-} ]] || { E2E_FIDELITY=0; STAR=0; }
export E2E_FIDELITY
# the second cluster (needs the product's job JAR for its line, built by install.sh join)
SECOND_LINE=${E2E_SECOND_LINE-$([[ $E2E_FLINK_LINE == 2.3 ]] && echo 1.20 || true)}
[[ $JOIN == 1 && -z ${E2E_JOIN_JAR:-} ]] || SECOND_LINE=""
[[ $SECOND_LINE != "$E2E_FLINK_LINE" ]] || die "E2E_SECOND_LINE=$SECOND_LINE: the first cluster runs that line"
SECOND_RUN=$E2E_RUN/second
# line_setting LINE VAR: a setting of lib/common.sh for another Flink line (E2E_JOBS, E2E_FLINK_VERSION)
line_setting() { E2E_FLINK_LINE=$1 bash -c 'source "$0/common.sh" && echo "${!1}"' "$LIB" "$2"; }
SECOND_JAR=""
[[ -n $SECOND_LINE ]] && SECOND_JAR=$(line_setting "$SECOND_LINE" E2E_JOBS)/e2e-users-domains-join.jar
SECOND_JAVA=${E2E_SECOND_JAVA:-}   # its java (set after the install step)
SECOND_MARTS=()   # its users/domains marts: one per join type
if [[ -n $SECOND_LINE ]]; then for j in $JOIN_TYPES; do SECOND_MARTS+=("$j-$SECOND_LINE"); done; fi
STAR_MARTS=()   # the star marts: the first cluster's, and the second's
if [[ $STAR == 1 ]]; then
    STAR_MARTS=(star)
    if [[ -n $SECOND_LINE ]]; then STAR_MARTS+=("star-$SECOND_LINE"); fi
fi
STAR_STATEMENTS=${E2E_STAR_STATEMENTS:-1200}
STAR_SEED=${E2E_STAR_SEED:-15}
STAR_CLASS=dev.cdcjoin.flink.e2e.StarMartJob
CONVERGE_SECS=${E2E_CONVERGE_SECS:-120}
BOOTSTRAP=$E2E_HOST:$E2E_KAFKA_PORT
TOPICS="$E2E_TOPIC_USERS,$E2E_TOPIC_DOMAINS"
PROOF_JAR=$E2E_JOBS/e2e-topic-count.jar
PROOF_CLASS=dev.cdcjoin.e2e.TopicCountJob
WL=$E2E_RUN/workload
SWL=$E2E_RUN/star   # the star mart's workload

RESULTS=()   # "name|PASS/FAIL/SKIP|detail"
MART_LINES=()  # one line per mart for the summary
declare -A JOIN_JOB=()   # mart name (inner, left, left-late, ...) -> Flink job id
result() { RESULTS+=("$1|$2|$3"); log "check: $1: $2 ($3)"; }
failed() { local r; for r in "${RESULTS[@]}"; do [[ $r == *"|FAIL|"* ]] && return 0; done; return 1; }

# The clusters. flink1: the first (lib/flink.sh as is); flink2: the second, of SECOND_LINE, with its
# ports and its run directory nested in this run's (so that leftover_pids sees its processes).
flink1() { "$LIB/flink.sh" "$@"; }
flink2() { second_env "$LIB/flink.sh" "$@"; }
# second_env COMMAND..: runs COMMAND with the second cluster's settings
second_env() {
    E2E_FLINK_LINE=$SECOND_LINE E2E_RUN=$SECOND_RUN E2E_FLINK_REST_PORT=$E2E_FLINK2_REST_PORT \
        E2E_FLINK_RPC_PORT=$E2E_FLINK2_RPC_PORT E2E_FLINK_BLOB_PORT=$E2E_FLINK2_BLOB_PORT \
        E2E_FLINK_TM_RPC_PORTS=$E2E_FLINK2_TM_RPC_PORTS E2E_FLINK_TM_DATA_PORTS=$E2E_FLINK2_TM_DATA_PORTS \
        E2E_FLINK_JAVA=$SECOND_JAVA E2E_FLINK_STATE_BACKEND=${E2E_SECOND_STATE_BACKEND:-rocksdb} "$@"
}
declare -A CLUSTER=()   # job id -> flink1 | flink2, the cluster it runs on (unlisted: flink1)
# on_job COMMAND JOB [ARGS..]: lib/flink.sh COMMAND JOB on the cluster the job runs on
on_job() { "${CLUSTER[$2]:-flink1}" "$@"; }
# cancel_jobs JOB..: cancels the jobs all at once, each on its cluster; fails if one did not end
cancel_jobs() {
    local job pids=() p failed=0
    for job in "$@"; do
        on_job cancel "$job" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || failed=1; done
    return "$failed"
}
# mart_cluster MART: the cluster of MART's job (the second's marts are named <join type>-<line>)
mart_cluster() { if [[ -n $SECOND_LINE && $1 == *"-$SECOND_LINE" ]]; then echo flink2; else echo flink1; fi; }
# marts_on CLUSTER: the marts whose jobs were submitted to that cluster, sorted
marts_on() {
    local j
    for j in "${!JOIN_JOB[@]}"; do if [[ $(mart_cluster "$j") == "$1" ]]; then echo "$j"; fi; done | sort
}

FEED_PID=""
STAR_FEED_PID=""
cleanup() {
    local rc=$? pids p
    trap - EXIT INT TERM
    set +e
    log "stopping everything"
    for p in $FEED_PID $STAR_FEED_PID; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    "$LIB/flink.sh" stop
    [[ -n $SECOND_LINE ]] && flink2 stop
    "$LIB/connect.sh" stop
    "$LIB/kafka.sh" stop
    "$LIB/postgres.sh" stop
    pids=$(leftover_pids | tr '\n' ' ')
    if [[ -n ${pids// /} ]]; then
        log "left over (killing): $pids"
        # shellcheck disable=SC2086
        kill -9 $pids 2>/dev/null
        rc=1
    else
        log "no process of this run is left"
    fi
    summary "$rc"
    exit "$rc"
}

summary() {
    local rc=$1 r name st detail verdict=PASS
    echo
    echo "================================ e2e summary ================================"
    echo "components: PostgreSQL $("$(pg_bin)/postgres" --version | awk '{print $3}') (Debian) | Kafka $E2E_KAFKA_VERSION KRaft (Maven Central)"
    echo "            Kafka Connect $E2E_KAFKA_VERSION standalone + Debezium PostgresConnector $E2E_DEBEZIUM_VERSION, pgoutput, JSON converter (schemas.enable=$E2E_JSON_SCHEMAS)"
    echo "            Flink $E2E_FLINK_VERSION standalone session cluster: 1 JobManager + 2 TaskManagers x $E2E_FLINK_SLOTS_PER_TM slots (PyPI apache-flink-libraries)"
    [[ -n $SECOND_LINE ]] && echo "            beside it Flink $(line_setting "$SECOND_LINE" E2E_FLINK_VERSION) on Java $(java_version "$SECOND_JAVA"), state backend ${E2E_SECOND_STATE_BACKEND:-rocksdb}, the same layout and slots (REST $E2E_FLINK2_REST_PORT): jobs $(marts_on flink2 | paste -sd' ' -) from $(basename "$(dirname "$SECOND_JAR")")/$(basename "$SECOND_JAR")"
    [[ -n $JOIN_JAR ]] && echo "join job:   $JOIN_CLASS in $(basename "$JOIN_JAR") ($(du -m "$JOIN_JAR" 2>/dev/null | cut -f1) MB: the product cdcjoin-flink + its native library, flink-connector-kafka, pgjdbc); jobs: ${!JOIN_JOB[*]}"
    [[ -f $WL/expected.json ]] && python3 - "$WL/expected.json" "$WL/feed.json" <<'EOF'
import json, sys
e = json.load(open(sys.argv[1]))
try:
    f = json.load(open(sys.argv[2]))
except Exception:
    f = {}
print("workload:   snapshot %d users + %d domains; %d statements at %s/s (achieved %s/s in %ss)" % (
    e["snapshot_rows"]["users"], e["snapshot_rows"]["domains"], e["statements"], f.get("target_rate", "?"),
    f.get("rate", "?"), f.get("seconds", "?")))
print("            mix: " + ", ".join("%s %d" % kv for kv in e["mix"].items()))
print("debezium:   expected records users %d, domains %d (by op: %s)" % (e["records"]["users"], e["records"]["domains"],
    "; ".join(t + " " + " ".join("%s=%d" % kv for kv in sorted(v.items())) for t, v in e["events"].items())))
fr = e["final_rows"]
print("sources:    final users %d, domains %d; join rows inner %d, left %d" % (fr["users"], fr["domains"], fr["inner_join"], fr["left_join"]))
EOF
    [[ -f $SWL/expected.json ]] && python3 - "$SWL/expected.json" "$SWL/feed.json" <<'EOF'
import json, sys
e = json.load(open(sys.argv[1]))
try:
    f = json.load(open(sys.argv[2]))
except Exception:
    f = {}
s, fr = e["snapshot_rows"], e["final_rows"]
print("star:       snapshot %d orders + %d customers + %d products; %d statements at %s/s (achieved %s/s in %ss)" % (
    s["orders"], s["customers"], s["products"], e["statements"], f.get("target_rate", "?"), f.get("rate", "?"),
    f.get("seconds", "?")))
print("            mix: " + ", ".join("%s %d" % kv for kv in e["mix"].items()))
print("            expected records " + ", ".join("%s %d" % kv for kv in sorted(e["records"].items()))
      + "; final orders %d, customers %d, products %d; mart rows %d" % (fr["orders"], fr["customers"], fr["products"], fr["mart"]))
EOF
    [[ -f $E2E_RUN/fidelity/workload/summary.json ]] && python3 - "$E2E_RUN/fidelity/workload/summary.json" "$E2E_RUN/fidelity/workload/feed.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
try:
    phases = [json.loads(ln) for ln in open(sys.argv[2]) if ln.strip()]
except Exception:
    phases = []
secs = sum(p["seconds"] for p in phases)
print("fidelity:   snapshot %d accounts + %d items; %d statements (signal at line %d) in %d phases: %d at %s/s in %.1f s" % (
    s["snapshot"]["accounts"], s["snapshot"]["items"], s["statements"], s["signal_line"], len(phases),
    sum(p["statements"] for p in phases), phases[0]["target_rate"] if phases else "?", secs))
print("            mix: " + ", ".join("%s %d" % kv for kv in sorted(s["mix"].items())))
EOF
    local m
    for m in "${MART_LINES[@]}"; do echo "mart:       $m"; done
    for r in "${RESULTS[@]}"; do
        IFS='|' read -r name st detail <<<"$r"
        printf '  %-4s  %-34s %s\n' "$st" "$name" "$detail"
        [[ $st == FAIL ]] && verdict=FAIL
    done
    [[ $rc -ne 0 ]] && verdict=FAIL
    echo "total time: $(($(date +%s) - E2E_T0)) s; logs and data: $E2E_RUN"
    echo "RESULT: $verdict"
    echo "============================================================================="
}

# ------------------------------------------------------------------------------------------------
# 0. install (idempotent) and a clean run directory
# ------------------------------------------------------------------------------------------------
if [[ ${E2E_SKIP_INSTALL:-0} != 1 ]]; then
    targets=(postgres kafka debezium flink jobs)
    [[ $JOIN == 1 && -z ${E2E_JOIN_JAR:-} ]] && targets+=(join)
    "$LIB/install.sh" "${targets[@]}"
    [[ -z $SECOND_LINE ]] || E2E_FLINK_LINE=$SECOND_LINE "$LIB/install.sh" flink join
fi
[[ -z $JOIN_JAR || -f $JOIN_JAR ]] || die "no join job JAR at $JOIN_JAR (e2e/lib/install.sh join builds it)"
[[ -z $SECOND_JAR || -f $SECOND_JAR ]] || die "no join job JAR at $SECOND_JAR (E2E_FLINK_LINE=$SECOND_LINE e2e/lib/install.sh join builds it)"
if [[ -n $SECOND_LINE && -z $SECOND_JAVA ]]; then
    if [[ $SECOND_LINE == 1.20 ]]; then
        SECOND_JAVA=$("$E2E_DIR/../java/jdk11.sh") || die "java/jdk11.sh found no Java 11 for the 1.20 cluster"
    else
        SECOND_JAVA=$E2E_FLINK_JAVA
    fi
fi
if [[ -d $E2E_RUN && -n $(leftover_pids) ]]; then
    die "processes of a previous run are still alive: $(leftover_pids | tr '\n' ' ') (stop them: e2e/lib/{flink,connect,kafka,postgres}.sh stop)"
fi
rm -rf "$E2E_RUN"
mkdir -p "$E2E_RUN" "$WL"
trap cleanup EXIT
trap 'exit 130' INT TERM

python3 "$LIB/workload.py" generate --out "$WL" --seed "$SEED" --users "$USERS" --domains "$DOMAINS" \
    --statements "$STATEMENTS" >"$WL/generate.json"
log "workload: generated $STATEMENTS statements (seed $SEED): $(cat "$WL/generate.json")"
if [[ $STAR == 1 ]]; then
    python3 "$LIB/star_workload.py" --out "$SWL" --seed "$STAR_SEED" --statements "$STAR_STATEMENTS" >"$SWL.json"
    log "star: generated $STAR_STATEMENTS statements (seed $STAR_SEED): $(cat "$SWL.json")"
fi

# ------------------------------------------------------------------------------------------------
# 0b. the product JAR in Flink's lib/ only, before the main cluster uses the ports: a cluster of its
#     own whose lib/ holds the product JAR runs a job JAR without it, with each engine
# ------------------------------------------------------------------------------------------------
if [[ $JOIN == 1 && -z ${E2E_JOIN_JAR:-} && ${E2E_LIBJAR:-1} == 1 ]]; then
    t=$(date +%s)
    "$LIB/libjar.sh" "$E2E_RUN/libjar-results" ||
        result "product in lib/ only" FAIL "e2e/lib/libjar.sh could not run the check (see its output above)"
    # and the second line's product JAR in its distribution's lib/, on its java
    [[ -z $SECOND_LINE ]] || second_env "$LIB/libjar.sh" "$E2E_RUN/libjar-results" ||
        result "product in lib/ only ($SECOND_LINE)" FAIL "e2e/lib/libjar.sh could not run the check (see its output above)"
    [[ -f $E2E_RUN/libjar-results ]] && while IFS= read -r r; do RESULTS+=("$r"); done <"$E2E_RUN/libjar-results"
    log "libjar: the check took $(($(date +%s) - t)) s"
fi

# ------------------------------------------------------------------------------------------------
# 1. PostgreSQL: source tables (REPLICA IDENTITY FULL), mart tables, the snapshot's rows
# ------------------------------------------------------------------------------------------------
"$LIB/postgres.sh" start
e2e_psql -q -f "$E2E_DIR/sql/schema.sql"
e2e_psql -q -f "$WL/snapshot.sql"
[[ $STAR == 1 ]] && e2e_psql -q -f "$SWL/snapshot.sql"
log "postgres: schema created, snapshot rows loaded: $(e2e_psql -tAc "select (select count(*) from users) || ' users, ' || (select count(*) from domains) || ' domains'")"
# the fidelity scenario's tables and initial rows: its connectors start with Kafka Connect below
[[ $E2E_FIDELITY == 1 ]] && "$E2E_DIR/fidelity.sh" prepare
if [[ $JOIN == 1 && -z ${E2E_JOIN_JAR:-} ]]; then
    # the join job's sink on its own against this Postgres: commit on checkpoint completion, a lost
    # notification (restore applies the batch, once), an aborted checkpoint, whole-row retractions
    t=$(date +%s)
    if mvn -B -q -Dstyle.color=never -f "$E2E_DIR/jobs/users-domains-join/pom.xml" test "${E2E_JOB_MVN_ARGS[@]}" \
        -De2e.jdbc.url="jdbc:postgresql://$E2E_HOST:$E2E_PG_PORT/$E2E_PG_DB" >"$E2E_RUN/sink-test.txt" 2>&1; then
        result "mart sink tests (live Postgres)" PASS "$(grep -ho 'Tests run: [0-9]*, Failures: 0, Errors: 0, Skipped: 0' "$E2E_DIR"/jobs/users-domains-join/target/surefire-reports/*.txt | head -1) in MartSinkOperatorTest, $(($(date +%s) - t)) s"
    else
        tail -40 "$E2E_RUN/sink-test.txt"
        result "mart sink tests (live Postgres)" FAIL "see $E2E_RUN/sink-test.txt and e2e/jobs/users-domains-join/target/surefire-reports"
    fi
fi

# ------------------------------------------------------------------------------------------------
# 2. Kafka (KRaft) and Kafka Connect with Debezium; wait for Debezium's initial snapshot
# ------------------------------------------------------------------------------------------------
"$LIB/kafka.sh" start
"$LIB/connect.sh" start
snapshot_in_kafka() { "$LIB/kafka.sh" offsets "$E2E_TOPIC_USERS" "$E2E_TOPIC_DOMAINS" | python3 "$LIB/counts.py" snapshot "$WL/expected.json" "$E2E_TOPIC_PREFIX"; }
wait_until 120 "Debezium's snapshot in Kafka" snapshot_in_kafka
log "debezium: snapshot in Kafka: $(snapshot_in_kafka | tr -s ' ' | paste -sd';' -)"
star_topics() { for t in $E2E_STAR_TABLES; do echo "$E2E_TOPIC_PREFIX.public.$t"; done; }
# star_counts snapshot|kafka: the star topics' records against its workload's model
# shellcheck disable=SC2046
star_counts() { "$LIB/kafka.sh" offsets $(star_topics) | python3 "$LIB/counts.py" "$1" "$SWL/expected.json" "$E2E_TOPIC_PREFIX"; }
if [[ $STAR == 1 ]]; then
    wait_until 120 "Debezium's snapshot of the star tables in Kafka" star_counts snapshot
    log "debezium: star snapshot in Kafka: $(star_counts snapshot | tr -s ' ' | paste -sd';' -)"
fi

# ------------------------------------------------------------------------------------------------
# 3. Flink cluster; the proof job (Kafka source over both topics, counts per op), parallelism 2
# ------------------------------------------------------------------------------------------------
"$LIB/flink.sh" start 2
TM_OUTS=("$E2E_RUN"/flink/log/taskmanager-1.out "$E2E_RUN"/flink/log/taskmanager-2.out)
PROOF_ARGS=(--bootstrap "$BOOTSTRAP" --topics "$TOPICS" --checkpoint-ms 2000)
t=$(date +%s)
PROOF_A=$("$LIB/flink.sh" submit "$PROOF_JAR" "$PROOF_CLASS" 2 "${PROOF_ARGS[@]}" --group e2e-count-a) ||
    die "submission of the proof job failed"
"$LIB/flink.sh" wait-running "$PROOF_A" 120
log "flink: proof job A $PROOF_A RUNNING $(($(date +%s) - t)) s after upload (POST /jars/upload, POST /jars/:id/run)"
spread=$("$LIB/flink.sh" tms "$PROOF_A" | awk -F'\t' '/^Source/ {print $2}' | sort -u | paste -sd, -)
if [[ $spread == "tm-1,tm-2" ]]; then
    result "proof job parallelism 2 on 2 TMs" PASS "source subtasks on $spread"
else
    result "proof job parallelism 2 on 2 TMs" FAIL "source subtasks on '$spread'"
fi
if [[ -n $SECOND_LINE ]]; then
    # the second cluster, its TaskManagers' stdout (the join jobs' E2E_NATIVE lines) kept apart
    flink2 start 2
    TM2_OUTS=("$SECOND_RUN"/flink/log/taskmanager-1.out "$SECOND_RUN"/flink/log/taskmanager-2.out)
    # its JobManager and TaskManagers run the java asked for (/proc/PID/exe of each)
    jvms=$(for p in "$SECOND_RUN"/pids/*.pid; do echo "$(basename "$p" .pid) $(readlink -f "/proc/$(cat "$p")/exe")"; done)
    if [[ $(grep -vc " $(readlink -f "$SECOND_JAVA")\$" <<<"$jvms") == 0 && $(wc -l <<<"$jvms") == 3 ]]; then
        result "second cluster on Java $(java_version "$SECOND_JAVA")" PASS "JobManager and both TaskManagers run $SECOND_JAVA"
    else
        result "second cluster on Java $(java_version "$SECOND_JAVA")" FAIL "$(paste -sd';' - <<<"$jvms")"
    fi
fi

# ================================================================================================
# The product's join job (e2e/jobs/users-domains-join): one job per join type, submitted before the
# workload like the proof job, each filling its mart from the two topics (Kafka source -> native
# decode + join -> exactly-once changelog sink into Postgres). join_job_args is the job's contract.
# ================================================================================================
join_job_args() {
    local mart=$1
    echo --bootstrap "$BOOTSTRAP" --group "e2e-join-$mart" \
        --jdbc-url "jdbc:postgresql://$E2E_HOST:$E2E_PG_PORT/$E2E_PG_DB" --jdbc-user "$E2E_PG_USER" \
        --mart-table "$("$LIB/mart.sh" table "$mart")" --checkpoint-ms 2000
    if [[ $mart == star* ]]; then
        echo --topic-prefix "$E2E_TOPIC_PREFIX"
    else
        echo --users-topic "$E2E_TOPIC_USERS" --domains-topic "$E2E_TOPIC_DOMAINS" --join "${mart%%-*}"
    fi
}
join_job_class() { if [[ $1 == star* ]]; then echo "$STAR_CLASS"; else echo "$JOIN_CLASS"; fi; }
vertex_names() { on_job vertices "$1"; }
submit_join() {
    local mart=$1 t cluster jar=$JOIN_JAR
    cluster=$(mart_cluster "$mart")
    [[ $cluster == flink2 ]] && jar=$SECOND_JAR
    t=$(date +%s)
    # shellcheck disable=SC2046
    JOIN_JOB[$mart]=$("$cluster" submit "$jar" "$(join_job_class "$mart")" 2 $(join_job_args "$mart")) ||
        { result "join job $mart submitted" FAIL "$jar $(join_job_class "$mart"): see the REST answer above"; exit 1; }
    CLUSTER[${JOIN_JOB[$mart]}]=$cluster
    on_job wait-running "${JOIN_JOB[$mart]}" 120
    log "join job ($mart): ${JOIN_JOB[$mart]} RUNNING $(($(date +%s) - t)) s after upload, subtasks on $(on_job tms "${JOIN_JOB[$mart]}" | cut -f2 | sort -u | paste -sd, -)"
    log "join job ($mart): tasks: $(vertex_names "${JOIN_JOB[$mart]}")"
}
if [[ -n $JOIN_JAR ]]; then
    for j in $JOIN_TYPES "${SECOND_MARTS[@]}"; do submit_join "$j"; done
    chained=1
    for j in $JOIN_TYPES "${SECOND_MARTS[@]}"; do [[ $(vertex_names "${JOIN_JOB[$j]}") == *"CdcJoin"*"-> mart sink"* ]] || chained=0; done
    result "join jobs: sink chained to join" "$([[ $chained == 1 ]] && echo PASS || echo FAIL)" "one task 'CdcJoin ... -> mart sink' per job, parallelism 2 (forward): $JOIN_TYPES ${SECOND_MARTS[*]}"
    for j in "${STAR_MARTS[@]}"; do
        submit_join "$j"
        # two joins, each its own task (a keyBy before each), the sink chained to the second
        tasks=$(vertex_names "${JOIN_JOB[$j]}")
        if [[ $(grep -o 'CdcJoin' <<<"$tasks" | wc -l) == 2 && $tasks == *"CdcJoin"*"CdcJoin"*"-> mart sink"* ]]; then
            result "$j job: two chained joins" PASS "tasks: $tasks"
        else
            result "$j job: two chained joins" FAIL "tasks: $tasks"
        fi
    done
    if [[ -n $SECOND_LINE ]]; then
        # the second cluster's jobs run on the state backend asked for
        want=HashMapStateBackend
        [[ ${E2E_SECOND_STATE_BACKEND:-rocksdb} == rocksdb ]] && want=EmbeddedRocksDBStateBackend
        backends="" verdict=PASS
        for j in $(marts_on flink2); do
            b=$(on_job backend "${JOIN_JOB[$j]}")
            backends+="$j $b, "
            [[ $b == "$want" ]] || verdict=FAIL
        done
        result "second cluster's jobs on $want" "$verdict" "${backends%, }"
    fi
else
    log "join job: E2E_JOIN=0: the product's join job is not run (the mart checks below test themselves instead)"
fi
# ================================================================================================

# ------------------------------------------------------------------------------------------------
# 4. the workload at a steady rate; mid-run: kill -9 a TaskManager, and a second job submitted
# ------------------------------------------------------------------------------------------------
log "workload: $STATEMENTS statements at $RATE/s through psql"
python3 "$LIB/workload.py" feed --file "$WL/stream.sql" --rate "$RATE" -- \
    psql -X -q -v ON_ERROR_STOP=1 -h "$E2E_HOST" -p "$E2E_PG_PORT" -U "$E2E_PG_USER" -d "$E2E_PG_DB" \
    >"$WL/feed.json" 2>"$WL/feed.err" &
FEED_PID=$!
FEED_T0=$(date +%s)
DURATION=$(python3 -c "print(int($STATEMENTS / $RATE))")
if [[ $STAR == 1 ]]; then
    # the star workload beside it, through its own psql session, over the same duration (so
    # through the kill below)
    STAR_RATE=$(python3 -c "print(round($STAR_STATEMENTS / max($DURATION, 1), 1))")
    log "star: $STAR_STATEMENTS statements at $STAR_RATE/s through a second psql"
    python3 "$LIB/workload.py" feed --file "$SWL/stream.sql" --rate "$STAR_RATE" -- \
        psql -X -q -v ON_ERROR_STOP=1 -h "$E2E_HOST" -p "$E2E_PG_PORT" -U "$E2E_PG_USER" -d "$E2E_PG_DB" \
        >"$SWL/feed.json" 2>"$SWL/feed.err" &
    STAR_FEED_PID=$!
fi

# a third in: the second jobs, submitted while the first ones run: proof job B (the same JAR as A),
# and the late join job (the same JAR as the other join jobs: its own class loader, so its own copy
# of the native library, in TaskManager JVMs where the others have theirs)
sleep_until $((FEED_T0 + DURATION / 3))
t=$(date +%s)
PROOF_B=$("$LIB/flink.sh" submit "$PROOF_JAR" "$PROOF_CLASS" 2 "${PROOF_ARGS[@]}" --group e2e-count-b) ||
    die "submission of the second proof job failed"
"$LIB/flink.sh" wait-running "$PROOF_B" 120
log "flink: proof job B $PROOF_B (same JAR, its own class loader) RUNNING beside A after $(($(date +%s) - t)) s"
if [[ -n $LATE_JOIN ]]; then
    log "join job ($LATE_JOIN-late): a second join job submitted while the others run (its own class loader)"
    submit_join "$LATE_JOIN-late"
fi

# two thirds in: kill -9 TaskManager tm-2 (every job has a subtask there), restart it; every job
# fails over and restores its last completed checkpoint
sleep_until $((FEED_T0 + 2 * DURATION / 3))
if [[ $KILL_TM == 1 ]]; then
    declare -A failures_before=()
    hit=()   # the jobs with a subtask on tm-2: they must fail over
    for job in "$PROOF_A" "$PROOF_B" "${JOIN_JOB[@]}"; do
        failures_before[$job]=$(on_job failures "$job")
        on_job tms "$job" | cut -f2 | grep -qx tm-2 && hit+=("$job")
    done
    for j in "${!JOIN_JOB[@]}"; do
        [[ " ${hit[*]} " == *" ${JOIN_JOB[$j]} "* ]] ||
            result "join job $j on tm-2 at the kill" FAIL "no subtask on tm-2: the kill does not test it"
    done
    cps=""
    for j in "${!JOIN_JOB[@]}"; do cps+=" $j $(on_job checkpoints "${JOIN_JOB[$j]}"),"; done
    t=$(date +%s)
    # tm-2 of each cluster at once
    "$LIB/flink.sh" kill-tm 2
    [[ -n $SECOND_LINE ]] && flink2 kill-tm 2
    log "flink: completed checkpoints at the kill: A $("$LIB/flink.sh" checkpoints "$PROOF_A"),${cps%,}"
    sleep 2
    "$LIB/flink.sh" start-tm 2
    [[ -n $SECOND_LINE ]] && flink2 start-tm 2
    failed_over() { [[ $(on_job failures "$1") -gt $2 ]]; }
    for job in "${hit[@]}"; do
        wait_until 60 "job $job noticed the lost TaskManager" failed_over "$job" "${failures_before[$job]}"
    done
    "$LIB/flink.sh" wait-running "$PROOF_A" 120
    "$LIB/flink.sh" wait-running "$PROOF_B" 120
    restored=""
    for j in "${!JOIN_JOB[@]}"; do
        on_job wait-running "${JOIN_JOB[$j]}" 120
        restored+=" $j from $(on_job restored "${JOIN_JOB[$j]}"),"
    done
    result "kill -9 tm-2, jobs recover" PASS "${#hit[@]} of $((2 + ${#JOIN_JOB[@]})) jobs had a subtask there, failed over, RUNNING again after $(($(date +%s) - t)) s; restored: A from $("$LIB/flink.sh" restored "$PROOF_A"), B from $("$LIB/flink.sh" restored "$PROOF_B"),${restored%,}"
fi

wait "$FEED_PID" || { FEED_PID=""; cat "$WL/feed.err"; die "workload failed"; }
FEED_PID=""
log "workload: done: $(cat "$WL/feed.json")"
if [[ -n $STAR_FEED_PID ]]; then
    wait "$STAR_FEED_PID" || { STAR_FEED_PID=""; cat "$SWL/feed.err"; die "star workload failed"; }
    STAR_FEED_PID=""
    log "star: workload done: $(cat "$SWL/feed.json")"
fi
FEED_END=$(date +%s.%N)

# the marts: time until each equals its join over the source tables, from the workload's last
# statement (all marts polled together, one comparison each per round)
MARTS=()
[[ -n $JOIN_JAR ]] && read -r -a MARTS <<<"$JOIN_TYPES ${LATE_JOIN:+$LATE_JOIN-late} ${STAR_MARTS[*]} ${SECOND_MARTS[*]}"
declare -A CONVERGED_IN=()
todo=("${MARTS[@]}")
while ((${#todo[@]} > 0)); do
    left=()
    for m in "${todo[@]}"; do
        if "$LIB/mart.sh" compare "$m" >"$E2E_RUN/mart-$m.txt" 2>&1; then
            CONVERGED_IN[$m]=$(python3 -c "import time; print(round(time.time() - $FEED_END, 1))")
            log "mart: $m converged ${CONVERGED_IN[$m]} s after the workload: $(grep '^COMPARE' "$E2E_RUN/mart-$m.txt")"
        else
            left+=("$m")
        fi
    done
    todo=("${left[@]}")
    ((${#todo[@]} == 0)) && break
    if python3 -c "import sys, time; sys.exit(0 if time.time() - $FEED_END > $CONVERGE_SECS else 1)"; then
        log "mart: not converged after ${CONVERGE_SECS}s: ${todo[*]}"
        break
    fi
    sleep 0.5
done

# ------------------------------------------------------------------------------------------------
# 5. counts: Debezium records in Kafka, and what the proof jobs read, against the workload's model
# ------------------------------------------------------------------------------------------------
src=$(e2e_psql -tAc "select (select count(*) from users) || ' ' || (select count(*) from domains) || ' ' || (select count(*) from mart.expected_users_domains) || ' ' || (select count(*) from mart.expected_users_domains_left)")
model=$(python3 -c "import json, sys; f = json.load(open(sys.argv[1]))['final_rows']; print(f['users'], f['domains'], f['inner_join'], f['left_join'])" "$WL/expected.json")
if [[ $src == "$model" ]]; then
    result "source tables = workload model" PASS "users domains inner-join left-join rows: $src"
else
    result "source tables = workload model" FAIL "database: $src, model: $model"
fi
kafka_counts() { "$LIB/kafka.sh" offsets "$E2E_TOPIC_USERS" "$E2E_TOPIC_DOMAINS" | python3 "$LIB/counts.py" kafka "$WL/expected.json" "$E2E_TOPIC_PREFIX"; }
t=$(date +%s)
poll_until 120 kafka_counts || true
if out=$(kafka_counts); then
    result "Debezium records in Kafka" PASS "$(echo "$out" | awk '{print $1"="$3}' | paste -sd' ' -), all in $(($(date +%s) - t)) s after the workload"
else
    result "Debezium records in Kafka" FAIL "$(echo "$out" | paste -sd';' -)"
fi
if [[ $STAR == 1 ]]; then
    src=$(e2e_psql -tAc "select (select count(*) from orders) || ' ' || (select count(*) from customers) || ' ' || (select count(*) from products) || ' ' || (select count(*) from mart.expected_star_orders)")
    model=$(python3 -c "import json, sys; f = json.load(open(sys.argv[1]))['final_rows']; print(f['orders'], f['customers'], f['products'], f['mart'])" "$SWL/expected.json")
    result "star source tables = model" "$([[ $src == "$model" ]] && echo PASS || echo FAIL)" "orders customers products mart-rows: database $src, model $model"
    poll_until 60 star_counts kafka || true
    if out=$(star_counts kafka); then
        result "Debezium records in Kafka (star)" PASS "$(echo "$out" | awk '{print $1"="$3}' | paste -sd' ' -)"
    else
        result "Debezium records in Kafka (star)" FAIL "$(echo "$out" | paste -sd';' -)"
    fi
fi
job_counts() { python3 "$LIB/counts.py" job "$WL/expected.json" "$E2E_TOPIC_PREFIX" "e2e-count-$1" "${TM_OUTS[@]}"; }
for job in a b; do
    poll_until 60 job_counts "$job" || true
    if out=$(job_counts "$job"); then
        result "proof job ${job^^} counts per op" PASS "$(echo "$out" | awk '{$2=$3=""; print}' | tr -s ' ' | paste -sd';' -)"
    else
        result "proof job ${job^^} counts per op" FAIL "$(echo "$out" | paste -sd';' -)"
    fi
done
log "flink: cancelling the proof jobs"
cancel_jobs "$PROOF_B" "$PROOF_A"

# ================================================================================================
# The marts, compared row by row with the joins over the source tables (e2e/sql/compare.sql): wait
# until each converges; then what each job's sink applied (mart.sink_progress), whether the jobs
# still run, and where each loaded the native library from. Without the join job: the comparison
# tests itself (fills the marts with that very join, perturbs them, checks the keys take upserts).
# ================================================================================================
if [[ -n $JOIN_JAR ]]; then
    for j in "${MARTS[@]}"; do
        # converged (above), and still equal now, after the count checks
        if [[ -n ${CONVERGED_IN[$j]:-} ]] && "$LIB/mart.sh" compare "$j" >"$E2E_RUN/mart-$j.txt" 2>&1; then
            result "mart = join, row by row ($j)" PASS "converged ${CONVERGED_IN[$j]} s after the workload's last statement, still equal: $(grep -o 'COMPARE.*' "$E2E_RUN/mart-$j.txt")"
        else
            cat "$E2E_RUN/mart-$j.txt"
            result "mart = join, row by row ($j)" FAIL "$(grep -o 'COMPARE.*' "$E2E_RUN/mart-$j.txt"); converged: ${CONVERGED_IN[$j]:-never}; see $E2E_RUN/mart-$j.txt"
        fi
        if out=$("$LIB/mart.sh" sink "$j"); then
            result "mart sink exactly once ($j)" PASS "$out"
        else
            result "mart sink exactly once ($j)" FAIL "$out"
        fi
        MART_LINES+=("$("$LIB/mart.sh" table "$j"): $(grep -o 'expected=[0-9]* mart=[0-9]*' "$E2E_RUN/mart-$j.txt" | tail -1) rows, converged ${CONVERGED_IN[$j]:-never} s after the workload; sink: $out")
        result "join job $j still RUNNING" "$([[ $(on_job status "${JOIN_JOB[$j]}") == RUNNING ]] && echo PASS || echo FAIL)" "${JOIN_JOB[$j]}, $(on_job checkpoints "${JOIN_JOB[$j]}") checkpoints, restored from $(on_job restored "${JOIN_JOB[$j]}")"
        # the star (orders LEFT JOIN customers, then INNER JOIN products, chained): its first join
        # holds orders and customers, its second the first one's output (one row per order, as that
        # join is a left join) and products
        if [[ $j == star* ]]; then
            check_join_state "$j" "orders orders customers products" on_job metric "${JOIN_JOB[$j]}"
        else
            check_join_state "$j" "users domains" on_job metric "${JOIN_JOB[$j]}"
        fi
    done
    # native_check CLUSTER RUN_DIR TM_OUT..: the check over the join jobs of one cluster
    native_check() {
        local cluster=$1 dir=$2 j out args=()
        shift 2
        for j in $(marts_on "$cluster"); do args+=("$j=${JOIN_JOB[$j]}"); done
        if out=$(python3 "$LIB/native_check.py" "$dir/flink/native" "${args[@]}" -- "$@"); then
            echo "$out"
            result "native library in every job and TM ($cluster)" PASS "$(echo "$out" | tail -1 | cut -c4-)"
        else
            echo "$out"
            result "native library in every job and TM ($cluster)" FAIL "$(echo "$out" | grep FAIL | head -3 | paste -sd';' -)"
        fi
    }
    native_check flink1 "$E2E_RUN" "${TM_OUTS[@]}"
    [[ -n $SECOND_LINE ]] && native_check flink2 "$SECOND_RUN" "${TM2_OUTS[@]}"
    cancel_jobs "${JOIN_JOB[@]}"
    log "flink: join jobs cancelled"
    [[ -n $SECOND_LINE ]] && flink2 stop
    if [[ $E2E_FIDELITY == 1 ]]; then
        # the fidelity scenario in the same pipeline; its checks and mart lines join ours
        t=$(date +%s)
        "$E2E_DIR/fidelity.sh" run "$JOIN_JAR" ||
            result "fidelity scenario" FAIL "e2e/fidelity.sh run failed (see its output above)"
        for f in results marts; do [[ -f $E2E_RUN/fidelity/$f ]] || touch "$E2E_RUN/fidelity/$f"; done
        while IFS= read -r r; do RESULTS+=("$r"); done <"$E2E_RUN/fidelity/results"
        while IFS= read -r r; do MART_LINES+=("$r"); done <"$E2E_RUN/fidelity/marts"
        log "fidelity: scenario took $(($(date +%s) - t)) s"
    fi
else
    if "$LIB/mart.sh" selftest >"$E2E_RUN/mart-selftest.txt" 2>&1; then
        result "mart comparison self-test" PASS "equal/perturbed/upserted marts judged right ($(grep -c detected "$E2E_RUN/mart-selftest.txt") perturbations caught)"
    else
        cat "$E2E_RUN/mart-selftest.txt"
        result "mart comparison self-test" FAIL "see $E2E_RUN/mart-selftest.txt"
    fi
    for j in $JOIN_TYPES; do
        "$LIB/mart.sh" fill "$j"
        if "$LIB/mart.sh" wait "$j" 10 >"$E2E_RUN/mart-$j.txt" 2>&1; then
            result "mart compare ($j), filled by SQL" PASS "$(grep -o 'COMPARE.*' "$E2E_RUN/mart-$j.txt")"
        else
            result "mart compare ($j), filled by SQL" FAIL "see $E2E_RUN/mart-$j.txt"
        fi
    done
    "$LIB/mart.sh" clear
    result "product join job" SKIP "E2E_JOIN=0"
fi
# ================================================================================================

failed && exit 1
exit 0
