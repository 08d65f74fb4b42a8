#!/usr/bin/env python3
"""random: the smallest correct Coup bot for the arena protocol (version 1).

It answers the handshake with its name, and every request with one of the
legal answers the request lists (the fields after ":"), chosen uniformly at
random.  It ignores every other line, plays any number of games, and exits on
`quit` or at the end of its input.  Python standard library only; print(...,
flush=True) sends each line at once.  Run: python3 random.py
"""

import os
import sys

# Not `import random`: this file's own name would shadow the standard module.


def pick(options: list[str]) -> str:
    return options[int.from_bytes(os.urandom(4), "big") % len(options)]


for line in sys.stdin:
    fields = line.split()
    if not fields:
        continue
    if fields[0] == "arena":
        print("hello random-py", flush=True)
    elif fields[0] == "request":
        legal = fields[fields.index(":") + 1 :]
        print(fields[1], pick(legal), flush=True)
    elif fields[0] == "quit":
        break
