"""Same seed, same game: the engine's output for 2,000 seeded random games is pinned.

Speed work on the engine must not change a single game.  For every player
count, both variants and the draft on and off, seeded games are played by a
seeded random driver (with a forfeit at a random moment in every seventh
game); the hash covers every legal list offered (in order: drivers pick by
position), every event, one seat's view of it, and the JSON record.  The digests were taken before
the engine was made faster; a change that alters any game changes them.
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from arena.engine.game import _SWAPS, Game, GameConfig, shuffle
from arena.engine.observer import view
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
    0: "5b1d28aa51d42b9a915f3db66b8c9e62f615abb9fb44c0896b666b8a514ab3bc",
    1: "cc8fee49cba0245636621a02cfced87737ceca76db742df91f04d0b8674152bb",
    2: "2a72011846024a0daa372fd25b3dbc05dee2fbf2dd180940fd62e4aa3a456b1b",
    3: "62c9a2c44f515891e09cba15aef5c5ca4513f7b81730e7aa09d330967de9d883",
    4: "0a2527191c1feb34c0f311db42720800ef6c5f943a1115b47917cf991d51b337",
    5: "c644270ed2076991e1736cb1271e4b559238dffa1ef4c85a268af74dcf979800",
    6: "0a67980b1e9775b0a592aa93062ce4b033e8c5923d5fce03bccee2f4e053fb7f",
    7: "bc96f03bfd03e1431036810f77134f904362b1c71b77377a299779932e482c7e",
    8: "ee29e28b3aae104c7f6fd5ad9bc03380fb6c74cd6ae5f638c7e98c24e0238172",
    9: "b948e85a39486b25e16fc6216de42fda89807a955cc25d8246bec1eca98342a6",
    10: "296c7fc3a55941ad8de2d41d2192189b45b05c54f9a96fe8c522ef0649193d13",
    11: "a98eff5fa16c5328895ae582e6b03c6f326fa8fa600f807f684fdd5ec5dfb083",
    12: "cb16c7b7a561a2035512510f08f9bef640e5b2198ac6c2b880ecab989650821b",
    13: "779ee8c80b4bb21fc9fa69d4363d6a76e368990023a5af175a83eea87251e9ff",
    14: "b0a008c699f57531df7867e6834e70523a78bdb17534f061003998592abbf388",
    15: "01948c83eb0a6c1f1b943f6eb8ed48daaff762eb5e4f8365ad20e15529de7970",
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
