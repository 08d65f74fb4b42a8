"""`arena play`: its exit status says whether every bot played cleanly, and a
bot that faulted is shown with the end of its stderr and where its log is."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli import main

BOTS = Path(__file__).parent / "bots"
RANDOM_BOT = Path(__file__).resolve().parents[1] / "example_bots" / "random.py"


def play(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(["play", *map(str, argv), "--quiet"])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_clean_game_exits_0(capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = play(capsys, RANDOM_BOT, RANDOM_BOT, "--seed", 3)
    assert status == 0, err
    assert "fault" not in err
    logs = next(line for line in out.splitlines() if line.startswith("logs: "))
    assert (tmp_path / logs.removeprefix("logs: ") / "random.log").is_file()


def test_a_crash_exits_1_with_the_end_of_its_stderr(capsys, tmp_path: Path,
                                                    monkeypatch) -> None:
    # crash.py exits with status 3 at its second request, after a line on stderr.
    monkeypatch.chdir(tmp_path)
    status, out, err = play(capsys, BOTS / "crash.py", RANDOM_BOT, "--seed", 3)
    assert status == 1
    lines = err.splitlines()
    assert lines[0].startswith("fault: crash [0] crash: ")
    assert lines[1].startswith("  the end of its stderr (") and "crash.log" in lines[1]
    assert "  | crash: giving up on purpose" in lines
    assert not any(line.startswith("  | [arena:") for line in lines)  # the bot's own words
    assert "record: " in out and "logs: " in out


def test_one_bot_is_one_line(capsys) -> None:
    status, _, err = play(capsys, RANDOM_BOT)
    assert status == 2
    assert err.strip() == "arena play: 1 bot given; a game takes 2 to 8"
