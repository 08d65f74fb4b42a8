"""`arena check BOT`: a compliant bot passes; a broken one is told what to fix.

Each test runs the command in-process (``arena.cli.main``) in a temporary
working directory, so its results/ folder lands there.  The games are real:
a few quick games of Python bots.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli import main
from arena.commands import check
from arena.engine.record import load, replay

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "example_bots" / "random.py"
TEST_BOTS = Path(__file__).parent / "bots"

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


def arena_check(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    status = main(["check", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_compliant_bot_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = arena_check(capsys, RANDOM_BOT, "--games", 3, "--seed", 42)
    assert status == 0, out + err
    lines = out.splitlines()
    assert lines[-1].startswith("Verdict: OK: no faults in 3 games")
    assert "Faults: none." in lines
    assert "Seed 42 (repeat with --seed 42)" in out
    games = [line for line in lines if line.startswith("game ")]
    assert [line.split(":")[0] for line in games] == ["game 1/3", "game 2/3", "game 3/3"]
    # A 2-player draft game and tables of 3 and 4, both variants.
    assert "2 players (draft), ambassador" in games[0]
    assert "3 players, inquisitor" in games[1]
    assert "4 players, ambassador" in games[2]
    assert not any("FAULT" in line for line in games)
    assert any(line.startswith("Start-up: ") and "limit 10000 ms" in line for line in lines)
    decisions = next(line for line in lines if line.startswith("Decisions: "))
    assert "median" in decisions and "99th percentile" in decisions and "max" in decisions
    assert "limit 1000 ms each" in decisions
    assert err == ""


def test_a_broken_bot_fails_with_the_fault_and_its_evidence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # garbage.py answers its first request with "what is this", once.
    monkeypatch.chdir(tmp_path)
    status, out, _ = arena_check(capsys, TEST_BOTS / "garbage.py", "--games", 3)
    assert status == 1
    lines = out.splitlines()
    assert "FAULT malformed" in next(line for line in lines if line.startswith("game 1/3"))
    assert "Faults (1):" in lines
    assert any(line.endswith(": malformed") and line.startswith("  game 1 (") for line in lines)
    assert "    line:    'what is this'" in lines
    request = next(line for line in lines if line.startswith("    request: "))
    assert request.startswith("    request: request 1 draft bank_ms=10000 : draft:")
    assert lines[-1] == "Verdict: FIX: 1 fault (malformed); see Faults above."
    # The restarted bot played the other games cleanly.
    assert "started 2 times" in out
    assert not any("FAULT" in line for line in lines if line.startswith(("game 2/", "game 3/")))
    # The faulted game's record is kept, and replays.
    record_line = next(line for line in lines if line.startswith("    record:  "))
    path = tmp_path / record_line.split()[1]
    record = load(path)
    replay(record)
    assert record.referee["faults"][0]["line"] == "what is this"


def test_answers_that_need_the_time_bank_fail_the_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # slow.py takes 0.4 s over its first answer: no fault with a 10 s bank, but
    # over a 0.3 s decision time.
    monkeypatch.chdir(tmp_path)
    status, out, _ = arena_check(capsys, TEST_BOTS / "slow.py", "--games", 2,
                                 "--decision-time", 0.3)
    assert status == 1
    assert "Faults: none." in out.splitlines()
    verdict = out.splitlines()[-1]
    assert verdict.startswith("Verdict: FIX: ")
    assert "took longer than the decision time of 300 ms" in verdict
    assert "limit 300 ms each" in out


def test_a_bot_that_keeps_faulting_is_stopped_after_a_few_games(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    bot = tmp_path / "wrong.py"
    bot.write_text("import sys\n"
                   "for line in sys.stdin:\n"
                   "    if line.startswith('arena'): print('hello wrong', flush=True)\n"
                   "    if line.startswith('request'): print('0 income', flush=True)\n")
    monkeypatch.chdir(tmp_path)
    status, out, _ = arena_check(capsys, bot, "--games", 10)
    assert status == 1
    games = [line for line in out.splitlines() if line.startswith("game ")]
    assert len(games) == check.MAX_FAULTS
    assert all("FAULT protocol" in line for line in games)
    assert f"Stopped after {check.MAX_FAULTS} games" in out
    assert "    line:    '0 income'" in out.splitlines()


def test_a_missing_bot_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    status, out, err = arena_check(capsys, "no_such_bot.py")
    assert status == 2
    assert out == ""
    assert len(err.splitlines()) == 1 and "no_such_bot.py" in err
    assert not (tmp_path / "results").exists()


def test_missing_example_bots_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(check, "example_bots_dir", lambda: tmp_path / "nowhere")
    status, out, err = arena_check(capsys, RANDOM_BOT)
    assert status == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    assert "example bots are missing" in err and str(tmp_path / "nowhere") in err


@pytest.mark.parametrize("games", ["0", "two"])
def test_a_bad_game_count_is_one_line(games: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = arena_check(capsys, RANDOM_BOT, "--games", games)
    assert status == 2
    assert len(err.splitlines()) == 1 and "--games" in err


def test_the_example_bots_are_where_check_looks() -> None:
    assert check.example_bots_dir() == ROOT / "example_bots"
    assert all((ROOT / "example_bots" / name).is_file() for name in check.OPPONENTS)


def test_a_bot_whose_run_names_what_its_build_creates_passes_the_first_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # As javac -d classes / java -cp classes Bot: `made` exists only after the build.
    folder = tmp_path / "built"
    folder.mkdir()
    (folder / "src.sh").write_text((ROOT / "example_bots" / "bash_random.sh").read_text())
    (folder / "bot.toml").write_text(
        'build = ["bash", "-c", "mkdir -p made && cp src.sh made/bot.sh"]\n'
        'run = ["bash", "made/bot.sh"]\n')
    monkeypatch.chdir(tmp_path)
    status, out, err = arena_check(capsys, folder, "--games", 1, "--seed", 7)
    assert status == 0, out + err
    assert "Verdict: OK" in out


def test_opponents_and_table_sizes_are_chosen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    honest = ROOT / "example_bots" / "honest.py"
    status, out, err = arena_check(capsys, RANDOM_BOT, "--against", honest, "--players", 2, 6,
                                   "--games", 4, "--seed", 5)
    assert status == 0, out + err
    lines = out.splitlines()
    assert lines[0].startswith("Checking random (") and "against honest: tables of 2, 6" in out
    games = [line for line in lines if line.startswith("game ")]
    assert ["2 players (draft)" in line for line in games] == [True, False, True, False]
    assert ["6 players" in line for line in games] == [False, True, False, True]
    # Every game's record is kept, and the bot's log marks where each game starts.
    folder = next((tmp_path / "results" / "check").iterdir())
    log = (folder / "logs" / "random.log").read_text().splitlines()
    marks = [line for line in log if line.startswith("== ")]
    assert marks == [f"== game {n}, record {folder.relative_to(tmp_path)}/game-{n}.json =="
                     for n in range(1, 5)]
    assert all((folder / f"game-{n}.json").is_file() for n in range(1, 5))


@pytest.mark.parametrize("size", ["1", "9"])
def test_a_table_size_out_of_range_is_one_line(size: str, capsys) -> None:
    status, _, err = arena_check(capsys, RANDOM_BOT, "--players", size)
    assert status == 2
    assert len(err.splitlines()) == 1 and "a table seats 2 to 8" in err


def test_a_crashed_bot_shows_the_end_of_its_stderr(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # crash.py exits with status 3 at its second request, after a line on stderr.
    monkeypatch.chdir(tmp_path)
    status, out, _ = arena_check(capsys, TEST_BOTS / "crash.py", "--games", 1, "--seed", 5)
    assert status == 1
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines)
                if line.startswith("  The end of the bot's stderr ("))
    assert "crash.log" in lines[head]
    assert lines[head + 1] == "  | crash: giving up on purpose"
