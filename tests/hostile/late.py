"""late (timeout): the first time in its scratch directory, it answers its first
request 0.3 s after its limit (decision_ms from the handshake plus the bank_ms
of the request); otherwise it plays at random."""

import os
import random
import sys
import time

first_time = not os.path.exists("late.done")  # misbehave once per scratch directory
decision_ms = 0

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        decision_ms = int(next(x for x in f if x.startswith("decision_ms=")).split("=")[1])
        print("hello late", flush=True)
    elif f and f[0] == "request":
        if first_time:
            first_time = False
            open("late.done", "w").close()
            bank_ms = int(next(x for x in f if x.startswith("bank_ms=")).split("=")[1])
            time.sleep((decision_ms + bank_ms) / 1000 + 0.3)
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
