"""One game between bots: the engine drives, the bots answer.

The loop is the whole referee: send each seat the new events as its observer
view, ask every seat the engine waits for (all at once for an opportunity,
so its wall time is the slowest answer, not the sum), apply the answers in
seat order (so results never depend on who answered first), and forfeit a
seat that faults.  Only this module and player.py touch the clock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import attrs
import trio

from arena.decision_times import histogram
from arena.engine import events as ev
from arena.engine.decisions import Decision
from arena.engine.game import Game, GameConfig
from arena.engine.observer import has_secret, seat_views
from arena.engine.record import GameRecord
from arena.protocol import codec
from arena.referee.player import Asked, BotFaulted, BotPlayer, Fault

# Why a game stopped when the engine did not end it.
TIME_CAP = "time_cap"


@attrs.frozen
class GameReport:
    """A finished game: its record, and what the referee saw of each seat."""

    record: GameRecord
    names: tuple[str, ...]
    faults: tuple[Fault | None, ...]
    times: tuple[tuple[float, ...], ...]  # each seat's answer times, in seconds
    duration: float

    @property
    def result(self) -> dict[str, object]:
        assert self.record.result is not None
        return self.record.result


async def play_game(
    seats: Sequence[BotPlayer | Fault],
    config: GameConfig,
    seed: int,
    limits: codec.Limits,
    *,
    on_event: Callable[[ev.Event], None] | None = None,
    record_name: str | None = None,
) -> GameReport:
    """Play one game.  A seat given as a ``Fault`` (its bot could not start)
    forfeits at once; the game goes on for the others.  Each bot's log gets
    a line ``== game N, record R ==`` first (``record_name``: where the
    record will be), so that a log can be matched to its record."""
    started = trio.current_time()
    game = Game.from_config(config, seed)
    n = config.players
    players: list[BotPlayer | None] = [s if isinstance(s, BotPlayer) else None for s in seats]
    names = tuple(s.name if isinstance(s, BotPlayer) else "?" for s in seats)
    wire = [codec.wire_name(name) for name in names]
    faults: list[Fault | None] = [None if isinstance(s, BotPlayer) else s for s in seats]
    times: list[list[float]] = [[] for _ in range(n)]
    recorded: list[list[float]] = [[] for _ in range(n)]  # the same, as answer_ms records them
    banks = [limits.bank_ms] * n
    sent = 0
    # Each seat's game number and first request id in its process: with the
    # answer times, what `arena replay --raw` needs to rebuild its lines.
    session: list[list[int] | None] = [None] * n

    for seat, player in enumerate(players):
        if player is not None:
            player.discard_queue()
            if player.games == 0:
                # The CPU limit is per game, from the end of the last one (end_game),
                # so what a bot burns between games counts against the next.
                player.process.reset_cpu()
            player.games += 1
            session[seat] = [player.games, player.next_request_id]
            where = f", record {record_name}" if record_name is not None else ""
            player.process.log_note(f"== game {player.games}{where} ==")
            player.queue(codec.encode_game_start(player.games, seat, wire, config.variant))
            player.queue(codec.encode_seed(codec.seat_seed(seed, seat)))
    for seat, fault in enumerate(faults):
        if fault is not None and not game.over:
            game.forfeit(seat, fault.kind)

    lines_of = _LINES.setdefault(n, {})
    event_fields = game.event_fields
    live = [seat for seat in range(n) if players[seat] is not None and faults[seat] is None]
    # Each live seat's outbox (BotPlayer.outbox), where its lines wait for its next request.
    outboxes = [players[seat].outbox for seat in live]  # type: ignore[union-attr]

    def distribute() -> None:
        nonlocal sent
        if on_event is not None:
            for event in game.events[sent:]:
                on_event(event)
        new = event_fields[sent:]
        sent = len(event_fields)
        for unbuilt in new:
            found = lines_of.get(unbuilt)
            if found is None:
                found = _event_lines(unbuilt, n, lines_of)
            if type(found) is str:  # a public event reads the same for every seat
                for out in outboxes:
                    out.append(found)
            else:
                for seat, out in zip(live, outboxes, strict=True):
                    out.append(found[seat])

    def took(seat: int, decision: Decision, elapsed: float) -> Decision:
        times[seat].append(elapsed)
        ms = answer_ms(elapsed)
        recorded[seat].append(ms)
        # From the time as recorded, so that a replay computes the same banks.
        over = round(ms) - limits.decision_ms
        if over > 0:
            banks[seat] -= over
        return decision

    async def ask(seat: int) -> Decision | Fault:
        player = players[seat]
        assert player is not None
        try:
            decision, elapsed = await player.ask(game.request, game.legal(seat), banks[seat])
        except BotFaulted as exc:
            return exc.fault
        return took(seat, decision, elapsed)

    async def answer_into(seat: int, asked: Asked | None,
                          outcomes: dict[int, Decision | Fault]) -> None:
        if asked is None:  # not sent: it goes the whole way
            outcomes[seat] = await ask(seat)
            return
        player = players[seat]
        assert player is not None
        try:
            decision, elapsed = await player.answer(asked)
        except BotFaulted as exc:
            outcomes[seat] = exc.fault
            return
        outcomes[seat] = took(seat, decision, elapsed)

    def forfeit(seat: int, fault: Fault) -> None:
        if not game.over:
            faults[seat] = fault
            del outboxes[live.index(seat)]
            live.remove(seat)
            game.forfeit(seat, fault.kind)

    with trio.move_on_after(limits.game_ms / 1000) as cap:
        while not game.over:
            distribute()
            request = game.request
            assert request is not None
            if len(request.seats) == 1:
                seat = request.seats[0]
                outcome = await ask(seat)
                if isinstance(outcome, Decision):
                    game.decide(seat, outcome)
                else:
                    forfeit(seat, outcome)
                continue
            # Every seat asked at once: each request sent, and each answer taken
            # if it is already there; the others waited for side by side.
            # Past the time cap (due, and delivered at the next pass): no answer
            # taken, so that it cuts the round off whole, every request out.
            take = trio.current_time() < cap.deadline
            outcomes: dict[int, Decision | Fault] = {}
            waiting: list[tuple[int, Asked | None]] = []
            for seat in request.seats:
                player = players[seat]
                assert player is not None
                try:
                    got = player.ask_at_once(request, game.legal(seat), banks[seat], take)
                except BotFaulted as exc:
                    outcomes[seat] = exc.fault
                    continue
                if got is None or type(got) is Asked:
                    waiting.append((seat, got))  # type: ignore[arg-type]
                else:
                    outcomes[seat] = took(seat, *got)  # type: ignore[misc]
            if waiting:
                async with trio.open_nursery() as nursery:
                    for seat, asked in waiting:
                        nursery.start_soon(answer_into, seat, asked, outcomes)
            else:
                # Other tasks' turn, as a wait gives; not the time cap's: these
                # answers are taken, and a round it cuts off is one whose answers
                # were not (seat_lines rebuilds it so).  It comes at a later request.
                await trio.lowlevel.cancel_shielded_checkpoint()
            # Decisions first: a forfeit may complete the opportunity.
            for seat in sorted(outcomes):
                outcome = outcomes[seat]
                if isinstance(outcome, Decision):
                    game.decide(seat, outcome)
            for seat in sorted(outcomes):
                outcome = outcomes[seat]
                if isinstance(outcome, Fault):
                    forfeit(seat, outcome)
    if cap.cancelled_caught and not game.over:
        # Bots cut off mid-answer may still write it: restart them.
        assert game.request is not None
        for seat in game.request.seats:
            if players[seat] is not None:
                players[seat].mark_broken()  # type: ignore[union-attr]
        game.stop(TIME_CAP)
    distribute()

    result = game.result
    assert result is not None
    game_over = codec.encode_game_over(result.placements)
    waiting = [player for seat, player in enumerate(players)
               if player is not None and faults[seat] is None
               and not player.end_game_nowait(game_over)]
    if waiting:  # a pipe too full to take the last lines at once
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for player in waiting:
                    nursery.start_soon(player.end_game, game_over)

    referee = {
        "names": list(names),
        "faults": [f.to_json() if f else None for f in faults],
        "decision_ms": [_summary(t) for t in times],
        "limits": attrs.asdict(limits),
        "session": session,
        "answer_ms": _answer_times(game.history, recorded),
    }
    record = GameRecord.of(game, config, seed, referee=referee)
    return GameReport(record, names, tuple(faults), tuple(tuple(t) for t in times),
                      trio.current_time() - started)


# Each event's lines by player count, then by the event unbuilt (the engine's
# (class, field values)): a public event's one line, or a secret event's line
# as each seat sees it.  Kept across games, where most events come again
# (TurnStarted(5, 0), CoinsChanged(1, 1, 3, "income"), ...); bounded.
_LINES: dict[int, dict[tuple[type, tuple[Any, ...]], str | tuple[str, ...]]] = {}
_LINES_KEPT: Final = 20_000


def _event_lines(unbuilt: tuple[type, tuple[Any, ...]], players: int,
                 kept: dict[tuple[type, tuple[Any, ...]], str | tuple[str, ...]]
                 ) -> str | tuple[str, ...]:
    kind, values = unbuilt
    event = kind(*values)
    found: str | tuple[str, ...]
    if has_secret(event):
        found = tuple([codec.encode_event(view) for view in seat_views(event, range(players))])
    else:
        found = codec.encode_event(event)
    if len(kept) >= _LINES_KEPT:
        kept.clear()
    kept[unbuilt] = found
    return found


def answer_ms(seconds: float) -> float:
    """An answer's time as the record keeps it: milliseconds, to 0.01."""
    return round(seconds * 1000, 2)


def _answer_times(history: Sequence[tuple[int, object]],
                  recorded: Sequence[Sequence[float]]) -> list[float | None]:
    """Each entry of the history's time (None for a forfeit or a stop): a seat's
    answers (``answer_ms`` each) are taken in its order of answering."""
    taken = [iter(seat_times) for seat_times in recorded]
    return [next(taken[seat]) if seat >= 0 and not isinstance(d, str) else None
            for seat, d in history]


def _summary(times: list[float]) -> dict[str, object]:
    if not times:
        return {"n": 0}
    ordered = sorted(times)
    return {"n": len(ordered), "median": round(ordered[len(ordered) // 2] * 1000, 2),
            "max": round(ordered[-1] * 1000, 2),
            # the histogram adds up over games (arena/tournament/times.py)
            "hist": histogram([t * 1000 for t in ordered])}
