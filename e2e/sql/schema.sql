-- Source tables (captured by Debezium) and the data mart (written by the Flink job).
-- Types follow the product's schemas: INT ids, STRING names (tests/vectors/users_domains.json).
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS mart CASCADE;
DROP TABLE IF EXISTS users, domains;

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
-- Debezium needs the whole old row in update and delete events (the join's retractions).
ALTER TABLE users   REPLICA IDENTITY FULL;
ALTER TABLE domains REPLICA IDENTITY FULL;

-- The mart: one row per joined pair, columns as the join prints them
-- (users.id, firstname, lastname, domains.id, user_id, domain_name).
CREATE SCHEMA mart;

-- users JOIN domains ON users.id = domains.user_id: a domain joins at most one user, so
-- domains.id is the upsert key.
CREATE TABLE mart.users_domains (
    id          integer NOT NULL,
    firstname   text,
    lastname    text,
    domain_id   integer PRIMARY KEY,
    user_id     integer,
    domain_name text
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

-- What the mart must equal once the pipeline has converged: the join over the source tables.
-- e2e/lib/mart.sh compares a mart table with one of these row by row (sql/compare.sql).
CREATE VIEW mart.expected_users_domains AS
    SELECT u.id, u.firstname, u.lastname, d.id AS domain_id, d.user_id, d.domain_name
    FROM users u JOIN domains d ON u.id = d.user_id;

CREATE VIEW mart.expected_users_domains_left AS
    SELECT u.id, u.firstname, u.lastname, d.id AS domain_id, d.user_id, d.domain_name
    FROM users u LEFT JOIN domains d ON u.id = d.user_id;
