"""Benchmark: the results site of a 100,000-game tournament.

A synthetic tournament folder (tournament.json and games.jsonl only: 100
bots, heads-up, 1% of the games with a fault; no records, so no replays)
gets its site from ``arena.site.build.build_site``: the time to write it,
the time to write it again with 1,000 more games (what `arena run` does
every 30 s: only the new lines of games.jsonl are folded, only the last
chunk of the game list encoded), the same with
every line read anew (`arena report`, and a run's last build), and the
size of the game list's data.  Then Debian's chromium
(headless, from file://) opens games.html: the time until the first page of
games is on screen, and until every game is read (filters and sorting then
see them all); and the same for the index page.  Best of 3 page loads.
Target: the game list opens in under 2 s.

    python bench/site.py              # 100,000 games, ~1 min
    python bench/site.py --games 20000

Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.site.build import Refresh, build_site  # noqa: E402


def make_folder(folder: Path, games: int, bots: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    names = [f"bot{k:03d}" for k in range(bots)]
    meta = {"format": "arena-tournament", "version": 1, "arena": "bench",
            "command": ["arena", "run", "..."], "bot_args": names, "seed": seed, "players": 2,
            "games": games, "gauntlet": None, "variant": "ambassador", "turn_limit": 1000,
            "plain_deal": False,
            "limits": {"startup_ms": 10000, "decision_ms": 1000, "bank_ms": 10000,
                       "game_ms": 600000},
            "resources": {"memory_mb": 1024, "cpu_seconds": 60.0, "file_size_mb": 64,
                          "open_files": 256, "sandbox": False, "sandbox_ro": []},
            "bots": [{"name": n, "command": [n], "hash": "0" * 64} for n in names]}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tournament.json").write_text(json.dumps(meta))
    append_games(folder, 0, games, names, rng)


def append_games(folder: Path, start: int, count: int, names: list[str],
                 rng: random.Random) -> None:
    strength = {n: rng.gauss(0, 1) for n in names}
    with open(folder / "games.jsonl", "a", encoding="utf-8") as f:
        for k in range(start, start + count):
            a, b = rng.sample(names, 2)
            win = rng.random() < 1 / (1 + 10 ** (strength[b] - strength[a]))
            faults = [None, None]
            if rng.random() < 0.01:
                faults[0 if win else 1] = None
                faults[1 if win else 0] = {"kind": rng.choice(["timeout", "crash", "illegal"]),
                                           "detail": "bench", "line": "x"}
            times = [{"n": 12, "median": 0.3, "max": 2.0, "hist": [30, 6, 4, 2]}] * 2
            f.write(json.dumps({"group": f"{a}|{b}#{k}", "index": 0, "seats": [a, b],
                                "seed": k, "placements": [1, 2] if win else [2, 1],
                                "turns": rng.randint(2, 30), "end": "last_player",
                                "faults": faults, "duration": 0.05, "decision_ms": times,
                                "record": f"records/{k + 1:06d}.json.gz"},
                               separators=(",", ":")) + "\n")


def open_times(site: Path, page: str, ready: str, tries: int) -> tuple[float, float]:
    """Seconds to the first rows, and to ``ready``, best of ``tries``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    os.environ["SE_OFFLINE"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", f"--user-data-dir={tempfile.mkdtemp()}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    first_best = all_best = float("inf")
    try:
        for _ in range(tries):
            driver.get("about:blank")
            started = time.perf_counter()
            driver.get((site / page).as_uri())
            first = None
            while True:
                found = driver.execute_script(
                    "return [document.querySelectorAll('tbody tr').length,"
                    f" !!document.querySelector('{ready}')]")
                now = time.perf_counter() - started
                if first is None and found[0]:
                    first = now
                if found[1]:
                    break
                if now > 60:
                    raise RuntimeError(f"{page} did not get ready in 60 s")
            first_best = min(first_best, first if first is not None else now)
            all_best = min(all_best, now)
    finally:
        driver.quit()
    return first_best, all_best


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of ``work()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def show(times: tuple[float, float]) -> str:
    return f"{times[0]:.2f} s ({times[1]:.2f} s CPU)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=100)
    parser.add_argument("--tries", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "t"
        make_folder(folder, args.games, args.bots)
        # As `arena run` does: a refresh while games are played (running=True)
        # folds only the lines added since the refresh before; its last build,
        # like `arena report`, reads every line anew.
        refresh = Refresh()  # what `arena run`'s refreshes carry from one to the next
        first_build = timed(lambda: build_site(folder, running=True, refresh=refresh))
        names = [f"bot{k:03d}" for k in range(args.bots)]
        append_games(folder, args.games, 1000, names, random.Random(2))
        rebuild = timed(lambda: build_site(folder, running=True, refresh=refresh))
        append_games(folder, args.games + 1000, 1000, names, random.Random(3))
        final = timed(lambda: build_site(folder))
        site = folder / "site"
        chunks = sorted((site / "data").glob("games-*.js"))
        list_bytes = sum(p.stat().st_size for p in chunks)
        data_bytes = sum(p.stat().st_size for p in (site / "data").iterdir())
        list_first, list_all = open_times(site, "games.html", ".gamelist[data-ready]",
                                          args.tries)
        index_first, index_all = open_times(site, "index.html", "#main[data-ready]",
                                            args.tries)
    rows = [
        ["write the site (no replays)", show(first_build)],
        ["write it again, 1,000 more games (a run's refresh)", show(rebuild)],
        ["the same, every line read anew (`arena report`, a run's end)", show(final)],
        ["game list data", f"{list_bytes / 1e6:.1f} MB in {len(chunks)} files"],
        ["all data but replays", f"{data_bytes / 1e6:.1f} MB"],
        ["games.html: first page of games shown", f"{list_first:.2f} s"],
        ["games.html: every game read", f"{list_all:.2f} s"],
        ["index.html: drawn", f"{index_all:.2f} s"],
    ]
    print(f"{args.games + 2000:,} games, {args.bots} bots, heads-up")
    print(tabulate(rows, headers=["measure", "value"], tablefmt="github"))


if __name__ == "__main__":
    main()
