"""Write a tournament folder's results site: ``arena report DIR [--out SITE]``.

The site is static files only, so it opens from ``file://`` and from any
static host.  Browsers refuse fetch() of ``file://`` URLs, so every data
file is a script that hands its value to the page (``arenaData(name,
value)``), loaded with a <script> tag when needed:

    index.html games.html bot.html replay.html app.js style.css   (the package's static/)
    data/tournament.js      standings and everything else on the index page
    data/games-0000.js ...  the game list, CHUNK_SIZE games a file
    data/bot-NAME.js        one per bot
    replays/00006.js        the replays of games 000120-000139 (heads-up: replay_pack
                            games a file), loaded when one of them is opened

Writing again is incremental: a file is written only if its text changed,
and a game's replay is made only if it is not in its file yet (a record
never changes once written); so a run can refresh its site every 30 s.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, Final

import attrs

from arena.engine.record import GameRecord, RecordError, load
from arena.files import disk_error
from arena.site import data as site_data
from arena.site.replays import FORMAT_VERSION, replay_json
from arena.tournament.store import RECORDS

SITE: Final = "site"
CHUNK_SIZE: Final = 5000
STATIC: Final = ("index.html", "games.html", "bot.html", "replay.html", "app.js", "style.css")
MANIFEST: Final = "data/manifest.json"
REFRESH_SECONDS: Final = 30.0
# Seats' games per replay file, so 20 games heads-up and 5 at 8 players: a
# file made per game cost as much CPU as replaying the game (a new inode
# each, on ext4), and a replay grows with its table (3-7 KB heads-up, about
# 100 KB at 8 players), so a file stays small enough to open at once.
REPLAY_PACK_SEATS: Final = 40


def replay_pack(meta: dict[str, Any]) -> int:
    """Games per replay file for the tournament of ``meta`` (tournament.json)."""
    players = meta.get("players")
    seats = players if isinstance(players, int) and players >= 2 else 2
    return max(1, REPLAY_PACK_SEATS // seats)


def bot_file_key(name: str) -> str:
    """A file-name-safe key for a bot (names may hold any character but "/")."""
    if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
        return name
    return "x" + hashlib.sha256(name.encode()).hexdigest()[:16]


@attrs.define
class Refresh:
    """What one refresh of a run's site leaves to the next (``refreshing``):
    the games folded so far, and how many game-list chunks were full and
    written from them, with the roster and variants their rows index."""

    fold: site_data.Fold | None = None
    chunks: tuple[list[str], list[str], int] | None = None


def build_site(folder: Path, out: Path | None = None, *,
               anchor: tuple[str, float] | None = None, running: bool = False,
               refresh: Refresh | None = None) -> Path:
    """Write (or bring up to date) the site of ``folder``; the path of its index page.
    ``running``: a run is playing games there (the site says so).  ``refresh``:
    the state of the refresh before, updated (the games it folded are not
    folded again, the full chunks of the game list not written again).  A file
    that cannot be written is a UserError naming it."""
    out = folder / SITE if out is None else out
    try:
        return _build(folder, out, anchor, running, refresh)
    except OSError as exc:
        raise disk_error(exc) from None


def _build(folder: Path, out: Path, anchor: tuple[str, float] | None, running: bool,
           refresh: Refresh | None) -> Path:
    before = None
    if refresh is not None:  # spent whatever happens: kept again once read
        before, refresh.fold = refresh.fold, None
    fold = site_data.fold_games(folder, before)
    if refresh is not None:
        refresh.fold = fold
    folder_data = fold.data
    ratings = site_data.rate(folder_data, anchor)
    (out / "data").mkdir(parents=True, exist_ok=True)
    (out / "replays").mkdir(exist_ok=True)
    for name in STATIC:
        _write_if_changed(out / name,
                          resources.files("arena.site").joinpath("static", name).read_text(
                              encoding="utf-8"))

    # Replays first: a page that lists a game can open it (a site served live).
    pack = replay_pack(folder_data.meta)
    write_replays(folder, out, folder_data.rows, pack=pack)
    summary = site_data.tournament_data(folder_data, ratings, chunk_size=CHUNK_SIZE,
                                        running=running)
    bots = summary["h2h"]["bots"]
    summary["bot_files"] = {bot: bot_file_key(bot) for bot in bots}
    summary["replay_pack"] = pack
    rows = folder_data.rows
    # Rows name bots by their place in the roster, which only grows, so a full
    # chunk's file stays the same from one refresh to the next; a refresh that
    # went on with the fold before (the same rows first) does not even encode it.
    roster, variants = summary["roster"], summary["variants"]
    unchanged = 0
    if refresh is not None:
        if fold is before and refresh.chunks and refresh.chunks[:2] == (roster, variants):
            unchanged = refresh.chunks[2]
        refresh.chunks = None  # until the chunks are written
    for chunk in range(unchanged, summary["chunks"]):
        part = rows[chunk * CHUNK_SIZE:(chunk + 1) * CHUNK_SIZE]
        encoded = site_data.game_rows(part, roster, variants)
        _write_data(out / "data" / f"games-{chunk:04d}.js", f"games-{chunk:04d}",
                    {"chunk": chunk, "rows": encoded})
    if refresh is not None:
        refresh.chunks = (roster, variants, len(rows) // CHUNK_SIZE)
    for bot in bots:
        _write_data(out / "data" / f"bot-{bot_file_key(bot)}.js", f"bot-{bot_file_key(bot)}",
                    site_data.bot_data(folder_data, bot, ratings))
    # Last: it names the files above.
    _write_data(out / "data" / "tournament.js", "tournament", summary)
    return out / "index.html"


def write_replays(folder: Path, out: Path, rows: list[site_data.GameRow], *,
                  pack: int = REPLAY_PACK_SEATS // 2) -> int:
    """The replays of every game with a record, ``pack`` games a file (game N
    in ``replays/{N // pack:05d}.js``); the number of games replayed.  A file
    is written again only when it lacks a game or one of its games' records
    is newer than it, and then keeps the replays it had."""
    manifest_path = out / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    if not isinstance(manifest, dict):
        manifest = {}
    # An older format, or another number of games a file: write all again.
    fresh = manifest.get("replay_version") != FORMAT_VERSION or manifest.get("pack") != pack
    # Each file's [games, bytes] as written: a game added within the clock tick
    # in which its file was written would not show in the modification times,
    # and the bytes tell a file another writer wrote meanwhile (`arena report`).
    held = manifest.get("packs")
    held = {} if fresh or not isinstance(held, dict) else held
    # One listing of each folder, not a path per game: a site may hold 100,000.
    # A replay older than its record is made again (the folder was made anew).
    done = {} if fresh else _stats(out / "replays")
    if fresh:  # the files of the format before go (format 2: replays/000123.js, a game each)
        for name in _stats(out / "replays"):
            if re.fullmatch(r"[0-9]{5,6}\.js", name):
                (out / "replays" / name).unlink(missing_ok=True)
    records = {name: mtime for name, (mtime, _) in _stats(folder / RECORDS).items()}
    packs: dict[str, dict[str, tuple[int, float | None]]] = {}  # file -> game -> record
    for row in rows:
        record_time = records.get(f"{row.id}.json.gz")
        if record_time is not None and row.id.isascii():  # else no record: no replay
            packs.setdefault(f"{int(row.id) // pack:05d}", {})[row.id] = (
                record_time, row.duration)
    replayed = 0
    records_folder = f"{folder / RECORDS}{os.sep}"  # a text: joining a Path costs some us a game
    for key, games in packs.items():
        name = f"{key}.js"
        written, size = done.get(name, (-1, -1))
        if held.get(key) == [len(games), size] and all(
                t <= written for t, _ in games.values()):
            continue
        kept = _pack_entries(out / "replays" / name) if written >= 0 else {}
        entries = []
        for game_id, (record_time, duration) in games.items():
            text = kept.get(game_id) if record_time <= written else None
            if text is None:
                text = _replay_text(f"{records_folder}{game_id}.json.gz", game_id, duration)
                replayed += 1
            entries.append(f"{json.dumps(game_id)}:{text}")
        text = _pack_text(key, entries)
        _write(out / "replays" / name, text)
        held[key] = [len(games), len(text)]  # ASCII: one byte a character
    _write_if_changed(manifest_path, json.dumps(
        {"replay_version": FORMAT_VERSION, "pack": pack, "packs": held}, sort_keys=True) + "\n")
    return replayed


def _replay_text(source: str, game_id: str, duration: float | None) -> str:
    try:
        return replay_json(_load_record(source), game_id, {"duration": duration})
    except RecordError as exc:
        return _json({"v": FORMAT_VERSION, "game": game_id, "error": str(exc)})


def _pack_text(key: str, entries: list[str]) -> str:
    """A replay file: one game a line (JSON texts here hold no line break),
    so that ``_pack_entries`` can take the replays back without parsing them."""
    return f"arenaData(\"replays-{key}\",{{\n" + ",\n".join(entries) + "\n});\n"


def _pack_entries(path: Path) -> dict[str, str]:
    """Game id -> replay JSON text of a replay file; {} if it is not one."""
    try:
        lines = path.read_text(encoding="ascii").split("\n")
    except (OSError, UnicodeDecodeError):
        return {}
    if (len(lines) < 3 or not lines[0].startswith('arenaData("replays-')
            or lines[-2:] != ["});", ""]):
        return {}
    entries = {}
    for line in lines[1:-2]:
        game_id, colon, text = line.removesuffix(",").partition('":')
        if not colon or not game_id.startswith('"'):
            return {}
        entries[game_id[1:]] = text
    return entries


def _load_record(path: str | Path) -> GameRecord:
    """``load`` made cheaper for the usual file, a record as ``gzipped`` writes
    it (one gzip member): one read and one decompression, without gzip's
    file object.  Anything else goes to ``load``, which names what is wrong."""
    try:
        unzip = zlib.decompressobj(31)  # wbits 31: a gzip member
        with open(path, "rb") as file:
            text = unzip.decompress(file.read())
        if unzip.eof and not unzip.unused_data:
            return GameRecord.from_json(json.loads(text))
    except (OSError, ValueError, zlib.error, RecordError):
        pass
    return load(Path(path))


def _stats(folder: Path) -> dict[str, tuple[int, int]]:
    """File name -> (modification time in ns, size) of every file in ``folder``."""
    try:
        with os.scandir(folder) as entries:
            return {e.name: (stat.st_mtime_ns, stat.st_size)
                    for e in entries if e.is_file() for stat in (e.stat(),)}
    except OSError:
        return {}


def _write_data(path: Path, name: str, value: Any) -> None:
    _write_if_changed(path, _data_text(name, _json(value)))


def _json(value: Any) -> str:
    # ASCII only: the text is safe to load whatever the page's charset; bot logs
    # and fault lines are hostile text, and the pages only ever set them as text.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True)


def _data_text(name: str, json_text: str) -> str:
    """A data file's text: a script handing the value to the page."""
    return f"arenaData({json.dumps(name)},{json_text});\n"


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    _write(path, text)


def _write(path: Path, text: str) -> None:
    # Not fsynced, unlike the results: the site can always be written again.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)  # a page reading it meanwhile sees the old or the new file
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise disk_error(exc, path) from None


@contextmanager
def refreshing(folder: Path, *, anchor: tuple[str, float] | None = None,
               every: float = REFRESH_SECONDS) -> Iterator[None]:
    """Rebuild the site of ``folder`` every ``every`` seconds in a thread while
    the body runs (a run in progress), so a host can serve it live."""
    stop = threading.Event()
    refresh = Refresh()

    def loop() -> None:
        wait = every
        told = False
        while not stop.wait(wait):
            started = time.monotonic()
            try:
                build_site(folder, anchor=anchor, running=True, refresh=refresh)
            except Exception as exc:  # noqa: BLE001 - the run must go on; the end rebuilds
                if not told:  # once: the end of the run says it again if it still fails
                    print(f"arena: the results site was not refreshed: {exc}", file=sys.stderr)
                    told = True
            # A huge tournament's site takes seconds: keep it to a fifth of the time.
            wait = max(every, 4 * (time.monotonic() - started))

    thread = threading.Thread(target=loop, name="site-refresh", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
