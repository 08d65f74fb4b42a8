"""lister (no fault; a cheat for --sandbox): as it starts, it lists every process
it can see, with its command line, and reports one line on stderr,
``lister: {"me": pid, "processes": {pid: cmdline}}``; then it plays at random."""

import json
import os
import random
import sys

processes = {}
for name in os.listdir("/proc"):
    if name.isdigit():
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                processes[name] = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            processes[name] = None
print(
    "lister:", json.dumps({"me": os.getpid(), "processes": processes}), file=sys.stderr, flush=True
)

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello lister", flush=True)
    elif f and f[0] == "request":
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
