"""early (protocol): every process answers request 1 before being asked: with its
hello, in the same write; then it plays at random."""

import random
import sys

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        sys.stdout.write("hello early\n1 income\n")
        sys.stdout.flush()
    elif f and f[0] == "request":
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
