"""slow (no fault): plays at random, but the first time it answers its first
request after 0.4 s: over a short decision time, well within the time bank."""

import os
import random
import sys
import time

MARKER = "slow.done"  # in the working directory: misbehave once per scratch directory
first_time = not os.path.exists(MARKER)

for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] == "arena":
        print("hello slow", flush=True)
    elif f[0] == "request":
        legal = f[f.index(":") + 1 :]
        if first_time:
            first_time = False
            open(MARKER, "w").close()
            time.sleep(0.4)
            print(f[1], random.choice(legal), flush=True)
            continue
        print(f[1], random.choice(legal), flush=True)
    elif f[0] == "quit":
        break
