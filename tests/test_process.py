"""One bot process under trio: lines both ways, bad output, stderr, and ending it.

The fake bot ``proc_tool.py`` does what each line we send it says. Deadlines in
these tests only guard against hangs; nothing here measures speed.
"""

from __future__ import annotations

import functools
import os
import select
import signal
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import trio

from arena.referee.bots import BotSpec, resolve_bot
from arena.referee.process import (
    BotBroken,
    BotExited,
    BotProcess,
    BotStartError,
    InvalidUtf8,
    LineTooLong,
    describe_status,
    open_bot_process,
    shown_command,
)

FAKE = Path(__file__).parent / "fake_bots"
HANG_GUARD = 3.0

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


def hang_guarded(
    seconds: float,
) -> Callable[[Callable[..., Awaitable[None]]], Callable[..., None]]:
    """A decorator that runs an async test under trio.run, failing instead of
    hanging after ``seconds`` (tests of processes elsewhere use it too).

    Strict exception groups, as newer trio has by default, so nothing here
    depends on loose ones.
    """

    def decorate(fn: Callable[..., Awaitable[None]]) -> Callable[..., None]:
        @functools.wraps(fn)
        def wrapper(*args: object, **kwargs: object) -> None:
            async def main() -> None:
                with trio.fail_after(seconds):
                    await fn(*args, **kwargs)

            trio.run(main, strict_exception_groups=True)

        return wrapper

    return decorate


trio_test = hang_guarded(HANG_GUARD)


def tool(tmp_path: Path, **options: Any) -> AbstractAsyncContextManager[BotProcess]:
    options.setdefault("close_grace", 0.5)
    options.setdefault("exit_wait", 2.0)
    return open_bot_process(
        resolve_bot(str(FAKE / "proc_tool.py")),
        scratch_dir=tmp_path / "scratch",
        log_path=tmp_path / "logs" / "tool.log",
        **options,
    )


def gone(pid: int) -> bool:
    """The process no longer runs: no such pid, or a zombie nobody reaped yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] in ("Z", "X")


async def ask(bot: BotProcess, command: str) -> str:
    await bot.send_line(command)
    return await bot.read_line()


@trio_test
async def test_echo_round_trip_of_many_lines(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        for i in range(200):
            text = f"line {i} é ✓"
            assert await ask(bot, f"echo {text}") == text
        # Many lines in flight at once, read back in order.
        for i in range(200):
            await bot.send_line(f"echo {i}")
        assert [await bot.read_line() for _ in range(200)] == [str(i) for i in range(200)]
        assert bot.usable
    assert bot.returncode == 0  # it ended by itself at EOF on stdin
    assert bot.describe_exit() == "exited with status 0"


@trio_test
async def test_crlf_and_lf_endings_are_stripped(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        assert await ask(bot, "crlf") == "a"
        assert await bot.read_line() == "b"


@trio_test
async def test_line_at_the_limit_passes_and_one_byte_more_breaks_the_reader(
    tmp_path: Path,
) -> None:
    async with tool(tmp_path, max_line=100) as bot:
        assert await ask(bot, "long 100") == "x" * 100
        with pytest.raises(LineTooLong, match="longer than 100 bytes") as info:
            await ask(bot, "long 101")
        assert info.value.start == b"x" * 101  # the evidence: up to 200 bytes
        assert not bot.usable
        with pytest.raises(BotBroken):
            await bot.read_line()


@trio_test
async def test_endless_line_fails_without_waiting_for_its_end(tmp_path: Path) -> None:
    async with tool(tmp_path, max_line=1000) as bot:
        # 50 MiB with no LF: the bot blocks on the full pipe long before it is done,
        # so only a reader that gives up at the limit gets here.
        await bot.send_line(f"nolf {50 * 1024 * 1024}")
        with pytest.raises(LineTooLong):
            await bot.read_line()
        assert bot.returncode is None


@trio_test
async def test_eof_raises_bot_exited_with_the_exit_status(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        assert await ask(bot, "exit 3") == "bye"
        for _ in range(2):  # EOF stays EOF
            with pytest.raises(BotExited, match="exited with status 3") as info:
                await bot.read_line()
            assert info.value.returncode == 3
            assert info.value.bot == "proc_tool"
        # Writing to it now is a typed error too, not BrokenResourceError.
        with pytest.raises(BotExited, match="stopped reading its input"):
            await bot.send_line("echo anyone?")
    log = (tmp_path / "logs" / "tool.log").read_text()
    assert "last words\n" in log  # stderr is drained to the end before close returns
    assert log.endswith(f"[arena: pid {bot.pid} exited with status 3]\n")


@trio_test
async def test_cancelled_read_loses_nothing(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        await bot.send_line("nolf 5")  # half a line, then silence
        with trio.move_on_after(0.3) as scope:
            await bot.read_line()
        assert scope.cancelled_caught
        assert bot.usable
        assert await ask(bot, "echo z") == "yyyyyz"


@trio_test
async def test_cancelled_read_of_output_already_waiting_loses_nothing(tmp_path: Path) -> None:
    # read_line reads output that is already there without waiting, then still
    # passes a checkpoint: cancelled there, it must keep what it read.
    async with tool(tmp_path) as bot:
        await bot.send_line("echo early")
        await trio.lowlevel.wait_readable(bot._stdout.fileno())
        with trio.CancelScope() as scope:
            scope.cancel()
            await bot.read_line()
        assert scope.cancelled_caught
        assert await bot.read_line() == "early"
        assert bot.usable


@trio_test
async def test_send_larger_than_the_pipe_arrives_whole(tmp_path: Path) -> None:
    # More than a pipe holds: the first write takes part, the rest waits for room.
    text = "".join(chr(ord("a") + i % 26) for i in range(300_000))
    async with tool(tmp_path, max_line=400_000) as bot:
        assert await ask(bot, f"echo {text}") == text
        assert await ask(bot, "echo after") == "after"


@trio_test
async def test_invalid_utf8_consumes_its_line_only(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        with pytest.raises(InvalidUtf8, match="not UTF-8") as info:
            await ask(bot, "badutf8")
        assert info.value.raw == b"\xff\xfe bad"
        assert await bot.read_line() == "ok"


@trio_test
async def test_send_to_a_bot_that_stopped_reading_can_be_cancelled(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        assert await ask(bot, "deaf") == "ready"
        with trio.move_on_after(0.5) as scope:
            while True:  # fills the pipe, then blocks until the deadline
                await bot.send_line("z" * 60000)
        assert scope.cancelled_caught
        assert not bot.usable
        with pytest.raises(BotBroken, match="interrupted"):
            await bot.send_line("echo hello")
        await bot.close(grace=0.2)
        assert bot.returncode == -signal.SIGTERM
        assert bot.describe_exit() == "killed by signal 15 (SIGTERM), sent by arena"


@trio_test
async def test_a_note_comes_after_what_the_bot_wrote_to_stderr_before_it(
        tmp_path: Path) -> None:
    # The bot writes 12 bytes to stderr (no LF), then "done" on stdout.  The
    # referee takes "done" with no scheduler pass (select blocks this thread),
    # so the drain task has had no turn: the note must still come after the
    # 12 bytes, on a line of its own.
    async with tool(tmp_path) as bot:
        assert bot.send_lines_nowait(["stderr 12"])
        readable, _, _ = select.select([bot._stdout.fileno()], [], [], 30)
        assert readable
        assert bot.read_line_nowait() == "done"
        bot.log_note("== game 2 ==")
    log = (tmp_path / "logs" / "tool.log").read_text()
    assert "e" * 12 + "\n== game 2 ==\n" in log


@trio_test
async def test_stderr_flood_is_capped_and_never_blocks_the_bot(tmp_path: Path) -> None:
    cap = 64 * 1024
    async with tool(tmp_path, log_cap=cap) as bot:
        assert await ask(bot, f"stderr {20 * 1024 * 1024}") == "done"
        assert await ask(bot, "echo still here") == "still here"
    log = (tmp_path / "logs" / "tool.log").read_bytes()
    marker = f"[arena: log cut at {cap} bytes]\n".encode()
    assert log.count(marker) == 1
    assert log.count(b"e") >= cap
    assert len(log) < cap + 1024  # headers and marker only beyond the cap


@trio_test
async def test_log_is_appended_with_a_header_per_start(tmp_path: Path) -> None:
    pids = []
    for _ in range(2):
        async with tool(tmp_path) as bot:
            pids.append(bot.pid)
            assert await ask(bot, "echo hi") == "hi"
    lines = (tmp_path / "logs" / "tool.log").read_text().splitlines()
    starts = [line for line in lines if " started pid " in line]
    assert [int(s.split(" started pid ")[1].split(":")[0]) for s in starts] == pids
    assert "proc_tool.py" in starts[0]


@trio_test
async def test_bot_ignoring_sigterm_is_killed_and_reaped(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        assert await ask(bot, "ignore-term") == "ready"
        await bot.close(grace=0.2)
        assert bot.returncode == -signal.SIGKILL
        assert "killed by signal 9 (SIGKILL)" in bot.describe_exit()
        with pytest.raises(ProcessLookupError):
            os.kill(bot.pid, 0)  # reaped, not a zombie


@trio_test
async def test_close_kills_children_left_in_the_group(tmp_path: Path) -> None:
    spec = resolve_bot(str(FAKE / "proc_fork.sh"))
    async with open_bot_process(
        spec, scratch_dir=tmp_path / "s", log_path=tmp_path / "fork.log", close_grace=0.5
    ) as bot:
        child = int(await bot.read_line())
        assert os.getpgid(child) == bot.pid  # the test is only meaningful if so
        assert not gone(child)
    assert bot.returncode == 0
    assert gone(child)


@trio_test
async def test_child_that_left_the_group_does_not_stall_close(tmp_path: Path) -> None:
    # It keeps our stdout and stderr open, so neither ever reaches EOF.
    child = None
    try:
        async with tool(tmp_path) as bot:
            child = int(await ask(bot, "escape"))
        assert bot.returncode == 0
    finally:
        if child is not None:
            os.kill(child, signal.SIGKILL)


@trio_test
async def test_environment_is_minimal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_TEST_SECRET", "hunter2")
    async with tool(tmp_path) as bot:
        await bot.send_line("env")
        env = {}
        while (line := await bot.read_line()) != "END":
            key, _, value = line.partition("=")
            env[key] = value
    scratch = str((tmp_path / "scratch").absolute())
    assert env == {
        "PATH": os.environ["PATH"],
        "HOME": scratch,
        "TMPDIR": scratch,
        "LANG": "C.UTF-8",
    }


@trio_test
async def test_runs_in_its_scratch_dir_and_own_session(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        assert await ask(bot, "cwd") == os.path.realpath(tmp_path / "scratch")
        pgid, sid = map(int, (await ask(bot, "group")).split())
        assert pgid == sid == bot.pid != os.getsid(0)


@trio_test
async def test_cancellation_kills_and_reaps_the_bot(tmp_path: Path) -> None:
    with trio.move_on_after(0.3) as scope:
        async with tool(tmp_path) as bot:
            await bot.read_line()  # it never says anything
    assert scope.cancelled_caught
    assert bot.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(bot.pid, 0)


def test_errors_from_the_body_are_not_wrapped_in_groups(tmp_path: Path) -> None:
    async def main() -> None:
        with trio.fail_after(HANG_GUARD):
            async with tool(tmp_path) as bot:
                await ask(bot, "exit 1")
                await bot.read_line()

    with pytest.raises(BotExited):
        trio.run(main, strict_exception_groups=True)


@trio_test
async def test_program_that_cannot_start_is_a_typed_error(tmp_path: Path) -> None:
    spec = BotSpec("ghost", tmp_path, (str(tmp_path / "no-such-program"),), tmp_path)
    with pytest.raises(BotStartError, match="'ghost' cannot be started"):
        async with open_bot_process(spec, scratch_dir=tmp_path / "s", log_path=tmp_path / "g.log"):
            pass
    assert "cannot start" in (tmp_path / "g.log").read_text()


@trio_test
async def test_lines_with_line_breaks_are_refused(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        with pytest.raises(ValueError):
            await bot.send_line("two\nlines")
        for lines in (["event a", "two\nlines", "request"], ["event a", "a CR\r"], ["\n"]):
            with pytest.raises(ValueError, match="cannot contain CR or LF"):
                bot.send_lines_nowait(lines)
            with pytest.raises(ValueError, match="cannot contain CR or LF"):
                await bot.send_lines(lines)
        assert bot.usable


@pytest.mark.parametrize(
    ("returncode", "text"),
    [
        (None, "still running"),
        (0, "exited with status 0"),
        (1, "exited with status 1"),
        (-9, "killed by signal 9 (SIGKILL)"),
        (-200, "killed by signal 200"),
    ],
)
def test_describe_status(returncode: int | None, text: str) -> None:
    assert describe_status(returncode) == text


def test_a_bots_log_shows_paths_inside_the_working_directory_relative(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Published logs must not show where the host keeps the contest.
    monkeypatch.chdir(tmp_path)
    inside = str(tmp_path / "bots" / "mine.py")
    assert shown_command(["/usr/bin/python3", "-u", inside, "--name", "a b"]) == \
        "/usr/bin/python3 -u bots/mine.py --name 'a b'"
    sibling = str(tmp_path) + "x/bot"  # beside the working directory, not inside it
    assert shown_command([sibling]) == sibling
