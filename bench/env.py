"""Benchmark: random games/s through the PettingZoo AEC API against the bare engine.

Both play 4-player games (ambassador, plain deal) in-process with uniformly
random legal answers from a ``random.Random``:

- **engine**: ``arena.engine.game.Game`` driven directly (``legal``,
  ``decide``), as ``bench/engine.py`` drives it;
- **aec**: ``arena.env.CoupEnv`` through the AEC API as a learning loop uses
  it: ``agent_iter()``, ``last()`` (each agent's observation vector and
  action mask), a random index among the mask's ones, ``step()``;
- **aec (wrapped)**: the same through ``arena.env.env()``: the order-enforcing
  wrapper, arena's subclass of PettingZoo's (same checks, fewer calls);
- **aec (PettingZoo's wrapper)**: the same through PettingZoo's own
  ``OrderEnforcingWrapper``, for comparison.

They are measured interleaved in short segments (engine, aec, wrapped,
PettingZoo's wrapper, engine, ...) on a shared, noisy machine, and the ratios are of the medians.
Goal: aec >= 1/4 of the engine's games/s.

    python bench/env.py                     # ~1.5 min
    python bench/env.py --rounds 5 --seconds 0.5
    python bench/env.py --cpu               # segments timed in CPU seconds

``--cpu`` times each segment by this process's CPU time (``time.process_time``)
instead of the wall clock: on a shared machine the other processes' load then
counts less (their effect on the caches still does).

Needs the ``rl`` extra (pettingzoo, gymnasium, numpy).  Not a test.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from pettingzoo.utils.wrappers import OrderEnforcingWrapper
from tabulate import tabulate

from arena.engine.game import Game
from arena.env import CoupEnv, env

PLAYERS = 4
DEFAULT_JSON = Path(__file__).resolve().parent / "out" / "env.json"


clock = time.perf_counter  # or time.process_time: --cpu


def engine_games(seconds: float, rng: random.Random) -> float:
    games = 0
    start = clock()
    while clock() - start < seconds:
        game = Game.new(PLAYERS, rng.getrandbits(64))
        while not game.over:
            request = game.request
            assert request is not None
            for seat in request.seats:
                legal = game.legal(seat)
                if legal:
                    game.decide(seat, rng.choice(legal))
                    break
        games += 1
    return games / (clock() - start)


def aec_games(make: Callable[[], object]) -> Callable[[float, random.Random], float]:
    def measure(seconds: float, rng: random.Random) -> float:
        aec = make()
        aec.reset(seed=rng.getrandbits(32))  # type: ignore[attr-defined]
        games = 0
        start = clock()
        while clock() - start < seconds:
            aec.reset()  # type: ignore[attr-defined]
            for _agent in aec.agent_iter():  # type: ignore[attr-defined]
                observation, _reward, terminated, truncated, _info = aec.last()  # type: ignore
                if terminated or truncated:
                    aec.step(None)  # type: ignore[attr-defined]
                else:
                    legal = observation["action_mask"].nonzero()[0]
                    aec.step(int(legal[rng.randrange(len(legal))]))  # type: ignore
            games += 1
        return games / (clock() - start)

    return measure


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--seconds", type=float, default=1.0, help="per segment")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--cpu", action="store_true",
                        help="time segments in CPU seconds of this process, not wall seconds")
    args = parser.parse_args(argv)
    global clock
    clock = time.process_time if args.cpu else time.perf_counter
    runs = {"engine": engine_games,
            "aec": aec_games(lambda: CoupEnv(players=PLAYERS)),
            "aec (wrapped)": aec_games(lambda: env(players=PLAYERS)),
            "aec (PettingZoo's wrapper)": aec_games(
                lambda: OrderEnforcingWrapper(CoupEnv(players=PLAYERS)))}
    rates: dict[str, list[float]] = {name: [] for name in runs}
    rng = random.Random(2026)
    for measure in runs.values():
        measure(0.2, rng)  # warm-up
    for _ in range(args.rounds):
        for name, measure in runs.items():
            rates[name].append(measure(args.seconds, rng))
    engine = statistics.median(rates["engine"])
    rows = [{"driver": name, "games/s": round(statistics.median(r)),
             "min": round(min(r)), "max": round(max(r)),
             "/ engine": round(statistics.median(r) / engine, 3)} for name, r in rates.items()]
    print(f"{PLAYERS} players, {args.rounds} interleaved segments of {args.seconds} "
          f"{'CPU ' if args.cpu else ''}s each; medians")
    print(tabulate(rows, headers="keys", tablefmt="github"))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"rows": rows, "rates": rates}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
