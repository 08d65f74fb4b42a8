"""The bot class an SDK author writes, and the request it answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import attrs

from arena.engine.decisions import INCOME, PASS, Decision
from arena.engine.events import Event
from arena.sdk.state import State


@attrs.frozen
class Request:
    """A decision the referee asks of your seat, with every legal answer.

    ``kind`` is one of ``draft action challenge block lose keep show force``
    (protocol.md, "Requests").  ``legal`` lists every legal answer as a
    ``Decision`` (``kind``, and ``target``, ``card``, ``cards`` or ``force``
    as the kind needs; ``token`` is its protocol text).  Answer with one of
    them.  ``actor``/``action``/``target`` name the action on the table and
    ``claimant``/``character`` the claim open to challenge, when they apply.
    ``context`` holds every ``key=value`` of the line, unknown keys too.
    """

    id: int
    kind: str
    legal: tuple[Decision, ...]
    bank_ms: int = 0
    actor: int | None = None
    action: str | None = None
    target: int | None = None
    claimant: int | None = None
    character: str | None = None
    context: Mapping[str, str] = attrs.field(factory=dict, eq=False)

    def tokens(self) -> tuple[str, ...]:
        """The legal answers' protocol texts, in the order listed."""
        return tuple(decision.token for decision in self.legal)

    def find(self, token: str) -> Decision | None:
        """The legal answer whose text is ``token`` (``"tax"``, ``"coup:2"``), or None."""
        for decision in self.legal:
            if decision.token == token:
                return decision
        return None

    def of_kind(self, kind: str) -> tuple[Decision, ...]:
        """The legal answers of one kind (``"steal"``, ``"block"``, ...)."""
        return tuple(decision for decision in self.legal if decision.kind == kind)

    def safe(self) -> Decision:
        """An answer that claims nothing when it can: pass, else Income, else the first."""
        for decision in self.legal:
            if decision.kind == PASS:
                return decision
        for decision in self.legal:
            if decision.kind == INCOME:
                return decision
        return self.legal[0]


class Bot:
    """Subclass it and write ``decide``; ``arena.sdk.run(MyBot)`` plays it.

    One instance plays every game of the bot process, one after the other, so
    it may learn across games (keep per-game things in ``on_game_start``).
    The hooks are optional.  Whatever a hook or ``decide`` raises is logged
    to stderr and the game goes on: a failing ``decide`` is answered with
    ``request.safe()``.
    """

    #: The name sent in the ``hello`` line: 1-64 of ``A-Z a-z 0-9 _ . + -``.
    name: ClassVar[str] = "python-bot"

    def on_game_start(self, state: State) -> None:
        """A game begins (``state`` has the seat, names, variant and seed; no event yet)."""

    def on_event(self, state: State, event: Event) -> None:
        """An event, already taken into ``state``."""

    def decide(self, state: State, request: Request) -> Decision:
        """Return one of ``request.legal``."""
        raise NotImplementedError("a Bot must define decide(state, request)")

    def on_game_over(self, state: State) -> None:
        """The game is over: ``state.placements`` holds every seat's place."""
