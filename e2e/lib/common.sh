# shellcheck shell=bash
# Common settings and helpers for the e2e scripts. Source it; it defines no side effects beyond
# variables and functions.
#
# Layout:
#   $E2E_CACHE  installed things that survive runs (jars, Flink's lib/, the proof job): e2e/.cache
#   $E2E_RUN    one run's throwaway state (Postgres data dir, Kafka log dirs, logs, pid files);
#               wiped by run.sh at its start, kept after it for post-mortems.
# Every port is on 127.0.0.1 and can be moved with its variable (e.g. two checkouts side by side).

E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
E2E_CACHE="${E2E_CACHE:-$E2E_DIR/.cache}"
E2E_RUN="${E2E_RUN:-$E2E_CACHE/run}"
E2E_HOST=127.0.0.1

# Versions (each comes from a package registry: Debian, Maven Central or PyPI).
E2E_PG_MAJOR="${E2E_PG_MAJOR:-15}"               # Debian bookworm's postgresql-15
E2E_KAFKA_VERSION=4.3.0                           # = Debezium 3.6.1.Final's <version.kafka>
E2E_DEBEZIUM_VERSION=3.6.1.Final
# The Flink line of the cluster (E2E_FLINK_LINE=2.3, the default, or 1.20) and its release on PyPI
# apache-flink-libraries (flink-dist + lib/): a wheel for 2.3.0, only a source archive for 1.20.x.
# 1.20.3 is also the newest 1.20 whose table modules Maven Central serves here, so jobs built for
# the line compile against the cluster's own release.
# Each line has its own builds: the product's (the root pom's profile for the line) and the jobs'
# (Flink, its Kafka connector and the product artifact of the line, E2E_JOB_MVN_ARGS), kept in
# E2E_JOBS.
E2E_FLINK_LINE="${E2E_FLINK_LINE:-2.3}"
case $E2E_FLINK_LINE in
    2.3)
        E2E_FLINK_VERSION=2.3.0
        E2E_PRODUCT_MVN_ARGS=()
        E2E_JOB_MVN_ARGS=()
        E2E_JOBS=$E2E_CACHE/jobs
        ;;
    1.20)
        E2E_FLINK_VERSION=1.20.3
        E2E_PRODUCT_MVN_ARGS=(-Dflink.line=1.20)
        # Java 11 class files, as the product's 1.20 artifact: 1.x clusters run on Java 11 too
        E2E_JOB_MVN_ARGS=(-Dflink.version=1.20.3 -Dflink.kafka.version=3.4.0-1.20 -Dcdcjoin.line=1.20 -Dmaven.compiler.release=11)
        E2E_JOBS=$E2E_CACHE/jobs-1.20
        ;;
    *) echo "E2E_FLINK_LINE=$E2E_FLINK_LINE: the e2e cluster runs Flink 2.3 or 1.20" >&2; exit 1 ;;
esac

# Ports (loopback only).
E2E_PG_PORT="${E2E_PG_PORT:-15432}"
E2E_KAFKA_PORT="${E2E_KAFKA_PORT:-19092}"
E2E_KAFKA_CONTROLLER_PORT="${E2E_KAFKA_CONTROLLER_PORT:-19093}"
E2E_CONNECT_PORT="${E2E_CONNECT_PORT:-18083}"
E2E_FLINK_REST_PORT="${E2E_FLINK_REST_PORT:-18081}"
E2E_FLINK_RPC_PORT="${E2E_FLINK_RPC_PORT:-16123}"
E2E_FLINK_BLOB_PORT="${E2E_FLINK_BLOB_PORT:-16124}"
E2E_FLINK_TM_RPC_PORTS="${E2E_FLINK_TM_RPC_PORTS:-16130-16139}"
E2E_FLINK_TM_DATA_PORTS="${E2E_FLINK_TM_DATA_PORTS:-16140-16149}"
# The second cluster run.sh starts beside the first (E2E_SECOND_LINE): the same five, moved.
E2E_FLINK2_REST_PORT="${E2E_FLINK2_REST_PORT:-18082}"
E2E_FLINK2_RPC_PORT="${E2E_FLINK2_RPC_PORT:-16223}"
E2E_FLINK2_BLOB_PORT="${E2E_FLINK2_BLOB_PORT:-16224}"
E2E_FLINK2_TM_RPC_PORTS="${E2E_FLINK2_TM_RPC_PORTS:-16230-16239}"
E2E_FLINK2_TM_DATA_PORTS="${E2E_FLINK2_TM_DATA_PORTS:-16240-16249}"

# Names shared by the scripts and the jobs.
E2E_PG_DB="${E2E_PG_DB:-e2e}"
E2E_PG_USER=postgres
E2E_TOPIC_PREFIX="${E2E_TOPIC_PREFIX:-e2e}"
E2E_TOPIC_USERS="$E2E_TOPIC_PREFIX.public.users"
E2E_TOPIC_DOMAINS="$E2E_TOPIC_PREFIX.public.domains"
# the star schema's tables (run.sh's star mart), captured by the same connector
E2E_STAR_TABLES="orders customers products"
E2E_TOPIC_PARTITIONS="${E2E_TOPIC_PARTITIONS:-2}"
# The fidelity scenario (e2e/fidelity.sh): its two connectors (topic prefixes fa and fb) run in
# the same Kafka Connect worker from the start; E2E_FIDELITY=0 leaves it all out.
E2E_FIDELITY="${E2E_FIDELITY:-1}"
E2E_FID_CONNECTOR_A=e2e-fid-a
E2E_FID_CONNECTOR_B=e2e-fid-b
E2E_FID_PREFIX_A=fa
E2E_FID_PREFIX_B=fb
# Debezium's JSON converter: false = plain envelopes {before,after,source,op,...};
# true = schema-wrapped {schema,payload}. The product's decoder reads both.
E2E_JSON_SCHEMAS="${E2E_JSON_SCHEMAS:-false}"
# 7 slots per TaskManager: two proof jobs and four join jobs (inner, left, the late one, the star),
# each at parallelism 2 (one slot per TaskManager each), and one to spare.
E2E_FLINK_SLOTS_PER_TM="${E2E_FLINK_SLOTS_PER_TM:-7}"

E2E_JAVA="${E2E_JAVA:-java}"
# the Flink cluster's JVMs (lib/flink.sh); Kafka and Connect run on E2E_JAVA (Kafka 4 needs 17)
E2E_FLINK_JAVA="${E2E_FLINK_JAVA:-$E2E_JAVA}"
# the cluster's state backend (lib/flink.sh): hashmap, or rocksdb with incremental checkpoints
E2E_FLINK_STATE_BACKEND="${E2E_FLINK_STATE_BACKEND:-hashmap}"
E2E_T0="${E2E_T0:-$(date +%s)}"
export E2E_T0

log() { printf '[e2e %s +%3ss] %s\n' "$(date +%H:%M:%S)" "$(($(date +%s) - E2E_T0))" "$*"; }
die() { log "ERROR: $*" >&2; exit 1; }

# wait_port PORT SECONDS [NAME]: until something accepts TCP connections on 127.0.0.1:PORT.
wait_port() {
    local port=$1 secs=$2 name=${3:-port $1} i
    for ((i = 0; i < secs * 5; i++)); do
        if (exec 3<>"/dev/tcp/$E2E_HOST/$port") 2>/dev/null; then return 0; fi
        sleep 0.2
    done
    die "$name: nothing listening on $E2E_HOST:$port after ${secs}s"
}

# poll_until SECONDS COMMAND...: polls COMMAND (quietly) every 0.5 s; 1 on time-out.
poll_until() {
    local secs=$1 i
    shift
    for ((i = 0; i < secs * 2; i++)); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.5
    done
    return 1
}

# metric_is WANT COMMAND...: whether COMMAND (a `flink.sh metric JOB NAME` call) prints WANT.
metric_is() { [[ $("${@:2}") == "$1" ]]; }

# check_join_state LABEL "TABLE..." COMMAND...: the check (recorded by the caller's result) that a
# job's joins hold exactly the rows its source TABLEs hold now (a table named twice counts twice):
# `COMMAND cdcjoinStateRows` (the native joins' rows in state, summed over their subtasks through
# Flink's REST API, which refreshes metrics every 10 s) must reach their count within 30 s. A mart shows only
# what joins; a row lost or kept twice in the state (by a restore, a re-delivery, a replacement or a
# key change) shows here even where it joins nothing.
check_join_state() {
    local label=$1 tables=$2 sql="" t want
    shift 2
    for t in $tables; do sql+="${sql:+ + }(select count(*) from $t)"; done
    want=$(e2e_psql -tAc "select $sql")
    if poll_until 30 metric_is "$want" "$@" cdcjoinStateRows; then
        result "join state = the tables' rows ($label)" PASS "cdcjoinStateRows $want = rows of ${tables// / + }"
    else
        result "join state = the tables' rows ($label)" FAIL "cdcjoinStateRows $("$@" cdcjoinStateRows) after 30 s, want $want (rows of ${tables// / + })"
    fi
}

# wait_until SECONDS DESCRIPTION COMMAND...: poll_until, and die on time-out.
wait_until() {
    local secs=$1 what=$2
    shift 2
    poll_until "$secs" "$@" || die "timed out after ${secs}s waiting for: $what"
}

# sleep_until EPOCH_SECONDS
sleep_until() {
    local now
    now=$(date +%s)
    (($1 > now)) && sleep $(($1 - now))
    return 0
}

pid_file() { echo "$E2E_RUN/pids/$1.pid"; }

# start_bg NAME LOGFILE COMMAND...: starts COMMAND in the background (stdout and stderr appended
# to LOGFILE, so a restarted process keeps its predecessor's output), records its pid under NAME.
start_bg() {
    local name=$1 logf=$2
    shift 2
    mkdir -p "$E2E_RUN/pids" "$(dirname "$logf")"
    nohup "$@" >>"$logf" 2>&1 </dev/null &
    echo $! >"$(pid_file "$name")"
}

# is_running NAME: its recorded pid is alive.
is_running() {
    local f
    f=$(pid_file "$1")
    [[ -f $f ]] && kill -0 "$(cat "$f")" 2>/dev/null
}

# stop_pid NAME [SECONDS]: SIGTERM the recorded pid, SIGKILL after SECONDS (default 20).
stop_pid() {
    local name=$1 secs=${2:-20} f pid i
    f=$(pid_file "$name")
    [[ -f $f ]] || return 0
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for ((i = 0; i < secs * 5; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        if kill -0 "$pid" 2>/dev/null; then
            log "$name (pid $pid) did not stop in ${secs}s: SIGKILL"
            kill -9 "$pid" 2>/dev/null || true
        fi
    fi
    # reap it if it is our child, so that no zombie is left behind
    wait "$pid" 2>/dev/null || true
    rm -f "$f"
}

# kill9_pid NAME: SIGKILL at once (failure injection).
kill9_pid() {
    local f pid
    f=$(pid_file "$1")
    [[ -f $f ]] || die "$1 has no pid file"
    pid=$(cat "$f")
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
    rm -f "$f"
}

# leftover_pids: pids of processes whose command line names this run's directory (ours only).
leftover_pids() {
    local p
    for p in /proc/[0-9]*; do
        [[ -r $p/cmdline ]] || continue
        if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$E2E_RUN/"; then
            echo "${p#/proc/}"
        fi
    done
}

# java_version JAVA: the java.version of that java binary
java_version() { "$1" -XshowSettings:properties -version 2>&1 | awk -F' = ' '/^ *java.version = / {print $2}'; }

# classpath DIR: all jars in DIR joined with ':' (sorted, so the order is stable).
classpath() {
    local dir=$1
    find "$dir" -maxdepth 1 -name '*.jar' | sort | paste -sd: -
}

# psql against the e2e database (extra args are passed on).
e2e_psql() {
    psql -X -v ON_ERROR_STOP=1 -h "$E2E_HOST" -p "$E2E_PG_PORT" -U "$E2E_PG_USER" -d "$E2E_PG_DB" "$@"
}

pg_bin() {
    local b
    for b in "/usr/lib/postgresql/$E2E_PG_MAJOR/bin" /usr/lib/postgresql/*/bin; do
        [[ -x $b/initdb ]] && { echo "$b"; return 0; }
    done
    return 1
}
