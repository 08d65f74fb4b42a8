"""The results site's data, as plain values built from a tournament folder.

One pass over games.jsonl keeps what the pages need and no more (a game
line as a dict is large; 100,000 of them must fit): the ratings' results,
a short row per game for the game list, each bot's tallies against each
opponent, its most recent faults and its decision times.  Standings, the
head-to-head matrix and the fault table come from the same functions as
standings.md (arena.tournament.report and ratings).
"""

from __future__ import annotations

import shlex
from array import array
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import attrs

from arena.errors import UserError
from arena.tournament import report as reports
from arena.tournament.ratings import (
    GameResult,
    RatingTable,
    fit_ratings,
    pair_score,
    pairwise_scores,
)
from arena.tournament.store import GAMES, LOGS, read_games, read_meta
from arena.tournament.times import TimeSummary

MAX_FAULTS_PER_BOT: Final = 200  # the most recent; the count says how many there were
LOG_TAIL_BYTES: Final = 6000
LOG_TAIL_LINES: Final = 60
END_CODES: Final = ("last_player", "turn_limit", "time_cap")


@attrs.frozen
class GameRow:
    """One game as the game list shows it."""

    id: str  # the record's number, "000123"; "" if the game has no record
    line: int  # 1-based line of games.jsonl
    seats: tuple[str, ...]
    placements: tuple[int, ...] | None
    turns: int | None
    end: str | None
    faults: tuple[str | None, ...]  # fault kind per seat
    variant: str
    duration: float | None


@attrs.define
class Tally:
    games: int = 0
    wins: int = 0  # pairwise: placed ahead of the opponent
    draws: int = 0
    losses: int = 0


@attrs.define
class Folder:
    """What the site shows of one tournament folder."""

    folder: Path
    meta: dict[str, Any]
    results: list[GameResult]
    rows: list[GameRow]
    times: dict[str, TimeSummary]
    versus: dict[str, dict[str, Tally]]  # bot -> opponent -> pairwise tally
    faults: dict[str, deque[dict[str, Any]]]  # bot -> its latest faults, each with its game
    fault_totals: Counter[str]


def game_id(line: Mapping[str, Any]) -> str:
    """The id of a game line: its record's number (records/000123.json.gz -> 000123)."""
    stem = str(line.get("record", "")).rpartition("/")[2].split(".")[0]
    return stem if stem.isdigit() else ""


def read_folder(folder: Path) -> Folder:
    """Read tournament.json and games.jsonl (UserError with one line if they are damaged)."""
    return fold_games(folder).data


@attrs.define
class Fold:
    """What was folded from a folder's games.jsonl, for the next refresh."""

    data: Folder
    keys: array[int]  # hash((group, index)) of each game line folded, in order


def fold_games(folder: Path, last: Fold | None = None) -> Fold:
    """``read_folder``, and what the next refresh needs.  With ``last``, the
    fold of the refresh before (a run refreshes its site every 30 s), its
    lines are read and checked again but not folded again: only the lines
    added since are (two thirds of a long run's refresh), into ``last``
    itself, so it is spent even if this fails.  If games.jsonl is no longer
    those lines plus new ones (a game dropped, lines cut off), it is folded
    anew."""
    meta = read_meta(folder)
    if last is not None and last.data.folder == folder:
        try:
            return _fold(folder, meta, last)
        except _Rewritten:
            pass
    return _fold(folder, meta, None)


class _Rewritten(Exception):  # noqa: N818 - not an error: games.jsonl is folded anew
    """games.jsonl is not the lines folded before followed by new ones."""


def _fold(folder: Path, meta: dict[str, Any], last: Fold | None) -> Fold:
    variant = str(meta.get("variant", ""))
    if last is None:
        data = Folder(folder, meta, [], [], {}, {}, {}, Counter())
        keys: array[int] = array("q")
    else:
        data, keys = last.data, last.keys
        data.meta = meta
    known = number = len(keys)
    folded = data.results
    position = 0

    def take(line: dict[str, Any]) -> GameResult:
        nonlocal number, position
        position += 1
        key = hash((line["group"], line["index"]))
        if position <= known:
            if keys[position - 1] != key:
                raise _Rewritten  # not a ValueError: read_games lets it through
            return folded[position - 1]
        keys.append(key)
        number += 1
        result = GameResult.from_json(line)  # checks the line; ValueError names the problem
        gid = game_id(line)
        seats = result.seats
        raw_faults = line.get("faults") or [None] * len(seats)
        kinds = tuple(f.kind if f is not None else None for f in result.faults)
        data.rows.append(GameRow(gid, number, seats, result.placements, line.get("turns"),
                                 line.get("end"), kinds, str(line.get("variant", variant)),
                                 line.get("duration")))
        for name, summary in zip(seats, line.get("decision_ms") or (), strict=False):
            data.times.setdefault(name, TimeSummary()).add(summary)
        for seat, fault in enumerate(raw_faults):
            if isinstance(fault, Mapping):
                name = seats[seat]
                data.fault_totals[name] += 1
                data.faults.setdefault(name, deque(maxlen=MAX_FAULTS_PER_BOT)).append(
                    {"game": gid, "line": number, **{k: v for k, v in fault.items()
                                                       if isinstance(v, (str, int, float))}})
        if result.placements is not None:
            places = result.placements
            for i, a in enumerate(seats):
                row = data.versus.setdefault(a, {})
                for j, b in enumerate(seats):
                    if i != j:
                        tally = row.setdefault(b, Tally())
                        tally.games += 1
                        if places[i] < places[j]:
                            tally.wins += 1
                        elif places[i] == places[j]:
                            tally.draws += 1
                        else:
                            tally.losses += 1
        return result

    results = read_games(folder / GAMES, convert=take)
    if len(results) < known:
        raise _Rewritten  # lines cut off
    data.results = results
    return last if last is not None else Fold(data, keys)  # gone on with: the same fold


def rate(data: Folder, anchor: tuple[str, float] | None = None) -> RatingTable:
    names = [bot["name"] for bot in data.meta.get("bots", [])]
    try:
        return fit_ratings(data.results, anchor=anchor, bots=names)
    except ValueError as exc:
        raise UserError(f"cannot rate: {exc}") from None


def tournament_data(data: Folder, ratings: RatingTable, *, chunk_size: int,
                    generated: datetime | None = None, running: bool = False) -> dict[str, Any]:
    """The index page: standings, the tournament's settings, head-to-head, faults, times."""
    meta = data.meta
    games = data.results
    order = [rating.bot for rating in ratings.ratings]
    counts = reports.fault_counts(games)
    kinds = reports.fault_kinds(counts)
    pairs = pairwise_scores(games)
    matrix = []
    for bot in order:
        cells: list[list[float | int] | None] = []
        for other in order:
            if other == bot:
                cells.append(None)
                continue
            score, count = pair_score(pairs, bot, other)
            cells.append([round(score / count, 4), count] if count else None)
        matrix.append(cells)
    limits = meta.get("limits", {})
    times = {}
    for bot in order:
        summary = data.times.get(bot)
        if summary is not None and summary.n:
            times[bot] = {"n": summary.n, "median": summary.median(),
                          "p99": summary.percentile(99), "max": summary.max}
    return {
        "title": data.folder.resolve().name,
        "generated": _iso(generated or datetime.now(UTC)),
        "meta": {
            "command": shlex.join(_command(meta.get("command"))),
            "arena": meta.get("arena"),
            "seed": meta.get("seed"),
            "options": {key: meta.get(key) for key in
                        ("players", "games", "gauntlet", "variant", "turn_limit", "plain_deal")},
            "limits": limits,
            "resources": meta.get("resources"),
            "started": meta.get("started"),
            "finished": None if running else meta.get("finished"),
            "running": running,
            "bots": [{"name": bot.get("name"), "command": shlex.join(_command(bot.get("command"))),
                      "hash": bot.get("hash")} for bot in meta.get("bots", [])],
        },
        "anchor": list(ratings.anchor) if ratings.anchor else None,
        "notes": list(ratings.notes),
        "standings": reports.standings_records(ratings, games),
        "fault_kinds": kinds,
        "faults": {bot: dict(per_bot) for bot, per_bot in counts.items()},
        "h2h": {"bots": order, "cells": matrix},
        "times": times,
        "breakdown": breakdown(data),
        "roster": roster(data),
        "games": len(data.rows),
        "rated_games": sum(1 for game in games if game.placements is not None),
        "chunk_size": chunk_size,
        "chunks": (len(data.rows) + chunk_size - 1) // chunk_size,
        "variants": sorted({row.variant for row in data.rows}),
        "sizes": sorted({len(row.seats) for row in data.rows}),
        "ends": sorted({row.end for row in data.rows if row.end}),
    }


def breakdown(data: Folder) -> list[dict[str, Any]]:
    """Each bot's score by variant and table size; empty when the run has one of each."""
    groups: dict[tuple[str, int], list[GameResult]] = {}
    for row, result in zip(data.rows, data.results, strict=True):
        groups.setdefault((row.variant, len(row.seats)), []).append(result)
    if len(groups) < 2:
        return []
    out = []
    for (variant, size), results in sorted(groups.items()):
        scores: dict[str, list[float]] = {}
        for (a, b), (score, count) in pairwise_scores(results).items():
            scores.setdefault(a, [0.0, 0])[0] += score
            scores[a][1] += count
            scores.setdefault(b, [0.0, 0])[0] += count - score
            scores[b][1] += count
        played = Counter(name for result in results for name in result.seats)
        out.append({"variant": variant, "players": size, "games": len(results),
                    "bots": {bot: {"games": played[bot],
                                   "score": round(points / n, 4) if n else None}
                             for bot, (points, n) in scores.items()}})
    return out


def roster(data: Folder) -> list[str]:
    """Every bot, in the order tournament.json lists them (late entries come last),
    then any other name a game line holds."""
    names = [str(bot.get("name")) for bot in data.meta.get("bots", [])]
    known = set(names)
    extra = sorted({name for row in data.rows for name in row.seats} - known)
    return names + extra


def game_rows(rows: Sequence[GameRow], bots: Sequence[str],
              variants: Sequence[str]) -> list[list[Any]]:
    """Short rows for the game list: ``[id, line, seats, places, turns, end, faults,
    variant, duration]``; bots and variants as indexes into the lists given, the end
    as an index into END_CODES (or its text), faults 0 when there are none, else the
    fault kind of each seat (faults are rare: their names cost little)."""
    bot_index = {bot: k for k, bot in enumerate(bots)}
    variant_index = {variant: k for k, variant in enumerate(variants)}
    out = []
    for row in rows:
        faults: Any = 0
        if any(row.faults):
            faults = list(row.faults)
        end: Any = END_CODES.index(row.end) if row.end in END_CODES else row.end
        out.append([row.id, row.line, [bot_index[name] for name in row.seats],
                    list(row.placements) if row.placements else None, row.turns, end, faults,
                    variant_index.get(row.variant, 0),
                    None if row.duration is None else round(row.duration, 2)])
    return out


def bot_data(data: Folder, bot: str, ratings: RatingTable) -> dict[str, Any]:
    """A bot's page: its score against each opponent, its faults, its log's tail, its times."""
    try:
        rating = attrs.asdict(ratings.by_bot(bot))
    except KeyError:
        rating = None
    opponents = []
    for other, tally in sorted(data.versus.get(bot, {}).items()):
        points = tally.wins + tally.draws / 2
        opponents.append({"bot": other, "games": tally.games, "wins": tally.wins,
                          "draws": tally.draws, "losses": tally.losses,
                          "score": round(points / tally.games, 4) if tally.games else None})
    summary = data.times.get(bot)
    times = None
    if summary is not None and summary.n:
        times = {"n": summary.n, "median": summary.median(), "p99": summary.percentile(99),
                 "max": summary.max}
    faults = list(data.faults.get(bot, ()))
    faults.reverse()  # most recent first
    return {
        "bot": bot,
        "rating": rating,
        "opponents": opponents,
        "faults": faults,
        "faults_total": data.fault_totals.get(bot, 0),
        "times": times,
        "logs": log_tails(data.folder / LOGS, bot),
    }


def log_tails(logs: Path, bot: str) -> list[dict[str, Any]]:
    """The last lines of each of the bot's logs (one per worker)."""
    tails = []
    for path in sorted(logs.glob(f"{_glob_escape(bot)}.w*.log")):
        try:
            size = path.stat().st_size
            with open(path, "rb") as f:
                f.seek(max(0, size - LOG_TAIL_BYTES))
                raw = f.read()
        except OSError:
            continue
        lines = raw.decode("utf-8", errors="replace").splitlines()
        cut = size > LOG_TAIL_BYTES
        if cut and lines:
            lines = lines[1:]  # the first line read is likely cut in the middle
        if len(lines) > LOG_TAIL_LINES:
            lines, cut = lines[-LOG_TAIL_LINES:], True
        tails.append({"file": f"{LOGS}/{path.name}", "size": size, "cut": cut,
                      "text": "\n".join(lines)})
    return tails


def _glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _command(value: Any) -> list[str]:
    return [str(part) for part in value] if isinstance(value, list) else []


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
