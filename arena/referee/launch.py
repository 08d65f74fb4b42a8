"""Set resource limits, then exec a bot: the first program of a limited bot process.

Run as ``python -I -S launch.py [NAME=VALUE ...] -- PROGRAM [ARG ...]`` (see
``arena.referee.limits.launcher_argv``), never imported by the referee. It uses
the standard library only, and little of it, so it starts in about 10 ms. Options:

* ``fsize=BYTES``, ``nofile=N``, ``core=BYTES``: set that ``RLIMIT_*`` (soft and
  hard) before the exec; the bot and everything it starts inherit it.
* ``status=FD``: a pipe to the referee. If the exec fails, one line
  ``errno message`` is written to it and the launcher exits with status 127; if
  the exec succeeds, the pipe closes (close-on-exec) having carried nothing. So
  the referee learns, as ``subprocess`` would tell it, whether the program started.
* ``dropcap=1``: when running as root, remove ``CAP_SYS_RESOURCE`` from the
  capability bounding set, so the bot (root too) cannot raise its hard limits.

Python ignores ``SIGPIPE`` and ``SIGXFSZ`` at start-up, and an ignored signal stays
ignored across exec; both are set back to their defaults before the exec, so the
bot gets the signals a program started by a shell would get.
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
_PR_CAPBSET_DROP = 24
_CAP_SYS_RESOURCE = 24


def _drop_sys_resource() -> None:
    import ctypes  # only as root: it costs a few milliseconds

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_CAPBSET_DROP, _CAP_SYS_RESOURCE, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"cannot drop CAP_SYS_RESOURCE: {os.strerror(err)}")


def _fail(status_fd: int | None, message: str) -> None:
    if status_fd is not None:
        try:
            os.write(status_fd, message.encode("utf-8", "replace"))
        except OSError:
            pass
    sys.stderr.write(f"arena launcher: {message}\n")
    sys.stderr.flush()
    os._exit(127)


def main(args: list[str]) -> None:
    status_fd = None
    if "--" not in args:
        _fail(None, "usage: launch.py [NAME=VALUE ...] -- PROGRAM [ARG ...]")
    split = args.index("--")
    options, argv = args[:split], args[split + 1 :]
    try:
        values = {}
        for option in options:
            name, _, value = option.partition("=")
            values[name] = int(value)
        status_fd = values.pop("status", None)
        if status_fd is not None:
            os.set_inheritable(status_fd, False)  # closes on a successful exec
        if values.pop("dropcap", 0) and os.geteuid() == 0:
            _drop_sys_resource()
        for name, value in values.items():
            which = _RLIMITS[name]
            hard = resource.getrlimit(which)[1]
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)  # a limit can only be lowered here
            resource.setrlimit(which, (value, value))
    except (KeyError, ValueError, OSError) as exc:
        _fail(status_fd, f"bad option or limit: {exc}")
    if not argv:
        _fail(status_fd, "no program to run")
    _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_DFL)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        _fail(status_fd, f"{argv[0]}: {exc.strerror or exc}")


if __name__ == "__main__":
    main(sys.argv[1:])
