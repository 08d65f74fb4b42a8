"""Resolving bot arguments into runnable specs, and building bots.

A bot argument is one of:

* a script with a known extension, run by its interpreter (see ``INTERPRETERS``);
  the extension wins over the executable bit, which archives and checkouts often
  lose. ``.py`` runs under the Python running arena with ``-u``: bots are told to
  flush, but unbuffered output turns a forgotten flush into a working bot instead
  of a mysterious timeout, and costs nothing at protocol line rates;
* any other executable file, run as is;
* a directory with a ``bot.toml`` manifest::

      name = "greedy"                  # optional, defaults to the directory name
      run = ["./greedy", "--fast"]     # required
      build = ["make"]                 # optional, run once before the first game
      build_timeout = 120              # optional, seconds

A ``run`` or ``build`` that starts with a bare ``python`` or ``python3`` runs the
Python running arena (as ``.py`` bots do), whatever PATH would find.

Paths in ``run`` and ``build`` are made absolute against the bot directory, since
the bot runs in its own scratch directory: the command (first element) when it
contains a ``/`` (a bare name is looked up on PATH, as a shell would), and any
later element that starts with ``./`` or ``../`` or names an entry that exists in
the bot directory. ``run`` is resolved again after the build (``build_bot``), so
it may name what the build creates (``run = ["java", "-cp", "classes", "Bot"]``).

Bad input raises ``BotSpecError`` with one line naming the bot and what to do.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import tomllib
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, Final

import attrs

from arena.protocol import codec
from arena.referee.isolation import isolated_argv
from arena.referee.process import group_alive
from arena.referee.sandbox import Sandbox, SandboxError, build_sandbox

MANIFEST: Final = "bot.toml"
DEFAULT_BUILD_TIMEOUT: Final = 120.0
BUILD_TAIL_LINES: Final = 20
_GROUP_WAIT: Final = 2.0  # bound on waiting for a killed build's helpers to die

# Extension -> interpreter looked up on PATH (None: the Python running arena).
INTERPRETERS: Final[Mapping[str, str | None]] = {
    ".py": None,
    ".js": "node",
    ".sh": "bash",
    ".rb": "ruby",
    ".pl": "perl",
    ".lua": "lua",
}

# A bare command of these names in run or build runs the Python running arena.
PYTHON_NAMES: Final = frozenset({"python", "python3"})
_MANIFEST_KEYS: Final = frozenset({"name", "run", "build", "build_timeout"})
# Names end up in tables and in file names, so keep them to one printable line.
_BAD_NAME: Final = re.compile(r"[/\\\x00-\x1f\x7f]")
_MAX_NAME: Final = 64
# Bounds on what bot_hash reads: well past any real bot, a few seconds of sha256.
MAX_HASH_FILES: Final = 100_000
MAX_HASH_BYTES: Final = 2 << 30


# A name used as it is in a file name: plain ASCII, no leading dot ("." and ".."
# are folders already), short enough for any suffix under NAME_MAX (255 bytes).
_PLAIN_FILE_NAME: Final = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9_.+-]{0,63}")


def file_name(name: str) -> str:
    """A bot's name as a file name of its own (its log, its scratch folder).

    A plain name is kept; any other (``..``, spaces, 64 four-byte characters)
    becomes its plain part and a hash of the whole name, so two bots never
    share a file and no name reaches outside its folder or past NAME_MAX.
    """
    if _PLAIN_FILE_NAME.fullmatch(name):
        return name
    plain = re.sub(r"[^A-Za-z0-9_+-]+", "_", name).strip("_")[:32]
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"{plain or 'bot'}-{digest}"


class BotSpecError(Exception):
    """A bot argument that cannot be turned into a runnable bot.

    The message is one line meant for the user (the CLI prints it without a
    traceback); ``BuildError`` adds the tail of the build output below it.
    """


class BuildError(BotSpecError):
    """A bot's build command failed or timed out."""


@attrs.frozen
class BotSpec:
    """Everything needed to start one bot.

    ``path`` is the argument made absolute (the script, executable or directory);
    ``workdir`` is the bot's own directory, where the build runs (the bot process
    itself runs in a scratch directory). ``argv`` and ``build`` hold absolute paths.
    """

    name: str
    path: Path
    argv: tuple[str, ...]
    workdir: Path
    build: tuple[str, ...] | None = None
    build_timeout: float = DEFAULT_BUILD_TIMEOUT
    # The manifest's ``run`` as written, resolved again once the build has run.
    run: tuple[str, ...] | None = None


def resolve_bot(arg: str) -> BotSpec:
    """Turn one command-line bot argument into a ``BotSpec``, or raise ``BotSpecError``."""
    path = Path(os.path.abspath(arg))
    if not path.exists():
        raise BotSpecError(f"bot {arg!r}: no such file or directory ({path}); check the path")
    if path.is_dir():
        return _resolve_dir(arg, path)
    if not path.is_file():
        raise BotSpecError(f"bot {arg!r}: {path} is not a regular file or a directory")
    name = path.stem or path.name
    ext = path.suffix.lower()
    if ext in INTERPRETERS:
        return BotSpec(name, path, (*_interpreter(arg, ext), str(path)), path.parent)
    if os.access(path, os.X_OK):
        return BotSpec(name, path, (str(path),), path.parent)
    known = ", ".join(INTERPRETERS)
    raise BotSpecError(
        f"bot {arg!r}: cannot tell how to run it: it is not executable and its extension is "
        f"not one of {known}; make it executable (chmod +x), rename it, or put it in a "
        f"directory with a {MANIFEST}"
    )


def resolve_bots(args: Iterable[str]) -> list[BotSpec]:
    """Resolve every argument and make the names unique, in argument order.

    A repeated name gets ``-2``, ``-3``, ... (skipping names that another bot has
    of its own), so ``random random`` gives ``random`` and ``random-2``.  Names
    are told apart as the game line shows them (``wire_name``), so that no bot
    can pose as another there: ``my bot`` and ``my_bot`` give ``my bot`` and
    ``my_bot-2``.
    """
    specs = [resolve_bot(arg) for arg in args]
    reserved = {codec.wire_name(spec.name) for spec in specs}
    used: set[str] = set()
    unique = []
    for spec in specs:
        name = spec.name
        n = 1
        while codec.wire_name(name) in used or (n > 1 and codec.wire_name(name) in reserved):
            n += 1
            suffix = f"-{n}"  # kept whole: the game line cuts a name at MAX_NAME
            name = f"{spec.name[:codec.MAX_NAME - len(suffix)]}{suffix}"
        used.add(codec.wire_name(name))
        unique.append(attrs.evolve(spec, name=name))
    return unique


def build_env() -> dict[str, str]:
    """The environment of a build: PATH and HOME from arena, LANG=C.UTF-8, nothing else.

    HOME is kept (unlike for the bot itself) because toolchains keep their caches
    and installs under it.
    """
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8"}
    if "HOME" in os.environ:
        env["HOME"] = os.environ["HOME"]
    return env


def build_bot(spec: BotSpec, *, sandbox: Sandbox | None = None,
              network: bool = False) -> BotSpec:
    """Run the bot's build command (if any) in its directory, or raise ``BuildError``.

    Returns the spec to run: its ``run`` paths resolved now that the build's
    outputs exist.

    The build runs under the keeper (isolation.py), which kills everything it
    started when it ends or times out (a daemon that left its session too), and
    inside ``sandbox`` if one is given (``sandbox.build_sandbox``: its folder
    writable, the system and the toolchains' caches read-only, no network unless
    ``network``). Output (stdout and stderr together) goes to a temporary file,
    so memory stays bounded and a leftover process holding a pipe cannot stall us.
    """
    if spec.build is None:
        return spec
    command = shlex.join(spec.build)
    env = build_env()
    box = None if sandbox is None else build_sandbox(sandbox, env.get("HOME"))
    with tempfile.TemporaryFile() as out:
        status_read, status_write = os.pipe()
        try:
            argv = isolated_argv(spec.build, limits=None, sandbox=box, shown=None,
                                 workdir=spec.workdir, status_fd=status_write,
                                 network=network, pipes=False)
            proc = subprocess.Popen(
                argv,
                cwd=spec.workdir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=(status_write,),
            )
        except (OSError, SandboxError) as exc:
            os.close(status_read)
            raise BuildError(
                f"bot {spec.name!r}: cannot start build command `{command}`: {exc}; "
                f"fix `build` in {MANIFEST}"
            ) from None
        finally:
            os.close(status_write)
        with os.fdopen(status_read, "rb") as status_pipe:
            failed = status_pipe.read(4096).decode("utf-8", "replace").strip()
        timed_out = False
        try:
            status = proc.wait(timeout=spec.build_timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            # Also runs on Ctrl-C: never leave a build running behind us. The
            # keeper, on SIGTERM, kills all the build started and ends.
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=_GROUP_WAIT)
                except subprocess.TimeoutExpired:
                    pass
            _kill_group(proc.pid)
            status = proc.wait()
            _kill_group(proc.pid, wait=_GROUP_WAIT)
        if failed:
            raise BuildError(
                f"bot {spec.name!r}: cannot start build command `{command}`: {failed}; "
                f"fix `build` in {MANIFEST}"
            )
        if not timed_out and status == 0:
            return _resolve_run(spec)
        tail = _tail(out, BUILD_TAIL_LINES)
    if timed_out:
        problem = (
            f"build timed out after {spec.build_timeout:g} s (`{command}`); make it faster "
            f"or raise build_timeout in {MANIFEST}"
        )
    else:
        how = f"status {status}" if status > 0 else f"signal {-status}"
        problem = f"build failed with {how} (`{command}`); fix the build and run again"
    shown_tail = "\n".join(f"  | {line}" for line in tail) if tail else "  (no output)"
    raise BuildError(
        f"bot {spec.name!r}: {problem}\nlast {BUILD_TAIL_LINES} lines of its output:\n"
        f"{shown_tail}"
    )


def bot_hash(spec: BotSpec, *, skip: Callable[[Path], bool] = lambda path: False,
             max_files: int = MAX_HASH_FILES, max_bytes: int = MAX_HASH_BYTES) -> str:
    """A sha256 (hex) over the bot's files, so a tournament can notice a changed bot.

    For a file bot: that file. For a directory bot: every regular file under it,
    sorted by relative path, skipping entries whose name starts with ``.``,
    ``__pycache__`` directories and the directories ``skip`` names (results
    folders). A symbolic link is never followed: it counts by where it points.
    Build outputs in the directory count too, so hash before building for a
    hash of the sources alone. Each file contributes its relative path, size
    and bytes. More than ``max_files`` files or ``max_bytes`` bytes raise
    ``BotSpecError`` before a byte is read (a build may leave a sparse 1 TB file).
    """
    if spec.path.is_dir():
        entries = _bot_files(spec, skip, max_files)
    else:
        entries = [(spec.path.name, spec.path, spec.path.stat().st_size, None)]
    total = sum(size for _, _, size, _ in entries)
    if total > max_bytes:
        rel, _, size, _ = max(entries, key=lambda entry: entry[2])
        raise BotSpecError(
            f"bot {spec.name!r}: its files hold {_size(total)}, more than the {_size(max_bytes)} "
            f"arena reads to tell a changed bot ({rel} alone is {_size(size)}); delete big "
            "build outputs, or move them out of the bot's folder"
        )
    digest = hashlib.sha256()
    for rel, full, size, target in entries:
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        if target is not None:  # a link: where it points (no file is that big)
            digest.update(b"\xff" * 8 + target.encode("utf-8", "surrogateescape"))
            continue
        digest.update(size.to_bytes(8, "big"))
        # No following a link swapped in since, no waiting on a FIFO; never past the size seen.
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(full, flags if full == spec.path else flags | os.O_NOFOLLOW)
            with open(fd, "rb") as f:
                left = size
                while left > 0 and (chunk := f.read(min(left, 1 << 16))):
                    digest.update(chunk)
                    left -= len(chunk)
        except OSError as exc:
            raise BotSpecError(f"bot {spec.name!r}: cannot read {full} ({exc.strerror}); make "
                               "it readable, or move it out of the bot's folder") from None
    return digest.hexdigest()


def _bot_files(spec: BotSpec, skip: Callable[[Path], bool],
               max_files: int) -> list[tuple[str, Path, int, str | None]]:
    """(relative path, path, size, link target or None) of a folder bot's files, sorted."""
    found: list[tuple[str, Path, int, str | None]] = []
    for root, dirs, names in os.walk(spec.path):
        kept = []
        for d in dirs:
            full = Path(root, d)
            if d.startswith(".") or d == "__pycache__":
                continue
            if full.is_symlink():
                names.append(d)  # counted as a link below, never walked into
            elif not skip(full):
                kept.append(d)
        dirs[:] = kept
        for name in names:
            full = Path(root, name)
            if name.startswith("."):
                continue
            try:
                info = full.lstat()
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(info.st_mode):
                entry = (full, 0, os.readlink(full))
            elif stat.S_ISREG(info.st_mode):
                entry = (full, info.st_size, None)
            else:
                continue  # FIFOs, sockets, devices: nothing to read
            found.append((full.relative_to(spec.path).as_posix(), *entry))
            if len(found) > max_files:
                raise BotSpecError(
                    f"bot {spec.name!r}: more than {max_files} files in {spec.path}, more than "
                    "arena reads to tell a changed bot; delete build outputs, or move them "
                    "out of the bot's folder"
                )
    found.sort()
    return found


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    value = float(n)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} TB"


def _interpreter(arg: str, ext: str) -> tuple[str, ...]:
    program = INTERPRETERS[ext]
    if program is None:
        # -P: a lone script has no modules beside it, and without -P a bot
        # named random.py next to another bot would shadow the stdlib module.
        return (sys.executable, "-u", "-P")
    found = shutil.which(program)
    if found is None:
        raise BotSpecError(
            f"bot {arg!r}: {ext} files run with {program!r}, which is not on PATH; "
            f"install {program} or use a {MANIFEST} with another `run` command"
        )
    return (found,)


def _resolve_dir(arg: str, path: Path) -> BotSpec:
    manifest = path / MANIFEST
    if not manifest.is_file():
        raise BotSpecError(
            f"bot {arg!r}: directory has no {MANIFEST}; add one with at least "
            f'run = ["command", "args"...], or name the bot\'s program file instead'
        )

    def bad(problem: str) -> BotSpecError:
        return BotSpecError(f"bot {arg!r}: {MANIFEST}: {problem}")

    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise bad(f"not valid TOML ({exc}); fix its syntax") from None
    unknown = sorted(set(data) - _MANIFEST_KEYS)
    if unknown:
        keys = ", ".join(repr(k) for k in unknown)
        allowed = ", ".join(sorted(_MANIFEST_KEYS))
        raise bad(f"unknown key {keys}; allowed keys are {allowed}")

    name = data.get("name", path.name)
    if not isinstance(name, str) or not name.strip() or _BAD_NAME.search(name):
        raise bad("`name` must be a one-line string without slashes; fix or remove it")
    if len(name) > _MAX_NAME:
        raise bad(f"`name` is longer than {_MAX_NAME} characters; shorten it")
    if any(unicodedata.category(c)[0] in "CZ" and c != " " for c in name):
        # Invisible characters and bidi overrides would make tables lie.
        raise bad("`name` has invisible, control or direction characters; use visible ones")

    if "run" not in data:
        raise bad('`run` is missing; add e.g. run = ["python3", "bot.py"]')
    run = _command(data["run"], "run", path, bad)
    build = _command(data["build"], "build", path, bad) if "build" in data else None

    timeout = data.get("build_timeout", DEFAULT_BUILD_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise bad("`build_timeout` must be a positive number of seconds")
    return BotSpec(name, path, run, path, build, float(timeout), tuple(data["run"]))


def _resolve_run(spec: BotSpec) -> BotSpec:
    if spec.run is None:
        return spec

    def bad(problem: str) -> BotSpecError:
        return BotSpecError(f"bot {spec.name!r}: {MANIFEST}: {problem}")

    return attrs.evolve(spec, argv=_command(list(spec.run), "run", spec.workdir, bad))


def _command(
    value: object, key: str, bot_dir: Path, bad: Callable[[str], BotSpecError]
) -> tuple[str, ...]:
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(item, str) and item and "\0" not in item for item in value)
    ):
        raise bad(f'`{key}` must be a non-empty list of strings, e.g. {key} = ["./bot"]')
    program, *args = value
    if program in PYTHON_NAMES:
        # The Python running arena, as for .py bots: a bare "python3" may resolve to
        # a pyenv shim or another installation that a sandbox does not show.
        resolved = sys.executable
    elif os.path.isabs(program):
        resolved = program
    elif "/" in program:
        resolved = os.path.normpath(bot_dir / program)
    else:
        found = shutil.which(program)
        if found is None:
            raise bad(
                f"`{key}` command {program!r} is not on PATH; install it, or write "
                f"'./{program}' for a file in the bot directory"
            )
        resolved = found
    return (resolved, *(_arg_path(arg, bot_dir) for arg in args))


def _arg_path(arg: str, bot_dir: Path) -> str:
    if os.path.isabs(arg) or arg.startswith("-"):
        return arg
    if arg.startswith(("./", "../")) or (bot_dir / arg).exists():
        return os.path.normpath(bot_dir / arg)
    return arg


def _kill_group(pgid: int, wait: float = 0.0) -> None:
    # SIGKILL is asynchronous and members other than the leader are not our
    # children, so waiting for them to die means polling (bounded).
    deadline = time.monotonic() + wait
    while True:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return  # the group is empty
        if time.monotonic() >= deadline or not group_alive(pgid):
            return
        time.sleep(0.005)


def _tail(f: IO[bytes], n: int) -> list[str]:
    # Only the end matters; 64 KiB covers 20 lines of any sane compiler output.
    size = f.seek(0, os.SEEK_END)
    f.seek(max(0, size - (1 << 16)))
    return f.read().decode("utf-8", "replace").splitlines()[-n:]
