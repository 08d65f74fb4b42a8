"""early_partial (protocol): after its hello, and after each answer, writes the
id of the next request and a space, without LF; the rest of the answer comes
once the request is there. An answer begun before its request."""

import random
import sys

next_id = 1
for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello early-partial", end="\n1 ", flush=True)
    elif f and f[0] == "request":
        next_id = int(f[1]) + 1
        print(random.choice(f[f.index(":") + 1 :]), end=f"\n{next_id} ", flush=True)
    elif f and f[0] == "quit":
        break
