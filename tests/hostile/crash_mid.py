"""crash_mid (crash): every process dies of an uncaught exception (status 1) at its
second request, in the middle of a game."""

import random
import sys

requests = 0
for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello crash-mid", flush=True)
    elif f and f[0] == "request":
        requests += 1
        if requests == 2:
            raise RuntimeError("crash_mid: crashing on purpose")
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
