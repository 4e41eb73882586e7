#!/usr/bin/env bash
# The product JAR in Flink's lib/ only: a short-lived standalone cluster (1 JobManager + 1
# TaskManager, lib/flink.sh) from a copy of the Flink distribution whose lib/ also holds the
# product JAR (cdcjoin-flink, as `mvn install` builds it: its jackson-core shaded and relocated, its
# native library inside), and a job JAR that does not contain the product (e2e/jobs/lib-join,
# dependency "provided"), submitted once per engine. Every product class is then loaded by Flink's
# own class loader: a dependency the product JAR does not carry (as jackson-core once was) fails
# the job with NoClassDefFoundError.
#
# usage: e2e/lib/libjar.sh RESULTS_FILE
#   appends "name|PASS/FAIL|detail" lines to RESULTS_FILE (run.sh's summary format); exit 0 when
#   the check ran (its verdict is in the file), 1 when it could not run. Uses the main cluster's
#   ports: run it while that cluster is down. Its state: $E2E_RUN/libjar (a nested run directory).
#
# Needs e2e/lib/install.sh flink join (the Flink distribution, the product JAR and the job JAR in
# $E2E_JOBS, the Flink line's).
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
LIB=$E2E_DIR/lib

RESULTS=$1
PRODUCT_JAR=$E2E_JOBS/cdcjoin-flink.jar
JOB_JAR=$E2E_JOBS/e2e-lib-join.jar
JOB_CLASS=dev.cdcjoin.flink.e2e.LibJoinJob
JOB_SECS=60
OUT=$E2E_RUN/libjar
HOME_COPY=$OUT/flink-home

# Each engine's expected final rows: LibJoinJob's fixed input, LEFT join.
EXPECTED='[1, anna, 11, 1, b.com]
[2, bo, null, null, null]'

result() { echo "$1|$2|$3" >>"$RESULTS"; log "check: $1: $2 ($3)"; }

# A Flink home whose lib/ is the installed one plus the product JAR (links, nothing copied but it).
flink_home_with_product() {
    local dist=$E2E_CACHE/flink-$E2E_FLINK_VERSION d
    [[ -f $dist/lib/flink-dist-$E2E_FLINK_VERSION.jar ]] || die "Flink is not installed: run e2e/lib/install.sh flink"
    [[ -f $PRODUCT_JAR && -f $JOB_JAR ]] || die "no product or lib/ job JAR in $E2E_JOBS: run e2e/lib/install.sh join"
    mkdir -p "$HOME_COPY/lib"
    for d in "$dist"/*; do
        [[ $(basename "$d") == lib ]] || ln -sfn "$d" "$HOME_COPY/$(basename "$d")"
    done
    ln -sf "$dist"/lib/*.jar "$HOME_COPY/lib/"
    cp "$PRODUCT_JAR" "$HOME_COPY/lib/cdcjoin-flink.jar"
}

# The changelog a job printed (lines "libjar-ENGINE> +I[...]"), materialized: final rows, sorted.
materialized() {
    python3 - "$1" "$OUT/flink/log/taskmanager-1.out" <<'EOF'
import collections, sys
prefix = "libjar-%s> " % sys.argv[1]
rows = collections.Counter()
for line in open(sys.argv[2], encoding="utf-8"):
    if line.startswith(prefix):
        change = line[len(prefix):].rstrip("\n")
        rows[change[2:]] += 1 if change[:2] in ("+I", "+U") else -1
# a retraction of a row never emitted shows as "-row", so it cannot cancel out unseen
out = []
for row, n in rows.items():
    out += [row] * n if n > 0 else ["-" + row] * -n
print("\n".join(sorted(out)))
EOF
}

# run_engine ENGINE: submits the job, waits until it FINISHED (a failure ends the wait at once,
# whatever the restart strategy), compares what it printed.
run_engine() {
    local engine=$1 job st got t i
    t=$(date +%s)
    job=$("$LIB/flink.sh" submit "$JOB_JAR" "$JOB_CLASS" 2 --engine "$engine") ||
        { result "product in lib/ only ($E2E_FLINK_VERSION): $engine" FAIL "submission failed: see the REST answer above"; return; }
    for ((i = 0; i < JOB_SECS * 2; i++)); do
        st=$("$LIB/flink.sh" status "$job")
        [[ $st == FINISHED || $st == FAILED || $st == CANCELED ]] && break
        [[ $("$LIB/flink.sh" failures "$job") -gt 0 ]] && break
        sleep 0.5
    done
    if [[ $st != FINISHED ]]; then
        result "product in lib/ only ($E2E_FLINK_VERSION): $engine" FAIL "job $job $st: $("$LIB/flink.sh" last-failure "$job")"
        [[ $st == RUNNING || $st == RESTARTING ]] && "$LIB/flink.sh" cancel "$job"
        return
    fi
    got=$(materialized "$engine")
    if [[ $got == "$EXPECTED" ]]; then
        result "product in lib/ only ($E2E_FLINK_VERSION): $engine" PASS "job FINISHED in $(($(date +%s) - t)) s, changelog of $(grep -c "^libjar-$engine> " "$OUT/flink/log/taskmanager-1.out") rows materializes to the expected $(echo "$got" | wc -l) rows"
    else
        result "product in lib/ only ($E2E_FLINK_VERSION): $engine" FAIL "materialized rows: $(echo "$got" | paste -sd';' -), expected: $(echo "$EXPECTED" | paste -sd';' -)"
    fi
}

main() {
    local t0 inside
    t0=$(date +%s)
    mkdir -p "$OUT"
    flink_home_with_product
    inside=$(unzip -l "$JOB_JAR" | grep -c 'dev/cdcjoin/flink/CdcJoin' || true)
    [[ $inside == 0 ]] || die "$JOB_JAR contains the product ($inside CdcJoin classes): it must come from lib/"
    # the nested run: its own pids, logs, config and native-library directory under $OUT
    export E2E_RUN=$OUT E2E_FLINK_HOME=$HOME_COPY
    trap '"$LIB/flink.sh" stop' EXIT
    "$LIB/flink.sh" start 1
    run_engine NATIVE
    run_engine JAVA
    "$LIB/flink.sh" stop
    trap - EXIT
    log "libjar: product JAR in lib/, job JAR $(du -k "$JOB_JAR" | cut -f1) KB without it, both engines: $(($(date +%s) - t0)) s"
}

main
