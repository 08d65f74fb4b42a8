"""twice (protocol): every process answers its first request twice, in one write;
then it plays at random."""

import random
import sys

first_time = True
for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello twice", flush=True)
    elif f and f[0] == "request":
        answer = f"{f[1]} {random.choice(f[f.index(':') + 1 :])}\n"
        sys.stdout.write(answer * 2 if first_time else answer)
        sys.stdout.flush()
        first_time = False
    elif f and f[0] == "quit":
        break
