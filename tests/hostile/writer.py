"""writer (no fault; a cheat for --sandbox): as it starts, it tries to write
outside its scratch directory (its working directory): to its own file (opened
for appending, nothing written), a new file next to it, the host's /tmp
(/tmp/arena-writer-<first 12 hex digits of the sha1 of its directory>) and the
folder above its scratch directory; and, to show it can write at all, in its
scratch directory. It reports one line on stderr, ``writer: {path: "written" or
ERRNO NAME}``; then it plays at random."""

import errno
import hashlib
import json
import os
import random
import sys

me = os.path.abspath(__file__)
here = os.path.dirname(me)
tag = hashlib.sha1(here.encode()).hexdigest()[:12]
above = os.path.dirname(os.getcwd())
new = os.O_WRONLY | os.O_CREAT
targets = {
    me: os.O_WRONLY | os.O_APPEND,
    os.path.join(here, f"written-by-writer-{os.getpid()}"): new,
    f"/tmp/arena-writer-{tag}": new,
    os.path.join(above, f"written-by-writer-{os.getpid()}"): new,
    os.path.join(os.getcwd(), "mine"): new,
}
report = {}
for path, flags in targets.items():
    try:
        fd = os.open(path, flags, 0o644)
        try:
            os.write(fd, b"" if path == me else b"writer was here\n")
        finally:
            os.close(fd)
        report[path] = "written"
    except OSError as exc:
        report[path] = errno.errorcode.get(exc.errno or 0, str(exc))
print("writer:", json.dumps(report), file=sys.stderr, flush=True)

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello writer", flush=True)
    elif f and f[0] == "request":
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
