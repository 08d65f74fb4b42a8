"""long_line (malformed): every process answers its first request with 64 MiB and
no newline (it blocks once the pipe is full, until it is killed)."""

import sys

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello long-line", flush=True)
    elif f and f[0] == "request":
        chunk = b"x" * (1 << 20)
        for _ in range(64):
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
        break
