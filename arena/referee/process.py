"""One bot process under trio: start it, exchange lines, always end it.

Decisions, in one place:

* **Environment**: exactly ``PATH`` (arena's, or ``os.defpath``), ``HOME`` and
  ``TMPDIR`` (both the scratch directory) and ``LANG=C.UTF-8``; nothing else of
  arena's environment reaches a bot (see ``bot_env``).
* **Working directory**: the caller names a scratch directory per process; it is
  created if missing and never emptied or removed here, since one process serves
  many games and its owner may want to look inside afterwards.
* **Process group**: each bot starts a new session (``start_new_session``, done by
  ``_posixsubprocess`` in the child, no ``preexec_fn``), so signals go to the bot
  and everything it spawned, and a terminal's Ctrl-C reaches only arena.
* **stdout** is split into lines in ``read_line`` only. A line longer than
  ``max_line`` bytes (line ending excluded) fails the reader for good: the bot has
  broken the framing, so resynchronising would only guess; the buffer is dropped
  and later reads raise ``BotBroken``. The buffer never holds more than
  ``max_line + 1 + CHUNK`` bytes. Invalid UTF-8 consumes its line and leaves the
  reader usable, since the framing is intact. A cancelled ``read_line`` loses
  nothing: the next call continues with the same bytes.
* **stdin**: a cancelled or failed ``send_line`` may have written part of a line,
  so it marks the writer broken and later sends raise ``BotBroken``.
* **stderr** is drained by a background task into the log file, until the file
  holds ``log_cap`` bytes (so the cap holds across the restarts of a bot that
  share its log) or, given a ``LogBudget``, the bot has logged its run's share
  in all its logs; the rest is read and discarded after a marker line.
  The log is appended to, with a header line per start and a footer with the exit.
* **Ending**: ``close`` closes stdin, waits ``grace``, SIGTERMs the group, waits
  ``grace``, SIGKILLs the group, always reaps the bot, then SIGKILLs the group again
  for leftovers and waits (bounded) until none is alive. It runs shielded, so
  cancellation and Ctrl-C still clean up. With limits, the leader is the keeper
  (``launch.py``), which on SIGTERM SIGKILLs every process of the bot, those that
  left the group included: ``close(0)`` SIGTERMs it first, and SIGKILLs the
  group only if it has not ended within a second.
* **Limits and sandbox** (optional: ``limits=``, ``sandbox=``): the bot starts
  through a keeper that sets its ``RLIMIT_*``, runs it (inside bubblewrap when
  sandboxed) and kills whatever it leaves behind, also when arena dies; a
  watchdog task has the keeper kill it all when it is over its memory, CPU or
  disk limit; ``limit_hit`` names the limit. All of that is isolation.py's (its
  command line and its ``Guard``); see also ``launch``, ``limits``,
  ``watchdog`` and ``sandbox``.
"""

from __future__ import annotations

import errno
import os
import select
import shlex
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Final, NoReturn

import trio

from arena.referee.isolation import Guard, isolated_argv
from arena.referee.limits import BotLimits
from arena.referee.sandbox import Sandbox, SandboxError
from arena.referee.watchdog import ProcessTable, read_stat

if TYPE_CHECKING:
    from arena.referee.bots import BotSpec

DEFAULT_MAX_LINE: Final = 64 * 1024
DEFAULT_LOG_CAP: Final = 1024 * 1024
DEFAULT_CLOSE_GRACE: Final = 1.0
DEFAULT_EXIT_WAIT: Final = 1.0
CHUNK: Final = 64 * 1024
QUOTE_BYTES: Final = 200  # of an over-long line, kept for the fault report

# After the group is killed, stderr reaches EOF at once unless a process that left
# the group holds it; wait this long for the last words, then stop draining.
_STDERR_EOF_WAIT: Final = 0.5
# Bound on waiting for killed group members to die (SIGKILL is asynchronous).
_GROUP_WAIT: Final = 2.0
# Bound on waiting for the keeper to kill a bot's processes and end, when asked.
_KEEPER_WAIT: Final = 1.0
_GROUP_POLL: Final = 0.005


class BotFault(Exception):
    """Something a bot process did wrong or suffered; the referee charges it to the bot."""

    def __init__(self, bot: str, message: str) -> None:
        self.bot = bot
        super().__init__(message)


class BotStartError(BotFault):
    """The bot's program could not be started at all."""


class BotOutputError(BotFault):
    """The bot's stdout broke the line protocol's framing."""


class LineTooLong(BotOutputError):
    """A line longer than the limit; the reader is broken afterwards.

    ``start``: its first bytes (at most ``QUOTE_BYTES``), the evidence for the report.
    """

    def __init__(self, bot: str, limit: int, start: bytes = b"") -> None:
        self.limit = limit
        self.start = start
        super().__init__(bot, f"bot {bot!r} wrote a line longer than {limit} bytes")


class InvalidUtf8(BotOutputError):
    """A line that is not valid UTF-8; the line is consumed, the reader stays usable."""

    def __init__(self, bot: str, raw: bytes, reason: str) -> None:
        self.raw = raw
        shown = raw[:40]
        more = "..." if len(raw) > 40 else ""
        super().__init__(
            bot, f"bot {bot!r} wrote a line that is not UTF-8 ({reason}): {shown!r}{more}"
        )


class BotExited(BotOutputError):
    """The bot closed its stdout (EOF) or stopped reading stdin (broken pipe).

    ``returncode`` is the exit status if the bot had ended by then (negative: killed
    by that signal), else None.
    """

    def __init__(self, bot: str, what: str, returncode: int | None, how: str) -> None:
        self.returncode = returncode
        super().__init__(bot, f"bot {bot!r} {what} ({how})")


class BotBroken(BotFault):
    """A use of a bot whose stdin or stdout is unusable after an earlier failure."""


def bot_env(scratch_dir: Path) -> dict[str, str]:
    """The whole environment of a bot process."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(scratch_dir),
        "TMPDIR": str(scratch_dir),
        "LANG": "C.UTF-8",
    }


class LogBudget:
    """What one run may log of each bot's stderr, whatever its processes and log files:
    ``cap`` bytes per bot name. One is shared by all the bots of a command."""

    def __init__(self, cap: int = DEFAULT_LOG_CAP) -> None:
        self.cap = cap
        self._spent: dict[str, int] = {}

    def left(self, bot: str) -> int:
        return max(0, self.cap - self._spent.get(bot, 0))

    def spend(self, bot: str, n: int) -> None:
        self._spent[bot] = self._spent.get(bot, 0) + n


def describe_status(returncode: int | None) -> str:
    """Say how a process ended, from its ``returncode``."""
    if returncode is None:
        return "still running"
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        name = f" ({signal.Signals(-returncode).name})"
    except ValueError:
        name = ""
    return f"killed by signal {-returncode}{name}"


class BotProcess:
    """A running bot: ``read_line``, ``send_line``, ``close``. Get one from ``open_bot_process``.

    One reader task and one writer task at a time; they may run concurrently.
    """

    def __init__(
        self,
        spec: BotSpec,
        proc: trio.Process,
        log: BinaryIO,
        *,
        max_line: int,
        log_cap: int,
        exit_wait: float,
        log_budget: LogBudget | None = None,
        limits: BotLimits | None = None,
        sandboxed: bool = False,
        kept: bool = False,
        scratch_dir: Path | None = None,
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.name = spec.name
        self.argv = spec.argv
        self._proc = proc
        self._stdin = proc.stdin
        self._stdout = proc.stdout
        self._stderr = proc.stderr
        self._log = log
        self._max_line = max_line
        self._log_cap = log_cap
        self._exit_wait = exit_wait

        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf already known to hold no LF
        # For output_waiting: a poll that finds nothing costs a third of a read
        # that fails with EAGAIN, and it is asked before every request.
        self._stdout_poll = select.poll()
        self._stdout_poll.register(self._stdout.fileno(), select.POLLIN)
        self._eof = False
        self._reader_broken: BotBroken | None = None
        self._stdin_gone = False
        self._writer_broken: BotBroken | None = None

        # The cap is per log file, not per start: a bot that writes a flood and
        # crashes every game would otherwise grow its log by a cap per game.
        self._logged = min(log.tell(), log_cap)
        self._log_budget = log_budget
        self._log_cut = False
        self._log_ends_line = True
        self._drain_scope = trio.CancelScope()
        self._stderr_done = trio.Event()

        self._signals_sent: set[int] = set()
        self._closing = False
        self._closed = trio.Event()

        self.limits = limits
        self.sandboxed = sandboxed
        self.kept = kept  # the leader is the keeper (launch.py)
        self._guard = Guard(proc.pid, limits, kept=kept, sandboxed=sandboxed,
                            scratch_dir=scratch_dir)
        self._watch_scope = trio.CancelScope()

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """Exit status once the bot has ended (negative: killed by that signal), else None."""
        return self._proc.returncode

    @property
    def usable(self) -> bool:
        """True while the bot runs and both directions still work: fit for another game."""
        return (
            not self._closing
            and not self._eof
            and not self._stdin_gone
            and self._reader_broken is None
            and self._writer_broken is None
            and self._guard.hit is None
            and self.returncode is None
        )

    @property
    def limit_hit(self) -> str | None:
        """The resource limit the bot hit: "memory 256 MB", "cpu 10 s", "file size 64 MB".

        Set when the watchdog killed the bot over its memory, CPU or disk, when the
        bot died of SIGXFSZ, or when it ended with an error status leaving a file
        at the size limit (a bot that ignores SIGXFSZ, as Python does, gets EFBIG
        and may die of the error) or its sandbox's ``/tmp`` full; else None (always
        None without ``limits``). A bot at its open-files limit, or one that
        survives EFBIG, carries on as it sees fit.
        """
        return self._guard.limit_hit(self.returncode)

    @property
    def cpu_used(self) -> float | None:
        """CPU seconds used by the bot's processes since ``reset_cpu`` (as of the
        watchdog's last look); None without a watchdog."""
        watchdog = self._guard.watchdog
        return None if watchdog is None else watchdog.cpu_used

    @property
    def memory_peak(self) -> int | None:
        """The most memory (bytes, all its processes) the watchdog saw, or None."""
        watchdog = self._guard.watchdog
        return None if watchdog is None else watchdog.memory_peak

    def reset_cpu(self) -> None:
        """Start a new CPU budget of ``limits.cpu_seconds``: the referee calls it as
        each game ends (and before a new process's first game)."""
        if self._guard.watchdog is not None and self.returncode is None:
            self._guard.watchdog.reset_cpu()

    def _limit_exceeded(self, what: str, pids: Iterable[int]) -> None:
        if self._guard.hit is not None or self.returncode is not None:
            return
        self._guard.hit = what
        self._write_log(f"[arena: pid {self.pid} is over its limit: {what}; killed]\n".encode())
        self._signals_sent.add(signal.SIGKILL)  # the keeper dies of it, as the bot did
        self._guard.kill(pids)
        # A reader waiting for the answer learns of it now, not at EOF (which a
        # process that escaped the keeper could hold off).
        trio.lowlevel.notify_closing(self._stdout.fileno())

    async def _watch(self) -> None:
        watchdog = self._guard.watchdog
        assert watchdog is not None
        with self._watch_scope:
            await watchdog.run(lambda: self.returncode is None, self._limit_exceeded)

    def describe_exit(self) -> str:
        """E.g. "exited with status 1", "killed by signal 9 (SIGKILL), sent by arena"."""
        code = self.returncode
        text = describe_status(code)
        if code is not None and code < 0 and -code in self._signals_sent:
            text += ", sent by arena"
        return text

    def log_note(self, line: str) -> None:
        """Write a line of the referee's own into the bot's log (a game's start),
        after everything the bot has written to stderr so far, on a line of its own."""
        self._drain_stderr_now()
        data = line.encode("utf-8", "replace") + b"\n"
        self._write_log(data if self._log_ends_line else b"\n" + data)

    def _drain_stderr_now(self) -> None:
        # The drain task runs only when the referee gives other tasks a turn,
        # which an answer taken at once does not: what the bot wrote before the
        # note is logged now, so the note comes after it.  The pipe is
        # non-blocking, and the task never holds bytes read and not logged.
        fd = self._stderr.fileno()
        while fd >= 0:
            try:
                data = os.read(fd, CHUNK)
            except OSError:  # nothing more (EAGAIN), or the task sees the error
                return
            if not data:
                return  # EOF: the task sees it too
            self._log_stderr(data)

    async def read_line(self) -> str:
        """Return the next line of stdout without its LF (or CRLF).

        Raises ``LineTooLong``, ``InvalidUtf8``, ``BotExited`` at EOF (waiting up to
        ``exit_wait`` for the exit status, shielded from the caller's deadline), or
        ``BotBroken`` after a ``LineTooLong``.
        """
        if self._reader_broken is not None:
            raise self._reader_broken
        while (line := self._next_line()) is None:
            if self._eof:
                raise await self._exited("closed its output")
            if not await self._fill():
                self._eof = True
                if self._buf:
                    raise await self._exited(
                        f"closed its output after {len(self._buf)} bytes without LF")
                raise await self._exited("closed its output")
        return line

    def read_line_nowait(self) -> str | None:
        """The next line if the bot has written it in full already, else None.

        Never waits and is no checkpoint: one non-blocking read at most.  Raises
        as ``read_line`` for a line it takes; EOF and read errors are left to
        ``read_line``, which says what they are.
        """
        if self._reader_broken is not None:
            raise self._reader_broken
        if self._guard.hit is not None:
            return None  # killed over a limit: read_line says so
        line = self._next_line()
        if line is None and not self._eof and self._read_nowait():
            line = self._next_line()
        return line

    def _next_line(self) -> str | None:
        """Take the next whole line from the buffer; None if it holds none yet."""
        buf = self._buf
        end = buf.find(b"\n", self._scanned)
        if end < 0:
            self._scanned = len(buf)
            # +1: a CR may still precede the LF of a line of exactly max_line bytes.
            if len(buf) > self._max_line + 1:
                self._fail_reader(LineTooLong(self.name, self._max_line,
                                              bytes(buf[:QUOTE_BYTES])))
            return None
        line = buf[:end]
        del buf[: end + 1]
        self._scanned = 0
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self._max_line:
            self._fail_reader(LineTooLong(self.name, self._max_line,
                                          bytes(line[:QUOTE_BYTES])))
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidUtf8(self.name, bytes(line), exc.reason) from None

    def output_waiting(self) -> bool:
        """Whether the bot has written anything not read yet (or closed stdout).

        A cheap poll, no waiting: the referee calls it before each request to catch
        a bot that writes when it was not asked.
        """
        if self._buf or self._eof:
            return True
        if self._stdout.fileno() >= 0 and not self._stdout_poll.poll(0):
            return False  # (a closed stdout has fileno -1: the read says what is wrong)
        return self._read_nowait()

    def _read_nowait(self) -> bool:
        """Append what the pipe holds to the buffer without waiting.  False if it
        held nothing yet; True if data came, or EOF (``_eof`` is set), or a read
        error (``read_line`` meets it again and says what it is)."""
        try:
            data = os.read(self._stdout.fileno(), CHUNK)
        except BlockingIOError:
            return False
        except OSError:
            return True
        if data:
            self._buf += data  # kept for read_line: nothing is lost
        else:
            self._eof = True
        return True

    def pending_output(self) -> bytes:
        """What the bot has written and ``read_line`` has not returned yet (no LF in it
        unless a line is waiting), as far as it has been read from the pipe."""
        return bytes(self._buf)

    async def _fill(self) -> bool:
        """Append what the bot has written to the buffer, waiting if nothing has
        come yet; False at EOF.

        Not ``FdStream.receive_some``: it starts with a full scheduler pass, and
        a decision needs only one, the real wait for the answer.  The pipe is
        non-blocking, so read it directly and wait only when it is empty.
        """
        fd = self._stdout.fileno()
        waited = False
        while True:
            if self._guard.hit is not None:
                return False  # killed: what it may still say does not count
            try:
                data = os.read(fd, CHUNK)
            except BlockingIOError:
                try:
                    await trio.lowlevel.wait_readable(fd)
                except trio.ClosedResourceError:
                    if self._guard.hit is None:
                        raise
                waited = True
                continue
            except OSError as exc:
                if exc.errno == errno.EBADF:
                    raise trio.ClosedResourceError("file was already closed") from None
                raise trio.BrokenResourceError from exc
            break
        self._buf += data
        if not waited:
            # Still a checkpoint (after buffering: a cancellation loses nothing),
            # so a bot that always has its answer ready cannot starve other games.
            await trio.lowlevel.checkpoint()
        return bool(data)

    async def send_line(self, line: str) -> None:
        """Write ``line`` and a LF to the bot's stdin.

        Wrap it in a deadline: a bot that stops reading blocks it. Raises
        ``BotExited`` if the bot closed its stdin (or ended), ``BotBroken`` after an
        earlier send was cancelled or failed. ``ValueError`` for a line with CR/LF.
        """
        await self.send_lines((line,))

    async def send_lines(self, lines: Sequence[str]) -> None:
        """Write several lines in one write (the events before a request, and the
        request): one system call per decision instead of one per line."""
        data = _line_bytes(lines)
        if self._writer_broken is not None:
            raise self._writer_broken
        if self._stdin_gone:
            raise await self._exited("stopped reading its input")
        try:
            # One os.write on the non-blocking pipe nearly always takes it all;
            # FdStream.send_all would add a scheduler pass first.  It finishes
            # the rest when the pipe is full.
            try:
                sent = os.write(self._stdin.fileno(), data)
            except BlockingIOError:
                sent = 0
            except BrokenPipeError:
                raise trio.BrokenResourceError from None
            except OSError as exc:
                if exc.errno == errno.EBADF:
                    raise trio.ClosedResourceError("file was already closed") from None
                raise
            if sent < len(data):
                await self._stdin.send_all(data[sent:])
        except trio.BrokenResourceError:
            self._stdin_gone = True
            raise await self._exited("stopped reading its input") from None
        except BaseException as exc:
            # Cancelled (or worse) mid-write: part of the line may be in the pipe.
            self._writer_broken = BotBroken(
                self.name,
                f"bot {self.name!r} cannot be written to: an earlier send was interrupted "
                f"({type(exc).__name__})",
            )
            raise

    def send_lines_nowait(self, lines: Sequence[str]) -> bool:
        """Write the lines now if the pipe takes them whole; never waits.

        False, with nothing written, if it cannot (the pipe is full, the lines
        exceed ``select.PIPE_BUF``, the bot cannot be written to): then call
        ``send_lines``, which waits, or says what is wrong.
        """
        data = _line_bytes(lines)
        if (self._writer_broken is not None or self._stdin_gone
                or len(data) > select.PIPE_BUF):
            return False
        try:
            # Up to PIPE_BUF bytes, a write to a pipe is atomic: all or nothing.
            os.write(self._stdin.fileno(), data)
        except OSError:
            return False
        return True

    async def close(self, grace: float = DEFAULT_CLOSE_GRACE) -> None:
        """End the bot and everything in its process group; always reaps it.

        Closes stdin, waits ``grace`` s for the bot to exit, SIGTERMs the group,
        waits ``grace`` s, SIGKILLs the group (``grace <= 0``: SIGKILL at once).
        Idempotent; shielded from cancellation. Later reads and sends raise
        ``trio.ClosedResourceError``.
        """
        if self._closed.is_set():
            return  # no checkpoint: this runs in finally blocks of cancelled code
        if self._closing:
            with trio.CancelScope(shield=True):
                await self._closed.wait()
            return
        self._closing = True
        with trio.CancelScope(shield=True):
            try:
                await self._stop(grace)
            except BaseException:
                # E.g. Ctrl-C mid-way: let a later close() (open_bot_process's) finish.
                self._closing = False
                raise
        self._closed.set()

    async def wait_closed(self) -> None:
        """Wait until ``close`` (called by anyone) has ended the bot."""
        await self._closed.wait()

    async def _stop(self, grace: float) -> None:
        self._watch_scope.cancel()  # from here on, close decides how the bot ends
        inside = self._sandbox_init() if self.sandboxed else []
        self._stdin.close()  # EOF on the bot's stdin: a polite bot ends here
        if grace <= 0 and self.kept and self.returncode is None:
            # The leader is the keeper (launch.py): on SIGTERM it SIGKILLs the bot and
            # every descendant, those that left the group included, which a SIGKILL
            # of the group would leave behind. SIGKILL below if it does not end.
            self._signals_sent.add(signal.SIGTERM)
            os.kill(self.pid, signal.SIGTERM)
            await self._wait_exit(_KEEPER_WAIT)
        if self.returncode is None and (grace <= 0 or not await self._wait_exit(grace)):
            if grace > 0:
                self._signal_group(signal.SIGTERM)
            if grace <= 0 or not await self._wait_exit(grace):
                self._signal_group(signal.SIGKILL)
                await self._proc.wait()
        # The leader is reaped; take down whatever it left in its group.
        await self._kill_leftovers()
        if inside:
            await self._wait_sandbox_gone(inside)
        with trio.move_on_after(_STDERR_EOF_WAIT):
            await self._stderr_done.wait()
        self._drain_scope.cancel()
        self._stdout.close()
        self._guard.close(self.returncode)
        self._write_log(f"[arena: pid {self.pid} {self.describe_exit()}]\n".encode())

    async def _wait_exit(self, timeout: float) -> bool:
        with trio.move_on_after(timeout):
            await self._proc.wait()
        return self.returncode is not None

    def _signal_group(self, sig: signal.Signals) -> None:
        if self.returncode is not None:
            return  # reaped: don't signal a group id that may be empty or reused
        self._signals_sent.add(sig)
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            pass

    def _sandbox_init(self) -> list[int]:
        # bwrap is the leader, or the keeper's child; its child is the init of the
        # sandbox's PID namespace. Wait for the whole tree, whichever it is.
        if self.returncode is not None:
            return []  # bwrap ends only after its namespace has, unless killed
        return sorted(ProcessTable.read().members(self.pid) - {self.pid})

    async def _wait_sandbox_gone(self, inits: list[int]) -> None:
        # A killed bwrap takes its namespace's init with it (--die-with-parent), and
        # an init dies only after everything else in its namespace has; both happen
        # asynchronously, so poll (bounded) until the init is dead.
        with trio.move_on_after(_GROUP_WAIT):
            while any(
                (info := read_stat(pid)) is not None and info.state not in ("Z", "X")
                for pid in inits
            ):
                await trio.sleep(_GROUP_POLL)

    async def _kill_leftovers(self) -> None:
        # Members that are not our children cannot be awaited, and SIGKILL is
        # asynchronous, so poll (bounded) until none is alive.
        with trio.move_on_after(_GROUP_WAIT):
            while group_alive(self.pid):
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    break
                await trio.sleep(_GROUP_POLL)

    def _fail_reader(self, error: BotOutputError) -> NoReturn:
        self._buf.clear()
        self._scanned = 0
        self._reader_broken = BotBroken(
            self.name, f"bot {self.name!r} cannot be read from after: {error}"
        )
        raise error

    async def _exited(self, what: str) -> BotExited:
        # The pipe closes a moment before the process ends; wait a little for the
        # status so the fault report can say how it ended. Shielded (bounded by
        # exit_wait): the fault is already seen, and the caller's deadline for an
        # answer must not cut this wait short and charge a timeout instead.
        if self.returncode is None and not self._closing:
            with trio.CancelScope(shield=True):
                await self._wait_exit(self._exit_wait)
        return BotExited(self.name, what, self.returncode, self.describe_exit())

    async def _drain_stderr(self) -> None:
        try:
            with self._drain_scope:
                while data := await self._stderr.receive_some(CHUNK):
                    self._log_stderr(data)
        finally:
            self._stderr.close()
            self._stderr_done.set()

    def _log_stderr(self, data: bytes) -> None:
        if self._log_cut:
            return  # keep draining so the bot never blocks on stderr
        room = self._log_cap - self._logged
        if self._log_budget is not None:
            room = min(room, self._log_budget.left(self.name))
        taken = data[:room]
        self._write_log(taken)
        self._logged += len(taken)
        if self._log_budget is not None:
            self._log_budget.spend(self.name, len(taken))
        if len(data) <= room:
            return
        self._log_cut = True
        self._write_log(f"[arena: log cut at {self._log_cap} bytes]\n".encode())

    def _write_log(self, data: bytes) -> None:
        # A plain blocking write: a local file in the page cache, at most log_cap
        # bytes per start, is cheaper than a thread hop per chunk.
        if not data:
            return
        if data.startswith(b"[arena:") and not self._log_ends_line:
            data = b"\n" + data
        try:
            self._log.write(data)
        except OSError as exc:  # a full disk: name the log, for the one line the CLI prints
            raise OSError(exc.errno, exc.strerror, getattr(self._log, "name", None)) from None
        self._log_ends_line = data.endswith(b"\n")


def _line_bytes(lines: Sequence[str]) -> bytes:
    text = "\n".join(lines)
    # Checked on the whole text (one LF between lines, no CR): a C scan, not a loop.
    if "\r" in text or text.count("\n") != max(len(lines) - 1, 0):
        bad = next(line for line in lines if "\n" in line or "\r" in line)
        raise ValueError(f"a protocol line cannot contain CR or LF: {bad!r}")
    return (text + "\n").encode("utf-8")



def relative_to_cwd(arg: str) -> str:
    """A path inside the working directory relative to it; anything else as it is."""
    here = os.getcwd() + os.sep
    return arg[len(here):] if arg.startswith(here) else arg


def shown_command(argv: Sequence[str]) -> str:
    """A command as a bot's log shows it: paths inside the working directory
    relative to it, so that published logs do not show where the host keeps
    the contest."""
    return shlex.join(map(relative_to_cwd, argv))

@asynccontextmanager
async def open_bot_process(
    spec: BotSpec,
    *,
    scratch_dir: Path,
    log_path: Path,
    max_line: int = DEFAULT_MAX_LINE,
    log_cap: int = DEFAULT_LOG_CAP,
    log_budget: LogBudget | None = None,
    close_grace: float = DEFAULT_CLOSE_GRACE,
    exit_wait: float = DEFAULT_EXIT_WAIT,
    limits: BotLimits | None = None,
    sandbox: Sandbox | None = None,
    cpus: frozenset[int] | None = None,
) -> AsyncIterator[BotProcess]:
    """Start the bot, drain its stderr into ``log_path``, and always end it on exit.

    On a normal exit the bot is closed with ``close_grace``; when the body raises
    (including cancellation) it is SIGKILLed at once. Exceptions from the body
    propagate unchanged (never wrapped in an exception group). Raises
    ``BotStartError`` if the program cannot be started.

    ``limits``: run the bot under these resource limits (see ``limits``), with a
    watchdog task for memory and CPU; it returns once the program has been
    exec'd. ``sandbox``: run it inside bubblewrap (see ``sandbox``); call
    ``sandbox.check_sandbox()`` once beforehand, at start-up. ``cpus``: run the
    bot and everything it starts on these CPUs only (``sched_setaffinity``; the
    keeper pins itself before it starts the bot, or without limits the bot is
    pinned just after its exec); a CPU that cannot be used is a ``BotStartError``.
    ``log_budget``: what is left of the bot's stderr for the run, shared with its
    other processes (``log_cap`` still caps this log file).
    """
    if max_line < 1 or log_cap < 0:
        raise ValueError("max_line must be >= 1 and log_cap >= 0")
    if cpus is not None and not cpus:
        raise ValueError("cpus must name at least one CPU")
    scratch_dir = Path(scratch_dir).absolute()
    scratch_dir.mkdir(parents=True, exist_ok=True)
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab", buffering=0) as log:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        argv = list(spec.argv)
        status_read = status_write = None
        try:
            if limits is not None or sandbox is not None:
                # A sandbox always runs under a keeper: it hands bwrap the bot's pipes.
                status_read, status_write = os.pipe()
                argv = isolated_argv(argv, limits=limits, sandbox=sandbox, shown=spec.path,
                                     workdir=scratch_dir, status_fd=status_write, cpus=cpus)
            proc = await trio.lowlevel.open_process(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                cwd=scratch_dir,
                env=bot_env(scratch_dir),
                pass_fds=() if status_write is None else (status_write,),
            )
            if cpus is not None and status_write is None:
                # No keeper to pin it before its exec, so pin it right after. Only a
                # thread or child started in the moment since the exec (microseconds
                # to a scheduler tick) escapes; runtimes start theirs later, and a
                # miss costs speed, never a rule. arena run always has a keeper.
                try:
                    os.sched_setaffinity(proc.pid, cpus)
                except ProcessLookupError:
                    pass  # it has ended already: reported as any early exit is
                except OSError as exc:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)  # never let it run unpinned
                    except ProcessLookupError:
                        pass
                    with trio.CancelScope(shield=True):
                        await proc.wait()
                        for stream in (proc.stdin, proc.stdout, proc.stderr):
                            if stream is not None:
                                await stream.aclose()
                    pinned = ",".join(map(str, sorted(cpus)))
                    raise OSError(f"cannot pin to CPU {pinned}: {exc.strerror or exc}") from None
        except BaseException as exc:
            if status_read is not None:
                os.close(status_read)
            if not isinstance(exc, OSError | SandboxError):
                raise
            log.write(f"[arena: {stamp} cannot start {shlex.join(spec.argv)}: {exc}]\n".encode())
            raise BotStartError(spec.name, f"bot {spec.name!r} cannot be started: {exc}") from None
        finally:
            if status_write is not None:
                os.close(status_write)
        bot = BotProcess(
            spec,
            proc,
            log,
            max_line=max_line,
            log_cap=log_cap,
            log_budget=log_budget,
            exit_wait=exit_wait,
            limits=limits,
            sandboxed=sandbox is not None,
            kept=status_write is not None,
            scratch_dir=scratch_dir,
        )
        notes = [f"limits: {limits.describe()}"] if limits is not None else []
        if sandbox is not None:
            notes.append("sandboxed")
        if cpus is not None:
            notes.append("CPU " + ",".join(map(str, sorted(cpus))))
        how = f" ({'; '.join(notes)})" if notes else ""
        bot._write_log(
            f"[arena: {stamp} started pid {proc.pid}: {shown_command(spec.argv)}{how}]\n".encode()
        )
        body_error: BaseException | None = None
        try:
            if status_read is not None:
                await _await_exec(bot, status_read, stamp)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(bot._drain_stderr)
                if bot._guard.watchdog is not None:
                    nursery.start_soon(bot._watch)
                try:
                    yield bot
                except BaseException as exc:
                    # Held until the nursery is gone, so it is not wrapped in a group.
                    body_error = exc
                await bot.close(close_grace if body_error is None else 0)
        finally:
            # Covers the drain task failing (e.g. disk full) before close() ran.
            await bot.close(0)
        if body_error is not None:
            raise body_error


async def _await_exec(bot: BotProcess, status_read: int, stamp: str) -> None:
    """Wait until the launcher has exec'd the bot; ``BotStartError`` if the exec failed.

    The launcher's status pipe closes on exec having carried nothing, or carries
    the error. Owns and closes ``status_read``.
    """
    message = b""
    async with trio.lowlevel.FdStream(status_read) as status:
        while len(message) < 4096 and (data := await status.receive_some(4096)):
            message += data
    if message:
        text = message.decode("utf-8", "replace").strip()
        bot._write_log(f"[arena: {stamp} cannot start {shlex.join(bot.argv)}: {text}]\n".encode())
        raise BotStartError(bot.name, f"bot {bot.name!r} cannot be started: {text}")


def group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is still alive (zombies count as dead).

    Zombies stay in the group until reaped, and an orphan's reaper (often pid 1 in
    a container) may never reap it, so on Linux read each process's state.
    """
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return True  # no /proc: any member counts
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        # Fields after the parenthesised command: state, ppid, pgrp, ...
        fields = stat.rpartition(b")")[2].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False
