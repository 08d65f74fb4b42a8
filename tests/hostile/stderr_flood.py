"""stderr_flood (no fault: stderr is a bot's log): every process writes 64 MiB to
stderr before its hello, then plays at random."""

import random
import sys

block = b"e" * 1023 + b"\n"
for _ in range(64):
    sys.stderr.buffer.write(block * 1024)  # 1 MiB
sys.stderr.flush()

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello stderr-flood", flush=True)
    elif f and f[0] == "request":
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
