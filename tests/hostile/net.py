"""net (no fault; a cheat for --sandbox): run as ``net.py PORT``; as it starts, it
connects to 127.0.0.1:PORT and sends its pid, and reports one line on stderr,
``net: connected`` or ``net: <ERRNO NAME>``; then it plays at random."""

import errno
import os
import random
import socket
import sys

try:
    with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5) as conn:
        conn.sendall(f"net {os.getpid()}\n".encode())
    result = "connected"
except OSError as exc:
    result = errno.errorcode.get(exc.errno or 0, str(exc))
print("net:", result, file=sys.stderr, flush=True)

for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello net", flush=True)
    elif f and f[0] == "request":
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
