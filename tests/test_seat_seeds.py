"""Each seat's `seed` line makes a tournament of the example bots reproducible.

protocol.md section 4: right after each `game` line the referee sends
`seed <n>`; the example bots seed their generators from it, so the same
`--seed` plays the same games, whatever the concurrency and run after run.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from arena.cli import main
from arena.tournament.store import GAMES

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "example_bots"
# The example bots that do not learn across games (strong.py does: README).
SEEDED = ["random.py", "bash_random.sh", "c_bot", "honest.py", "node_random.js"]
TIMING = ("duration", "decision_ms", "record")  # what may differ between equal runs


def _bots(folder: Path) -> list[str]:
    """Copies of the example bots (c_bot's build writes into its folder)."""
    folder.mkdir()
    paths = []
    for name in SEEDED:
        if name == "node_random.js" and shutil.which("node") is None:
            continue  # the others still show it; test_example_bots_offline covers node
        source = BOTS / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("bot"))
        else:
            shutil.copy2(source, folder / name)
        paths.append(str(folder / name))
    return paths


def _games(out: Path) -> list[str]:
    """Each game's line without timings, with the decisions of its record, sorted."""
    games = []
    for line in (out / GAMES).read_text().splitlines():
        game = json.loads(line)
        with gzip.open(out / game["record"]) as f:
            decisions = json.load(f)["decisions"]
        kept = {key: value for key, value in game.items() if key not in TIMING}
        games.append(json.dumps({**kept, "decisions": decisions}, sort_keys=True))
    return sorted(games)


def _run(capsys: pytest.CaptureFixture[str], bots: list[str], out: Path, seed: int,
         concurrency: int) -> list[str]:
    capsys.readouterr()
    status = main(["run", *bots, "--games", "2", "--seed", str(seed),
                   "--concurrency", str(concurrency), "--out", str(out)])
    assert status == 0, capsys.readouterr().err
    return _games(out)


def test_the_same_seed_plays_the_same_games_at_any_concurrency(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    if shutil.which("cc") is None:
        pytest.skip("cc is not installed")  # CI has it: the C bot needs it
    bots = _bots(tmp_path / "bots")
    first = _run(capsys, bots, tmp_path / "a", 77, 1)
    assert first == _run(capsys, bots, tmp_path / "b", 77, 1)  # run after run
    assert first == _run(capsys, bots, tmp_path / "c", 77, 2)
    # Not trivially equal: another tournament seed plays other games.
    assert first != _run(capsys, bots, tmp_path / "d", 78, 2)


def test_a_bot_that_ignores_the_seed_line_plays_as_before(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # arena play writes results/ here
    # Written before the seed line existed: it knows `arena`, `request` and `quit`.
    old = tmp_path / "old.sh"
    old.write_text('while read -r -a f; do case ${f[0]} in\n'
                   '  arena) echo "hello old" ;;\n'
                   '  request) echo "${f[1]} ${f[${#f[@]}-1]}" ;;\n'
                   '  quit) exit 0 ;;\n'
                   'esac; done\n')
    record = tmp_path / "game.json.gz"
    status = main(["play", str(old), str(BOTS / "random.py"), "--seed", "5", "--quiet",
                   "--record", str(record)])
    assert status == 0, capsys.readouterr().err
    with gzip.open(record) as f:
        game = json.load(f)
    assert game["referee"]["faults"] == [None, None]
    assert game["result"]["reason"] == "last_player"
