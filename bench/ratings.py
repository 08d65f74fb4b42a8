"""Benchmark: rating fit and schedule generation at contest scale.

Draws 100 bots with true Elo ratings ~ N(1500, 200) and 100,000 seeded random
heads-up games between random pairs (winner drawn from the Elo model), then
times ``fit_ratings`` on the game records as dicts, the way games.jsonl is
read.  Prints a table (bots, games, seconds, largest and RMS error of the
fitted ratings against the truth, share of truths inside the 95% intervals,
cluster-robust and model-based) and writes it to JSON.  ``--multi`` adds
100,000 4-player games whose placements follow Plackett-Luce (first place
drawn in proportion to 10^(elo/400), then second among the rest, ...).
Under Plackett-Luce each pair's order is exactly Bradley-Terry, so the fit
is consistent; what the pairwise view gets wrong is treating the pairs of
one game as independent, which the cluster-robust intervals allow for.  Also
times ``make_schedule`` for a 1,000-bot heads-up round robin (499,500 deal
groups).

``--coverage`` measures the intervals over many seeded tournaments: for
heads-up, 4-player and 6-player games, at contest scale (100 bots) and
small (8 bots), with independent games and with games in deal groups whose
results move together (``dealt_games``), the share of true ratings inside the 95% intervals with
the model-based covariance (``robust=False``, the intervals before the
cluster-robust ones) and with the cluster-robust one (the default), and the
mean +- of each.  Tournaments where a bot has no rating or no interval are
left out and counted.

    python bench/ratings.py                 # ~10 s
    python bench/ratings.py --multi --coverage      # ~1 min

Not a test: the figures depend on the machine (the coverage does not).
Target: the 100-bot, 100,000-game heads-up fit in under 2 s.
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

from arena.tournament.ratings import ELO_PER_NAT, RatingTable, expected_score, fit_ratings
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


def dealt_games(
    truth: dict[str, float], games: int, players: int, rng: random.Random
) -> list[dict]:
    """Games in deal groups, as arena schedules them: each deal is played once
    per seat rotation, and the games of a group move together.  Each game is
    Plackett-Luce, drawn as the order of log-strength plus Gumbel noise; for
    half of the bots of a deal (those the deal suits, or does not) the noise
    is the same in every game of the group.  Each game alone is still exactly
    Plackett-Luce (Bradley-Terry heads-up), so the fit is consistent and only
    the games' independence is lost."""
    bots = sorted(truth)
    log_strength = {bot: elo / ELO_PER_NAT for bot, elo in truth.items()}
    records = []
    for deal in range(games // players):
        seats = rng.sample(bots, players)
        kept = {bot: _gumbel(rng) for bot in seats if rng.random() < 0.5}
        for turn in range(players):
            seating = seats[turn:] + seats[:turn]
            key = {b: log_strength[b] + (kept[b] if b in kept else _gumbel(rng)) for b in seating}
            finish = sorted(seating, key=key.__getitem__, reverse=True)
            record = _record(len(records), seating, [finish.index(b) + 1 for b in seating])
            record["group"] = f"deal{deal}"
            records.append(record)
    return records


def _gumbel(rng: random.Random) -> float:
    return -math.log(-math.log(1.0 - rng.random()))


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


def games_of(
    truth: dict[str, float], players: int, games: int, rng: random.Random, dealt: bool = False
) -> list[dict]:
    if dealt:
        return dealt_games(truth, games, players, rng)
    if players == 2:
        return heads_up_games(truth, games, rng)
    return plackett_luce_games(truth, games, players, rng)


def measure_fit(
    label: str, truth: dict[str, float], records: list[dict], repeat: int
) -> dict[str, Any]:
    seconds = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        table = fit_ratings(records)
        seconds = min(seconds, time.perf_counter() - start)
    model = fit_ratings(records, robust=False)
    rated = [r for r in table.ratings if r.elo is not None]
    errors = [r.elo - truth[r.bot] for r in rated]
    return {
        "run": label,
        "bots": len(truth),
        "games": len(records),
        "seconds": round(seconds, 3),
        "max_error": round(max(abs(e) for e in errors), 1),
        "rms_error": round(math.sqrt(sum(e * e for e in errors) / len(errors)), 1),
        "inside_ci95": round(_inside(table, truth)[0] / len(rated), 3),
        "inside_ci95_model": round(_inside(model, truth)[0] / len(rated), 3),
        "unrated": len(table.ratings) - len(rated),
    }


def _inside(table: RatingTable, truth: dict[str, float]) -> tuple[int, float]:
    """Truths inside their bot's 95% interval, and the sum of the half-widths.

    The truth is re-centred on the rated bots, as the fit is.
    """
    rated = [r for r in table.ratings if r.elo is not None and r.ci95 is not None]
    shift = 1500.0 - sum(truth[r.bot] for r in rated) / len(rated)
    inside = sum(1 for r in rated if abs(r.elo - truth[r.bot] - shift) <= r.ci95)
    return inside, sum(r.ci95 for r in rated)


def measure_coverage(
    bots: int, players: int, games: int, tournaments: int, seed: int, dealt: bool = False
) -> dict[str, Any]:
    """Share of true ratings inside the 95% intervals over many seeded tournaments."""
    inside = {"model": 0, "robust": 0}
    width = {"model": 0.0, "robust": 0.0}
    scored = left_out = 0
    for k in range(tournaments):
        rng = random.Random(f"{seed}-{bots}-{players}-{games}-{dealt}-{k}")
        truth = true_ratings(bots, rng)
        records = games_of(truth, players, games, rng, dealt)
        tables = {"model": fit_ratings(records, robust=False), "robust": fit_ratings(records)}
        if any(
            len(t.ratings) < bots or any(r.ci95 is None for r in t.ratings)
            for t in tables.values()
        ):
            left_out += 1
            continue
        scored += bots
        for name, table in tables.items():
            hits, widths = _inside(table, truth)
            inside[name] += hits
            width[name] += widths
    return {
        "players": players,
        "deals": "grouped" if dealt else "independent",
        "bots": bots,
        "games": games,
        "tournaments": tournaments,
        "left_out": left_out,
        "intervals": scored,
        "inside_model": round(inside["model"] / scored, 3),
        "inside_robust": round(inside["robust"] / scored, 3),
        "mean_ci95_model": round(width["model"] / scored, 1),
        "mean_ci95_robust": round(width["robust"] / scored, 1),
    }


# (bots, players, games, dealt): contest scale, then small; the small ones are
# run fifty times as often, since each gives few intervals.  "dealt" games come
# in deal groups whose results are not independent (see dealt_games).
COVERAGE_RUNS = [
    (100, 2, 20_000, False),
    (100, 4, 10_000, False),
    (100, 6, 5_000, False),
    (8, 2, 80, False),
    (8, 4, 30, False),
    (8, 6, 20, False),
    (100, 2, 20_000, True),
    (100, 4, 10_000, True),
    (8, 2, 80, True),
    (8, 4, 32, True),
]


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
    parser.add_argument(
        "--coverage", action="store_true", help="coverage of the intervals over many tournaments"
    )
    parser.add_argument(
        "--tournaments", type=int, default=20,
        help="tournaments per 100-bot coverage run (50 times as many for 8 bots)",
    )
    parser.add_argument("--schedule-bots", type=int, default=1000)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    truth = true_ratings(args.bots, rng)
    fits = [measure_fit("heads-up", truth, heads_up_games(truth, args.games, rng), args.repeat)]
    if args.multi:
        records = plackett_luce_games(truth, args.games, 4, rng)
        fits.append(measure_fit("4-player (Plackett-Luce)", truth, records, args.repeat))
    schedule = measure_schedule(args.schedule_bots, args.repeat)
    coverage = []
    if args.coverage:
        for bots, players, games, dealt in COVERAGE_RUNS:
            tournaments = args.tournaments * (1 if bots >= 100 else 50)
            coverage.append(measure_coverage(bots, players, games, tournaments, args.seed, dealt))

    print(tabulate(fits, headers="keys", tablefmt="simple"))
    print()
    print(tabulate([schedule], headers="keys", tablefmt="simple"))
    if coverage:
        print()
        print(tabulate(coverage, headers="keys", tablefmt="simple"))
    verdict = "meets" if fits[0]["seconds"] < TARGET_SECONDS else "MISSES"
    print(f"\nheads-up fit {verdict} the {TARGET_SECONDS:g} s target")

    args.json.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "seed": args.seed,
        "fits": fits,
        "schedule": schedule,
        "coverage": coverage,
        "target_seconds": TARGET_SECONDS,
    }
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
