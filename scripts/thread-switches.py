#!/usr/bin/env python3
"""Context switches and CPU per operation, by thread group, of a running JVM (Linux /proc only).

Reads every thread's voluntary and involuntary context switches and CPU time twice, WINDOW seconds
apart, and prints the differences per second, or per operation when RATE (operations per second of
the window: the row's ops/s) is given. Threads are grouped by name with
digits blanked ("bench-x-3" and "bench-x-7" are one group); a thread that starts or ends inside the
window is left out, so start the window after the row's threads are up. Used for BENCHMARKS.md:

    scripts/thread-switches.py PID WINDOW [RATE]      # e.g. 5 s inside the measured window of a row

A voluntary switch is a thread that blocked (parked, waited); an involuntary one a thread the
kernel preempted (on two cores: mostly a thread that woke others and was pushed off by them).
"""
import os
import re
import sys
import time
from collections import defaultdict

TICK = os.sysconf("SC_CLK_TCK")


def snapshot(pid):
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        base = f"/proc/{pid}/task/{tid}"
        try:
            name = open(base + "/comm").read().strip()
            status = dict(line.split(":", 1) for line in open(base + "/status") if ":" in line)
            stat = open(base + "/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended while read
        cpu = (int(stat[11]) + int(stat[12])) / TICK  # utime + stime, seconds
        threads[tid] = (name, int(status["voluntary_ctxt_switches"]), int(status["nonvoluntary_ctxt_switches"]), cpu)
    return threads


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    pid, window = sys.argv[1], float(sys.argv[2])
    rate = float(sys.argv[3]) if len(sys.argv) == 4 else 1.0
    before = snapshot(pid)
    time.sleep(window)
    after = snapshot(pid)
    ops = rate * window
    groups = defaultdict(lambda: [0, 0, 0, 0.0])
    for tid, (name, vol, invol, cpu) in after.items():
        if tid not in before:
            continue
        _, vol0, invol0, cpu0 = before[tid]
        g = groups[re.sub(r"[0-9]+", "#", name)]
        g[0] += 1
        g[1] += vol - vol0
        g[2] += invol - invol0
        g[3] += cpu - cpu0
    per = "op" if len(sys.argv) == 4 else "s"
    print(f"{'threads':24s} {'n':>3s} {'voluntary/' + per:>13s} {'involuntary/' + per:>15s} {'CPU µs/' + per:>11s}")
    total = [0, 0, 0.0]
    for name, (n, vol, invol, cpu) in sorted(groups.items(), key=lambda kv: -kv[1][3]):
        if vol + invol == 0 and cpu == 0:
            continue
        print(f"{name:24s} {n:3d} {vol / ops:13.3f} {invol / ops:15.3f} {cpu * 1e6 / ops:11.2f}")
        total = [total[0] + vol, total[1] + invol, total[2] + cpu]
    print(f"{'all':24s} {'':3s} {total[0] / ops:13.3f} {total[1] / ops:15.3f} {total[2] * 1e6 / ops:11.2f}")


if __name__ == "__main__":
    main()
