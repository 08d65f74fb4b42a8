"""hang (a timeout fault): plays at random, but the first time it stops
answering at its first request."""

import os
import random
import sys
import time

MARKER = "hang.done"  # in the working directory: misbehave once per scratch directory
first_time = not os.path.exists(MARKER)

for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] == "arena":
        print("hello hang", flush=True)
    elif f[0] == "request":
        if first_time:
            open(MARKER, "w").close()
            time.sleep(3600)  # the referee kills it
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f[0] == "quit":
        break
