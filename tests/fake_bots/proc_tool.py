"""A fake bot for tests/test_process.py: does what each stdin line says.

Commands: echo TEXT | long N | nolf N | badutf8 | crlf | stderr N | exit N | env |
cwd | group | ignore-term | deaf | escape. It exits at EOF on stdin.
"""

import os
import signal
import subprocess
import sys

out = sys.stdout.buffer


def send(data: bytes) -> None:
    out.write(data)
    out.flush()


def pause_forever() -> None:
    while True:
        signal.pause()


for line in sys.stdin:
    cmd, _, arg = line.rstrip("\n").partition(" ")
    if cmd == "echo":
        send(arg.encode() + b"\n")
    elif cmd == "long":  # one line of N bytes
        send(b"x" * int(arg) + b"\n")
    elif cmd == "nolf":  # N bytes and no LF, then keep reading commands
        send(b"y" * int(arg))
    elif cmd == "badutf8":
        send(b"\xff\xfe bad\nok\n")
    elif cmd == "crlf":
        send(b"a\r\nb\n")
    elif cmd == "stderr":  # flood stderr, then say so on stdout
        block = b"e" * 65536
        left = int(arg)
        while left > 0:
            sys.stderr.buffer.write(block[:left])
            left -= len(block)
        sys.stderr.buffer.flush()
        send(b"done\n")
    elif cmd == "exit":
        send(b"bye\n")
        sys.stderr.buffer.write(b"last words\n")
        sys.stderr.buffer.flush()
        sys.exit(int(arg))
    elif cmd == "env":
        for key, value in sorted(os.environ.items()):
            send(f"{key}={value}\n".encode())
        send(b"END\n")
    elif cmd == "cwd":
        send(os.getcwd().encode() + b"\n")
    elif cmd == "group":
        send(f"{os.getpgid(0)} {os.getsid(0)}\n".encode())
    elif cmd == "ignore-term":  # ignore SIGTERM and stdin EOF alike
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        send(b"ready\n")
        pause_forever()
    elif cmd == "deaf":  # never read stdin again
        send(b"ready\n")
        pause_forever()
    elif cmd == "escape":  # a child in its own session that keeps our stdout/stderr
        child = subprocess.Popen(["sleep", "60"], start_new_session=True)
        send(f"{child.pid}\n".encode())
        sys.exit(0)
    else:
        send(b"unknown command\n")
