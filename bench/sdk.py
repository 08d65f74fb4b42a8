"""Benchmark: ``arena run`` games/s with the SDK bots against the bots they replaced.

``example_bots/honest.py`` and ``strong.py`` are written on arena.sdk;
``tests/sdk_reference/`` holds them as they were before, reading the protocol
by hand (they play the very same games: tests/test_sdk_example_bots.py).
Each pairing plays heads-up ``arena run`` tournaments (``--concurrency 1``,
the same ``--seed``, so the same games) with the old bots and with the SDK
bots in turn, in short segments (old, SDK, SDK, old, old, SDK, ...), and reports each
one's median games/s from arena's progress line, and the median of the
ratios SDK / old of the two runs of each round.  Pairings: honest against
honest (a fast bot: the SDK's own cost shows most) and strong against honest.

The bots are started by arena with a clean environment, so they import the
arena installed for the Python that runs this script: run it with a Python
where this checkout is installed (``pip install -e .``).

    python bench/sdk.py                 # ~5 min
    python bench/sdk.py --rounds 2 --games 50

A bot process plays a whole run, so start-up counts once per process: it
is measured apart (the SDK bots import arena.sdk: attrs, the engine's
events and the codec), and each segment is long enough to weigh little.

Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

from arena.protocol.codec import Limits, encode_handshake

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = {"old": ROOT / "tests" / "sdk_reference", "sdk": ROOT / "example_bots"}
PAIRINGS = {"honest-honest": ("honest", "honest"), "strong-honest": ("strong", "honest")}
DEFAULT_JSON = ROOT / "bench" / "out" / "sdk.json"
_PROGRESS = re.compile(r"(\d+)/(\d+) games, ([\d.]+) games/s")


def bots_of(version: str, pairing: str, folder: Path) -> list[Path]:
    """Copies of the pairing's two bots (distinct file names) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, bot in enumerate(PAIRINGS[pairing]):
        path = folder / f"{bot}{i}.py"
        shutil.copy2(VERSIONS[version] / f"{bot}.py", path)
        paths.append(path)
    return paths


def games_per_second(bots: list[Path], games: int, seed: int, out: Path) -> float:
    argv = [sys.executable, "-m", "arena", "run", *map(str, bots), "--games", str(games),
            "--seed", str(seed), "--concurrency", "1", "--out", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    found = _PROGRESS.findall(done.stderr)
    if done.returncode != 0 or not found:
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-2000:])
        raise SystemExit(f"bench: arena run failed with status {done.returncode}")
    played, total, rate = found[-1]
    games_file = out / "games.jsonl"
    faults = sum(any(line["faults"]) for line in map(json.loads, games_file.open()))
    if played != total or faults:
        raise SystemExit(f"bench: {out.name}: {played}/{total} games, {faults} with faults")
    return float(rate)


def startup_seconds(bot: Path) -> float:
    """From starting the bot (as arena starts a .py bot) to its hello line."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-u", "-P", str(bot)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=bot.parent)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(encode_handshake(Limits()) + "\n")
    proc.stdin.flush()
    hello = proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait()
    if not hello.startswith("hello "):
        raise SystemExit(f"bench: {bot} said {hello!r} to the handshake")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4, help="segments of each version")
    parser.add_argument("--games", type=int, default=300, help="games per segment")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    rates: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-sdk-") as scratch:
        root = Path(scratch)
        for pairing in PAIRINGS:
            bots = {v: bots_of(v, pairing, root / pairing / v) for v in VERSIONS}
            for round_ in range(args.rounds):
                # Interleaved, the order swapped every round so that a drift of the
                # machine's load favours neither: old, sdk, sdk, old, old, sdk...
                order = list(VERSIONS) if round_ % 2 == 0 else list(VERSIONS)[::-1]
                for version in order:
                    out = root / pairing / f"{version}-run{round_}"
                    rate = games_per_second(bots[version], args.games, 1 + round_, out)
                    rates.setdefault((pairing, version), []).append(rate)
                    print(f"  {pairing} {version} round {round_ + 1}: {rate:.1f} games/s",
                          file=sys.stderr)
    rows: list[dict[str, Any]] = []
    for pairing in PAIRINGS:
        old = statistics.median(rates[pairing, "old"])
        sdk = statistics.median(rates[pairing, "sdk"])
        # Each round's two runs are next to each other in time: their ratio is the
        # least disturbed by the load of the machine.
        paired = statistics.median(s / o for s, o in zip(rates[pairing, "sdk"],
                                                         rates[pairing, "old"], strict=True))
        rows.append({"pairing": pairing, "old games/s": round(old, 1),
                     "sdk games/s": round(sdk, 1), "sdk / old (paired)": round(paired, 3),
                     "segments": args.rounds, "games per segment": args.games})
    print(tabulate(rows, headers="keys", tablefmt="github"))
    starts: dict[str, list[float]] = {}
    for _ in range(args.rounds * 2):
        for version, folder in VERSIONS.items():
            starts.setdefault(version, []).append(startup_seconds(folder / "honest.py"))
    startup = [{"honest.py": version, "start-up to hello, ms (median)":
                round(1000 * statistics.median(times))} for version, times in starts.items()]
    print(tabulate(startup, headers="keys", tablefmt="github"))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"rows": rows, "startup": startup,
                                     "rates": {f"{p} {v}": r for (p, v), r in rates.items()}},
                                    indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
