"""honest.py and strong.py on the SDK play exactly as they did without it.

tests/sdk_reference/ holds the two bots as they were before the SDK (the
protocol read by hand, commit 87563fb, seeded from the `seed` line).  Both
versions play the same seeded engine games, every seat a bot process of
its own kept across the games of a table (strong learns across games), each
answer read before the game goes on, as the referee plays them.  Every
answer of every seat must be the same, so the games are the same.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_example_bots_offline import BotCommand, Driver

from arena.engine.game import Game
from arena.engine.observer import view
from arena.protocol.codec import (
    QUIT,
    Limits,
    decode_answer,
    decode_hello,
    encode_event,
    encode_game_over,
    encode_game_start,
    encode_handshake,
    encode_request,
    encode_seed,
    seat_seed,
)

ROOT = Path(__file__).resolve().parents[1]
NOW = ROOT / "example_bots"
BEFORE = ROOT / "tests" / "sdk_reference"


def _command(folder: Path, bot: str) -> BotCommand:
    return BotCommand((sys.executable, "-u", "-P", str(folder / f"{bot}.py")), folder)


def play_table(folder: Path, bots: list[str], games: list[tuple[str, bool | None, int]],
               logs: Path) -> list[str]:
    """Every answer (seat, request id, answer) of a table playing ``games`` in turn."""
    drivers = [Driver(_command(folder, bot), logs / f"{folder.name}-{seat}.txt")
               for seat, bot in enumerate(bots)]
    answers: list[str] = []
    try:
        for driver, bot in zip(drivers, bots, strict=True):
            driver.send(encode_handshake(Limits()))
            assert decode_hello(driver.read_line()) == bot
        ids = [0] * len(bots)
        names = [f"{bot}{seat}" for seat, bot in enumerate(bots)]
        for number, (variant, draft, seed) in enumerate(games, 1):
            game = Game.new(len(bots), seed, variant=variant, draft=draft)
            for seat, driver in enumerate(drivers):
                driver.send(encode_game_start(number, seat, names, variant))
                driver.send(encode_seed(seat_seed(seed, seat)))
            sent = 0
            while True:
                for event in game.events[sent:]:
                    for seat, driver in enumerate(drivers):
                        driver.send(encode_event(view(event, seat)))
                sent = len(game.events)
                if game.over:
                    break
                request = game.request
                assert request is not None
                decisions = {}
                for seat in request.seats:
                    legal = game.legal(seat)
                    ids[seat] += 1
                    drivers[seat].send(encode_request(ids[seat], request, legal, 10_000))
                    line = drivers[seat].read_line()
                    decisions[seat] = decode_answer(line, ids[seat], legal)
                    answers.append(f"{seat} {line}")
                for seat, decision in decisions.items():
                    game.decide(seat, decision)
            assert game.result is not None
            answers.append(f"result {game.result.placements}")
            for driver in drivers:
                driver.send(encode_game_over(game.result.placements))
        for driver in drivers:
            driver.send(QUIT)
        for driver in drivers:
            assert driver.finish() == (0, b"")
    finally:
        for driver in drivers:
            driver.close()
    return answers


TABLES = {
    "heads-up draft": (["strong", "honest"], [(("ambassador", "inquisitor")[s % 2], None, s)
                                              for s in range(1, 11)]),
    "heads-up plain": (["honest", "strong"], [("inquisitor", False, 7), ("ambassador", False, 8)]),
    "strong alone": (["strong", "strong"], [("inquisitor", None, s) for s in (9, 10, 11)]),
    "three": (["strong", "honest", "strong"], [("ambassador", None, 12), ("inquisitor", None, 13),
                                                ("ambassador", None, 14)]),
    "five": (["honest", "strong", "strong", "honest", "strong"],
             [("inquisitor", None, 15), ("ambassador", None, 16)]),
    "eight": (["strong", "honest"] * 4, [("inquisitor", None, 17)]),
}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_the_sdk_bots_give_every_answer_the_old_bots_gave(table: str, tmp_path: Path) -> None:
    bots, games = TABLES[table]
    before = play_table(BEFORE, bots, games, tmp_path)
    now = play_table(NOW, bots, games, tmp_path)
    assert len(now) == len(before)
    for i, (old, new) in enumerate(zip(before, now, strict=True)):
        assert new == old, f"answer {i} differs: {new!r}, before {old!r}"
    kinds = {line.split()[-1].split(":")[0] for line in before if not line.startswith("result")}
    assert {"pass", "lose", "challenge"} <= kinds
    for log in tmp_path.glob("*.txt"):
        assert b"Traceback" not in log.read_bytes(), log.name
