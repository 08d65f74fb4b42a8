"""garbage (malformed): every process answers its first request with binary junk
(not UTF-8); then it plays at random."""

import random
import sys

first_time = True
for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello garbage", flush=True)
    elif f and f[0] == "request":
        if first_time:
            first_time = False
            sys.stdout.buffer.write(b"\x00\xff\xfe\x80 \x1b[31mjunk\x07\n")
            sys.stdout.flush()
            continue
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
