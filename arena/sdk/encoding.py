"""Fixed-size numbers for a seat's view and answers: what a learning bot reads.

The training environment (``arena.env``) gives its agents exactly these
vectors, and an SDK bot can compute them the same way from its ``State`` and
``Request``, so that a policy trained in the environment plays as a protocol
bot unchanged.  Plain Python lists: no numpy here.

Seats are *relative*: slot 0 is the observing seat, slot k the seat k places
clockwise from it ((seat + k) % players).  A target is written the same way.

Actions (``ACTION_COUNT`` = 87), index: answer

====== ===========================================================
0-3    ``income``, ``foreign_aid``, ``tax``, ``exchange``
4-10   ``coup`` on slot 1-7 (4: the next seat clockwise, ...)
11-17  ``assassinate`` on slot 1-7
18-24  ``steal`` on slot 1-7
25-31  ``examine`` on slot 1-7
32-33  ``pass``, ``challenge``
34-39  ``block:<card>``, cards in ``CARDS`` order
40-45  ``lose:<card>``;  46-51 ``show:<card>``;  52-57 ``draft:<card>``
58-63  ``keep:<card>`` (one card kept)
64-84  ``keep:<card>,<card>``, the pairs (i <= j) of ``CARDS`` in order
85-86  ``force:yes``, ``force:no``
====== ===========================================================

``CARDS`` = duke, assassin, captain, contessa, ambassador, inquisitor.
``action_mask`` marks the indices of the request's legal answers;
``decision_for`` turns an index back into one of them.

Observation (``OBSERVATION_SIZE`` = 267 numbers, each in [0, 1]); see
``OBSERVATION_FIELDS`` for the offsets:

- ``players``: one-hot of the number of players, 2 to 8 (7);
  ``inquisitor``: 1 for the Inquisitor variant; ``draft``: 1 for the draft
  setup; ``court``: Court size / 20; ``turn``: min(turn, 100) / 100;
  ``request``: one-hot of the request kind in ``REQUEST_KINDS`` order (8,
  all 0 when nothing is asked);
- ``hand``: your face-down cards, count of each card / 4 (6); ``set_aside``:
  the cards of your draft pile you did not keep, 0 or 1 each (6);
- ``seats``: 8 slots of 23 numbers (zeros for slots past the last seat):
  present, in the game, min(coins, 12) / 12, face-down cards / 2, face-up
  count of each card / 2 (6), is the seat whose turn it is, claims since its
  last new card, min(count, 3) / 3 of each card (6), the card you saw it hold
  by examining it, one-hot (6);
- the action on the table: ``action`` one-hot in ``ACTION_NAMES`` order (8),
  ``actor`` slot (8), ``target`` slot (8), ``blocker`` slot (8),
  ``block_claim`` one-hot card (6); the claim a challenge request is about:
  ``claimant`` slot (8), ``character`` one-hot card (6).
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Sequence
from typing import Any, Final

from arena.engine.cards import ALL_CARDS, MAX_PLAYERS
from arena.engine.decisions import REQUEST_KINDS, Decision
from arena.sdk.state import State

CARDS: Final = ALL_CARDS
ACTION_NAMES: Final = ("income", "foreign_aid", "coup", "tax", "assassinate", "steal",
                       "exchange", "examine")
_UNTARGETED: Final = ("income", "foreign_aid", "tax", "exchange")
_TARGETED: Final = ("coup", "assassinate", "steal", "examine")
_CARD_KINDS: Final = ("block", "lose", "show", "draft")


def _action_keys() -> list[tuple[Any, ...]]:
    keys: list[tuple[Any, ...]] = [(name,) for name in _UNTARGETED]
    keys += [(name, offset) for name in _TARGETED for offset in range(1, MAX_PLAYERS)]
    keys += [("pass",), ("challenge",)]
    keys += [(kind, card) for kind in _CARD_KINDS for card in CARDS]
    keys += [("keep", (card,)) for card in CARDS]
    keys += [("keep", tuple(sorted(pair))) for pair in
             itertools.combinations_with_replacement(CARDS, 2)]
    keys += [("force", True), ("force", False)]
    return keys


ACTION_KEYS: Final = tuple(_action_keys())
ACTION_COUNT: Final = len(ACTION_KEYS)
_INDEX: Final = {key: i for i, key in enumerate(ACTION_KEYS)}
# (token, seat, players) -> index: decisions are few, and seen again and again.
_TOKEN_INDEX: dict[tuple[str, int, int], int] = {}


def _key(decision: Decision, seat: int, players: int) -> tuple[Any, ...]:
    if decision.target is not None:
        return decision.kind, (decision.target - seat) % players
    if decision.card is not None:
        return decision.kind, decision.card
    if decision.cards is not None:
        return decision.kind, tuple(sorted(decision.cards))
    if decision.force is not None:
        return decision.kind, decision.force
    return (decision.kind,)


def action_index(decision: Decision, seat: int, players: int) -> int:
    """The index of ``decision`` answered by ``seat`` in a game of ``players``."""
    cache_key = (decision.token, seat, players)
    found = _TOKEN_INDEX.get(cache_key)
    if found is None:
        found = _TOKEN_INDEX[cache_key] = _INDEX[_key(decision, seat, players)]
    return found


def legal_indices(legal: Sequence[Decision], seat: int, players: int) -> list[int]:
    """The indices of the legal answers, in the order listed."""
    return [action_index(decision, seat, players) for decision in legal]


def action_mask(legal: Sequence[Decision], seat: int, players: int) -> list[int]:
    """``ACTION_COUNT`` numbers: 1 where the answer is legal, else 0."""
    mask = [0] * ACTION_COUNT
    for index in legal_indices(legal, seat, players):
        mask[index] = 1
    return mask


def decision_for(index: int, legal: Sequence[Decision], seat: int,
                 players: int) -> Decision | None:
    """The legal answer with this index, or None if it is not legal."""
    for decision in legal:
        if action_index(decision, seat, players) == index:
            return decision
    return None


def describe_action(index: int) -> str:
    """The answer an index stands for, in words (``"steal on slot 2"``)."""
    key = ACTION_KEYS[index]
    if key[0] in _TARGETED:
        return f"{key[0]} on slot {key[1]}"
    if key[0] == "keep":
        return "keep:" + ",".join(key[1])
    if key[0] == "force":
        return f"force:{'yes' if key[1] else 'no'}"
    return ":".join(str(part) for part in key)


# -- observations --------------------------------------------------------------

_SLOT: Final = 23  # numbers per seat slot
OBSERVATION_FIELDS: Final = {}  # name -> (offset, length), filled in below
_offset = 0
for _name, _length in (("players", 7), ("inquisitor", 1), ("draft", 1), ("court", 1),
                       ("turn", 1), ("request", len(REQUEST_KINDS)), ("hand", 6),
                       ("set_aside", 6), ("seats", _SLOT * MAX_PLAYERS), ("action", 8),
                       ("actor", 8), ("target", 8), ("blocker", 8), ("block_claim", 6),
                       ("claimant", 8), ("character", 6)):
    OBSERVATION_FIELDS[_name] = (_offset, _length)
    _offset += _length
OBSERVATION_SIZE: Final = _offset
# Within a seat slot.
SLOT_FIELDS: Final = {"present": (0, 1), "alive": (1, 1), "coins": (2, 1), "influence": (3, 1),
                      "face_up": (4, 6), "current": (10, 1), "claims": (11, 6),
                      "known": (17, 6)}

_CARD: Final = {card: i for i, card in enumerate(CARDS)}
_KIND: Final = {kind: i for i, kind in enumerate(REQUEST_KINDS)}
_ACTION: Final = {name: i for i, name in enumerate(ACTION_NAMES)}
_SEATS: Final = OBSERVATION_FIELDS["seats"][0]
_TAIL: Final = _SEATS + _SLOT * MAX_PLAYERS  # where the action on the table begins
_FLOAT32: Final = "f"  # array typecode: 4-byte floats, as the environment's vectors
_CACHE_MAX: Final = 200_000


def observation(state: State, request: Any = None) -> list[float]:
    """The observation vector of ``state``'s seat, asked ``request`` (or nothing).

    ``request`` may be an ``arena.sdk.Request`` or the engine's own request:
    only its ``kind``, ``claimant`` and ``character`` are read.  The numbers
    are float32 values (as in the environment), as Python floats.
    """
    return array(_FLOAT32, observation_bytes(state, request)).tolist()


def observation_bytes(state: State, request: Any = None) -> bytearray:
    """The observation as ``OBSERVATION_SIZE`` native float32 values, in a new
    bytearray (``numpy.frombuffer(..., numpy.float32)`` makes a writable array
    over it, without copying).

    It is made of blocks (the game and your cards, each seat's slot, the
    action on the table) that recur from step to step: each is built once.
    """
    public = state  # what every seat sees alike
    n = state.players
    me = state.seat
    game = _GAMES.get((n, state.variant, public.draft))
    if game is None:
        game = _GAMES[n, state.variant, public.draft] = _game_block(n, state.variant, public.draft)
    court, turn = public.court_size, public.turn
    cards = _CARDS_HELD.get((state.hand, state.set_aside))
    if cards is None:
        cards = _remember(_CARDS_HELD, (state.hand, state.set_aside),
                          _cards_block(state.hand, state.set_aside))
    parts = [game, _COURT[court] if 0 <= court <= 20 else _number(min(court, 20) / 20),
             _TURN[turn] if 0 <= turn <= 100 else _number(min(turn, 100) / 100),
             _REQUEST[_KIND.get(request.kind, -1) if request is not None else -1], cards]
    blocks = _seat_blocks(public)
    known = state.known
    if known != _NOBODY_KNOWN[n]:
        blocks = [_known_block(public, seat, card) if card is not None else block
                  for seat, (block, card) in enumerate(zip(blocks, known, strict=True))]
    parts += blocks[me:]
    parts += blocks[:me]
    parts.append(_EMPTY_SLOTS[MAX_PLAYERS - n])
    # The action on the table and the claim asked about: one-hot pieces.
    chain = public.chain
    if chain is None:
        parts.append(_NO_CHAIN)
    else:
        target, blocker, block_claim = chain.target, chain.blocker, chain.block_claim
        parts += (_ACTION_HOT[_ACTION[chain.action]], _SLOT_HOT[(chain.actor - me) % n],
                  _NO_SLOT if target is None else _SLOT_HOT[(target - me) % n],
                  _NO_SLOT if blocker is None else _SLOT_HOT[(blocker - me) % n],
                  _NO_CARD if block_claim is None else _CARD_HOT[_CARD[block_claim]])
    claimant = request.claimant if request is not None else None
    if claimant is None:
        parts.append(_NO_CLAIM)
    else:
        character = request.character
        parts += (_SLOT_HOT[(claimant - me) % n],
                  _CARD_HOT[_CARD[character]] if character in _CARD else _NO_CARD)
    return bytearray().join(parts)


# The seat slots of the last State asked (each seat's slot in seat order, as
# seen by a seat that examined nobody): the seats asked one after the other
# between two events share them.  It holds the State, so that its id stays
# its own; its history's length tells whether an event came since.
_last_blocks: list[tuple[Any, int, list[bytes]]] = [(None, -1, [])]
_NOBODY_KNOWN: Final = [(None,) * k for k in range(MAX_PLAYERS + 1)]


def _seat_blocks(public: State) -> list[bytes]:
    last, version = _last_blocks[0], len(public._history)
    if last[0] is public and last[1] == version:
        return last[2]
    current = public.current
    slots = _SLOTS
    blocks = []
    for seat, key in enumerate(zip(public.alive, public.coins, public.influence, public.face_up,
                                   public.claims, strict=True)):
        key += (seat == current,)
        block = slots.get(key)
        if block is None:
            block = _remember(slots, key, _slot(*key, None))
        blocks.append(block)
    _last_blocks[0] = (public, version, blocks)  # one tuple: read whole, even by threads
    return blocks


def _known_block(public: State, seat: int, card: str) -> bytes:
    """The slot of a seat whose face-down ``card`` the observer saw by examining."""
    return _slot(public.alive[seat], public.coins[seat], public.influence[seat],
                 public.face_up[seat], public.claims[seat], seat == public.current, card)


_SLOTS: dict[tuple[Any, ...], bytes] = {}
_CARDS_HELD: dict[tuple[Any, ...], bytes] = {}
_GAMES: dict[tuple[Any, ...], bytes] = {}
_EMPTY_SLOTS: Final = [bytes(4 * _SLOT * k) for k in range(MAX_PLAYERS + 1)]


def _remember(cache: dict[tuple[Any, ...], bytes], key: tuple[Any, ...], block: bytes) -> bytes:
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    cache[key] = block
    return block


def _block(length: int, numbers: dict[int, float]) -> bytes:
    values = array(_FLOAT32, bytes(4 * length))
    for i, value in numbers.items():
        values[i] = value
    return values.tobytes()


def _add_counts(numbers: dict[int, float], base: int, cards: tuple[str, ...], step: float) -> None:
    for card in cards:
        i = base + _CARD[card]
        numbers[i] = min(numbers.get(i, 0.0) + step, 1.0)


def _number(value: float) -> bytes:
    return array(_FLOAT32, (value,)).tobytes()


def _game_block(players: int, variant: str, draft: bool) -> bytes:
    """``players``, ``inquisitor``, ``draft``."""
    f = OBSERVATION_FIELDS
    numbers = {f["players"][0] + players - 2: 1.0}
    if variant == "inquisitor":
        numbers[f["inquisitor"][0]] = 1.0
    if draft:
        numbers[f["draft"][0]] = 1.0
    return _block(f["court"][0], numbers)


def _cards_block(hand: tuple[str, ...], set_aside: tuple[str, ...]) -> bytes:
    """``hand`` and ``set_aside``."""
    numbers: dict[int, float] = {}
    _add_counts(numbers, 0, hand, 0.25)
    _add_counts(numbers, 6, set_aside, 1.0)
    return _block(12, numbers)


def _slot(alive: bool, coins: int, influence: int, face_up: tuple[str, ...],
          claims: tuple[str, ...], current: bool, known: str | None) -> bytes:
    numbers = {0: 1.0, 1: 1.0 if alive else 0.0, 2: min(coins, 12) / 12, 3: influence / 2,
               10: 1.0 if current else 0.0}
    _add_counts(numbers, 4, face_up, 0.5)
    _add_counts(numbers, 11, claims, 1 / 3)
    if known is not None:
        numbers[17 + _CARD[known]] = 1.0
    return _block(_SLOT, numbers)


def _one_hot(length: int, index: int) -> bytes:
    return _block(length, {index: 1.0})


_COURT: Final = [_number(size / 20) for size in range(21)]
_TURN: Final = [_number(turn / 100) for turn in range(101)]
_REQUEST: Final = [_one_hot(len(REQUEST_KINDS), kind) for kind in range(len(REQUEST_KINDS))] + [
    bytes(4 * len(REQUEST_KINDS))]  # index -1: nothing asked
_ACTION_HOT: Final = [_one_hot(len(ACTION_NAMES), i) for i in range(len(ACTION_NAMES))]
_SLOT_HOT: Final = [_one_hot(MAX_PLAYERS, slot) for slot in range(MAX_PLAYERS)]
_CARD_HOT: Final = [_one_hot(len(CARDS), i) for i in range(len(CARDS))]
_NO_SLOT: Final = bytes(4 * MAX_PLAYERS)
_NO_CARD: Final = bytes(4 * len(CARDS))
_NO_CHAIN: Final = bytes(4 * (OBSERVATION_FIELDS["claimant"][0] - _TAIL))
_NO_CLAIM: Final = bytes(4 * (OBSERVATION_SIZE - OBSERVATION_FIELDS["claimant"][0]))
