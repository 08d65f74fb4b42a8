"""Benchmark: the referee's memory under hostile bots.

Runs real ``arena run`` commands as subprocesses, each inside a small wrapper
that calls ``arena.cli.main`` and, as the process exits, writes its own peak
resident memory (``getrusage(RUSAGE_SELF).ru_maxrss``): the referee's alone, for
the bots are other processes (their memory is the watchdog's business, and
``RUSAGE_CHILDREN`` would report the largest bot instead). The scenarios:

* ``baseline``: ``example_bots/random.py`` and ``honest.py``, no hostile bot;
  ``baseline-long`` the same with 25 times as many games, to show that the
  peak does not grow with the number of games;
* one per hostile bot of ``tests/hostile/`` (its docstring says what it does):
  the bot alone with random and honest, as in ``tests/test_adversarial.py``;
* ``floods``: the three bots that flood the referee (64 MiB on stdout without a
  newline, 200,000 lines, 64 MiB on stderr), together with random and honest;
* ``all``: every hostile bot in one tournament (not with ``--quick``).

Limits as in the tests: 0.5 s per decision, a 1 s bank, 3 s to start, 200 MB
of memory per bot; ``--concurrency 2``, ``--seed 1``. Each run gets a fresh
scratch folder (a temporary directory, removed afterwards) and copies of the
bots, and the script checks after each run that none of their processes is
left. Prints a table and writes ``bench/out/memory.json``.

    python bench/memory.py              # ~1 min
    python bench/memory.py --quick      # ~25 s

Not a test: the figures depend on the machine (and the Python and trio
versions). ``tests/test_adversarial.py`` asserts a bound (80 MB) on the same
measure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HOSTILE = ROOT / "tests" / "hostile"
EXAMPLES = ROOT / "example_bots"
DEFAULT_JSON = HERE / "out" / "memory.json"
GOOD = ("random", "honest")
OPTIONS = ("--seed", "1", "--workers", "0", "--concurrency", "2", "--decision-time", "0.5",
           "--time-bank", "1", "--startup-time", "3", "--memory-mb", "200")
# The hostile bots that misbehave in a tournament (stubborn and the cheats play by
# the rules; the cheats need --sandbox or a port to be interesting).
HOSTILE_BOTS = ("hang", "late", "close_stdout", "deaf", "escape", "crash_start", "crash_mid",
                "exit_mid", "memory_hog", "garbage", "long_line", "many_lines", "stderr_flood",
                "twice", "early")
FLOODS = ("long_line", "many_lines", "stderr_flood")

WRAPPER = """\
import resource, sys
from arena.cli import main
try:
    status = main(sys.argv[2:])
finally:
    with open(sys.argv[1], "w") as f:
        f.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
sys.exit(status)
"""


def live_processes(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path("/proc", name, "cmdline").read_bytes()
                state = Path("/proc", name, "stat").read_bytes().rpartition(b")")[2].split()[0]
            except (OSError, IndexError):
                continue
            if marker.encode() in cmdline and state not in (b"Z", b"X"):
                found.append(int(name))
    return found


def run(scenario: str, hostile: tuple[str, ...], games: int, scratch: Path) -> dict[str, Any]:
    folder = scratch / scenario
    bots = folder / "bots"
    bots.mkdir(parents=True)
    args = []
    for name in (*GOOD, *hostile):
        source = EXAMPLES if name in GOOD else HOSTILE
        shutil.copyfile(source / f"{name}.py", bots / f"{name}.py")
        args.append(str(bots / f"{name}.py"))
    peak = folder / "peak"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(peak), "run", *args, "--games", str(games),
         *OPTIONS, "--out", str(folder / "out")],
        cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{scenario}: arena run exited with {done.returncode}:\n{done.stderr}")
    lines = [json.loads(line) for line in (folder / "out" / "games.jsonl").read_text().splitlines()]
    deadline = time.monotonic() + 5
    while (left := live_processes(str(bots))) and time.monotonic() < deadline:
        time.sleep(0.01)
    faults: dict[str, int] = {}
    for game in lines:
        for fault in game["faults"]:
            if fault is not None:
                faults[fault["kind"]] = faults.get(fault["kind"], 0) + 1
    return {"scenario": scenario, "bots": len(GOOD) + len(hostile), "games": len(lines),
            "faults": faults, "wall_seconds": round(wall, 2),
            "referee_peak_mb": round(int(peak.read_text()) / 1024, 1), "left_running": len(left)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer games, no 'all' run")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write results")
    args = parser.parse_args(argv)
    games = 4 if args.quick else 10
    scenarios: list[tuple[str, tuple[str, ...], int]] = [
        ("baseline", (), games), ("baseline-long", (), 25 * games)]
    scenarios += [(bot, (bot,), games) for bot in HOSTILE_BOTS]
    scenarios.append(("floods", FLOODS, games))
    if not args.quick:
        scenarios.append(("all", HOSTILE_BOTS, 2))
    results = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-memory-") as tmp:
        for scenario, hostile, n in scenarios:
            result = run(scenario, hostile, n, Path(tmp))
            results.append(result)
            print(f"{scenario}: {result['games']} games, referee peak "
                  f"{result['referee_peak_mb']} MB", file=sys.stderr)
    base = results[0]["referee_peak_mb"]
    rows = [[r["scenario"], r["bots"], r["games"],
             ", ".join(f"{k} {v}" for k, v in sorted(r["faults"].items())) or "-",
             r["wall_seconds"], r["referee_peak_mb"], f"{r['referee_peak_mb'] - base:+.1f}",
             r["left_running"]] for r in results]
    print(tabulate(rows, headers=["scenario", "bots", "games", "faults", "wall s",
                                  "referee peak MB", "vs baseline", "left running"],
                   tablefmt="github"))
    report = {"benchmark": "memory",
              "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "python": platform.python_version(), "platform": platform.platform(),
              "cpus": os.cpu_count(), "loadavg": list(os.getloadavg()), "quick": args.quick,
              "runs": results}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwritten: {args.json}")
    return 1 if any(r["left_running"] for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
