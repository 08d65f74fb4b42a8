"""Benchmark: the results folder's CPU per game stored (``Store.append``), A/B.

``arena run`` stores each finished game in the coordinator: its record file
(records/N.json.gz) and its line in games.jsonl, synced to the disk.  This
measures that alone, without the games: the real records of one ``arena
run`` of two fast C bots (made first, into a scratch folder) are stored again
by ``Store.append`` into a new folder, by this checkout and by ``--compare
TREE`` in turn, in short segments (the cost of creating a file on a shared
disk drifts from minute to minute), each in a subprocess that reports its own
CPU time (user and system: the kernel's work of creating, writing and
syncing files is most of it).  The figure is CPU microseconds per game and
the ratio of the two, the median of the segments.

    python bench/store_cost.py --compare /path/to/other/arena   # ~1 min
    python bench/store_cost.py --quick --compare TREE

Not a test: the figures depend on the disk and on its other load.
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
from referee_overhead import (  # noqa: E402
    OUT,
    OthersLoad,
    build_c_bot,
    machine,
    tree_env,
    write_json,
)

ROOT = Path(__file__).resolve().parent.parent  # this checkout of arena
DEFAULT_JSON = OUT / "store_cost.json"

CHILD = """\
import json, resource, sys
from pathlib import Path
from arena.tournament.store import Store
source, out, n = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
lines = [json.loads(line) for line in (source / "games.jsonl").read_text().splitlines()]
played = [(line, (source / line.pop("record")).read_bytes()) for line in lines]
games = (played * (n // len(played) + 1))[:n]
store = Store(out)
store.open(json.loads((source / "tournament.json").read_text()))
before = resource.getrusage(resource.RUSAGE_SELF)
for line, record in games:
    store.append(dict(line), record, store.reserve())
store.close()
after = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"user": after.ru_utime - before.ru_utime,
                  "system": after.ru_stime - before.ru_stime}))
"""


def store_games(tree: Path, source: Path, scratch: Path, games: int) -> dict[str, float]:
    """CPU microseconds per game for ``tree``'s Store to store ``games`` games."""
    out = Path(tempfile.mkdtemp(prefix="store-", dir=scratch)) / "results"
    found = json.loads(subprocess.run([sys.executable, "-c", CHILD, str(source), str(out),
                                       str(games)], env=tree_env(tree), check=True,
                                      capture_output=True, text=True, cwd=scratch).stdout)
    return {"us": (found["user"] + found["system"]) / games * 1e6,
            "user_us": found["user"] / games * 1e6, "system_us": found["system"] / games * 1e6}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--compare", metavar="TREE", required=True,
                        help="the other checkout of arena (PYTHONPATH)")
    parser.add_argument("--games", type=int, default=1000, help="games stored a segment")
    parser.add_argument("--segments", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="4 segments of 500 games")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.segments = 500, 4
    trees = {"this arena": ROOT, f"--compare {args.compare}": Path(args.compare).resolve()}
    bots = [build_c_bot("fast", "fast_a"), build_c_bot("fast", "fast_b")]
    runs: dict[str, list[dict[str, float]]] = {label: [] for label in trees}
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp, OthersLoad() as others:
        source = Path(tmp) / "source"
        subprocess.run([sys.executable, "-m", "arena", "run", *map(str, bots), "--games", "200",
                        "--seed", "1", "--out", str(source)], check=True, cwd=tmp,
                       env=tree_env(ROOT),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for segment in range(args.segments):
            order = list(trees.items())
            for label, tree in order if segment % 2 == 0 else order[::-1]:
                runs[label].append(store_games(tree, source, Path(tmp), args.games))
            print(f"segment {segment + 1}/{args.segments}: "
                  + ", ".join(f"{label} {found[-1]['us']:.0f} us/game"
                              for label, found in runs.items()), file=sys.stderr)
    mine, other = runs.values()
    ratios = [a["us"] / b["us"] for a, b in zip(mine, other, strict=True)]
    summary: dict[str, Any] = {
        label: {key: round(statistics.median(run[key] for run in found), 1) for key in found[0]}
        for label, found in runs.items()}
    for label, found in runs.items():
        s = summary[label]
        print(f"{label}: {s['us']:.0f} us of CPU per game stored (user {s['user_us']:.0f} + "
              f"system {s['system_us']:.0f}; segments "
              + ", ".join(f"{run['us']:.0f}" for run in found) + ")")
    print(f"this arena / --compare: {statistics.median(ratios):.2f}x (median of "
          f"{len(ratios)} segments: " + ", ".join(f"{r:.2f}" for r in ratios) + ")")
    print(f"machine: other processes used {others.share:.0%} of the CPUs during the run")
    write_json(args.json, {"benchmark": "store_cost", **machine(), "games": args.games,
                           "segments": args.segments, "compare": args.compare,
                           "others_cpu_share": others.share, "arena": summary,
                           "ratios": ratios})
    return 0


if __name__ == "__main__":
    sys.exit(main())
