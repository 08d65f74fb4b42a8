"""Benchmark: the results site's replays, CPU per game, this arena against another.

`arena run` ends by writing its results site, and the site holds the replay
of every game: each record is read, replayed through the engine, passed
through the observer for every seat, folded into a table per view and
written (``arena.site.build.write_replays``).  This measures that step alone:
a tournament folder is played once (`arena run` of copies of
``bench/bots/fast.c``, which answers every request at once, as in
``bench/run_cost.py``), then in each segment ``write_replays`` writes the
site's replays of that folder into a new folder, in a subprocess of this
checkout and one of ``--compare TREE`` (the order swapped every segment),
each reporting its CPU time (user + system: creating files costs the
kernel) per game.  The ratio is the median of the per-segment ratios.

    python bench/site_replays.py --compare /path/to/other/arena        # ~1 min
    python bench/site_replays.py --players 4 --games 200 --compare TREE # 4-player games
    python bench/site_replays.py --folder DIR --compare TREE            # a folder of yours

Not a test: the figures depend on the machine and on its other load.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from referee_overhead import OUT, build_c_bot, machine, tree_env, write_json  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent  # this checkout of arena
DEFAULT_JSON = OUT / "site_replays.json"

# Run in a subprocess with PYTHONPATH=TREE: the replays of FOLDER into OUT.
WORKER = """\
import json, sys, time
from pathlib import Path
from arena.site import build, data
folder, out = Path(sys.argv[1]), Path(sys.argv[2])
(out / "replays").mkdir(parents=True)
(out / "data").mkdir()
read = data.read_folder(folder)
# as the site does: fewer games a file for bigger tables (where the tree has it)
options = {"pack": build.replay_pack(read.meta)} if hasattr(build, "replay_pack") else {}
started = time.process_time()
made = build.write_replays(folder, out, read.rows, **options)
cpu = time.process_time() - started
print(json.dumps({"games": made, "cpu": cpu}))
"""


def play(folder: Path, players: int, games: int, seed: int) -> None:
    """A tournament of fast C bots, played by this checkout's arena."""
    bots = [build_c_bot("fast", f"fast_{chr(ord('a') + k)}") for k in range(players)]
    subprocess.run([sys.executable, "-m", "arena", "run", *map(str, bots), "--players",
                    str(players), "--games", str(games), "--seed", str(seed), "--out",
                    str(folder)], check=True, env=tree_env(ROOT), stdout=subprocess.DEVNULL)


def write_replays(tree: Path, folder: Path, scratch: Path) -> float:
    """CPU microseconds per game of one ``write_replays`` of ``folder`` by ``tree``."""
    out = Path(tempfile.mkdtemp(prefix="site-", dir=scratch))
    done = subprocess.run([sys.executable, "-c", WORKER, str(folder), str(out / "site")],
                          check=True, env=tree_env(tree), cwd=out, capture_output=True, text=True)
    result = json.loads(done.stdout)
    shutil.rmtree(out, ignore_errors=True)
    return float(result["cpu"]) / result["games"] * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000,
                        help="games per table of the tournament played (default 1000)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--folder", type=Path, help="a tournament folder with records instead")
    parser.add_argument("--segments", type=int, default=6)
    parser.add_argument("--compare", metavar="TREE", type=Path,
                        help="another checkout of arena, measured in every segment")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="arena-site-replays-") as tmp:
        scratch = Path(tmp)
        folder = args.folder
        if folder is None:
            folder = scratch / "tournament"
            play(folder, args.players, args.games, args.seed)
        records = len(list((folder / "records").glob("*.json.gz")))
        trees: list[tuple[str, Path]] = [("this arena", ROOT)]
        if args.compare is not None:
            trees.append((f"--compare {args.compare}", args.compare))
        figures: dict[str, list[float]] = {name: [] for name, _ in trees}
        ratios: list[float] = []
        for segment in range(args.segments):
            order = trees if segment % 2 == 0 else trees[::-1]
            for name, tree in order:
                figures[name].append(write_replays(tree, folder, scratch))
            if len(trees) == 2:
                ratios.append(figures[trees[0][0]][-1] / figures[trees[1][0]][-1])
            shown = ", ".join(f"{name} {figures[name][-1]:.0f} us/game" for name, _ in trees)
            print(f"segment {segment + 1}/{args.segments}: {shown}", flush=True)

    played = f"{args.players}-player games" if args.folder is None else f"games of {args.folder}"
    print(f"\n{args.segments} segments: the replays of {records} {played}")
    rows = [[name, f"{statistics.median(values):.0f}",
             f"{min(values):.0f}-{max(values):.0f}"] for name, values in figures.items()]
    print(tabulate(rows, headers=["write_replays", "CPU us/game (median)", "segments"]))
    report: dict[str, Any] = {"benchmark": "site_replays", **machine(), "games": records,
                              "players": args.players, "segments": args.segments,
                              "us_per_game": figures}
    if ratios:
        ratio = statistics.median(ratios)
        print(f"\nthis arena / --compare: {ratio:.2f}x CPU per game (median of "
              f"{len(ratios)} segments: {', '.join(f'{r:.2f}' for r in ratios)})")
        report["ratio"] = ratio
        report["ratios"] = ratios
    write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
