#!/usr/bin/env python3
"""Summarises an async-profiler `collapsed` file written with `threads`: the share of samples per
thread, then for the busiest threads the share of samples whose stack holds each frame of interest
(inclusive) and the leaf frames (self). Usage: threads.py FILE [LEAVES]"""
import collections
import re
import sys

FRAMES = [
    "KeyGroupJoin.processBatch", "KeyGroupJoinOperator.emitRows", "JoinedRows.row",
    "ChecksumWriter.write", "SpillingAdaptiveSpanningRecordDeserializer",
    "ChangeBatchSerializer.deserialize", "NativeDecoder.decodeJson", "NativeDecodeOperator.processElement",
    "NativeDecodeOperator.flush", "NativeDecodeOperator$Emitter.block", "TraceSource$Reader.emitOne",
    "TraceSource$Open.readMessage",
]

def main(path, leaves):
    per_thread = collections.Counter()
    inclusive = collections.defaultdict(collections.Counter)
    self_ = collections.defaultdict(collections.Counter)
    for line in open(path):
        stack, n = line.rstrip().rsplit(" ", 1)
        frames = stack.split(";")
        thread = re.sub(r" tid=\d+", "", frames[0]).strip("[]")[:48]
        per_thread[thread] += int(n)
        self_[thread][frames[-1][:100]] += int(n)
        for f in FRAMES:
            if any(f in x for x in frames):
                inclusive[thread][f] += int(n)
    total = sum(per_thread.values())
    print(f"samples {total}")
    for t, n in per_thread.most_common(8):
        print(f"{100 * n / total:5.1f}  {t}")
    for t, n in per_thread.most_common(3):
        print(f"\n== {t} ({n} samples)\ninclusive:")
        for f, k in inclusive[t].most_common():
            print(f"  {100 * k / n:5.1f}  {f}")
        print("self:")
        for f, k in self_[t].most_common(leaves):
            print(f"  {100 * k / n:5.1f}  {f}")

main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25)
