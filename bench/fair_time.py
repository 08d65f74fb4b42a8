"""Benchmark: is a prompt bot ever charged a timeout when the machine is loaded?

Runs ``arena run`` (a subprocess) as a gauntlet: ``prompt``, a C bot that always
answers within 15 ms of reading a request (it spins a random 0-15 ms of wall
time), against three copies of ``busy20`` (a C bot burning 20 ms of CPU per
decision; it stops spinning after 60 ms of wall time), heads-up, at
``--concurrency`` twice the number of CPUs, with a 100 ms limit per decision
and no time bank (``--decision-time 0.1 --time-bank 0``).  So the CPUs are
oversubscribed (up to four games' bots thinking at once on two cores, plus the
referee) while every answer of ``prompt`` comes far inside its limit: any
timeout charged to it is the referee's (or the scheduler's) doing.

Reports the timeouts charged to ``prompt`` (target: none in 5,000 games; 500
with ``--quick``), its answer times as the referee measured them (the slowest
answer of each game: median, 99th percentile, max), its own view of its slowest
answer (it writes ``max_ms`` to its log when it quits), and the faults of the
busy bots, which are not the target.

    python bench/fair_time.py               # 5,000 games, ~10 min on 2 cores
    python bench/fair_time.py --quick       # 500 games, ~1 min

Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

try:  # run as a script (python bench/fair_time.py) or as a module
    import referee_overhead as common
except ImportError:  # pragma: no cover
    from bench import referee_overhead as common

DEFAULT_JSON = common.OUT / "fair_time.json"
PROMPT_MS = 15  # prompt answers within this much wall time of reading the request
BUSY_CPU_MS = 20
BUSY_WALL_CAP_MS = 60
DECISION_MS = 100
_SELF_REPORT = re.compile(r"busy: (\S+) answers (\d+) max_ms ([\d.]+)")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=5000, help="games in all (about)")
    parser.add_argument("--busy", type=int, default=3, help="busy bots in the gauntlet")
    parser.add_argument("--concurrency", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="500 games")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep the results folder here (default: a temporary folder)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    common.add_machine_options(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.games = 500

    prompt = common.build_c_bot("busy", "prompt", {"PROMPT": 1, "WALL_CAP_MS": PROMPT_MS,
                                                   "NAME": '"prompt"'})
    busy = common.build_c_bot("busy", f"busy{BUSY_CPU_MS}", {
        "CPU_MS": BUSY_CPU_MS, "WALL_CAP_MS": BUSY_WALL_CAP_MS, "NAME": f'"busy{BUSY_CPU_MS}"'})
    per_table = -(-args.games // args.busy)
    per_table += per_table % 2  # whole seat rotations
    busy_before = common.machine_state(args)

    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp, \
            common.OthersLoad() as others:
        out = args.keep or Path(tmp) / "fair"
        argv = [sys.executable, "-m", "arena", "run", str(prompt), *[str(busy)] * args.busy,
                "--gauntlet", "prompt", "--games", str(per_table),
                "--workers", "0", "--concurrency", str(args.concurrency),
                "--seed", str(args.seed),
                "--decision-time", str(DECISION_MS / 1000), "--time-bank", "0",
                "--out", str(out)]
        print(f"{args.busy * per_table:,} games at concurrency {args.concurrency}...",
              file=sys.stderr)
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            sys.stderr.write(done.stderr[-4000:])
            raise SystemExit(f"bench: arena run failed with status {done.returncode}")
        lines = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
        logs = {log.name: log.read_text(errors="replace") for log in (out / "logs").glob("*.log")}

    faults: dict[str, dict[str, int]] = {}
    prompt_max: list[float] = []  # the referee's slowest answer time of prompt, per game
    answers = {"prompt": 0, "busy": 0}
    busy_max: list[float] = []
    for line in lines:
        for seat, name in enumerate(line["seats"]):
            who = "prompt" if name == "prompt" else "busy"
            fault = line["faults"][seat]
            if fault:
                kinds = faults.setdefault(who, {})
                kinds[fault["kind"]] = kinds.get(fault["kind"], 0) + 1
            times = (line.get("decision_ms") or [None] * len(line["seats"]))[seat]
            if times and times.get("n"):
                answers[who] += times["n"]
                (prompt_max if who == "prompt" else busy_max).append(times["max"])
    self_reported: dict[str, float] = {}
    for text in logs.values():
        for name, _n, worst in _SELF_REPORT.findall(text):
            who = "prompt" if name == "prompt" else "busy"
            self_reported[who] = max(self_reported.get(who, 0.0), float(worst))

    prompt_timeouts = faults.get("prompt", {}).get("timeout", 0)
    rows = []
    for who, maxima in (("prompt", prompt_max), ("busy", busy_max)):
        rows.append({
            "bot": "prompt" if who == "prompt" else f"busy{BUSY_CPU_MS} x{args.busy}",
            "answers": answers[who],
            "timeouts": faults.get(who, {}).get("timeout", 0),
            "other_faults": sum(n for k, n in faults.get(who, {}).items() if k != "timeout"),
            "slowest_per_game_ms_median": round(percentile(maxima, 0.5), 2) if maxima else None,
            "slowest_per_game_ms_p99": round(percentile(maxima, 0.99), 2) if maxima else None,
            "slowest_ms": round(max(maxima), 2) if maxima else None,
            "own_slowest_ms": self_reported.get(who),
        })
    print(f"\narena run --gauntlet prompt, {len(lines):,} heads-up games, --concurrency "
          f"{args.concurrency} on {os.cpu_count()} CPUs, --decision-time {DECISION_MS / 1000:g} "
          f"--time-bank 0; {wall:.0f} s ({len(lines) / wall:.1f} games/s)")
    print(tabulate(
        [[r["bot"], f"{r['answers']:,}", r["timeouts"], r["other_faults"],
          r["slowest_per_game_ms_median"], r["slowest_per_game_ms_p99"], r["slowest_ms"],
          r["own_slowest_ms"]] for r in rows],
        headers=["bot", "answers", "timeouts", "other faults", "slowest/game median ms",
                 "slowest/game p99 ms", "slowest ms", "own view: slowest ms"],
        colalign=("left",) + ("right",) * 7, disable_numparse=True))
    verdict = "meets" if prompt_timeouts == 0 else "MISSES"
    print(f"\n{prompt_timeouts} timeouts charged to prompt: {verdict} the target (none)")
    print(f"machine: {busy_before:.0%} busy before the run; other processes used "
          f"{others.share:.0%} of the CPUs during it")
    common.write_json(args.json, {
        "benchmark": "fair_time", **common.machine(), "quick": args.quick,
        "busy_before": busy_before, "others_cpu_share": others.share,
        "games": len(lines), "concurrency": args.concurrency, "decision_ms": DECISION_MS,
        "prompt_ms": PROMPT_MS, "busy_cpu_ms": BUSY_CPU_MS, "busy_wall_cap_ms": BUSY_WALL_CAP_MS,
        "seconds": round(wall, 1), "rows": rows, "faults": faults,
        "prompt_timeouts": prompt_timeouts, "meets_target": prompt_timeouts == 0,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
