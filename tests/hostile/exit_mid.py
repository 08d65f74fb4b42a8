"""exit_mid (crash): every process exits cleanly (status 0) at its second request,
in the middle of a game, without answering it."""

import random
import sys

requests = 0
for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello exit-mid", flush=True)
    elif f and f[0] == "request":
        requests += 1
        if requests == 2:
            sys.exit(0)
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
