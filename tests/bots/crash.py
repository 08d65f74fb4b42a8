"""crash (a crash fault): plays at random, but the first time it exits with
status 3 on its second request, in the middle of a game."""

import os
import random
import sys

MARKER = "crash.done"  # in the working directory: misbehave once per scratch directory
first_time = not os.path.exists(MARKER)
requests = 0

for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] == "arena":
        print("hello crash", flush=True)
    elif f[0] == "request":
        requests += 1
        if first_time and requests == 2:
            open(MARKER, "w").close()
            print("crash: giving up on purpose", file=sys.stderr, flush=True)
            sys.exit(3)
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f[0] == "quit":
        break
