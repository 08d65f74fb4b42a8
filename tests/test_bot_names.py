"""A bot's name never becomes a path as it is (issue 11, item 9).

A bot.toml may name its bot anything: ``..`` once made a bot's scratch folder
the whole run folder (its opponents' logs and scratch folders in reach), and a
name of 64 four-byte characters was too long for a file name.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from arena.cli import main
from arena.referee.bots import file_name
from arena.tournament.store import GAMES

DET_BOT = Path(__file__).parent / "bots" / "det_hash.py"
RANDOM_BOT = Path(__file__).parent.parent / "example_bots" / "random.py"
# A deterministic bot that first leaves a file in its working folder, its scratch
# folder, and says in its log where that is (the scratch folder goes with the run).
PLANTER = ("import os as _os, sys as _sys\nopen('planted', 'w').close()\n"
           "print('cwd:', _os.getcwd(), file=_sys.stderr, flush=True)\n" + DET_BOT.read_text())


def scratch_of(log: Path) -> Path:
    """The scratch folder a planter ran in, as its log says."""
    [line] = [line for line in log.read_text().splitlines() if line.startswith("cwd: ")]
    return Path(line.removeprefix("cwd: "))
LONG = "\N{MATHEMATICAL DOUBLE-STRUCK CAPITAL X}" * 64  # 64 characters, 256 bytes


def folder_bot(path: Path, name: str) -> str:
    path.mkdir(parents=True)
    (path / "bot.py").write_text(PLANTER)
    (path / "bot.toml").write_text(f"name = {json.dumps(name, ensure_ascii=False)}\n"
                                   f"run = [{json.dumps(sys.executable)}, \"./bot.py\"]\n")
    return str(path)


def arena(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str]:
    capsys.readouterr()
    status = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out + err


@pytest.mark.parametrize("name", ["..", ".", LONG, "a b"], ids=["dotdot", "dot", "long", "space"])
@pytest.mark.parametrize("command", ["play", "check"])
def test_a_bot_s_scratch_folder_is_its_own_whatever_its_name(
        capsys, monkeypatch, tmp_path: Path, name: str, command: str) -> None:
    monkeypatch.chdir(tmp_path)  # play and check write under ./results
    bot = folder_bot(tmp_path / "bot", name)
    argv = ([command, bot, RANDOM_BOT, "--seed", 1, "--quiet"] if command == "play"
            else [command, bot, "--games", 1, "--seed", 1])
    status, output = arena(capsys, *argv)
    assert status == 0, output
    [log] = list((tmp_path / "results").rglob(f"logs/{file_name(name)}.log"))
    scratch = scratch_of(log)
    assert scratch.parent == log.parent.parent / "scratch", scratch
    assert scratch.name == file_name(name)
    # It planted its file there, and the scratch folder went with the run.
    assert list((tmp_path / "results").rglob("planted")) == []


def test_a_long_or_dotted_name_plays_a_tournament(capsys, tmp_path: Path) -> None:
    bots = [folder_bot(tmp_path / "long", LONG), folder_bot(tmp_path / "dots", "..")]
    out = tmp_path / "out"
    status, output = arena(capsys, "run", *bots, "--games", 2, "--seed", 1, "--workers", 1,
                           "--out", out)
    assert status == 0, output
    lines = [json.loads(line) for line in (out / GAMES).read_text().splitlines()]
    assert len(lines) == 2 and {LONG, ".."} == set(lines[0]["seats"])
    # Its game slot's, and its start-up check's (arena run starts every bot first).
    scratch = {scratch_of(out / "logs" / f"{file_name(name)}{suffix}.log")
               for name in (LONG, "..") for suffix in (".w0", ".preflight")}
    assert scratch == {out / "scratch" / f"{file_name(name)}{suffix}" for name in (LONG, "..")
                       for suffix in (".w0", ".preflight")}
    assert sorted(p.name for p in out.iterdir() if p.name == "planted") == []
    assert LONG in output and ".." in output  # the tables keep the names as they are


def test_file_names_are_plain_short_and_apart() -> None:
    names = ["alpha", "random-2", "v1.2", "..", ".", ".hidden", "a b", "a_b", "a/b", LONG,
             LONG[:-1], "é", "e", "-", "x" * 64, "x" * 65]
    mapped = [file_name(name) for name in names]
    assert len(set(mapped)) == len(names)
    assert mapped[:4] == ["alpha", "random-2", "v1.2", mapped[3]]
    for made in mapped:
        assert made not in (".", "..") and not made.startswith(".") and "/" not in made
        assert len(made.encode()) <= 64 and made.isascii()
        assert os.path.basename(made) == made
