"""Benchmark: complete random games per second of our engine, against coupml.

Plays complete games in-process on one core, every seat answering every
request with a uniformly random legal decision (``random.Random(seed)``), for
2, 4 and 6 players with our engine (``arena.engine.game.Game``), and 4-player
games with coupml in the same run for comparison.  Prints a table (games,
seconds, games/s, decisions/s, mean turns and decisions per game) and writes
everything to a JSON file.

The figure is the ratio ours/coupml at 4 players, measured interleaved: the
two engines alternate in short segments of CPU time (``--pairs`` pairs of
``--segment`` seconds each, ABBA order), each pair gives a ratio of games per
CPU second, and the median is printed with its quartiles.  On a shared machine
the table's back-to-back figures can drift apart (one such ratio came out at
0.81, 0.98 and 1.73 in three runs); the interleaved one holds.

    python bench/engine.py                  # ~5 s per measurement, about 30 s in all
    python bench/engine.py --seconds 2 --variant inquisitor --json /tmp/e.json
    python bench/engine.py --profile        # also cProfile a 4-player run
    python bench/engine.py --read-events    # our driver reads the events, as the referee does

The coupml comparison needs ``pip install coupml`` (not a project dependency);
without it the script says so on one line and skips it.  See
bench/coupml_baseline.py for how coupml is driven and which rules it skips.

Not a test: the figures depend on the machine.  Two-player games use the
engine's default setup, which is the draft.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tabulate import tabulate

from arena.engine.cards import DEFAULT_VARIANT, VARIANTS
from arena.engine.game import Game

try:  # run as a script (python bench/engine.py) or as a module
    from referee_overhead import cpu_model
except ImportError:  # pragma: no cover
    from bench.referee_overhead import cpu_model

try:  # run as a script (python bench/engine.py) or as a module (python -m bench.engine)
    import coupml_baseline as baseline
except ImportError:  # pragma: no cover
    from bench import coupml_baseline as baseline

Run = baseline.Run

HERE = Path(__file__).resolve().parent
DEFAULT_JSON = HERE / "out" / "engine.json"
PLAYER_COUNTS = (2, 4, 6)
COUPML_PLAYERS = 4
TURN_LIMIT = 1000


def play_one(players: int, seed: int, variant: str, choice: Callable, stats: dict) -> int:
    """Play one complete random game of our engine; return its decisions."""
    game = Game.new(players=players, seed=seed, variant=variant, draft=None,
                    turn_limit=TURN_LIMIT)
    decide = game.decide
    legal = game.legal
    decisions = 0
    while not game.over:
        for seat in game.request.seats:
            decide(seat, choice(legal(seat)))
            decisions += 1
    result = game.result
    # Check the game really finished: one place per seat, a winner unless the turn limit hit.
    if len(result.placements) != players or sorted(result.placements)[0] != 1:
        raise RuntimeError(f"odd placements {result.placements} in game seed {seed}")
    if result.winner is None:
        stats["no_winner"] += 1
    else:
        stats["wins"][result.winner] += 1
    stats["turns"] += result.turns
    return decisions


def play_one_reading(players: int, seed: int, variant: str, choice: Callable,
                     stats: dict) -> int:
    """play_one, reading the new events after every decision as the referee
    and the environment do (``Game.events`` builds them when first read)."""
    game = Game.new(players=players, seed=seed, variant=variant, draft=None,
                    turn_limit=TURN_LIMIT)
    decide = game.decide
    legal = game.legal
    decisions = sent = 0
    while not game.over:
        for seat in game.request.seats:
            decide(seat, choice(legal(seat)))
            decisions += 1
            new = game.events[sent:]
            sent += len(new)
    result = game.result
    if len(result.placements) != players or sorted(result.placements)[0] != 1:
        raise RuntimeError(f"odd placements {result.placements} in game seed {seed}")
    stats["turns"] += result.turns
    return decisions


def ours_run(players: int, seconds: float, seed: int, variant: str, warmup: float) -> Run:
    rng = random.Random(seed)
    choice = rng.choice
    scratch = {"turns": 0, "no_winner": 0, "wins": [0] * players}
    end = time.perf_counter() + warmup
    game_seed = seed * 1_000_003
    while time.perf_counter() < end:
        game_seed += 1
        play_one(players, game_seed, variant, choice, scratch)

    stats = {"turns": 0, "no_winner": 0, "wins": [0] * players}
    games = decisions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        game_seed += 1
        decisions += play_one(players, game_seed, variant, choice, stats)
        games += 1
        now = time.perf_counter()
        if now >= deadline:
            break
    return Run("ours", players, games, now - start, decisions, stats["turns"], stats["wins"],
               no_winner=stats["no_winner"])


class _Segments:
    """Plays one engine's 4-player random games in segments of CPU time, its
    generator and deal seeds carrying on from one segment to the next."""

    def __init__(self, play: Callable[[], int]) -> None:
        self.play = play  # plays one game; returns its decisions

    def run(self, cpu_seconds: float) -> tuple[int, float]:
        """(games, CPU seconds) of one segment of at least ``cpu_seconds``."""
        start = time.process_time()
        games = 0
        while True:
            self.play()
            games += 1
            used = time.process_time() - start
            if used >= cpu_seconds:
                return games, used


def interleaved_ratio(seed: int, variant: str, pairs: int, segment: float,
                      read_events: bool = False) -> dict | None:
    """ours/coupml games per CPU second at 4 players, A/B in short segments.

    The two engines alternate (ABBA...) in segments of ``segment`` CPU seconds,
    so both see the same machine; each pair of segments gives one ratio, and
    the median of the ratios is the figure.  CPU time (``time.process_time``),
    not wall time, so time the process spends preempted does not count.  None
    without coupml.  ``read_events``: our driver reads the new events after
    every decision (play_one_reading).
    """
    if not baseline.available():
        return None
    players = COUPML_PLAYERS
    rng = random.Random(seed)
    stats = {"turns": 0, "no_winner": 0, "wins": [0] * players}
    game_seed = [seed * 1_000_003]
    play = play_one_reading if read_events else play_one

    def ours() -> int:
        game_seed[0] += 1
        return play(players, game_seed[0], variant, rng.choice, stats)

    source, pick = baseline._make_rng(seed, "random")
    wins = [0] * players

    def theirs() -> int:
        return baseline._play_one(players, source, pick, wins)[0]

    engines = [_Segments(ours), _Segments(theirs)]
    for engine in engines:  # warm-up
        engine.run(segment)
    ratios = []
    totals = [[0, 0.0], [0, 0.0]]
    for i in range(pairs):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        rates = [0.0, 0.0]
        for k in order:
            games, used = engines[k].run(segment)
            rates[k] = games / used
            totals[k][0] += games
            totals[k][1] += used
        ratios.append(rates[0] / rates[1])
    ratios.sort()
    return {
        "pairs": pairs, "segment_cpu_seconds": segment,
        "median": round(statistics.median(ratios), 3),
        "quartiles": [round(ratios[len(ratios) // 4], 3), round(ratios[3 * len(ratios) // 4], 3)],
        "ours_games_per_cpu_second": round(totals[0][0] / totals[0][1], 1),
        "coupml_games_per_cpu_second": round(totals[1][0] / totals[1][1], 1),
    }


def profile_ours(players: int, seconds: float, seed: int, variant: str, top: int,
                 out: Path) -> list[dict]:
    """cProfile ``seconds`` of random games; print and return the top functions by own time."""
    rng = random.Random(seed)
    stats_acc = {"turns": 0, "no_winner": 0, "wins": [0] * players}
    profiler = cProfile.Profile()
    games = 0
    profiler.enable()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        play_one(players, seed + games, variant, rng.choice, stats_acc)
        games += 1
    profiler.disable()
    out.parent.mkdir(parents=True, exist_ok=True)
    profiler.dump_stats(out)
    st = pstats.Stats(profiler)
    total = st.total_tt
    rows = []
    for (filename, line, func), (_cc, ncalls, tottime, cumtime, _callers) in st.stats.items():
        rows.append({
            "function": f"{_short(filename)}:{line}({func})",
            "calls": ncalls,
            "own_s": tottime,
            "own_pct": 100 * tottime / total,
            "cum_pct": 100 * cumtime / total,
        })
    rows.sort(key=lambda r: r["own_s"], reverse=True)
    rows = rows[:top]
    print(f"\ncProfile, {players} players, {games} games in {seconds:.1f} s "
          f"(profiled total {total:.2f} s; {out})")
    print(tabulate([[r["function"], r["calls"], f"{r['own_pct']:.1f}%", f"{r['cum_pct']:.1f}%"]
                    for r in rows],
                   headers=["function (by own time)", "calls", "own", "cumulative"],
                   disable_numparse=True))
    return rows


def _short(filename: str) -> str:
    for marker in ("/arena/", "/bench/", "/site-packages/", "/lib/python"):
        i = filename.rfind(marker)
        if i >= 0:
            return filename[i + 1:]
    return filename


def _row(run: Run) -> dict:
    return {
        "engine": run.engine,
        "players": run.players,
        "games": run.games,
        "seconds": round(run.seconds, 3),
        "games_per_second": round(run.games_per_second, 1),
        "decisions_per_second": round(run.decisions_per_second, 1),
        "mean_turns": round(run.turns / run.games, 2),
        "mean_decisions": round(run.decisions / run.games, 2),
        "wins_by_seat": run.wins,
        "turn_limit_games": run.no_winner,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="timed seconds per measurement (default 5)")
    parser.add_argument("--warmup", type=float, default=0.5,
                        help="untimed warm-up seconds before each measurement (default 0.5)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON,
                        help="where to write the results (default bench/out/engine.json)")
    parser.add_argument("--variant", choices=VARIANTS, default=DEFAULT_VARIANT)
    parser.add_argument("--players", type=int, nargs="+", default=list(PLAYER_COUNTS),
                        help="player counts for our engine (default 2 4 6)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-coupml", action="store_true",
                        help="measure only our engine (e.g. under a sampling profiler)")
    parser.add_argument("--no-numpy-row", action="store_true",
                        help="skip coupml driven by numpy's RandomState, as in its README")
    parser.add_argument("--pairs", type=int, default=30,
                        help="A/B segment pairs for the interleaved ours/coupml ratio")
    parser.add_argument("--segment", type=float, default=0.2,
                        help="CPU seconds per engine per segment (default 0.2)")
    parser.add_argument("--read-events", action="store_true",
                        help="in the interleaved ratio, read the new events after every "
                             "decision, as the referee and the environment do")
    parser.add_argument("--profile", action="store_true",
                        help="also cProfile a 4-player run and print the top functions")
    parser.add_argument("--profile-top", type=int, default=15)
    args = parser.parse_args(argv)

    runs: list[Run] = []
    for players in args.players:
        runs.append(ours_run(players, args.seconds, args.seed, args.variant, args.warmup))

    coupml_note = None
    if args.no_coupml:
        coupml_note = "skipped (--no-coupml)"
    elif not baseline.available():
        coupml_note = baseline.INSTALL_HINT
        print(coupml_note)
    else:
        if args.variant != DEFAULT_VARIANT:
            print(f"note: coupml only plays the ambassador variant; ours plays {args.variant}")
        run = baseline.coupml_run(COUPML_PLAYERS, args.seconds, args.seed, warmup=args.warmup)
        assert run is not None
        runs.append(run)
        if not args.no_numpy_row:
            try:
                import numpy  # noqa: F401
            except ImportError:
                pass
            else:
                run = baseline.coupml_run(COUPML_PLAYERS, args.seconds, args.seed, rng="numpy",
                                          warmup=args.warmup)
                assert run is not None
                runs.append(run)

    rows = [_row(r) for r in runs]
    print(f"\nComplete random games, in-process, one core, variant {args.variant}, "
          f"{args.seconds:g} s each after {args.warmup:g} s warm-up")
    print(tabulate(
        [[r["engine"], r["players"], r["games"], f"{r['seconds']:.2f}",
          f"{r['games_per_second']:,.0f}", f"{r['decisions_per_second']:,.0f}",
          f"{r['mean_turns']:.1f}", f"{r['mean_decisions']:.1f}"] for r in rows],
        headers=["engine", "players", "games", "seconds", "games/s", "decisions/s",
                 "mean turns", "mean decisions/game"],
        colalign=("left", "right", "right", "right", "right", "right", "right", "right"),
        disable_numparse=True,
    ))
    limited = [r for r in rows if r["turn_limit_games"]]
    for r in limited:
        print(f"note: {r['turn_limit_games']} {r['players']}-player games of ours hit the "
              f"{TURN_LIMIT}-turn limit")

    ratios = {}
    ours4 = next((r for r in rows if r["engine"] == "ours" and r["players"] == 4), None)
    if ours4 is not None:
        for r in rows:
            if r["engine"].startswith("coupml") and r["players"] == 4:
                ratios[r["engine"]] = {
                    "games": round(ours4["games_per_second"] / r["games_per_second"], 3),
                    "decisions": round(ours4["decisions_per_second"]
                                       / r["decisions_per_second"], 3),
                }
    for name, ratio in ratios.items():
        print(f"back to back (one measurement each, as the table): ours/{name} at 4 players "
              f"{ratio['games']:.2f}x games/s, {ratio['decisions']:.2f}x decisions/s")
    interleaved = None
    if not args.no_coupml and baseline.available():
        interleaved = interleaved_ratio(args.seed, args.variant, args.pairs, args.segment,
                                        args.read_events)
        assert interleaved is not None
        low, high = interleaved["quartiles"]
        print(f"interleaved A/B ({interleaved['pairs']} pairs of {args.segment:g} CPU s each): "
              f"ours/coupml at 4 players = {interleaved['median']:.2f}x games per CPU second "
              f"(quartiles {low:.2f}-{high:.2f}; "
              f"{interleaved['ours_games_per_cpu_second']:,.0f} vs "
              f"{interleaved['coupml_games_per_cpu_second']:,.0f}); aim 2x"
              + ("; ours reading the new events after every decision" if args.read_events
                 else ""))

    profile = None
    if args.profile:
        profile = profile_ours(4, args.seconds, args.seed, args.variant, args.profile_top,
                               args.json.with_name("engine-4p.prof"))

    report = {
        "benchmark": "engine",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "seconds": args.seconds,
        "warmup": args.warmup,
        "seed": args.seed,
        "variant": args.variant,
        "turn_limit": TURN_LIMIT,
        "coupml": baseline.version(),
        "coupml_note": coupml_note,
        "runs": rows,
        "ratio_ours_over_coupml_4p": ratios,
        "interleaved_ratio_4p": interleaved,
        "interleaved_reads_events": args.read_events,
        "profile_4p": profile,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
