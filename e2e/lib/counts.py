#!/usr/bin/env python3
"""Checks the Debezium record counts against a workload's expected.json (the tables it names).

  counts.py kafka EXPECTED PREFIX           reads `kafka.sh offsets` lines ("TOPIC N") on stdin:
                                            records per topic == expected records per table
  counts.py job EXPECTED PREFIX GROUP TM_OUT...
                                            parses the proof job's "E2E_COUNT topic=T op=O count=N job=GROUP"
                                            lines in the TaskManagers' stdout files (the highest count
                                            per key: counts only grow, and after a restore from a
                                            checkpoint they grow back to the exact total):
                                            records per (topic, op) == expected events per (table, op)
  counts.py snapshot EXPECTED PREFIX        like kafka, but only the snapshot's rows (op r)

Prints one line per topic and exits 0 iff every count matches.
"""
import json
import re
import sys


def main():
    mode, expected_path, prefix = sys.argv[1:4]
    exp = json.load(open(expected_path, encoding="utf-8"))
    tables = sorted(exp["records"])  # the workload's tables (workload.py's or star_workload.py's)
    topic = {t: "%s.public.%s" % (prefix, t) for t in tables}
    ok = True
    if mode in ("kafka", "snapshot"):
        got = {}
        for line in sys.stdin:
            parts = line.split()
            if len(parts) == 2:
                got[parts[0]] = int(parts[1])
        for t in tables:
            want = exp["records"][t] if mode == "kafka" else exp["snapshot_rows"][t]
            have = got.get(topic[t], 0)
            ok &= have == want
            print("%-22s records %6d  expected %6d  %s" % (topic[t], have, want, "ok" if have == want else "MISMATCH"))
    elif mode == "job":
        best = {}
        pat = re.compile(r"E2E_COUNT topic=(\S+) op=(\S+) count=(\d+) job=(\S+)")
        group = sys.argv[4]
        for path in sys.argv[5:]:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line in f:
                        m = pat.search(line)
                        if m and m.group(4) == group:
                            k = (m.group(1), m.group(2))
                            best[k] = max(best.get(k, 0), int(m.group(3)))
            except FileNotFoundError:
                pass
        for t in tables:
            want = exp["events"][t]
            have = {op: n for (tp, op), n in best.items() if tp == topic[t]}
            same = have == want
            ok &= same
            fmt = lambda d: " ".join("%s=%d" % kv for kv in sorted(d.items()))
            print("%-22s job counts %s  %s" % (topic[t], fmt(have), "ok" if same else "MISMATCH, expected " + fmt(want)))
    else:
        sys.exit("unknown mode " + mode)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
