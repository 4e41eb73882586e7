#!/usr/bin/env python3
"""Checks that the product's native library loaded in every join job, on every TaskManager, from a
copy of its own per class loader (the product's NativeLibrary extracts one copy per class loader:
the JVM refuses to load one library file from two class loaders).

  native_check.py NATIVE_DIR NAME=JOB_ID... -- TM_OUT...

reads the join job's "E2E_NATIVE job=.. table=.. subtask=.. attempt=.. tm=.. pid=.. loader=..
version=.. loadedFrom=.." lines (printed by its sink's open(), which calls NativeLibrary.load() and
version()) from the TaskManagers' stdout files and checks:
  - every job loaded it on both TaskManagers (tm-1 and tm-2);
  - one class loader (pid, loader) -> one copy, and no two class loaders share a copy;
  - in one TaskManager JVM, the jobs' class loaders are distinct (so their copies are too);
  - every copy was extracted under NATIVE_DIR as cdcjoin-jni-<pid>-*/, and the copies of the
    TaskManagers still alive are there.
Prints one line per job and a summary; exits 0 iff all hold.
"""
import os
import re
import sys

LINE = re.compile(r"^E2E_NATIVE (.*)$")


def main():
    args = sys.argv[1:]
    sep = args.index("--")
    native_dir = os.path.realpath(args[0])
    jobs = dict(a.split("=", 1) for a in args[1:sep])
    outs = args[sep + 1:]
    lines = []
    for f in outs:
        try:
            for line in open(f, encoding="utf-8", errors="replace"):
                m = LINE.match(line.strip())
                if m:
                    lines.append(dict(kv.split("=", 1) for kv in m.group(1).split(" ") if "=" in kv))
        except FileNotFoundError:
            pass
    ok = True
    by_loader = {}   # (pid, loader) -> set(paths)
    by_path = {}     # path -> set((pid, loader))
    jobs_in_pid = {}  # pid -> {job: set(loaders)}
    versions = set()
    for d in lines:
        key = (d["pid"], d["loader"])
        by_loader.setdefault(key, set()).add(d["loadedFrom"])
        by_path.setdefault(d["loadedFrom"], set()).add(key)
        jobs_in_pid.setdefault(d["pid"], {}).setdefault(d["job"], set()).add(d["loader"])
        versions.add(d.get("version", "?"))
    for name, job in jobs.items():
        mine = [d for d in lines if d["job"] == job]
        tms = sorted({d["tm"] for d in mine})
        loaders = sorted({(d["pid"], d["loader"]) for d in mine})
        attempts = sorted({int(d["attempt"]) for d in mine})
        good = tms == ["tm-1", "tm-2"]
        ok &= good
        print("%-4s %-10s job %s: loaded on %s; %d class loader(s) (task attempts %s), each its own copy" % (
            "ok" if good else "FAIL", name, job, ",".join(tms) or "nowhere", len(loaders),
            ",".join(map(str, attempts)) or "-"))
    for key, paths in by_loader.items():
        if len(paths) != 1:
            ok = False
            print("FAIL class loader %s loaded from %d paths: %s" % (key, len(paths), sorted(paths)))
    for path, keys in by_path.items():
        if len(keys) != 1:
            ok = False
            print("FAIL copy %s shared by class loaders %s" % (path, sorted(keys)))
        real = os.path.realpath(path)
        pid = list(keys)[0][0]
        if not (os.path.dirname(os.path.dirname(real)) == native_dir
                and os.path.basename(os.path.dirname(real)).startswith("cdcjoin-jni-%s-" % pid)):
            ok = False
            print("FAIL copy %s not extracted under %s/cdcjoin-jni-%s-*" % (path, native_dir, pid))
        if os.path.exists("/proc/%s" % pid) and not os.path.exists(real):
            ok = False
            print("FAIL copy %s of the live TaskManager pid %s is gone" % (path, pid))
    shared_jvms = 0
    for pid, per_job in jobs_in_pid.items():
        loaders = [l for ls in per_job.values() for l in ls]
        if len(set(loaders)) != len(loaders):
            ok = False
            print("FAIL two jobs share a class loader in pid %s: %s" % (pid, per_job))
        if len(per_job) > 1:
            shared_jvms += 1
    print("%s native library %s: %d class loader(s) in %d TaskManager JVM(s) (%d of them running several join "
          "jobs at once), %d distinct extracted copies under %s" % (
              "ok" if ok else "FAIL", "/".join(sorted(versions)) or "?", len(by_loader), len(jobs_in_pid),
              shared_jvms, len(by_path), native_dir))
    sys.exit(0 if ok and lines else 1)


if __name__ == "__main__":
    main()
