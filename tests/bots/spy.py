"""spy: plays at random, leaning to Examine (the rarest source of secrets) and
away from challenges (so it lives long enough to be examined), and appends
every line it receives to received.log in its working directory, for
tests/test_hidden_information.py."""

import random
import sys

with open("received.log", "a", encoding="utf-8", buffering=1) as log:
    for line in sys.stdin:
        log.write(line)
        f = line.split()
        if not f:
            continue
        if f[0] == "arena":
            print("hello spy", flush=True)
        elif f[0] == "request":
            legal = f[f.index(":") + 1 :]
            examine = [answer for answer in legal if answer.startswith("examine:")]
            if examine and random.random() < 0.5:
                legal = examine
            elif f[2] == "challenge" and random.random() < 0.8:
                legal = ["pass"]
            print(f[1], random.choice(legal), flush=True)
        elif f[0] == "quit":
            break
