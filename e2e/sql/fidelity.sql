-- The fidelity scenario's tables (e2e/fidelity.sh): every common Postgres type, read by two Debezium
-- connectors configured differently, joined by the product, and compared value for value with the
-- same join computed here.
--
--   fid_items     every common type, REPLICA IDENTITY FULL, joined on account_id
--   fid_accounts  REPLICA IDENTITY DEFAULT (Postgres' default: updates carry no old row, deletes only
--                 the key), joined in upsert mode on its primary key; note and profile hold random
--                 values over 8 KB, stored out of line (TOAST), so an update that leaves them alone
--                 reaches Debezium without them (it sends its unavailable-value placeholder)
--   fid_signal    Debezium's signal table (signal.data.collection): an execute-snapshot row starts
--                 an incremental snapshot in both connectors
-- Loaded by run.sh with schema.sql, before Kafka Connect starts (the connectors' publications and
-- initial snapshots need the tables).
SET client_min_messages = warning;
DROP TABLE IF EXISTS fid_items, fid_accounts, fid_signal;

CREATE TABLE fid_items (
    id         bigint PRIMARY KEY,
    account_id integer NOT NULL,     -- the join key; no foreign key: an item may point at no account
    n_money    numeric(12, 2),
    n_free     numeric,              -- no scale: Debezium's VariableScaleDecimal in precise mode
    ts3        timestamp(3),
    ts6        timestamp(6),
    tstz       timestamptz,
    d          date,
    t          time,
    flag       boolean,
    bin        bytea,
    uid        uuid,
    doc        jsonb,
    txt        text,
    small      smallint,
    big        bigint,
    r          real,
    dp         double precision
);
ALTER TABLE fid_items REPLICA IDENTITY FULL;

CREATE TABLE fid_accounts (
    id      integer PRIMARY KEY,
    name    text,
    balance numeric(12, 2),
    visits  integer,
    seen    timestamp(6),
    note    text,                    -- > 8 KB, random: TOASTed
    profile jsonb                    -- > 8 KB, random: TOASTed
);
-- left at REPLICA IDENTITY DEFAULT on purpose: the product reads it in upsert mode

CREATE TABLE fid_signal (
    id   varchar(64) PRIMARY KEY,
    type varchar(32) NOT NULL,
    data varchar(2048)
);

-- The marts, one per connector configuration (fidelity.sh, jobs/.../FidelityMartJob): fid_items
-- LEFT JOIN fid_accounts ON fid_accounts.id = fid_items.account_id. Keyed (item_id, account_id):
-- the key includes the join key, so each row's changes come from one join subtask (schema.sql).
-- uid and the jsonb columns arrive as strings (Debezium's Uuid and Json), hence text here.
CREATE TABLE mart.fid_a (
    item_id     bigint NOT NULL,
    account_id  integer NOT NULL,
    n_money     numeric(12, 2),
    n_free      numeric(38, 10),
    ts3         timestamp(3),
    ts6         timestamp(6),
    tstz        timestamptz,
    d           date,
    t           time,
    flag        boolean,
    bin         bytea,
    uid         text,
    doc         text,
    txt         text,
    small       smallint,
    big         bigint,
    r           real,
    dp          double precision,
    acc_id      integer,
    acc_name    text,
    acc_balance numeric(12, 2),
    acc_visits  integer,
    acc_seen    timestamp(6),
    acc_note    text,
    acc_profile text,
    PRIMARY KEY (item_id, account_id)
);
CREATE TABLE mart.fid_b (LIKE mart.fid_a INCLUDING ALL);

-- Records a job's decoders or join rejected (the jobs run with BadRecordPolicy.SIDE_OUTPUT and
-- write them here, so that one rejected record shows as a failed check with its reason rather
-- than as a job restarting for ever). Empty in a passing run.
CREATE TABLE mart.fid_bad_records (
    mart_table      text NOT NULL,
    source          text,
    reason          text,
    record          text,
    kafka_topic     text,    -- BadRecord.topic, partition and offset: where the record lies
    kafka_partition integer,
    kafka_offset    bigint,
    at              timestamptz NOT NULL DEFAULT now()
);

-- What each mart must equal: the join over the sources, each value as the configuration's
-- declared Flink type holds it:
--   t     TIME(3): Flink keeps milliseconds (truncated), whatever the connector sends
--   ts6   config A (time.precision.mode=adaptive): MicroTimestamp, all 6 digits;
--         config B (connect): Kafka Connect's Timestamp, milliseconds (truncated by Debezium)
--   the rest exactly (n_free's values fit DECIMAL(38, 10); see lib/fidelity_workload.py)
CREATE VIEW mart.expected_fid_a AS
    SELECT i.id AS item_id, i.account_id, i.n_money, i.n_free::numeric(38, 10) AS n_free, i.ts3, i.ts6,
           i.tstz, i.d, date_trunc('milliseconds', i.t::interval)::time AS t, i.flag, i.bin,
           i.uid::text AS uid, i.doc::text AS doc, i.txt, i.small, i.big, i.r, i.dp,
           a.id AS acc_id, a.name AS acc_name, a.balance AS acc_balance, a.visits AS acc_visits,
           a.seen AS acc_seen, a.note AS acc_note, a.profile::text AS acc_profile
    FROM fid_items i LEFT JOIN fid_accounts a ON a.id = i.account_id;

CREATE VIEW mart.expected_fid_b AS
    SELECT item_id, account_id, n_money, n_free, ts3, date_trunc('milliseconds', ts6) AS ts6, tstz, d, t,
           flag, bin, uid, doc, txt, small, big, r, dp, acc_id, acc_name, acc_balance, acc_visits,
           date_trunc('milliseconds', acc_seen) AS acc_seen, acc_note, acc_profile
    FROM mart.expected_fid_a;
