#!/usr/bin/env python3
"""The fidelity scenario's SQL workload (e2e/fidelity.sh) on fid_items (every common Postgres type,
REPLICA IDENTITY FULL) and fid_accounts (REPLICA IDENTITY DEFAULT, two TOASTed columns).

  fidelity_workload.py --out DIR [--seed S] [--accounts A] [--items I] [--statements N]
                       [--signal-at F] [--account-deletes-from G]
      DIR/snapshot.sql  the initial rows (loaded before the connectors start: their snapshot, op=r)
      DIR/stream.sql    N single-statement lines (each its own transaction under psql autocommit);
                        the line at fraction F of the stream inserts an execute-snapshot signal
                        into fid_signal (a Debezium incremental snapshot of both tables)
      DIR/summary.json  the statement mix

The values are random (deterministic for a seed) with the edge cases each type has: NULLs, negative
numbers, the type's extremes, many fractional digits, instants before 1970, non-ASCII text (4-byte
UTF-8 too), quotes and backslashes, empty and zero bytes. numeric without scale stays within
DECIMAL(38, 10) (at most 27 integer and 10 fractional digits), which the jobs declare. `time` never
takes 24:00 (Java's LocalTime has no such value).

fid_accounts.note and .profile hold 9,000 random characters each (incompressible, so Postgres
stores them out of line), set when an account is inserted and now and then replaced; most updates
change only the small columns, so Debezium sends its unavailable-value placeholder for the two.
The mix: item inserts, updates of 1-4 typed columns, join-key changes (account_id), primary-key
changes and deletes; account updates of the small columns (the most frequent statement), of a
TOASTed column, inserts (first the accounts items already point at) and deletes.

Two things the workload leaves out on purpose, because no consumer of the change stream can get
them right, the product included (it rejects such a record as a bad record, as it must):
- primary-key changes of accounts: the event for the new key carries the placeholder for the
  unchanged TOASTed columns, and no row of that key was ever seen to take them from;
- account deletes before fraction G of the stream (fidelity.sh stops Kafka Connect there, after
  which nothing is re-delivered): a re-delivered update of an account deleted later would carry
  the placeholder for a key that is no longer stored.
"""
import argparse
import json
import os
import random
import string
import uuid
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal

BLOB_CHARS = string.ascii_letters + string.digits + "+/"
TEXTS = ["", "plain", "O'Brien", "back\\slash", "Zoë Müller", "日本語テキスト", "emoji 😀 and 𝄞",
         "line\nbreak\ttab", "  spaces  ", "\"double\"", "Ōta-ß-Ø"]


def q(s):
    """A SQL string literal on one line (E'...': backslashes, quotes, newlines and tabs escaped), as
    the feed sends one statement per line."""
    return "E'" + s.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\t", "\\t") + "'"


class Values:
    """Random values of each column type, with the edge cases."""

    def __init__(self, rng):
        self.r = rng

    def maybe(self, gen, edges, p_null=0.1, p_edge=0.2):
        x = self.r.random()
        if x < p_null:
            return "NULL"
        if x < p_null + p_edge:
            return self.r.choice(edges)
        return gen()

    def n_money(self):
        return self.maybe(lambda: str(Decimal(self.r.randint(-999999999999, 999999999999)).scaleb(-2)),
                          ["0.00", "-0.01", "9999999999.99", "-9999999999.99", "0.10"])

    def n_free(self):
        def gen():
            whole = self.r.randint(0, 10 ** self.r.randint(0, 27) - 1)
            frac = self.r.randint(0, 10)
            digits = "".join(self.r.choice(string.digits) for _ in range(frac))
            return ("-" if self.r.random() < 0.4 else "") + str(whole) + ("." + digits if frac else "")
        return self.maybe(gen, ["0", "-0.0000000001", "123456789012345678901234567.1234567890", "1.500",
                                "-999999999999999999999999999.9999999999", "42"])

    def instant(self, lo_year, hi_year):
        lo = datetime(lo_year, 1, 1)
        span = (datetime(hi_year, 1, 1) - lo).total_seconds()
        return lo + timedelta(seconds=self.r.random() * span, microseconds=self.r.randint(0, 999999))

    def ts3(self):
        return self.maybe(lambda: q(self.instant(1900, 2100).isoformat(sep=" ", timespec="milliseconds")),
                          ["'1969-12-31 23:59:59.999'", "'1970-01-01 00:00:00'", "'1899-12-31 23:59:59.001'",
                           "'1600-03-01 00:00:00.5'", "'2999-12-31 23:59:59.999'"])

    def ts6(self):
        return self.maybe(lambda: q(self.instant(1900, 2100).isoformat(sep=" ", timespec="microseconds")),
                          ["'1969-12-31 23:59:59.999999'", "'1970-01-01 00:00:00.000001'",
                           "'1900-02-28 12:00:00.5'", "'1600-03-01 00:00:00.000999'", "'2999-12-31 23:59:59.999999'"])

    def tstz(self):
        def gen():
            off = self.r.choice(["+00", "+05:30", "-08", "+14", "-03:30"])
            return q(self.instant(1901, 2100).isoformat(sep=" ", timespec="microseconds") + off)
        return self.maybe(gen, ["'1969-12-31 23:59:59.999999+00'", "'1970-01-01 00:00:00+00'",
                                "'1950-06-15 12:34:56.789012-07'", "'2038-01-19 03:14:08+00'"])

    def d(self):
        return self.maybe(lambda: q((date(1600, 1, 1) + timedelta(days=self.r.randint(0, 219000))).isoformat()),
                          ["'1969-12-31'", "'1970-01-01'", "'1900-01-01'", "'1600-02-29'", "'2200-12-31'"])

    def t(self):
        def gen():
            return q(time(self.r.randint(0, 23), self.r.randint(0, 59), self.r.randint(0, 59),
                          self.r.randint(0, 999999)).isoformat(timespec="microseconds"))
        return self.maybe(gen, ["'00:00:00'", "'23:59:59.999999'", "'12:00:00.0005'", "'00:00:00.001'"])

    def flag(self):
        return self.maybe(lambda: self.r.choice(["true", "false"]), ["true", "false"], p_edge=0)

    def bin(self):
        def gen():
            return "'\\x" + bytes(self.r.randint(0, 255) for _ in range(self.r.randint(1, 40))).hex() + "'"
        return self.maybe(gen, ["'\\x'", "'\\x00'", "'\\x" + bytes(range(256)).hex() + "'", "'\\xff00ff'"])

    def uid(self):
        return self.maybe(lambda: q(str(uuid.UUID(int=self.r.getrandbits(128), version=4))),
                          ["'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'"])

    def doc(self):
        def gen():
            return q(json.dumps({"k": self.r.randint(-1000, 1000), "s": self.r.choice(TEXTS),
                                 "f": self.r.choice([1.5, -0.25, 1e-7, 123456789.125]),
                                 "nested": {"list": [self.r.randint(0, 9) for _ in range(3)], "b": True,
                                            "n": None}}, ensure_ascii=self.r.random() < 0.5))
        return self.maybe(gen, ["'{}'", "'[]'", "'\"just a string\"'", "'null'", "'{\"ü\": \"😀\", \"q\": \"a\\\"b\"}'",
                                "'12.50'"])

    def txt(self):
        def gen():
            return q(" ".join(self.r.choice(TEXTS) for _ in range(self.r.randint(1, 4))))
        return self.maybe(gen, [q(s) for s in TEXTS] + [q("x" * 500)])

    def small(self):
        return self.maybe(lambda: str(self.r.randint(-32768, 32767)), ["-32768", "32767", "0", "-1"])

    def big(self):
        return self.maybe(lambda: str(self.r.randint(-2 ** 63, 2 ** 63 - 1)),
                          [str(-2 ** 63), str(2 ** 63 - 1), "0", "-1"])

    def r_(self):
        return self.maybe(lambda: repr(self.r.uniform(-1e6, 1e6)),
                          ["0", "-0", "3.4028235e38", "-1.17549435e-38", "1.4e-45", "0.1", "-2.5"])

    def dp(self):
        return self.maybe(lambda: repr(self.r.uniform(-1e12, 1e12) * 10 ** self.r.randint(-20, 20)),
                          ["0", "1.7976931348623157e308", "-5e-324", "0.1", "-2.5", "2.2250738585072014e-308"])

    def blob(self):
        return "".join(self.r.choice(BLOB_CHARS) for _ in range(9000))


ITEM_COLUMNS = ["n_money", "n_free", "ts3", "ts6", "tstz", "d", "t", "flag", "bin", "uid", "doc", "txt",
                "small", "big", "r", "dp"]


class Workload:
    def __init__(self, seed, n_accounts):
        self.r = random.Random(seed)
        self.v = Values(self.r)
        self.items = set()
        self.accounts = set()
        self.next_item = 1
        # items point at accounts 1..n_accounts+5; 1..n_accounts exist at the start, the others are
        # inserted by the workload
        self.account_ids = n_accounts + 5
        self.next_account = n_accounts + 1
        self.mix = {}
        self.deletes_allowed = False

    def value(self, col):
        return getattr(self.v, "r_" if col == "r" else col)()

    def some_account_id(self):
        return self.r.randint(1, self.account_ids)

    def insert_item(self):
        i = self.next_item
        self.next_item += 1
        self.items.add(i)
        cols = ["id", "account_id"] + ITEM_COLUMNS
        vals = [str(i), str(self.some_account_id())] + [self.value(c) for c in ITEM_COLUMNS]
        return "INSERT INTO fid_items (%s) VALUES (%s);" % (", ".join(cols), ", ".join(vals))

    def account_values(self, i):
        n = self.r.randint(0, 10 ** 6)
        profile = json.dumps({"blob": self.v.blob(), "n": n, "tags": ["ü", "日本"]}, ensure_ascii=False)
        return [str(i), q("account %d %s" % (i, self.r.choice(TEXTS))), self.v.n_money(), str(n),
                self.v.ts6(), q(self.v.blob()), q(profile)]

    def insert_account(self, i):
        self.accounts.add(i)
        return "INSERT INTO fid_accounts (id, name, balance, visits, seen, note, profile) VALUES (%s);" % (
            ", ".join(self.account_values(i)))

    def snapshot(self, n_accounts, n_items):
        lines = [self.insert_account(i) for i in range(1, n_accounts + 1)]
        lines += [self.insert_item() for _ in range(n_items)]
        return lines

    def pick(self, ids):
        return self.r.choice(sorted(ids))

    def statement(self):
        ops = [(self.update_account, 30), (self.update_item, 25), (self.insert_item, 12), (self.move_item, 8),
               (self.delete_item, 6), (self.update_account_toast, 5), (self.insert_new_account, 4),
               (self.delete_account, 2), (self.item_pk_change, 2)]
        while True:
            op = self.r.choices([o for o, _ in ops], [w for _, w in ops])[0]
            sql = op()
            if sql:
                self.mix[op.__name__] = self.mix.get(op.__name__, 0) + 1
                return sql

    def update_item(self):
        if not self.items:
            return None
        cols = self.r.sample(ITEM_COLUMNS, self.r.randint(1, 4))
        return "UPDATE fid_items SET %s WHERE id = %d;" % (
            ", ".join("%s = %s" % (c, self.value(c)) for c in cols), self.pick(self.items))

    def move_item(self):
        if not self.items:
            return None
        return "UPDATE fid_items SET account_id = %d WHERE id = %d;" % (self.some_account_id(), self.pick(self.items))

    def delete_item(self):
        if len(self.items) < 10:
            return None
        i = self.pick(self.items)
        self.items.discard(i)
        return "DELETE FROM fid_items WHERE id = %d;" % i

    def item_pk_change(self):
        if not self.items:
            return None
        i = self.pick(self.items)
        self.items.discard(i)
        j = self.next_item
        self.next_item += 1
        self.items.add(j)
        return "UPDATE fid_items SET id = %d WHERE id = %d;" % (j, i)

    def update_account(self):
        if not self.accounts:
            return None
        sets = self.r.sample(["name = %s" % q("renamed %d %s" % (self.r.randint(0, 999), self.r.choice(TEXTS))),
                              "balance = %s" % self.v.n_money(), "visits = visits + 1", "seen = %s" % self.v.ts6()],
                             self.r.randint(1, 3))
        return "UPDATE fid_accounts SET %s WHERE id = %d;" % (", ".join(sets), self.pick(self.accounts))

    def update_account_toast(self):
        if not self.accounts:
            return None
        if self.r.random() < 0.5:
            s = "note = %s" % q(self.v.blob())
        else:
            s = "profile = jsonb_set(profile, '{blob}', to_jsonb(%s::text))" % q(self.v.blob())
        return "UPDATE fid_accounts SET %s, visits = visits + 1 WHERE id = %d;" % (s, self.pick(self.accounts))

    def insert_new_account(self):
        i = self.next_account
        self.next_account += 1
        self.account_ids = max(self.account_ids, i)
        return self.insert_account(i)

    def delete_account(self):
        if len(self.accounts) < 10 or not self.deletes_allowed:
            return None
        i = self.pick(self.accounts)
        self.accounts.discard(i)
        return "DELETE FROM fid_accounts WHERE id = %d;" % i


SIGNAL = ("INSERT INTO fid_signal (id, type, data) VALUES ('fid-incremental-1', 'execute-snapshot', "
          "'{\"data-collections\": [\"public.fid_items\", \"public.fid_accounts\"], \"type\": \"incremental\"}');")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--accounts", type=int, default=30)
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--statements", type=int, default=900)
    ap.add_argument("--signal-at", type=float, default=0.75)
    ap.add_argument("--account-deletes-from", type=float, default=0.5)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    w = Workload(a.seed, a.accounts)
    with open(os.path.join(a.out, "snapshot.sql"), "w", encoding="utf-8") as f:
        f.write("\n".join(w.snapshot(a.accounts, a.items)) + "\n")
    stream = []
    for i in range(a.statements):
        w.deletes_allowed = i >= a.account_deletes_from * a.statements
        stream.append(w.statement())
    at = min(len(stream), int(a.signal_at * len(stream)))
    stream.insert(at, SIGNAL)
    with open(os.path.join(a.out, "stream.sql"), "w", encoding="utf-8") as f:
        f.write("\n".join(stream) + "\n")
    summary = {"seed": a.seed, "snapshot": {"accounts": a.accounts, "items": a.items},
               "statements": len(stream), "signal_line": at + 1, "mix": w.mix,
               "final": {"accounts": len(w.accounts), "items": len(w.items)}}
    with open(os.path.join(a.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
