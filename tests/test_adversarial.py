"""Hostile bots in real tournaments, and the referee killed in the middle of one.

Each bot of ``tests/hostile/`` misbehaves in one way; its docstring says how, and
``FAULTS`` below the fault it earns. They play in real tournaments (``arena run``
as a subprocess, through a wrapper that reports the referee's own peak memory)
next to the well-behaved example bots ``random.py`` and ``honest.py``:

* bots that misbehave in every process they start (crashes, bad output, a
  memory hog) share two tournaments: a game against an example bot always
  shows their fault, whatever the others do;
* bots whose faults cost a deadline or the referee's exit wait (hang, late,
  close_stdout, escape, deaf) each play alone with the two example bots, in five
  small tournaments run at the same time, and all but deaf misbehave only once
  per scratch directory. Alone, because two bots that fault at the same request
  end the game with the first one's fault in seat order, and the second one's is
  never recorded: a bot that misbehaves once could then show no fault at all;
* the cheats (snoop, lister, net, writer) play under ``--sandbox``, where they
  must learn nothing, and without it, where the same cheats must work (else the
  sandbox test would prove nothing); close_stdout and deaf play there too, and
  earn the same fault as without it (bubblewrap once held their pipes open).

For every tournament: it ends with status 0; every pair plays its 2 games, once
each; every fault is charged to the hostile bot whose behaviour earns it, and is
of that kind; the example bots have none; no process of the run is left (the
bots are copies in a folder of the test's own, so that a concurrent run of the
suite cannot be mistaken for a leftover; keepers and sandboxes name the bot in
their command lines too); and the referee's peak memory (``VmHWM`` of the
arena process, written by the wrapper as it exits) stays under
``MEMORY_BOUND_MB``, 64 MiB floods included.  Not ``ru_maxrss``: a child
started by vfork and exec reports at least its parent's size there (the
pytest process, larger with every test module it imports).

The keeper (``arena/referee/launch.py``) is tested on its own below, and by
``test_kill_9_of_the_referee_leaves_no_bot_and_the_rerun_completes``.

Small limits: 0.5 s per decision (5 s for the crashers, see ``GROUPS``), a 1 s
bank, 3 s to start, 200 MB of memory.
Every wait polls a condition under a deadline that is never reached when all
is well.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import trio

from arena.referee.bots import BotSpec
from arena.referee.limits import BotLimits, launcher_argv
from arena.referee.process import open_bot_process
from arena.referee.sandbox import SandboxUnavailable, check_sandbox

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "hostile"
EXAMPLES = ROOT / "example_bots"
GOOD = ("random", "honest")

CONCURRENCY = 2
# --allow-broken: a bot that fails at start-up must not stop these runs before
# their games (arena run checks every bot first); here it forfeits them.
OPTIONS = ("--games", "2", "--seed", "1", "--concurrency", str(CONCURRENCY),
           "--decision-time", "0.5", "--time-bank", "1", "--startup-time", "3",
           "--memory-mb", "200", "--allow-broken")
# The referee alone peaks at about 33 MB here, whatever its bots do; one 64 MiB
# flood held in memory would take it near 100 MB.
MEMORY_BOUND_MB = 80
LOG_CAP = 1 << 20  # arena's stderr cap per bot log (process.DEFAULT_LOG_CAP)
DEADLINE = 120.0  # bounds every wait on arena; never reached when all is well
GONE_WAIT = 5.0  # SIGKILL is asynchronous: how long killed processes may take to go

# How arena is run: in-process main(), then the peak memory of this process (kB).
WRAPPER = """\
import sys
from arena.cli import main
try:
    status = main(sys.argv[2:])
finally:
    with open("/proc/self/status") as status_file:
        peak = next(line.split()[1] for line in status_file if line.startswith("VmHWM:"))
    with open(sys.argv[1], "w") as f:
        f.write(peak)
sys.exit(status)
"""


def _first(fault: dict) -> bool:
    return fault["request"].startswith("request 1 ")


def _second(fault: dict) -> bool:
    return fault["request"].startswith("request 2 ")


TIMEOUT_1500 = "no answer within 1500 ms (500 ms + bank 1000 ms)"
# bot -> the fault kind it earns (None: it plays within the rules), and a check of
# the fault's evidence.
FAULTS: dict[str, tuple[str | None, Callable[[dict], bool]]] = {
    "hang": ("timeout", lambda f: _first(f) and f["detail"] == TIMEOUT_1500),
    "late": ("timeout", lambda f: _first(f) and f["detail"] == TIMEOUT_1500),
    "escape": ("timeout", lambda f: _first(f) and f["detail"] == TIMEOUT_1500),
    "close_stdout": ("crash", lambda f: _first(f) and f["detail"].endswith(
        "closed its output (still running)")),
    "deaf": ("crash", lambda f: _second(f) and "stopped reading its input" in f["detail"]),
    "crash_start": ("crash", lambda f: f["request"] == "handshake"
                    and "(exited with status 1)" in f["detail"]),
    "crash_mid": ("crash", lambda f: _second(f) and f["exit"] == "exited with status 1"),
    "exit_mid": ("crash", lambda f: _second(f) and f["exit"] == "exited with status 0"),
    "memory_hog": ("limit", lambda f: f["detail"].startswith("over its limit: memory 200 MB")
                   and f["exit"] == "killed by signal 9 (SIGKILL), sent by arena"),
    "garbage": ("malformed", lambda f: f["detail"] == "a line that is not UTF-8"
                and "junk" in f["line"]),
    "long_line": ("malformed", lambda f: f["detail"]
                  == "a line longer than 256 bytes (its first 200 bytes are quoted)"),
    "many_lines": ("protocol", lambda f: f["line"] == "0 income"
                   and f["detail"].startswith("a line while no request is open")),
    "twice": ("protocol", lambda f: _second(f) and f["line"].startswith("1 ")
              and f["detail"].startswith("a line while no request is open")),
    "early": ("protocol", lambda f: _first(f) and f["line"] == "1 income"
              and f["detail"].startswith("a line while no request is open")),
    "stderr_flood": (None, lambda f: False),
    "snoop": (None, lambda f: False),
    "lister": (None, lambda f: False),
    "net": (None, lambda f: False),
    "writer": (None, lambda f: False),
    "random": (None, lambda f: False),
    "honest": (None, lambda f: False),
}
# Bots that misbehave once per scratch directory (the others in every process).
ONCE = {"hang", "late", "close_stdout", "escape"}
ALONE = ("hang", "late", "close_stdout", "deaf", "escape")
GROUPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {  # group -> (bots, options)
    # memory_hog must fill 200 MB before its deadline, or it earns a timeout: about
    # 0.1 s of CPU, which a loaded 2-core machine can stretch past 1.5 s. Nothing
    # of this group is about time, so it gets 5 s per decision.
    "crashers": (("crash_start", "crash_mid", "exit_mid", "memory_hog"),
                 ("--decision-time", "5")),
    "talkers": (("garbage", "long_line", "many_lines", "stderr_flood", "twice", "early"), ()),
    **{bot: ((bot,), ()) for bot in ALONE},
    "spies": (("snoop", "lister", "net", "writer"), ()),
    # close_stdout and deaf: the same fault as without the sandbox, at once.
    "sandboxed": (("snoop", "lister", "net", "writer", "escape", "close_stdout", "deaf"),
                  ("--sandbox",)),
}
MISBEHAVING = [bot for bot, (kind, _) in FAULTS.items() if kind is not None] + ["stderr_flood"]
GROUP_OF = {bot: group for group, (bots, _) in GROUPS.items() for bot in bots
            if group not in ("spies", "sandboxed")}

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


# ------------------------------------------------------------------ helpers


def live_processes(marker: str) -> list[str]:
    """Command lines of the live processes (zombies do not count) that contain ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path("/proc", name, "cmdline").read_bytes().replace(b"\0", b" ")
            state = Path("/proc", name, "stat").read_bytes().rpartition(b")")[2].split()[0]
        except (OSError, IndexError):
            continue  # gone meanwhile
        if marker.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(f"{name}: {cmdline.decode(errors='replace')}")
    return found


def wait_until(condition: Callable[[], bool], what: str, deadline: float = DEADLINE,
               proc: subprocess.Popen | None = None) -> None:
    """Poll for a condition with a bounded deadline (synchronisation, not a fixed sleep)."""
    end = time.monotonic() + deadline
    while not condition():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"arena exited ({proc.returncode}) before {what}")
        if time.monotonic() > end:
            pytest.fail(f"gave up after {deadline} s waiting for {what}")
        time.sleep(0.005)


def leftovers(marker: str) -> list[str]:
    """What is still running of a run after it ended, given GONE_WAIT to die.

    Whatever is found is reported, then killed, so that a failure leaves nothing
    behind on the machine.
    """
    end = time.monotonic() + GONE_WAIT
    while (left := live_processes(marker)) and time.monotonic() < end:
        time.sleep(0.01)
    for line in left:
        try:
            os.kill(int(line.split(":")[0]), signal.SIGKILL)
        except ProcessLookupError:
            pass
    return left


def pid_alive(pid: int, marker: str) -> bool:
    """Whether ``pid`` still runs the program named by ``marker`` (not a reused pid)."""
    return any(line.startswith(f"{pid}: ") for line in live_processes(marker))


def lines_of(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def table(game: dict) -> str:
    return game["group"].split("#")[0]


@functools.cache
def _sandbox_unavailable() -> str | None:
    try:
        check_sandbox()
    except SandboxUnavailable as exc:
        return str(exc)
    return None


def need_sandbox() -> None:
    """Skip where bubblewrap cannot run; fail instead if ARENA_TEST_SANDBOX=require (CI)."""
    reason = _sandbox_unavailable()
    if reason is not None:
        if os.environ.get("ARENA_TEST_SANDBOX") == "require":
            pytest.fail(reason)
        pytest.skip(reason)


# ------------------------------------------------------------- tournaments


@attrs.frozen
class Run:
    """A finished tournament: what the checks need."""

    name: str
    folder: Path  # --out
    bots: Path  # the copies of the bots: every process of the run names this folder
    names: tuple[str, ...]
    status: int
    stderr: str
    games: list[dict]
    peak_mb: float  # the referee's own peak resident memory
    left: list[str]  # processes of the run still alive after it ended
    seconds: float

    def logs(self, bot: str) -> list[str]:
        return [p.read_text(errors="replace") for p in sorted(self.folder.glob(f"logs/{bot}.*"))]

    def report(self, bot: str, tag: str) -> list[Any]:
        """The JSON (or text) each process of a cheat wrote on stderr after ``tag:``."""
        found = []
        for log in self.logs(bot):
            for line in log.splitlines():
                if line.startswith(f"{tag}: "):
                    text = line[len(tag) + 2:]
                    found.append(json.loads(text) if text.startswith("{") else text)
        return found


class Tournaments:
    """Each group's tournament, run once for the module, when a test first needs it.

    The five bots in ALONE play their small tournaments at the same time: they
    spend most of it waiting for a deadline.
    """

    def __init__(self, base: Path, secret: str, ports: dict[str, int]) -> None:
        self.base = base
        self.secret = secret
        self.ports = ports  # group -> the port its net cheat tries
        self._done: dict[str, Run] = {}

    def get(self, group: str) -> Run:
        if group not in self._done:
            if group in ALONE:
                started = [self._start(name) for name in ALONE]
                for handle in started:
                    run = self._finish(*handle)
                    self._done[run.name] = run
            else:
                if "--sandbox" in GROUPS[group][1]:
                    need_sandbox()
                self._done[group] = self._finish(*self._start(group))
        return self._done[group]

    def _start(self, group: str) -> tuple[str, tuple[str, ...], Path, subprocess.Popen, float]:
        hostile, options = GROUPS[group]
        folder = self.base / group
        bots = folder / "bots"
        bots.mkdir(parents=True)
        args = []
        for name in (*GOOD, *hostile):
            if name in GOOD:
                shutil.copyfile(EXAMPLES / f"{name}.py", bots / f"{name}.py")
                args.append(str(bots / f"{name}.py"))
            elif name == "net":  # a folder bot, to be given the port to connect to
                (bots / "net").mkdir()
                shutil.copyfile(HOSTILE / "net.py", bots / "net" / "net.py")
                run = [sys.executable, "-u", "./net.py", str(self.ports[group])]
                (bots / "net" / "bot.toml").write_text(f"run = {json.dumps(run)}\n")
                args.append(str(bots / "net"))
            else:
                shutil.copyfile(HOSTILE / f"{name}.py", bots / f"{name}.py")
                args.append(str(bots / f"{name}.py"))
        # The secret is in the referee's environment and command line, and
        # nowhere a bot is meant to see: the cheats look for it.
        argv = [sys.executable, "-c", WRAPPER, str(folder / f"referee-{self.secret}.peak"),
                "run", *args, *OPTIONS, *options, "--out", str(folder / "out")]
        env = dict(os.environ, ARENA_TEST_SECRET=self.secret)
        with open(folder / "stderr.txt", "wb") as err:
            proc = subprocess.Popen(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=err)
        return group, (*GOOD, *hostile), folder, proc, time.monotonic()

    def _finish(self, group: str, names: tuple[str, ...], folder: Path,
                proc: subprocess.Popen, started: float) -> Run:
        try:
            status = proc.wait(timeout=DEADLINE)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        seconds = time.monotonic() - started
        out = folder / "out"
        games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
        peak = folder / f"referee-{self.secret}.peak"
        return Run(group, out, folder / "bots", names, status,
                   (folder / "stderr.txt").read_text(errors="replace"), games,
                   int(peak.read_text()) / 1024 if peak.exists() else float("inf"),
                   leftovers(str(folder / "bots")), seconds)


@pytest.fixture(scope="module")
def listeners() -> Iterator[dict[str, socket.socket]]:
    """Ports on the host's 127.0.0.1 that the net cheat tries to reach, one per run."""
    with socket.socket() as outside, socket.socket() as inside:
        for server in (outside, inside):
            server.bind(("127.0.0.1", 0))
            server.listen(16)
            server.setblocking(False)
        yield {"spies": outside, "sandboxed": inside}


@pytest.fixture(scope="module")
def secret() -> str:
    return "s" + secrets.token_hex(10)


@pytest.fixture(scope="module")
def tournaments(tmp_path_factory: pytest.TempPathFactory, secret: str,
                listeners: dict[str, socket.socket]) -> Iterator[Tournaments]:
    base = tmp_path_factory.mktemp("adversarial")
    yield Tournaments(base, secret,
                      {group: server.getsockname()[1] for group, server in listeners.items()})
    for group in ("spies", "sandboxed"):  # what the writer cheat left in the host's /tmp
        tag = hashlib.sha1(str(base / group / "bots").encode()).hexdigest()[:12]
        Path(f"/tmp/arena-writer-{tag}").unlink(missing_ok=True)


def accepted(server: socket.socket) -> list[bytes]:
    """What the connections made to the listener so far said."""
    said = []
    while True:
        try:
            conn, _ = server.accept()
        except BlockingIOError:
            return said
        with conn:
            conn.settimeout(5)
            said.append(conn.recv(100))


# ------------------------------------------------- the tournaments survive


@pytest.mark.parametrize("group", list(GROUPS))
def test_the_tournament_survives_its_hostile_bots(tournaments: Tournaments, group: str) -> None:
    run = tournaments.get(group)
    assert run.status == 0, run.stderr
    # Every pair played its 2 games (one deal, seats swapped), each once.
    pairs = {"|".join(pair): 2 for pair in itertools.combinations(sorted(run.names), 2)}
    assert Counter(table(g) for g in run.games) == pairs
    assert len({(g["group"], g["index"]) for g in run.games}) == len(run.games)
    for game in run.games:
        assert sorted(game["placements"]) in ([1, 2], [1, 1]), game
        for name, fault in zip(game["seats"], game["faults"], strict=True):
            if fault is not None:
                # Charged to a hostile bot, and the kind its behaviour earns: never
                # to an example bot (FAULTS gives them None).
                assert fault["kind"] == FAULTS[name][0], (name, fault)
        if [f is None for f in game["faults"]].count(False) == 1:
            winner = game["faults"].index(None)
            assert game["placements"][winner] == 1, game  # the other bot won
    # The example bots' own games are plain games.
    theirs = [g for g in run.games if sorted(g["seats"]) == sorted(GOOD)]
    assert len(theirs) == 2 and all(g["faults"] == [None, None] for g in theirs)
    assert all(g["turns"] > 0 for g in theirs)
    assert run.left == [], "processes of the run are still running"
    assert run.peak_mb < MEMORY_BOUND_MB, f"the referee peaked at {run.peak_mb:.1f} MB"


@pytest.mark.parametrize("bot", MISBEHAVING)
def test_each_fault_is_classified_and_charged_to_its_bot(tournaments: Tournaments,
                                                         bot: str) -> None:
    run = tournaments.get(GROUP_OF[bot])
    kind, evidence = FAULTS[bot]
    games = [(g, g["faults"][g["seats"].index(bot)]) for g in run.games if bot in g["seats"]]
    faults = [fault for _, fault in games if fault is not None]
    assert all(fault["kind"] == kind for fault in faults), faults
    bad = [fault for fault in faults if not evidence(fault)]
    assert bad == [], "the faults do not say what the bot did"
    if kind is None:
        assert faults == []
    elif bot in ONCE:
        # Once per scratch directory, i.e. per worker that started it.
        assert 1 <= len(faults) <= CONCURRENCY, games
    else:
        # Against an example bot, every game shows it.
        against_good = [fault for g, fault in games if set(g["seats"]) & set(GOOD)]
        assert len(against_good) == 2 * len(GOOD)
        assert all(fault is not None for fault in against_good), games


def test_a_stderr_flood_is_cut_at_the_cap_and_costs_nothing(tournaments: Tournaments) -> None:
    run = tournaments.get(GROUP_OF["stderr_flood"])
    logs = run.logs("stderr_flood")
    assert logs
    for log in logs:
        starts = log.count(" started pid ")
        assert starts >= 1
        assert log.count(f"[arena: log cut at {LOG_CAP} bytes]") == starts
        # The cap is per log, not per start: it holds and each start adds a few
        # lines of its own, not its 64 MiB.
        assert len(log) < LOG_CAP + starts * 4096


def test_a_crash_leaves_its_last_words_in_the_log(tournaments: Tournaments) -> None:
    run = tournaments.get(GROUP_OF["crash_mid"])
    assert any("RuntimeError: crash_mid: crashing on purpose" in log
               for log in run.logs("crash_mid"))
    assert any("crash_start: dying at start on purpose" in log
               for log in run.logs("crash_start"))


def test_children_that_left_the_session_are_gone_with_the_bot(tournaments: Tournaments) -> None:
    run = tournaments.get("escape")
    sleepers = [tuple(map(int, line.split()[1:]))
                for log in run.logs("escape") for line in log.splitlines()
                if line.startswith("sleeper ")]
    # The bot's session is the one its keeper leads: the pid each start logs.
    sessions = {int(line.split(" started pid ")[1].split(":")[0])
                for log in run.logs("escape") for line in log.splitlines()
                if " started pid " in line}
    # Two sleepers per start (the setsid child and the daemon), each in a session
    # of its own: out of reach of a kill of the bot's process group.
    assert len(sessions) >= 2 and len(sleepers) == 2 * len(sessions)
    assert not {sid for _, sid in sleepers} & sessions
    assert not any(pid_alive(pid, str(run.bots)) for pid, _ in sleepers)


# ------------------------------------------------------------- the cheats


def _host_side_writes(report: dict[str, str], scratch: Path) -> dict[str, bool]:
    """Which of the writer's targets exist on the host (its own file: was it changed)."""
    return {path: Path(path).exists() for path in report if not path.endswith("writer.py")
            and Path(path).parent != scratch}


@pytest.mark.parametrize("cheat", ["snoop", "lister", "net", "writer"])
def test_a_sandboxed_cheat_learns_nothing(tournaments: Tournaments,
                                         listeners: dict[str, socket.socket],
                                         secret: str, cheat: str) -> None:
    # Without --sandbox the same cheat works: the test can tell.
    open_run = tournaments.get("spies")
    sandboxed = tournaments.get("sandboxed")
    for run in (open_run, sandboxed):
        starts = sum(log.count(" started pid ") for log in run.logs(cheat))
        assert starts >= 1
        assert len(run.report(cheat, cheat)) == starts  # one report per process
        assert all(fault is None for g in run.games for name, fault
                   in zip(g["seats"], g["faults"], strict=True) if name == cheat)
    outside, inside = open_run.report(cheat, cheat), sandboxed.report(cheat, cheat)

    if cheat == "snoop":  # the referee's environment and memory, via /proc
        assert all(r["secrets"] == [secret] for r in outside), outside
        for r in inside:
            assert r["secrets"] == [], r
            assert r["chain"] == [1]  # its parent is the sandbox's init, then nothing
    elif cheat == "lister":  # other processes and their command lines
        assert all(secret in json.dumps(r) for r in outside)
        for r in inside:
            assert secret not in json.dumps(r)
            assert str(r["me"]) in r["processes"] and len(r["processes"]) <= 3, r
    elif cheat == "net":  # a port of the host's 127.0.0.1
        assert outside and all(r == "connected" for r in outside)
        said = accepted(listeners["spies"])
        assert len(said) == len(outside) and all(s.startswith(b"net ") for s in said)
        assert inside and all(r in ("ECONNREFUSED", "ENETUNREACH") for r in inside), inside
        assert accepted(listeners["sandboxed"]) == []
    else:  # writing outside its scratch directory, checked on the host
        for reports in (outside, inside):
            for r in reports:
                mine = [p for p in r if p.endswith("/mine")]
                assert len(mine) == 1 and r[mine[0]] == "written"  # it can write at all
        wrote = [_host_side_writes(r, Path(p).parent) for r in outside
                 for p in r if p.endswith("/mine")]
        assert all(w and all(w.values()) for w in wrote), wrote
        assert all(r[p] == "written" for r in outside for p in r if p.endswith("writer.py"))
        for r in inside:
            scratch = Path(next(p for p in r if p.endswith("/mine"))).parent
            host = _host_side_writes(r, scratch)
            assert len(host) == 3 and not any(host.values()), host
            own = next(p for p in r if p.endswith("writer.py"))
            assert r[own] in ("EROFS", "EACCES"), r


# -------------------------------------------------------------- the keeper


def _keeper(program: list[str], *, status_write: int | None = None,
            **options: Any) -> subprocess.Popen:
    argv = [*launcher_argv(BotLimits(), status_fd=status_write), *program]
    return subprocess.Popen(argv, start_new_session=True, text=True,
                            pass_fds=() if status_write is None else (status_write,), **options)


ECHO_BOT = """\
import os, sys, time
for line in sys.stdin:
    if line.startswith("orphan"):
        # A grandchild whose parent (our child) ends: an orphan, in its own session.
        r, w = os.pipe()
        child = os.fork()
        if child == 0:
            parent = os.getpid()
            if os.fork() == 0:
                os.setsid()
                while os.getppid() == parent:
                    time.sleep(0.001)
                os.write(w, f"{os.getpid()} {os.getppid()}".encode())
                os._exit(0)
            os._exit(0)
        os.waitpid(child, 0)
        print(os.read(r, 100).decode(), flush=True)
    elif line.startswith("sleeper "):
        import subprocess
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)",
                              line.split()[1]], start_new_session=True)
        print(p.pid, flush=True)
    else:
        print(line.strip(), flush=True)
"""


def test_keeper_outlives_the_thread_that_started_it_and_adopts_orphans(tmp_path: Path) -> None:
    # trio starts bots from worker threads, which end when idle, and the kernel
    # sends the "parent died" signal when the thread that forked the keeper ends.
    # The keeper must tell that from the referee's death (bwrap's
    # --die-with-parent could not, and took sandboxed bots down with the thread).
    started: list[subprocess.Popen] = []
    thread = threading.Thread(target=lambda: started.append(_keeper(
        [sys.executable, "-c", ECHO_BOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE)))
    thread.start()
    thread.join()
    keeper = started[0]
    assert keeper.stdin is not None and keeper.stdout is not None
    try:
        keeper.stdin.write("ready\n")
        keeper.stdin.flush()
        assert keeper.stdout.readline() == "ready\n"  # the keeper has armed its signal
        tid = thread.native_id
        wait_until(lambda: not Path(f"/proc/self/task/{tid}").exists(), "the thread to end")
        # The signal was sent as the thread ended. An orphan's end (a SIGCHLD) is
        # seen by the keeper after it: once the keeper has reaped the orphan, it
        # has made up its mind about the signal, and the bot must still answer.
        keeper.stdin.write("orphan\n")
        keeper.stdin.flush()
        orphan, adopter = map(int, keeper.stdout.readline().split())
        assert adopter == keeper.pid  # the keeper is a subreaper: the orphan is its child
        wait_until(lambda: not Path(f"/proc/{orphan}").exists(), "the keeper to reap the orphan")
        keeper.stdin.write("still here\n")
        keeper.stdin.flush()
        assert keeper.stdout.readline() == "still here\n"
        assert keeper.poll() is None
    finally:
        keeper.kill()
        keeper.wait()


def test_keeper_kills_everything_on_sigterm_and_dies_of_it(tmp_path: Path) -> None:
    keeper = _keeper([sys.executable, "-c", ECHO_BOT], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE)
    assert keeper.stdin is not None and keeper.stdout is not None
    marker = f"arena-adversarial-{secrets.token_hex(6)}"
    try:
        keeper.stdin.write(f"sleeper {marker}\n")
        keeper.stdin.flush()
        sleeper = int(keeper.stdout.readline())
        assert os.getsid(sleeper) == sleeper  # its own session: killpg would miss it
        keeper.send_signal(signal.SIGTERM)
        assert keeper.wait(timeout=DEADLINE) == -signal.SIGTERM
        # The keeper reaps everything before it ends: not even a zombie is left.
        assert not Path(f"/proc/{sleeper}").exists()
        assert live_processes(marker) == []
    finally:
        keeper.kill()
        keeper.wait()
        for line in live_processes(marker):
            os.kill(int(line.split(":")[0]), signal.SIGKILL)


@pytest.mark.parametrize(("script", "returncode"), [
    ("exit 7", 7),
    ("kill -USR1 $$", -signal.SIGUSR1),
    ("kill -TERM $$", -signal.SIGTERM),
])
def test_keeper_ends_as_the_bot_ended(script: str, returncode: int) -> None:
    keeper = _keeper(["sh", "-c", script])
    assert keeper.wait(timeout=DEADLINE) == returncode


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


def test_the_keeper_s_memory_is_not_counted_as_the_bot_s(tmp_path: Path) -> None:
    # The keeper (about 10 MB resident) leads the bot's process group; cat has
    # a few MB. Only cat counts towards the bot's memory limit.
    async def main() -> tuple[float, float, float]:
        spec = BotSpec("cat", tmp_path, ("cat",), tmp_path)
        with trio.fail_after(DEADLINE):
            async with open_bot_process(spec, scratch_dir=tmp_path / "s",
                                        log_path=tmp_path / "cat.log",
                                        limits=BotLimits(memory_mb=64)) as bot:
                await bot.send_line("hello")
                assert await bot.read_line() == "hello"
                (cat,) = (int(p) for p in Path(f"/proc/{bot.pid}/task/{bot.pid}/children")
                          .read_text().split())
                while not bot.memory_peak:  # until the watchdog's first look
                    await trio.sleep(0.01)
                return _rss_mb(bot.pid), _rss_mb(cat), bot.memory_peak / (1 << 20)

    keeper, cat, counted = trio.run(main)
    assert keeper > 2 * cat, "the keeper is too small for this test to tell"
    assert counted < cat + keeper / 2


def test_keeper_starts_nothing_for_a_referee_that_died_before_it_could_watch(
        tmp_path: Path) -> None:
    # The referee's end of the status pipe is closed: it died before the keeper
    # asked to be told (PR_SET_PDEATHSIG), so nobody would ever stop the bot.
    status_read, status_write = os.pipe()
    os.close(status_read)
    try:
        keeper = _keeper(["touch", str(tmp_path / "started")], status_write=status_write)
    finally:
        os.close(status_write)
    assert keeper.wait(timeout=DEADLINE) == 1
    assert not (tmp_path / "started").exists()


# ---------------------------------------------------------- the referee dies


def test_kill_9_of_the_referee_leaves_no_bot_and_the_rerun_completes(tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    bots.mkdir()
    shutil.copyfile(HOSTILE / "stubborn.py", bots / "stubborn.py")
    for name in GOOD:
        shutil.copyfile(EXAMPLES / f"{name}.py", bots / f"{name}.py")
    out = tmp_path / "out"
    games = 40  # 3 pairs: 120 games
    names = ("stubborn", *GOOD)
    argv = [sys.executable, "-m", "arena", "run", *(str(bots / f"{n}.py") for n in names),
            "--games", str(games), "--seed", "5", "--concurrency", "2",
            "--decision-time", "0.5", "--time-bank", "1", "--startup-time", "3",
            "--memory-mb", "200", "--out", str(out)]
    with open(tmp_path / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(argv, cwd=tmp_path, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        # Until some games are stored and stubborn's child (own session) runs.
        wait_until(lambda: lines_of(out / "games.jsonl") >= 5
                   and bool(live_processes(f"{bots / 'stubborn.py'} child")),
                   "games and stubborn's child", proc=proc)
        assert live_processes(str(bots / "random.py"))
        os.kill(proc.pid, signal.SIGKILL)  # arena only, not its process group
        assert proc.wait(timeout=DEADLINE) == -signal.SIGKILL
        played = lines_of(out / "games.jsonl")
        assert 5 <= played < 3 * games, "the run ended before it was killed"
        # Nobody closed the bots' pipes politely, and stubborn ignores EOF,
        # SIGTERM, SIGHUP and SIGPIPE: only the keepers, told by the kernel, end them.
        wait_until(lambda: not live_processes(str(bots)), "every process of the run to end",
                   deadline=10.0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        leftovers(str(bots))  # after a failure, kill what is left
    kept = (out / "games.jsonl").read_bytes().splitlines(keepends=True)

    done = subprocess.run(argv, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    final = (out / "games.jsonl").read_bytes().splitlines(keepends=True)
    complete = [line for line in kept if line.endswith(b"\n")]
    assert final[: len(complete)] == complete  # what was played before is kept as it was
    lines = [json.loads(line) for line in final]
    assert len(lines) == 3 * games
    assert len({(g["group"], g["index"]) for g in lines}) == 3 * games, "a game was played twice"
    assert Counter(table(g) for g in lines) == {
        "|".join(pair): games for pair in itertools.combinations(sorted(names), 2)}
    assert leftovers(str(bots)) == []
