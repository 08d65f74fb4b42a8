#!/usr/bin/env python3
"""det_hash: a deterministic test bot (protocol version 1, standard library only).

Every answer is a sha256 of the bot's name (the file's stem), the game line
without its per-process game number, every event of the game so far (which
holds its own cards and all it has seen), and the request without its id and
bank, taken modulo the number of legal answers.  So the same deal with the
same opponents is always played the same way, whatever process plays it and
however fast, and the choice is not trivially the first or last answer.
Copies under other names play differently.  It exits on `quit` or at the end
of its input.
"""

import hashlib
import os
import sys

NAME = os.path.splitext(os.path.basename(__file__))[0]
history = hashlib.sha256()

for line in sys.stdin:
    fields = line.split()
    if not fields:
        continue
    if fields[0] == "arena":
        print("hello " + NAME, flush=True)
    elif fields[0] == "game":
        # "game <n> seat ..." : <n> counts games per process, so leave it out.
        history = hashlib.sha256((NAME + "/" + " ".join(fields[2:]) + "\n").encode())
    elif fields[0] == "event":
        history.update(line.encode())
    elif fields[0] == "request":
        legal = fields[fields.index(":") + 1 :]
        context = [f for f in fields[2:] if not f.startswith("bank_ms=")]
        digest = history.copy()
        digest.update(("request " + " ".join(context) + "\n").encode())
        choice = legal[int.from_bytes(digest.digest()[:8], "big") % len(legal)]
        print(fields[1], choice, flush=True)
    elif fields[0] == "quit":
        break
