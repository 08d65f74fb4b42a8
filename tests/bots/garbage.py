"""garbage (a malformed fault): plays at random, but the first time it answers
its first request with a line that is not `<id> <answer>`."""

import os
import random
import sys

MARKER = "garbage.done"  # in the working directory: misbehave once per scratch directory
first_time = not os.path.exists(MARKER)

for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] == "arena":
        print("hello garbage", flush=True)
    elif f[0] == "request":
        legal = f[f.index(":") + 1 :]
        if first_time:
            first_time = False
            open(MARKER, "w").close()
            print("what is this", flush=True)
            continue
        print(f[1], random.choice(legal), flush=True)
    elif f[0] == "quit":
        break
