#!/usr/bin/env bash
# A single-node Kafka broker in KRaft mode (combined broker+controller), from the jars that
# install.sh resolved from Maven Central: `kafka.tools.StorageTool format` then `kafka.Kafka`.
# Listens on 127.0.0.1:$E2E_KAFKA_PORT (controller on $E2E_KAFKA_CONTROLLER_PORT).
#
# usage: e2e/lib/kafka.sh start|stop|offsets TOPIC...|topics
#   offsets TOPIC...  prints "TOPIC TOTAL" per topic: the sum of end offsets over its partitions,
#                     i.e. how many records were ever written to it (nothing is compacted here).
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

KAFKA_HOME=$E2E_CACHE/kafka-$E2E_KAFKA_VERSION
KDIR=$E2E_RUN/kafka
BOOTSTRAP=$E2E_HOST:$E2E_KAFKA_PORT

kafka_java() {
    [[ -d $KAFKA_HOME/lib ]] || die "Kafka is not installed: run e2e/lib/install.sh kafka"
    "$E2E_JAVA" -Xms128m -Xmx"${E2E_KAFKA_HEAP:-512m}" -XX:+UseG1GC -Djava.awt.headless=true \
        -Dlog4j2.configurationFile="$KDIR/log4j2.properties" -Dkafka.logs.dir="$KDIR/logs" \
        -cp "$KAFKA_HOME/lib/*" "$@"
}

write_config() {
    mkdir -p "$KDIR/data" "$KDIR/logs"
    cat >"$KDIR/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$E2E_HOST:$E2E_KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://$E2E_HOST:$E2E_KAFKA_PORT,CONTROLLER://$E2E_HOST:$E2E_KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$E2E_HOST:$E2E_KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KDIR/data
num.partitions=$E2E_TOPIC_PARTITIONS
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.retention.hours=24
num.network.threads=2
num.io.threads=2
EOF
    cat >"$KDIR/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = $KDIR/logs/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = WARN
logger.apache.name = org.apache.kafka
logger.apache.level = WARN
logger.started.name = kafka.server.KafkaRaftServer
logger.started.level = INFO
EOF
}

kafka_start() {
    write_config
    if [[ ! -f $KDIR/data/meta.properties ]]; then
        local cluster_id
        cluster_id=$(kafka_java kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)
        kafka_java kafka.tools.StorageTool format -t "$cluster_id" -c "$KDIR/server.properties" >"$KDIR/format.log" 2>&1 ||
            { cat "$KDIR/format.log"; die "kafka storage format failed"; }
    fi
    start_bg kafka "$KDIR/kafka.out" \
        "$E2E_JAVA" -Xms128m -Xmx"${E2E_KAFKA_HEAP:-512m}" -XX:+UseG1GC -Djava.awt.headless=true \
        -Dlog4j2.configurationFile="$KDIR/log4j2.properties" -Dkafka.logs.dir="$KDIR/logs" \
        -cp "$KAFKA_HOME/lib/*" kafka.Kafka "$KDIR/server.properties"
    wait_port "$E2E_KAFKA_PORT" 60 kafka
    # the broker is usable once it answers a metadata request
    wait_until 60 "kafka answers metadata requests" kafka_java org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --list
    log "kafka: started $E2E_KAFKA_VERSION (KRaft, broker+controller) pid $(cat "$(pid_file kafka)") on $BOOTSTRAP, logs $KDIR"
}

kafka_stop() {
    if is_running kafka; then
        stop_pid kafka 30
        log "kafka: stopped"
    fi
    rm -f "$(pid_file kafka)"
}

kafka_offsets() {
    local t
    local out
    out=$(kafka_java org.apache.kafka.tools.GetOffsetShell --bootstrap-server "$BOOTSTRAP" --time -1 2>/dev/null) || true
    for t in "$@"; do
        echo "$out" | awk -F: -v t="$t" '$1 == t { n += $3 } END { printf "%s %d\n", t, n }'
    done
}

case ${1:-} in
    start) kafka_start ;;
    stop) kafka_stop ;;
    offsets) shift; kafka_offsets "$@" ;;
    topics) kafka_java org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --describe 2>/dev/null ;;
    java) shift; kafka_java "$@" ;;
    *) die "usage: $0 start|stop|offsets TOPIC...|topics|java CLASS ARGS..." ;;
esac
