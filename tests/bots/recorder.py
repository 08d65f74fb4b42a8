"""recorder: plays at random and writes every protocol line it receives (`< ...`)
and sends (`> ...`) to stderr, to check `arena replay --raw` against."""

import random
import sys

for line in sys.stdin:
    print("< " + line.rstrip("\n"), file=sys.stderr, flush=True)
    f = line.split()
    if not f:
        continue
    if f[0] == "arena":
        answer = "hello recorder"
    elif f[0] == "request":
        answer = f"{f[1]} {random.choice(f[f.index(':') + 1 :])}"
    elif f[0] == "quit":
        break
    else:
        continue
    print("> " + answer, file=sys.stderr, flush=True)
    print(answer, flush=True)
