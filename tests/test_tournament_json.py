"""tournament.json: written once by the command that made the folder, with
paths as given, and never rewritten by a run that has nothing to do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from arena.cli import main
from arena.tournament.store import GAMES, LOCK, TOURNAMENT

DET_BOT = Path(__file__).parent / "bots" / "det_hash.py"


def arena(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str]:
    capsys.readouterr()
    status = main([str(arg) for arg in argv])
    return status, capsys.readouterr().err


def state(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every result file's bytes and modification time (.lock is the lock a run
    takes on the folder, not a result)."""
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != LOCK}


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with bots/alpha.py, bots/beta.py and bots/gamma.py."""
    (tmp_path / "bots").mkdir()
    for name in ("alpha", "beta", "gamma"):
        shutil.copyfile(DET_BOT, tmp_path / "bots" / f"{name}.py")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_paths_are_stored_as_given(capsys, here: Path) -> None:
    status, err = arena(capsys, "run", "bots/alpha.py", "bots/beta.py", "--games", 2,
                        "--seed", 4, "--out", "out")
    assert status == 0, err
    text = (here / "out" / TOURNAMENT).read_text()
    assert str(here) not in text
    meta = json.loads(text)
    assert meta["bot_args"] == ["bots/alpha.py", "bots/beta.py"]
    assert meta["command"] == ["arena", "run", "bots/alpha.py", "bots/beta.py", "--games", "2",
                               "--seed", "4", "--out", "out"]
    assert [bot["command"][-1] for bot in meta["bots"]] == ["bots/alpha.py", "bots/beta.py"]
    assert not any(arg.startswith("/") for bot in meta["bots"] for arg in bot["command"])


def test_a_resume_keeps_the_command_and_with_nothing_to_do_writes_nothing(
        capsys, here: Path) -> None:
    first = ["run", "bots/alpha.py", "bots/beta.py", "--games", "2", "--seed", "4",
             "--out", "out"]
    assert arena(capsys, *first)[0] == 0
    # A late entry plays its games; the folder's command stays the first one.
    status, err = arena(capsys, "run", "bots/alpha.py", "bots/beta.py", "bots/gamma.py",
                        "--games", 2, "--seed", 4, "--out", "out")
    assert status == 0, err
    meta = json.loads((here / "out" / TOURNAMENT).read_text())
    assert meta["command"] == ["arena", *first]
    assert len(meta["bots"]) == 3 and len((here / "out" / GAMES).read_text().splitlines()) == 6
    before = state(here / "out")
    status, err = arena(capsys, "run", "--resume", "out")
    assert status == 0, err
    assert "nothing to play" in err
    assert state(here / "out") == before


def test_a_resume_from_elsewhere_says_where_to_run_it(capsys, here: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    assert arena(capsys, "run", "bots/alpha.py", "bots/beta.py", "--games", 2, "--out",
                 "out")[0] == 0
    (here / "elsewhere").mkdir()
    monkeypatch.chdir(here / "elsewhere")
    status, err = arena(capsys, "run", "--resume", here / "out")
    assert status == 2
    assert len(err.splitlines()) == 1
    assert "bots/alpha.py not found from here" in err
    assert "resume from the folder the tournament was started in" in err
