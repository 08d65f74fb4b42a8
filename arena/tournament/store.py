"""A tournament's folder on disk: what was asked, and every game played.

    tournament.json   the command, options, seed, arena version and bots
    games.jsonl       one line per finished game, appended and flushed as it ends
    records/N.json.gz the full game record of line N, for `arena replay`
    logs/             each bot's stderr, one file per bot and worker
    standings.md/csv  written at the end (and by `arena rate`)
    .lock             held (flock) by the run writing the folder
    .synced           the size of games.jsonl at its last sync (see "Durability")

Resume rests on games.jsonl alone: a game is done when its line is there.
A last line cut short by a crash is dropped (and its game played again); any
other damage (a line that is not a game, a game twice, a seat naming no bot
of the tournament) stops the run with one line saying where, so nothing
already computed is ever overwritten.

One process writes a folder: ``Store.lock`` takes an exclusive flock on
``.lock``, which the kernel releases when that process ends, even by
``kill -9``; a second writer is refused.  Readers (``arena rate``) take no
lock: lines are appended whole and flushed, files are replaced by rename, and
a torn last line is skipped, so a reader sees the games finished so far.

Durability.  Records and lines are written as games end, and synced to the
disk in groups: at most every ``SYNC_GAMES`` games or ``SYNC_SECONDS``
seconds, each record before the lines that name them, then ``.synced``.  A
killed process (even ``kill -9``) loses nothing written, as the kernel keeps
it; a power cut or a kernel crash can lose the games of the last group.
Resume therefore checks the record of every line after the size in
``.synced``: a line whose record is missing or damaged is dropped (and its
game played again), the lines before it and after it are kept.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import gzip
import json
import os
import time
import zlib
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from arena import files
from arena.engine.record import GameRecord, gzipped
from arena.errors import UserError
from arena.files import disk_error, write_whole
from arena.protocol import codec

TOURNAMENT: Final = "tournament.json"
GAMES: Final = "games.jsonl"
RECORDS: Final = "records"
LOGS: Final = "logs"
LOCK: Final = ".lock"
SYNCED: Final = ".synced"
SYNC_GAMES: Final = 64  # games stored between two syncs at most ...
SYNC_SECONDS: Final = 1.0  # ... and seconds (see sync_due)
FORMAT: Final = "arena-tournament"
VERSION: Final = 1

# The options that decide which games are played and how; a folder made with
# other values cannot be resumed with these.
IDENTITY: Final = ("seed", "players", "games", "gauntlet", "variant", "turn_limit",
                   "plain_deal", "limits", "resources")


def read_games(path: Path, *, repair: bool = False,
               convert: Callable[[dict[str, Any]], Any] | None = None,
               bots: Collection[str] | None = None) -> list[Any]:
    """Every game line of a games.jsonl (each passed through ``convert``, if given,
    as it is read: a long run's lines need not all be dicts in memory at once).

    A last line without its newline (a crash mid-write) is dropped, and with
    ``repair`` cut off the file.  Any other bad line raises UserError naming it:
    one that is not a game line, a game already on an earlier line, and (given
    ``bots``, the tournament's bot names) a seat naming another bot.
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
        try:
            os.truncate(path, len(data) - len(tail))
        except OSError as exc:
            raise disk_error(exc, path) from None
    known = None if bots is None else frozenset(bots)
    seen: dict[tuple[str, int], int] = {}
    games = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            game = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise UserError(f"{path}, line {number}: not a JSON game line; the file is damaged "
                            f"there (fix or delete that line, then run again)") from None
        if not _is_game(game):
            raise UserError(f"{path}, line {number}: not a game line (needs group, index and "
                            f"seats); fix or delete that line, then run again")
        key = (game["group"], game["index"])
        first = seen.setdefault(key, number)
        if first != number:
            raise UserError(f"{path}, line {number}: game {key[1]} of {key[0]} again (it is on "
                            f"line {first} too); delete one of the two lines, then run again")
        if known is not None:
            strangers = [name for name in game["seats"] if name not in known]
            if strangers:
                raise UserError(f"{path}, line {number}: seat {strangers[0]!r} is no bot of "
                                f"this tournament; fix or delete that line, then run again")
        if convert is not None:
            try:
                game = convert(game)
            except ValueError as exc:
                raise UserError(f"{path}, line {number}: a damaged game line ({exc}); fix or "
                                f"delete that line, then run again") from None
        games.append(game)
    return games


def is_results_folder(path: Path) -> bool:
    """A folder arena run writes or wrote: it holds a tournament.json or a games.jsonl."""
    return (path / TOURNAMENT).is_file() or (path / GAMES).is_file()


def _is_game(game: object) -> bool:
    return (isinstance(game, dict) and isinstance(game.get("group"), str)
            and isinstance(game.get("index"), int) and isinstance(game.get("seats"), list)
            and all(isinstance(name, str) for name in game["seats"]))


def read_meta(folder: Path) -> dict[str, Any]:
    path = folder / TOURNAMENT
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{folder}: no {TOURNAMENT} here; is this a folder made by "
                        f"'arena run'?") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read it ({exc.strerror}); give this user read "
                        "access, then run again") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
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


def write_meta(folder: Path, meta: Mapping[str, Any]) -> None:
    """Write tournament.json whole or not at all."""
    write_whole(folder / TOURNAMENT, (json.dumps(dict(meta), indent=2) + "\n").encode("utf-8"))


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The identity options that differ, in words."""
    found = []
    for key in IDENTITY:
        if old.get(key) != new.get(key):
            found.append(f"{key} was {json.dumps(old.get(key))}, now {json.dumps(new.get(key))}")
    return found


class Store:
    """A tournament folder, written by one process (the runner's main task).

    ``lock`` takes the folder (``open``, ``recover`` and ``rewrite_without``
    take it if not yet held); ``close`` syncs and lets it go.  Every failed
    write is one UserError naming the file and what to do; what was written
    before stays.
    """

    def __init__(self, folder: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.folder = folder
        self.games_path = folder / GAMES
        self._games_fd: int | None = None
        self._records_on_games_device = False  # one syncfs puts both on the disk
        self._lock_fd: int | None = None
        self._count = 0
        self._clock = clock
        self._unsynced: list[tuple[int, Path]] = []  # open records, written since the last sync
        self._games_unsynced = 0
        self._first_unsynced = 0.0  # when the oldest of them was stored

    def lock(self) -> None:
        """Make this process the folder's only writer (creating it), or raise UserError."""
        if self._lock_fd is not None:
            return
        path = self.folder / LOCK
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            raise disk_error(exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                by = f" (pid {holder})" if holder.isdigit() else ""
                raise UserError(f"{self.folder} is in use by another arena run{by}; let it "
                                "finish or stop it, or use another --out") from None
            raise UserError(f"{path}: cannot lock it ({exc.strerror}); put the results "
                            "folder on a local disk") from None
        with contextlib.suppress(OSError):  # the pid is a courtesy for the refused
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def recover(self) -> list[tuple[str, int]]:
        """Drop the lines after the last sync whose record is missing or damaged (a
        power cut: see "Durability" above), and sync the others;
        the (group, index) of each game dropped, to be played again."""
        self.lock()
        synced = _synced_size(self.folder / SYNCED)
        try:
            data = self.games_path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise UserError(f"{self.games_path}: cannot read: {exc.strerror}") from None
        if synced is None or synced >= len(data):
            return []  # None: a folder of an older arena, which synced every game
        cut = data.rfind(b"\n", 0, synced) + 1  # the first line a power cut may have lost
        keep, dropped, kept = [data[:cut]], [], []
        for raw in data[cut:].splitlines(keepends=True):
            game = _parsed(raw)
            # Damaged lines and torn tails are read_games's to judge.
            if raw.endswith(b"\n") and isinstance(game, dict) and _is_game(game) \
                    and isinstance(game.get("record"), str):
                path = self.folder / game["record"]
                if not _is_whole(path):
                    dropped.append((game["group"], game["index"]))
                    continue
                kept.append(path)
            keep.append(raw)
        try:
            # After a kill -9: written, maybe not yet on the disk.  Synced now, as the
            # next sync marks every line before it as checked.
            for path in kept:
                _sync_file(path)
            if not dropped:
                _sync_file(self.games_path)
                return []
            read_games(self.games_path)  # a damaged file is refused before it is changed
            # The dropped games' records stay, named by no line: numbers are never reused.
            write_whole(self.games_path, b"".join(keep))
            self._mark_synced(self.games_path.stat().st_size)
        except OSError as exc:
            raise disk_error(exc) from None
        return dropped

    def open(self, meta: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Write tournament.json and open games.jsonl; the games already played."""
        self.lock()
        self.recover()
        # Read first: a damaged games.jsonl stops the run before anything is written.
        games = read_games(self.games_path, repair=True,
                           bots=[bot["name"] for bot in meta["bots"]])
        records = self.folder / RECORDS
        try:
            records.mkdir(exist_ok=True)
            (self.folder / LOGS).mkdir(exist_ok=True)
            for partial in records.glob(".*.tmp"):  # a record cut short by a crash
                partial.unlink()
            write_meta(self.folder, meta)
            self._count = max(_last_record_number(records),
                              *(_record_number(game) for game in games), 0)
            self._games_fd = os.open(self.games_path,
                                     os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
            self._records_on_games_device = (records.stat().st_dev
                                             == os.fstat(self._games_fd).st_dev)
            if not (self.folder / SYNCED).exists():
                # Made once and synced with its folder: from now on a missing
                # .synced means a folder of an older arena, not a power cut.
                self._mark_synced(os.fstat(self._games_fd).st_size)
                _sync_file(self.folder / SYNCED)
                _sync_file(self.folder)
        except OSError as exc:
            raise disk_error(exc) from None
        return games

    def rewrite_without(self, bots: Iterable[str]) -> int:
        """Drop every game of ``bots`` (to play them again); the number dropped."""
        self.lock()
        self.recover()
        drop = set(bots)
        games = read_games(self.games_path, repair=True)
        keep = [g for g in games if not drop & set(g["seats"])]
        data = "".join(json.dumps(game, separators=(",", ":")) + "\n" for game in keep)
        try:
            write_whole(self.games_path, data.encode("utf-8"))
            self._mark_synced(len(data.encode("utf-8")))
        except OSError as exc:
            raise disk_error(exc) from None
        return len(games) - len(keep)

    def reserve(self) -> str:
        """The record file of a game about to start (relative to the folder), so its
        bots' logs can name it; a number reserved but never stored is skipped."""
        self._count += 1
        return f"{RECORDS}/{self._count:06d}.json.gz"

    def append(self, game: dict[str, Any], record: GameRecord | bytes,
               name: str | None = None) -> None:
        """Store one finished game: its record first (as ``name`` from ``reserve``;
        a GameRecord, or the gzipped bytes a worker made of it), then its line.
        Both are synced with the group (every ``SYNC_GAMES`` games; see also
        ``sync_due``), the record first.

        A write cut short leaves at most a torn last line, which a resume drops,
        and a record no line names.
        """
        assert self._games_fd is not None
        name = name or self.reserve()
        path = self.folder / name
        data = record if isinstance(record, bytes) else gzipped(record)
        try:
            # A new name no line refers to yet: no temporary file and rename needed.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            raise disk_error(exc) from None
        try:
            files.write_all(fd, data)
        except OSError as exc:
            os.close(fd)
            with contextlib.suppress(OSError):
                path.unlink()  # no short record left behind
            raise disk_error(exc, path) from None
        if not self._games_unsynced:
            self._first_unsynced = self._clock()
        self._unsynced.append((fd, path))
        game["record"] = name
        try:
            files.write_all(self._games_fd,
                            (json.dumps(game, separators=(",", ":")) + "\n").encode())
        except OSError as exc:
            raise disk_error(exc, self.games_path) from None
        self._games_unsynced += 1
        if self._games_unsynced >= SYNC_GAMES:
            self.sync()

    def sync_due(self) -> bool:
        """Whether the oldest game not yet synced was stored ``SYNC_SECONDS`` ago."""
        return bool(self._games_unsynced) and (self._clock() - self._first_unsynced
                                               >= SYNC_SECONDS)

    def sync(self) -> None:
        """Put the games stored so far on the disk: their records and lines (one
        syncfs; else the records, then the lines), then the size of games.jsonl
        in .synced (the lines a resume need not check)."""
        if self._games_fd is None:
            return
        records, self._unsynced = self._unsynced, []
        try:
            size = self._sync_group(records)
            try:
                self._mark_synced(size)
            except OSError as exc:
                raise disk_error(exc) from None
        finally:
            self._games_unsynced = 0

    def _sync_group(self, records: list[tuple[int, Path]]) -> int:
        """The records and games.jsonl on the disk; games.jsonl's size then.  One
        syncfs where the records share games.jsonl's file system (no order among
        them is needed: a resume checks every record of the lines after .synced),
        else an fsync of each, the records first."""
        try:
            one_call = self._records_on_games_device and files.sync_file_system(
                self._games_fd)  # type: ignore[arg-type]
        except OSError as exc:
            for fd, _ in records:
                os.close(fd)
            raise disk_error(exc, self.folder) from None
        for i, (fd, path) in enumerate(records):
            try:
                if not one_call:
                    os.fsync(fd)
            except OSError as exc:
                for later, _ in records[i:]:
                    os.close(later)
                raise disk_error(exc, path) from None
            os.close(fd)
        try:
            if not one_call:
                os.fsync(self._games_fd)  # type: ignore[arg-type]
            return os.fstat(self._games_fd).st_size  # type: ignore[arg-type]
        except OSError as exc:
            raise disk_error(exc, self.games_path) from None

    def _mark_synced(self, size: int) -> None:
        # Written in place and not synced itself: a power cut leaves the old size
        # or the new one, and an older size only makes the next resume check more.
        fd = os.open(self.folder / SYNCED, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            os.pwrite(fd, f"{size:020d}\n".encode(), 0)
        finally:
            os.close(fd)

    def close(self) -> None:
        """Sync what was stored, close games.jsonl and let the folder go."""
        try:
            self.sync()
        finally:
            for fd in (self._games_fd, self._lock_fd):
                if fd is not None:
                    os.close(fd)  # closing the lock file releases the lock
            self._games_fd = self._lock_fd = None


def _synced_size(path: Path) -> int | None:
    """The size of games.jsonl at its last sync; None if no run of this version
    wrote the folder (older ones synced every game), 0 if .synced is damaged."""
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        return 0
    return int(text) if text.strip().isdigit() else 0


def _is_whole(record: Path) -> bool:
    """Whether a record file is there in full: its gzip checksum and length hold
    and it is one JSON object (a power cut leaves files empty, short or zeroed)."""
    try:
        data = record.read_bytes()
        if record.suffix == ".gz":
            data = gzip.decompress(data)
        return isinstance(json.loads(data), dict)
    except (OSError, EOFError, zlib.error, ValueError):
        return False


def _sync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _parsed(raw: bytes) -> object:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _record_number(game: Mapping[str, Any]) -> int:
    # A line names its record even if the file was deleted by hand since.
    stem = str(game.get("record", "")).rpartition("/")[2].split(".")[0]
    return int(stem) if stem.isdigit() else 0


def _last_record_number(records: Path) -> int:
    # Numbers are never reused, even after games are dropped for a replay.
    numbers = [int(p.name.split(".")[0]) for p in records.glob("*.json.gz")
               if p.name.split(".")[0].isdigit()]
    return max(numbers, default=0)
