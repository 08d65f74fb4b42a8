"""escape (timeout): every process starts two sleepers that leave its session: a
child that calls setsid and keeps the bot's stdout and stderr, and a daemon
(double fork, setsid, stdio on /dev/null) whose parent is gone at once. The
first time in its scratch directory it also never answers its first request, so
the referee ends it after a fault; otherwise it plays at random and quits.
The sleepers are this file run again as ``escape.py sleeper FD``: each tells the
bot its pid and session id on FD; the bot waits for both, writes them to its
stderr (its log) as ``sleeper PID SID`` lines, then says hello."""

import os
import random
import signal
import subprocess
import sys
import time

if sys.argv[1:2] == ["sleeper"]:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    os.write(int(sys.argv[2]), f"{os.getpid()} {os.getsid(0)}\n".encode())
    os.close(int(sys.argv[2]))
    time.sleep(3600)
    sys.exit(0)

ready, told = os.pipe()
sleeper = [sys.executable, os.path.abspath(__file__), "sleeper", str(told)]
subprocess.Popen(sleeper, start_new_session=True, stdin=subprocess.DEVNULL, pass_fds=(told,))
middle = os.fork()
if middle == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.set_inheritable(told, True)
        os.execv(sys.executable, sleeper)
    os._exit(0)
os.waitpid(middle, 0)
os.close(told)
got = b""
while got.count(b"\n") < 2 and (data := os.read(ready, 100)):
    got += data
for sleeper_line in got.decode().splitlines():
    print(f"sleeper {sleeper_line}", file=sys.stderr, flush=True)

first_time = not os.path.exists("escape.done")  # hang once per scratch directory
for line in sys.stdin:
    f = line.split()
    if f and f[0] == "arena":
        print("hello escape", flush=True)
    elif f and f[0] == "request":
        if first_time:
            open("escape.done", "w").close()
            time.sleep(3600)
        print(f[1], random.choice(f[f.index(":") + 1 :]), flush=True)
    elif f and f[0] == "quit":
        break
