#!/usr/bin/env bash
# Kafka Connect (standalone worker, org.apache.kafka:connect-runtime from Maven Central) running
# Debezium's Postgres connector (io.debezium:debezium-connector-postgres, as a plugin directory)
# with Kafka's JSON converter: plugin.name=pgoutput, a filtered publication over public.users,
# public.domains and the star schema's tables ($E2E_STAR_TABLES), one topic per table ($E2E_TOPIC_PREFIX.public.<table>, $E2E_TOPIC_PARTITIONS
# partitions, created by Connect), tombstones after deletes. REST on 127.0.0.1:$E2E_CONNECT_PORT.
# With E2E_FIDELITY=1 (the default) two more connectors run in the same worker for e2e/fidelity.sh,
# on fid_items, fid_accounts and the signal table fid_signal, each with its own topic prefix, slot
# and publication, configured differently (see fidelity_connector). Connectors are given as
# properties files on the command line, so a restarted worker runs them again; their offsets are
# in one file ($E2E_RUN/connect/offsets.dat), which fidelity.sh rewinds for a re-delivery.
# The source tables must exist before `start`.
#
# usage: e2e/lib/connect.sh start|stop|status [CONNECTOR]|connectors
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

KAFKA_HOME=$E2E_CACHE/kafka-$E2E_KAFKA_VERSION
PLUGINS=$E2E_CACHE/connect-plugins
CDIR=$E2E_RUN/connect
CONNECTOR=e2e-postgres
REST=http://$E2E_HOST:$E2E_CONNECT_PORT

# connectors: the names of the connectors this worker runs
connectors() {
    echo "$CONNECTOR"
    [[ $E2E_FIDELITY == 1 ]] && printf '%s\n' "$E2E_FID_CONNECTOR_A" "$E2E_FID_CONNECTOR_B"
    return 0
}

# fidelity_connector NAME PREFIX SETTINGS...: the properties of one fidelity connector. Both read
# the same tables through their own slot and publication; flush.lsn.source=false keeps each
# slot's confirmed position where it was created, so that a worker restarted with an earlier
# offsets file really replays from the earlier LSN (Postgres never streams from before a slot's
# confirmed position); signal.data.collection lets an INSERT into fid_signal start an
# incremental snapshot, read in chunks of 50 rows between streamed changes.
fidelity_connector() {
    local name=$1 prefix=$2
    shift 2
    cat <<EOF
name=$name
connector.class=io.debezium.connector.postgresql.PostgresConnector
tasks.max=1
plugin.name=pgoutput
database.hostname=$E2E_HOST
database.port=$E2E_PG_PORT
database.user=$E2E_PG_USER
database.password=unused-trust-auth
database.dbname=$E2E_PG_DB
topic.prefix=$prefix
schema.include.list=public
table.include.list=public.fid_items,public.fid_accounts,public.fid_signal
slot.name=${prefix}_slot
slot.drop.on.stop=false
flush.lsn.source=false
publication.name=${prefix}_pub
publication.autocreate.mode=filtered
snapshot.mode=initial
signal.data.collection=public.fid_signal
incremental.snapshot.chunk.size=50
tombstones.on.delete=true
poll.interval.ms=100
topic.creation.default.replication.factor=1
topic.creation.default.partitions=$E2E_TOPIC_PARTITIONS
EOF
    printf '%s\n' "$@"
}

write_config() {
    mkdir -p "$CDIR/logs"
    cat >"$CDIR/worker.properties" <<EOF
bootstrap.servers=$E2E_HOST:$E2E_KAFKA_PORT
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=$E2E_JSON_SCHEMAS
value.converter.schemas.enable=$E2E_JSON_SCHEMAS
offset.storage.file.filename=$CDIR/offsets.dat
offset.flush.interval.ms=1000
plugin.path=$PLUGINS
plugin.discovery=hybrid_warn
listeners=http://$E2E_HOST:$E2E_CONNECT_PORT
rest.advertised.host.name=$E2E_HOST
rest.advertised.port=$E2E_CONNECT_PORT
topic.creation.enable=true
EOF
    cat >"$CDIR/$CONNECTOR.properties" <<EOF
name=$CONNECTOR
connector.class=io.debezium.connector.postgresql.PostgresConnector
tasks.max=1
plugin.name=pgoutput
database.hostname=$E2E_HOST
database.port=$E2E_PG_PORT
database.user=$E2E_PG_USER
database.password=unused-trust-auth
database.dbname=$E2E_PG_DB
topic.prefix=$E2E_TOPIC_PREFIX
schema.include.list=public
table.include.list=public.users,public.domains$(printf ',public.%s' $E2E_STAR_TABLES)
slot.name=e2e_slot
slot.drop.on.stop=false
publication.name=e2e_pub
publication.autocreate.mode=filtered
snapshot.mode=initial
tombstones.on.delete=true
poll.interval.ms=100
topic.creation.default.replication.factor=1
topic.creation.default.partitions=$E2E_TOPIC_PARTITIONS
EOF
    if [[ $E2E_FIDELITY == 1 ]]; then
        # A: Debezium's defaults for values; B: every value encoding changed
        fidelity_connector "$E2E_FID_CONNECTOR_A" "$E2E_FID_PREFIX_A" decimal.handling.mode=precise \
            time.precision.mode=adaptive binary.handling.mode=bytes >"$CDIR/$E2E_FID_CONNECTOR_A.properties"
        fidelity_connector "$E2E_FID_CONNECTOR_B" "$E2E_FID_PREFIX_B" decimal.handling.mode=string \
            time.precision.mode=connect binary.handling.mode=hex >"$CDIR/$E2E_FID_CONNECTOR_B.properties"
    fi
    cat >"$CDIR/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = $CDIR/logs/connect.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %X{dbz.connectorLogicalName} %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = org.apache.kafka
logger.kafka.level = WARN
logger.connect.name = org.apache.kafka.connect.runtime.Worker
logger.connect.level = INFO
logger.dbz.name = io.debezium
logger.dbz.level = INFO
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
EOF
}

connector_state() {
    # prints "<connector state> <task0 state>" of connector $1 (default e2e-postgres), e.g. "RUNNING RUNNING"
    curl -fsS "$REST/connectors/${1:-$CONNECTOR}/status" 2>/dev/null | python3 -c '
import json, sys
raw = sys.stdin.read()
if not raw.strip():
    print("NONE NONE"); sys.exit(0)
s = json.loads(raw)
t = s.get("tasks") or [{}]
print(s["connector"]["state"], t[0].get("state", "NONE"))
if t[0].get("state") == "FAILED": print(t[0].get("trace", "")[:2000], file=sys.stderr)'
}

connect_start() {
    [[ -d $KAFKA_HOME/lib && -d $PLUGINS/debezium-connector-postgres ]] ||
        die "Kafka Connect / Debezium not installed: run e2e/lib/install.sh kafka debezium"
    write_config
    local props=() c
    for c in $(connectors); do props+=("$CDIR/$c.properties"); done
    start_bg connect "$CDIR/connect.out" \
        "$E2E_JAVA" -Xms128m -Xmx"${E2E_CONNECT_HEAP:-512m}" -XX:+UseG1GC -Djava.awt.headless=true \
        -Dlog4j2.configurationFile="$CDIR/log4j2.properties" \
        -cp "$KAFKA_HOME/lib/*" org.apache.kafka.connect.cli.ConnectStandalone \
        "$CDIR/worker.properties" "${props[@]}"
    wait_port "$E2E_CONNECT_PORT" 90 "kafka connect"
    local i st=""
    for c in $(connectors); do
        for ((i = 0; i < 180; i++)); do
            st=$(connector_state "$c" || true)
            [[ $st == "RUNNING RUNNING" ]] && break
            [[ $st == *FAILED* ]] && { connector_state "$c" || true; die "debezium connector $c failed: $st (log $CDIR/logs/connect.log)"; }
            is_running connect || die "kafka connect exited (log $CDIR/connect.out, $CDIR/logs/connect.log)"
            sleep 0.5
        done
        [[ $st == "RUNNING RUNNING" ]] || die "debezium connector $c not running after 90s: '$st'"
    done
    local ver
    ver=$(curl -fsS "$REST/connector-plugins" | python3 -c '
import json, sys
print(next((p["version"] for p in json.load(sys.stdin) if p["class"].endswith("PostgresConnector")), "?"))')
    log "connect: started Kafka Connect $E2E_KAFKA_VERSION (standalone) pid $(cat "$(pid_file connect)") on $REST; Debezium PostgresConnector $ver RUNNING: $(connectors | paste -sd' ' -) (pgoutput, JSON schemas.enable=$E2E_JSON_SCHEMAS)"
}

connect_stop() {
    if is_running connect; then
        stop_pid connect 30
        log "connect: stopped"
    fi
    rm -f "$(pid_file connect)"
}

case ${1:-} in
    start) connect_start ;;
    stop) connect_stop ;;
    status) connector_state "${2:-}" ;;
    connectors) connectors ;;
    *) die "usage: $0 start|stop|status [CONNECTOR]|connectors" ;;
esac
