"""stubborn (no fault; for the test where the referee dies): plays at random and
exits on quit, but ignores SIGTERM, SIGHUP and SIGPIPE, does not exit at the end
of its input, and starts a child in its own session that ignores them too and
sleeps. Only SIGKILL ends them. The child is this file run again with ``child``."""

import os
import random
import signal
import subprocess
import sys
import time

for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
    signal.signal(sig, signal.SIG_IGN)

if sys.argv[1:] == ["child"]:
    while True:
        time.sleep(3600)

subprocess.Popen(
    [sys.executable, os.path.abspath(__file__), "child"],
    start_new_session=True,
    stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello stubborn", flush=True)
    elif f and f[0] == "request":
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        sys.exit(0)
while True:  # the end of its input: the referee is gone, and it stays
    time.sleep(3600)
