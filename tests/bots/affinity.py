"""affinity: plays at random and, as it says hello, writes the CPUs it may run on
(``os.sched_getaffinity``) to stderr as ``cpus 0,1``, for the ``--affinity`` test
of tests/test_tournament.py.  It asks when the referee's first line arrives, so
after the referee has pinned it."""

import os
import random
import sys

for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] == "arena":
        print("cpus " + ",".join(map(str, sorted(os.sched_getaffinity(0)))), file=sys.stderr,
              flush=True)
        print("hello affinity", flush=True)
    elif f[0] == "request":
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f[0] == "quit":
        break
