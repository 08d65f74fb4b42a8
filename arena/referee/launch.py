"""The keeper: the first program of a limited bot process. It sets the limits,
starts the bot as its child, and makes sure nothing the bot started outlives it.

Run as ``python -I -S launch.py [NAME=VALUE ...] -- PROGRAM [ARG ...]`` (see
``arena.referee.limits.launcher_argv``), never imported by the referee. It uses
the standard library only, and little of it, so it starts in about 15 ms. Options:

* ``fsize=BYTES``, ``nofile=N``, ``core=BYTES``: set that ``RLIMIT_*`` (soft and
  hard) before the bot starts; the bot and everything it starts inherit it.
* ``status=FD``: a pipe to the referee. If the exec of the bot fails, one line
  ``errno message`` is written to it and the keeper exits with status 127; if
  the exec succeeds, the pipe closes having carried nothing (the keeper closes
  its copy once the bot is forked, the bot's copy closes on exec). So the
  referee learns, as ``subprocess`` would tell it, whether the program started.
* ``dropcap=1``: when running as root, remove ``CAP_SYS_RESOURCE`` from the
  capability bounding set, so the bot (root too) cannot raise its hard limits.
* ``cpus=N[,N...]``: pin the keeper to these CPUs (``sched_setaffinity``) before
  the bot is forked, so the bot and all it starts inherit the pin from their
  first instruction (``arena run --affinity``). A CPU that cannot be used is a
  start error, reported on ``status`` like a failed exec.
* ``handoff=1``: give the program the bot's stdin and stdout as fds 3 and 4, and
  ``/dev/null`` as its own 0 and 1. For bwrap: it keeps its fds 0-2 open for the
  sandbox's whole life (in two processes), so a bot that closed its stdout or
  stdin would never look closed to the referee. The command run inside the
  sandbox moves 3 and 4 back to 0 and 1 (``sandbox.HANDOFF``); bwrap closes
  every fd above 2 in its own processes.

What it does, in order:

1. Sets the limits and the CPUs, and becomes a *child subreaper* (``PR_SET_CHILD_SUBREAPER``):
   every orphaned descendant of the bot, a child that called ``setsid`` and
   whose parent died included, is reparented to the keeper instead of to init.
   So "every descendant of the keeper" is exactly the bot's processes.
2. Asks for ``SIGHUP`` when its parent dies (``PR_SET_PDEATHSIG``), then checks
   that the referee is still there (its end of the status pipe is open), for
   the referee may have died before the ``prctl``. Not ``SIGTERM``: the kernel
   sends the signal when the *thread* that forked the keeper ends, and trio
   starts processes from worker threads that end after 10 s idle. So on
   ``SIGHUP`` the keeper acts only if ``getppid()`` changed (the referee died);
   otherwise it goes on waiting (a thread of the referee ended).
3. Forks the bot, which stays in the keeper's process group (the referee's
   ``killpg`` reaches both), resets ``SIGPIPE`` and ``SIGXFSZ`` to their defaults
   (Python ignores them, and an ignored signal stays ignored across exec) and
   execs the program. The keeper then lets go of the bot's stdin, stdout and
   stderr (``/dev/null`` instead), so the referee sees EOF and broken pipes as
   soon as the bot and its descendants do.
4. Waits, reaping orphans as they die, until one of:

   * the bot ends: the keeper SIGKILLs whatever the bot left behind, and exits
     with the bot's status (dying of the same signal if a signal killed it, so
     the referee reads the same ``returncode`` as without a keeper);
   * ``SIGTERM`` (the referee ends the bot): it SIGKILLs the bot and every
     descendant, and dies of ``SIGTERM`` (unless the bot had ended already);
   * ``SIGUSR1`` (the referee's watchdog found the bot over a limit): it SIGKILLs
     the bot and every descendant, and dies of ``SIGKILL``, as the bot did;
   * the referee died: it SIGKILLs every descendant and exits.

   Killing: SIGKILL every process whose parent chain leads to the keeper (read
   from ``/proc/*/stat``), reap, and repeat until the keeper has no child left.
   A process forked meanwhile is reparented to the keeper when its parent dies,
   so the loop ends only when nothing of the bot is left.

The keeper costs a few milliseconds at start, no CPU while it waits, and about
10 MB of memory (mostly the shared Python library), which the watchdog does not
count as the bot's. A bot that kills or stops its keeper (it runs as the same
user) is back where it would be without one: the referee still kills its
process group, but a process that left the group may survive. ``--sandbox``
hides the keeper from the bot.
"""

import _signal  # not signal: that one imports enum, which costs more than all the rest
import os
import resource
import sys

_RLIMITS = {
    "fsize": resource.RLIMIT_FSIZE,
    "nofile": resource.RLIMIT_NOFILE,
    "core": resource.RLIMIT_CORE,
}
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_CAP_SYS_RESOURCE = 24
_PR_SET_CHILD_SUBREAPER = 36
_PARENT_DIED = _signal.SIGHUP
_OVER_LIMIT = _signal.SIGUSR1
_WATCHED = {_signal.SIGCHLD, _signal.SIGTERM, _PARENT_DIED, _OVER_LIMIT}
# Where ``handoff=1`` puts the bot's stdin and stdout (see sandbox.HANDOFF).
_HANDOFF_FDS = (3, 4)


def _prctl_function():
    # _ctypes directly: the ctypes package costs 2-3 ms more to import.
    import _ctypes

    class ULong(_ctypes._SimpleCData):
        _type_ = "L"

    class Int(_ctypes._SimpleCData):
        _type_ = "i"

    class Function(_ctypes.CFuncPtr):
        _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
        _restype_ = Int

    prctl = Function(_ctypes.dlsym(_ctypes.dlopen(None), "prctl"))
    prctl.argtypes = (ULong,) * 5

    def call(option: int, arg: int, what: str) -> None:
        if prctl(option, arg, 0, 0, 0) != 0:
            err = _ctypes.get_errno()
            raise OSError(err, f"cannot {what}: {os.strerror(err)}")

    return call


def _fail(status_fd: int | None, message: str) -> None:
    if status_fd is not None:
        try:
            os.write(status_fd, message.encode("utf-8", "replace"))
        except OSError:
            pass
    try:
        os.write(2, f"arena launcher: {message}\n".encode("utf-8", "replace"))
    except OSError:
        pass
    os._exit(127)


def _referee_gone(status_fd: int | None) -> bool:
    """Whether the referee has died: nobody reads the status pipe any more."""
    if status_fd is None:
        return os.getppid() == 1
    import select

    poller = select.poll()
    poller.register(status_fd, 0)  # POLLERR and POLLHUP are always reported
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def _descendants(me: int) -> list[int]:
    """Every live process whose parent chain leads to ``me``."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        # After the command, which is in parentheses and may hold anything:
        # state, ppid, ...
        fields = stat[stat.rfind(b")") + 2 :].split(b" ", 2)
        if len(fields) > 1 and fields[0] not in (b"Z", b"X"):
            children.setdefault(int(fields[1]), []).append(int(name))
    found, todo = [], [me]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _kill_all(me: int) -> None:
    """SIGKILL every descendant and reap, until the keeper has no child left."""
    while True:
        for pid in _descendants(me):
            try:
                os.kill(pid, _signal.SIGKILL)
            except OSError:
                pass
        try:
            # Blocks until a child ends: every child was just killed, or is a
            # process born meanwhile, found and killed on the next round.
            pid, _ = os.waitpid(-1, 0)
            while pid:
                pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # no child: nothing descends from the keeper any more


def _hand_off(status_fd: int | None) -> int | None:
    """In the bot's child: stdin and stdout to fds 3 and 4, /dev/null to 0 and 1."""
    if status_fd in _HANDOFF_FDS:
        import fcntl

        status_fd = fcntl.fcntl(status_fd, fcntl.F_DUPFD_CLOEXEC, 10)
    for fd, target in zip((0, 1), _HANDOFF_FDS, strict=True):
        os.dup2(fd, target)  # inheritable
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    if null > 2:
        os.close(null)
    return status_fd


def _exit_like(status: int) -> None:
    """End the keeper as the bot ended (a wait status): same exit status, or same signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig != _signal.SIGKILL:
            _signal.signal(sig, _signal.SIG_DFL)  # Python ignores or handles some
            _signal.pthread_sigmask(_signal.SIG_UNBLOCK, {sig})
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)  # not reached, unless the signal's default is not to die
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _keep(bot: int, referee: int) -> None:
    me = os.getpid()
    while True:
        info = _signal.sigwaitinfo(_WATCHED)
        if info.si_signo == _signal.SIGTERM:
            pid, status = os.waitpid(bot, os.WNOHANG)  # it may have ended just now
            _kill_all(me)
            _exit_like(status if pid == bot else _signal.SIGTERM)  # "killed by SIGTERM"
        if info.si_signo == _OVER_LIMIT:
            _kill_all(me)
            os.kill(me, _signal.SIGKILL)
        if info.si_signo == _PARENT_DIED:
            if os.getppid() != referee:  # else only the thread that forked us ended
                _kill_all(me)
                os._exit(1)
            continue
        # SIGCHLD: reap every child that ended (orphans too), and see if it was the bot.
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == 0:
                break
            if pid == bot:
                _kill_all(me)
                _exit_like(status)


def main(args: list[str]) -> None:
    status_fd = None
    if "--" not in args:
        _fail(None, "usage: launch.py [NAME=VALUE ...] -- PROGRAM [ARG ...]")
    split = args.index("--")
    options, argv = args[:split], args[split + 1 :]
    cpus = None
    handoff = False
    try:
        values = {}
        for option in options:
            name, _, value = option.partition("=")
            if name == "cpus":
                cpus = {int(cpu) for cpu in value.split(",")}
            else:
                values[name] = int(value)
        status_fd = values.pop("status", None)
        handoff = bool(values.pop("handoff", 0))
        if status_fd is not None:
            os.set_inheritable(status_fd, False)  # the bot's copy closes on exec
        prctl = _prctl_function()
        if values.pop("dropcap", 0) and os.geteuid() == 0:
            prctl(_PR_CAPBSET_DROP, _CAP_SYS_RESOURCE, "drop CAP_SYS_RESOURCE")
        for name, value in values.items():
            which = _RLIMITS[name]
            hard = resource.getrlimit(which)[1]
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)  # a limit can only be lowered here
            resource.setrlimit(which, (value, value))
        prctl(_PR_SET_CHILD_SUBREAPER, 1, "become a child subreaper")
    except (KeyError, ValueError, OSError, ImportError, AttributeError) as exc:
        _fail(status_fd, f"bad option or limit: {exc}")
    if not argv:
        _fail(status_fd, "no program to run")
    if cpus is not None:
        try:
            os.sched_setaffinity(0, cpus)  # inherited across fork and exec
        except (OSError, AttributeError) as exc:
            what = getattr(exc, "strerror", None) or exc
            _fail(status_fd, f"cannot pin to CPU {','.join(map(str, sorted(cpus)))}: {what}")

    # Signals are taken with sigwaitinfo, so none is lost between two waits. An
    # ignored SIGCHLD would reap the bot before the keeper could read its status.
    _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
    mask = _signal.pthread_sigmask(_signal.SIG_BLOCK, _WATCHED)
    try:
        prctl(_PR_SET_PDEATHSIG, _PARENT_DIED, "ask for a signal when arena dies")
    except OSError as exc:
        _fail(status_fd, str(exc))
    referee = os.getppid()
    if _referee_gone(status_fd):
        os._exit(1)  # the referee died before it could be told: nobody to play for

    try:
        bot = os.fork()
    except OSError as exc:
        _fail(status_fd, f"cannot fork: {exc.strerror or exc}")
    if bot == 0:
        try:
            _signal.pthread_sigmask(_signal.SIG_SETMASK, mask)
            _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)
            _signal.signal(_signal.SIGXFSZ, _signal.SIG_DFL)
            if handoff:
                status_fd = _hand_off(status_fd)
            os.execvp(argv[0], argv)
        except OSError as exc:
            _fail(status_fd, f"{argv[0]}: {exc.strerror or exc}")
        finally:
            os._exit(127)

    if status_fd is not None:
        os.close(status_fd)
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        null = None
    for fd in (0, 1, 2):
        try:
            if null is None:
                os.close(fd)
            else:
                os.dup2(null, fd)
        except OSError:
            pass
    if null is not None:
        os.close(null)
    _keep(bot, referee)


if __name__ == "__main__":
    main(sys.argv[1:])
