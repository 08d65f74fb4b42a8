"""``--sandbox``: what a bot inside bubblewrap can and cannot do, and that it ends.

Tests that run bots inside need a working bubblewrap and are skipped, with the
one-line reason ``check_sandbox`` gives, where there is none (or fail, when the
environment says ``ARENA_TEST_SANDBOX=require``, so CI cannot skip them quietly). The messages of
``check_sandbox`` itself are tested everywhere, with a fake ``bwrap``.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
import trio
from test_process import hang_guarded

from arena.protocol.codec import Limits, encode_game_over, encode_game_start, encode_handshake
from arena.referee.bots import BotSpec, build_bot, resolve_bot
from arena.referee.limits import BotLimits
from arena.referee.process import BotExited, BotProcess, BotStartError, open_bot_process
from arena.referee.sandbox import (
    Sandbox,
    SandboxError,
    SandboxUnavailable,
    check_sandbox,
    sandbox_argv,
)

ROOT = Path(__file__).resolve().parents[1]
FAKE = ROOT / "tests" / "fake_bots"
BOTS = ROOT / "example_bots"
HANG_GUARD = 20.0
SANDBOX = Sandbox()


@functools.cache
def _unavailable() -> str | None:
    try:
        check_sandbox()
    except SandboxUnavailable as exc:
        return str(exc)
    return None


@pytest.fixture
def bwrap_works() -> None:
    """Skip where bubblewrap cannot run; fail instead if ARENA_TEST_SANDBOX=require (CI)."""
    reason = _unavailable()
    if reason is not None:
        if os.environ.get("ARENA_TEST_SANDBOX") == "require":
            pytest.fail(reason)
        pytest.skip(reason)


trio_test = hang_guarded(HANG_GUARD)


def run_bot(
    spec: BotSpec, tmp_path: Path, *, sandbox: Sandbox | None = SANDBOX, **options: object
) -> AbstractAsyncContextManager[BotProcess]:
    options.setdefault("limits", BotLimits())
    return open_bot_process(
        spec,
        scratch_dir=tmp_path / "scratch",
        log_path=tmp_path / "logs" / f"{spec.name}.log",
        close_grace=0.5,
        exit_wait=5.0,
        sandbox=sandbox,
        **options,  # type: ignore[arg-type]
    )


def tool(tmp_path: Path, **options: object) -> AbstractAsyncContextManager[BotProcess]:
    return run_bot(resolve_bot(str(FAKE / "lim_tool.py")), tmp_path, **options)


async def ask(bot: BotProcess, command: str) -> str:
    await bot.send_line(command)
    return await bot.read_line()


def host_pids_running(marker: str) -> list[int]:
    """Host pids of live (not zombie) processes whose command line contains ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ")
            state = Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(name))
    return found


@pytest.fixture
def listener() -> Iterator[int]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


# ------------------------------------------------------------- isolation


@trio_test
async def test_no_network_inside(tmp_path: Path, listener: int, bwrap_works: None) -> None:
    # The same bot reaches the port from outside the sandbox, so the test is fair.
    async with tool(tmp_path / "out", sandbox=None) as bot:
        assert await ask(bot, f"connect {listener}") == "connected"
    async with tool(tmp_path / "in") as bot:
        assert await ask(bot, f"connect {listener}") in ("error ECONNREFUSED", "error ENETUNREACH")


@trio_test
async def test_sees_only_its_own_processes(tmp_path: Path, bwrap_works: None) -> None:
    referee = os.getpid()
    async with tool(tmp_path) as bot:
        fields = (await ask(bot, "pids")).split()
        own, pids = int(fields[1]), {int(p) for p in fields[3:]}
        # The namespace's init (bwrap) and the bot itself: nothing of the host.
        assert own in pids and len(pids) <= 2 and referee not in pids
        assert await ask(bot, f"signal {referee}") == "error ESRCH"
        assert await ask(bot, f"mem {referee}") == "error ENOENT"


@trio_test
async def test_has_no_capabilities_even_when_arena_is_root(
    tmp_path: Path, bwrap_works: None
) -> None:
    async with tool(tmp_path) as bot:
        assert await ask(bot, "status CapEff") == "0000000000000000"
        assert await ask(bot, "status CapBnd") == "0000000000000000"


@trio_test
async def test_writes_only_to_its_scratch_dir(tmp_path: Path, bwrap_works: None) -> None:
    spec = resolve_bot(str(FAKE / "lim_tool.py"))
    marker = f"arena-sandbox-test-{os.getpid()}-{id(tmp_path)}"
    outside = tmp_path / "outside"
    outside.mkdir()
    async with tool(tmp_path) as bot:
        assert await ask(bot, f"touch {tmp_path / 'scratch' / 'mine'}") == "written"
        assert await ask(bot, f"touch {spec.path}") == "error EROFS"  # its own file
        assert await ask(bot, "touch /evil") == "error EROFS"
        assert await ask(bot, "touch /usr/evil") == "error EROFS"
        assert await ask(bot, "touch /dev/evil") == "error EROFS"
        # Not shown at all: the rest of the host, other bots included.
        assert await ask(bot, f"touch {outside / 'evil'}") in ("error ENOENT", "error EROFS")
        assert await ask(bot, f"touch {BOTS / 'random.py'}") in ("error ENOENT", "error EROFS")
        # /tmp and /dev/shm are its own tmpfs, not the host's.
        assert await ask(bot, f"touch /tmp/{marker}") == "written"
        assert await ask(bot, f"touch /dev/shm/{marker}") == "written"
    assert (tmp_path / "scratch" / "mine").read_text() == "x"
    assert list(outside.iterdir()) == []
    assert not Path("/tmp", marker).exists()
    assert not Path("/dev/shm", marker).exists()


@trio_test
async def test_closing_kills_everything_inside(tmp_path: Path, bwrap_works: None) -> None:
    # A child in its own session inside; grace 0: bwrap is SIGKILLed at once.
    marker = f"{86000 + os.getpid() % 400}.{os.getpid()}"  # sleep's argument: unique
    async with tool(tmp_path) as bot:
        assert (await ask(bot, f"spawn-sleep {marker}")).startswith("child ")
        # Popen returns once exec has begun; the new command line shows a moment later.
        with trio.fail_after(5):
            while len(host_pids_running(f"sleep {marker}")) != 1:
                await trio.sleep(0.01)
        await bot.close(grace=0)
        assert host_pids_running(f"sleep {marker}") == []
        assert host_pids_running(str(FAKE / "lim_tool.py")) == []


@trio_test
async def test_limits_reach_inside_the_sandbox(tmp_path: Path, bwrap_works: None) -> None:
    async with tool(tmp_path, limits=BotLimits(memory_mb=64, file_size_mb=1)) as bot:
        assert await ask(bot, "limits") == f"core=0/0 fsize={1 << 20}/{1 << 20} nofile=256/256"
        await bot.send_line("alloc 512")
        with pytest.raises(BotExited):
            await bot.read_line()
        assert bot.limit_hit == "memory 64 MB"
    assert host_pids_running(str(FAKE / "lim_tool.py")) == []


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity")
@trio_test
async def test_cpu_pin_reaches_inside_the_sandbox(tmp_path: Path, bwrap_works: None) -> None:
    cpu = max(os.sched_getaffinity(0))
    async with tool(tmp_path, cpus=frozenset({cpu})) as bot:  # bwrap inherits the keeper's
        assert await ask(bot, "status Cpus_allowed_list") == str(cpu)


@trio_test
async def test_file_size_death_is_named_through_bwrap(tmp_path: Path, bwrap_works: None) -> None:
    spec = resolve_bot(str(FAKE / "lim_write.sh"))
    async with run_bot(spec, tmp_path, limits=BotLimits(file_size_mb=1)) as bot:
        await bot.send_line("go")
        with pytest.raises(BotExited):
            await bot.read_line()
        assert bot.returncode == 128 + signal.SIGXFSZ  # as bwrap reports it
        assert bot.limit_hit == "file size 1 MB"


# ------------------------------------------------------- the example bots


def _example(name: str, tmp_path: Path) -> BotSpec:
    if name == "c_bot":
        if shutil.which("cc") is None:
            pytest.skip("no C compiler (cc) on this machine")
        folder = tmp_path / "c_bot"
        shutil.copytree(BOTS / "c_bot", folder, ignore=shutil.ignore_patterns("bot"))
        spec = resolve_bot(str(folder))
        build_bot(spec, sandbox=SANDBOX)  # in a sandbox, as the referee does
        return spec
    if name.endswith(".js") and shutil.which("node") is None:
        pytest.skip("node is not installed on this machine")
    return resolve_bot(str(BOTS / name))


@pytest.mark.parametrize("name", ["random.py", "node_random.js", "bash_random.sh", "c_bot"])
def test_example_bot_plays_in_the_sandbox(name: str, tmp_path: Path, bwrap_works: None) -> None:
    spec = _example(name, tmp_path)

    @trio_test
    async def play() -> None:
        async with run_bot(spec, tmp_path) as bot:
            await bot.send_line(encode_handshake(Limits()))
            assert (await bot.read_line()).startswith("hello ")
            await bot.send_line(encode_game_start(1, 0, ["me", "you"], "ambassador"))
            await bot.send_line("request 1 action bank_ms=9000 actor=0 : income tax")
            assert await bot.read_line() in ("1 income", "1 tax")
            await bot.send_line(encode_game_over((1, 2)))
            await bot.send_line("quit")
            with pytest.raises(BotExited):
                await bot.read_line()
            assert bot.returncode == 0 and bot.limit_hit is None

    play()


# ---------------------------------------------------- the command lines


def test_program_outside_the_sandbox_is_refused(tmp_path: Path, bwrap_works: None) -> None:
    program = tmp_path / "elsewhere" / "bot"
    with pytest.raises(SandboxError, match="outside what the sandbox shows"):
        sandbox_argv([str(program)], bot_path=tmp_path / "bot.py", scratch_dir=tmp_path / "s")
    # Shown once it is among the read-only directories.
    argv = sandbox_argv(
        [str(program)],
        bot_path=tmp_path / "bot.py",
        scratch_dir=tmp_path / "s",
        sandbox=Sandbox(ro_binds=[program.parent]),
    )
    assert argv[-1] == str(program)


@trio_test
async def test_program_outside_the_sandbox_cannot_start(tmp_path: Path, bwrap_works: None) -> None:
    bot_dir = tmp_path / "bot"
    spec = BotSpec("hidden", bot_dir, (str(tmp_path / "elsewhere" / "bot"),), bot_dir)
    with pytest.raises(BotStartError, match="'hidden' cannot be started: .*outside what"):
        async with run_bot(spec, tmp_path):
            pass


def test_parents_are_bound_before_what_lies_inside_them(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    argv = sandbox_argv(
        ["/usr/bin/true"],
        bot_path=tmp_path / "bot",
        scratch_dir=tmp_path / "bot" / "scratch",
        bwrap=str(fake),
    )
    assert argv[0] == str(fake)
    for must in ("--unshare-all", "--die-with-parent", "--new-session", "--remount-ro"):
        assert must in argv
    order = [argv[i + 1] for i, arg in enumerate(argv) if arg in ("--bind", "--ro-bind", "--tmpfs")]
    assert order.index("/tmp") < order.index(str(tmp_path / "bot"))
    assert order.index(str(tmp_path / "bot")) < order.index(str(tmp_path / "bot" / "scratch"))
    assert argv[argv.index("--bind") + 1] == str(tmp_path / "bot" / "scratch")  # read-write


# ------------------------------------------------ when there is no sandbox


def _fake_bwrap(directory: Path, script: str) -> None:
    directory.mkdir()
    bwrap = directory / "bwrap"
    bwrap.write_text(f"#!/bin/sh\n{script}\n")
    bwrap.chmod(0o755)


def test_missing_bwrap_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(SandboxUnavailable) as info:
        check_sandbox()
    message = str(info.value)
    assert "\n" not in message
    assert "bwrap is not on PATH" in message and "apt-get install bubblewrap" in message


def test_bwrap_that_cannot_build_a_sandbox_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_bwrap(
        tmp_path / "bin",
        "echo 'bwrap: setting up uid map: Permission denied' >&2\nexit 1",
    )
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(SandboxUnavailable) as info:
        check_sandbox()
    message = str(info.value)
    assert "\n" not in message
    assert "cannot create a sandbox on this machine" in message
    assert "(bwrap: setting up uid map: Permission denied)" in message
    assert "namespaces" in message  # and what to enable


def test_check_really_runs_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A bwrap that "works" must have been run with a command to run inside.
    log = tmp_path / "args"
    _fake_bwrap(tmp_path / "bin", f'printf "%s\\n" "$@" > {log}\nexit 0')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    check_sandbox()
    args = log.read_text().splitlines()
    assert "--unshare-all" in args and args[args.index("--") + 1].endswith("true")


def test_python_of_arena_is_visible_inside(tmp_path: Path, bwrap_works: None) -> None:
    # .py bots run with the Python running arena, wherever it is installed.
    argv = sandbox_argv(
        [sys.executable, "-c", "print('inside')"], bot_path=tmp_path, scratch_dir=tmp_path
    )
    done = subprocess.run(argv, capture_output=True, text=True, timeout=HANG_GUARD)
    assert (done.returncode, done.stdout) == (0, "inside\n"), done.stderr
