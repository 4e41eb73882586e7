#!/usr/bin/env python3
"""What one fidelity connector wrote to its topics, from a dump of them (e2e/fidelity.sh):

  fidelity_topics.py DUMP EXPECTED_RECORDS

DUMP holds one record value per line (Debezium's JSON, plain or schema-wrapped; "null" for a
tombstone). Prints, per table, the records by kind (initial snapshot r, incremental snapshot r,
c, u, d) and how many change events were delivered more than once (the same table, LSN and op: the
re-delivery after Kafka Connect was restarted with rewound offsets). Exits 1 unless the dump holds
EXPECTED_RECORDS records (the topics' end offsets), some change events were delivered again, and
both tables were read by an incremental snapshot.
"""
import json
import sys
from collections import Counter, defaultdict


def kind(p):
    if p["op"] != "r":
        return p["op"]
    return "incremental r" if p["source"].get("snapshot") == "incremental" else "initial r"


def main():
    path, expected = sys.argv[1], int(sys.argv[2])
    kinds = defaultdict(Counter)
    seen = Counter()
    records = tombstones = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            records += 1
            if line == "null":
                tombstones += 1
                continue
            v = json.loads(line)
            p = v["payload"] if "schema" in v and "payload" in v else v
            table = p["source"]["table"]
            k = kind(p)
            kinds[table][k] += 1
            if k in ("c", "u", "d"):
                seen[(table, p["source"]["lsn"], k)] += 1
    again = sum(n - 1 for n in seen.values())
    per_table = "; ".join("%s: %s" % (t, ", ".join("%s %d" % kv for kv in sorted(c.items())))
                          for t, c in sorted(kinds.items()))
    print("%d records (%d tombstones); %s; change events delivered again: %d" % (records, tombstones, per_table, again))
    problems = []
    if records != expected:
        problems.append("read %d of the topics' %d records" % (records, expected))
    if again == 0:
        problems.append("no change event was delivered twice: the re-delivery did not happen")
    for t in ("fid_items", "fid_accounts"):
        if kinds[t]["incremental r"] == 0:
            problems.append("no incremental snapshot record of %s" % t)
    if problems:
        print("FAIL: " + "; ".join(problems))
        sys.exit(1)


if __name__ == "__main__":
    main()
