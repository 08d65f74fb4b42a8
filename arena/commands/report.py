"""`arena report`: the results site of a tournament folder (static pages)."""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.commands.run import _anchor
from arena.errors import UserError
from arena.site.build import SITE, build_site


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write the results site of a tournament folder")
    p.add_argument("folder", type=Path, metavar="DIR", help="a folder made by arena run")
    p.add_argument("--out", type=Path, metavar="SITE",
                   help=f"where to write the site (default: DIR/{SITE})")
    p.add_argument("--anchor", metavar="BOT=ELO", help="fix one bot's rating (default: mean 1500)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.folder.is_dir():
        raise UserError(f"{args.folder}: no such folder (give a folder made by arena run)")
    index = build_site(args.folder, args.out, anchor=_anchor(args.anchor))
    print(index)
    return 0
