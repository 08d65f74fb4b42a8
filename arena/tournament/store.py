"""A tournament's folder on disk: what was asked, and every game played.

    tournament.json   the command, options, seed, arena version and bots
    games.jsonl       one line per finished game, appended and flushed as it ends
    records/N.json.gz the full game record of line N, for `arena replay`
    logs/             each bot's stderr, one file per bot and worker
    standings.md/csv  written at the end (and by `arena rate`)

Resume rests on games.jsonl alone: a game is done when its line is there.
A last line cut short by a crash is dropped (and its game played again); any
other damage stops the run with one line saying where, so nothing already
computed is ever overwritten.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from arena.engine.record import GameRecord, save
from arena.errors import UserError
from arena.protocol import codec

TOURNAMENT: Final = "tournament.json"
GAMES: Final = "games.jsonl"
RECORDS: Final = "records"
LOGS: Final = "logs"
FORMAT: Final = "arena-tournament"
VERSION: Final = 1

# The options that decide which games are played and how; a folder made with
# other values cannot be resumed with these.
IDENTITY: Final = ("seed", "players", "games", "gauntlet", "variant", "turn_limit",
                   "plain_deal", "limits", "resources")


def read_games(path: Path, *, repair: bool = False,
               convert: Callable[[dict[str, Any]], Any] | None = None) -> list[Any]:
    """Every game line of a games.jsonl (each passed through ``convert``, if given,
    as it is read: a long run's lines need not all be dicts in memory at once).

    A last line without its newline (a crash mid-write) is dropped, and with
    ``repair`` cut off the file.  Any other bad line raises UserError naming it.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    if tail and repair:
        with open(path, "r+b") as f:
            f.truncate(len(data) - len(tail))
    games = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            game = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise UserError(f"{path}, line {number}: not a JSON game line; the file is damaged "
                            f"there (fix or delete that line, then run again)") from None
        if not isinstance(game, dict) or not {"group", "index", "seats"} <= game.keys():
            raise UserError(f"{path}, line {number}: not a game line (needs group, index and "
                            f"seats); fix or delete that line, then run again")
        if convert is not None:
            try:
                game = convert(game)
            except ValueError as exc:
                raise UserError(f"{path}, line {number}: a damaged game line ({exc}); fix or "
                                f"delete that line, then run again") from None
        games.append(game)
    return games


def read_meta(folder: Path) -> dict[str, Any]:
    path = folder / TOURNAMENT
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{folder}: no {TOURNAMENT} here; is this a folder made by "
                        f"'arena run'?") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: damaged ({exc}); restore it, or start a new run with "
                        f"another --out") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise UserError(f"{path}: not an arena tournament file")
    problem = _meta_problem(meta)
    if problem:
        raise UserError(f"{path}: damaged ({problem}); restore it, or start a new run with "
                        f"another --out")
    return meta


# The fields of tournament.json that run and rate read, and their JSON types.
_META_FIELDS: Final = {"bot_args": list, "bots": list, "seed": int, "players": int,
                       "games": int, "gauntlet": (str, type(None)), "variant": str,
                       "turn_limit": int, "plain_deal": bool, "limits": dict,
                       "resources": dict}
_RESOURCES: Final = {"memory_mb", "cpu_seconds", "file_size_mb", "open_files", "sandbox",
                     "sandbox_ro"}


def _meta_problem(meta: dict[str, Any]) -> str | None:
    """What is wrong with a parsed tournament.json (a hand edit, say), or None."""
    for key, kind in _META_FIELDS.items():
        if not isinstance(meta.get(key), kind):
            return f"{key} is missing or of the wrong type"
    if not all(isinstance(arg, str) for arg in meta["bot_args"]):
        return "bot_args must be strings"
    if not all(isinstance(bot, dict) and isinstance(bot.get("name"), str)
               and isinstance(bot.get("hash"), str) for bot in meta["bots"]):
        return "each of bots needs a name and a hash"
    try:
        codec.Limits.from_json(meta["limits"])
    except ValueError as exc:
        return f"limits: {exc}"
    if meta["turn_limit"] < 1 or meta["players"] < 2 or meta["games"] < 1:
        return "turn_limit, players and games must be at least 1, 2 and 1"
    if not _RESOURCES <= meta["resources"].keys():
        return "resources needs " + ", ".join(sorted(_RESOURCES))
    return None


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The identity options that differ, in words."""
    found = []
    for key in IDENTITY:
        if old.get(key) != new.get(key):
            found.append(f"{key} was {json.dumps(old.get(key))}, now {json.dumps(new.get(key))}")
    return found


class Store:
    """Appends games to a tournament folder; one writer (the runner's main task)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.games_path = folder / GAMES
        self._file = None
        self._count = 0

    def open(self, meta: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Write tournament.json and open games.jsonl; the games already played."""
        # Read first: a damaged games.jsonl stops the run before anything is written.
        games = read_games(self.games_path, repair=True)
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / RECORDS).mkdir(exist_ok=True)
        (self.folder / LOGS).mkdir(exist_ok=True)
        tmp = self.folder / (TOURNAMENT + ".tmp")
        tmp.write_text(json.dumps(dict(meta), indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.folder / TOURNAMENT)
        self._count = max(_last_record_number(self.folder / RECORDS),
                          *(_record_number(game) for game in games), 0)
        self._file = open(self.games_path, "a", encoding="utf-8")  # noqa: SIM115 - held open
        return games

    def rewrite_without(self, bots: Iterable[str]) -> int:
        """Drop every game of ``bots`` (to play them again); the number dropped."""
        drop = set(bots)
        games = read_games(self.games_path, repair=True)
        keep = [g for g in games if not drop & set(g["seats"])]
        tmp = self.games_path.with_suffix(".jsonl.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for game in keep:
                f.write(json.dumps(game, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.games_path)
        return len(games) - len(keep)

    def append(self, game: dict[str, Any], record: GameRecord) -> None:
        """Store one finished game: its record first, then its line (flushed)."""
        assert self._file is not None
        self._count += 1
        name = f"{self._count:06d}.json.gz"
        save(record, self.folder / RECORDS / name)
        game["record"] = f"{RECORDS}/{name}"
        self._file.write(json.dumps(game, separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _record_number(game: Mapping[str, Any]) -> int:
    # A line names its record even if the file was deleted by hand since.
    stem = str(game.get("record", "")).rpartition("/")[2].split(".")[0]
    return int(stem) if stem.isdigit() else 0


def _last_record_number(records: Path) -> int:
    # Numbers are never reused, even after games are dropped for a replay.
    numbers = [int(p.name.split(".")[0]) for p in records.glob("*.json.gz")
               if p.name.split(".")[0].isdigit()]
    return max(numbers, default=0)
