"""close_stdout (crash): the first time in its scratch directory, it closes its
stdout at its first request and keeps running; otherwise it plays at random."""

import os
import random
import sys
import time

first_time = not os.path.exists("close_stdout.done")  # misbehave once per scratch directory

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello close-stdout", flush=True)
    elif f and f[0] == "request":
        if first_time:
            open("close_stdout.done", "w").close()
            os.close(1)
            time.sleep(3600)
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
