"""Benchmark: the referee's own Python per decision, this arena against another.

``arena.referee.match.play_game`` plays games (heads-up unless
``--players``) against in-process stand-in bots that answer every request
at once with its first legal answer (no pipes, no processes, no kernel), and each game's record is
gzipped as a worker does: what is left is the referee's Python per
decision (the engine, the protocol's lines, the bot's bookkeeping, trio).
A subprocess of this checkout and one of ``--compare TREE`` take turns in
short segments (the order swapped every segment), each reporting its CPU
time per decision; the ratio is the median of the per-segment ratios.

With ``--random`` the stand-ins answer at random (seeded) instead, so
that games have challenges, blocks and every kind of request, where an
opportunity asks several seats at once.

The stand-ins answer before the referee reads, as fast bots on the
referee's CPU do (``bench/run_cost.py``); ``--slow`` makes every answer
miss the first look, so the referee waits for each under its deadline
(the path an answer from another CPU takes).

    python bench/play_path.py --compare /path/to/other/arena          # ~1 min
    python bench/play_path.py --compare TREE --slow
    python bench/play_path.py --compare TREE --players 4 --games 300 --random

Not a test: the figures depend on the machine and on its other load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from referee_overhead import OUT, machine, tree_env, write_json  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent  # this checkout of arena
DEFAULT_JSON = OUT / "play_path.json"

CHILD = """\
import json, sys, time
import trio
from arena.engine.game import GameConfig
from arena.engine.record import gzipped
from arena.protocol import codec
from arena.referee.match import play_game
from arena.referee.player import BotPlayer

games, slow, players = int(sys.argv[1]), sys.argv[2] == "slow", int(sys.argv[3])
pick = __import__("random").Random(1).choice if sys.argv[4] == "random" else None


class StandIn:
    # What BotPlayer and play_game use of a BotProcess; answers at once.
    returncode = None
    limit_hit = None
    usable = True

    def __init__(self):
        self.answer = None

    def output_waiting(self):
        return False

    def send_lines_nowait(self, lines):
        last = lines[-1]
        if last.startswith("request "):
            _, number, rest = last.split(" ", 2)
            tokens = rest.split(" : ", 1)[1].split(" ")
            self.answer = number + " " + (pick(tokens) if pick else tokens[0])
        return True

    def read_line_nowait(self):
        if slow:
            return None
        line, self.answer = self.answer, None
        return line

    async def read_line(self):
        await trio.lowlevel.checkpoint()  # the wait for the answer
        line, self.answer = self.answer, None
        return line

    async def send_lines(self, lines):
        self.send_lines_nowait(lines)

    def log_note(self, text):
        pass

    def reset_cpu(self):
        pass


async def main():
    limits = codec.Limits()
    seats = [BotPlayer(f"bot{seat}", StandIn(), limits) for seat in range(players)]
    config = GameConfig(players)
    for seed in range(50):  # warm the caches of both versions alike
        await play_game(seats, config, seed, limits)
    decisions = 0
    start = time.process_time()
    for seed in range(1000, 1000 + games):
        report = await play_game(seats, config, seed, limits)
        gzipped(report.record)
        decisions += len(report.record.decisions)
    print(json.dumps({"cpu": time.process_time() - start, "decisions": decisions}))


trio.run(main)
"""


def play(tree: Path, games: int, slow: bool, players: int, random: bool) -> float:
    """CPU microseconds per decision of ``tree``'s referee against the stand-ins."""
    # Run elsewhere: python -c puts its working folder first on the path.
    found = json.loads(subprocess.run(
        [sys.executable, "-c", CHILD, str(games), "slow" if slow else "fast", str(players),
         "random" if random else "first"],
        env=tree_env(tree),
        check=True, capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout)
    return float(found["cpu"]) / found["decisions"] * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--compare", metavar="TREE", required=True,
                        help="the other checkout of arena (PYTHONPATH)")
    parser.add_argument("--games", type=int, default=1000, help="games a segment")
    parser.add_argument("--segments", type=int, default=8)
    parser.add_argument("--players", type=int, default=2, help="seats at each table")
    parser.add_argument("--random", action="store_true",
                        help="stand-ins answer at random (seeded), not the first legal answer: "
                             "challenges, blocks, every kind of request")
    parser.add_argument("--slow", action="store_true",
                        help="every answer waited for (not there at the first look)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    trees = {"this arena": ROOT, f"--compare {args.compare}": Path(args.compare).resolve()}
    runs: dict[str, list[float]] = {label: [] for label in trees}
    for segment in range(args.segments):
        order = list(trees.items())
        for label, tree in order if segment % 2 == 0 else order[::-1]:
            runs[label].append(play(tree, args.games, args.slow, args.players, args.random))
        print(f"segment {segment + 1}/{args.segments}: "
              + ", ".join(f"{label} {found[-1]:.2f} us/decision"
                          for label, found in runs.items()), file=sys.stderr)
    mine, other = runs.values()
    ratios = [a / b for a, b in zip(mine, other, strict=True)]
    summary: dict[str, Any] = {label: round(statistics.median(found), 2)
                               for label, found in runs.items()}
    for label, found in runs.items():
        print(f"{label}: {summary[label]:.2f} us of CPU per decision (segments "
              + ", ".join(f"{us:.2f}" for us in found) + ")")
    print(f"this arena / --compare: {statistics.median(ratios):.2f}x (median of "
          f"{len(ratios)} segments: " + ", ".join(f"{r:.2f}" for r in ratios) + ")")
    write_json(args.json, {"benchmark": "play_path", **machine(), "games": args.games,
                           "segments": args.segments, "slow": args.slow, "players": args.players,
                           "random": args.random,
                           "compare": args.compare, "arena": summary, "ratios": ratios})
    return 0


if __name__ == "__main__":
    sys.exit(main())
