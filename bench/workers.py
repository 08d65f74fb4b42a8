"""Benchmark: many bots, worker processes, and a Dask cluster.

Each comparison runs real ``arena run`` commands as subprocesses with fast C
bots (bench/bots/fast.c: they answer at once, so the referee is the cost),
A and B interleaved in short segments in one run of this script, each into a
fresh ``--out``.  games/s is arena's own figure (its progress line: games
played over seconds of play, from the moment the workers are up to the last
game); a comparison adds up games and play seconds over its segments.

* **many bots**: 100 bots against 10 bots (``--games 2``: 9,900 and 90
  games; copies of one binary, named fast, fast-2, ...), segments
  10, 100, 10, 100, ...  Target: >= 0.7x.  Also the bot processes started,
  against bots x worker slots.
* **workers**: two bots, ``--workers 2`` against ``--workers 1``.  Target:
  >= 1.7x on 2 CPUs.
* **dask** (with ``--dask``, needs ``distributed``): two bots on a local
  scheduler (127.0.0.1) with 2 ``dask worker`` processes against 1 (each
  ``--nthreads 1``), ``arena run --cluster``; a ratio.

    python bench/workers.py                 # ~6 min on 2 busy cores
    python bench/workers.py --quick         # ~1 min
    python bench/workers.py --dask          # adds the cluster comparison

Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

try:  # run as a script (python bench/workers.py) or as a module
    import referee_overhead as common
except ImportError:  # pragma: no cover
    from bench import referee_overhead as common

DEFAULT_JSON = common.OUT / "workers.json"
TARGET_MANY = 0.7
TARGET_WORKERS = 1.7
_PROGRESS = re.compile(r"(\d+)/(\d+) games, ([\d.]+) games/s")
_STARTS = re.compile(r"bot processes started: (\d+)")


def arena_run(bots: list[Path], out: Path, *options: str) -> dict[str, Any]:
    argv = [sys.executable, "-m", "arena", "run", *map(str, bots), "--seed", "1",
            "--out", str(out), *options]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=out.parent)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"bench: {' '.join(argv[3:6])}... failed ({done.returncode})")
    played, total, rate = _PROGRESS.findall(done.stderr)[-1]
    if played != total:
        raise SystemExit(f"bench: played {played} of {total} games")
    return {"games": int(played), "games_per_second": float(rate),
            "play_seconds": int(played) / float(rate), "wall_seconds": round(wall, 2),
            "process_starts": int(_STARTS.findall(done.stderr)[-1])}


def interleave(label_a: str, run_a: Any, label_b: str, run_b: Any, rounds: int,
               a_per_round: int = 1) -> dict[str, Any]:
    """Rounds of A (``a_per_round`` times) then B; totals of games and play seconds."""
    segments: dict[str, list[dict[str, Any]]] = {label_a: [], label_b: []}
    for r in range(rounds):
        for k in range(a_per_round):
            segments[label_a].append(run_a(f"{r}.{k}"))
        segments[label_b].append(run_b(f"{r}"))
        print(f"  round {r + 1}/{rounds}: {label_a} "
              f"{segments[label_a][-1]['games_per_second']:.1f} games/s, {label_b} "
              f"{segments[label_b][-1]['games_per_second']:.1f} games/s", file=sys.stderr)
    rates = {}
    for label, runs in segments.items():
        games = sum(r["games"] for r in runs)
        seconds = sum(r["play_seconds"] for r in runs)
        rates[label] = {"games": games, "play_seconds": round(seconds, 2),
                        "games_per_second": round(games / seconds, 1),
                        "process_starts": [r["process_starts"] for r in runs]}
    return {"segments": segments, "rates": rates,
            "ratio": round(rates[label_b]["games_per_second"]
                           / rates[label_a]["games_per_second"], 2)}


def many_bots(fast: Path, scratch: Path, many: int, few: int, workers: int,
              rounds: int) -> dict[str, Any]:
    def run(n: int) -> Any:
        return lambda tag: arena_run([fast] * n, scratch / f"many{n}-{tag}", "--games", "2",
                                     "--workers", str(workers))

    result = interleave(f"{few} bots", run(few), f"{many} bots", run(many), rounds,
                        a_per_round=3)
    result.update({"what": f"{many} bots / {few} bots, --games 2, --workers {workers}",
                   "target": TARGET_MANY, "meets_target": result["ratio"] >= TARGET_MANY,
                   "bots_x_slots": many * workers})
    return result


def two_workers(fast: Path, scratch: Path, games: int, rounds: int) -> dict[str, Any]:
    def run(w: int) -> Any:
        return lambda tag: arena_run([fast, fast], scratch / f"w{w}-{tag}", "--games",
                                     str(games), "--workers", str(w))

    result = interleave("--workers 1", run(1), "--workers 2", run(2), rounds)
    result.update({"what": f"two bots, {games} games, --workers 2 / --workers 1",
                   "target": TARGET_WORKERS, "meets_target": result["ratio"] >= TARGET_WORKERS})
    return result


def dask_workers(fast: Path, scratch: Path, games: int, rounds: int) -> dict[str, Any]:
    from arena.tournament.cluster import local_cluster

    def run(n: int) -> Any:
        def one(tag: str) -> dict[str, Any]:
            with local_cluster(n, scratch=scratch) as (address, _):
                return arena_run([fast, fast], scratch / f"dask{n}-{tag}", "--games",
                                 str(games), "--cluster", address)
        return one

    result = interleave("1 Dask worker", run(1), "2 Dask workers", run(2), rounds)
    result["what"] = f"two bots, {games} games, --cluster with 2 / 1 dask workers"
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--many", type=int, default=100, help="bots of the big run")
    parser.add_argument("--few", type=int, default=10, help="bots of the small run")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="--workers of the many-bots runs (default: CPUs)")
    parser.add_argument("--games", type=int, default=1000, help="games of a --workers run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dask", action="store_true", help="also the Dask comparison")
    parser.add_argument("--quick", action="store_true", help="50 bots, fewer games")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    common.add_machine_options(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.many, args.games, args.rounds = 50, 400, 2

    fast = common.build_c_bot("fast")
    busy_before = common.machine_state(args)
    comparisons = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp, \
            common.OthersLoad() as others:
        scratch = Path(tmp)
        comparisons.append(many_bots(fast, scratch, args.many, args.few, args.workers,
                                     args.rounds))
        comparisons.append(two_workers(fast, scratch, args.games, args.rounds))
        if args.dask:
            comparisons.append(dask_workers(fast, scratch, args.games, args.rounds))

    print(f"\narena run, fast C bots, seed 1 ({os.cpu_count()} CPUs)")
    rows = []
    for c in comparisons:
        for label, rate in c["rates"].items():
            rows.append([c["what"], label, f"{rate['games']:,}", f"{rate['play_seconds']:.1f}",
                         f"{rate['games_per_second']:,.1f}",
                         ", ".join(map(str, rate["process_starts"]))])
    print(tabulate(rows, headers=["comparison", "run", "games", "play s", "games/s",
                                  "bot processes started (per segment)"],
                   disable_numparse=True))
    print()
    print(tabulate([[c["what"], f"{c['ratio']:.2f}x",
                     f">= {c['target']:g}x" if "target" in c else "",
                     ("met" if c["meets_target"] else "MISSED") if "target" in c else ""]
                    for c in comparisons],
                   headers=["comparison", "ratio", "target", ""], disable_numparse=True))
    many = comparisons[0]
    print(f"\n{args.many} bots: bot processes started per run "
          f"{many['rates'][f'{args.many} bots']['process_starts']}, bots x worker slots "
          f"{many['bots_x_slots']}")
    print(f"machine: {busy_before:.0%} busy before the runs; other processes used "
          f"{others.share:.0%} of the CPUs during them")
    common.write_json(args.json, {"benchmark": "workers", **common.machine(),
                                  "quick": args.quick, "busy_before": busy_before,
                                  "others_cpu_share": others.share,
                                  "comparisons": comparisons})
    return 0


if __name__ == "__main__":
    sys.exit(main())
