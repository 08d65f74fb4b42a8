"""wrong_id (a protocol fault): plays at random, but the first time it answers
its first request with the id of a request that was never sent."""

import os
import random
import sys

MARKER = "wrong_id.done"  # in the working directory: misbehave once per scratch directory
first_time = not os.path.exists(MARKER)

for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] == "arena":
        print("hello wrong-id", flush=True)
    elif f[0] == "request":
        legal = f[f.index(":") + 1 :]
        if first_time:
            first_time = False
            open(MARKER, "w").close()
            print(int(f[1]) + 1, random.choice(legal), flush=True)
            continue
        print(f[1], random.choice(legal), flush=True)
    elif f[0] == "quit":
        break
