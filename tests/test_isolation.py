"""Hostile bots against isolation (keeper, limits, sandbox): issue 11, items 1-8 and 15.

Each test runs a copy of the fake bot ``lim_tool.py`` (or a bot of its own) from
the test's temporary folder, so every process of the test names that folder in
its command line: after the test, ``left`` must find none alive. Limits are
small (64 MB, short decision times) and waits are bounded by events (EOF, the
keeper's exit), never by sleeps.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
from test_adversarial import live_processes as live
from test_process import hang_guarded
from test_sandbox import bwrap_works  # noqa: F401  (a fixture)

from arena.engine.game import GameConfig
from arena.protocol import codec
from arena.referee.bots import BuildError, build_bot, resolve_bot
from arena.referee.limits import BotLimits
from arena.referee.lineup import open_lineup, start_all
from arena.referee.match import play_game
from arena.referee.player import BotPlayer
from arena.referee.process import BotExited, BotProcess, LogBudget, open_bot_process
from arena.referee.sandbox import Sandbox

FAKE = Path(__file__).parent / "fake_bots"
HOSTILE = Path(__file__).parent / "hostile"
EXAMPLES = Path(__file__).resolve().parents[1] / "example_bots"
HANG_GUARD = 30.0
# Far longer than any of these bots needs when all is well; a bot that holds
# the referee off until a deadline fails the test instead.
AT_ONCE = 10.0
SMALL = BotLimits(memory_mb=64, cpu_seconds=5, file_size_mb=1, open_files=64)

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
trio_test = hang_guarded(HANG_GUARD)


def left(marker: str) -> list[str]:
    """What is alive of the test's processes; killed, so a failure leaves nothing behind."""
    found = live(marker)
    for line in found:
        try:
            os.kill(int(line.split(":")[0]), signal.SIGKILL)
        except ProcessLookupError:
            pass
    return found


@asynccontextmanager
async def tool(tmp_path: Path, *, limits: BotLimits | None = SMALL,
               sandbox: Sandbox | None = None, exit_wait: float = 5.0,
               ) -> AsyncIterator[BotProcess]:
    """lim_tool.py, copied into the test's folder (which every process then names)."""
    folder = tmp_path / "bot"
    folder.mkdir(exist_ok=True)
    shutil.copyfile(FAKE / "lim_tool.py", folder / "lim_tool.py")
    async with open_bot_process(
        resolve_bot(str(folder / "lim_tool.py")), scratch_dir=tmp_path / "scratch",
        log_path=tmp_path / "logs" / "tool.log", close_grace=0.5, exit_wait=exit_wait,
        limits=limits, sandbox=sandbox,
    ) as bot:
        yield bot


async def ask(bot: BotProcess, command: str) -> str:
    await bot.send_line(command)
    return await bot.read_line()


async def dies_at_once(bot: BotProcess) -> BotExited:
    """The next read ends in EOF well before any deadline a referee would set."""
    with trio.fail_after(AT_ONCE), pytest.raises(BotExited) as info:
        await bot.read_line()
    return info.value


sandboxes = pytest.mark.parametrize("sandboxed", [False, True], ids=["plain", "sandbox"])


def sandbox_for(sandboxed: bool, request: pytest.FixtureRequest) -> Sandbox | None:
    if not sandboxed:
        return None
    request.getfixturevalue("bwrap_works")
    return Sandbox()


# ------------------------------------------ 1. a limit kill leaves nothing behind


@sandboxes
@trio_test
async def test_a_limit_kill_leaves_no_process_and_is_seen_at_once(
        tmp_path: Path, sandboxed: bool, request: pytest.FixtureRequest) -> None:
    # A child in its own session forks children that start sessions of their own,
    # all holding the bot's stdout, until the watchdog finds it over 64 MB. The
    # forks go on while the bot is killed: those born after the watchdog's last
    # look used to survive (the keeper was killed with the group), holding the
    # referee off until its deadline.
    marker = str(tmp_path)
    try:
        async with tool(tmp_path, sandbox=sandbox_for(sandboxed, request)) as bot:
            await bot.send_line("storm 6")
            exited = await dies_at_once(bot)
            assert bot.limit_hit == "memory 64 MB"
            assert exited.returncode == -signal.SIGKILL
            assert "sent by arena" in bot.describe_exit()
            # The keeper reaped every process of the bot before it ended.
            assert live(marker) == []
    finally:
        assert left(marker) == []


# ------------------------ 5. closing stdout or stdin is seen at once, sandbox or not


@sandboxes
@trio_test
async def test_a_bot_that_closes_its_stdout_is_seen_at_once(
        tmp_path: Path, sandboxed: bool, request: pytest.FixtureRequest) -> None:
    marker = str(tmp_path)
    try:
        # exit_wait: how long a read at EOF waits for the exit status; it keeps running.
        async with tool(tmp_path, sandbox=sandbox_for(sandboxed, request),
                        exit_wait=0.1) as bot:
            assert await ask(bot, "echo hi") == "hi"
            await bot.send_line("close-stdout")
            exited = await dies_at_once(bot)
            assert "closed its output" in str(exited)
            assert exited.returncode is None  # it keeps running: the same either way
        assert live(marker) == []
    finally:
        assert left(marker) == []


@sandboxes
@trio_test
async def test_a_bot_that_closes_its_stdin_is_seen_at_once(
        tmp_path: Path, sandboxed: bool, request: pytest.FixtureRequest) -> None:
    marker = str(tmp_path)
    try:
        # exit_wait: how long a read at EOF waits for the exit status; it keeps running.
        async with tool(tmp_path, sandbox=sandbox_for(sandboxed, request),
                        exit_wait=0.1) as bot:
            assert await ask(bot, "echo hi") == "hi"
            await bot.send_line("close-stdin")
            # Once no process holds the read end, a write fails: the pipe (64 KiB)
            # fills up first only if something still holds it, as bwrap did.
            with trio.fail_after(AT_ONCE), pytest.raises(BotExited, match="stopped reading"):
                while True:
                    await bot.send_line("x" * 4000)
        assert live(marker) == []
    finally:
        assert left(marker) == []


# ------------------------------ 6. a write past the file size limit is named as such


@sandboxes
@trio_test
async def test_a_bot_that_dies_of_efbig_is_over_the_file_size_limit(
        tmp_path: Path, sandboxed: bool, request: pytest.FixtureRequest) -> None:
    # Python ignores SIGXFSZ: the write fails (EFBIG) and the bot dies of the
    # error with status 1, which used to read as a plain crash.
    async with tool(tmp_path, sandbox=sandbox_for(sandboxed, request)) as bot:
        await bot.send_line("write-die 4")
        exited = await dies_at_once(bot)
        assert exited.returncode == 1
        assert bot.limit_hit == "file size 1 MB"
    assert (tmp_path / "scratch" / "big").stat().st_size == 1 << 20
    assert left(str(tmp_path)) == []


@pytest.mark.usefixtures("bwrap_works")
@trio_test
async def test_a_sandboxed_bot_that_dies_of_efbig_in_its_tmp_is_over_the_limit(
        tmp_path: Path) -> None:
    # Its /tmp ends with it; the watchdog holds it open, from its first look at the
    # sandbox, to look inside afterwards.
    async with tool(tmp_path, sandbox=Sandbox()) as bot:
        watchdog = bot._guard.watchdog
        assert watchdog is not None
        while len(watchdog.tmpfs_folders()) < 2:
            await trio.sleep(0.01)
        await bot.send_line("write-die 4 /tmp/big")
        exited = await dies_at_once(bot)
        assert exited.returncode == 1
        assert bot.limit_hit == "file size 1 MB"
    assert left(str(tmp_path)) == []


@trio_test
async def test_a_crash_beside_an_old_full_file_is_only_a_crash(tmp_path: Path) -> None:
    # A file at the limit from before this process started says nothing of its end.
    (tmp_path / "scratch").mkdir()
    old = tmp_path / "scratch" / "old"
    old.write_bytes(b"\0" * (1 << 20))
    os.utime(old, (1, 1))
    async with tool(tmp_path) as bot:
        await bot.send_line("abort")
        await dies_at_once(bot)
        assert bot.returncode == -signal.SIGABRT
        assert bot.limit_hit is None
    assert left(str(tmp_path)) == []


# ------------------------------------ 7. CPU burnt between games counts against the next


@trio_test
async def test_cpu_burnt_between_games_is_charged_to_the_next_game(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    bots.mkdir()
    for name, source in (("spin_between", HOSTILE / "spin_between.py"),
                         ("random", EXAMPLES / "random.py")):
        shutil.copyfile(source, bots / f"{name}.py")
    specs = [resolve_bot(str(bots / "spin_between.py")), resolve_bot(str(bots / "random.py"))]
    limits = codec.Limits(startup_ms=5000, decision_ms=2000, bank_ms=1000, game_ms=60_000)
    options = {"limits": BotLimits(memory_mb=200, cpu_seconds=0.5)}
    config = GameConfig(2)
    try:
        async with open_lineup(limits=limits, process_options=options) as lineup:
            hosts = [lineup.host(spec, scratch_dir=tmp_path / "scratch" / spec.name,
                                 log_path=tmp_path / "logs" / f"{spec.name}.log")
                     for spec in specs]
            seats = await start_all(hosts)
            first = await play_game(seats, config, 1, limits)
            assert first.faults == (None, None)
            # Its child burns CPU while no game is on, until the watchdog ends it.
            spinner = seats[0]
            assert isinstance(spinner, BotPlayer)
            while spinner.process.limit_hit is None:
                await trio.sleep(0.01)
            second = await play_game(await start_all(hosts), config, 2, limits)
            fault = second.faults[0]
            assert fault is not None and fault.kind == "limit", second.faults
            assert fault.detail == "over its limit: cpu 0.5 s (between games)"
            assert second.faults[1] is None
            # And the game after that is a fresh start.
            third = await play_game(await start_all(hosts), config, 3, limits)
            assert third.faults == (None, None)
        assert live(str(bots)) == []
    finally:
        assert left(str(bots)) == []


# -------------------------------------- 8. an answer begun before its request


@trio_test
async def test_an_answer_begun_before_its_request_is_a_protocol_fault(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    bots.mkdir()
    shutil.copyfile(HOSTILE / "early_partial.py", bots / "early_partial.py")
    shutil.copyfile(EXAMPLES / "random.py", bots / "random.py")
    specs = [resolve_bot(str(bots / "early_partial.py")), resolve_bot(str(bots / "random.py"))]
    limits = codec.Limits(startup_ms=5000, decision_ms=2000, bank_ms=1000, game_ms=60_000)
    try:
        async with open_lineup(limits=limits, process_options={"limits": SMALL}) as lineup:
            hosts = [lineup.host(spec, scratch_dir=tmp_path / "scratch" / spec.name,
                                 log_path=tmp_path / "logs" / f"{spec.name}.log")
                     for spec in specs]
            report = await play_game(await start_all(hosts), GameConfig(2), 1, limits)
        fault = report.faults[0]
        assert fault is not None and fault.kind == "protocol", report.faults
        assert fault.detail.startswith("an answer begun before its request")
        assert fault.line == "1 " and fault.request is not None
        assert fault.request.startswith("request 1 ")
        assert report.faults[1] is None
        assert live(str(bots)) == []
    finally:
        assert left(str(bots)) == []


# ---------------------- 2. memory held in memfds and tmpfs files counts as memory

HOARD = BotLimits(memory_mb=64, cpu_seconds=5, file_size_mb=512, disk_mb=512)


async def over_limit(bot: BotProcess, command: str) -> list[str]:
    """Send ``command``; what the bot says before it is killed (bounded)."""
    said = []
    await bot.send_line(command)
    with trio.fail_after(AT_ONCE), pytest.raises(BotExited):
        while True:
            said.append(await bot.read_line())
    return said


@sandboxes
@trio_test
async def test_memory_in_a_memfd_counts(tmp_path: Path, sandboxed: bool,
                                        request: pytest.FixtureRequest) -> None:
    async with tool(tmp_path, limits=HOARD, sandbox=sandbox_for(sandboxed, request)) as bot:
        await over_limit(bot, "memfd 160")
        assert bot.limit_hit == "memory 64 MB"
    assert left(str(tmp_path)) == []


@trio_test
async def test_memory_in_a_held_file_of_the_host_s_dev_shm_counts(tmp_path: Path) -> None:
    # Without --sandbox only what the bot holds open can be told to be its own
    # (README: what runs without --sandbox).
    shm = Path("/dev/shm", f"arena-test-{os.getpid()}-{tmp_path.name}")
    try:
        async with tool(tmp_path, limits=HOARD) as bot:
            await over_limit(bot, f"hold {shm} 160")
            assert bot.limit_hit == "memory 64 MB"
        # It was seen holding it: the file is its own, and goes with it.
        assert not shm.exists()
    finally:
        shm.unlink(missing_ok=True)
    assert left(str(tmp_path)) == []


@pytest.mark.usefixtures("bwrap_works")
@pytest.mark.parametrize("folder", ["/tmp", "/dev/shm"])
@trio_test
async def test_memory_in_a_sandbox_s_tmpfs_counts(tmp_path: Path, folder: str) -> None:
    # Written and closed: only the tmpfs itself (private to the sandbox) shows it.
    async with tool(tmp_path, limits=HOARD, sandbox=Sandbox()) as bot:
        await over_limit(bot, f"put {folder}/hoard 160")
        assert bot.limit_hit == "memory 64 MB"
    assert left(str(tmp_path)) == []


def shm_keys() -> dict[int, int]:
    """The host's System V shared memory segments (in our IPC namespace): key: shmid."""
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return {int(line.split()[0]): int(line.split()[1]) for line in lines}


@pytest.fixture
def shm_key() -> Iterator[int]:
    """A key for a test's segments (it may use the next few too); what is left of
    them is removed after the test."""
    key = 0x4152_0000 + (os.getpid() & 0xFFF) * 16
    yield key
    for found, shmid in shm_keys().items():
        if key <= found < key + 16:
            subprocess.run(["ipcrm", "-m", str(shmid)], check=False)


@trio_test
async def test_memory_in_system_v_shared_memory_counts_and_goes_with_the_bot(
        tmp_path: Path, shm_key: int) -> None:
    # Filled and detached, segments are in no process's RSS and outlive it.
    async with tool(tmp_path, limits=HOARD) as bot:
        await over_limit(bot, f"shm {shm_key} 4 40")
        assert bot.limit_hit == "memory 64 MB"
    assert [key for key in shm_keys() if shm_key <= key < shm_key + 4] == []
    assert left(str(tmp_path)) == []


@pytest.mark.usefixtures("bwrap_works")
@trio_test
async def test_a_sandboxed_bot_s_shared_memory_stays_in_its_ipc_namespace(
        tmp_path: Path, shm_key: int) -> None:
    # Not counted inside the sandbox (README): its own IPC namespace ends with it.
    async with tool(tmp_path, limits=HOARD, sandbox=Sandbox()) as bot:
        assert await ask(bot, f"shm {shm_key} 2 8") == "shm 2"
        assert [key for key in shm_keys() if shm_key <= key < shm_key + 2] == []
    assert left(str(tmp_path)) == []


# ---------------------------------------------- 3. disk quota, scratch, stderr


@sandboxes
@trio_test
async def test_a_scratch_directory_over_the_disk_quota_is_a_limit(
        tmp_path: Path, sandboxed: bool, request: pytest.FixtureRequest) -> None:
    limits = BotLimits(memory_mb=256, file_size_mb=2, disk_mb=8)
    async with tool(tmp_path, limits=limits, sandbox=sandbox_for(sandboxed, request)) as bot:
        said = await over_limit(bot, f"fill {tmp_path / 'scratch'} 16")
        assert said in ([], ["filled 16"])
        assert bot.limit_hit == "disk 8 MB"
    assert left(str(tmp_path)) == []


@sandboxes
@trio_test
async def test_deleted_files_held_open_count_against_the_disk_quota(
        tmp_path: Path, sandboxed: bool, request: pytest.FixtureRequest) -> None:
    # Deleted, they are in no folder, but take the disk until closed.
    limits = BotLimits(memory_mb=256, file_size_mb=2, disk_mb=8)
    async with tool(tmp_path, limits=limits, sandbox=sandbox_for(sandboxed, request)) as bot:
        said = await over_limit(bot, f"unlinked {tmp_path / 'scratch'} 16")
        assert said in ([], ["unlinked 16"])
        assert bot.limit_hit == "disk 8 MB"
    assert left(str(tmp_path)) == []


@pytest.mark.usefixtures("bwrap_works")
@trio_test
async def test_a_sandbox_s_tmp_over_the_disk_quota_is_a_limit(tmp_path: Path) -> None:
    # /tmp is a tmpfs a megabyte bigger than the quota: the bot cannot go far
    # over, and going over is seen.
    limits = BotLimits(memory_mb=256, file_size_mb=2, disk_mb=8)
    async with tool(tmp_path, limits=limits, sandbox=Sandbox()) as bot:
        said = await over_limit(bot, "fill /tmp 16")
        assert said in ([], ["error ENOSPC"])
        assert bot.limit_hit == "disk 8 MB"
    assert left(str(tmp_path)) == []


# ----------------------------- processes and threads of the bot count together

# No memory limit: 64 forks of Python hold more RSS than any small one.
CROWD = BotLimits(memory_mb=None, cpu_seconds=10, file_size_mb=2, processes=16)


@sandboxes
@pytest.mark.parametrize("command", ["threads 64", "forks 64"])
@trio_test
async def test_a_bot_over_its_processes_is_killed_whole(
        tmp_path: Path, sandboxed: bool, command: str, request: pytest.FixtureRequest) -> None:
    # A red team held 3,000 threads with no fault; a fork or thread bomb would
    # starve the host.
    async with tool(tmp_path, limits=CROWD, sandbox=sandbox_for(sandboxed, request)) as bot:
        said = await over_limit(bot, command)
        assert said in ([], [command])
        assert bot.limit_hit == "processes 16"
    assert left(str(tmp_path)) == []


@sandboxes
@trio_test
async def test_a_bot_with_a_few_threads_is_within_the_default(
        tmp_path: Path, sandboxed: bool, request: pytest.FixtureRequest) -> None:
    async with tool(tmp_path, limits=BotLimits(),
                    sandbox=sandbox_for(sandboxed, request)) as bot:
        assert await ask(bot, "threads 4") == "threads 4"
        watchdog = bot._guard.watchdog
        assert watchdog is not None
        assert watchdog.sample() is None
        assert 5 <= watchdog.tasks <= 16  # the 4 and the main thread (and bwrap's two)
        assert await ask(bot, "echo still") == "still"
        assert bot.limit_hit is None
    assert left(str(tmp_path)) == []


@trio_test
async def test_a_bot_s_stderr_log_is_capped_across_its_restarts(tmp_path: Path) -> None:
    shutil.copyfile(HOSTILE / "stderr_crash.py", tmp_path / "stderr_crash.py")
    spec = resolve_bot(str(tmp_path / "stderr_crash.py"))
    log = tmp_path / "logs" / "stderr_crash.log"
    cap = 256 * 1024
    for _ in range(3):  # it crashes at every start, after 2 MiB of stderr
        async with open_bot_process(spec, scratch_dir=tmp_path / "scratch", log_path=log,
                                    log_cap=cap, limits=SMALL) as bot:
            with pytest.raises(BotExited):
                await bot.read_line()
    text = log.read_text()
    assert text.count(" started pid ") == 3
    assert len(text) < cap + 3 * 1024  # the cap, and a few lines of arena's per start
    assert left(str(tmp_path)) == []


@trio_test
async def test_a_bot_s_stderr_is_capped_per_run_across_its_logs(tmp_path: Path) -> None:
    # A tournament gives a bot one log per worker; the run's budget covers them all.
    shutil.copyfile(HOSTILE / "stderr_crash.py", tmp_path / "stderr_crash.py")
    spec = resolve_bot(str(tmp_path / "stderr_crash.py"))
    cap = 256 * 1024
    budget = LogBudget(cap)
    logs = [tmp_path / "logs" / f"stderr_crash.w{worker}.log" for worker in range(3)]
    for log in logs:
        async with open_bot_process(spec, scratch_dir=tmp_path / "scratch", log_path=log,
                                    log_cap=cap, log_budget=budget, limits=SMALL) as bot:
            with pytest.raises(BotExited):
                await bot.read_line()
    assert sum(log.stat().st_size for log in logs) < cap + 3 * 1024
    assert budget.left("stderr_crash") == 0
    assert left(str(tmp_path)) == []


@trio_test
async def test_scratch_directories_are_removed_after_the_run(tmp_path: Path) -> None:
    shutil.copyfile(EXAMPLES / "random.py", tmp_path / "random.py")
    spec = resolve_bot(str(tmp_path / "random.py"))
    scratch = tmp_path / "run" / "scratch" / "random"
    limits = codec.Limits(startup_ms=5000)
    async with open_lineup(limits=limits, process_options={"limits": SMALL}) as lineup:
        host = lineup.host(spec, scratch_dir=scratch, log_path=tmp_path / "random.log")
        await start_all([host])
        (scratch / "left-behind").write_bytes(b"x" * 1000)
    assert not scratch.exists() and not scratch.parent.exists()
    assert (tmp_path / "random.log").exists()  # the log is kept
    assert left(str(tmp_path)) == []


# ------------------------------------------------ 4. builds: keeper and sandbox

BUILD_SCRIPT = """\
import json, os, socket, sys, time
report = {}
def attempt(name, action):
    try:
        report[name] = action()
    except OSError as exc:
        report[name] = type(exc).__name__
attempt("shadow", lambda: open("/etc/shadow").read())
attempt("outside", lambda: open(sys.argv[1], "w").write("x"))
attempt("own", lambda: open("built", "w").write("x"))
attempt("net", lambda: socket.create_connection(("127.0.0.1", int(sys.argv[2])), 5) and "connected")
# A daemon: double fork, a session of its own, no stdio; it outlives the build.
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(3600)",
                                  "daemon", sys.argv[0]])
    os._exit(0)
os.wait()
open("report.json", "w").write(json.dumps(report))
"""


def build_folder(tmp_path: Path, port: int) -> Path:
    folder = tmp_path / "builder"
    folder.mkdir()
    (folder / "build.py").write_text(BUILD_SCRIPT)
    build = [sys.executable, "./build.py", str(tmp_path / "outside"), str(port)]
    (folder / "bot.toml").write_text(f'run = ["./bot"]\nbuild = {json.dumps(build)}\n')
    return folder


@pytest.fixture
def port() -> Iterator[int]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


def test_nothing_a_build_starts_outlives_it(tmp_path: Path, port: int) -> None:
    folder = build_folder(tmp_path, port)
    try:
        build_bot(resolve_bot(str(folder)))
        assert json.loads((folder / "report.json").read_text())["own"] == 1
        # The keeper killed the daemon before the build's end was reported.
        assert live(str(folder)) == []
    finally:
        assert left(str(folder)) == []


@pytest.mark.usefixtures("bwrap_works")
@pytest.mark.parametrize("network", [False, True], ids=["offline", "build-network"])
def test_a_sandboxed_build_writes_only_its_folder(tmp_path: Path, port: int,
                                                  network: bool) -> None:
    folder = build_folder(tmp_path, port)
    try:
        build_bot(resolve_bot(str(folder)), sandbox=Sandbox(), network=network)
        report = json.loads((folder / "report.json").read_text())
        assert report["own"] == 1 and (folder / "built").exists()
        assert report["shadow"] in ("", "PermissionError", "FileNotFoundError")
        # Refused, or written into the sandbox's own /tmp (the test's folder is
        # under /tmp): never on the host.
        assert not (tmp_path / "outside").exists(), report["outside"]
        assert report["net"] == ("connected" if network else "ConnectionRefusedError")
        assert live(str(folder)) == []
    finally:
        assert left(str(folder)) == []


@pytest.mark.usefixtures("bwrap_works")
def test_a_build_that_cannot_be_seen_in_the_sandbox_is_refused_in_one_line(
        tmp_path: Path) -> None:
    folder = tmp_path / "hidden"
    folder.mkdir()
    elsewhere = tmp_path / "elsewhere" / "make"
    (folder / "bot.toml").write_text(f'run = ["./bot"]\nbuild = ["{elsewhere}"]\n')
    with pytest.raises(BuildError, match="cannot start build command .*outside what the sandbox"):
        build_bot(resolve_bot(str(folder)), sandbox=Sandbox())


# ---------------------------- 15. python in a run, venvs, pyenv and conda, sandboxed

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv of the Python running the tests (on this machine, a pyenv one)."""
    folder = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(folder)], check=True, timeout=HANG_GUARD)
    return folder


def test_python3_in_a_run_is_arena_s_python(tmp_path: Path) -> None:
    folder = tmp_path / "pybot"
    folder.mkdir()
    (folder / "bot.py").write_text("")
    (folder / "bot.toml").write_text('run = ["python3", "-u", "bot.py"]\nbuild = ["python"]\n')
    spec = resolve_bot(str(folder))
    assert spec.argv[0] == sys.executable and spec.argv[1:] == ("-u", str(folder / "bot.py"))
    assert spec.build == (sys.executable,)


@pytest.mark.usefixtures("bwrap_works")
def test_a_sandboxed_folder_bot_runs_python3_from_arena_in_a_venv(tmp_path: Path,
                                                                    venv: Path) -> None:
    # arena itself runs from a venv (over pyenv, here); the bot says "python3",
    # which PATH finds as a pyenv shim that the sandbox does not show.
    folder = tmp_path / "bots" / "pybot"
    folder.mkdir(parents=True)
    shutil.copyfile(EXAMPLES / "random.py", folder / "bot.py")
    (folder / "bot.toml").write_text('run = ["python3", "-u", "bot.py"]\n')
    shutil.copyfile(EXAMPLES / "random.py", tmp_path / "bots" / "random.py")
    # A shim first on PATH, as pyenv's: outside what the sandbox shows.
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python3").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (shims / "python3").chmod(0o755)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PATH=f"{shims}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "arena", "play", str(folder),
         str(tmp_path / "bots" / "random.py"), "--sandbox", "--seed", "3", "--quiet",
         "--record", str(tmp_path / "game.json"), "--startup-time", "10"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "fault" not in done.stderr, done.stderr
    record = json.loads((tmp_path / "game.json").read_text())
    assert record["referee"]["faults"] == [None, None]
    assert left(str(tmp_path / "bots")) == []


@pytest.mark.usefixtures("bwrap_works")
@trio_test
async def test_a_bot_s_own_venv_python_runs_in_the_sandbox(tmp_path: Path, venv: Path) -> None:
    # The venv is neither the bot's folder nor arena's Python: it and its base
    # installation are shown read-only.
    folder = tmp_path / "bot"
    folder.mkdir()
    shutil.copyfile(FAKE / "lim_tool.py", folder / "lim_tool.py")
    python = venv / "bin" / "python"
    (folder / "bot.toml").write_text(f'run = ["{python}", "-u", "lim_tool.py"]\n')
    async with open_bot_process(resolve_bot(str(folder)), scratch_dir=tmp_path / "scratch",
                                log_path=tmp_path / "bot.log", limits=SMALL,
                                sandbox=Sandbox()) as bot:
        assert await ask(bot, "echo from the venv") == "from the venv"
    assert left(str(folder)) == []
