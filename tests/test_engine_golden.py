"""Same seed, same game: the engine's output for 2,000 seeded random games is pinned.

Speed work on the engine must not change a single game.  For every player
count, both variants and the draft on and off, seeded games are played by a
seeded random driver (with a forfeit at a random moment in every seventh
game); the hash covers every request and legal list offered (in order:
drivers pick by position), every event, one seat's view of it, and the JSON
record.  The digests were taken before the engine was made faster; a change
that alters any game changes them.
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from arena.engine.decisions import Decision
from arena.engine.errors import GameOverError, IllegalDecision
from arena.engine.game import _SWAPS, Game, GameConfig, shuffle
from arena.engine.observer import OMNISCIENT, view
from arena.engine.record import GameRecord

GAMES = 2000

CONFIGS = [
    GameConfig(players, variant, draft)
    for variant in ("ambassador", "inquisitor")
    for players, draft in [(2, None), (2, False), (3, None), (4, None), (5, None), (6, None),
                           (7, None), (8, None)]
]

# sha256 of the games of each config, in CONFIGS order.
DIGESTS = {
    0: "0ecf6ab2eab732f509ee45c3e9072e1c2682543e22d0984986c2319036ab391d",
    1: "c1666996730563091ae5131c85b726d8c673f5f3a90461dd588ab33758f7ddf5",
    2: "29851873f3cdb1bd810527f0ede9e12e0a2e76496236a2d10243ef83fed229e3",
    3: "0632de253892309d2fd7ff8c88bd9c64a51bd38665629bcf8cb67cc3a69b3e0c",
    4: "88e4bcd85ea66bbab8afe24a6508f9cf0b7cd7b2f87666ccd6d41e327aefa9e5",
    5: "67fe8c433fdb8c5a5a111136eb8f6d6dac0a2d462acfbd2571e3f48b7a07022f",
    6: "7d64eae51ccb02ada252f5bb9c66694f9ed5a60e2a70b38852bf58fab573fa7f",
    7: "8e8e0ca4c0648195e899d47d7e9fc2f3f777229046bb265ecf2f39b7d4d9072e",
    8: "54cf24bb26f4c7c0fa347990daffb3e6a4b5299cce008cd4971721feeaaf8fe5",
    9: "2eaa7bc5b9cbc66ec56ca70b9f704230569196c80cb4e83bfcb94b829042a583",
    10: "bb0ee72c8a6260afdcdf2a11767d52a336a9b244ca74cd0f03efbfcd3e5a8aa4",
    11: "465512fc98970f27dddfb4091929a0eb4f8915017786566ec4eab86f2bc6b9c8",
    12: "323b0a647246406d161f68b8f319eb48754adb687ac926e0d1d8250742cff6c9",
    13: "2bf8bc787c8bc0d9ee376777f6441afa46a3c045fcb63a1d94f39921b37d8881",
    14: "f9994f863e1e0f8edd3bfd7b7602ddbf3ad48b5d8419e9b3dcbd8ef2e2d447cf",
    15: "cdcbd8d3baf88309e6a41d41b3a3d3473f74ac112bad1c1104a29a7f3ea35b18",
}


def digest_of(config: GameConfig, games: int, first_seed: int) -> str:
    sha = hashlib.sha256()
    for seed in range(first_seed, first_seed + games):
        game = Game.from_config(config, seed)
        rng = random.Random(seed ^ 0xC0FFEE)
        forfeit_at = rng.randrange(60) if seed % 7 == 0 else -1
        decisions = 0
        while not game.over:
            request = game.request
            assert request is not None
            if decisions == forfeit_at:
                game.forfeit(rng.choice(game.seats_in_game()), "crash")
                decisions += 1
                continue
            # The first seat asked that has not answered yet.
            seat, legal = next((s, game.legal(s)) for s in request.seats if game.legal(s))
            sha.update(repr(request).encode())
            sha.update(" ".join(d.token for d in legal).encode())
            game.decide(seat, rng.choice(legal))
            decisions += 1
        for event in game.events:
            sha.update(repr(event).encode())
            sha.update(repr(view(event, seed % config.players)).encode())
        record = GameRecord.of(game, config, seed).to_json()
        sha.update(json.dumps(record, sort_keys=True).encode())
    return sha.hexdigest()


@pytest.mark.parametrize("index", range(len(CONFIGS)))
def test_seeded_games_are_unchanged(index: int) -> None:
    config = CONFIGS[index]
    games = GAMES // len(CONFIGS)
    assert digest_of(config, games, 1000 * index) == DIGESTS[index], config


def test_the_engines_shuffle_is_random_shuffle() -> None:
    """game.shuffle replaces random.Random.shuffle: same draws, same order."""
    for seed in range(300):
        for length in range(len(_SWAPS)):
            ours, theirs = random.Random(seed), random.Random(seed)
            cards, expected = list(range(length)), list(range(length))
            shuffle(cards, ours.getrandbits)
            theirs.shuffle(expected)
            assert cards == expected
            assert ours.getstate() == theirs.getstate()


def test_events_read_at_any_moment_are_the_events_read_at_the_end() -> None:
    """Game.events builds the events on first read: reading them after some
    decisions, all of them, or only at the end gives the same list."""
    for seed in range(60):
        watched, unwatched = Game.new(4, seed), Game.new(4, seed)
        rng = random.Random(seed)
        seen = list(watched.events)
        held = watched.events  # the list itself grows as the game goes
        while not watched.over:
            request = watched.request
            assert request is not None
            seat = next(s for s in request.seats if watched.legal(s))
            decision = rng.choice(watched.legal(seat))
            watched.decide(seat, decision)
            unwatched.decide(seat, decision)
            if rng.random() < 0.5:
                new = watched.events[len(seen):]
                seen += new
                assert watched.events is held
        assert watched.events == seen + watched.events[len(seen):]
        assert watched.events == unwatched.events == held


# Every token shape a bot can send, legal or not, for the illegal attempts below.
TOKENS = (
    ["income", "foreign_aid", "tax", "exchange", "pass", "challenge", "force:yes", "force:no",
     "keep:duke", "keep:captain,duke", "keep:ambassador,ambassador"]
    + [f"{action}:{seat}" for action in ("coup", "assassinate", "steal", "examine")
       for seat in range(9)]
    + [f"{kind}:{card}" for kind in ("block", "lose", "show", "draft")
       for card in ("duke", "assassin", "captain", "contessa", "ambassador", "inquisitor")]
)

# sha256 of the games of digest_with_faults(1000), taken before the engine was made faster.
FAULTS_DIGEST = "4ff3247639f7d98caf544ff67a29739e7801354aa7807cd7f6a1f119c2a9d395"


def digest_with_faults(games: int) -> str:
    """Games with everything a referee may do: a random seat sends a random
    token (the reason of each refusal is hashed), forfeits, the wall-clock
    stop; every seat's legal list and every view of every event."""
    sha = hashlib.sha256()
    for n in range(games):
        players = 2 + n % 7
        variant = ("ambassador", "inquisitor")[n // 7 % 2]
        draft = (None, False, True)[n % 3] if players == 2 else None
        game = Game.from_config(GameConfig(players, variant, draft, (5, 40, 1000)[n % 3]), n)
        rng = random.Random(n)
        while not game.over:
            request = game.request
            assert request is not None
            sha.update(repr(request).encode())
            for seat in range(players):
                sha.update(repr(game.legal(seat)).encode())
            dice = rng.random()
            if dice < 0.03:
                game.forfeit(rng.choice(game.seats_in_game()), "crash")
            elif dice < 0.04:
                game.stop("time_cap")
            elif dice < 0.25:
                try:
                    game.decide(rng.randrange(players), Decision.parse(rng.choice(TOKENS)))
                    sha.update(b"taken")
                except IllegalDecision as refused:
                    sha.update(str(refused).encode())
            else:
                seat = next(s for s in request.seats if game.legal(s))
                game.decide(seat, rng.choice(game.legal(seat)))
        for event in game.events:
            for seat in range(OMNISCIENT, players):
                sha.update(repr(view(event, seat)).encode())
        with pytest.raises(GameOverError):
            game.decide(0, Decision.parse("income"))
        sha.update(json.dumps(GameRecord.of(game, None, n).to_json(), sort_keys=True).encode())
    return sha.hexdigest()


def test_seeded_games_with_faults_and_illegal_answers_are_unchanged() -> None:
    assert digest_with_faults(1000) == FAULTS_DIGEST
