"""Readable transcripts: one line of plain English per event."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena.engine import events as ev


def _cards(cards: Sequence[str] | None, count: int | None = None) -> str:
    if cards is None:
        return f"{count} hidden card{'s' if count != 1 else ''}" if count is not None else "?"
    return ", ".join(cards) if cards else "nothing"


class Transcript:
    """Renders events with seat names (``names[seat]``), or "seat N"."""

    def __init__(self, names: Sequence[str] | None = None) -> None:
        self.names = list(names) if names else None
        self.dealt = 2  # cards dealt to a seat: one before the two-player draft

    def who(self, seat: int | None) -> str:
        if seat is None:
            return "nobody"
        if self.names:
            return f"{self.names[seat]} [{seat}]"
        return f"seat {seat}"

    def line(self, e: ev.Event) -> str:  # noqa: C901 - one branch per event type
        w = self.who
        match e:
            case ev.GameStarted():
                setup = "draft setup" if e.draft else "plain deal"
                self.dealt = 1 if e.draft else 2
                return (f"game of {e.players} ({e.variant}, {setup}); {w(e.first)} goes first; "
                        f"Court holds {e.court_size} cards")
            case ev.CardsDealt():
                return f"{w(e.seat)} is dealt {_cards(e.cards, self.dealt)}"
            case ev.DraftOffered():
                return f"{w(e.seat)} drafts from a pile of {_cards(e.cards, 5)}"
            case ev.DraftChosen():
                return f"{w(e.seat)} drafts {e.card or 'a hidden card'}"
            case ev.TurnStarted():
                return f"-- turn {e.turn}: {w(e.seat)}"
            case ev.ActionDeclared():
                target = f" on {w(e.target)}" if e.target is not None else ""
                claim = f" (claims {e.claim})" if e.claim else ""
                return f"{w(e.seat)} declares {e.action}{target}{claim}"
            case ev.CoinsChanged():
                return f"   {w(e.seat)} coins {e.delta:+d} ({e.why}) -> {e.coins}"
            case ev.Challenged():
                return f"{w(e.challenger)} challenges {w(e.claimant)}'s {e.character}"
            case ev.ClaimProven():
                return f"{w(e.seat)} shows {e.character} and shuffles it into the Court"
            case ev.ClaimFailed():
                return f"{w(e.seat)} was bluffing {e.character}"
            case ev.CardDrawn():
                return f"{w(e.seat)} draws {e.card or 'a hidden card'}"
            case ev.Blocked():
                return f"{w(e.blocker)} blocks {w(e.actor)} claiming {e.character}"
            case ev.InfluenceLost():
                return f"{w(e.seat)} loses influence: turns {e.card} face up"
            case ev.PlayerOut():
                return f"{w(e.seat)} is out ({e.reason})"
            case ev.Forfeited():
                return f"{w(e.seat)} forfeits: {e.reason}"
            case ev.ExchangeDrawn():
                return f"{w(e.seat)} draws {_cards(e.cards, e.count)} from the Court"
            case ev.ExchangeReturned():
                return f"{w(e.seat)} returns {_cards(e.cards, e.count)} to the Court"
            case ev.ExamineShown():
                card = e.card or "a hidden card"
                return f"{w(e.target)} shows {card} to {w(e.examiner)}"
            case ev.ExamineDecided():
                verb = "forces a swap of" if e.forced else "gives back"
                return f"{w(e.examiner)} {verb} {w(e.target)}'s card"
            case ev.ActionResolved():
                target = f" on {w(e.target)}" if e.target is not None else ""
                return f"{w(e.seat)}'s {e.action}{target} takes effect"
            case ev.ActionFailed():
                return f"{w(e.seat)}'s {e.action} fails ({e.reason.replace('_', ' ')})"
            case ev.GameOver():
                order = sorted(range(len(e.placements)), key=lambda s: e.placements[s])
                places = ", ".join(f"{e.placements[s]}. {w(s)}" for s in order)
                how = {ev.LAST_PLAYER: "last player standing",
                       ev.TURN_LIMIT: "turn limit"}.get(e.reason, e.reason.replace("_", " "))
                return f"== game over after {e.turns} turns ({how}): {places}"
        return repr(e)


def fault_evidence(fault: Mapping[str, Any]) -> str:
    """A forfeit's evidence from a record's fault: what, the line, when, the process."""
    parts = [f"fault {fault.get('kind')}: {fault.get('detail')}"]
    if fault.get("line") is not None:
        parts.append(f"its line: {fault['line']!r}")
    if fault.get("elapsed") is not None:
        parts.append(f"after {round(fault['elapsed'] * 1000, 2):g} ms")
    if fault.get("exit"):
        parts.append(f"the process {fault['exit']}")
    return "; ".join(parts)
