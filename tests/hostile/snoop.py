"""snoop (no fault; a cheat for --sandbox): as it starts, it tries to read the
memory and environment of the processes above it (the referee among them,
without --sandbox): /proc/<pid>/environ, /proc/<pid>/cmdline and the stack in
/proc/<pid>/mem, for its parent, its parent's parent, ... and pid 1, looking for
ARENA_TEST_SECRET=<value>. It reports one line on stderr,
``snoop: {"chain": [...], "secrets": [...], "reads": {...}}``, then plays at random."""

import errno
import json
import os
import random
import re
import sys

SECRET = re.compile(rb"ARENA_TEST_SECRET=([A-Za-z0-9_-]+)")


def parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rpartition(b")")[2].split()[1])


def read(path: str, start: int = 0, size: int = -1) -> bytes:
    with open(path, "rb") as f:
        if start:
            f.seek(start)
        return f.read(size)


chain, pid = [], os.getpid()
while pid > 1:
    try:
        pid = parent(pid)
    except (OSError, ValueError, IndexError):
        break
    chain.append(pid)
if 1 not in chain:
    chain.append(1)

secrets, reads = set(), {}
for pid in chain:
    for what in ("environ", "cmdline", "mem"):
        path = f"/proc/{pid}/{what}"
        try:
            if what == "mem":
                maps = read(f"/proc/{pid}/maps").decode()
                stack = next(line for line in maps.splitlines() if line.endswith("[stack]"))
                low, high = (int(x, 16) for x in stack.split()[0].split("-"))
                data = read(path, low, high - low)
            else:
                data = read(path)
        except StopIteration:
            reads[path] = "no stack"
            continue
        except OSError as exc:
            reads[path] = errno.errorcode.get(exc.errno or 0, str(exc))
            continue
        reads[path] = f"{len(data)} bytes"
        secrets.update(m.decode() for m in SECRET.findall(data))

report = {"chain": chain, "secrets": sorted(secrets), "reads": reads}
print("snoop:", json.dumps(report), file=sys.stderr, flush=True)

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello snoop", flush=True)
    elif f and f[0] == "request":
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
