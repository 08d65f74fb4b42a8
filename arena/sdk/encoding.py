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


def observation(state: State, request: Any = None) -> list[float]:
    """The observation vector of ``state``'s seat, asked ``request`` (or nothing).

    ``request`` may be an ``arena.sdk.Request`` or the engine's own request:
    only its ``kind``, ``claimant`` and ``character`` are read.
    """
    v = [0.0] * OBSERVATION_SIZE
    indices, values = sparse_observation(state, request)
    for i, x in zip(indices, values, strict=True):
        v[i] = x
    return v


_PLAYERS, _INQUISITOR, _DRAFT, _COURT, _TURN, _REQUEST, _HAND, _SET_ASIDE, _SEATS = (
    OBSERVATION_FIELDS[name][0] for name in ("players", "inquisitor", "draft", "court", "turn",
                                             "request", "hand", "set_aside", "seats"))
_ACTION_AT, _ACTOR, _TARGET, _BLOCKER, _BLOCK_CLAIM, _CLAIMANT, _CHARACTER = (
    OBSERVATION_FIELDS[name][0] for name in ("action", "actor", "target", "blocker",
                                             "block_claim", "claimant", "character"))
# Card counts -> (offsets, values) within a 6-number field; the same few recur.
_COUNTS: dict[tuple[tuple[str, ...], float, float], tuple[list[int], list[float]]] = {}


def _counts(cards: tuple[str, ...], step: float, cap: float) -> tuple[list[int], list[float]]:
    key = (cards, step, cap)
    found = _COUNTS.get(key)
    if found is None:
        totals: dict[int, float] = {}
        for card in cards:
            totals[_CARD[card]] = min(totals.get(_CARD[card], 0.0) + step, cap)
        found = _COUNTS[key] = (list(totals), list(totals.values()))
    return found


# A seat slot's numbers, by everything they depend on: the same ones recur.
_SLOTS: dict[tuple[Any, ...], tuple[list[int], list[float]]] = {}


def _slot(slot: int, alive: bool, coins: int, influence: int, face_up: tuple[str, ...],
          current: bool, claims: tuple[str, ...],
          known: str | None) -> tuple[list[int], list[float]]:
    base = _SEATS + slot * _SLOT
    idx = [base, base + 2, base + 3]
    val = [1.0, min(coins, 12) / 12, influence / 2]
    if alive:
        idx.append(base + 1)
        val.append(1.0)
    if face_up:
        offsets, values = _counts(face_up, 0.5, 1.0)
        idx += [base + 4 + o for o in offsets]
        val += values
    if current:
        idx.append(base + 10)
        val.append(1.0)
    if claims:
        offsets, values = _counts(claims, 1 / 3, 1.0)
        idx += [base + 11 + o for o in offsets]
        val += values
    if known is not None:
        idx.append(base + 17 + _CARD[known])
        val.append(1.0)
    return idx, val


def sparse_observation(state: State, request: Any = None) -> tuple[list[int], list[float]]:
    """The observation's nonzero numbers: (indices, values).  See ``observation``."""
    n = state.players
    me = state.seat
    idx = [_PLAYERS + n - 2, _COURT, _TURN]
    val = [1.0, min(state.court_size, 20) / 20, min(state.turn, 100) / 100]
    if state.variant == "inquisitor":
        idx.append(_INQUISITOR)
        val.append(1.0)
    if state.draft:
        idx.append(_DRAFT)
        val.append(1.0)
    if request is not None:
        kind = _KIND.get(request.kind)
        if kind is not None:
            idx.append(_REQUEST + kind)
            val.append(1.0)
    if state.hand:
        offsets, values = _counts(state.hand, 0.25, 1.0)
        idx += [_HAND + o for o in offsets]
        val += values
    if state.set_aside:
        offsets, values = _counts(state.set_aside, 1.0, 1.0)
        idx += [_SET_ASIDE + o for o in offsets]
        val += values
    current = state.current
    alive, coins, influence = state.alive, state.coins, state.influence
    face_up, claims, known = state.face_up, state.claims, state.known
    slots = _SLOTS
    for slot in range(n):
        seat = (me + slot) % n
        key = (slot, alive[seat], coins[seat], influence[seat], face_up[seat], seat == current,
               claims[seat], known[seat])
        found = slots.get(key)
        if found is None:
            found = _slot(*key)
            if len(slots) > 200_000:
                slots.clear()
            slots[key] = found
        idx += found[0]
        val += found[1]
    chain = state.chain
    if chain is not None:
        idx += (_ACTION_AT + _ACTION[chain.action], _ACTOR + (chain.actor - me) % n)
        val += (1.0, 1.0)
        if chain.target is not None:
            idx.append(_TARGET + (chain.target - me) % n)
            val.append(1.0)
        if chain.blocker is not None:
            idx.append(_BLOCKER + (chain.blocker - me) % n)
            val.append(1.0)
        if chain.block_claim is not None:
            idx.append(_BLOCK_CLAIM + _CARD[chain.block_claim])
            val.append(1.0)
    if request is not None and request.claimant is not None:
        idx.append(_CLAIMANT + (request.claimant - me) % n)
        val.append(1.0)
        if request.character in _CARD:
            idx.append(_CHARACTER + _CARD[request.character])
            val.append(1.0)
    return idx, val
