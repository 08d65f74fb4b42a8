"""many_lines (protocol): every process writes 200,000 short lines right after its
hello, before it is asked anything; then it plays at random."""

import random
import sys

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        # The hello and the first lines in one write: they are there before any request.
        sys.stdout.write("hello many-lines\n" + "0 income\n" * 1000)
        for _ in range(199):  # blocks once the pipe is full, until it is killed
            sys.stdout.write("0 income\n" * 1000)
        sys.stdout.flush()
    elif f and f[0] == "request":
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
