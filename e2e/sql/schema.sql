-- Source tables (captured by Debezium) and the data mart (written by the Flink job).
-- Types follow the product's schemas: INT ids, STRING names (tests/vectors/users_domains.json).
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS mart CASCADE;
DROP TABLE IF EXISTS users, domains, orders, customers, products;

CREATE TABLE users (
    id        integer PRIMARY KEY,
    firstname text,
    lastname  text
);
CREATE TABLE domains (
    id          integer PRIMARY KEY,
    user_id     integer,            -- no foreign key: a domain may point at a user not (yet) there
    domain_name text
);
-- The star schema (run.sh's star mart, lib/star_workload.py): orders, the fact, references a
-- customer and a product (no foreign keys either: an order may point at a row not (yet) there).
-- customers.notes holds 9,000 incompressible characters: stored out of line (TOAST). Under REPLICA
-- IDENTITY FULL the old row is logged with it, and Debezium's update events carry it in full, also
-- when the update leaves it unchanged (no unavailable-value placeholder: that is the fidelity
-- scenario's REPLICA IDENTITY DEFAULT table).
CREATE TABLE customers (
    id    integer PRIMARY KEY,
    name  text,
    tier  text,
    notes text
);
CREATE TABLE products (
    id          integer PRIMARY KEY,
    title       text,
    price_cents integer
);
CREATE TABLE orders (
    id          integer PRIMARY KEY,
    customer_id integer,
    product_id  integer,
    qty         integer,
    status      text
);
-- Debezium needs the whole old row in update and delete events (the join's retractions).
ALTER TABLE users     REPLICA IDENTITY FULL;
ALTER TABLE domains   REPLICA IDENTITY FULL;
ALTER TABLE customers REPLICA IDENTITY FULL;
ALTER TABLE products  REPLICA IDENTITY FULL;
ALTER TABLE orders    REPLICA IDENTITY FULL;

-- The mart: one row per joined pair, columns as the join prints them
-- (users.id, firstname, lastname, domains.id, user_id, domain_name).
CREATE SCHEMA mart;

-- users JOIN domains ON users.id = domains.user_id, keyed (users.id, domains.id). domains.id alone
-- would be a key of the join's result too, but not of its changelog: when a domain moves from user
-- A to user B, the retraction of (A, d) comes from the join's subtask of key A and the insertion
-- of (B, d) from the subtask of key B, two streams with no order between them. A key that
-- includes the join key (users.id) makes every row's changes come from one ordered stream.
CREATE TABLE mart.users_domains (
    id          integer NOT NULL,
    firstname   text,
    lastname    text,
    domain_id   integer NOT NULL,
    user_id     integer,
    domain_name text,
    PRIMARY KEY (id, domain_id)
);

-- users LEFT JOIN domains ON users.id = domains.user_id: a user without domains has one row with
-- NULL domain columns; the upsert key is (id, domain_id) with NULLs equal (PostgreSQL 15+).
CREATE TABLE mart.users_domains_left (
    id          integer NOT NULL,
    firstname   text,
    lastname    text,
    domain_id   integer,
    user_id     integer,
    domain_name text,
    CONSTRAINT users_domains_left_key UNIQUE NULLS NOT DISTINCT (id, domain_id)
);

-- The same two marts for the join job that run.sh submits while the others run (a second job:
-- its own class loader, its own copy of the native library), E2E_LATE_JOIN.
CREATE TABLE mart.users_domains_late (LIKE mart.users_domains INCLUDING ALL);
CREATE TABLE mart.users_domains_left_late (LIKE mart.users_domains_left INCLUDING ALL);
-- And for the join jobs of the second cluster, of another Flink line (run.sh's E2E_SECOND_LINE,
-- default 1.20): the product's JAR for that line, the same workload and the same kill -9.
CREATE TABLE mart.users_domains_1_20 (LIKE mart.users_domains INCLUDING ALL);
CREATE TABLE mart.users_domains_left_1_20 (LIKE mart.users_domains_left INCLUDING ALL);

-- The star mart (jobs/.../StarMartJob, CdcStar): orders LEFT JOIN customers ON customers.id =
-- orders.customer_id JOIN products ON products.id = orders.product_id, keyed (order_id,
-- product_id): the last join's key, so that every row's changes come from one ordered stream (an
-- order moved to another product is retracted by one join subtask and inserted by another).
CREATE TABLE mart.star_orders (
    order_id       integer NOT NULL,
    customer_id    integer,
    product_id     integer NOT NULL,
    qty            integer,
    status         text,
    customer_name  text,
    customer_tier  text,
    customer_notes text,
    product_title  text,
    price_cents    integer,
    PRIMARY KEY (order_id, product_id)
);
-- the star job of run.sh's second cluster (E2E_SECOND_LINE, default 1.20)
CREATE TABLE mart.star_orders_1_20 (LIKE mart.star_orders INCLUDING ALL);

-- The join job's sink (e2e/jobs/users-domains-join, MartSinkOperator) applies one batch of changes
-- per checkpoint, when the checkpoint completes, in one transaction with its row here: the last
-- checkpoint applied per (mart, job, subtask), so that a batch is applied once across failures,
-- and counters of what it did. upserted_existing (an insert whose key was taken) and
-- delete_missed (a retraction whose row was not there as retracted) stay 0 for a correct changelog.
CREATE TABLE mart.sink_progress (
    mart_table        text    NOT NULL,
    job_id            text    NOT NULL,
    subtask           integer NOT NULL,
    checkpoint_id     bigint  NOT NULL,
    batches           bigint  NOT NULL DEFAULT 0,
    changes           bigint  NOT NULL DEFAULT 0,
    inserted          bigint  NOT NULL DEFAULT 0,
    upserted_existing bigint  NOT NULL DEFAULT 0,
    deleted           bigint  NOT NULL DEFAULT 0,
    delete_missed     bigint  NOT NULL DEFAULT 0,
    updated_at        timestamptz,
    PRIMARY KEY (mart_table, job_id, subtask)
);

-- What the mart must equal once the pipeline has converged: the join over the source tables.
-- e2e/lib/mart.sh compares a mart table with one of these row by row (sql/compare.sql).
CREATE VIEW mart.expected_users_domains AS
    SELECT u.id, u.firstname, u.lastname, d.id AS domain_id, d.user_id, d.domain_name
    FROM users u JOIN domains d ON u.id = d.user_id;

CREATE VIEW mart.expected_users_domains_left AS
    SELECT u.id, u.firstname, u.lastname, d.id AS domain_id, d.user_id, d.domain_name
    FROM users u LEFT JOIN domains d ON u.id = d.user_id;

CREATE VIEW mart.expected_star_orders AS
    SELECT o.id AS order_id, o.customer_id, o.product_id, o.qty, o.status,
           c.name AS customer_name, c.tier AS customer_tier, c.notes AS customer_notes,
           p.title AS product_title, p.price_cents
    FROM orders o LEFT JOIN customers c ON c.id = o.customer_id JOIN products p ON p.id = o.product_id;
