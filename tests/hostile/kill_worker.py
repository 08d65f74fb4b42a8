"""kill_worker (ends the run without --sandbox): at its first request, finds the
arena worker process among its ancestors and kills it with SIGKILL, in every
process it starts."""

import os
import random
import signal
import sys


def worker_above() -> int | None:
    pid = os.getppid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"arena.tournament.transport" in f.read():
                    return pid
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rpartition(")")[2].split()[1])
        except OSError:
            return None
    return None


for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello kill-worker", flush=True)
    elif f and f[0] == "request":
        victim = worker_above()
        if victim is not None:
            os.kill(victim, signal.SIGKILL)
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
