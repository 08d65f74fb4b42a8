"""Benchmark: the referee's time per decision against a raw pipe round trip.

Two measurements in the same run, on the same machine state:

* **the limit**: a raw request/answer round trip over a pipe to ``echo`` (a C
  program that writes back each line at once), driven from Python with trio
  the way the referee drives a bot: write one line (``send_all``), read until
  the LF (``receive_some``), in three placements: this process and ``echo``
  on the same CPU, on two CPUs (a wake-up across CPUs costs several times
  more), and unpinned.  No referee can answer a decision faster than that.
  For reference, the same round trip with plain blocking ``os.write``/``os.read``
  (no event loop), and through arena's own ``BotProcess.send_line``/``read_line``
  (the process layer alone).
* **the referee**: real games in-process, through ``arena.referee.lineup``
  (``open_lineup``, ``BotHost``, ``start_all``) and
  ``arena.referee.match.play_game`` (the code ``arena run`` uses for each game),
  between copies of ``fast`` (a C bot that answers every request at once with
  its first legal answer), heads-up and at 4 players, in the same three
  placements (bots without resource limits; with ``arena run``'s default
  limits, unpinned only).  Decisions are counted from the game records; time
  per decision is wall time / decisions.
  Also per *round*: a challenge or block opportunity asks every seat at once,
  so a round of 3 answers costs about one round trip, not three.

The ratio referee / raw round trip placed alike is the figure.  It has no
target any more: issue 12 replaced "<= 2x the raw round trip" with figures side
by side (bench/run_cost.py: a full ``arena run``'s referee CPU per decision,
the C-to-C pipe round trip, and fastchess's cost per move).
The ratio to the same-CPU trip, the fastest, is shown too.

    python bench/referee_overhead.py            # 2,000 games per table size, 2-3 min
    python bench/referee_overhead.py --quick    # 300 games, ~20 s

The C bots are built from bench/bots/*.c with ``cc -O2`` into bench/out/bots/.
Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import trio
from tabulate import tabulate

from arena.engine.game import Game, GameConfig
from arena.engine.record import GameRecord
from arena.protocol import codec
from arena.referee.bots import BotSpec
from arena.referee.lineup import Lineup, open_lineup, start_all
from arena.referee.match import play_game
from arena.referee.process import open_bot_process

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
BOTS_SRC = HERE / "bots"
BOTS_OUT = OUT / "bots"
DEFAULT_JSON = OUT / "referee_overhead.json"
# Where this process and the bots run: a wake-up across CPUs costs several times
# one on the same CPU, so games and raw trips are compared placement by placement.
UNPINNED, SAME_CPU, OTHER_CPU = "unpinned", "same CPU", "other CPU"
LIMITS = codec.Limits()  # the defaults of arena run
# A typical request line (4 players, action): what one raw round trip carries.
REQUEST_LINE = ("request 12 action bank_ms=10000 : income foreign_aid tax exchange "
                "steal:1 steal:2 steal:3 assassinate:1 assassinate:2 assassinate:3")


# ---------------------------------------------------------------- shared helpers
# (bench/throughput.py, bench/fair_time.py and bench/scale.py import these)


def build_c_bot(source: str, name: str | None = None,
                defines: dict[str, str | int] | None = None) -> Path:
    """Compile bench/bots/<source>.c with ``cc -O2`` into bench/out/bots/<name>."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("bench: needs a C compiler (cc) to build the helper bots")
    BOTS_OUT.mkdir(parents=True, exist_ok=True)
    target = BOTS_OUT / (name or source)
    flags = [f"-D{key}={value}" for key, value in (defines or {}).items()]
    subprocess.run([cc, "-O2", *flags, "-o", str(target), str(BOTS_SRC / f"{source}.c")],
                   check=True)
    return target


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def loadavg() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


def machine() -> dict[str, Any]:
    return {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "trio": trio.__version__,
        "loadavg": loadavg(),
    }


def cpu_busy(seconds: float = 1.0) -> float:
    """The share of all CPUs busy (not idle) over ``seconds``, from /proc/stat:
    other people's work on a shared machine skews every figure here."""
    def sample() -> tuple[int, int]:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
        return sum(values), values[3] + values[4]  # total, idle + iowait

    try:
        total0, idle0 = sample()
        time.sleep(seconds)
        total1, idle1 = sample()
    except OSError:
        return float("nan")
    return round(1 - (idle1 - idle0) / max(total1 - total0, 1), 3)


class OthersLoad:
    """How busy other people kept the CPUs during a measurement (``with`` block):
    all busy CPU time from /proc/stat, less this process's and its reaped
    children's (the bots, and ``arena run`` subprocesses with their bots), as a
    share of all CPUs.  Exit the block after the bot processes are reaped."""

    share: float = float("nan")

    @staticmethod
    def _busy_seconds() -> float:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
        return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")

    def __enter__(self) -> OthersLoad:
        self._start = (time.monotonic(), self._busy_seconds(), sum(os.times()[:4]))
        return self

    def __exit__(self, *exc: object) -> None:
        wall0, busy0, mine0 = self._start
        wall = time.monotonic() - wall0
        others = (self._busy_seconds() - busy0) - (sum(os.times()[:4]) - mine0)
        self.share = round(max(others, 0.0) / (wall * (os.cpu_count() or 1)), 3)


def wait_idle(limit: float, timeout: float) -> float:
    """Wait (up to ``timeout`` s) until the machine is below ``limit`` busy; the last reading."""
    deadline = time.monotonic() + timeout
    busy = cpu_busy()
    while busy > limit and time.monotonic() < deadline:
        print(f"machine {busy:.0%} busy; waiting for it to calm down", file=sys.stderr)
        busy = cpu_busy(5.0)
    return busy


def add_machine_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wait-idle", type=float, default=0.0, metavar="MINUTES",
                        help="first wait up to this long for the machine to be under 10%% busy")


def machine_state(args: argparse.Namespace) -> float:
    if args.wait_idle > 0:
        return wait_idle(0.10, args.wait_idle * 60)
    return cpu_busy()


def tree_env(tree: Path | str) -> dict[str, str]:
    """The environment of a subprocess that imports the arena of checkout ``tree``:
    it first on PYTHONPATH (run the subprocess outside any checkout: ``python
    -c`` puts its working folder first)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree),
                                                         os.environ.get("PYTHONPATH", "")])}


def write_json(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {path}")


# ---------------------------------------------------------------- raw round trips


class RawPaths:
    """The raw round-trip paths to ``echo`` processes, each kept open for the run.

    A pipe round trip costs 3-5x more when the wake-up crosses CPUs than when
    both processes share one, and the scheduler picks either, so the trio path
    is measured three ways: with this process and ``echo`` pinned to the same
    CPU (the floor, and the limit the ratio uses), pinned to different CPUs,
    and unpinned.  Pinning holds only during a batch: the games run unpinned.
    """

    def __init__(self, echo: Path, line: str) -> None:
        self.echo = echo
        self.line = line
        self.data = (line + "\n").encode()
        self.cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        taskset = shutil.which("taskset")
        self.pinned = taskset is not None and len(self.cpus) >= 2
        self.paths: list[tuple[str, str, int | None]] = [  # label, how, CPU of echo
            ("blocking os.write/os.read (no event loop), unpinned", "blocking", None),
            (f"trio send_all/receive_some, {UNPINNED}", "trio", None),
            ("arena BotProcess send_line/read_line, unpinned", "process", None),
        ]
        # The raw trip each placement of the games is compared with.
        self.by_placement = {UNPINNED: 1}
        if self.pinned:
            self.paths += [
                (f"trio send_all/receive_some, {SAME_CPU}", "trio", self.cpus[0]),
                (f"trio send_all/receive_some, {OTHER_CPU}", "trio", self.cpus[1]),
            ]
            self.by_placement.update({SAME_CPU: 3, OTHER_CPU: 4})
        # The fastest trip of all: the strictest yardstick.
        self.limit = self.by_placement.get(SAME_CPU, 1)

    async def open(self, scratch: Path, stack: AsyncExitStack) -> None:
        self.ends: list[Any] = []
        taskset = shutil.which("taskset")
        for _label, how, cpu in self.paths:
            argv = [str(self.echo)] if cpu is None else [taskset, "-c", str(cpu), str(self.echo)]
            if how == "blocking":
                popen = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                stack.callback(_close_popen, popen)
                self.ends.append(popen)
            elif how == "trio":
                proc = await trio.lowlevel.open_process(argv, stdin=subprocess.PIPE,
                                                        stdout=subprocess.PIPE)
                stack.push_async_callback(_close_trio, proc)
                self.ends.append((proc, bytearray()))
            else:
                spec = BotSpec("echo", self.echo, tuple(argv), self.echo.parent)
                self.ends.append(await stack.enter_async_context(open_bot_process(
                    spec, scratch_dir=scratch / "echo", log_path=scratch / "echo.log")))

    async def batch(self, path: int, n: int) -> tuple[float, float]:
        """Seconds and referee-side CPU seconds per round trip over ``n`` trips."""
        _label, how, cpu = self.paths[path]
        if cpu is not None:
            os.sched_setaffinity(0, {self.cpus[0]})
        try:
            start, used = time.perf_counter(), time.process_time()
            end = self.ends[path]
            if how == "blocking":
                win, rout, buf, data = end.stdin.fileno(), end.stdout.fileno(), bytearray(), \
                    self.data
                for _ in range(n):
                    os.write(win, data)
                    while (cut := buf.find(b"\n")) < 0:
                        buf += os.read(rout, 65536)
                    del buf[: cut + 1]
            elif how == "trio":
                # What the referee does per decision, and nothing else.
                proc, buf = end
                send, receive, data = proc.stdin.send_all, proc.stdout.receive_some, self.data
                for _ in range(n):
                    await send(data)
                    while (cut := buf.find(b"\n")) < 0:
                        buf += await receive(65536)
                    del buf[: cut + 1]
            else:
                for _ in range(n):
                    await end.send_line(self.line)
                    await end.read_line()
            return (time.perf_counter() - start) / n, (time.process_time() - used) / n
        finally:
            if cpu is not None:
                os.sched_setaffinity(0, set(self.cpus))


def _close_popen(popen: subprocess.Popen[bytes]) -> None:
    assert popen.stdin is not None
    popen.stdin.close()
    popen.wait()


async def _close_trio(proc: trio.Process) -> None:
    assert proc.stdin is not None
    await proc.stdin.aclose()
    await proc.wait()


# ---------------------------------------------------------------- the referee


def rounds_of(record: GameRecord) -> int:
    """Request rounds of a game: each engine request asks its seats at once."""
    assert record.config is not None and record.seed is not None
    game = Game.from_config(record.config, record.seed)
    decisions = record.decisions
    i = rounds = 0
    while i < len(decisions) and not game.over:
        request = game.request
        assert request is not None
        for _ in request.seats:
            seat, token = decisions[i]
            decision = next(d for d in game.legal(seat) if d.token == token)
            game.decide(seat, decision)
            i += 1
        rounds += 1
    return rounds


class Table:
    """``players`` copies of a bot kept across games, played the way ``arena run``
    plays (``argv``: how to run the bot, default the executable alone)."""

    def __init__(self, lineup: Lineup, bot: Path, players: int, scratch: Path,
                 seed: int, label: str, argv: tuple[str, ...] | None = None,
                 placement: str = UNPINNED, referee_cpu: int | None = None) -> None:
        self.players = players
        self.label = label
        self.placement = placement
        self.referee_cpu = referee_cpu  # pin this process here while playing
        self.limits = LIMITS
        self.config = GameConfig(players)
        self.seed = seed * 1_000_003 + players * 100_000_007
        self.hosts = [lineup.host(BotSpec(f"{bot.name}{k}", bot, argv or (str(bot),), bot.parent),
                                  scratch_dir=scratch / label / placement / f"p{players}"
                                  / f"bot{k}",
                                  log_path=scratch / label / placement / f"p{players}"
                                  / f"bot{k}.log")
                      for k in range(players)]
        self.records: list[GameRecord] = []
        self.seconds = self.cpu = 0.0

    async def play(self, games: int, *, timed: bool = True) -> None:
        everywhere = os.sched_getaffinity(0) if self.referee_cpu is not None else set()
        if self.referee_cpu is not None:
            os.sched_setaffinity(0, {self.referee_cpu})
        try:
            start, cpu = time.perf_counter(), time.process_time()
            records = []
            for _ in range(games):
                self.seed += 1
                seats = await start_all(self.hosts)
                report = await play_game(seats, self.config, self.seed, self.limits)
                records.append(report.record)
        finally:
            if self.referee_cpu is not None:
                os.sched_setaffinity(0, everywhere)
        if timed:
            self.seconds += time.perf_counter() - start
            self.cpu += time.process_time() - cpu
            self.records += records

    def summary(self) -> dict[str, Any]:
        decisions = sum(len(r.decisions) for r in self.records)
        rounds = sum(rounds_of(r) for r in self.records)
        return {
            "players": self.players, "bot_limits": self.label, "placement": self.placement,
            "games": len(self.records),
            "seconds": round(self.seconds, 3), "referee_cpu": round(self.cpu, 3),
            "decisions": decisions, "rounds": rounds,
            "games_per_second": round(len(self.records) / self.seconds, 1),
            "us_per_decision": round(self.seconds / decisions * 1e6, 1),
            "cpu_us_per_decision": round(self.cpu / decisions * 1e6, 1),
            "us_per_round": round(self.seconds / rounds * 1e6, 1),
            "faults": sum(1 for r in self.records for f in r.referee["faults"] if f),
            "process_starts": sum(h.starts for h in self.hosts),
        }


def lineup_options() -> list[tuple[str, dict[str, Any]]]:
    """Bots without resource limits (the referee alone), and with the limits that
    ``arena run`` gives by default (a launcher, and a watchdog reading /proc every
    50 ms), when this arena has them."""
    try:
        from arena.referee.limits import BotLimits
    except ImportError:
        return [("none", {})]
    return [("none", {}), ("run defaults", {"limits": BotLimits()})]


async def measure(echo: Path, fast: Path, players: list[int], games: int, trips: int,
                  segments: int, warmup: int, seed: int, scratch: Path) -> dict[str, Any]:
    """Alternate raw batches and games in ``segments`` rounds, so that both see the
    same machine (a shared 2-core machine drifts by 2-3x from minute to minute)."""
    raw = RawPaths(echo, REQUEST_LINE)
    trip_times: list[list[tuple[float, float]]] = [[] for _ in raw.paths]
    summaries = []
    async with AsyncExitStack() as stack:
        await raw.open(scratch, stack)
        for path in range(len(raw.paths)):
            await raw.batch(path, min(trips, 1000))
        options = lineup_options()
        for label, process_options in options:
            # One kind of limits at a time: a watchdog would tax the other games too.
            # Pinned placements without limits only: they show the referee alone.
            placements = list(raw.by_placement) if label == "none" else [UNPINNED]
            async with AsyncExitStack() as lineups:
                tables = []
                for placement in placements:
                    here, referee_cpu = dict(process_options), None
                    if placement != UNPINNED:
                        referee_cpu = raw.cpus[0]
                        here["cpus"] = frozenset(
                            {raw.cpus[0] if placement == SAME_CPU else raw.cpus[1]})
                    lineup = await lineups.enter_async_context(
                        open_lineup(limits=LIMITS, process_options=here))
                    tables += [Table(lineup, fast, k, scratch, seed, label,
                                     placement=placement, referee_cpu=referee_cpu)
                               for k in players]
                for table in tables:
                    await table.play(warmup, timed=False)
                for _ in range(segments):
                    for path in range(len(raw.paths)):
                        n = trips // segments // len(options)
                        trip_times[path].append(await raw.batch(path, n))
                    for table in tables:
                        await table.play(games // segments)
            summaries += [t.summary() for t in tables]
    rows = []
    for (label, _how, _cpu), times in zip(raw.paths, trip_times, strict=True):
        walls = [w for w, _ in times]
        rows.append({"path": label, "round_trips": len(times) * (trips // len(times)),
                     "us_median": round(statistics.median(walls) * 1e6, 1),
                     "us_min": round(min(walls) * 1e6, 1), "us_max": round(max(walls) * 1e6, 1),
                     "cpu_us_median": round(statistics.median(c for _, c in times) * 1e6, 1)})
    return {"raw": rows, "limit": raw.limit, "by_placement": raw.by_placement,
            "referee": summaries}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="games per table size")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--trips", type=int, default=20_000, help="raw round trips per path")
    parser.add_argument("--segments", type=int, default=10,
                        help="alternate raw trips and games in this many rounds")
    parser.add_argument("--warmup", type=int, default=20, help="untimed games first")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="300 games, 6,000 trips")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    add_machine_options(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.trips, args.segments = 300, 6000, 6

    echo = build_c_bot("echo")
    fast = build_c_bot("fast")
    busy_before = machine_state(args)
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp, OthersLoad() as others:
        result = trio.run(measure, echo, fast, args.players, args.games, args.trips,
                          args.segments, args.warmup, args.seed, Path(tmp))
    raw, referee = result["raw"], result["referee"]
    limit_us = raw[result["limit"]]["us_median"]
    limit_cpu_us = raw[result["limit"]]["cpu_us_median"]
    limit_path = raw[result["limit"]]["path"]
    for run in referee:
        trip = raw[result["by_placement"][run["placement"]]]["us_median"]
        run["trip_us"] = trip
        run["ratio"] = round(run["us_per_decision"] / trip, 2)
        run["ratio_per_round"] = round(run["us_per_round"] / trip, 2)
        run["ratio_to_limit"] = round(run["us_per_decision"] / limit_us, 2)

    print(f"\nRaw round trip over a pipe to echo ({len(REQUEST_LINE) + 1}-byte line), "
          f"{raw[0]['round_trips']:,} per path in {args.segments} batches between the games")
    print(tabulate([[r["path"], f"{r['us_median']:.1f}", f"{r['us_min']:.1f}–{r['us_max']:.1f}",
                     f"{r['cpu_us_median']:.1f}"] for r in raw],
                   headers=["path", "µs (median)", "µs (batches)", "Python CPU µs"],
                   disable_numparse=True, colalign=("left", "right", "right", "right")))
    print(f"\nReferee, in-process BotHost + play_game, fast C bots, {args.games:,} games each")
    print(tabulate(
        [[r["players"], r["bot_limits"], r["placement"], f"{r['games']:,}",
          f"{r['games_per_second']:,.0f}", f"{r['decisions']:,}",
          f"{r['us_per_decision']:.1f}", f"{r['cpu_us_per_decision']:.1f}",
          f"{r['trip_us']:.1f}", f"{r['ratio']:.2f}", f"{r['ratio_per_round']:.2f}",
          f"{r['ratio_to_limit']:.2f}"]
         for r in referee],
        headers=["players", "bot limits", "placement", "games", "games/s", "decisions",
                 "µs/decision", "referee CPU µs/decision", "raw trip µs", "× trip",
                 "× trip per round", "× same-CPU trip"],
        colalign=("right", "left", "left") + ("right",) * 9, disable_numparse=True))
    print(f"\nmachine: {busy_before:.0%} busy before the run; other processes used "
          f"{others.share:.0%} of the CPUs during it")
    worst_by_placement: dict[str, float] = {}
    for r in referee:
        worst_by_placement[r["placement"]] = max(worst_by_placement.get(r["placement"], 0.0),
                                                 r["ratio"])
    for placement, worst in worst_by_placement.items():
        print(f"{placement}: worst ratio to the raw trip placed alike {worst:.2f}")
    worst = max(r["ratio_to_limit"] for r in referee)
    print(f"strictest ({limit_path}, {limit_us:.1f} µs wall, {limit_cpu_us:.1f} µs of "
          f"Python CPU): worst ratio {worst:.2f}")
    for r in referee:
        if r["faults"] or r["process_starts"] != r["players"]:
            print(f"note: {r['players']} players, {r['bot_limits']}, {r['placement']}: "
                  f"{r['faults']} faults, {r['process_starts']} process starts")

    write_json(args.json, {
        "benchmark": "referee_overhead", **machine(), "quick": args.quick,
        "busy_before": busy_before, "others_cpu_share": others.share,
        "request_line_bytes": len(REQUEST_LINE) + 1, "segments": args.segments,
        "raw": raw, "limit_path": limit_path, "limit_us": limit_us,
        "limit_cpu_us": limit_cpu_us,
        "referee": referee,
        "worst_ratio_by_placement": worst_by_placement, "worst_ratio_to_limit": worst,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
