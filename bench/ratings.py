"""Benchmark: rating fit and schedule generation at contest scale.

Draws 100 bots with true Elo ratings ~ N(1500, 200) and 100,000 seeded random
heads-up games between random pairs (winner drawn from the Elo model), then
times ``fit_ratings`` on the game records as dicts, the way games.jsonl is
read.  Prints a table (bots, games, seconds, largest and RMS error of the
fitted ratings against the truth, share of truths inside the 95% intervals)
and writes it to JSON.  ``--multi`` adds a run of 4-player games whose
placements follow Plackett-Luce (first place drawn in proportion to
10^(elo/400), then second among the rest, ...); pairwise Bradley-Terry is
then only an approximation, so expect larger errors there.  Also times
``make_schedule`` for a 1,000-bot heads-up round robin (499,500 deal groups).

    python bench/ratings.py                 # ~10 s
    python bench/ratings.py --multi --repeat 1 --json /tmp/r.json

Not a test: the figures depend on the machine.  Target: the 100-bot,
100,000-game fit in under 2 s.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

from arena.tournament.ratings import expected_score, fit_ratings
from arena.tournament.schedule import make_schedule

HERE = Path(__file__).resolve().parent
DEFAULT_JSON = HERE / "out" / "ratings.json"
TARGET_SECONDS = 2.0


def true_ratings(bots: int, rng: random.Random) -> dict[str, float]:
    elo = {f"bot{k:03d}": rng.gauss(1500.0, 200.0) for k in range(bots)}
    mean = sum(elo.values()) / bots  # the fit centres on 1500, so the truth must too
    return {bot: value - mean + 1500.0 for bot, value in elo.items()}


def heads_up_games(truth: dict[str, float], games: int, rng: random.Random) -> list[dict]:
    bots = sorted(truth)
    records = []
    for k in range(games):
        a, b = rng.sample(bots, 2)
        won = rng.random() < expected_score(truth[a], truth[b])
        records.append(_record(k, [a, b], [1, 2] if won else [2, 1]))
    return records


def plackett_luce_games(
    truth: dict[str, float], games: int, players: int, rng: random.Random
) -> list[dict]:
    bots = sorted(truth)
    strength = {bot: 10.0 ** (elo / 400.0) for bot, elo in truth.items()}
    records = []
    for k in range(games):
        seats = rng.sample(bots, players)
        remaining, finish = list(seats), []
        while remaining:
            pick = rng.choices(remaining, weights=[strength[b] for b in remaining])[0]
            remaining.remove(pick)
            finish.append(pick)
        records.append(_record(k, seats, [finish.index(bot) + 1 for bot in seats]))
    return records


def _record(k: int, seats: list[str], placements: list[int]) -> dict[str, Any]:
    return {
        "group": k,
        "index": 0,
        "seats": seats,
        "seed": k,
        "placements": placements,
        "turns": 20,
        "end": "last_player",
        "faults": [None] * len(seats),
        "duration": 0.0,
    }


def measure_fit(
    label: str, truth: dict[str, float], records: list[dict], repeat: int
) -> dict[str, Any]:
    seconds = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        table = fit_ratings(records)
        seconds = min(seconds, time.perf_counter() - start)
    rated = [r for r in table.ratings if r.elo is not None]
    errors = [r.elo - truth[r.bot] for r in rated]
    covered = sum(1 for r in rated if abs(r.elo - truth[r.bot]) <= r.ci95)
    return {
        "run": label,
        "bots": len(truth),
        "games": len(records),
        "seconds": round(seconds, 3),
        "max_error": round(max(abs(e) for e in errors), 1),
        "rms_error": round(math.sqrt(sum(e * e for e in errors) / len(errors)), 1),
        "inside_ci95": round(covered / len(rated), 3),
        "unrated": len(table.ratings) - len(rated),
    }


def measure_schedule(bots: int, repeat: int) -> dict[str, Any]:
    names = [f"bot{k:04d}" for k in range(bots)]
    seconds, groups = math.inf, []
    for _ in range(repeat):
        start = time.perf_counter()
        groups = make_schedule(names, players=2, games=2, seed=1)
        seconds = min(seconds, time.perf_counter() - start)
    return {
        "run": "make_schedule heads-up",
        "bots": bots,
        "deal_groups": len(groups),
        "games": 2 * len(groups),
        "seconds": round(seconds, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=100)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many timings")
    parser.add_argument("--multi", action="store_true", help="also fit 4-player games")
    parser.add_argument("--schedule-bots", type=int, default=1000)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    truth = true_ratings(args.bots, rng)
    fits = [measure_fit("heads-up", truth, heads_up_games(truth, args.games, rng), args.repeat)]
    if args.multi:
        records = plackett_luce_games(truth, args.games // 4, 4, rng)
        fits.append(measure_fit("4-player (Plackett-Luce)", truth, records, args.repeat))
    schedule = measure_schedule(args.schedule_bots, args.repeat)

    print(tabulate(fits, headers="keys", tablefmt="simple"))
    print()
    print(tabulate([schedule], headers="keys", tablefmt="simple"))
    verdict = "meets" if fits[0]["seconds"] < TARGET_SECONDS else "MISSES"
    print(f"\nheads-up fit {verdict} the {TARGET_SECONDS:g} s target")

    args.json.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "seed": args.seed,
        "fits": fits,
        "schedule": schedule,
        "target_seconds": TARGET_SECONDS,
    }
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
