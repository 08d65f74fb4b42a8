"""``--sandbox``: every bot runs inside bubblewrap (``bwrap``).

Inside, a bot:

* has no network: its own network namespace holds only a loopback device
  (``--unshare-net``), so every connection fails, to the host's 127.0.0.1 too;
* sees only its own processes: its own PID namespace (``--unshare-pid``) with a
  fresh ``/proc``, so it cannot see, signal or ptrace the referee or other bots,
  nor read ``/proc/<pid>/mem`` of any of them; IPC, UTS and (where possible)
  user and cgroup namespaces are its own too (``--unshare-all``): its System V
  shared memory ends with it (the watchdog cannot see it to count it);
* sees the system read-only: ``/usr``, ``/etc``, ``/bin``, ``/sbin``, ``/lib*``
  (symlinks where the host has symlinks), plus the Python installation that runs
  arena and arena's own package (for ``.py`` bots, which may import ``arena.sdk``)
  and any directory given in ``Sandbox.ro_binds``;
  ``/etc/shadow`` and similar secrets are masked. Home directories, other bots,
  arena's results and everything else on the host are not there at all. A bot
  whose program lies elsewhere (node under ``~/.nvm``, say) is refused with
  ``SandboxError`` until its directory is added to ``ro_binds``;
* sees its own files read-only, at the same path as on the host (the bot's file
  for a one-file bot, its directory for a ``bot.toml`` bot);
* may write only to its scratch directory (bound read-write at the same path;
  also its ``HOME``, ``TMPDIR`` and working directory) and to a private tmpfs
  ``/tmp`` of ``Sandbox.tmp_mb`` MB and ``/dev/shm`` of ``Sandbox.shm_mb`` MB
  (with limits, as big as the disk quota and the memory limit: ``sized_for``;
  the watchdog counts both as memory, ``/tmp`` as disk too); ``/`` itself is
  read-only, ``/dev`` is a minimal read-only one (``null``, ``zero``,
  ``urandom``, ...), ``/proc`` is fresh;
* has no capabilities (bwrap drops them; ``--cap-drop ALL`` when arena runs as
  root), its own session (``--new-session``: no terminal to inject input into),
  and dies with its parent (``--die-with-parent``).

Ending it: bwrap runs under the bot's keeper (``launch.py``, which is what
arena starts when limits are set, as every command does). When bwrap dies
(closed or killed), the init process of the PID namespace gets SIGKILL
(``--die-with-parent``) and the kernel kills everything in the namespace with
it, so nothing a bot started outlives it; ``BotProcess.close`` waits (bounded)
until that has happened. Exit statuses pass through bwrap: a bot killed by signal N
shows as status 128 + N.

Pipes: bwrap keeps its own fds 0-2 open for the sandbox's life, in two
processes, so a bot that closed its stdout (or stdin) would not look closed to
the referee until the sandbox ended. So the keeper hands bwrap the bot's stdin
and stdout as fds 3 and 4 (bwrap closes every fd above 2 in its own processes),
and ``HANDOFF``, run first inside, makes them the bot's 0 and 1 again.

Builds (``bot.toml`` ``build``) run in a sandbox too (``build_sandbox``), before
any game: the bot's own folder writable (it is their working directory), the
system read-only, the toolchains' caches under ``HOME`` (``TOOLCHAIN_DIRS``)
read-only, a 1 GB ``/tmp``, and no network unless ``arena run --build-network``.

A bot that runs as root inside is still uid 0 for the files it can see: run
arena as an ordinary user so that bots cannot read files only root may read.

``check_sandbox()`` proves once, at start-up, that bubblewrap works here, and
otherwise raises ``SandboxUnavailable`` with one line that says why and what to
install or enable; arena never runs a bot unsandboxed when asked for a sandbox.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import attrs

import arena
from arena.referee.limits import BotLimits

# Shown read-only; a symlink on the host (merged /usr) becomes the same symlink.
SYSTEM_PATHS: Final = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# Secrets under /etc that a root bot could otherwise read: hidden behind empty ones.
MASKED: Final = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/security/opasswd",
)
DEFAULT_TMP_MB: Final = 64
# Run first inside the sandbox: the keeper hands bwrap the bot's stdin and stdout
# as fds 3 and 4 (launch.py ``handoff=1``), since bwrap holds its own 0-2 open
# for the sandbox's life; here they become the bot's 0 and 1 again.
HANDOFF: Final = ("/bin/sh", "-c", 'exec 0<&3 1>&4 3<&- 4>&-; exec "$@"', "sh")
CHECK_TIMEOUT: Final = 30.0
BUILD_TMP_MB: Final = 1024
# Under HOME: where toolchains keep their caches and installs, shown read-only to
# a sandboxed build (a build that needs to download writes nothing there).
TOOLCHAIN_DIRS: Final = (".cargo", ".rustup", ".m2", ".gradle", ".cache", ".npm", ".nvm",
                         ".local", "go", ".ghcup", ".cabal", ".stack", ".opam", ".pyenv",
                         ".dotnet", ".nuget", ".sdkman", ".bun", ".deno")

INSTALL_HINT: Final = (
    "install it: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap "
    "(Fedora), apk add bubblewrap (Alpine)"
)


class SandboxUnavailable(Exception):
    """bubblewrap is missing or cannot build a sandbox here; the message is one line."""


class SandboxError(Exception):
    """One bot cannot run in the sandbox (e.g. its program is not visible inside)."""


@attrs.frozen
class Sandbox:
    """Options of ``--sandbox``: extra read-only directories, the size of ``/tmp``."""

    ro_binds: tuple[Path, ...] = attrs.field(
        default=(), converter=lambda paths: tuple(Path(os.path.abspath(p)) for p in paths)
    )
    tmp_mb: int = DEFAULT_TMP_MB
    shm_mb: int = DEFAULT_TMP_MB

    def sized_for(self, limits: BotLimits | None) -> Sandbox:
        """``/tmp`` as big as the disk quota and ``/dev/shm`` as the memory limit, each
        with a megabyte more, so that going over can be seen (the watchdog counts both)."""
        if limits is None:
            return self
        return attrs.evolve(
            self,
            tmp_mb=self.tmp_mb if limits.disk_mb is None else limits.disk_mb + 1,
            shm_mb=self.shm_mb if limits.memory_mb is None else limits.memory_mb + 1,
        )


def find_bwrap() -> str:
    """The path of ``bwrap``, or ``SandboxUnavailable`` saying how to install it."""
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxUnavailable(
            f"--sandbox needs bubblewrap, but bwrap is not on PATH; {INSTALL_HINT}"
        )
    return found


def sandbox_argv(
    argv: Sequence[str],
    *,
    bot_path: Path | None,
    scratch_dir: Path,
    sandbox: Sandbox | None = None,
    bwrap: str | None = None,
    handoff: bool = False,
    network: bool = False,
) -> list[str]:
    """The command line that runs ``argv`` inside the sandbox.

    ``bot_path`` (the bot's file or directory) is shown read-only and
    ``scratch_dir`` read-write, both at their own paths; ``argv`` runs with the
    scratch directory as working directory, in the environment it is given.
    Raises ``SandboxError`` if ``argv[0]`` would not be visible inside, and
    ``SandboxUnavailable`` if bwrap is not installed. ``handoff``: bwrap gets the
    bot's stdin and stdout as fds 3 and 4 (from the keeper, ``handoff=1``).
    ``network``: keep the host's network (a build allowed to download).
    """
    sandbox = sandbox or Sandbox()
    bwrap = bwrap or find_bwrap()
    scratch = Path(os.path.abspath(scratch_dir))
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session"]
    if network:
        args.append("--share-net")
    if os.geteuid() == 0:
        # bwrap keeps root's capabilities unless told; others have none inside.
        args += ["--cap-drop", "ALL"]
    visible: list[str] = []
    for path in SYSTEM_PATHS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
            visible.append(os.path.realpath(path))
    for path in MASKED:
        if os.path.isdir(path) and not os.path.islink(path):
            args += ["--tmpfs", path, "--remount-ro", path]
        elif os.path.lexists(path):
            args += ["--ro-bind", "/dev/null", path]
    args += [
        "--proc", "/proc",
        "--dev", "/dev",
        "--size", str(sandbox.shm_mb * 1024 * 1024),
        "--tmpfs", "/dev/shm",
        "--remount-ro", "/dev",  # /dev itself only: its own /dev/shm stays writable
        "--size", str(sandbox.tmp_mb * 1024 * 1024),
        "--tmpfs", "/tmp",
    ]  # fmt: skip
    program = argv[0] if argv else ""
    binds = [(Path(p), "--ro-bind") for p in {*_python_dirs(), *_interpreter_dirs(program)}]
    binds += [(p, "--ro-bind") for p in sandbox.ro_binds]
    if bot_path is not None:
        binds.append((Path(os.path.abspath(bot_path)), "--ro-bind"))
    binds.append((scratch, "--bind"))
    # Parents before children: a bind inside another one (a scratch directory in
    # the bot's directory, anything under /tmp) must come after it.
    for path, how in sorted(binds, key=lambda item: len(item[0].parts)):
        args += [how, str(path), str(path)]
        visible.append(os.path.realpath(path))
    # bwrap's own root is a tmpfs; left writable, it would be memory nobody counts.
    args += ["--remount-ro", "/", "--chdir", str(scratch), "--"]
    if os.path.isabs(program):
        real = os.path.realpath(program)
        if not any(real == root or real.startswith(root.rstrip("/") + "/") for root in visible):
            raise SandboxError(
                f"{program} is outside what the sandbox shows (/usr, /etc, /bin, /lib*, the "
                f"bot's own files and arena's Python); install it under /usr, or add its "
                f"directory to the sandbox's read-only directories"
            )
    return [*args, *(HANDOFF if handoff else ()), *argv]


def build_sandbox(sandbox: Sandbox, home: str | None) -> Sandbox:
    """The sandbox of a build: the toolchains' caches and installs under ``home``
    shown read-only (those that exist), and a bigger ``/tmp``."""
    caches: list[Path] = []
    if home:
        caches = [Path(home, name) for name in TOOLCHAIN_DIRS if Path(home, name).is_dir()]
    return attrs.evolve(sandbox, ro_binds=(*sandbox.ro_binds, *caches), tmp_mb=BUILD_TMP_MB)


def _python_dirs() -> list[str]:
    """The installation of the Python running arena, which runs ``.py`` bots and
    ``python``/``python3`` in a ``run``, if not in /usr (a venv, pyenv, conda), and
    arena's own package, which they may import (``arena.sdk``): an editable install
    leaves it in the source checkout, of which only the package is shown."""
    dirs = []
    package = os.path.dirname(os.path.realpath(arena.__file__))
    for prefix in {sys.base_prefix, sys.prefix, os.path.dirname(os.path.realpath(sys.executable)),
                   package}:
        real = os.path.realpath(prefix)
        if prefix and not _under_system(real) and os.path.isdir(real):
            dirs.append(real)
    # Nested ones (a venv inside its base) are covered by their parent.
    return sorted(d for d in dirs if not any(d != o and d.startswith(o + "/") for o in dirs))


def _interpreter_dirs(program: str) -> list[str]:
    """The Python installation or venv ``program`` belongs to (a bot's own venv, a
    conda environment, a pyenv version), and a venv's base: shown whole, read-only."""
    if not os.path.isabs(program) or not os.path.basename(program).startswith("python"):
        return []
    found = []
    for path in (program, os.path.realpath(program)):  # a venv's python links to its base
        prefix = os.path.dirname(os.path.dirname(path))
        config = os.path.join(prefix, "pyvenv.cfg")
        if os.path.isfile(config):
            found.append(prefix)
            home = _venv_home(config)
            if home is not None:
                found.append(os.path.dirname(os.path.realpath(home)))
        elif any(Path(prefix, "lib").glob("python3*")):
            found.append(prefix)
    dirs = {os.path.realpath(d) for d in found}
    return sorted(d for d in dirs if os.path.isdir(d) and not _under_system(d))


def _venv_home(config: str) -> str | None:
    """The ``home`` of a venv's pyvenv.cfg: its base interpreter's directory."""
    try:
        lines = Path(config).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            return value.strip()
    return None


def _under_system(path: str) -> bool:
    for root in SYSTEM_PATHS:
        real = os.path.realpath(root)
        if path == real or path.startswith(real.rstrip("/") + "/"):
            return True
    return False


def check_sandbox(sandbox: Sandbox | None = None) -> None:
    """Prove that bubblewrap works here by running ``true`` in a sandbox once.

    Raises ``SandboxUnavailable`` with one line saying why and what to do.
    """
    bwrap = find_bwrap()
    true = shutil.which("true") or "/bin/true"
    with tempfile.TemporaryDirectory(prefix="arena-sandbox-check-") as tmp:
        try:
            argv = sandbox_argv(
                [true], bot_path=Path(tmp), scratch_dir=Path(tmp), sandbox=sandbox, bwrap=bwrap
            )
            result = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env={"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8"},
                timeout=CHECK_TIMEOUT,
            )
        except (OSError, SandboxError, subprocess.TimeoutExpired) as exc:
            raise SandboxUnavailable(f"--sandbox: cannot run bubblewrap ({bwrap}): {exc}") from None
    if result.returncode == 0:
        return
    lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
    why = lines[-1].strip() if lines else f"it exited with status {result.returncode}"
    raise SandboxUnavailable(
        f"--sandbox: bubblewrap cannot create a sandbox on this machine ({why}); {_userns_hint()}"
    )


def _read_int(path: str) -> int | None:
    try:
        return int(Path(path).read_text().strip())
    except (OSError, ValueError):
        return None


def _userns_hint() -> str:
    """What to enable, judged from the kernel's switches for user namespaces."""
    if _read_int("/proc/sys/kernel/unprivileged_userns_clone") == 0:
        return "enable user namespaces: sysctl -w kernel.unprivileged_userns_clone=1"
    if _read_int("/proc/sys/user/max_user_namespaces") == 0:
        return "enable user namespaces: sysctl -w user.max_user_namespaces=10000"
    if _read_int("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1:
        return (
            "AppArmor forbids user namespaces: sysctl -w "
            "kernel.apparmor_restrict_unprivileged_userns=0, or give bwrap an AppArmor profile"
        )
    if os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv"):
        return (
            "this looks like a container, whose seccomp profile forbids namespaces: run it "
            "with --security-opt seccomp=unconfined --security-opt apparmor=unconfined, or "
            "run arena outside the container"
        )
    return "make sure user namespaces are enabled (sysctl user.max_user_namespaces)"
