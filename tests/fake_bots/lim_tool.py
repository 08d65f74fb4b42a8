"""A fake bot for tests/test_limits.py and tests/test_sandbox.py: does what each line says.

Each command answers one line; an error is answered as ``error <ERRNO NAME>``.
It exits at EOF on stdin.

echo TEXT | alloc MB | alloc-child MB (in a child in its own session) | burn S |
burn-forever | burn-child | write MB [PATH] | write-dfl MB (SIGXFSZ at its default) |
write-die MB [PATH] (exits with status 1 when the write fails) |
files | status FIELD | limits | raise-nofile | abort | connect PORT | pids | signal PID |
mem PID | touch PATH | spawn-sleep SECONDS (in its own session, without our stdio) |
storm DEPTH (a tree of 2**(DEPTH+1)-2 children, each in a session of its own,
forked as fast as they can, all holding our stdout; answers nothing) |
close-stdout | close-stdin (and keeps running; answers nothing) |
memfd MB (writes MB into a memfd it keeps open) | hold PATH MB (writes MB into PATH
and keeps it open) | put PATH MB (writes MB into PATH and closes it) |
fill DIR N (writes N files of 1 MB into DIR) | unlinked DIR N (writes N files of 1 MB
into DIR, keeps them open and deletes them) | shm KEY N MB (makes N System V shared
memory segments of MB, keys KEY, KEY+1, ..., fills and detaches them) |
threads N (starts N threads that wait forever) | forks N (forks N children that sleep)
"""

import errno
import os
import resource
import signal
import socket
import subprocess
import sys
import time

out = sys.stdout
kept = []  # files kept open


def send(text: str) -> None:
    out.write(text + "\n")
    out.flush()


def error(exc: OSError) -> str:
    return f"error {errno.errorcode.get(exc.errno or 0, str(exc.errno))}"


def alloc(mb: int) -> None:
    chunks = []
    for _ in range(0, mb, 8):
        chunks.append(b"\1" * (8 << 20))  # written, so every page is resident


def burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def fill_file(f, mb: int) -> None:
    for _ in range(mb):
        os.write(f.fileno() if hasattr(f, "fileno") else f, b"\1" * (1 << 20))


def storm(depth: int) -> None:
    """Fork two children that start sessions of their own and do the same, down to
    ``depth``, then sleep: all hold our stdout."""
    for _ in range(2):
        if depth > 0 and os.fork() == 0:
            os.setsid()
            storm(depth - 1)
            time.sleep(3600)
            os._exit(0)


def limits_line() -> str:
    wanted = {"Max core file size": "core", "Max file size": "fsize", "Max open files": "nofile"}
    found = {}
    with open("/proc/self/limits") as f:
        for line in f:
            for label, key in wanted.items():
                if line.startswith(label):
                    soft, hard = line[len(label) :].split()[:2]
                    found[key] = f"{soft}/{hard}"
    return " ".join(f"{key}={found[key]}" for key in ("core", "fsize", "nofile"))


def main() -> None:
    for line in sys.stdin:
        cmd, _, arg = line.rstrip("\n").partition(" ")
        try:
            run(cmd, arg)
        except OSError as exc:
            send(error(exc))


def run(cmd: str, arg: str) -> None:
    if cmd == "echo":
        send(arg)
    elif cmd == "alloc":
        alloc(int(arg))
        send(f"allocated {arg}")
    elif cmd == "alloc-child":
        code = f"import time\nb = [b'\\1' * (8 << 20) for _ in range(0, {int(arg)}, 8)]\n"
        code += "time.sleep(60)"
        child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        send(f"child {child.pid}")
        send(f"child ended {child.wait()}")
    elif cmd == "burn":
        burn(float(arg))
        send("burnt")
    elif cmd == "burn-forever":
        send("burning")
        burn(float("inf"))
    elif cmd == "burn-child":
        code = "while True: pass"
        child = subprocess.Popen([sys.executable, "-c", code])
        send(f"child {child.pid}")
    elif cmd == "write":  # write MB [PATH]
        mb, _, path = arg.partition(" ")
        with open(path or "big", "wb") as f:
            for _ in range(int(mb)):
                f.write(b"\0" * (1 << 20))
        send("wrote")
    elif cmd == "write-die":  # EFBIG uncaught, as most bots would
        try:
            run("write", arg)
        except OSError as exc:
            print(f"write-die: {exc}", file=sys.stderr)
            sys.exit(1)
    elif cmd == "write-dfl":
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        run("write", arg)
    elif cmd == "files":
        held = []
        try:
            while True:
                held.append(open(os.devnull))
        except OSError as exc:
            send(f"opened {len(held)} {error(exc)}")
        for f in held:
            f.close()
    elif cmd == "status":  # one field of /proc/self/status, e.g. CapEff
        with open("/proc/self/status") as f:
            send(next((ln.split()[1] for ln in f if ln.startswith(arg + ":")), "none"))
    elif cmd == "limits":
        send(limits_line())
    elif cmd == "raise-nofile":
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard * 2))
        except ValueError as exc:  # Python's way to say EPERM for rlimits
            send(f"error {exc}")
        else:
            send("raised")
    elif cmd == "abort":
        os.abort()
    elif cmd == "connect":
        with socket.create_connection(("127.0.0.1", int(arg)), timeout=5):
            send("connected")
    elif cmd == "pids":
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        send(f"self {os.getpid()} all {' '.join(map(str, pids))}")
    elif cmd == "signal":
        os.kill(int(arg), 0)
        send("signalled")
    elif cmd == "mem":
        with open(f"/proc/{int(arg)}/mem", "rb"):
            send("opened")
    elif cmd == "touch":
        with open(arg, "w") as f:
            f.write("x")
        send("written")
    elif cmd == "spawn-sleep":
        # No stdio shared with the bot: nothing of it keeps the bot's pipes open.
        quiet = subprocess.DEVNULL
        child = subprocess.Popen(
            ["sleep", arg], start_new_session=True, stdin=quiet, stdout=quiet, stderr=quiet
        )
        send(f"child {child.pid}")
    elif cmd == "storm":
        storm(int(arg))
    elif cmd == "memfd":
        fd = os.memfd_create("hoard")
        kept.append(fd)
        fill_file(fd, int(arg))
        send(f"held {arg}")
    elif cmd in ("hold", "put"):
        path, mb = arg.split()
        with open(path, "wb") as f:
            fill_file(f, int(mb))
            if cmd == "hold":
                kept.append(os.dup(f.fileno()))
        send(f"{cmd} {mb}")
    elif cmd == "fill":
        folder, n = arg.split()
        for i in range(int(n)):
            with open(os.path.join(folder, f"fill{i}"), "wb") as f:
                fill_file(f, 1)
        send(f"filled {n}")
    elif cmd == "unlinked":
        folder, n = arg.split()
        for i in range(int(n)):
            path = os.path.join(folder, f"unlinked{i}")
            fd = os.open(path, os.O_CREAT | os.O_RDWR)
            fill_file(fd, 1)
            os.unlink(path)
            kept.append(fd)
        send(f"unlinked {n}")
    elif cmd == "shm":
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        key, n, mb = (int(word) for word in arg.split())
        for i in range(n):
            shmid = libc.shmget(key + i, mb << 20, 0o1000 | 0o600)  # IPC_CREAT
            if shmid < 0:
                send(error(OSError(ctypes.get_errno(), "shmget")))
                return
            addr = libc.shmat(shmid, None, 0)
            ctypes.memset(addr, 1, mb << 20)
            libc.shmdt(ctypes.c_void_p(addr))
        send(f"shm {n}")
    elif cmd == "threads":
        import threading

        never = threading.Event()
        for _ in range(int(arg)):
            threading.Thread(target=never.wait, daemon=True).start()
        send(f"threads {arg}")
    elif cmd == "forks":
        for _ in range(int(arg)):
            if os.fork() == 0:
                time.sleep(3600)
                os._exit(0)
        send(f"forks {arg}")
    elif cmd == "close-stdout":
        os.close(1)
        time.sleep(3600)
    elif cmd == "close-stdin":
        os.close(0)
        time.sleep(3600)
    else:
        send("unknown command")


if __name__ == "__main__":
    main()
