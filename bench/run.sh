#!/usr/bin/env bash
# The comparison benchmark of issue 4 (native vs pure Java vs Flink SQL) and its JMH benchmarks.
#
#   bench/run.sh                         # the reported configuration (see bench/README.md)
#   bench/run.sh --events 200000 --rounds 1 --phases throughput,report   # a quick look
#   bench/run.sh --events 1000000 --config hot --joins LEFT --parallelisms 1 --phases throughput,report
#                                        # hot keys: the hottest user holds ~15k domains (bench/README.md)
#   SKIP_BUILD=1 bench/run.sh --phases report --out results/<dir>        # rebuild a report
#   CDCJOIN_FLINK_LINE=1.20 bench/run.sh ...                              # on Flink 1.20 (default: 2.3)
#
# Builds the main artifact for the Flink line into its own folder (-Dcdcjoin.build.dir, so it does
# not collide with other builds in java/target), installs it for bench/pom.xml, and runs the suite
# with a private copy of that JAR (a later `mvn install` elsewhere cannot change a running benchmark).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LINE=${CDCJOIN_FLINK_LINE:-2.3}
case $LINE in
  2.3) LINE_ARGS=(); VERSION=0.1.0-2.2-SNAPSHOT; TARGET=bench/target; DEFAULT_BUILD=/tmp/build-bench-main ;;
  1.20) LINE_ARGS=(-Dflink.line=1.20); VERSION=0.1.0-1.20-SNAPSHOT; TARGET=bench/target/flink-1.20
        DEFAULT_BUILD=/tmp/build-bench-main-1.20 ;;
  *) echo "CDCJOIN_FLINK_LINE must be 2.3 or 1.20, not $LINE" >&2; exit 2 ;;
esac
BUILD=${CDCJOIN_BENCH_BUILD_DIR:-$DEFAULT_BUILD}
cd "$ROOT"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  mvn -B -q install -DskipTests "${LINE_ARGS[@]}" -Dcdcjoin.build.dir="$BUILD"
  # clean: classes compiled against an older product JAR are not recompiled otherwise, and a
  # changed signature (a setter moved to a base builder) fails at run time with NoSuchMethodError
  (cd bench && mvn -B -q clean package -DskipTests "${LINE_ARGS[@]}")
  mkdir -p "$TARGET/lib"
  cp "$BUILD/cdcjoin-flink-$VERSION.jar" "$TARGET/lib/cdcjoin-flink.jar"
fi
CP=$TARGET/classes:$TARGET/lib/cdcjoin-flink.jar:$(tr ':' '\n' < "$TARGET/classpath.txt" | grep -v '/cdcjoin-flink-' | paste -sd: -)
exec java -Xmx1g -cp "$CP" dev.cdcjoin.bench.Suite --command "${CDCJOIN_FLINK_LINE:+CDCJOIN_FLINK_LINE=$LINE }bench/run.sh $*" "$@"
