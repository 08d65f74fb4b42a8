"""Decision requests the engine asks, and the decisions players answer.

A decision has one canonical text form with no spaces (its *token*), e.g.
``income``, ``coup:2``, ``pass``, ``block:duke``, ``keep:captain,duke``.
The same tokens appear in game records, in the bot protocol and in
transcripts, so a bot can answer by echoing one of the listed tokens.
"""

from __future__ import annotations

from typing import Final

import attrs

from arena.engine.cards import ALL_CARDS
from arena.engine.rules import (
    ASSASSINATE,
    COUP,
    EXAMINE,
    EXCHANGE,
    FOREIGN_AID,
    INCOME,
    STEAL,
    TAX,
)

# Request kinds.  CHALLENGE and BLOCK are opportunities: offered to several
# seats at once, each of which may pass.  The others are mandatory.
DRAFT: Final = "draft"
ACTION: Final = "action"
CHALLENGE: Final = "challenge"
BLOCK: Final = "block"
LOSE: Final = "lose"
KEEP: Final = "keep"
SHOW: Final = "show"
FORCE: Final = "force"
REQUEST_KINDS: Final = (DRAFT, ACTION, CHALLENGE, BLOCK, LOSE, KEEP, SHOW, FORCE)
OPPORTUNITIES: Final = frozenset({CHALLENGE, BLOCK})

# Decision kinds that are not actions.
PASS: Final = "pass"
_ACTION_NAMES: Final = frozenset(
    {INCOME, FOREIGN_AID, COUP, TAX, ASSASSINATE, STEAL, EXCHANGE, EXAMINE}
)
_TARGETED: Final = frozenset({COUP, ASSASSINATE, STEAL, EXAMINE})
_CARD_KINDS: Final = frozenset({BLOCK, LOSE, SHOW, DRAFT})


class DecisionSyntaxError(ValueError):
    """A decision token that is not well formed (as opposed to illegal)."""


@attrs.frozen
class Request:
    """What the engine waits for: one kind of decision from ``seats``.

    For an opportunity (challenge, block) every seat in ``seats`` answers,
    and may pass; otherwise ``seats`` holds one seat (two for the draft,
    which both players make at once).  ``claimant``/``character`` name the
    claim open to challenge; ``actor``/``action``/``target`` the action on
    the table, when there is one.
    """

    kind: str
    seats: tuple[int, ...]
    actor: int | None = None
    action: str | None = None
    target: int | None = None
    claimant: int | None = None
    character: str | None = None

    @property
    def optional(self) -> bool:
        return self.kind in OPPORTUNITIES


@attrs.frozen
class Decision:
    """One player's answer.  ``kind`` is an action name or a request kind."""

    kind: str
    target: int | None = None  # targeted actions
    card: str | None = None  # block, lose, show, draft
    cards: tuple[str, ...] | None = None  # keep (sorted)
    force: bool | None = None  # force

    @property
    def token(self) -> str:
        kind = self.kind
        if self.target is not None:
            return f"{kind}:{self.target}"
        if self.card is not None:
            return f"{kind}:{self.card}"
        if self.cards is not None:
            return f"{kind}:{','.join(self.cards)}"
        if self.force is not None:
            return f"{kind}:{'yes' if self.force else 'no'}"
        return kind

    def __str__(self) -> str:
        return self.token

    @classmethod
    def parse(cls, token: str) -> Decision:
        """Read a token.  Raises DecisionSyntaxError if it is not well formed."""
        kind, sep, arg = token.partition(":")
        if kind in _ACTION_NAMES:
            if kind in _TARGETED:
                if not sep or not arg.isdigit() or len(arg) > 2:
                    raise DecisionSyntaxError(f"{kind!r} needs a target seat, as in {kind}:1")
                return cls(kind, target=int(arg))
            if sep:
                raise DecisionSyntaxError(f"{kind!r} takes no argument")
            return cls(kind)
        if kind in (PASS, CHALLENGE):
            if sep:
                raise DecisionSyntaxError(f"{kind!r} takes no argument")
            return cls(kind)
        if kind in _CARD_KINDS:
            if arg not in ALL_CARDS:
                raise DecisionSyntaxError(f"{kind!r} needs a card name, as in {kind}:duke")
            return cls(kind, card=arg)
        if kind == KEEP:
            cards = tuple(arg.split(",")) if arg else ()
            if not cards or any(card not in ALL_CARDS for card in cards):
                raise DecisionSyntaxError("'keep' needs card names, as in keep:captain,duke")
            return cls(kind, cards=tuple(sorted(cards)))
        if kind == FORCE:
            if arg not in ("yes", "no"):
                raise DecisionSyntaxError("'force' needs yes or no, as in force:yes")
            return cls(kind, force=arg == "yes")
        raise DecisionSyntaxError(f"unknown decision {kind!r}")


# Decisions without arguments are shared, not rebuilt for every request.
PASS_DECISION: Final = Decision(PASS)
CHALLENGE_DECISION: Final = Decision(CHALLENGE)
