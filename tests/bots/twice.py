"""twice (a protocol fault): plays at random, but the first time it answers its
first request twice, in one write."""

import os
import random
import sys

MARKER = "twice.done"  # in the working directory: misbehave once per scratch directory
first_time = not os.path.exists(MARKER)

for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] == "arena":
        print("hello twice", flush=True)
    elif f[0] == "request":
        legal = f[f.index(":") + 1 :]
        if first_time:
            first_time = False
            open(MARKER, "w").close()
            answer = f"{f[1]} {random.choice(legal)}\n"
            sys.stdout.write(answer + answer)
            sys.stdout.flush()
            continue
        print(f[1], random.choice(legal), flush=True)
    elif f[0] == "quit":
        break
