"""spin_between (limit): plays at random; after each game it starts a child that
burns CPU until it is killed (in a session of its own, without the bot's stdio),
so the CPU is used while no game is on."""

import os
import random
import subprocess
import sys

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello spin-between", flush=True)
    elif f and f[0] == "request":
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "gameover":
        quiet = subprocess.DEVNULL
        subprocess.Popen([sys.executable, "-c", "while True: pass", os.path.abspath(__file__)],
                         start_new_session=True, stdin=quiet, stdout=quiet, stderr=quiet)
    elif f and f[0] == "quit":
        break
