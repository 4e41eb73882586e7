#!/usr/bin/env bash
# PostgreSQL from Debian's packages, in a throwaway data dir ($E2E_RUN/pg), on 127.0.0.1:$E2E_PG_PORT,
# wal_level=logical (for Debezium's pgoutput slot), trust auth on loopback, database $E2E_PG_DB.
# As root, the server runs as the Debian 'postgres' user (initdb refuses root).
#
# usage: e2e/lib/postgres.sh start|stop|status
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PG_DIR=$E2E_RUN/pg
PG_DATA=$PG_DIR/data

as_pg() {
    if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_start() {
    local bin
    bin=$(pg_bin) || die "PostgreSQL is not installed: run e2e/lib/install.sh postgres"
    if [[ ! -f $PG_DATA/PG_VERSION ]]; then
        mkdir -p "$PG_DIR"
        [[ $(id -u) -eq 0 ]] && chown postgres: "$PG_DIR"
        as_pg "$bin/initdb" -D "$PG_DATA" -U "$E2E_PG_USER" --auth=trust -E UTF8 --locale=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1 ||
            { cat "$PG_DIR/initdb.log"; die "initdb failed"; }
        cat >>"$PG_DATA/postgresql.conf" <<EOF
# --- e2e ---
listen_addresses = '$E2E_HOST'
port = $E2E_PG_PORT
unix_socket_directories = '$PG_DIR'
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
max_connections = 50
shared_buffers = 128MB
fsync = off
synchronous_commit = off
full_page_writes = off
log_min_messages = warning
EOF
    fi
    as_pg "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_DIR/postgres.log" -w -t 60 start >/dev/null
    as_pg cat "$PG_DATA/postmaster.pid" | head -1 >"$(mkdir -p "$E2E_RUN/pids" && pid_file postgres)"
    wait_until 30 "postgres accepts connections" psql -X -h "$E2E_HOST" -p "$E2E_PG_PORT" -U "$E2E_PG_USER" -d postgres -c 'select 1'
    if ! psql -X -h "$E2E_HOST" -p "$E2E_PG_PORT" -U "$E2E_PG_USER" -d postgres -tAc \
        "select 1 from pg_database where datname='$E2E_PG_DB'" | grep -q 1; then
        psql -X -q -h "$E2E_HOST" -p "$E2E_PG_PORT" -U "$E2E_PG_USER" -d postgres -c "create database $E2E_PG_DB"
    fi
    log "postgres: started $("$bin/postgres" --version | awk '{print $3}') pid $(cat "$(pid_file postgres)") on $E2E_HOST:$E2E_PG_PORT, wal_level=$(e2e_psql -tAc 'show wal_level'), data $PG_DATA"
}

pg_stop() {
    local bin
    bin=$(pg_bin) || return 0
    if [[ -f $PG_DATA/postmaster.pid ]]; then
        as_pg "$bin/pg_ctl" -D "$PG_DATA" -m fast -w -t 30 stop >/dev/null 2>&1 || stop_pid postgres 10
        log "postgres: stopped"
    fi
    rm -f "$(pid_file postgres)"
}

case ${1:-} in
    start) pg_start ;;
    stop) pg_stop ;;
    status) [[ -f $PG_DATA/postmaster.pid ]] && e2e_psql -tAc 'select version()' ;;
    *) die "usage: $0 start|stop|status" ;;
esac
