#!/usr/bin/env bash
# Installs everything the e2e pipeline needs, idempotently, from package registries only:
#   PostgreSQL            Debian packages (apt-get)                      /usr/lib/postgresql/15
#   Kafka broker+Connect  Maven Central (e2e/deps/kafka/pom.xml)         $E2E_CACHE/kafka-<v>/lib
#   Debezium PG connector Maven Central (e2e/deps/debezium/pom.xml)      $E2E_CACHE/connect-plugins/...
#   Flink 2.3.0 or 1.20.3 PyPI apache-flink-libraries (flink-dist, lib/) $E2E_CACHE/flink-<v>
#                         (E2E_FLINK_LINE=2.3, the default, or 1.20)
#   proof job             built with Maven (e2e/jobs/topic-count)        $E2E_JOBS
# Each step is skipped when its output is there and its inputs (pom) did not change.
#
#   join job              the product (repo root) + e2e/jobs/users-domains-join  $E2E_JOBS
# The jobs and the product are built for the Flink line (common.sh: E2E_JOBS is $E2E_CACHE/jobs for
# 2.3, $E2E_CACHE/jobs-1.20 for 1.20).
#
# usage: e2e/lib/install.sh [all|postgres|kafka|debezium|flink|jobs|join]...
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

MVN=(mvn -B -q -Dstyle.color=never)
mvn_q() {
    # Maven quietly; its output is shown only when it fails
    local out
    out=$(mktemp)
    if ! "${MVN[@]}" "$@" >"$out" 2>&1; then
        cat "$out" >&2
        rm -f "$out"
        die "mvn $* failed"
    fi
    rm -f "$out"
}

stamp_ok() { [[ -f $1 && "$(cat "$1")" == "$2" ]]; }
hash_of() { cat "$@" | sha256sum | cut -c1-16; }

apt_install() {
    [[ $(id -u) -eq 0 ]] || die "need root to apt-get install $*"
    if [[ ! -f $E2E_CACHE/.apt-updated ]] || ! apt-cache policy "$1" | grep -q Candidate; then
        apt-get update -qq
        mkdir -p "$E2E_CACHE" && touch "$E2E_CACHE/.apt-updated"
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

install_tools() {
    command -v java >/dev/null || apt_install openjdk-17-jdk-headless
    command -v mvn >/dev/null || apt_install maven
    command -v curl >/dev/null || apt_install curl
    command -v python3 >/dev/null || apt_install python3
    command -v unzip >/dev/null || apt_install unzip
    python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip   # pip download (Flink's wheel)
    local jv
    jv=$("$E2E_JAVA" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}')
    [[ ${jv%%.*} -ge 17 ]] || die "Java 17+ needed (Kafka 4, Debezium 3, Flink 2); found $jv"
}

install_postgres() {
    if ! pg_bin >/dev/null || ! command -v psql >/dev/null; then
        log "install: PostgreSQL $E2E_PG_MAJOR from Debian packages"
        apt_install "postgresql-$E2E_PG_MAJOR" "postgresql-client-$E2E_PG_MAJOR"
    fi
    log "install: PostgreSQL ok: $("$(pg_bin)/postgres" --version)"
}

install_kafka() {
    local pom=$E2E_DIR/deps/kafka/pom.xml dir=$E2E_CACHE/kafka-$E2E_KAFKA_VERSION h
    h=$(hash_of "$pom")
    if ! stamp_ok "$dir/.stamp" "$h"; then
        log "install: Kafka $E2E_KAFKA_VERSION (broker, tools, Connect runtime, JSON converter) from Maven Central"
        rm -rf "$dir" && mkdir -p "$dir"
        mvn_q -f "$pom" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dir/lib"
        echo "$h" >"$dir/.stamp"
    fi
    log "install: Kafka ok: $(find "$dir/lib" -name '*.jar' | wc -l) jars in $dir/lib"
}

install_debezium() {
    local pom=$E2E_DIR/deps/debezium/pom.xml dir=$E2E_CACHE/connect-plugins/debezium-connector-postgres h
    h=$(hash_of "$pom")
    if ! stamp_ok "$dir/.stamp" "$h"; then
        log "install: Debezium $E2E_DEBEZIUM_VERSION Postgres connector (Connect plugin) from Maven Central"
        rm -rf "$dir" && mkdir -p "$dir"
        # Kafka's own API, client and compression libraries come from the worker, as in
        # Debezium's plugin archive.
        mvn_q -f "$pom" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dir" \
            -DexcludeArtifactIds=connect-api,kafka-clients,slf4j-api,snappy-java,lz4-java,zstd-jni
        echo "$h" >"$dir/.stamp"
    fi
    log "install: Debezium ok: $(find "$dir" -name '*.jar' | wc -l) jars in $dir"
}

# The Flink distribution of the line (common.sh: E2E_FLINK_LINE) from PyPI's apache-flink-libraries:
# a wheel (pyflink/lib/...) for 2.x; for 1.20 PyPI has only the source archive, which carries the
# same jars under deps/ (pip builds only its metadata to download it).
install_flink() {
    local dir=$E2E_CACHE/flink-$E2E_FLINK_VERSION dl=$E2E_CACHE/downloads/flink-$E2E_FLINK_VERSION
    local form archive
    if [[ $E2E_FLINK_LINE == 1.20 ]]; then form=--no-binary=:all:; else form=--only-binary=:all:; fi
    if ! stamp_ok "$dir/.stamp" "$E2E_FLINK_VERSION"; then
        mkdir -p "$dl"
        archive=$(find "$dl" -maxdepth 1 -name 'apache*flink*libraries*' | head -1)
        if [[ -z $archive ]]; then
            log "install: Flink $E2E_FLINK_VERSION from PyPI (apache-flink-libraries ships flink-dist and lib/)"
            python3 -m pip download -q --no-deps "$form" -d "$dl" \
                "apache-flink-libraries==$E2E_FLINK_VERSION"
            archive=$(find "$dl" -maxdepth 1 -name 'apache*flink*libraries*' | head -1)
        fi
        rm -rf "$dir" && mkdir -p "$dir"
        # Lay it out as a Flink distribution: lib/ (flink-dist, table, log4j), opt/, plugins/,
        # and bin/bash-java-utils.jar (what Flink's own start scripts use to derive memory flags).
        python3 - "$archive" "$dir" <<'EOF'
import os, sys, tarfile, zipfile
archive, out = sys.argv[1], sys.argv[2]
if archive.endswith('.whl'):
    z = zipfile.ZipFile(archive)
    entries = [(n, lambda n=n: z.open(n)) for n in z.namelist() if not n.endswith('/')]
    root = 'pyflink/'
else:
    t = tarfile.open(archive)
    entries = [(m.name, lambda m=m: t.extractfile(m)) for m in t.getmembers() if m.isfile()]
    root = os.path.basename(archive)[: -len('.tar.gz')] + '/deps/'
for name, open_entry in entries:
    for part in ('lib/', 'opt/', 'plugins/', 'bin/'):
        if name.startswith(root + part) and not name.startswith(root + 'opt/python/'):
            dst = os.path.join(out, name[len(root):])
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open_entry() as src, open(dst, 'wb') as f:
                f.write(src.read())
EOF
        # the Python-only opt jars are not needed by a Java job; keep the directory lean
        rm -f "$dir"/opt/flink-python-*.jar
        echo "$E2E_FLINK_VERSION" >"$dir/.stamp"
        rm -rf "$dl"   # 230-329 MB, all of it now under $dir
    fi
    [[ -f $dir/lib/flink-dist-$E2E_FLINK_VERSION.jar ]] || die "flink-dist missing in $dir/lib"
    log "install: Flink ok: $dir ($(ls "$dir/lib" | wc -l) jars in lib/)"
}

install_jobs() {
    local src=$E2E_DIR/jobs/topic-count out=$E2E_JOBS h
    h=$( (find "$src/pom.xml" "$src/src" -type f -print0 | sort -z | xargs -0 cat; echo "${E2E_JOB_MVN_ARGS[*]}") | sha256sum | cut -c1-16)
    if ! stamp_ok "$out/topic-count.stamp" "$h" || [[ ! -f $out/e2e-topic-count.jar ]]; then
        log "install: building the proof job e2e/jobs/topic-count (Maven)"
        mkdir -p "$out"
        # clean: on a rebuild the jar plugin would otherwise keep the previous (shaded) JAR and
        # the shade plugin re-shade it, old native library included
        mvn_q -f "$src/pom.xml" clean package "${E2E_JOB_MVN_ARGS[@]}"
        cp "$src/target/e2e-topic-count-0.jar" "$out/e2e-topic-count.jar"
        echo "$h" >"$out/topic-count.stamp"
    fi
    log "install: proof job ok: $out/e2e-topic-count.jar"
}

# The product's join job: the product (repository root, Maven + cargo) installed into ~/.m2, then
# e2e/jobs/users-domains-join packaged with it (maven-shade-plugin) -> $E2E_JOBS; beside it
# the product JAR itself (cdcjoin-flink.jar) and e2e/jobs/lib-join, a job JAR without the product
# (lib/libjar.sh runs it with the product in Flink's lib/), all for the Flink line. Rebuilt
# when the product's or the job's sources change. The root pom's output goes to
# $E2E_PRODUCT_BUILD_DIR-<line> (-Dcdcjoin.build.dir), not java/target, so that it does not collide with
# other builds of the same checkout; cargo's to the repository's target/ (E2E_CARGO_TARGET_DIR moves it).
install_join() {
    local repo src=$E2E_DIR/jobs/users-domains-join lsrc=$E2E_DIR/jobs/lib-join out=$E2E_JOBS
    local h jar so_built so_job
    local build=${E2E_PRODUCT_BUILD_DIR:-/tmp/build-e2e-main}-$E2E_FLINK_LINE
    repo=$(cd "$E2E_DIR/.." && pwd)
    jar=$out/e2e-users-domains-join.jar
    h=$( (cd "$repo" && find pom.xml Cargo.toml Cargo.lock java/src/main rust "$src/pom.xml" "$src/src" \
        "$lsrc/pom.xml" "$lsrc/src" \
        -path rust/fuzz -prune -o -type f ! -path '*/target/*' -print0 | sort -z | xargs -0 sha256sum; echo "${E2E_JOB_MVN_ARGS[*]}") | sha256sum | cut -c1-16)
    if ! stamp_ok "$out/users-domains-join.stamp" "$h" || [[ ! -f $jar || ! -f $out/cdcjoin-flink.jar || ! -f $out/e2e-lib-join.jar ]]; then
        export PATH="$HOME/.cargo/bin:$PATH"
        command -v cargo >/dev/null || die "cargo (Rust) is needed to build the product's native library: https://rustup.rs"
        log "install: building the product for Flink $E2E_FLINK_LINE (mvn install from $repo ${E2E_PRODUCT_MVN_ARGS[*]}, -Dcdcjoin.build.dir=$build; cargo builds the native library)"
        mvn_q -f "$repo/pom.xml" install -DskipTests -Dcdcjoin.build.dir="$build" "${E2E_PRODUCT_MVN_ARGS[@]}" \
            ${E2E_CARGO_TARGET_DIR:+-Dcargo.target.dir="$E2E_CARGO_TARGET_DIR"}
        log "install: building the join job e2e/jobs/users-domains-join (Maven, product + Kafka connector + JDBC driver shaded in)"
        # clean: on a rebuild the jar plugin would otherwise keep the previous (shaded) JAR and
        # the shade plugin re-shade it, old native library included
        mvn_q -f "$src/pom.xml" clean package "${E2E_JOB_MVN_ARGS[@]}"
        # ~/.m2 is shared: check that the job bundles the library just built, not another checkout's
        so_built=$(sha256sum "$build/classes/dev/cdcjoin/flink/nativelib/linux/amd64/libcdcjoin_jni.so" | cut -c1-64)
        so_job=$(unzip -p "$src/target/e2e-users-domains-join-0.jar" dev/cdcjoin/flink/nativelib/linux/amd64/libcdcjoin_jni.so | sha256sum | cut -c1-64)
        [[ $so_built == "$so_job" ]] || die "the job JAR's native library is not the one just built (another install into ~/.m2 in between?): run again"
        log "install: building e2e/jobs/lib-join (Maven, the product provided: a job JAR without it)"
        mvn_q -f "$lsrc/pom.xml" clean package "${E2E_JOB_MVN_ARGS[@]}"
        mkdir -p "$out"
        cp "$src/target/e2e-users-domains-join-0.jar" "$jar"
        cp "$build"/cdcjoin-flink-*.jar "$out/cdcjoin-flink.jar"
        cp "$lsrc/target/e2e-lib-join-0.jar" "$out/e2e-lib-join.jar"
        echo "$h" >"$out/users-domains-join.stamp"
    fi
    log "install: join job ok: $jar ($(du -m "$jar" | cut -f1) MB, native library $(unzip -l "$jar" | awk '/libcdcjoin_jni/ {print $1}') bytes inside)"
}

main() {
    local what=("$@")
    [[ ${#what[@]} -gt 0 ]] || what=(all)
    mkdir -p "$E2E_CACHE"
    install_tools
    for w in "${what[@]}"; do
        case $w in
            all) install_postgres; install_kafka; install_debezium; install_flink; install_jobs; install_join ;;
            postgres) install_postgres ;;
            kafka) install_kafka ;;
            debezium) install_debezium ;;
            flink) install_flink ;;
            jobs) install_jobs ;;
            join) install_join ;;
            *) die "unknown install target: $w" ;;
        esac
    done
}

main "$@"
