"""`arena replay RECORD --as SEAT --raw`: the protocol lines exactly as the bot
saw them, checked against what a bot that writes down every line it gets
and sends (tests/bots/recorder.py) wrote in its log."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from arena.cli import main
from arena.engine.record import load
from arena.tournament.store import GAMES

BOTS = Path(__file__).parent / "bots"
RANDOM_BOT = Path(__file__).resolve().parents[1] / "example_bots" / "random.py"
_TIME = re.compile(r"  \([0-9.]+ ms\)$")


def arena(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return status, out, err


def raw(capsys: pytest.CaptureFixture[str], record: Path, seat: int) -> list[str]:
    status, out, err = arena(capsys, "replay", record, "--as", seat, "--raw")
    assert status == 0, err
    return out.splitlines()


def logged_games(log: Path) -> dict[str, list[str]]:
    """The recorder's protocol lines, game by game, keyed by the game's number.

    Split at the bot's own `< game N` lines, not at the referee's marks
    (`== game N, record R ==`): the bot's stderr is not ordered with the marks,
    and a game in which a bot is never asked can end before it has logged it.
    """
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in log.read_text().splitlines():
        if line.startswith("< game "):
            current = found.setdefault(line.split()[2], [])
        if current is not None and line[:2] in ("< ", "> ") and line != "< quit":
            current.append(line)
    return found


@pytest.mark.parametrize("players", [2, 3])
def test_raw_lines_are_the_lines_the_bot_got_and_sent(capsys, tmp_path: Path,
                                                      players: int) -> None:
    # One game slot, so each bot's single process plays every game: game numbers and
    # request ids run on across games.
    names = ("alpha", "beta", "gamma")[:players]
    for name in names:
        shutil.copyfile(BOTS / "recorder.py", tmp_path / f"{name}.py")
    out = tmp_path / "out"
    status, _, err = arena(capsys, "run", *(tmp_path / f"{n}.py" for n in names), "--games",
                           2 * players, "--players", players, "--seed", 3, "--concurrency", 1,
                           "--workers", 1, "--out", out)
    assert status == 0, err
    logs = {name: logged_games(out / "logs" / f"{name}.w0.log") for name in names}
    marks = {name: (out / "logs" / f"{name}.w0.log").read_text() for name in names}
    games = [json.loads(line) for line in (out / GAMES).read_text().splitlines()]
    assert len(games) == 2 * players
    compared = 0
    for game in games:
        for seat, name in enumerate(game["seats"]):
            shown = raw(capsys, out / game["record"], seat)
            assert shown[0].startswith("< game ") and f" seat {seat} " in shown[0]
            assert shown[-1].startswith("< gameover ")
            answers = [line for line in shown if line.startswith("> ")]
            assert answers and all(_TIME.search(line) for line in answers)
            number = shown[0].split()[2]
            assert f"== game {number}, record {game['record']} ==\n" in marks[name]
            assert [_TIME.sub("", line) for line in shown] == logs[name][number]
            compared += 1
    assert compared == 2 * players * players


def test_a_forfeit_shows_the_offending_line_and_the_fault(capsys, tmp_path: Path,
                                                          monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    record = tmp_path / "game.json"
    status, _, _ = arena(capsys, "play", BOTS / "garbage.py", RANDOM_BOT, "--seed", 2,
                         "--record", record, "--quiet")
    assert status == 1  # a bot faulted
    shown = raw(capsys, record, 0)
    assert shown[-3].startswith("< request 1 ")
    assert _TIME.sub("", shown[-2]) == "> what is this"
    assert shown[-1].startswith("! fault malformed after ")
    assert "'what is this'" in shown[-1] and shown[-1].endswith("the seat forfeits")
    # The other seat sees the forfeit as events, and the game to its end.
    other = raw(capsys, record, 1)
    assert any(line.startswith("< event forfeit 0 malformed") for line in other)
    assert other[-1].startswith("< gameover ")
    # The readable transcript shows the fault's evidence under the forfeit.
    status, out, _ = arena(capsys, "replay", record)
    assert "fault malformed: " in out and "its line: 'what is this'" in out


def test_raw_needs_a_seat_and_a_refereed_record(capsys, tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    assert arena(capsys, "play", RANDOM_BOT, RANDOM_BOT, "--seed", 1, "--record", record,
                 "--quiet")[0] == 0
    status, out, err = arena(capsys, "replay", record, "--raw")
    assert status == 2 and out == "" and "give --as SEAT" in err
    # A record from before answer times were recorded is still readable, not --raw.
    data = json.loads(record.read_text())
    for key in ("session", "answer_ms", "limits"):
        del data["referee"][key]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    assert arena(capsys, "replay", old, "--as", 0)[0] == 0
    status, out, err = arena(capsys, "replay", old, "--as", 0, "--raw")
    assert status == 2 and out == "" and len(err.splitlines()) == 1
    assert str(old) in err and "older arena" in err
    assert load(record).referee["answer_ms"]  # what --raw reads


def test_a_bot_that_never_started_shows_why(capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    plain = tmp_path / "plain"
    plain.write_text("echo hello plain\n")  # executable, but no #! line
    plain.chmod(0o755)
    record = tmp_path / "game.json"
    status, _, err = arena(capsys, "play", plain, RANDOM_BOT, "--seed", 2, "--record", record,
                           "--quiet")
    assert status == 1 and "fault: plain [0] crash: " in err
    (line,) = raw(capsys, record, 0)
    assert line.startswith("! never started for this game: fault crash: ")
    assert "Exec format error" in line
    other = raw(capsys, record, 1)
    assert other[0].startswith("< game 1 seat 1 ") and other[-1].startswith("< gameover ")
