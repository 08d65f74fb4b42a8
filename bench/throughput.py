"""Benchmark: tournament games per second of ``arena run``.

Two comparisons, each a pair of real ``arena run`` commands run as subprocesses
into a scratch results folder:

* **process reuse**: ``example_bots/random.py`` (Python) heads-up and at
  4-player tables, with the normal runner (each worker keeps its bot processes
  from game to game) against a baseline that starts the bots afresh for every
  game.  The baseline is the same command and the same code path with one
  change, made here and not in arena: ``arena.referee.lineup.BotHost`` (the
  class ``Lineup.host`` makes) is replaced by ``FreshBotHost``, whose
  ``player()`` ends the bot's process (``quit``, as at the end of a run) and
  starts a new one before each game.  (``keep=0`` would not do it: a worker
  always keeps the bots of the table it plays.)
  Target: reuse >= 5x faster.
* **concurrency**: bots that use CPU (``busy5``, a C bot burning 5 ms of CPU per
  decision), ``--concurrency 1`` against ``--concurrency 2``, and against
  ``--concurrency 2 --affinity`` (each worker's bots pinned to a CPU of their
  own; skipped where the system cannot pin).  Target: >= 1.7x on 2 cores.

games/s is games played / seconds of play, from arena's own progress line
(it starts its clock after the bots are built and the schedule made, and stops
at the last game, before the ratings); the whole command's wall time is
reported too, and the referee's own CPU time (``os.times()`` of the ``arena
run`` process, not its bots) as a share of one CPU over that wall time.
Every run uses ``--seed 1`` and a fresh ``--out`` folder.

    python bench/throughput.py              # ~5 min
    python bench/throughput.py --quick      # ~1 min

Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio
from tabulate import tabulate

from arena.engine.game import Game
from arena.referee.lineup import BotHost, open_lineup
from arena.referee.player import BotPlayer, Fault

try:  # run as a script (python bench/throughput.py) or as a module
    import referee_overhead as common
except ImportError:  # pragma: no cover
    from bench import referee_overhead as common

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RANDOM_BOT = ROOT / "example_bots" / "random.py"
DEFAULT_JSON = common.OUT / "throughput.json"
TARGET_REUSE = 5.0
TARGET_CONCURRENCY = 1.7
BUSY_CPU_MS = 5
# arena's progress line at the end: "N/N games, R games/s, ..."
_PROGRESS = re.compile(r"(\d+)/(\d+) games, ([\d.]+) games/s")
_REFEREE_CPU = re.compile(r"bench: referee cpu ([\d.]+)")
_STARTED = re.compile(r"^\[arena: .* started pid \d+", re.MULTILINE)  # a line per start


class FreshBotHost(BotHost):
    """The baseline: a bot process per game.  Ends the previous process the way a
    run ends it (``quit``, then closes it) and starts a new one, every game."""

    async def player(self) -> BotPlayer | Fault:
        await self.close()
        return await super().player()


def child(mode: str, argv: list[str]) -> int:
    """``python bench/throughput.py --child {reuse,fresh} run ...``: arena's CLI,
    with FreshBotHost in the runner for ``fresh``."""
    if mode == "fresh":
        import arena.referee.lineup as lineup

        lineup.BotHost = FreshBotHost  # type: ignore[misc]  # what Lineup.host makes
    from arena.cli import main

    status = main(argv)
    times = os.times()  # the referee's own CPU, not its bots'
    print(f"bench: referee cpu {times.user + times.system:.3f}", file=sys.stderr)
    return status


def concurrency_ceiling(players: int, games: int = 2000) -> float:
    """The best ``--concurrency 2`` / ``1`` on 2 CPUs for bots that think a fixed CPU
    time per decision and answer at random: a challenge or block opportunity asks
    several seats at once, so ``--concurrency 1`` already uses both CPUs then."""
    slots = decisions = 0
    for seed in range(games):
        game = Game.new(players=players, seed=seed)
        rng = random.Random(seed)
        while not game.over:
            assert game.request is not None
            seats = game.request.seats
            slots += -(-len(seats) // 2)  # rounds of 2 CPUs at --concurrency 1
            decisions += len(seats)
            for seat in seats:
                game.decide(seat, rng.choice(game.legal(seat)))
    return 2 * slots / decisions


async def _tables_at_once(bot: Path, tables: int, games: int, pin: bool, scratch: Path) -> float:
    taskset = shutil.which("taskset")
    async with open_lineup(limits=common.LIMITS) as lineup:
        label = "pinned" if pin else "free"
        played = [common.Table(lineup, bot, 2, scratch, k, f"{label}{tables}.{k}",
                               (taskset, "-c", str(k), str(bot)) if pin and taskset else None)
                  for k in range(tables)]
        for table in played:
            await table.play(2, timed=False)
        start = time.perf_counter()
        async with trio.open_nursery() as nursery:
            for table in played:
                nursery.start_soon(table.play, games)
        seconds = time.perf_counter() - start
    return sum(len(r.decisions) for t in played for r in t.records) / seconds


def placement_check(bot: Path, games: int, scratch: Path) -> list[dict[str, Any]]:
    """Heads-up tables of ``bot`` in-process (no store, no resource limits): one
    table, two at once, and two at once with each table's bots pinned to a CPU of
    their own (``taskset -c``).  Shows how much of the concurrency speed-up the
    Linux scheduler's placement of the bots costs."""
    if shutil.which("taskset") is None or (os.cpu_count() or 1) < 2:
        return []
    rows = []
    for label, tables, pin in (("1 table", 1, False), ("2 tables at once", 2, False),
                               ("2 tables at once, bots pinned per table", 2, True)):
        rate = trio.run(_tables_at_once, bot, tables, games, pin, scratch)
        rows.append({"run": label, "decisions_per_second": round(rate, 1)})
    for row in rows:
        row["speedup"] = round(row["decisions_per_second"] / rows[0]["decisions_per_second"], 2)
    return rows


def arena_run(mode: str, bots: list[Path], *, games: int, players: int, concurrency: int,
              scratch: Path, label: str, affinity: bool = False) -> dict[str, Any]:
    out = scratch / label
    argv = ["run", *map(str, bots), "--games", str(games), "--players", str(players),
            "--concurrency", str(concurrency), "--seed", "1", "--out", str(out),
            # One referee process: FreshBotHost is patched into this one, and
            # --concurrency keeps meaning games at once in all.
            "--workers", "0"]
    if affinity:
        argv.append("--affinity")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", mode, *argv],
                          capture_output=True, text=True, cwd=scratch)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-4000:])
        raise SystemExit(f"bench: arena run ({label}) failed with status {done.returncode}")
    lines = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    matches = _PROGRESS.findall(done.stderr)
    played, total, rate = matches[-1]
    if int(played) != int(total) or len(lines) != int(total):
        raise SystemExit(f"bench: arena run ({label}) played {len(lines)} of {total} games")
    faults: dict[str, int] = {}
    for line in lines:
        for fault in line["faults"]:
            if fault:
                faults[fault["kind"]] = faults.get(fault["kind"], 0) + 1
    starts = sum(len(_STARTED.findall(log.read_text(errors="replace")))
                 for log in (out / "logs").glob("*.log"))
    if mode == "fresh" and starts < len(lines) * players:
        raise SystemExit(f"bench: the baseline ({label}) started {starts} bot processes for "
                         f"{len(lines)} games: FreshBotHost is not in use (has "
                         f"arena.referee.lineup changed?)")
    decisions = sum(t["n"] for line in lines for t in line.get("decision_ms") or [] if t)
    referee_cpu = float(_REFEREE_CPU.findall(done.stderr)[-1])
    return {"run": label, "mode": mode, "players": players, "concurrency": concurrency,
            "affinity": affinity, "games": len(lines), "games_per_second": float(rate),
            "play_seconds": round(len(lines) / float(rate), 2), "wall_seconds": round(wall, 2),
            "process_starts": starts, "faults": faults, "decisions": decisions,
            "referee_cpu_seconds": round(referee_cpu, 2),
            "referee_cpu_share": round(referee_cpu / wall, 3)}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return child(argv[1], argv[2:])
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--reuse-games", type=int, default=2000,
                        help="games per process-reuse run (the baseline plays a quarter)")
    parser.add_argument("--busy-games", type=int, default=400,
                        help="heads-up games per concurrency run (4-player: 40%%)")
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 1,
                        help="concurrency of the process-reuse runs (default: CPUs)")
    parser.add_argument("--quick", action="store_true", help="about a fifth of the games")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    common.add_machine_options(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.reuse_games, args.busy_games = 400, 100

    busy = common.build_c_bot("busy", f"busy{BUSY_CPU_MS}",
                              {"CPU_MS": BUSY_CPU_MS, "NAME": f'"busy{BUSY_CPU_MS}"'})
    busy_before = common.machine_state(args)
    can_pin = hasattr(os, "sched_setaffinity")  # arena run --affinity needs it
    if not can_pin:
        print("bench: this system cannot pin processes to CPUs: no --affinity runs",
              file=sys.stderr)
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp, \
            common.OthersLoad() as others:
        scratch = Path(tmp)
        for players in (2, 4):
            bots = [RANDOM_BOT] * players
            games = args.reuse_games // (1 if players == 2 else 2)
            for mode, n in (("reuse", games), ("fresh", max(games // 4, players))):
                runs.append(arena_run(mode, bots, games=n, players=players,
                                      concurrency=args.concurrency, scratch=scratch,
                                      label=f"random-{players}p-{mode}"))
                print(f"  {runs[-1]['run']}: {runs[-1]['games_per_second']:.1f} games/s",
                      file=sys.stderr)
        for players in (2, 4):
            games = args.busy_games if players == 2 else args.busy_games * 2 // 5
            settings = [(1, False), (2, False)] + ([(2, True)] if can_pin else [])
            for concurrency, affinity in settings:
                label = f"busy{BUSY_CPU_MS}-{players}p-c{concurrency}"
                runs.append(arena_run("reuse", [busy] * players, games=games, players=players,
                                      concurrency=concurrency, scratch=scratch,
                                      label=label + ("-affinity" if affinity else ""),
                                      affinity=affinity))
                print(f"  {runs[-1]['run']}: {runs[-1]['games_per_second']:.1f} games/s",
                      file=sys.stderr)
        placement = placement_check(busy, args.busy_games // 4, scratch)

    def rate(label: str) -> float:
        return next(r["games_per_second"] for r in runs if r["run"] == label)

    comparisons = []
    for players in (2, 4):
        comparisons.append({
            "comparison": f"process reuse / fresh processes, random.py, {players} players",
            "speedup": round(rate(f"random-{players}p-reuse") / rate(f"random-{players}p-fresh"),
                             2),
            "target": TARGET_REUSE})
    for players in (2, 4):
        comparisons.append({
            "comparison": f"--concurrency 2 / 1, busy{BUSY_CPU_MS} ({BUSY_CPU_MS} ms CPU per "
                          f"decision), {players} players",
            "speedup": round(rate(f"busy{BUSY_CPU_MS}-{players}p-c2")
                             / rate(f"busy{BUSY_CPU_MS}-{players}p-c1"), 2),
            "target": TARGET_CONCURRENCY,
            "ceiling_2_cpus": round(concurrency_ceiling(players), 2)})
        if can_pin:
            comparisons.append({
                "comparison": f"--concurrency 2 --affinity / 1, busy{BUSY_CPU_MS}, "
                              f"{players} players",
                "speedup": round(rate(f"busy{BUSY_CPU_MS}-{players}p-c2-affinity")
                                 / rate(f"busy{BUSY_CPU_MS}-{players}p-c1"), 2),
                "target": TARGET_CONCURRENCY,
                "ceiling_2_cpus": comparisons[-1]["ceiling_2_cpus"]})
    for c in comparisons:
        c["meets_target"] = c["speedup"] >= c["target"]

    print(f"\narena run, seed 1 ({os.cpu_count()} CPUs)")
    print(tabulate(
        [[r["run"], r["mode"], r["players"],
          f"{r['concurrency']}{' --affinity' if r['affinity'] else ''}", f"{r['games']:,}",
          f"{r['play_seconds']:.1f}", f"{r['games_per_second']:,.1f}", f"{r['wall_seconds']:.1f}",
          f"{r['referee_cpu_share']:.0%}", f"{r['process_starts']:,}",
          sum(r["faults"].values())] for r in runs],
        headers=["run", "processes", "players", "concurrency", "games", "play s", "games/s",
                 "command s", "referee CPU", "bot starts", "faults"],
        colalign=("left", "left") + ("right",) * 9, disable_numparse=True))
    print()
    print(tabulate([[c["comparison"], f"{c['speedup']:.2f}x", f">= {c['target']:g}x",
                     "met" if c["meets_target"] else "MISSED",
                     f"{c['ceiling_2_cpus']:.2f}x" if "ceiling_2_cpus" in c else ""]
                    for c in comparisons],
                   headers=["comparison", "speed-up", "target", "", "best possible on 2 CPUs"],
                   disable_numparse=True))
    if placement:
        print(f"\nIn-process check, heads-up busy{BUSY_CPU_MS} tables (no store, no limits)")
        print(tabulate([[r["run"], f"{r['decisions_per_second']:,.0f}", f"{r['speedup']:.2f}x"]
                        for r in placement],
                       headers=["tables", "decisions/s", "speed-up"], disable_numparse=True,
                       colalign=("left", "right", "right")))
    print(f"\nmachine: {busy_before:.0%} busy before the runs; other processes used "
          f"{others.share:.0%} of the CPUs during them")
    common.write_json(args.json, {
        "benchmark": "throughput", **common.machine(), "quick": args.quick,
        "busy_before": busy_before, "others_cpu_share": others.share,
        "runs": runs, "comparisons": comparisons, "placement_check": placement,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
