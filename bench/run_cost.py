"""Benchmark: a full `arena run`'s referee CPU per decision, beside the raw pipe round trip.

Measured in one run, alternating in short segments so that every figure sees
the same machine (a shared machine drifts by 2-3x from minute to minute):

* **pipe**: the raw C-to-C round trip, ``bench/bots/ping.c`` writing a
  132-byte request line to ``echo`` (``bench/bots/echo.c``) and reading it
  back: its wall time and ping's own CPU per trip.  No referee goes faster.
* **arena**: the real command, ``arena run fast_a fast_b --games G --seed S``
  (two copies of ``bench/bots/fast.c``, which answers every request at once;
  every other option at its default: games at once, resource limits, records),
  in a subprocess that reports the CPU time of the command and of all it
  started (``getrusage``, self and children); each bot writes its own CPU
  time to its log as it quits, and that is taken off, so the figure is arena's
  CPU: the referee, and worker processes or bot keepers if it has any.  The
  decisions are counted in games.jsonl.  The same command with ``--games 2``
  in the same segment gives the fixed cost (start-up, ratings, reports), so
  the figure is the CPU per decision while playing, (big - small) / (big -
  small decisions); the whole command's CPU per decision is shown too.
* ``--compare TREE``: the same command run from another checkout of arena
  (``PYTHONPATH=TREE``) in every segment, for an A/B ratio of two versions;
  ``--also "ARGS"``: the same command with more options in every segment
  (e.g. ``--also "--memory-mb 0 --cpu-seconds 0 --disk-mb 0 --processes 0"``: without the
  watchdog that enforces the memory, CPU and disk limits).

fastchess, the C++ chess tournament runner, is not measured here: its figure
(61 us of harness CPU per move) is the one issue 12 gives, measured on this
machine when that issue was filed.

    python bench/run_cost.py              # 5 segments of 600 games, ~1 min
    python bench/run_cost.py --quick      # 3 segments of 200 games, ~15 s
    python bench/run_cost.py --compare /path/to/other/arena
    python bench/run_cost.py --also "--memory-mb 0 --cpu-seconds 0 --disk-mb 0 --processes 0"
    python bench/run_cost.py --no-replays  # without the results site's replay files
    python bench/run_cost.py --scratch /dev/shm  # results folders on tmpfs: no disk

Not a test: the figures depend on the machine and on its other load, and on
its disk: each game's record is a new file, and on ext4 without a journal a
new inode costs far more within half a minute of many files being deleted
(another run's scratch folder, this one's included): wait a minute after
such a clean-up, and read the main process's system CPU, which shows it.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from referee_overhead import (  # noqa: E402
    OUT,
    REQUEST_LINE,
    OthersLoad,
    add_machine_options,
    build_c_bot,
    machine,
    machine_state,
    tree_env,
    write_json,
)

ROOT = Path(__file__).resolve().parent.parent  # this checkout of arena
DEFAULT_JSON = OUT / "run_cost.json"
BOT_CPU = re.compile(r"^fast: cpu_us=(\d+)$", re.MULTILINE)  # bench/bots/fast.c, at quit
TARGET_US = 35.0  # referee CPU per decision
FASTCHESS_US = 61.0  # harness CPU per move, from issue 12 (not measured here)
ISSUE_PIPE_US = 4.6  # the C-to-C round trip issue 12 gives, for comparison

WRAPPER = """\
import json, resource, sys
from arena.cli import main
if sys.argv[2] == "--no-replays":  # the results site's replay files left out
    import arena.site.build
    if not hasattr(arena.site.build, "write_replays"):
        sys.exit("--no-replays: arena.site.build has no write_replays to leave out")
    arena.site.build.write_replays = lambda *args, **kwargs: 0
    del sys.argv[2]
try:
    status = main(sys.argv[2:])
finally:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(sys.argv[1], "w") as f:
        json.dump({"cpu": me.ru_utime + me.ru_stime, "user": me.ru_utime,
                   "system": me.ru_stime, "children_cpu": kids.ru_utime + kids.ru_stime}, f)
sys.exit(status)
"""


def ping(ping_bin: Path, echo: Path, trips: int) -> tuple[float, float]:
    """Wall and CPU microseconds per C-to-C round trip."""
    out = subprocess.run([str(ping_bin), str(echo), REQUEST_LINE, str(trips)], check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[1]) / 1000, float(out[2]) / 1000


def arena_run(bots: list[Path], games: int, seed: int, scratch: Path,
              tree: str | None, extra: list[str], no_replays: bool = False) -> dict[str, float]:
    """One `arena run` subprocess: its own CPU seconds and the decisions played."""
    out = Path(tempfile.mkdtemp(prefix="run-", dir=scratch))
    usage = out / "usage.json"
    # The arena of this checkout, or of TREE: first on the path, and the command
    # runs in a scratch folder (python -c puts its working folder first).
    quiet = ["--no-replays"] if no_replays else []
    subprocess.run([sys.executable, "-c", WRAPPER, str(usage), *quiet, "run", *map(str, bots),
                    "--games", str(games), "--seed", str(seed), "--out", str(out / "results"),
                    *extra],
                   check=True, env=tree_env(tree or ROOT), cwd=out, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    decisions = 0
    with open(out / "results" / "games.jsonl", encoding="utf-8") as f:
        for line in f:
            decisions += sum(seat["n"] for seat in json.loads(line)["decision_ms"])
    bots_cpu = sum(int(found) for log in (out / "results" / "logs").glob("*.log")
                   for found in BOT_CPU.findall(log.read_text(errors="replace"))) / 1e6
    result = json.loads(usage.read_text())
    result["cpu"] += result["children_cpu"] - bots_cpu
    result["bots_cpu"] = bots_cpu
    result["decisions"] = decisions
    return result


def per_decision(big: dict[str, float], small: dict[str, float]) -> dict[str, float]:
    decisions = big["decisions"] - small["decisions"]
    return {
        "us": (big["cpu"] - small["cpu"]) / decisions * 1e6,
        "user_us": (big["user"] - small["user"]) / decisions * 1e6,
        "system_us": (big["system"] - small["system"]) / decisions * 1e6,
        "whole_us": big["cpu"] / big["decisions"] * 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=600, help="games per arena run")
    parser.add_argument("--segments", type=int, default=5)
    parser.add_argument("--trips", type=int, default=20_000, help="pipe round trips a segment")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--compare", metavar="TREE",
                        help="also run arena from this source tree (PYTHONPATH) in each segment")
    parser.add_argument("--also", metavar="ARGS", action="append", default=[],
                        help="also run arena with these options in each segment (repeatable)")
    parser.add_argument("--quick", action="store_true", help="3 segments of 200 games")
    parser.add_argument("--no-replays", action="store_true",
                        help="without the results site's replay files (write_replays a no-op)")
    parser.add_argument("--scratch", type=Path, metavar="DIR",
                        help="where the runs' results folders go (default: the system's "
                             "temporary folder); /dev/shm leaves the disk out")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    add_machine_options(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.segments, args.trips = 200, 3, 10_000

    echo, ping_bin = build_c_bot("echo"), build_c_bot("ping")
    bots = [build_c_bot("fast", "fast_a"), build_c_bot("fast", "fast_b")]
    trees: list[tuple[str, str | None, list[str]]] = [("this arena", None, [])]
    if args.compare:
        trees.append((f"--compare {args.compare}", str(Path(args.compare).resolve()), []))
    trees += [(f"this arena {extra}", None, extra.split()) for extra in args.also]
    busy_before = machine_state(args)
    pipe: list[tuple[float, float]] = []
    arena: dict[str, list[dict[str, float]]] = {label: [] for label, _, _ in trees}
    with tempfile.TemporaryDirectory(prefix="arena-bench-", dir=args.scratch) as tmp, \
            OthersLoad() as others:
        for segment in range(args.segments):
            pipe.append(ping(ping_bin, echo, args.trips))
            order = trees if segment % 2 == 0 else trees[::-1]  # neither always goes first
            for label, tree, extra in order:
                small = arena_run(bots, 2, args.seed, Path(tmp), tree, extra, args.no_replays)
                big = arena_run(bots, args.games, args.seed, Path(tmp), tree, extra,
                                args.no_replays)
                arena[label].append(per_decision(big, small))
            print(f"segment {segment + 1}/{args.segments}: pipe {pipe[-1][0]:.1f} us, "
                  + ", ".join(f"{label} {runs[-1]['us']:.1f} us/decision"
                              for label, runs in arena.items()), file=sys.stderr)

    def median(values: list[float]) -> float:
        return round(statistics.median(values), 1)

    pipe_wall, pipe_cpu = median([w for w, _ in pipe]), median([c for _, c in pipe])
    summary: dict[str, Any] = {}
    for label, runs in arena.items():
        summary[label] = {key: median([run[key] for run in runs]) for key in runs[0]}
        summary[label]["segments"] = [round(run["us"], 1) for run in runs]
    rows = [["pipe: C ping <-> C echo round trip (bench/bots/ping.c)", f"{pipe_wall:.1f}",
             f"{pipe_cpu:.1f}", "measured here"]]
    for label, s in summary.items():
        rows.append([f"arena run, fast C bots, referee per decision ({label})", "",
                     f"{s['us']:.1f}",
                     f"main process: user {s['user_us']:.1f} + system {s['system_us']:.1f}; "
                     f"whole command {s['whole_us']:.1f}"])
    rows.append(["fastchess, harness per move", "", f"{FASTCHESS_US:.0f}",
                 "issue 12's measurement on this machine"])
    print(f"\n{args.segments} segments: {args.trips:,} round trips and an arena run of "
          f"{args.games:,} games each (heads-up, --seed {args.seed})")
    print(tabulate(rows, headers=["what", "wall µs", "CPU µs", "note"],
                   colalign=("left", "right", "right", "left"), disable_numparse=True))
    mine = summary["this arena"]
    print(f"\nreferee CPU per decision {mine['us']:.1f} µs = {mine['us'] / pipe_wall:.1f}x the "
          f"pipe round trip's wall time, {mine['us'] / FASTCHESS_US:.2f}x fastchess's per move; "
          f"target <= {TARGET_US:g} µs: {'met' if mine['us'] <= TARGET_US else 'MISSED'}")
    ratios: dict[str, list[float]] = {}
    for label, _, _ in trees[1:]:
        ratios[label] = [a["us"] / b["us"]
                         for a, b in zip(arena["this arena"], arena[label], strict=True)]
        print(f"this arena / {label}: {statistics.median(ratios[label]):.2f}x referee CPU per "
              f"decision (median of {len(ratios[label])} segments: "
              + ", ".join(f"{r:.2f}" for r in ratios[label]) + ")")
    print(f"machine: {busy_before:.0%} busy before the run; other processes used "
          f"{others.share:.0%} of the CPUs during it")
    write_json(args.json, {
        "benchmark": "run_cost", **machine(), "quick": args.quick, "games": args.games,
        "segments": args.segments, "trips": args.trips, "busy_before": busy_before,
        "others_cpu_share": others.share, "pipe_wall_us": pipe_wall, "pipe_cpu_us": pipe_cpu,
        "pipe_segments": pipe, "arena": summary, "fastchess_us": FASTCHESS_US,
        "fastchess_source": "issue 12", "target_us": TARGET_US,
        "compare": args.compare, "also": args.also, "no_replays": args.no_replays,
        "scratch": str(args.scratch) if args.scratch else None,
        "ratios": ratios,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
