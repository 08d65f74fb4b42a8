"""memory_hog (limit): every process, at its first request, fills memory 8 MiB at
a time, up to 1 GiB, and keeps it without answering (the watchdog kills it long
before: the tests give bots 200 MB)."""

import sys
import time

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello memory-hog", flush=True)
    elif f and f[0] == "request":
        hoard = [b"\1" * (8 << 20) for _ in range(128)]  # written: every page resident
        time.sleep(3600)
