#!/usr/bin/env python3
"""The e2e SQL workload on users(id PK, firstname, lastname) and domains(id PK, user_id, domain_name).

  workload.py generate --out DIR [--seed S] [--users U] [--domains D] [--statements N]
      DIR/snapshot.sql   the initial rows (loaded before Debezium starts: its snapshot, op=r)
      DIR/stream.sql     N single-statement lines (each its own transaction under psql autocommit)
      DIR/expected.json  the Debezium records each table's topic must receive, per op, derived from
                         the generator's own model of the tables:
                           snapshot row -> r;  INSERT -> c;  UPDATE keeping the PK -> u (per row);
                           UPDATE changing the PK -> d + tombstone + c;  DELETE -> d + tombstone
                         and the statement mix.

  workload.py feed --file DIR/stream.sql --rate R -- psql ARGS...
      runs one psql session and writes it one statement every 1/R s on a fixed schedule (no drift),
      then prints the achieved rate. Fails if psql fails (it runs with ON_ERROR_STOP=1).

Only the standard library; deterministic for a seed. The mix: inserts of users and of domains
(some for users that do not exist yet, some with a NULL user_id), renames (first/last name, NULLs,
quotes and non-ASCII), domains moved between users (join-key change), domain renames, primary-key
changes of users and of domains, all domains of one user moved to another (a multi-row UPDATE),
deletes of domains, of users that still have domains, and of a user after its domains.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

FIRST = ["Ana", "Bo", "Chen", "Dara", "Emil", "Fatou", "Gus", "Hana", "Ivo", "José", "Kai", "Lena",
         "Miguel", "Noor", "Olu", "Pia", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Vik", "Wen", "Zoë"]
LAST = ["Garcia", "Kim", "Li", "O'Brien", "Schmidt", "Diallo", "Nowak", "Sato", "Rossi", "Müller",
        "Ivanova", "Okafor", "Silva", "Haddad", "Jensen", "Park", "Nguyen", "Dubois", "Smith", "Ōta"]
TLD = ["com", "org", "net", "io", "de", "fr", "jp", "dev"]


def q(v):
    if v is None:
        return "NULL"
    if isinstance(v, int):
        return str(v)
    return "'" + v.replace("'", "''") + "'"


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.users = {}    # id -> (firstname, lastname)
        self.domains = {}  # id -> (user_id, domain_name)
        self.next_user = 1
        self.next_domain = 1
        self.name_seq = 0
        self.expected = {"users": {}, "domains": {}}
        self.mix = {}

    def ev(self, table, op, n=1):
        e = self.expected[table]
        e[op] = e.get(op, 0) + n

    def name(self):
        r = self.r
        first = None if r.random() < 0.02 else r.choice(FIRST)
        last = None if r.random() < 0.02 else r.choice(LAST)
        return first, last

    def domain_name(self):
        self.name_seq += 1
        return "%s%d.%s" % (self.r.choice(["shop", "blog", "mail", "app", "site", "data"]), self.name_seq,
                            self.r.choice(TLD))

    def new_user_id(self):
        i = self.next_user
        self.next_user += 1
        return i

    def new_domain_id(self):
        i = self.next_domain
        self.next_domain += 1
        return i

    def some_user_id(self, existing=0.85):
        r = self.r
        x = r.random()
        if self.users and x < existing:
            return r.choice(list(self.users))
        if x < existing + 0.03:
            return None
        # a user that does not exist (deleted, or not created yet: a late user)
        return r.randrange(1, self.next_user + 20)

    # --- snapshot -----------------------------------------------------------------------------
    def snapshot(self, n_users, n_domains):
        lines = []
        rows = []
        for _ in range(n_users):
            i = self.new_user_id()
            self.users[i] = self.name()
            rows.append("(%d, %s, %s)" % (i, q(self.users[i][0]), q(self.users[i][1])))
        for k in range(0, len(rows), 500):
            lines.append("INSERT INTO users (id, firstname, lastname) VALUES\n  " + ",\n  ".join(rows[k:k + 500]) + ";")
        rows = []
        for _ in range(n_domains):
            i = self.new_domain_id()
            self.domains[i] = (self.some_user_id(0.92), self.domain_name())
            rows.append("(%d, %s, %s)" % (i, q(self.domains[i][0]), q(self.domains[i][1])))
        for k in range(0, len(rows), 500):
            lines.append("INSERT INTO domains (id, user_id, domain_name) VALUES\n  " + ",\n  ".join(rows[k:k + 500]) + ";")
        self.ev("users", "r", n_users)
        self.ev("domains", "r", n_domains)
        return lines

    # --- one statement ------------------------------------------------------------------------
    KINDS = [
        ("insert_user", 11), ("insert_domain", 16), ("rename_user", 14), ("rename_domain", 7),
        ("move_domain", 15), ("user_pk_change", 4), ("domain_pk_change", 5), ("move_all_domains", 3),
        ("delete_domain", 9), ("delete_user", 6), ("delete_user_after_domains", 3), ("nullify_user_id", 1),
    ]

    def statement(self):
        r = self.r
        kinds, weights = zip(*self.KINDS)
        while True:
            k = r.choices(kinds, weights)[0]
            if len(self.users) < 20 and k.startswith(("delete_user", "user_pk")):
                continue
            if len(self.domains) < 20 and k in ("delete_domain",):
                continue
            s = getattr(self, k)()
            if s is not None:
                self.mix[k] = self.mix.get(k, 0) + 1
                return s

    def insert_user(self):
        # sometimes a user that some domains already point at (the late user)
        dangling = sorted({u for (u, _) in self.domains.values() if u is not None and u not in self.users})
        i = self.r.choice(dangling) if dangling and self.r.random() < 0.3 else self.new_user_id()
        if i in self.users:
            return None
        self.next_user = max(self.next_user, i + 1)
        self.users[i] = self.name()
        self.ev("users", "c")
        return "INSERT INTO users (id, firstname, lastname) VALUES (%d, %s, %s);" % (i, q(self.users[i][0]), q(self.users[i][1]))

    def insert_domain(self):
        i = self.new_domain_id()
        self.domains[i] = (self.some_user_id(), self.domain_name())
        self.ev("domains", "c")
        return "INSERT INTO domains (id, user_id, domain_name) VALUES (%d, %s, %s);" % (i, q(self.domains[i][0]), q(self.domains[i][1]))

    def rename_user(self):
        if not self.users:
            return None
        i = self.r.choice(list(self.users))
        old = self.users[i]
        first, last = self.name()
        if self.r.random() < 0.5:
            self.users[i] = (first, old[1])
            s = "UPDATE users SET firstname = %s WHERE id = %d;" % (q(first), i)
        else:
            self.users[i] = (first, last)
            s = "UPDATE users SET firstname = %s, lastname = %s WHERE id = %d;" % (q(first), q(last), i)
        self.ev("users", "u")
        return s

    def rename_domain(self):
        if not self.domains:
            return None
        i = self.r.choice(list(self.domains))
        n = self.domain_name()
        self.domains[i] = (self.domains[i][0], n)
        self.ev("domains", "u")
        return "UPDATE domains SET domain_name = %s WHERE id = %d;" % (q(n), i)

    def move_domain(self):
        if not self.domains:
            return None
        i = self.r.choice(list(self.domains))
        u = self.some_user_id()
        self.domains[i] = (u, self.domains[i][1])
        self.ev("domains", "u")
        return "UPDATE domains SET user_id = %s WHERE id = %d;" % (q(u), i)

    def nullify_user_id(self):
        if not self.domains:
            return None
        i = self.r.choice(list(self.domains))
        self.domains[i] = (None, self.domains[i][1])
        self.ev("domains", "u")
        return "UPDATE domains SET user_id = NULL WHERE id = %d;" % i

    def user_pk_change(self):
        old = self.r.choice(list(self.users))
        new = self.new_user_id()
        self.users[new] = self.users.pop(old)
        self.ev("users", "d")
        self.ev("users", "tombstone")
        self.ev("users", "c")
        return "UPDATE users SET id = %d WHERE id = %d;" % (new, old)

    def domain_pk_change(self):
        if not self.domains:
            return None
        old = self.r.choice(list(self.domains))
        new = self.new_domain_id()
        self.domains[new] = self.domains.pop(old)
        self.ev("domains", "d")
        self.ev("domains", "tombstone")
        self.ev("domains", "c")
        return "UPDATE domains SET id = %d WHERE id = %d;" % (new, old)

    def move_all_domains(self):
        owners = sorted({u for (u, _) in self.domains.values() if u is not None})
        if not owners or not self.users:
            return None
        src = self.r.choice(owners)
        dst = self.r.choice(list(self.users))
        if src == dst:
            return None
        ids = [i for i, (u, _) in self.domains.items() if u == src]
        for i in ids:
            self.domains[i] = (dst, self.domains[i][1])
        self.ev("domains", "u", len(ids))
        return "UPDATE domains SET user_id = %d WHERE user_id = %d;" % (dst, src)

    def delete_domain(self):
        i = self.r.choice(list(self.domains))
        del self.domains[i]
        self.ev("domains", "d")
        self.ev("domains", "tombstone")
        return "DELETE FROM domains WHERE id = %d;" % i

    def delete_user(self):
        # prefer a user that still has domains: they dangle afterwards
        owners = [u for (u, _) in self.domains.values() if u in self.users]
        i = self.r.choice(owners) if owners and self.r.random() < 0.7 else self.r.choice(list(self.users))
        del self.users[i]
        self.ev("users", "d")
        self.ev("users", "tombstone")
        return "DELETE FROM users WHERE id = %d;" % i

    def delete_user_after_domains(self):
        # two statements, two transactions: the user's domains, then the user
        i = self.r.choice(list(self.users))
        ids = [d for d, (u, _) in self.domains.items() if u == i]
        for d in ids:
            del self.domains[d]
        del self.users[i]
        self.ev("domains", "d", len(ids))
        self.ev("domains", "tombstone", len(ids))
        self.ev("users", "d")
        self.ev("users", "tombstone")
        return "DELETE FROM domains WHERE user_id = %d;\nDELETE FROM users WHERE id = %d;" % (i, i)

    def joined(self):
        inner = sum(1 for (u, _) in self.domains.values() if u in self.users)
        owners = {u for (u, _) in self.domains.values()}
        left = inner + sum(1 for u in self.users if u not in owners)
        return inner, left


def generate(a):
    os.makedirs(a.out, exist_ok=True)
    g = Gen(a.seed)
    snap = g.snapshot(a.users, a.domains)
    with open(os.path.join(a.out, "snapshot.sql"), "w", encoding="utf-8") as f:
        f.write("\n".join(snap) + "\n")
    stmts = 0
    with open(os.path.join(a.out, "stream.sql"), "w", encoding="utf-8") as f:
        while stmts < a.statements:
            s = g.statement()
            f.write(s + "\n")
            stmts += s.count("\n") + 1
    inner, left = g.joined()
    exp = {
        "seed": a.seed,
        "snapshot_rows": {"users": a.users, "domains": a.domains},
        "statements": stmts,
        "mix": dict(sorted(g.mix.items())),
        "events": g.expected,
        "records": {t: sum(v.values()) for t, v in g.expected.items()},
        "final_rows": {"users": len(g.users), "domains": len(g.domains), "inner_join": inner, "left_join": left},
    }
    with open(os.path.join(a.out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(exp, f, indent=1, sort_keys=True)
    print(json.dumps({k: exp[k] for k in ("statements", "records", "final_rows")}))


def feed(a):
    with open(a.file, encoding="utf-8") as f:
        lines = [ln for ln in f.read().split("\n") if ln.strip()]
    p = subprocess.Popen(a.psql, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, encoding="utf-8")
    period = 1.0 / a.rate
    t0 = time.monotonic()
    late = 0.0
    for i, ln in enumerate(lines):
        due = t0 + i * period
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        else:
            late = max(late, now - due)
        try:
            p.stdin.write(ln + "\n")
            p.stdin.flush()
        except BrokenPipeError:
            break
    p.stdin.close()
    rc = p.wait()
    dt = time.monotonic() - t0
    print(json.dumps({"statements": len(lines), "seconds": round(dt, 1), "rate": round(len(lines) / dt, 1),
                      "target_rate": a.rate, "max_lag_s": round(late, 2), "psql_exit": rc}))
    sys.exit(rc)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--out", required=True)
    g.add_argument("--seed", type=int, default=42)
    g.add_argument("--users", type=int, default=300)
    g.add_argument("--domains", type=int, default=600)
    g.add_argument("--statements", type=int, default=3000)
    f = sub.add_parser("feed")
    f.add_argument("--file", required=True)
    f.add_argument("--rate", type=float, default=50.0)
    f.add_argument("psql", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.cmd == "feed":
        if a.psql and a.psql[0] == "--":
            a.psql = a.psql[1:]
        if not a.psql:
            ap.error("feed needs -- psql ARGS...")
        feed(a)
    else:
        generate(a)


if __name__ == "__main__":
    main()
