"""The rules table: every action's claim, cost, target and who may block it.

All legality that depends on *which* action is on the table is read from
here (as h11 keeps its whole state machine in one table), so the game logic
in game.py never tests action names one by one.
"""

from __future__ import annotations

from typing import Final

import attrs

from arena.engine.cards import AMBASSADOR, ASSASSIN, CAPTAIN, CONTESSA, DUKE, INQUISITOR

# Who may block an action.
NOBODY: Final = "nobody"
TARGET: Final = "target"
ANYONE: Final = "anyone"  # any other player still in the game

INCOME: Final = "income"
FOREIGN_AID: Final = "foreign_aid"
COUP: Final = "coup"
TAX: Final = "tax"
ASSASSINATE: Final = "assassinate"
STEAL: Final = "steal"
EXCHANGE: Final = "exchange"
EXAMINE: Final = "examine"

FORCED_COUP_COINS: Final = 10
DEFAULT_TURN_LIMIT: Final = 1000


@attrs.frozen
class ActionRule:
    name: str
    claim: str | None  # the character claimed; None for general actions
    cost: int
    targeted: bool
    blocked_by: str  # NOBODY, TARGET or ANYONE
    block_claims: tuple[str, ...]  # characters a block may claim


def _table(variant: str) -> dict[str, ActionRule]:
    fifth = variant  # Ambassador or Inquisitor
    rules = [
        ActionRule(INCOME, None, 0, False, NOBODY, ()),
        ActionRule(FOREIGN_AID, None, 0, False, ANYONE, (DUKE,)),
        ActionRule(COUP, None, 7, True, NOBODY, ()),
        ActionRule(TAX, DUKE, 0, False, NOBODY, ()),
        ActionRule(ASSASSINATE, ASSASSIN, 3, True, TARGET, (CONTESSA,)),
        ActionRule(STEAL, CAPTAIN, 0, True, TARGET, (CAPTAIN, fifth)),
        ActionRule(EXCHANGE, fifth, 0, False, NOBODY, ()),
    ]
    if variant == INQUISITOR:
        rules.append(ActionRule(EXAMINE, INQUISITOR, 0, True, NOBODY, ()))
    return {rule.name: rule for rule in rules}


ACTIONS: Final[dict[str, dict[str, ActionRule]]] = {
    variant: _table(variant) for variant in (AMBASSADOR, INQUISITOR)
}

# Cards drawn by an Exchange, by variant.
EXCHANGE_DRAW: Final = {AMBASSADOR: 2, INQUISITOR: 1}
