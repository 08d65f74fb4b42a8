"""Per-bot resource limits: each limit holds, and the referee can tell which one was hit.

The fake bot ``lim_tool.py`` does what each line we send it says. Memory and CPU
limits are small (64 MB, half a second of CPU) and the hogs are bounded, so a
broken watchdog fails a test instead of the machine. CPU is counted in CPU
seconds, not wall time, so a loaded machine only makes these tests slower.
"""

from __future__ import annotations

import os
import signal
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
import trio
from test_process import hang_guarded

from arena.referee.bots import BotSpec, resolve_bot
from arena.referee.limits import BotLimits, exit_limit, launcher_argv
from arena.referee.process import BotExited, BotProcess, BotStartError, open_bot_process
from arena.referee.watchdog import TREE_WALK, ProcessTable, ProcInfo, read_stat, read_tree

FAKE = Path(__file__).parent / "fake_bots"
HANG_GUARD = 20.0
SMALL = BotLimits(memory_mb=64, cpu_seconds=0.5, file_size_mb=1, open_files=32)

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


trio_test = hang_guarded(HANG_GUARD)


def tool(
    tmp_path: Path, limits: BotLimits | None = SMALL
) -> AbstractAsyncContextManager[BotProcess]:
    return open_bot_process(
        resolve_bot(str(FAKE / "lim_tool.py")),
        scratch_dir=tmp_path / "scratch",
        log_path=tmp_path / "logs" / "tool.log",
        close_grace=0.5,
        exit_wait=5.0,
        limits=limits,
    )


def gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] in ("Z", "X")


def kill_quietly(pid: int | None) -> None:
    if pid is not None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


async def ask(bot: BotProcess, command: str) -> str:
    await bot.send_line(command)
    return await bot.read_line()


async def killed(bot: BotProcess, command: str) -> BotExited:
    """Send ``command`` and expect the bot to die before it answers."""
    await bot.send_line(command)
    with pytest.raises(BotExited) as info:
        await bot.read_line()
    return info.value


# ------------------------------------------------------------ a bot within limits


@trio_test
async def test_bot_under_limits_answers_normally_and_has_them_set(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        for i in range(50):
            assert await ask(bot, f"echo {i}") == str(i)
        assert await ask(bot, "alloc 16") == "allocated 16"  # well within 64 MB
        assert await ask(bot, "limits") == f"core=0/0 fsize={1 << 20}/{1 << 20} nofile=32/32"
        assert bot.usable
        assert bot.limit_hit is None
        assert bot.cpu_used is not None and bot.cpu_used < SMALL.cpu_seconds
        # 52 answers can take less than one watch interval: make sure of one look.
        assert bot._guard.watchdog is not None and bot._guard.watchdog.sample() is None
    assert bot.returncode == 0
    assert bot.limit_hit is None
    assert bot.memory_peak is not None and 0 < bot.memory_peak < 64 << 20


@trio_test
async def test_without_limits_nothing_changes(tmp_path: Path) -> None:
    async with tool(tmp_path, limits=None) as bot:
        assert await ask(bot, "echo hi") == "hi"
        assert bot.cpu_used is None and bot.memory_peak is None
    assert bot.limit_hit is None
    assert " started pid " in (tmp_path / "logs" / "tool.log").read_text()


@trio_test
async def test_limited_bot_that_cannot_start_is_a_typed_error(tmp_path: Path) -> None:
    # The launcher starts; the exec of the bot's program fails inside it.
    spec = BotSpec("ghost", tmp_path, (str(tmp_path / "no-such-program"),), tmp_path)
    with pytest.raises(BotStartError, match="'ghost' cannot be started: .*No such file"):
        async with open_bot_process(
            spec, scratch_dir=tmp_path / "s", log_path=tmp_path / "g.log", limits=SMALL
        ):
            pass
    assert "cannot start" in (tmp_path / "g.log").read_text()


# ------------------------------------------------------------------ memory


@trio_test
async def test_memory_hog_is_killed_and_the_limit_is_named(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        exited = await killed(bot, "alloc 512")  # 8 times the limit, 8 MB at a time
        assert exited.returncode == -signal.SIGKILL
        assert bot.limit_hit == "memory 64 MB"
        assert "sent by arena" in bot.describe_exit()
        assert not bot.usable
    assert bot.memory_peak is not None and bot.memory_peak > 64 << 20
    assert "over its limit: memory 64 MB" in (tmp_path / "logs" / "tool.log").read_text()


@trio_test
async def test_memory_of_a_child_in_its_own_session_counts(tmp_path: Path) -> None:
    child = None
    try:
        async with tool(tmp_path) as bot:
            child = int((await ask(bot, "alloc-child 512")).split()[1])
            assert os.getpgid(child) != bot.pid  # left the group: only the tree finds it
            with pytest.raises(BotExited):
                await bot.read_line()
            assert bot.limit_hit == "memory 64 MB"
            with trio.fail_after(5):
                while not gone(child):  # SIGKILL is asynchronous
                    await trio.sleep(0.01)
    finally:
        kill_quietly(child)


# --------------------------------------------------------------------- CPU


@trio_test
async def test_cpu_burner_is_killed_and_the_limit_is_named(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        assert await ask(bot, "burn-forever") == "burning"
        with pytest.raises(BotExited) as info:
            await bot.read_line()
        assert info.value.returncode == -signal.SIGKILL
        assert bot.limit_hit == "cpu 0.5 s"
        assert bot.cpu_used is not None and bot.cpu_used > 0.5


@trio_test
async def test_cpu_of_a_child_counts(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        child = int((await ask(bot, "burn-child")).split()[1])
        with pytest.raises(BotExited):
            await bot.read_line()  # the bot itself idles; its child burns
        assert bot.limit_hit == "cpu 0.5 s"
    assert gone(child)


@trio_test
async def test_cpu_budget_starts_again_with_reset_cpu(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        # 0.3 s per "game", three games: 0.9 s in all, over 0.5 s only in total.
        for _ in range(3):
            bot.reset_cpu()
            assert await ask(bot, "burn 0.3") == "burnt"
            assert bot.limit_hit is None
        # Without a reset the next 0.3 s goes over the budget.
        await killed(bot, "burn 0.3")
        assert bot.limit_hit == "cpu 0.5 s"


# --------------------------------------------------------------- file size


@trio_test
async def test_file_bigger_than_the_limit_cannot_be_written(tmp_path: Path) -> None:
    big = tmp_path / "scratch" / "big"
    async with tool(tmp_path) as bot:
        # Python ignores SIGXFSZ, so the write fails with EFBIG and the bot lives on.
        assert await ask(bot, "write 4") == "error EFBIG"
        assert big.stat().st_size == 1 << 20
        assert bot.usable and bot.limit_hit is None
        # A program that keeps SIGXFSZ at its default (as a C bot does) dies of it.
        exited = await killed(bot, "write-dfl 4")
        assert exited.returncode == -signal.SIGXFSZ
        assert bot.limit_hit == "file size 1 MB"
    assert big.stat().st_size == 1 << 20


@trio_test
async def test_a_program_from_a_shell_bot_dies_of_sigxfsz(tmp_path: Path) -> None:
    # Python (the launcher) ignores SIGXFSZ, and ignored signals stay ignored
    # across exec: only a launcher that resets it lets head die of it.
    spec = resolve_bot(str(FAKE / "lim_write.sh"))
    async with open_bot_process(
        spec, scratch_dir=tmp_path / "s", log_path=tmp_path / "w.log", limits=SMALL
    ) as bot:
        await killed(bot, "go")
        assert bot.returncode == -signal.SIGXFSZ
        assert bot.limit_hit == "file size 1 MB"
    assert (tmp_path / "s" / "big").stat().st_size == 1 << 20


# -------------------------------------------------------------- open files


@trio_test
async def test_open_files_are_limited(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        opened, count, err = (await ask(bot, "files")).split(" ", 2)
        assert (opened, err) == ("opened", "error EMFILE")
        assert 20 < int(count) < 32  # 32 descriptors, a few already taken
        assert await ask(bot, "echo still here") == "still here"
        assert bot.limit_hit is None


@trio_test
async def test_hard_limits_cannot_be_raised_even_by_root(tmp_path: Path) -> None:
    async with tool(tmp_path) as bot:
        answer = await ask(bot, "raise-nofile")
        assert answer.startswith("error"), answer


# -------------------------------------------------------------- core dumps


@trio_test
async def test_no_core_dump_is_written(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    async with tool(tmp_path) as bot:
        assert (await ask(bot, "limits")).startswith("core=0/0 ")
        exited = await killed(bot, "abort")
        assert exited.returncode == -signal.SIGABRT
        assert bot.limit_hit is None  # a crash, not a limit
    assert [p.name for p in scratch.iterdir() if p.name.startswith("core")] == []


# ------------------------------------------------------------------ CPU affinity

needs_affinity = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"),
                                    reason="needs sched_setaffinity")
NO_SUCH_CPU = 100_000  # beyond any kernel's CPUs: sched_setaffinity says EINVAL


def cpu_list(text: str) -> set[int]:
    """A ``Cpus_allowed_list`` of /proc/<pid>/status, e.g. ``0-2,5``, as a set."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def cpus_of(pid: int) -> set[int]:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return cpu_list(line.partition(":")[2])
    raise AssertionError(f"no Cpus_allowed_list for pid {pid}")


@needs_affinity
@pytest.mark.parametrize("limits", [SMALL, None], ids=["keeper", "no-limits"])
@trio_test
async def test_a_bot_and_its_children_run_on_the_cpu_they_are_given(
    tmp_path: Path, limits: BotLimits | None
) -> None:
    mine = os.sched_getaffinity(0)
    cpu = max(mine)  # on 2 CPUs or more, not all of ours; on one, the only one
    child = None
    try:
        async with open_bot_process(
            resolve_bot(str(FAKE / "lim_tool.py")), scratch_dir=tmp_path / "scratch",
            log_path=tmp_path / "tool.log", close_grace=0.5, limits=limits,
            cpus=frozenset({cpu}),
        ) as bot:
            # The bot itself says (with limits, it is the keeper's child).
            assert cpu_list(await ask(bot, "status Cpus_allowed_list")) == {cpu}
            assert cpus_of(bot.pid) == {cpu}  # the keeper, or the bot
            child = int((await ask(bot, "spawn-sleep 30")).split()[1])
            assert cpus_of(child) == {cpu}
    finally:
        kill_quietly(child)
    assert os.sched_getaffinity(0) == mine  # the referee stays free
    assert f"CPU {cpu})]" in (tmp_path / "tool.log").read_text()  # said in the start line


@needs_affinity
@pytest.mark.parametrize("limits", [SMALL, None], ids=["keeper", "no-limits"])
@trio_test
async def test_a_cpu_that_cannot_be_used_is_a_start_error(
    tmp_path: Path, limits: BotLimits | None
) -> None:
    with pytest.raises(BotStartError,
                       match=f"'lim_tool' cannot be started: cannot pin to CPU {NO_SUCH_CPU}: "):
        async with open_bot_process(
            resolve_bot(str(FAKE / "lim_tool.py")), scratch_dir=tmp_path / "scratch",
            log_path=tmp_path / "tool.log", limits=limits, cpus=frozenset({NO_SUCH_CPU}),
        ):
            pytest.fail("the bot ran unpinned")
    assert "cannot start" in (tmp_path / "tool.log").read_text()


# -------------------------------------------------------------- the parts


def test_limits_are_validated_and_described() -> None:
    for bad in ({"memory_mb": 0}, {"cpu_seconds": -1}, {"open_files": True}):
        with pytest.raises(ValueError):
            BotLimits(**bad)  # type: ignore[arg-type]
    assert BotLimits().describe() == (
        "memory 1024 MB, cpu 60 s, file size 64 MB, open files 256, disk 256 MB, "
        "processes 256, no core dumps"
    )
    unlimited = BotLimits(memory_mb=None, cpu_seconds=None, file_size_mb=None, open_files=None,
                          disk_mb=None, processes=None)
    assert not unlimited.watched
    assert unlimited.rlimits() == {"core": 0}
    argv = launcher_argv(SMALL, status_fd=7)
    assert argv[-1] == "--" and "status=7" in argv and f"fsize={1 << 20}" in argv
    assert launcher_argv(SMALL, cpus={3, 1})[-2] == "cpus=1,3"


def test_the_processes_option_is_kept_and_an_old_run_gets_the_default() -> None:
    import argparse

    from arena.commands.options import add_limit_options, process_options, resources_from

    parser = argparse.ArgumentParser()
    add_limit_options(parser)
    assert resources_from(parser.parse_args([]))["processes"] == 256
    assert resources_from(parser.parse_args(["--processes", "0"]))["processes"] is None
    resources = resources_from(parser.parse_args(["--processes", "16"]))
    assert process_options(resources)["limits"].processes == 16
    del resources["processes"]  # a tournament.json written before the option
    assert process_options(resources)["limits"].processes == 256


def test_exit_status_names_the_file_size_limit() -> None:
    assert exit_limit(SMALL, -signal.SIGXFSZ) == "file size 1 MB"
    assert exit_limit(SMALL, 128 + signal.SIGXFSZ) is None  # a plain exit status...
    assert exit_limit(SMALL, 128 + signal.SIGXFSZ, sandboxed=True) == "file size 1 MB"
    assert exit_limit(SMALL, -signal.SIGKILL) is None
    assert exit_limit(BotLimits(file_size_mb=None), -signal.SIGXFSZ) is None


def test_a_bot_is_its_group_and_every_descendant() -> None:
    def stat(pid: int, ppid: int, pgrp: int) -> bytes:
        # The command may hold spaces and parentheses; fields 14-17 are CPU ticks.
        rest = [ppid, pgrp, pgrp, 0, -1, 0, 0, 0, 0, 0, 1, 2, 3, 4, 20, 0, 1, 0, 99, 1 << 20, 7]
        return f"{pid} (a (b) c) S {' '.join(map(str, rest))} 0 0\n".encode()

    table = ProcessTable(
        {
            1: stat(1, 0, 1),
            100: stat(100, 1, 100),  # the bot
            101: stat(101, 100, 100),  # its child
            102: stat(102, 101, 102),  # a grandchild in its own session
            103: stat(103, 1, 100),  # an orphan still in the group
            104: stat(104, 103, 104),  # the orphan's child, in its own session
            200: stat(200, 1, 200),  # someone else
            201: stat(201, 200, 200),
        }
    )
    assert table.members(100) == {100, 101, 102, 103, 104}
    assert table.members(200) == {200, 201}
    assert table.children(100) == [101]
    assert table.info(102) == ProcInfo(ppid=101, pgrp=102, state="S", cpu_ticks=10, rss_pages=7)
    assert table.info(999) is None


# A process whose children come from two threads, one in a session of its own.
# A child is listed under the thread that forked it, while that thread lives.
TREE = """
import subprocess, sys, threading
kids, spawned = [], threading.Event()
def spawn_and_stay():
    kids.append(subprocess.Popen(["sleep", "60"]))
    spawned.set()
    sys.stdin.read()
threading.Thread(target=spawn_and_stay, daemon=True).start()
spawned.wait()
kids.append(subprocess.Popen(["sleep", "60"], start_new_session=True))
print(" ".join(str(kid.pid) for kid in kids), flush=True)
sys.stdin.read()
"""


@pytest.mark.skipif(not TREE_WALK, reason="this kernel lists no thread's children")
def test_the_tree_of_a_process_is_read_from_each_thread_s_children() -> None:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", TREE], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    kids: set[int] = set()
    try:
        assert proc.stdout is not None
        kids = {int(pid) for pid in proc.stdout.readline().split()}
        assert len(kids) == 2
        table = read_tree(proc.pid)
        assert table.members(proc.pid) == {proc.pid, *kids}
        assert table.members(proc.pid) == ProcessTable.read().members(proc.pid)
        assert (info := table.info(proc.pid)) is not None and info.threads >= 2
    finally:
        for pid in kids:
            os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait()


def test_stat_of_a_real_process_is_read() -> None:
    info = read_stat(os.getpid())
    assert info is not None
    assert (info.ppid, info.pgrp, info.state) == (os.getppid(), os.getpgrp(), "R")
    assert info.rss_pages > 0 and info.cpu_ticks >= 0
