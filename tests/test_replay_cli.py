"""`arena replay`: transcripts of a record, as everybody or as one seat, and bad records."""

from __future__ import annotations

import gzip
import json
import random

import pytest

from arena.cli import main
from arena.engine.decisions import Decision
from arena.engine.errors import IllegalDecision
from arena.engine.game import Game, GameConfig
from arena.engine.record import GameRecord, ReplayError, replay, save


@pytest.fixture
def record_path(tmp_path):
    config = GameConfig(3, "ambassador", None, 1000)
    game = Game.from_config(config, 11)
    rng = random.Random(11)
    while not game.over:
        for seat in game.request.seats:
            game.decide(seat, rng.choice(game.legal(seat)))
    path = tmp_path / "game.json.gz"
    save(GameRecord.of(game, config, 11, referee={"names": ["ann", "bob", "cy"]}), path)
    return path, game


def test_the_transcript_shows_every_hidden_card(record_path, capsys):
    path, game = record_path
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    for seat, name in enumerate(["ann", "bob", "cy"]):
        prefix = f"{name} [{seat}] is dealt"
        dealt = next(line for line in out.splitlines() if line.startswith(prefix))
        assert "hidden" not in dealt
    assert out.strip().splitlines()[-1].startswith("== game over")


def test_as_a_seat_shows_only_what_it_saw(record_path, capsys):
    path, _ = record_path
    assert main(["replay", str(path), "--as", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "hidden" not in next(line for line in lines if line.startswith("bob [1] is dealt"))
    assert "2 hidden cards" in next(line for line in lines if line.startswith("ann [0] is dealt"))
    assert "2 hidden cards" in next(line for line in lines if line.startswith("cy [2] is dealt"))


def test_an_illegal_decision_is_refused_with_its_index(record_path, tmp_path, capsys):
    path, game = record_path
    data = GameRecord.of(game, GameConfig(3, "ambassador", None, 1000), 11).to_json()
    first_action = next(i for i, (_, token) in enumerate(data["decisions"])
                        if token in ("income", "tax", "foreign_aid", "exchange")
                        or ":" in token and token.split(":")[0] in ("coup", "steal", "assassinate"))
    data["decisions"][first_action][1] = "coup:1"  # nobody starts with 7 coins
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert main(["replay", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"decision {first_action}" in err and "coup:1" in err


def test_a_token_legal_before_is_refused_where_it_is_not(record_path):
    # A replay keeps each token it found legal and hands the engine its own
    # decision object (record.apply_decision); the same token later, where it
    # is not legal, is still refused, in the words of a freshly parsed one.
    path, game = record_path
    data = GameRecord.of(game, GameConfig(3, "ambassador", None, 1000), 11).to_json()
    tokens = [token for _, token in data["decisions"]]
    used = next(i for i, token in enumerate(tokens) if token in ("income", "tax", "exchange"))
    action = tokens[used]
    later = next(i for i, token in enumerate(tokens) if i > used and token == "pass")
    seat = data["decisions"][later][0]
    data["decisions"][later][1] = action  # a challenge or a block is asked there
    with pytest.raises(ReplayError) as caught:
        replay(GameRecord.from_json(data))
    fresh = Game.from_config(GameConfig(3, "ambassador", None, 1000), 11)
    for seat_before, token in data["decisions"][:later]:
        fresh.decide(seat_before, Decision.parse(token))
    with pytest.raises(IllegalDecision) as refused:
        fresh.decide(seat, Decision.parse(action))
    assert caught.value.index == later
    assert str(caught.value) == f"decision {later}: seat {seat} {action}: {refused.value}"


@pytest.mark.parametrize("content, words", [
    ("not json", "not JSON"),
    ('{"format": "something-else"}', "not an arena game record"),
    ('{"format": "arena-game", "version": 1, "decisions": []}', "needs"),
])
def test_a_bad_record_gets_one_line(tmp_path, capsys, content, words):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert main(["replay", str(bad)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and words in err and "Traceback" not in err


def test_a_missing_record_and_a_bad_seat(record_path, capsys):
    assert main(["replay", "/nonexistent/game.json"]) == 2
    assert "no such file" in capsys.readouterr().err
    path, _ = record_path
    assert main(["replay", str(path), "--as", "5"]) == 2
    assert "seats 0 to 2" in capsys.readouterr().err


def test_records_are_plain_gzip_and_old_ones_still_replay(record_path, tmp_path, capsys):
    path, game = record_path
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    assert json.loads(text)["format"] == "arena-game"
    assert main(["replay", str(path)]) == 0
    new = capsys.readouterr().out
    # A record as earlier versions wrote it: gzip.open, level 9, a real mtime.
    old = tmp_path / "old.json.gz"
    with gzip.open(old, "wt", encoding="utf-8") as f:
        f.write(text)
    assert old.read_bytes() != path.read_bytes()
    assert main(["replay", str(old)]) == 0
    assert capsys.readouterr().out == new
