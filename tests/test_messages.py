"""Messages read as English: counts agree with their nouns, no doubled words,
no Python reprs of dicts."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from arena.cli import main
from arena.engine.game import Game, GameConfig
from arena.engine.record import GameRecord, save

RANDOM_BOT = Path(__file__).resolve().parents[1] / "example_bots" / "random.py"


def arena(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return status, out, err


def played(players: int, seed: int) -> tuple[GameConfig, Game]:
    config = GameConfig(players, "ambassador", None, 1000)
    game = Game.from_config(config, seed)
    rng = random.Random(seed)
    while not game.over:
        for seat in game.request.seats:
            game.decide(seat, rng.choice(game.legal(seat)))
    return config, game


def test_a_draft_deals_one_hidden_card(capsys, tmp_path: Path) -> None:
    config, game = played(2, 4)  # two players: the draft
    path = tmp_path / "draft.json"
    save(GameRecord.of(game, config, 4), path)
    status, out, _ = arena(capsys, "replay", path, "--as", 1)
    assert status == 0
    dealt = [line for line in out.splitlines() if " is dealt " in line]
    assert dealt[0] == "seat 0 is dealt 1 hidden card"
    assert dealt[1].startswith("seat 1 is dealt ") and "hidden" not in dealt[1]
    config, game = played(3, 4)  # a plain deal: two each
    save(GameRecord.of(game, config, 4), path)
    status, out, _ = arena(capsys, "replay", path, "--as", 0)
    assert "seat 1 is dealt 2 hidden cards" in out.splitlines()


def test_a_result_that_does_not_replay_is_said_in_words(capsys, tmp_path: Path) -> None:
    config, game = played(3, 6)
    data = GameRecord.of(game, config, 6).to_json()
    data["result"]["placements"] = list(reversed(data["result"]["placements"]))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    status, _, err = arena(capsys, "replay", path)
    assert status == 2 and len(err.splitlines()) == 1
    assert "the decisions replay to placements " in err and "but the record says" in err
    assert "{" not in err and "'" not in err


def test_a_json_error_has_no_doubled_words(capsys, tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text('{"format": "arena-game, "version": 1}')
    status, _, err = arena(capsys, "replay", path)
    assert status == 2
    assert "at at" not in err
    assert "not JSON (" in err and "line 1 column" in err


def test_counts_agree_with_their_nouns(capsys, tmp_path: Path) -> None:
    status, _, err = arena(capsys, "run", RANDOM_BOT, "--out", tmp_path / "out")
    assert status == 2
    assert "1 bot given" in err
    assert not (tmp_path / "out").exists()
