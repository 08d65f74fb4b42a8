"""chatty (no fault): plays at random and logs a line to stderr for every line
it gets, as a bot author would while debugging."""

import random
import sys

for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    print(f"chatty got: {line.rstrip()}", file=sys.stderr, flush=True)
    if f[0] == "arena":
        print("hello chatty", flush=True)
    elif f[0] == "request":
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f[0] == "quit":
        break
