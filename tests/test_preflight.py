"""`arena run` checks every bot before its first game: a bot that cannot play
stops the run with one line saying why and what to do, unless --allow-broken.

The CLI runs in-process (arena.cli.main); the bots are tiny real programs.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from arena.cli import main
from arena.tournament.store import GAMES, TOURNAMENT

RANDOM_BOT = Path(__file__).resolve().parents[1] / "example_bots" / "random.py"
# The build waits (at most 10 s) for the other build to have started.
WAIT_FOR_OTHER = ("touch started; for i in $(seq 200); do [ -e ../{other}/started ] && exit 0; "
                  "sleep 0.05; done; echo the other build never started; exit 1")


def arena(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return status, out, err


def good_bots(folder: Path, *names: str) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        shutil.copyfile(RANDOM_BOT, folder / f"{name}.py")
        paths.append(str(folder / f"{name}.py"))
    return paths


def no_shebang(folder: Path) -> Path:
    """An executable shell script without its `#!` line: the kernel refuses to start it."""
    path = folder / "plain"
    path.write_text("echo hello plain\nwhile read -r line; do :; done\n")
    path.chmod(0o755)
    return path


def no_flush(folder: Path) -> Path:
    """Writes hello into a buffer it never flushes (Python without -u, on a pipe)."""
    bot = folder / "quiet"
    bot.mkdir()
    (bot / "bot.py").write_text("import sys\nprint('hello quiet')\nfor line in sys.stdin:\n"
                                "    pass\n")
    (bot / "bot.toml").write_text(f'run = [{json.dumps(sys.executable)}, "bot.py"]\n')
    return bot


def bad_build(folder: Path) -> Path:
    bot = folder / "broken"
    bot.mkdir()
    (bot / "bot.toml").write_text(
        'run = ["./bot"]\nbuild = ["bash", "-c", "echo \'bot.c:3: error: expected ;\'; exit 1"]\n')
    return bot


def test_bots_that_cannot_play_stop_the_run_before_any_game(capsys, tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    paths = [*good_bots(bots, "alpha", "beta"), str(no_shebang(bots)), str(no_flush(bots)),
             str(bad_build(bots))]
    out = tmp_path / "out"
    status, _, err = arena(capsys, "run", *paths, "--games", 2, "--seed", 1,
                           "--startup-time", 1, "--concurrency", 2, "--out", out)
    assert status == 2
    assert "Traceback" not in err
    lines = err.splitlines()
    assert "building broken…" in lines
    by_bot = {name: [line for line in lines if line.startswith(f"arena: bot {name!r}")
                     or line.startswith(f"bot {name!r}")] for name in ("plain", "quiet", "broken")}
    assert all(len(found) == 1 for found in by_bot.values()), err
    assert "add a `#!` line or a bot.toml" in by_bot["plain"][0]
    assert "did it flush after `hello`? protocol.md section 2" in by_bot["quiet"][0]
    assert "build failed with status 1" in by_bot["broken"][0]
    assert "  | bot.c:3: error: expected ;" in lines  # the build's own words
    assert not any("'alpha'" in line or "'beta'" in line for line in lines)
    assert lines[-1].startswith("arena run: 3 bots of 5 cannot play")
    assert "--allow-broken" in lines[-1]
    # Only the bots' logs of their start are written (and named in the lines);
    # the same folder then takes a run of the good bots.
    assert not (out / TOURNAMENT).exists() and not (out / GAMES).exists()
    assert (out / "logs" / "quiet.preflight.log").is_file()
    status, _, err = arena(capsys, "run", *paths[:2], "--games", 2, "--seed", 1, "--out", out)
    assert status == 0, err
    assert (out / TOURNAMENT).exists() and len((out / GAMES).read_text().splitlines()) == 2


def test_allow_broken_plays_anyway_with_forfeits(capsys, tmp_path: Path) -> None:
    bots = tmp_path / "bots"
    paths = [*good_bots(bots, "alpha", "beta"), str(no_shebang(bots))]
    out = tmp_path / "out"
    status, _, err = arena(capsys, "run", *paths, "--games", 2, "--seed", 1, "--out", out)
    assert status == 2
    assert err.splitlines()[-1].startswith("arena run: 1 bot of 3 cannot play, so no game was "
                                           "played; fix it, or pass --allow-broken")
    status, _, err = arena(capsys, "run", *paths, "--games", 2, "--seed", 1, "--out", out,
                           "--allow-broken")
    assert status == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("arena: warning: ")]
    assert len(warnings) == 1 and "'plain'" in warnings[0]
    games = [json.loads(line) for line in (out / GAMES).read_text().splitlines()]
    assert len(games) == 6
    for game in games:
        faults = dict(zip(game["seats"], game["faults"], strict=True))
        assert faults.get("plain", {"kind": "crash"})["kind"] == "crash"
        assert faults.get("alpha") is None and faults.get("beta") is None


def test_builds_run_in_parallel(capsys, tmp_path: Path) -> None:
    # Each build finishes only once the other has started: one at a time, the
    # first would give up.
    bots = tmp_path / "bots"
    for name, other in (("left", "right"), ("right", "left")):
        (bots / name).mkdir(parents=True)
        (bots / name / "bot.toml").write_text(
            f'run = [{json.dumps(sys.executable)}, "-u", {json.dumps(str(RANDOM_BOT))}]\n'
            f'build = ["bash", "-c", {json.dumps(WAIT_FOR_OTHER.format(other=other))}]\n')
    status, _, err = arena(capsys, "run", bots / "left", bots / "right", "--games", 2,
                           "--seed", 1, "--concurrency", 2, "--out", tmp_path / "out")
    assert status == 0, err
    assert {"building left…", "building right…"} <= set(err.splitlines())
