"""deaf (crash): every process answers its first request, then closes its stdin
and keeps running, while the game goes on."""

import os
import random
import sys
import time

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello deaf", flush=True)
    elif f and f[0] == "request":
        os.close(0)  # reads nothing more: the referee's next write breaks
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
        time.sleep(3600)
    elif f and f[0] == "quit":
        break
