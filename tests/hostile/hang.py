"""hang (timeout): the first time in its scratch directory, it never answers its
first request; otherwise it plays at random."""

import os
import random
import sys
import time

first_time = not os.path.exists("hang.done")  # misbehave once per scratch directory

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello hang", flush=True)
    elif f and f[0] == "request":
        if first_time:
            open("hang.done", "w").close()
            time.sleep(3600)
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
