#!/usr/bin/env python3
"""random: the smallest correct Coup bot for the arena protocol (version 1).

It answers the handshake with its name, and every request with one of the
legal answers the request lists (the fields after ":"), chosen uniformly at
random from the `seed` line of each game, so that a game replays the same.
It ignores every other line, plays any number of games, and exits on `quit`
or at the end of its input.  Python standard library only; print(...,
flush=True) sends each line at once.  Run: python3 random.py
"""

import os
import sys

# Not `import random`: run as `python3 random.py`, this file would shadow it.
# A 64-bit linear congruential generator is random enough to pick answers.
state = int.from_bytes(os.urandom(8), "big")  # until a `seed` line comes


def pick(options: list[str]) -> str:
    global state
    state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
    return options[(state >> 32) % len(options)]


for line in sys.stdin:
    fields = line.split()
    if not fields:
        continue
    if fields[0] == "arena":
        print("hello random-py", flush=True)
    elif fields[0] == "seed":
        state = int(fields[1])
    elif fields[0] == "request":
        legal = fields[fields.index(":") + 1 :]
        print(fields[1], pick(legal), flush=True)
    elif fields[0] == "quit":
        break
