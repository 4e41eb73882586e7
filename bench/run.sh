#!/usr/bin/env bash
# The comparison benchmark of issue 4 (native vs pure Java vs Flink SQL) and its JMH benchmarks.
#
#   bench/run.sh                         # the reported configuration (see bench/README.md)
#   bench/run.sh --events 200000 --rounds 1 --phases throughput,report   # a quick look
#   bench/run.sh --events 1000000 --config hot --joins LEFT --parallelisms 1 --phases throughput,report
#                                        # hot keys: the hottest user holds ~15k domains (bench/README.md)
#   SKIP_BUILD=1 bench/run.sh --phases report --out results/<dir>        # rebuild a report
#
# Builds the main artifact into its own folder (-Dcdcjoin.build.dir, so it does not collide with
# other builds in java/target), installs it for bench/pom.xml, and runs the suite with a private
# copy of that JAR (a later `mvn install` elsewhere cannot change a running benchmark).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${CDCJOIN_BENCH_BUILD_DIR:-/tmp/build-bench-main}
cd "$ROOT"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  mvn -B -q install -DskipTests -Dcdcjoin.build.dir="$BUILD"
  (cd bench && mvn -B -q package -DskipTests)
  mkdir -p bench/target/lib
  cp "$BUILD/cdcjoin-flink-0.1.0-2.2-SNAPSHOT.jar" bench/target/lib/cdcjoin-flink.jar
fi
CP=bench/target/classes:bench/target/lib/cdcjoin-flink.jar:$(tr ':' '\n' < bench/target/classpath.txt | grep -v '/cdcjoin-flink-' | paste -sd: -)
exec java -Xmx1g -cp "$CP" dev.cdcjoin.bench.Suite --command "bench/run.sh $*" "$@"
