"""Standings, head-to-head and fault tables, and the files written from them."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from arena.tournament.ratings import fit_ratings
from arena.tournament.report import (
    MAX_HEAD_TO_HEAD_BOTS,
    Table,
    fault_table,
    head_to_head_table,
    render_csv,
    render_markdown,
    render_text,
    standings_markdown,
    standings_records,
    standings_table,
    standings_text,
    write_reports,
)


def game(*seats: str, places=None, faults=None) -> dict:
    return {
        "group": 0,
        "index": 0,
        "seats": list(seats),
        "seed": 1,
        "placements": list(places or range(1, len(seats) + 1)),
        "turns": 12,
        "end": "last_player",
        "faults": faults or [None] * len(seats),
        "duration": 0.2,
    }


TIMEOUT = {"kind": "timeout", "detail": "no reply\nafter 1.0 s"}
CRASH = {"kind": "crash", "detail": "exit code 139"}

RESULTS = (
    [game("ann", "bob") for _ in range(3)]
    + [game("bob", "ann", faults=[None, TIMEOUT])]
    + [game("ann", "cid"), game("cid", "ann"), game("cid", "ann", faults=[None, CRASH])]
    + [game("bob", "cid", places=[1, 1]), game("cid", "bob", faults=[None, TIMEOUT])]
    + [game("cid", "bob", faults=[None, {"kind": "timeout", "detail": ""}])]
)


def column(table: Table, header: str) -> list[str]:
    k = table.headers.index(header)
    return [row[k] for row in table.rows]


def test_standings_show_rating_score_and_one_column_per_fault_kind() -> None:
    ratings = fit_ratings(RESULTS)
    table = standings_table(ratings, RESULTS)
    assert table.headers[:9] == ("#", "bot", "Elo ± 95%", "LOS", "games", "score", "W", "D", "L")
    assert "timeout" in table.headers and "crash" in table.headers
    assert "illegal" not in table.headers  # only kinds that occurred
    assert column(table, "#") == ["1", "2", "3"]
    assert column(table, "bot") == [r.bot for r in ratings.ratings]
    by_bot = dict(zip(column(table, "bot"), table.rows, strict=True))
    ann = ratings.by_bot("ann")
    row = by_bot["ann"]
    assert row[2] == f"{ann.elo:.0f} ± {ann.ci95:.0f}"
    assert row[4] == "7"  # games
    assert row[5] == f"{100 * ann.score:.1f}%"
    assert dict(zip(table.headers, by_bot["bob"], strict=True))["timeout"] == "2"
    assert dict(zip(table.headers, by_bot["ann"], strict=True))["timeout"] == "1"
    assert dict(zip(table.headers, by_bot["ann"], strict=True))["crash"] == "1"
    assert dict(zip(table.headers, by_bot["cid"], strict=True))["crash"] == ""
    assert column(table, "LOS")[-1] == ""  # nobody below the last bot


def test_unrated_bots_show_no_number_and_their_note() -> None:
    results = [*RESULTS, game("dan", "ann"), game("dan", "cid")]
    ratings = fit_ratings(results, bots=["eve"])
    table = standings_table(ratings, results)
    rows = {row[1]: dict(zip(table.headers, row, strict=True)) for row in table.rows}
    assert rows["dan"]["Elo ± 95%"] == "—"
    assert rows["dan"]["note"] == "won every game"
    assert rows["eve"]["note"] == "no games"
    assert rows["eve"]["score"] == ""


def test_head_to_head_scores_are_complementary_and_blank_on_the_diagonal() -> None:
    order = ["ann", "bob", "cid", "dan"]
    table = head_to_head_table(RESULTS, order)
    assert table.headers == ("#", "bot", "1", "2", "3", "4")
    grid = {row[1]: row[2:] for row in table.rows}
    for k, bot in enumerate(order):
        assert grid[bot][k] == ""
    assert grid["ann"][1] == "75%"  # 3 of 4 against bob
    assert grid["bob"][0] == "25%"
    assert grid["bob"][2] == "17%"  # a draw and two losses against cid: 0.5 / 3
    assert grid["cid"][1] == "83%"
    assert grid["ann"][3] == "" and grid["dan"][0] == ""  # never met


def test_head_to_head_counts_multi_player_games_pairwise() -> None:
    results = [game("ann", "bob", "cid"), game("bob", "ann", "cid")]
    table = head_to_head_table(results, ["ann", "bob", "cid"])
    grid = {row[1]: row[2:] for row in table.rows}
    assert grid["ann"] == ("", "50%", "100%")
    assert grid["cid"] == ("0%", "0%", "")


def test_fault_table_counts_kinds_with_a_one_line_example() -> None:
    table = fault_table(RESULTS, ["cid", "bob", "ann"])
    assert table.headers == ("bot", "kind", "count", "example")
    assert table.rows == (
        ("bob", "timeout", "2", "no reply after 1.0 s"),
        ("ann", "crash", "1", "exit code 139"),
        ("ann", "timeout", "1", "no reply after 1.0 s"),
    )
    long = [game("ann", "bob", faults=[{"kind": "crash", "detail": "x" * 500}, None])]
    (row,) = fault_table(long).rows
    assert len(row[3]) == 100 and row[3].endswith("…")


def test_markdown_is_a_github_table_with_escaped_pipes() -> None:
    table = Table(("bot", "note"), (("a|b", "fine"),))
    text = render_markdown(table)
    lines = text.splitlines()
    assert lines[0].startswith("| bot") and set(lines[1]) <= {"|", "-", ":"}
    assert "a\\|b" in lines[2]
    assert lines[2].count(" | ") == 1  # the escaped pipe does not split the cell


def test_text_rendering_has_no_markdown_pipes() -> None:
    text = render_text(standings_table(fit_ratings(RESULTS), RESULTS))
    assert "|" not in text
    assert "ann" in text and "Elo ± 95%" in text


def test_csv_round_trips() -> None:
    text = render_csv(["a", "b"], [[1, None], ["x,y", 2.5]])
    assert list(csv.reader(io.StringIO(text))) == [["a", "b"], ["1", ""], ["x,y", "2.5"]]


def test_standings_records_hold_raw_numbers() -> None:
    ratings = fit_ratings(RESULTS)
    records = standings_records(ratings, RESULTS)
    assert [r["bot"] for r in records] == [r.bot for r in ratings.ratings]
    first = records[0]
    assert first["elo"] == round(ratings.ratings[0].elo, 2)
    assert (
        first["faults_timeout"] + records[1]["faults_timeout"] + records[2]["faults_timeout"] == 3
    )
    assert records[-1]["los_next"] is None


def test_write_reports_writes_markdown_and_csv(tmp_path: Path) -> None:
    ratings = fit_ratings(RESULTS)
    md_path, csv_path = write_reports(tmp_path / "out", RESULTS, ratings, title="Test cup")
    markdown = md_path.read_text(encoding="utf-8")
    assert markdown.startswith("# Test cup\n")
    assert "10 games with a result, 3 bots." in markdown
    for section in ("## Standings", "## Head-to-head", "## Faults"):
        assert section in markdown
    assert markdown.index("## Standings") < markdown.index("## Head-to-head")
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text(encoding="utf-8"))))
    assert [row["bot"] for row in rows] == [r.bot for r in ratings.ratings]
    assert float(rows[0]["elo"]) == round(ratings.ratings[0].elo, 2)
    assert rows[-1]["los_next"] == ""


def test_markdown_without_faults_or_with_many_bots() -> None:
    clean = [game("ann", "bob"), game("bob", "ann")]
    text = standings_markdown(fit_ratings(clean), clean)
    assert "No faults." in text
    many = []
    bots = [f"b{k}" for k in range(MAX_HEAD_TO_HEAD_BOTS + 1)]
    for a, b in zip(bots, bots[1:] + bots[:1], strict=True):
        many += [game(a, b), game(b, a)]
    text = standings_markdown(fit_ratings(many), many)
    assert f"Left out: {len(bots)} bots" in text


def test_notes_and_anchor_reach_the_header() -> None:
    results = [*RESULTS, game("xav", "yul"), game("yul", "xav")]
    text = standings_markdown(fit_ratings(results, anchor=("ann", 2000.0)), results)
    assert "ann is fixed at 2000" in text
    assert "- The results fall into 2 groups" in text
    assert "| group" in text or "group |" in text


def test_standings_text_lists_bots_then_notes() -> None:
    results = [*RESULTS, game("dan", "ann")]
    text = standings_text(fit_ratings(results), results)
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["#", "bot", "Elo"]
    assert any(line.startswith("* ") and "no finite rating" in line for line in lines)
    assert text.index("dan") < text.index("* ")


def test_markdown_cells_show_a_name_as_text_never_as_html_or_a_link() -> None:
    table = Table(("bot",), (("<img src=x onerror=alert(1)>",), ("[x](javascript:alert(1))",),
                             ("a|b & c",)))
    markdown = render_markdown(table)
    assert "<img" not in markdown and "[x](" not in markdown
    assert "&lt;img src=x onerror=alert(1)&gt;" in markdown
    assert "\\[x\\](javascript:alert(1))" in markdown and "a\\|b &amp; c" in markdown
