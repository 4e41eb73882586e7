#!/usr/bin/env python3
"""The e2e star-schema workload: orders (the fact) with customers and products (the dimensions).

  star_workload.py --out DIR [--seed S] [--customers C] [--products P] [--orders O] [--statements N]
      DIR/snapshot.sql   the initial rows (loaded before Debezium starts: its snapshot, op=r)
      DIR/stream.sql     N single-statement lines (fed by workload.py feed, beside the users/domains
                         workload)
      DIR/expected.json  as workload.py's: the Debezium records per table and op ("records",
                         "events"), the snapshot's and the final row counts, the statement mix

Tables (sql/schema.sql): orders(id PK, customer_id, product_id, qty, status),
customers(id PK, name, tier, notes), products(id PK, title, price_cents), all REPLICA IDENTITY FULL.
customers.notes holds 9,000 random characters (incompressible, so TOASTed: out of line); updates
of a customer's other columns leave it unchanged, and rewrites change it (under REPLICA IDENTITY FULL
Debezium's events carry it in full either way).

The mix: order inserts (some for customers or products not there (yet), some with no customer),
quantity and status changes, orders moved to another product, orders moved to another customer and
product in one update, order deletes; customer renames and tier changes (the TOASTed notes unchanged), a tier changed for
every customer of a tier (a multi-row update), notes rewritten (the TOASTed column itself), customer
inserts (some that orders already point at), deletes and re-inserts of the same customer; product
price and title changes, product inserts, deletes and re-inserts; NULLs, quotes and non-ASCII.

The star joins customers first, then products. An order that changes its customer changes its
product in the same update, to one it never held, and never goes back to a product it held under an
earlier customer. So all changes of one order that reach one subtask of the second join come from
one subtask of the first, in order: the chained join's documented limit (README, chained joins: a
row that changes the first join's key and comes back to a key of the next join it held before, while
an older change of it from the other subtask is in flight) is not hit. Without this rule, an order
moved to another customer alone while the kill's replay was under way went missing from the mart.

Only the standard library; deterministic for a seed.
"""
import argparse
import json
import os
import random

from fidelity_workload import BLOB_CHARS
from workload import FIRST, LAST, q

TIERS = ["bronze", "silver", "gold", "platinum", None]
STATUSES = ["new", "paid", "shipped", "returned", "on hold: 'customs'", "zurückgestellt", None]
GOODS = ["Tea", "Kaffee", "Crème", "Widget", "O'Neill's Stout", "抹茶", "Gadget", "Soap", "Rope"]
TABLES = ("orders", "customers", "products")


class Star:
    """A model of the three tables, and the statements that change them."""

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.orders = {}     # id -> [customer_id, product_id, qty, status]
        self.customers = {}  # id -> [name, tier, notes]
        self.products = {}   # id -> [title, price_cents]
        self.gone = {"customers": set(), "products": set()}  # deleted, to be re-inserted
        self.next = {t: 1 for t in TABLES}
        # per order, the products it held: under its current customer, and under earlier ones
        # (never to be held again, see the module's doc)
        self.era = {}
        self.closed = {}
        self.events = {t: {} for t in TABLES}
        self.mix = {}

    def ev(self, table, op, n=1):
        if n:
            e = self.events[table]
            e[op] = e.get(op, 0) + n

    def new_id(self, table):
        i = self.next[table]
        self.next[table] += 1
        return i

    # --- values -------------------------------------------------------------------------------
    def name(self):
        r = self.r
        return None if r.random() < 0.03 else "%s %s" % (r.choice(FIRST), r.choice(LAST))

    def notes(self):
        return "".join(self.r.choice(BLOB_CHARS) for _ in range(9000))

    def new_customer(self, i):
        self.customers[i] = self.customer_values()

    def new_product(self, i):
        self.products[i] = self.product_values()

    def customer_values(self):
        return [self.name(), self.r.choice(TIERS), self.notes()]

    def product_values(self):
        return ["%s %d" % (self.r.choice(GOODS), self.r.randrange(1000)), self.r.randrange(50, 100000)]

    def some(self, table, rows, existing):
        """An id of table: one that exists with probability existing, else one not there (yet)."""
        if rows and self.r.random() < existing:
            return self.r.choice(sorted(rows))
        return self.r.randrange(1, self.next[table] + 10)

    def order_values(self):
        cust = None if self.r.random() < 0.04 else self.some("customers", self.customers, 0.85)
        return [cust, self.some("products", self.products, 0.9), self.r.randrange(1, 20),
                self.r.choice(STATUSES)]

    # --- statements ---------------------------------------------------------------------------
    def insert(self, table, i, values, columns):
        self.ev(table, "c")
        return "INSERT INTO %s (id, %s) VALUES (%d, %s);" % (table, ", ".join(columns), i,
                                                             ", ".join(q(v) for v in values))

    def update(self, table, rows, i, changes):
        for col, v in changes.items():
            rows[i][col] = v
        self.ev(table, "u")
        return self.set_sql(table, changes, "id = %d" % i)

    def set_sql(self, table, changes, where):
        cols = COLUMNS[table]
        return "UPDATE %s SET %s WHERE %s;" % (
            table, ", ".join("%s = %s" % (cols[c], q(v)) for c, v in changes.items()), where)

    def delete(self, table, rows, i):
        del rows[i]
        self.ev(table, "d")
        self.ev(table, "tombstone")
        return "DELETE FROM %s WHERE id = %d;" % (table, i)

    def new_order(self, i):
        self.orders[i] = self.order_values()
        self.era[i], self.closed[i] = {self.orders[i][1]}, set()

    def insert_order(self):
        i = self.new_id("orders")
        self.new_order(i)
        return self.insert("orders", i, self.orders[i], ORDER_COLS)

    def fresh_product(self, avoid):
        """A product id not in avoid: an existing one mostly, else one not there (yet)."""
        for _ in range(20):
            p = self.some("products", self.products, 0.9)
            if p not in avoid:
                return p
        return max(avoid) + 1000  # beyond every product id: the order drops out of the mart

    def change_order(self):
        i = self.pick(self.orders)
        if self.r.random() < 0.5:
            return self.update("orders", self.orders, i, {2: self.r.randrange(1, 20)})
        return self.update("orders", self.orders, i, {2: self.r.randrange(1, 20), 3: self.r.choice(STATUSES)})

    def move_order_product(self):
        i = self.pick(self.orders)
        p = self.fresh_product(self.closed[i] | {self.orders[i][1]})
        self.era[i].add(p)
        return self.update("orders", self.orders, i, {1: p})

    def move_order_customer(self):
        # with a product the order never held (module doc)
        i = self.pick(self.orders)
        p = self.fresh_product(self.closed[i] | self.era[i])
        self.closed[i] |= self.era[i]
        self.era[i] = {p}
        return self.update("orders", self.orders, i, {0: self.some("customers", self.customers, 0.9), 1: p})

    def delete_order(self):
        return self.delete("orders", self.orders, self.pick(self.orders))

    def insert_customer(self):
        # sometimes a customer that orders already point at (it arrives late)
        dangling = sorted({o[0] for o in self.orders.values()
                           if o[0] is not None and o[0] not in self.customers and o[0] not in self.gone["customers"]})
        i = self.r.choice(dangling) if dangling and self.r.random() < 0.4 else self.new_id("customers")
        self.next["customers"] = max(self.next["customers"], i + 1)
        self.new_customer(i)
        return self.insert("customers", i, self.customers[i], CUSTOMER_COLS)

    def change_customer(self):
        # name and/or tier: the TOASTed notes unchanged
        i = self.pick(self.customers)
        if self.r.random() < 0.5:
            return self.update("customers", self.customers, i, {0: self.name()})
        return self.update("customers", self.customers, i, {0: self.name(), 1: self.r.choice(TIERS)})

    def change_tier(self):
        # every customer of one tier to another: one statement, many rows (notes unchanged)
        old, new = self.r.sample([t for t in TIERS if t is not None], 2)
        ids = [i for i, c in self.customers.items() if c[1] == old]
        for i in ids:
            self.customers[i][1] = new
        self.ev("customers", "u", len(ids))
        return self.set_sql("customers", {1: new}, "tier = %s" % q(old))

    def rewrite_notes(self):
        i = self.pick(self.customers)
        return self.update("customers", self.customers, i, {2: self.notes()})

    def delete_dimension(self, table):
        rows = getattr(self, table)
        i = self.pick(rows)
        self.gone[table].add(i)
        return self.delete(table, rows, i)

    def reinsert_dimension(self, table):
        """A deleted row of a dimension table inserted again, with new values."""
        if not self.gone[table]:
            return None
        i = self.r.choice(sorted(self.gone[table]))
        self.gone[table].discard(i)
        getattr(self, "new_" + table[:-1])(i)
        return self.insert(table, i, getattr(self, table)[i], COLUMNS[table])

    def delete_customer(self):
        return self.delete_dimension("customers")

    def reinsert_customer(self):
        return self.reinsert_dimension("customers")

    def insert_product(self):
        i = self.new_id("products")
        self.new_product(i)
        return self.insert("products", i, self.products[i], PRODUCT_COLS)

    def change_product(self):
        i = self.pick(self.products)
        v = self.product_values()
        if self.r.random() < 0.7:
            return self.update("products", self.products, i, {1: v[1]})
        return self.update("products", self.products, i, {0: v[0], 1: v[1]})

    def delete_product(self):
        return self.delete_dimension("products")

    def reinsert_product(self):
        return self.reinsert_dimension("products")

    def pick(self, rows):
        return self.r.choice(sorted(rows))

    KINDS = [
        ("insert_order", 18), ("change_order", 14), ("move_order_product", 12), ("move_order_customer", 8),
        ("delete_order", 6), ("insert_customer", 4), ("change_customer", 12), ("change_tier", 1),
        ("rewrite_notes", 3), ("delete_customer", 3), ("reinsert_customer", 3), ("insert_product", 3),
        ("change_product", 9), ("delete_product", 2), ("reinsert_product", 2),
    ]

    def statement(self):
        kinds, weights = zip(*self.KINDS)
        while True:
            k = self.r.choices(kinds, weights)[0]
            if len(self.orders) < 20 and k in ("delete_order",):
                continue
            if (len(self.customers) < 20 and k == "delete_customer") or (len(self.products) < 10 and k == "delete_product"):
                continue
            s = getattr(self, k)()
            if s is not None:
                self.mix[k] = self.mix.get(k, 0) + 1
                return s

    def snapshot(self, n_customers, n_products, n_orders):
        lines = []
        for table, n, new_row, cols in (("customers", n_customers, self.new_customer, CUSTOMER_COLS),
                                        ("products", n_products, self.new_product, PRODUCT_COLS),
                                        ("orders", n_orders, self.new_order, ORDER_COLS)):
            rows = getattr(self, table)
            for _ in range(n):
                new_row(self.new_id(table))
            self.ev(table, "r", n)
            lines += ["INSERT INTO %s (id, %s) VALUES (%d, %s);" % (table, ", ".join(cols), i, ", ".join(q(v) for v in v_))
                      for i, v_ in sorted(rows.items())]
        return lines

    def mart_rows(self):
        """orders LEFT JOIN customers ... JOIN products: the star mart's row count."""
        return sum(1 for o in self.orders.values() if o[1] in self.products)


ORDER_COLS = ["customer_id", "product_id", "qty", "status"]
CUSTOMER_COLS = ["name", "tier", "notes"]
PRODUCT_COLS = ["title", "price_cents"]
COLUMNS = {"orders": ORDER_COLS, "customers": CUSTOMER_COLS, "products": PRODUCT_COLS}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--customers", type=int, default=100)
    ap.add_argument("--products", type=int, default=40)
    ap.add_argument("--orders", type=int, default=400)
    ap.add_argument("--statements", type=int, default=1200)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    s = Star(a.seed)
    with open(os.path.join(a.out, "snapshot.sql"), "w", encoding="utf-8") as f:
        f.write("\n".join(s.snapshot(a.customers, a.products, a.orders)) + "\n")
    with open(os.path.join(a.out, "stream.sql"), "w", encoding="utf-8") as f:
        for _ in range(a.statements):
            f.write(s.statement() + "\n")
    exp = {
        "seed": a.seed,
        "snapshot_rows": {"orders": a.orders, "customers": a.customers, "products": a.products},
        "statements": a.statements,
        "mix": dict(sorted(s.mix.items())),
        "events": s.events,
        "records": {t: sum(v.values()) for t, v in s.events.items()},
        "final_rows": {"orders": len(s.orders), "customers": len(s.customers), "products": len(s.products),
                       "mart": s.mart_rows()},
    }
    with open(os.path.join(a.out, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(exp, f, indent=1, sort_keys=True)
    print(json.dumps({k: exp[k] for k in ("statements", "records", "final_rows")}))


if __name__ == "__main__":
    main()
