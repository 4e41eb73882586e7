#!/usr/bin/env bash
# A standalone Flink session cluster on loopback, from the Flink distribution (2.3.0, or 1.20.3 with
# E2E_FLINK_LINE=1.20) that install.sh laid out from PyPI's apache-flink-libraries
# (lib/flink-dist-<version>.jar and lib/): one JobManager
# (StandaloneSessionClusterEntrypoint) and TaskManagers (TaskManagerRunner) as separate JVMs,
# started the way Flink's bin/ scripts start them: the same classpath (lib/*, flink-dist last) and
# the JVM memory flags that Flink's BashJavaUtils derives from config.yaml. TaskManagers get
# -Dcdcjoin.native.tmpdir=$E2E_RUN/flink/native: the product's loader extracts its per-class-loader
# copies of the native library there (checked by run.sh; nothing is left in /tmp).
# REST API and web UI on http://127.0.0.1:$E2E_FLINK_REST_PORT. The JVMs: E2E_FLINK_JAVA (default
# E2E_JAVA, the java on the PATH). The state backend: E2E_FLINK_STATE_BACKEND, hashmap (default) or
# rocksdb (with incremental checkpoints). E2E_FLINK_HOME names another
# distribution directory (lib/libjar.sh: one whose lib/ also holds the product JAR).
#
# usage: e2e/lib/flink.sh COMMAND
#   start [N]                 JobManager + N TaskManagers (default 2), waits until N are registered
#   stop                      stops every TaskManager, then the JobManager
#   start-tm I | stop-tm I    one TaskManager (resource id tm-I)
#   kill-tm I                 kill -9 TaskManager tm-I (failure injection)
#   upload JAR                POST /jars/upload; prints the jar id
#   run JAR_ID CLASS P ARGS.. POST /jars/JAR_ID/run with entryClass, parallelism P and programArgsList; prints the job id
#   submit JAR CLASS P ARGS.. upload + run; prints the job id
#   wait-running JOB [SECS]   until every vertex of the job is RUNNING
#   status JOB                the job's state
#   tms JOB                   "vertex-name <tab> taskmanager-id" per subtask (where the job runs)
#   vertices JOB              the job's tasks: "name (p=N) | name (p=N) ..."
#   metric JOB NAME           the sum over the job's subtasks of each operator's metric NAME (e.g.
#                             cdcjoinBadRecords), as the REST API has it (refreshed every 10 s)
#   checkpoints JOB           completed checkpoint count
#   backend JOB               the job's state backend (its checkpoint configuration's, as the REST API names it)
#   restored JOB              the checkpoint the job last restored from ("checkpoint N"), or "none"
#   failures JOB              how many failures (restarts) the job has had
#   last-failure JOB          the first line of its latest failure, or "none"
#   cancel JOB                PATCH /jobs/JOB?mode=cancel and waits until CANCELED
#   overview                  GET /overview
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

FLINK_HOME=${E2E_FLINK_HOME:-$E2E_CACHE/flink-$E2E_FLINK_VERSION}
FDIR=$E2E_RUN/flink
CONF=$FDIR/conf
REST=http://$E2E_HOST:$E2E_FLINK_REST_PORT

# The JVM options of Flink's default configuration (env.java.opts.all: the --add-exports and
# --add-opens Flink needs on Java 17), read from the config.yaml inside flink-dist, so each line
# gets its own: 2.3.0's is the list this script used to carry verbatim, 1.20.3's also exports
# java.base/sun.net.util.
java_opts() {
    unzip -p "$FLINK_HOME/lib/flink-dist-$E2E_FLINK_VERSION.jar" config.yaml | python3 -c '
import sys
path = []
for line in sys.stdin:
    text = line.rstrip("\n")
    if not text.strip() or text.lstrip().startswith("#"):
        continue
    indent = len(text) - len(text.lstrip())
    key, _, value = text.strip().partition(":")
    path = [(i, k) for i, k in path if i < indent] + [(indent, key)]
    if [k for _, k in path] == ["env", "java", "opts", "all"]:
        print(value.strip())
        sys.exit(0)
sys.exit("no env.java.opts.all in the config.yaml of flink-dist")
' || die "cannot read the JVM options of $FLINK_HOME/lib/flink-dist-$E2E_FLINK_VERSION.jar"
}

flink_classpath() {
    # as bin/config.sh constructFlinkClassPath: lib/*.jar sorted, flink-dist last
    local jars
    jars=$(find "$FLINK_HOME/lib" -maxdepth 1 -name '*.jar' ! -name 'flink-dist*' | sort | paste -sd: -)
    echo "$jars:$(find "$FLINK_HOME/lib" -maxdepth 1 -name 'flink-dist*.jar' | head -1)"
}

write_config() {
    local opts
    opts=$(java_opts)
    mkdir -p "$CONF" "$FDIR/log" "$FDIR/tmp" "$FDIR/upload" "$FDIR/checkpoints" "$FDIR/savepoints"
    cat >"$CONF/config.yaml" <<EOF
# written by e2e/lib/flink.sh
env.java.opts.all: $opts
jobmanager.rpc.address: $E2E_HOST
jobmanager.rpc.port: $E2E_FLINK_RPC_PORT
jobmanager.bind-host: $E2E_HOST
jobmanager.memory.process.size: ${E2E_FLINK_JM_MEMORY:-1024m}
jobmanager.execution.failover-strategy: region
blob.server.port: "$E2E_FLINK_BLOB_PORT"
taskmanager.host: $E2E_HOST
taskmanager.bind-host: $E2E_HOST
taskmanager.rpc.port: "$E2E_FLINK_TM_RPC_PORTS"
taskmanager.numberOfTaskSlots: $E2E_FLINK_SLOTS_PER_TM
taskmanager.memory.process.size: ${E2E_FLINK_TM_MEMORY:-1792m}
# spread a job's subtasks over the TaskManagers rather than filling one first
taskmanager.load-balance.mode: SLOTS
parallelism.default: 2
rest.address: $E2E_HOST
rest.bind-address: $E2E_HOST
rest.port: $E2E_FLINK_REST_PORT
web.upload.dir: $FDIR/upload
io.tmp.dirs: $FDIR/tmp
state.backend.type: $E2E_FLINK_STATE_BACKEND
execution.checkpointing.incremental: $([[ $E2E_FLINK_STATE_BACKEND == rocksdb ]] && echo true || echo false)
execution.checkpointing.dir: file://$FDIR/checkpoints
execution.checkpointing.savepoint-dir: file://$FDIR/savepoints
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 100
restart-strategy.fixed-delay.delay: 2 s
# notice a kill -9'd TaskManager within seconds, not the default 50 s
heartbeat.interval: 2000
heartbeat.timeout: 10000
classloader.resolve-order: child-first
EOF
    cat >"$CONF/log4j.properties" <<'EOF'
monitorInterval = 0
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = MainAppender
logger.pekko.name = org.apache.pekko
logger.pekko.level = WARN
logger.kafka.name = org.apache.kafka
logger.kafka.level = WARN
logger.netty.name = org.apache.flink.shaded.netty4.io.netty.channel.DefaultChannelPipeline
logger.netty.level = ERROR
appender.main.name = MainAppender
appender.main.type = File
appender.main.append = true
appender.main.fileName = ${sys:log.file}
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n
EOF
}

# bash_java_utils GET_JM_RESOURCE_PARAMS|GET_TM_RESOURCE_PARAMS [-D k=v]...: prints the JVM
# params line, then the dynamic configs line, as Flink's bin/config.sh obtains them.
bash_java_utils() {
    local out
    out=$("$E2E_FLINK_JAVA" -Xmx128m -cp "$FLINK_HOME/bin/bash-java-utils.jar:$(flink_classpath)" \
        org.apache.flink.runtime.util.bash.BashJavaUtils "$1" --configDir "$CONF" "${@:2}" 2>"$FDIR/log/bash-java-utils.err") ||
        { cat "$FDIR/log/bash-java-utils.err" >&2; die "BashJavaUtils $1 failed"; }
    echo "$out" | grep '^BASH_JAVA_UTILS_EXEC_RESULT:' | sed 's/^BASH_JAVA_UTILS_EXEC_RESULT://'
}

start_jm() {
    local res jvm dyn opts
    opts=$(java_opts)
    res=$(bash_java_utils GET_JM_RESOURCE_PARAMS)
    jvm=$(echo "$res" | sed -n 1p)
    dyn=$(echo "$res" | sed -n 2p)
    # shellcheck disable=SC2086
    start_bg jobmanager "$FDIR/log/jobmanager.out" \
        "$E2E_FLINK_JAVA" $jvm $opts -XX:+UseG1GC \
        -Dlog.file="$FDIR/log/jobmanager.log" -Dlog4j.configurationFile="file:$CONF/log4j.properties" \
        -cp "$(flink_classpath)" org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint \
        --configDir "$CONF" --executionMode cluster $dyn
    wait_port "$E2E_FLINK_REST_PORT" 90 "flink jobmanager rest"
    wait_until 60 "flink REST /overview" curl -fsS "$REST/overview"
    log "flink $E2E_FLINK_VERSION: started JobManager (StandaloneSessionClusterEntrypoint, Flink $(curl -fsS "$REST/config" | python3 -c 'import json,sys; print(json.load(sys.stdin)["flink-version"])'), Java $(java_version "$E2E_FLINK_JAVA")) pid $(cat "$(pid_file jobmanager)"), REST $REST, rpc $E2E_HOST:$E2E_FLINK_RPC_PORT, heap flags: $jvm"
}

start_tm() {
    local i=$1 res jvm dyn opts
    is_running "taskmanager-$i" && { log "flink $E2E_FLINK_VERSION: tm-$i already running"; return 0; }
    opts=$(java_opts)
    res=$(bash_java_utils GET_TM_RESOURCE_PARAMS)
    jvm=$(echo "$res" | sed -n 1p)
    dyn=$(echo "$res" | sed -n 2p)
    # shellcheck disable=SC2086
    start_bg "taskmanager-$i" "$FDIR/log/taskmanager-$i.out" \
        "$E2E_FLINK_JAVA" $jvm $opts -XX:+UseG1GC -De2e.tm="tm-$i" -Dcdcjoin.native.tmpdir="$FDIR/native" \
        -Dlog.file="$FDIR/log/taskmanager-$i.log" -Dlog4j.configurationFile="file:$CONF/log4j.properties" \
        -cp "$(flink_classpath)" org.apache.flink.runtime.taskexecutor.TaskManagerRunner \
        --configDir "$CONF" $dyn -D "taskmanager.resource-id=tm-$i"
    log "flink $E2E_FLINK_VERSION: started TaskManager tm-$i (TaskManagerRunner) pid $(cat "$(pid_file "taskmanager-$i")"), $E2E_FLINK_SLOTS_PER_TM slots"
}

registered_tms() {
    curl -fsS "$REST/taskmanagers" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["taskmanagers"]))'
}

wait_tms() {
    local n=$1 i c=0
    for ((i = 0; i < 180; i++)); do
        c=$(registered_tms 2>/dev/null || echo 0)
        [[ $c -ge $n ]] && return 0
        sleep 0.5
    done
    die "only $c of $n TaskManagers registered after 90s (logs $FDIR/log)"
}

flink_start() {
    local n=${1:-2} i
    [[ -f $FLINK_HOME/lib/flink-dist-$E2E_FLINK_VERSION.jar ]] || die "Flink is not installed: run e2e/lib/install.sh flink"
    write_config
    start_jm
    for ((i = 1; i <= n; i++)); do start_tm "$i"; done
    wait_tms "$n"
    log "flink $E2E_FLINK_VERSION: cluster up: $(curl -fsS "$REST/overview" | jq_py 'print(d["taskmanagers"], "TaskManagers,", d["slots-total"], "slots (%d free)" % d["slots-available"])')"
}

flink_stop() {
    local f name
    for f in "$E2E_RUN"/pids/taskmanager-*.pid; do
        [[ -e $f ]] || continue
        name=$(basename "$f" .pid)
        stop_pid "$name" 30
    done
    if is_running jobmanager; then
        stop_pid jobmanager 30
    fi
    rm -f "$(pid_file jobmanager)"
    log "flink $E2E_FLINK_VERSION: stopped"
}

jq_py() { python3 -c "import json,sys; d=json.load(sys.stdin); $1"; }

flink_upload() {
    local jar=$1 resp
    [[ -f $jar ]] || die "no such jar: $jar"
    resp=$(curl -fsS -X POST -H "Expect:" -F "jarfile=@$jar" "$REST/jars/upload") || die "upload of $jar failed"
    echo "$resp" | jq_py 'import os; print(os.path.basename(d["filename"]))'
}

flink_run() {
    local id=$1 cls=$2 par=$3 body resp
    shift 3
    body=$(python3 -c 'import json,sys; print(json.dumps({"entryClass": sys.argv[1], "parallelism": int(sys.argv[2]), "programArgsList": sys.argv[3:]}))' "$cls" "$par" "$@")
    resp=$(curl -sS -X POST -H 'Content-Type: application/json' -d "$body" "$REST/jars/$id/run")
    echo "$resp" | jq_py 'print(d["jobid"]) if "jobid" in d else (print("run failed: " + json.dumps(d)[:3000], file=sys.stderr), sys.exit(1))'
}

job_state() { curl -fsS "$REST/jobs/$1" | jq_py 'print(d["state"])'; }

all_running() {
    curl -fsS "$REST/jobs/$1" | jq_py 'sys.exit(0 if d["state"] == "RUNNING" and all(v["status"] == "RUNNING" for v in d["vertices"]) else 1)'
}

flink_wait_running() {
    local job=$1 secs=${2:-120} i st
    for ((i = 0; i < secs * 2; i++)); do
        all_running "$job" 2>/dev/null && return 0
        st=$(job_state "$job" 2>/dev/null || echo "?")
        [[ $st == FAILED || $st == CANCELED ]] && die "job $job is $st: $(curl -fsS "$REST/jobs/$job/exceptions" | head -c 3000)"
        sleep 0.5
    done
    die "job $job not RUNNING after ${secs}s (state $(job_state "$job" 2>/dev/null || echo ?))"
}

flink_tms() {
    local job=$1 v
    for v in $(curl -fsS "$REST/jobs/$job" | jq_py 'print("\n".join(v["id"] for v in d["vertices"]))'); do
        curl -fsS "$REST/jobs/$job/vertices/$v/taskmanagers" | jq_py '
for t in d["taskmanagers"]:
    print(d["name"], t["taskmanager-id"], t["status"], sep="\t")'
    done
}

flink_metric() {
    python3 - "$REST" "$1" "$2" <<'PY'
import json, sys, urllib.parse, urllib.request
rest, job, name = sys.argv[1:]
def get(path):
    with urllib.request.urlopen(rest + path, timeout=20) as r:
        return json.load(r)
total = 0
for v in get("/jobs/" + job)["vertices"]:
    base = "/jobs/%s/vertices/%s/subtasks/metrics" % (job, v["id"])
    ids = [m["id"] for m in get(base) if m["id"].endswith("." + name)]
    if ids:
        query = urllib.parse.urlencode({"get": ",".join(ids), "agg": "sum"})
        total += sum(float(m["sum"]) for m in get(base + "?" + query))
print(int(total))
PY
}

flink_cancel() {
    local job=$1 i
    curl -fsS -X PATCH "$REST/jobs/$job?mode=cancel" >/dev/null
    for ((i = 0; i < 120; i++)); do
        [[ $(job_state "$job" 2>/dev/null) == CANCELED ]] && return 0
        sleep 0.5
    done
    die "job $job not CANCELED after 60s"
}

cmd=${1:-}
shift || true
case $cmd in
    start) flink_start "$@" ;;
    stop) flink_stop ;;
    start-tm) write_config; start_tm "$1" ;;
    stop-tm) stop_pid "taskmanager-$1" 30; log "flink $E2E_FLINK_VERSION: stopped tm-$1" ;;
    kill-tm) kill9_pid "taskmanager-$1"; log "flink $E2E_FLINK_VERSION: kill -9 tm-$1" ;;
    wait-tms) wait_tms "$1" ;;
    upload) flink_upload "$1" ;;
    run) flink_run "$@" ;;
    submit) jar=$1; shift; id=$(flink_upload "$jar"); flink_run "$id" "$@" ;;
    wait-running) flink_wait_running "$@" ;;
    status) job_state "$1" ;;
    tms) flink_tms "$1" ;;
    vertices) curl -fsS "$REST/jobs/$1" | jq_py 'print(" | ".join(v["name"] + " (p=%d)" % v["parallelism"] for v in d["vertices"]))' ;;
    metric) flink_metric "$1" "$2" ;;
    backend) curl -fsS "$REST/jobs/$1/checkpoints/config" | jq_py 'print(d.get("state_backend", "?"))' ;;
    checkpoints) curl -fsS "$REST/jobs/$1/checkpoints" | jq_py 'print(d["counts"]["completed"])' ;;
    restored) curl -fsS "$REST/jobs/$1/checkpoints" | jq_py 'r = (d.get("latest") or {}).get("restored"); print("checkpoint %s" % r["id"] if r else "none")' ;;
    failures) curl -fsS "$REST/jobs/$1/exceptions" | jq_py 'print(len((d.get("exceptionHistory") or {}).get("entries") or []))' ;;
    last-failure) curl -fsS "$REST/jobs/$1/exceptions" | jq_py 'e = (d.get("exceptionHistory") or {}).get("entries") or []; print(e[0]["stacktrace"].split("\n")[0][:400] if e else "none")' ;;
    cancel) flink_cancel "$1" ;;
    overview) curl -fsS "$REST/overview"; echo ;;
    *) die "usage: $0 start [N]|stop|start-tm I|stop-tm I|kill-tm I|upload JAR|run ID CLASS P ARGS..|submit JAR CLASS P ARGS..|wait-running JOB|status JOB|tms JOB|vertices JOB|metric JOB NAME|backend JOB|checkpoints JOB|restored JOB|failures JOB|last-failure JOB|cancel JOB|overview" ;;
esac
