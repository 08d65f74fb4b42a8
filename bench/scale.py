"""Benchmark: arena at contest scale.

* **Rating fit**: ``arena.tournament.ratings.fit_ratings`` on 100 bots and
  100,000 heads-up games drawn from known Elo ratings (the generator of
  bench/ratings.py), best of 3.  Target: under 2 s.
* **Schedules**: for 1,000 bots, a heads-up round robin (499,500 deal groups)
  and 4-player tables (the seeded balanced design), best of 3: the work units
  ``arena run`` makes (``arena.tournament.units.make_units``: tables, cut for
  locality) and the whole list of deal groups
  (``arena.tournament.schedule.make_schedule``).  Target: under 1 s.
* **Referee memory**: ``arena run`` as a subprocess playing 20,000 heads-up games
  between two copies of ``fast`` (a C bot answering at once), its resident set
  (VmRSS of the referee process alone, not its bots) read from
  /proc/<pid>/status every 0.5 s, with the games stored so far (lines of
  games.jsonl).  Reports RSS at 10% and 50% of the games and at the last sample
  before the last game, the peak while playing, the peak after the games (the
  referee reads games.jsonl back for the ratings and reports) and the peak of
  the whole command (VmHWM).  Target: flat while playing (within 10 MB from 10%
  of the games to the end), and under 150 MB throughout.

    python bench/scale.py                   # ~3 min on 2 cores
    python bench/scale.py --quick           # 2,000 games, ~40 s

Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

from arena.tournament.ratings import fit_ratings
from arena.tournament.schedule import make_schedule
from arena.tournament.units import make_units

try:  # run as a script (python bench/scale.py) or as a module
    import ratings as bench_ratings
    import referee_overhead as common
except ImportError:  # pragma: no cover
    from bench import ratings as bench_ratings
    from bench import referee_overhead as common

DEFAULT_JSON = common.OUT / "scale.json"
TARGET_FIT_SECONDS = 2.0
TARGET_RSS_MB = 150.0
FLAT_GROWTH_MB = 10.0  # "flat": RSS at the last game within this of RSS at 10% of the games
SAMPLE_EVERY = 0.5


def best_of(repeat: int, fn: Any) -> tuple[float, Any]:
    best, value = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def best_cpu_of(repeat: int, fn: Any) -> float:
    """The least CPU time of this process over ``repeat`` calls: on a shared
    machine the wall time also counts others' turns on the CPU."""
    best = math.inf
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def measure_fit(bots: int, games: int, seed: int, repeat: int) -> dict[str, Any]:
    rng = random.Random(seed)
    truth = bench_ratings.true_ratings(bots, rng)
    records = bench_ratings.heads_up_games(truth, games, rng)
    seconds, table = best_of(repeat, lambda: fit_ratings(records))
    rated = [r for r in table.ratings if r.elo is not None]
    rms = math.sqrt(sum((r.elo - truth[r.bot]) ** 2 for r in rated) / len(rated))
    return {"what": f"fit_ratings, {bots} bots, {games:,} heads-up games",
            "seconds": round(seconds, 3), "rms_error_elo": round(rms, 1),
            "target_seconds": TARGET_FIT_SECONDS, "meets_target": seconds < TARGET_FIT_SECONDS}


def measure_schedule(bots: int, players: int, repeat: int) -> dict[str, Any]:
    names = [f"bot{k:04d}" for k in range(bots)]
    def make() -> Any:
        return make_schedule(names, players=players, games=players, seed=1)

    seconds, groups = best_of(repeat, make)
    return {"what": f"make_schedule, {bots:,} bots, {players} players, one deal per table",
            "seconds": round(seconds, 3), "cpu_seconds": round(best_cpu_of(repeat, make), 3),
            "deal_groups": len(groups),
            "games": sum(len(g.order) for g in groups)}


def measure_units(bots: int, players: int, repeat: int) -> dict[str, Any]:
    """What arena run makes: the tables cut into work units (deal groups are made
    by the workers as they play)."""
    names = [f"bot{k:04d}" for k in range(bots)]
    def make() -> Any:
        return make_units(names, players=players, games=players, seed=1,
                          slots=os.cpu_count() or 1)

    seconds, plan = best_of(repeat, make)
    return {"what": f"make_units, {bots:,} bots, {players} players, one deal per table",
            "seconds": round(seconds, 3), "cpu_seconds": round(best_cpu_of(repeat, make), 3),
            "target_seconds": 1.0, "deal_groups": len(plan.tables) * plan.deals,
            "games": plan.total, "units": len(plan.units)}


def _status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process in kB (empty once it has ended)."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    key, value = line.split(":", 1)
                    values[key] = int(value.split()[0])
    except OSError:
        pass
    return values


class LineCounter:
    """Lines of a growing file, reading only what was added since the last call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.lines = 0

    def count(self) -> int:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return self.lines
        self.offset += len(data)
        self.lines += data.count(b"\n")
        return self.lines


def measure_memory(fast: Path, games: int, concurrency: int, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        out = Path(tmp) / "scale"
        argv = [sys.executable, "-m", "arena", "run", str(fast), str(fast),
                "--games", str(games), "--concurrency", str(concurrency),
                "--workers", "0",  # the referee in this one process, whose memory is read
                "--seed", str(seed), "--out", str(out)]
        counter = LineCounter(out / "games.jsonl")
        samples: list[dict[str, float]] = []
        hwm = 0
        start = time.perf_counter()
        with open(Path(tmp) / "stderr.txt", "w") as err:
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, cwd=tmp)
            while True:
                status = _status(proc.pid)
                if proc.poll() is not None:
                    break
                if "VmRSS" in status:
                    hwm = max(hwm, status.get("VmHWM", 0))
                    samples.append({"t": round(time.perf_counter() - start, 2),
                                    "games": counter.count(),
                                    "rss_mb": round(status["VmRSS"] / 1024, 1)})
                time.sleep(SAMPLE_EVERY)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            sys.stderr.write((Path(tmp) / "stderr.txt").read_text()[-4000:])
            raise SystemExit(f"bench: arena run failed with status {proc.returncode}")
        played = counter.count()

    # While playing: every sample before the last game was stored.  After it the
    # referee reads games.jsonl back for the ratings and reports.
    playing = [s for s in samples if s["games"] < games]

    def at(share: float) -> dict[str, float] | None:
        return next((s for s in playing if s["games"] >= share * games), None)

    points = {"10%": at(0.1), "50%": at(0.5), "last sample while playing": playing[-1]}
    after = [s for s in samples if s["games"] >= games]
    rss10 = points["10%"]["rss_mb"] if points["10%"] else math.nan
    rss_end = playing[-1]["rss_mb"]
    peak_playing = max(s["rss_mb"] for s in playing)
    peak_after = max((s["rss_mb"] for s in after), default=math.nan)
    peak = round(hwm / 1024, 1)
    flat = rss_end - rss10 <= FLAT_GROWTH_MB
    return {"what": f"arena run, {games:,} heads-up games, fast C bots, concurrency {concurrency}",
            "games": played, "seconds": round(wall, 1), "samples": samples, "points": points,
            "peak_playing_mb": peak_playing, "peak_after_games_mb": peak_after,
            "peak_hwm_mb": peak, "growth_while_playing_mb": round(rss_end - rss10, 1),
            "flat": flat,
            "target_mb": TARGET_RSS_MB, "meets_target": flat and peak < TARGET_RSS_MB}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--fit-bots", type=int, default=100)
    parser.add_argument("--fit-games", type=int, default=100_000)
    parser.add_argument("--schedule-bots", type=int, default=1000)
    parser.add_argument("--games", type=int, default=20_000, help="games of the memory run")
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--quick", action="store_true", help="2,000 games, timings once")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    common.add_machine_options(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.repeat = 2000, 1

    fast = common.build_c_bot("fast")
    busy_before = common.machine_state(args)
    with common.OthersLoad() as others:
        fit = measure_fit(args.fit_bots, args.fit_games, args.seed, args.repeat)
        schedules = [measure(args.schedule_bots, k, args.repeat)
                     for measure in (measure_units, measure_schedule) for k in (2, 4)]
        memory = measure_memory(fast, args.games, args.concurrency, args.seed)

    print()
    print(tabulate([[fit["what"], f"{fit['seconds']:.3f}", f"{fit['rms_error_elo']:.1f}",
                     f"< {TARGET_FIT_SECONDS:g} s", "met" if fit["meets_target"] else "MISSED"]],
                   headers=["rating fit", "seconds", "RMS error (Elo)", "target", ""],
                   disable_numparse=True))
    print()
    print(tabulate([[s["what"], f"{s['deal_groups']:,}", f"{s['games']:,}", f"{s['seconds']:.3f}",
                     f"{s['cpu_seconds']:.3f}"] for s in schedules],
                   headers=["schedule", "deal groups", "games", "seconds", "CPU seconds"],
                   disable_numparse=True))
    print(f"\n{memory['what']}: {memory['games']:,} games in {memory['seconds']:.0f} s")
    rows = [[share, f"{p['games']:,}", f"{p['t']:.0f}", f"{p['rss_mb']:.1f}"]
            for share, p in memory["points"].items() if p]
    rows.append(["peak while playing", "", "", f"{memory['peak_playing_mb']:.1f}"])
    rows.append(["after the games (ratings, reports)", f"{memory['games']:,}", "",
                 f"{memory['peak_after_games_mb']:.1f}"])
    rows.append(["peak of the command (VmHWM)", "", "", f"{memory['peak_hwm_mb']:.1f}"])
    print(tabulate(rows, headers=["referee RSS at", "games", "s", "MB"],
                   colalign=("left", "right", "right", "right"), disable_numparse=True))
    verdict = "meets" if memory["meets_target"] else "MISSES"
    print(f"growth from 10% of the games to the last: {memory['growth_while_playing_mb']:+.1f} MB; "
          f"{verdict} the target (flat, under {TARGET_RSS_MB:g} MB)")
    print(f"machine: {busy_before:.0%} busy before the run; other processes used "
          f"{others.share:.0%} of the CPUs during it")
    common.write_json(args.json, {
        "benchmark": "scale", **common.machine(), "quick": args.quick,
        "busy_before": busy_before, "others_cpu_share": others.share,
        "fit": fit, "schedules": schedules, "memory": memory,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
