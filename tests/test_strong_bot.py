"""example_bots/strong.py speaks protocol version 1 and makes the forced good moves.

The bot is fed scripted protocol sessions built with the codec, as
test_example_bots_offline.py does (its session builder and lock-step driver
are reused), and a few complete engine games in which every answer must be
listed.  Nothing here measures strength or time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_example_bots_offline import (
    Ask,
    BotCommand,
    Driver,
    Session,
    check_answers,
    feed_all_at_once,
    full_session,
    play,
)

from arena.engine import events as ev
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
)

ROOT = Path(__file__).resolve().parents[1]
STRONG = ROOT / "example_bots" / "strong.py"
COMMAND = BotCommand((sys.executable, "-u", "-P", str(STRONG)), ROOT / "example_bots")


def run(items: list[str | Ask]) -> list[str]:
    """Feed a whole session at once (handshake first); return the answers to its requests."""
    lines = [encode_handshake(Limits())]
    lines += [item.line if isinstance(item, Ask) else item for item in items]
    out = feed_all_at_once(COMMAND, lines)
    assert out[0] == "hello strong"
    requests = [item.line for item in items if isinstance(item, Ask)]
    check_answers(list(zip(requests, out[1:], strict=True)))
    return [answer.split(" ", 1)[1] for answer in out[1:]]


def three_players(hand: tuple[str, str], variant: str = "ambassador", coins=(2, 2, 2)) -> Session:
    s = Session()
    s.say(encode_game_start(1, 0, ["me", "bob", "cat"], variant))
    s.event(ev.GameStarted(3, variant, False, 0, tuple(coins), 9))
    s.event(ev.CardsDealt(0, hand))
    s.event(ev.CardsDealt(1, None))
    s.event(ev.CardsDealt(2, None))
    return s


# ------------------------------------------------------------------ protocol


def test_strong_plays_the_full_session_and_leaves_on_quit(tmp_path: Path) -> None:
    session = full_session()
    driver = Driver(COMMAND, tmp_path / "stderr.txt")
    try:
        driver.send(session.items[0])
        assert decode_hello(driver.read_line()) == "strong"
        exchanges = play(driver, session.items[1:])
        assert len(exchanges) == session.request_id
        check_answers(exchanges)
        code, rest = driver.finish()  # after `quit`, with stdin still open
    finally:
        driver.close()
    assert code == 0
    assert rest == b"", "the bot wrote lines no request asked for"
    assert b"Traceback" not in (tmp_path / "stderr.txt").read_bytes()


def test_strong_exits_at_end_of_input() -> None:
    session = full_session(quit=False)
    answers = run(session.items[1:])
    assert len(answers) == session.request_id


def test_strong_answers_odd_input_with_a_listed_token() -> None:
    s = Session()
    s.items.append(Ask("request 1 action bank_ms=100 : income"))  # before any game
    s.say(encode_game_start(1, 0, ["me", "bob"], "ambassador"))
    s.say("event start 2 ambassador yes")  # too few fields
    s.say("event lost 7 duke")  # no such seat
    s.say("event dealt 0 duke,????")
    s.say("event from_the_future 1 2 3")
    s.say("hello there")
    s.items.append(Ask("request 2 riddle bank_ms=100 colour=red : pass block:duke"))
    odd_claim = "request 3 challenge bank_ms=100 claimant=9 character=duke : pass challenge"
    s.items.append(Ask(odd_claim))  # no such seat
    s.items.append(Ask("request 4 keep bank_ms=100 : keep:duke keep:captain"))
    answers = run(s.items)
    assert answers[0] == "income"
    assert answers[1] == "pass"


# -------------------------------------------------------- every request kind


@pytest.mark.parametrize(
    ("players", "variant", "draft", "seed"),
    [
        (2, "ambassador", None, 1),  # the draft
        (2, "inquisitor", None, 2),  # the draft, examine/show/force
        (2, "ambassador", False, 3),  # a plain deal
        (3, "inquisitor", None, 4),
        (5, "ambassador", None, 5),
        (7, "inquisitor", None, 6),  # 4 copies of each character
    ],
)
def test_strong_answers_every_request_of_real_games_legally(
    players: int, variant: str, draft: bool | None, seed: int, tmp_path: Path
) -> None:
    """strong in every seat of whole engine games: each answer is listed, with the right id."""
    drivers = [Driver(COMMAND, tmp_path / f"stderr{seat}.txt") for seat in range(players)]
    kinds: set[str] = set()
    try:
        for driver in drivers:
            driver.send(encode_handshake(Limits()))
            assert decode_hello(driver.read_line()) == "strong"
        ids = [0] * players
        names = [f"s{seat}" for seat in range(players)]
        for number in (1, 2):  # two games per process: state is reset between games
            game = Game.new(players=players, seed=seed * 10 + number, variant=variant, draft=draft)
            for seat, driver in enumerate(drivers):
                driver.send(encode_game_start(number, seat, names, variant))
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
                kinds.add(request.kind)
                answers = {}
                for seat in request.seats:
                    legal = game.legal(seat)
                    ids[seat] += 1
                    drivers[seat].send(encode_request(ids[seat], request, legal, 10_000))
                    answers[seat] = decode_answer(drivers[seat].read_line(), ids[seat], legal)
                for seat, decision in answers.items():
                    game.decide(seat, decision)
            assert game.result is not None
            for driver in drivers:
                driver.send(encode_game_over(game.result.placements))
        for driver in drivers:
            driver.send(QUIT)
        for driver in drivers:
            assert driver.finish() == (0, b"")
    finally:
        for driver in drivers:
            driver.close()
    assert {"action", "challenge", "lose"} <= kinds
    if players == 2 and draft is None:
        assert "draft" in kinds
    for seat in range(players):
        assert b"Traceback" not in (tmp_path / f"stderr{seat}.txt").read_bytes()


# ------------------------------------------------------------ forced moves


def test_strong_challenges_a_claim_whose_every_copy_it_can_see() -> None:
    s = three_players(("captain", "duke"))
    s.event(ev.InfluenceLost(1, "duke"))
    s.event(ev.InfluenceLost(2, "duke"))  # the three Dukes: one in hand, two face up
    s.event(ev.TurnStarted(1, 1))
    s.event(ev.ActionDeclared(1, "tax", None, "duke"))
    s.ask("challenge", "pass challenge", actor=1, action="tax", claimant=1, character="duke")
    # A block claiming a Captain: one in hand, and two more turn up.
    s.event(ev.ActionFailed(1, "tax", "challenged"))
    s.event(ev.InfluenceLost(1, "captain"))
    s.event(ev.PlayerOut(1, "influence"))
    s.event(ev.InfluenceLost(0, "duke"))
    s.event(ev.InfluenceLost(2, "captain"))
    s.event(ev.TurnStarted(2, 0))
    s.ask("action", "income foreign_aid tax steal:2 exchange", actor=0)
    s.event(ev.ActionDeclared(0, "steal", 2, "captain"))
    s.event(ev.Blocked(2, "captain", 0))
    s.ask(
        "challenge",
        "pass challenge",
        actor=0,
        action="steal",
        target=2,
        claimant=2,
        character="captain",
    )
    answers = run(s.items)
    assert answers[0] == "challenge"
    assert answers[2] == "challenge"


def test_strong_counts_the_cards_it_set_aside_in_the_draft() -> None:
    s = Session()
    s.say(encode_game_start(1, 1, ["bob", "me"], "inquisitor"))
    s.event(ev.GameStarted(2, "inquisitor", True, 0, (2, 2), 3))
    s.event(ev.CardsDealt(0, None))
    s.event(ev.CardsDealt(1, ("duke",)))
    pile = ("duke", "assassin", "captain", "contessa", "inquisitor")
    s.event(ev.DraftOffered(0, None))
    s.event(ev.DraftOffered(1, pile))
    s.ask("draft", " ".join(f"draft:{card}" for card in pile))
    s.event(ev.DraftChosen(0, None))
    s.event(ev.DraftChosen(1, "captain"))  # the bot follows the event, whatever it asked
    # Dukes: one in my hand, one set aside from my pile, and bob turns up the third.
    s.event(ev.TurnStarted(1, 0))
    s.event(ev.ActionDeclared(0, "steal", 1, "captain"))
    s.ask(
        "challenge",
        "pass challenge",
        actor=0,
        action="steal",
        target=1,
        claimant=0,
        character="captain",
    )
    s.event(ev.Challenged(1, 0, "captain"))
    s.event(ev.ClaimFailed(0, "captain"))
    s.event(ev.ActionFailed(0, "steal", "challenged"))
    s.event(ev.InfluenceLost(0, "duke"))
    s.event(ev.TurnStarted(2, 1))
    s.ask("action", "income foreign_aid tax steal:0 exchange examine:0", actor=1)
    s.event(ev.ActionDeclared(1, "income", None, None))
    s.event(ev.ActionResolved(1, "income", None))
    s.event(ev.CoinsChanged(1, 1, 3, "income"))
    s.event(ev.TurnStarted(3, 0))
    s.event(ev.ActionDeclared(0, "tax", None, "duke"))
    s.ask("challenge", "pass challenge", actor=0, action="tax", claimant=0, character="duke")
    answers = run(s.items)
    assert answers[0].startswith("draft:")
    assert answers[-1] == "challenge"


def test_strong_does_not_challenge_a_card_it_saw_by_examining() -> None:
    s = three_players(("inquisitor", "contessa"), variant="inquisitor")
    s.event(ev.TurnStarted(1, 0))
    s.ask("action", "income foreign_aid tax steal:1 steal:2 exchange examine:1 examine:2", actor=0)
    s.event(ev.ActionDeclared(0, "examine", 1, "inquisitor"))
    s.event(ev.ActionResolved(0, "examine", 1))
    s.event(ev.ExamineShown(0, 1, "duke"))
    s.event(ev.ExamineDecided(0, 1, False))
    s.event(ev.TurnStarted(2, 1))
    s.event(ev.ActionDeclared(1, "tax", None, "duke"))
    s.ask("challenge", "pass challenge", actor=1, action="tax", claimant=1, character="duke")
    answers = run(s.items)
    assert answers[-1] == "pass"


def test_strong_blocks_an_assassination_with_its_contessa() -> None:
    s = three_players(("contessa", "ambassador"), coins=(2, 3, 2))
    s.event(ev.TurnStarted(1, 1))
    s.event(ev.ActionDeclared(1, "assassinate", 0, "assassin"))
    s.event(ev.CoinsChanged(1, -3, 0, "cost"))
    s.ask(
        "challenge",
        "pass challenge",
        actor=1,
        action="assassinate",
        target=0,
        claimant=1,
        character="assassin",
    )
    s.ask("block", "pass block:contessa", actor=1, action="assassinate", target=0)
    answers = run(s.items)
    assert answers[-1] == "block:contessa"


def test_strong_bluffs_a_contessa_with_its_last_card() -> None:
    """Passing would lose the game at once: a bluffed Contessa can only help."""
    s = three_players(("captain", "duke"), coins=(2, 5, 2))
    s.event(ev.InfluenceLost(0, "captain"))
    s.event(ev.TurnStarted(1, 1))
    s.event(ev.ActionDeclared(1, "assassinate", 0, "assassin"))
    s.event(ev.CoinsChanged(1, -3, 2, "cost"))
    s.ask("block", "pass block:contessa", actor=1, action="assassinate", target=0)
    answers = run(s.items)
    assert answers == ["block:contessa"]


def test_strong_keeps_its_best_cards_and_follows_its_hand_through_an_exchange() -> None:
    s = three_players(("ambassador", "contessa"))
    s.event(ev.TurnStarted(1, 0))
    s.ask("action", "income foreign_aid tax steal:1 steal:2 exchange", actor=0)
    s.event(ev.ActionDeclared(0, "exchange", None, "ambassador"))
    s.event(ev.ActionResolved(0, "exchange", None))
    s.event(ev.ExchangeDrawn(0, 2, ("ambassador", "duke")))
    keep = "keep:ambassador,ambassador keep:ambassador,contessa keep:ambassador,duke"
    keep += " keep:contessa,duke"
    s.ask("keep", keep, actor=0, action="exchange")
    s.event(ev.ExchangeReturned(0, 2, ("ambassador", "ambassador")))
    # Now it holds a Duke; the other two turn up, so a Duke claim is a certain bluff.
    s.event(ev.InfluenceLost(1, "duke"))
    s.event(ev.InfluenceLost(2, "duke"))
    s.event(ev.TurnStarted(2, 1))
    s.event(ev.ActionDeclared(1, "tax", None, "duke"))
    s.ask("challenge", "pass challenge", actor=1, action="tax", claimant=1, character="duke")
    s.event(ev.Challenged(0, 1, "duke"))
    s.event(ev.ClaimFailed(1, "duke"))
    s.event(ev.ActionFailed(1, "tax", "challenged"))
    s.event(ev.InfluenceLost(1, "captain"))
    s.event(ev.PlayerOut(1, "influence"))
    s.event(ev.TurnStarted(3, 2))
    s.event(ev.ActionDeclared(2, "coup", 0, None))
    s.ask("lose", "lose:contessa lose:duke", actor=2, action="coup", target=0)
    answers = run(s.items)
    assert answers[1] == "keep:contessa,duke"
    assert answers[2] == "challenge"
    assert answers[3] == "lose:contessa"  # the Duke is the better card to keep


def test_strong_shows_its_weaker_card_and_forces_a_strong_one_back() -> None:
    s = Session()
    s.say(encode_game_start(1, 1, ["bob", "me"], "inquisitor"))
    s.event(ev.GameStarted(2, "inquisitor", False, 0, (2, 2), 11))
    s.event(ev.CardsDealt(0, None))
    s.event(ev.CardsDealt(1, ("duke", "inquisitor")))
    s.event(ev.TurnStarted(1, 0))
    s.event(ev.ActionDeclared(0, "examine", 1, "inquisitor"))
    s.ask(
        "challenge",
        "pass challenge",
        actor=0,
        action="examine",
        target=1,
        claimant=0,
        character="inquisitor",
    )
    s.event(ev.ActionResolved(0, "examine", 1))
    s.ask("show", "show:duke show:inquisitor", actor=0, action="examine", target=1)
    s.event(ev.ExamineShown(0, 1, "inquisitor"))
    s.event(ev.ExamineDecided(0, 1, False))
    s.event(ev.TurnStarted(2, 1))
    s.ask("action", "income foreign_aid tax steal:0 exchange examine:0", actor=1)
    s.event(ev.ActionDeclared(1, "examine", 0, "inquisitor"))
    s.event(ev.ActionResolved(1, "examine", 0))
    s.event(ev.ExamineShown(1, 0, "duke"))
    s.ask("force", "force:yes force:no", actor=1, action="examine", target=0)
    answers = run(s.items)
    assert answers[1] == "show:inquisitor"
    assert answers[-1] == "force:yes"


# -------------------------------------------------- learning across games


def _liar_or_truth_teller(truthful: bool) -> list[str]:
    """Ten games in which bob's Duke claims are challenged (by cat) and turn out the same way,
    then a game where bob and I have one card each and bob claims a Duke."""
    s = Session()
    for number in range(1, 11):
        s.say(encode_game_start(number, 0, ["me", "bob", "cat"], "ambassador"))
        s.event(ev.GameStarted(3, "ambassador", False, 0, (2, 2, 2), 9))
        s.event(ev.CardsDealt(0, ("contessa", "captain")))
        for turn in (1, 2):
            s.event(ev.TurnStarted(turn, 1))
            s.event(ev.ActionDeclared(1, "tax", None, "duke"))
            s.event(ev.Challenged(2, 1, "duke"))
            if truthful:
                s.event(ev.ClaimProven(1, "duke"))
                s.event(ev.CardDrawn(1, None))
                s.event(ev.InfluenceLost(2, "ambassador"))
            else:
                s.event(ev.ClaimFailed(1, "duke"))
                s.event(ev.ActionFailed(1, "tax", "challenged"))
                s.event(ev.InfluenceLost(1, "ambassador"))
        if truthful:
            s.event(ev.PlayerOut(2, "influence"))
        else:
            s.event(ev.PlayerOut(1, "influence"))
        s.event(ev.GameOver("last_player", 2, (1, 2, 3), 0))
        s.say(encode_game_over((1, 2, 3) if truthful else (1, 3, 2)))
    s.say(encode_game_start(11, 0, ["me", "bob", "cat"], "ambassador"))
    s.event(ev.GameStarted(3, "ambassador", False, 0, (2, 2, 2), 9))
    s.event(ev.CardsDealt(0, ("contessa", "captain")))
    s.event(ev.InfluenceLost(0, "captain"))
    s.event(ev.InfluenceLost(1, "assassin"))
    s.event(ev.InfluenceLost(2, "assassin"))
    s.event(ev.InfluenceLost(2, "captain"))
    s.event(ev.PlayerOut(2, "influence"))
    s.event(ev.TurnStarted(1, 1))
    s.event(ev.ActionDeclared(1, "tax", None, "duke"))
    s.ask("challenge", "pass challenge", actor=1, action="tax", claimant=1, character="duke")
    return run(s.items)


def test_strong_learns_who_bluffs_across_games() -> None:
    assert _liar_or_truth_teller(truthful=False) == ["challenge"]
    assert _liar_or_truth_teller(truthful=True) == ["pass"]
