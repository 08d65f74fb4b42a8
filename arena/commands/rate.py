"""`arena rate`: ratings and tables again from stored results, merging runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.commands.run import _anchor, rate_and_print, read_results
from arena.errors import UserError
from arena.tournament import report as reports
from arena.tournament.store import GAMES, read_meta


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rate", help="rate bots again from stored results (several runs merge)")
    p.add_argument("folders", nargs="+", type=Path, metavar="DIR", help="folders made by arena run")
    p.add_argument("--anchor", metavar="BOT=ELO", help="fix one bot's rating (default: mean 1500)")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="also write standings.md and standings.csv here")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    games = []
    names: list[str] = []
    runs = []
    times = reports.DecisionTimes()
    folders: dict[Path, Path] = {}  # each folder once, however it was named
    for folder in args.folders:
        if not folder.is_dir():
            raise UserError(f"{folder}: no such folder (give folders made by arena run)")
        folders.setdefault(folder.resolve(), folder)
    for number, folder in enumerate(folders.values()):
        meta = read_meta(folder)
        runs.append(meta)
        for bot in meta.get("bots", []):
            if bot["name"] not in names:
                names.append(bot["name"])
        games += read_results(folder / GAMES, times, run=str(number),
                              bots=[bot["name"] for bot in meta["bots"]])
    if not games:
        raise UserError("no games in " + ", ".join(map(str, folders.values())))
    anchor = _anchor(args.anchor)
    if anchor is not None and anchor[0] not in names:
        raise UserError(f"--anchor {anchor[0]}: no such bot; the bots are " + ", ".join(names))
    print(f"{len(games)} games from {len(folders)} run{'' if len(folders) == 1 else 's'}")
    rate_and_print(games, names, anchor, args.out, title="Standings", runs=runs, times=times)
    return 0
