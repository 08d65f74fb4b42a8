"""long_line (a malformed fault): plays at random, but the first time it answers
its first request with a 300-byte line, over the 256-byte cap."""

import os
import random
import sys

MARKER = "long_line.done"  # in the working directory: misbehave once per scratch directory
first_time = not os.path.exists(MARKER)

for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] == "arena":
        print("hello long-line", flush=True)
    elif f[0] == "request":
        legal = f[f.index(":") + 1 :]
        if first_time:
            first_time = False
            open(MARKER, "w").close()
            print(f[1], "x" * 300, flush=True)
            continue
        print(f[1], random.choice(legal), flush=True)
    elif f[0] == "quit":
        break
