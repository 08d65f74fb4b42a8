"""Standings, head-to-head and fault tables, rendered as Markdown, CSV or plain text.

Tables are plain values (:class:`Table`: headers and rows of display strings)
built from the games and a :class:`~arena.tournament.ratings.RatingTable`;
the renderers only lay them out.  ``standings.csv`` holds raw numbers
(:func:`standings_records`) rather than the formatted cells, so spreadsheets
can sort it.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs
from tabulate import tabulate

from arena.files import write_whole
from arena.tournament.ratings import (
    FAULT_KINDS,
    GameResult,
    RatingTable,
    as_game_results,
    pair_score,
    pairwise_scores,
)
from arena.tournament.times import TimeSummary, time_summaries

# A bigger head-to-head grid is unreadable in Markdown; standings.md says so instead.
MAX_HEAD_TO_HEAD_BOTS: Final = 32
MAX_DETAIL_CHARS: Final = 100
NO_VALUE: Final = "—"

Results = Iterable[GameResult | Mapping[str, Any]]


@attrs.frozen
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    # "left" or "right" per column; numbers read best right-aligned
    align: tuple[str, ...] = attrs.field()

    @align.default
    def _left(self) -> tuple[str, ...]:
        return ("left",) * len(self.headers)


def fault_counts(results: Results) -> dict[str, Counter[str]]:
    """bot -> fault kind -> number of games in which the bot had that fault."""
    counts: dict[str, Counter[str]] = {}
    for game in as_game_results(results):
        for bot, fault in zip(game.seats, game.faults, strict=True):
            if fault is not None:
                counts.setdefault(bot, Counter())[fault.kind] += 1
    return counts


def fault_kinds(counts: Mapping[str, Counter[str]]) -> list[str]:
    """Kinds that occurred: the referee's kinds in their usual order, then any others."""
    seen = {kind for per_bot in counts.values() for kind in per_bot}
    return [k for k in FAULT_KINDS if k in seen] + sorted(seen - set(FAULT_KINDS))


class DecisionTimes:
    """Each bot's decision times, added up from the game lines' per-seat
    summaries (:mod:`arena.tournament.times`)."""

    def __init__(self) -> None:
        self.by_bot: dict[str, TimeSummary] = {}

    def add(self, line: Mapping[str, Any]) -> None:
        """Count one game line."""
        time_summaries([line], self.by_bot)

    def table(self, order: Sequence[str], limit_ms: float | None = None) -> Table:
        """Decisions, median, 99th percentile and max, and the limit, one row
        per bot that decided anything."""
        headers = ["bot", "decisions", "median ms", "p99 ms", "max ms"]
        if limit_ms is not None:
            headers.append("limit ms")
        rows = []
        for bot in [*order, *sorted(set(self.by_bot) - set(order))]:
            summary = self.by_bot.get(bot)
            if summary is None or not summary.n:
                continue
            row = [bot, str(summary.n), _ms(summary.median()), _ms(summary.percentile(99)),
                   _ms(summary.max)]
            if limit_ms is not None:
                row.append(_ms(limit_ms))
            rows.append(tuple(row))
        return Table(tuple(headers), tuple(rows), ("left",) + ("right",) * (len(headers) - 1))


def _ms(value: float | None) -> str:
    if value is None:
        return NO_VALUE
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def runs_markdown(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The tournament(s) behind the standings: seed, options and limits, from each
    run's tournament.json, as Markdown lines."""
    lines = []
    for meta in runs:
        options = ", ".join(
            f"{key} {meta[key]}" for key in ("players", "games", "variant", "turn_limit")
            if meta.get(key) is not None
        )
        if meta.get("gauntlet"):
            options += f", gauntlet {meta['gauntlet']}"
        limits = meta.get("limits") or {}
        resources = meta.get("resources") or {}
        time_limits = ", ".join(
            f"{key.removesuffix('_ms')} {value} ms" for key, value in limits.items()
        )
        resource_limits = ", ".join(
            f"{key} {value}" for key, value in resources.items()
            if key != "sandbox_ro" and value not in (None, [])
        )
        lines.append(
            f"- seed {meta.get('seed')}; {options}; arena {meta.get('arena', '?')}"
            + (f"; time: {time_limits}" if time_limits else "")
            + (f"; resources: {resource_limits}" if resource_limits else "")
        )
    return lines


def standings_records(ratings: RatingTable, results: Results) -> list[dict[str, Any]]:
    """One dict of raw values per bot, in table order (the CSV rows).

    Keys: rank, bot, elo, ci95, los_next, games, score, wins, draws, losses,
    one ``faults_<kind>`` per kind that occurred, group, note.  Missing
    values are None; Elo and its interval are rounded to 0.01, fractions
    (score, LOS) to 0.0001, far below their uncertainty.
    """
    counts = fault_counts(results)
    kinds = fault_kinds(counts)
    records = []
    for rank, rating in enumerate(ratings.ratings, start=1):
        record: dict[str, Any] = {
            "rank": rank,
            "bot": rating.bot,
            "elo": _rounded(rating.elo, 2),
            "ci95": _rounded(rating.ci95, 2),
            "los_next": _rounded(rating.los_next, 4),
            "games": rating.games,
            "score": _rounded(rating.score, 4),
            "wins": rating.wins,
            "draws": rating.draws,
            "losses": rating.losses,
        }
        for kind in kinds:
            record[f"faults_{kind}"] = counts.get(rating.bot, Counter())[kind]
        record["group"] = rating.group
        record["note"] = rating.note
        records.append(record)
    return records


def standings_table(ratings: RatingTable, results: Results) -> Table:
    """Rank, bot, Elo +- 95%, LOS, games, score %, W/D/L, faults by kind, note."""
    games = as_game_results(results)
    counts = fault_counts(games)
    kinds = fault_kinds(counts)
    several_groups = len({r.group for r in ratings.ratings if r.group is not None}) > 1
    headers = ["#", "bot", "Elo ± 95%", "LOS", "games", "score", "W", "D", "L", *kinds]
    align = ["right", "left", "right", "right", "right", "right", "right", "right", "right"]
    align += ["right"] * len(kinds)
    if several_groups:
        headers.append("group")
        align.append("right")
    headers.append("note")
    align.append("left")
    rows = []
    for rank, rating in enumerate(ratings.ratings, start=1):
        row = [
            str(rank),
            rating.bot,
            _elo_cell(rating.elo, rating.ci95),
            _percent(rating.los_next),
            str(rating.games),
            _percent(rating.score, digits=1),
            str(rating.wins),
            str(rating.draws),
            str(rating.losses),
        ]
        bot_faults = counts.get(rating.bot, Counter())
        row += [str(bot_faults[kind]) if bot_faults[kind] else "" for kind in kinds]
        if several_groups:
            row.append("" if rating.group is None else str(rating.group))
        row.append(rating.note)
        rows.append(tuple(row))
    return Table(tuple(headers), tuple(rows), tuple(align))


def head_to_head_table(results: Results, order: Sequence[str]) -> Table:
    """Score % of each row's bot against each column's (pairwise, so multi-player
    games count every two seats); columns are numbered as the rows, blank on the
    diagonal and where two bots never met."""
    pairs = pairwise_scores(results)
    headers = ("#", "bot", *(str(k) for k in range(1, len(order) + 1)))
    rows = []
    for k, bot in enumerate(order, start=1):
        cells = []
        for other in order:
            if other == bot:
                cells.append("")
                continue
            score, count = pair_score(pairs, bot, other)
            cells.append(_percent(score / count) if count else "")
        rows.append((str(k), bot, *cells))
    return Table(headers, tuple(rows), ("right", "left", *("right",) * len(order)))


def fault_table(results: Results, order: Sequence[str] = ()) -> Table:
    """Bot, fault kind, count and the first detail seen, bots in ``order`` first."""
    examples: dict[tuple[str, str], str] = {}
    counts: Counter[tuple[str, str]] = Counter()
    for game in as_game_results(results):
        for bot, fault in zip(game.seats, game.faults, strict=True):
            if fault is not None:
                counts[(bot, fault.kind)] += 1
                if not examples.get((bot, fault.kind)) and fault.detail:
                    examples[(bot, fault.kind)] = fault.detail
    position = {bot: k for k, bot in enumerate(order)}
    keys = sorted(
        counts, key=lambda bk: (position.get(bk[0], len(position)), bk[0], -counts[bk], bk[1])
    )
    rows = tuple(
        (bot, kind, str(counts[(bot, kind)]), _short(examples.get((bot, kind), "")))
        for bot, kind in keys
    )
    return Table(("bot", "kind", "count", "example"), rows, ("left", "left", "right", "left"))


def render_markdown(table: Table) -> str:
    """A GitHub-flavoured Markdown table."""
    rows = [[_markdown_cell(cell) for cell in row] for row in table.rows]
    headers = [_markdown_cell(cell) for cell in table.headers]
    return _tabulate(rows, headers, "github", table.align)


def render_text(table: Table) -> str:
    """A plain-text table for the terminal."""
    return _tabulate([list(row) for row in table.rows], list(table.headers), "simple", table.align)


def render_csv(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """CSV text; None becomes an empty field."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(headers)
    for row in rows:
        writer.writerow(["" if value is None else value for value in row])
    return buffer.getvalue()


def standings_markdown(
    ratings: RatingTable,
    results: Results,
    *,
    title: str = "Standings",
    runs: Sequence[Mapping[str, Any]] = (),
    times: DecisionTimes | None = None,
) -> str:
    """The whole standings.md: a short header with the runs' seeds, options and
    limits, then standings, head-to-head, decision times and faults."""
    games = as_game_results(results)
    rated_games = sum(1 for game in games if game.placements is not None)
    order = [rating.bot for rating in ratings.ratings]
    if ratings.anchor is not None:
        scale = f"{ratings.anchor[0]} is fixed at {ratings.anchor[1]:g}"
    else:
        scale = "the mean is 1500"
    lines = [
        f"# {title}",
        "",
        f"{rated_games} games with a result, {len(order)} bots.",
        "",
        "Elo is fitted by maximum likelihood over all games at once (Bradley-Terry, as Ordo "
        f"and BayesElo do; {scale}). A game of more than two players counts as the pairwise "
        "results of its placements; score is the share of those pairwise points. "
        "± is the 95% confidence interval; LOS is the likelihood that a bot is stronger than "
        "the next one down. W/D/L count first place alone, shared first place, and the rest.",
        "",
    ]
    lines += [f"- {note}" for note in ratings.notes]
    if ratings.notes:
        lines.append("")
    if runs:
        lines += ["## Tournament" if len(runs) == 1 else "## Tournaments", ""]
        lines += runs_markdown(runs)
        lines.append("")
    lines += ["## Standings", "", render_markdown(standings_table(ratings, games)), ""]
    lines += ["## Head-to-head", ""]
    if len(order) > MAX_HEAD_TO_HEAD_BOTS:
        lines.append(
            f"Left out: {len(order)} bots is more than {MAX_HEAD_TO_HEAD_BOTS} columns can show."
        )
    else:
        lines.append("Score of the row's bot against the column's.")
        lines += ["", render_markdown(head_to_head_table(games, order))]
    if times is not None:
        limits = {meta.get("limits", {}).get("decision_ms") for meta in runs}
        limit = limits.pop() if len(limits) == 1 else None
        table = times.table(order, limit if isinstance(limit, int | float) else None)
        if table.rows:
            lines += ["", "## Decision times", ""]
            lines.append("Per bot over all its games; each game line keeps its median and "
                         "its slowest decision.")
            lines += ["", render_markdown(table)]
    lines += ["", "## Faults", ""]
    faults = fault_table(games, order)
    if faults.rows:
        by_kind = Counter()
        for per_bot in fault_counts(games).values():
            by_kind.update(per_bot)
        lines.append("By kind: " + ", ".join(
            f"{by_kind[kind]} {kind}" for kind in fault_kinds({"": by_kind})) + ".")
        lines += ["", render_markdown(faults)]
    else:
        lines.append("No faults.")
    return "\n".join(lines) + "\n"


def standings_text(ratings: RatingTable, results: Results) -> str:
    """Standings and the rating notes, for printing at the end of a run."""
    lines = [render_text(standings_table(ratings, results))]
    lines += [f"* {note}" for note in ratings.notes]
    return "\n".join(lines) + "\n"


def write_reports(
    out_dir: Path,
    results: Results,
    ratings: RatingTable,
    *,
    title: str = "Standings",
    runs: Sequence[Mapping[str, Any]] = (),
    times: DecisionTimes | None = None,
) -> tuple[Path, Path]:
    """Write ``standings.md`` and ``standings.csv`` into ``out_dir``; return their paths."""
    games = as_game_results(results)
    out_dir.mkdir(parents=True, exist_ok=True)
    markdown_path = out_dir / "standings.md"
    csv_path = out_dir / "standings.csv"
    # Whole or not at all: a full disk never leaves a short table behind.
    write_whole(markdown_path, standings_markdown(ratings, games, title=title, runs=runs,
                                                  times=times).encode("utf-8"))
    records = standings_records(ratings, games)
    headers = list(records[0]) if records else ["rank", "bot"]
    write_whole(csv_path, render_csv(headers, ([record[h] for h in headers]
                                               for record in records)).encode("utf-8"))
    return markdown_path, csv_path


def _elo_cell(elo: float | None, ci95: float | None) -> str:
    if elo is None:
        return NO_VALUE
    return f"{elo:.0f}" if ci95 is None else f"{elo:.0f} ± {ci95:.0f}"


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _percent(value: float | None, *, digits: int = 0) -> str:
    return "" if value is None else f"{100.0 * value:.{digits}f}%"


def _short(text: str) -> str:
    text = " ".join(text.split())  # one line: details may hold tracebacks
    return text if len(text) <= MAX_DETAIL_CHARS else text[: MAX_DETAIL_CHARS - 1] + "…"


def _markdown_cell(text: str) -> str:
    # tabulate does not escape pipes, which would split the cell; a bot's name
    # must not become HTML or a link where standings.md is shown
    for plain, escaped in _MARKDOWN_ESCAPES:
        text = text.replace(plain, escaped)
    return text


_MARKDOWN_ESCAPES: Final = (
    ("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"), ("[", "\\["), ("]", "\\]"),
)


def _tabulate(rows: list[list[str]], headers: list[str], fmt: str, align: Sequence[str]) -> str:
    # Cells are already formatted strings; number parsing would reformat them.
    return tabulate(rows, headers, tablefmt=fmt, colalign=tuple(align), disable_numparse=True)
