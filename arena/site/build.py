"""Write a tournament folder's results site: ``arena report DIR [--out SITE]``.

The site is static files only, so it opens from ``file://`` and from any
static host.  Browsers refuse fetch() of ``file://`` URLs, so every data
file is a script that hands its value to the page (``arenaData(name,
value)``), loaded with a <script> tag when needed:

    index.html games.html bot.html replay.html app.js style.css   (the package's static/)
    data/tournament.js      standings and everything else on the index page
    data/games-0000.js ...  the game list, CHUNK_SIZE games a file
    data/bot-NAME.js        one per bot
    replays/000123.js       one per game, loaded when it is opened

Writing again is incremental: a file is written only if its text changed,
and a replay only if it does not exist yet (a record never changes once
written); so a run can refresh its site every 30 s.
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


def bot_file_key(name: str) -> str:
    """A file-name-safe key for a bot (names may hold any character but "/")."""
    if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
        return name
    return "x" + hashlib.sha256(name.encode()).hexdigest()[:16]


def build_site(folder: Path, out: Path | None = None, *,
               anchor: tuple[str, float] | None = None, running: bool = False) -> Path:
    """Write (or bring up to date) the site of ``folder``; the path of its index page.
    ``running``: a run is playing games there (the site says so).  A file that
    cannot be written is a UserError naming it."""
    out = folder / SITE if out is None else out
    try:
        return _build(folder, out, anchor, running)
    except OSError as exc:
        raise disk_error(exc) from None


def _build(folder: Path, out: Path, anchor: tuple[str, float] | None, running: bool) -> Path:
    folder_data = site_data.read_folder(folder)
    ratings = site_data.rate(folder_data, anchor)
    (out / "data").mkdir(parents=True, exist_ok=True)
    (out / "replays").mkdir(exist_ok=True)
    for name in STATIC:
        _write_if_changed(out / name,
                          resources.files("arena.site").joinpath("static", name).read_text(
                              encoding="utf-8"))

    # Replays first: a page that lists a game can open it (a site served live).
    write_replays(folder, out, folder_data.rows)
    summary = site_data.tournament_data(folder_data, ratings, chunk_size=CHUNK_SIZE,
                                        running=running)
    bots = summary["h2h"]["bots"]
    summary["bot_files"] = {bot: bot_file_key(bot) for bot in bots}
    rows = folder_data.rows
    # Rows name bots by their place in the roster, which only grows, so a full
    # chunk's file stays the same from one refresh to the next.
    for chunk in range(summary["chunks"]):
        part = rows[chunk * CHUNK_SIZE:(chunk + 1) * CHUNK_SIZE]
        encoded = site_data.game_rows(part, summary["roster"], summary["variants"])
        _write_data(out / "data" / f"games-{chunk:04d}.js", f"games-{chunk:04d}",
                    {"chunk": chunk, "rows": encoded})
    for bot in bots:
        _write_data(out / "data" / f"bot-{bot_file_key(bot)}.js", f"bot-{bot_file_key(bot)}",
                    site_data.bot_data(folder_data, bot, ratings))
    # Last: it names the files above.
    _write_data(out / "data" / "tournament.js", "tournament", summary)
    return out / "index.html"


def write_replays(folder: Path, out: Path, rows: list[site_data.GameRow]) -> int:
    """A replay file for every game with a record that has none yet; the number written."""
    manifest_path = out / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    fresh = manifest.get("replay_version") != FORMAT_VERSION  # an older format: write all again
    # One listing of each folder, not a path per game: a site may hold 100,000.
    # A replay older than its record is written again (the folder was made anew).
    done = {} if fresh else _mtimes(out / "replays")
    records = _mtimes(folder / RECORDS)
    written = 0
    for row in rows:
        record_time = records.get(f"{row.id}.json.gz")
        if record_time is None:
            continue  # no record (deleted by hand): the viewer says there is no replay
        if done.get(f"{row.id}.js", -1) >= record_time:
            continue
        target = out / "replays" / f"{row.id}.js"
        source = folder / RECORDS / f"{row.id}.json.gz"
        try:
            record = _load_record(source)
            text = replay_json(record, row.id, {"duration": row.duration})
        except RecordError as exc:
            text = _json({"v": FORMAT_VERSION, "game": row.id, "error": str(exc)})
        _write(target, _data_text(f"replay-{row.id}", text))  # new, or older than its record
        written += 1
    _write_if_changed(manifest_path, json.dumps({"replay_version": FORMAT_VERSION}) + "\n")
    return written


def _load_record(path: Path) -> GameRecord:
    """``load`` made cheaper for the usual file, a record as ``gzipped`` writes
    it (one gzip member): one read and one decompression, without a file
    object.  Anything else goes to ``load``, which names what is wrong."""
    try:
        unzip = zlib.decompressobj(31)  # wbits 31: a gzip member
        text = unzip.decompress(path.read_bytes())
        if unzip.eof and not unzip.unused_data:
            return GameRecord.from_json(json.loads(text))
    except (OSError, ValueError, zlib.error, RecordError):
        pass
    return load(path)


def _mtimes(folder: Path) -> dict[str, int]:
    """File name -> modification time (ns) of every file in ``folder``."""
    try:
        with os.scandir(folder) as entries:
            return {e.name: e.stat().st_mtime_ns for e in entries if e.is_file()}
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

    def loop() -> None:
        wait = every
        told = False
        while not stop.wait(wait):
            started = time.monotonic()
            try:
                build_site(folder, anchor=anchor, running=True)
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
