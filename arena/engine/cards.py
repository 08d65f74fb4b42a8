"""Characters, variants and deck composition (RULES.md, "Cards and players")."""

from __future__ import annotations

from typing import Final

# Cards are plain lowercase strings: JSON-native, cheap to compare, and the
# same spelling in records, scenarios and the bot protocol.
DUKE: Final = "duke"
ASSASSIN: Final = "assassin"
CAPTAIN: Final = "captain"
CONTESSA: Final = "contessa"
AMBASSADOR: Final = "ambassador"
INQUISITOR: Final = "inquisitor"

ALL_CARDS: Final = (DUKE, ASSASSIN, CAPTAIN, CONTESSA, AMBASSADOR, INQUISITOR)

# The fifth character gives the variant its name.
VARIANTS: Final = (AMBASSADOR, INQUISITOR)
DEFAULT_VARIANT: Final = AMBASSADOR

MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 8
STARTING_COINS: Final = 2


def characters(variant: str) -> tuple[str, ...]:
    """The five characters in play for a variant, in a fixed order."""
    return (DUKE, ASSASSIN, CAPTAIN, CONTESSA, variant)


def copies(players: int) -> int:
    """Copies of each character: 3 for 2-6 players, 4 for 7-8."""
    return 4 if players >= 7 else 3


def deck(variant: str, players: int) -> list[str]:
    """The full deck for a game, in a fixed (unshuffled) order."""
    n = copies(players)
    return [card for card in characters(variant) for _ in range(n)]
