"""The protocol lines one seat exchanged in a recorded game, rebuilt from its record.

The referee (arena/referee/match.py) sends each seat its ``game`` and
``seed`` lines, every event as ``observer.view`` shows it to that seat, a
request whenever the engine waits for the seat, and at the end the
``gameover`` line.  Replaying
the record's decisions through the engine, with the same encoders and the
same observer, gives the same lines again; the referee's part of the record
adds what the engine does not know: the seat's game number and first request
id in its process, the time limits (for the bank in each request), each
answer's time, and the faults.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

from arena.engine.observer import view
from arena.engine.record import GameRecord, RecordError, apply_decision
from arena.protocol import codec

RECEIVED: Final = "<"  # a line the referee wrote to the bot
SENT: Final = ">"  # a line the bot wrote
NOTE: Final = "!"  # the referee's note: a fault, a cut-off
_FORFEIT: Final = "forfeit:"
_NEEDS: Final = ("names", "faults", "limits", "session", "answer_ms")


@attrs.frozen
class SeatLine:
    """One line of a seat's session: its direction, text, and an answer's time."""

    direction: str  # RECEIVED, SENT or NOTE
    text: str
    ms: float | None = None  # a SENT answer's time, from its request

    def show(self) -> str:
        time = f"  ({self.ms:g} ms)" if self.ms is not None else ""
        return f"{self.direction} {self.text}{time}"


def seat_lines(record: GameRecord, seat: int) -> list[SeatLine]:
    """Every line ``seat`` received and sent in the game, in order.

    Raises ``RecordError`` for a record without the referee's part (made by
    hand, or by an arena older than answer times in records).
    """
    referee: dict[str, Any] = record.referee
    missing = [key for key in _NEEDS if key not in referee]
    if missing or record.config is None:
        raise RecordError("the record has no referee's part with answer times (it was made "
                          "by hand, or by an older arena); the protocol lines can be rebuilt "
                          "only from a record of a game this arena refereed")
    try:
        limits = codec.Limits.from_json(referee["limits"])
        names = [str(name) for name in referee["names"]]
        faults: list[dict[str, Any] | None] = list(referee["faults"])
        sessions: list[Any] = list(referee["session"])
        times: list[float | None] = list(referee["answer_ms"])
        fault = faults[seat]
        session = sessions[seat]
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise RecordError(f"the record's referee part is damaged ({exc})") from None
    if len(times) != len(record.decisions):
        raise RecordError("the record's answer times do not match its decisions")
    if session is None:
        return [_fault_note(fault or {"kind": "crash", "detail": "it was not started"},
                            "never started for this game: ")]
    game_number, next_id = int(session[0]), int(session[1])

    game = record.new_game()
    assert record.seed is not None
    lines = [SeatLine(RECEIVED, codec.encode_game_start(
        game_number, seat, [codec.wire_name(name) for name in names], record.config.variant)),
        SeatLine(RECEIVED, codec.encode_seed(codec.seat_seed(record.seed, seat)))]
    decisions = record.decisions
    i = 0
    # Seats whose bot could not start forfeit before anything is asked.
    while (i < len(decisions) and decisions[i][1].startswith(_FORFEIT)
           and sessions[decisions[i][0]] is None):
        game.forfeit(decisions[i][0], decisions[i][1][len(_FORFEIT):])
        i += 1
    sent = 0
    flushed = 0  # lines[:flushed] reached the bot: the referee sends its queue with a request
    bank = limits.bank_ms
    done = False  # faulted, or cut off: the referee sends it nothing more

    def distribute() -> None:
        nonlocal sent
        if not done:
            lines.extend(SeatLine(RECEIVED, codec.encode_event(view(event, seat)))
                         for event in game.events[sent:])
        sent = len(game.events)

    while not game.over:
        distribute()
        request = game.request
        assert request is not None
        pending = set(request.seats)
        asked = seat in pending and not done
        request_line = None
        if asked:
            request_line = codec.encode_request(next_id, request, game.legal(seat), bank)
            next_id += 1
        answered = False
        first = i
        while i < len(decisions) and decisions[i][0] in pending:
            who, token = decisions[i]
            pending.discard(who)
            if who == seat and asked:
                answered = True
                if token.startswith(_FORFEIT):
                    if not _request_sent(fault):
                        del lines[flushed:]  # still queued for the request it never got
                    lines.extend(_forfeit_lines(request_line, fault))
                    done = True
                else:
                    ms = times[i]
                    lines.append(SeatLine(RECEIVED, request_line))
                    lines.append(SeatLine(SENT, codec.encode_answer(next_id - 1, token), ms))
                    flushed = len(lines)
                    if ms is not None:
                        bank -= max(0, round(ms) - limits.decision_ms)
            _apply(game, who, token, i)
            i += 1
        if i == first and i < len(decisions) and decisions[i][0] == -1:
            # The game's time cap cut this round off: no answer of it was taken.
            if asked and not answered:
                lines.append(SeatLine(RECEIVED, request_line))
                lines.append(SeatLine(NOTE, "cut off: the game reached its time cap before "
                                            "the answer was taken; the process is ended"))
                done = True
            _apply(game, -1, decisions[i][1], i)
            i += 1
            break
        if i == first:
            raise RecordError(f"decision {i}: not an answer to the request of seats "
                              f"{', '.join(map(str, request.seats))}")
        if asked and not answered:
            # Its fault came as another seat's answer ended the game: not recorded.
            lines.append(SeatLine(RECEIVED, request_line))
            lines.append(SeatLine(NOTE, "the game ended before its answer was taken"))
            done = True
    distribute()
    if not done and fault is None:
        assert game.result is not None
        lines.append(SeatLine(RECEIVED, codec.encode_game_over(game.result.placements)))
    return lines


def _apply(game: Any, seat: int, token: str, index: int) -> None:
    try:
        apply_decision(game, seat, token)
    except Exception as exc:  # the record was checked by replay() first; still, one line
        raise RecordError(f"decision {index}: seat {seat} {token}: {exc}") from None


def _forfeit_lines(request_line: str | None, fault: dict[str, Any] | None) -> list[SeatLine]:
    fault = fault or {"kind": "fault", "detail": "not recorded"}
    lines = []
    if _request_sent(fault) and request_line is not None:
        lines.append(SeatLine(RECEIVED, request_line))
    if fault.get("line") is not None:
        ms = None if fault.get("elapsed") is None else round(fault["elapsed"] * 1000, 2)
        lines.append(SeatLine(SENT, str(fault["line"]), ms))
    lines.append(_fault_note(fault))
    return lines


def _request_sent(fault: dict[str, Any] | None) -> bool:
    # A fault without a time came before its request was sent (a line written
    # unasked, or a process found dead): the request, and the lines queued to go
    # with it, never reached the bot.
    return fault is None or fault.get("elapsed") is not None


def _fault_note(fault: dict[str, Any], prefix: str = "") -> SeatLine:
    after = (f" after {round(fault['elapsed'] * 1000, 2):g} ms"
             if fault.get("elapsed") is not None else "")
    process = f"; the process {fault['exit']}" if fault.get("exit") else ""
    return SeatLine(NOTE, f"{prefix}fault {fault.get('kind')}{after}: {fault.get('detail')}"
                          f"{process}; the seat forfeits")
