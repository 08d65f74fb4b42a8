"""arena.sdk: the protocol loop, and the seat's view it keeps from the events.

The view is checked against the engine's own state in whole random games,
the protocol loop with scripted lines (seed, odd lines, a failing bot), and
the example SDK bot as a process, through `arena check` too.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from test_example_bots_offline import (
    Ask,
    BotCommand,
    Driver,
    check_answers,
    full_session,
    play,
)
from test_sandbox import bwrap_works  # noqa: F401 - a fixture

from arena.engine import events as ev
from arena.engine.decisions import KEEP, Decision
from arena.engine.game import Game
from arena.engine.observer import view
from arena.protocol.codec import (
    Limits,
    decode_hello,
    encode_event,
    encode_game_over,
    encode_game_start,
    encode_handshake,
    encode_request,
    encode_seed,
)
from arena.sdk import Bot, Request, Session, State, run

ROOT = Path(__file__).resolve().parents[1]
SDK_BOT = ROOT / "example_bots" / "sdk_bot.py"


class Recorder(Bot):
    """Answers at random from its rng, and keeps what it was shown."""

    name = "recorder"

    def __init__(self, check=None) -> None:
        self.check = check
        self.starts: list[tuple[int, int | None]] = []
        self.events: list[ev.Event] = []
        self.overs: list[tuple[int, ...] | None] = []

    def on_game_start(self, state: State) -> None:
        self.starts.append((state.game, state.seed))

    def on_event(self, state: State, event: ev.Event) -> None:
        self.events.append(event)

    def decide(self, state: State, request: Request) -> Decision:
        if self.check is not None:
            self.check(state, request)
        return state.rng.choice(request.legal)

    def on_game_over(self, state: State) -> None:
        self.overs.append(state.placements)


# ------------------------------------------------ the view follows the game


def _truth_check(game: Game, seat: int):
    """A check, at each request, of the seat's State against the engine's state."""

    def check(state: State, request: Request) -> None:
        assert state.seat == seat and state.players == game.players
        hand = list(game.hands[seat])
        if request.kind == KEEP:
            hand += game._drawn  # the drawn cards are in the hand until returned
        assert sorted(state.hand) == sorted(hand)
        assert state.coins == tuple(game.coins)
        assert state.influence == tuple(len(h) for h in game.hands)
        assert state.face_up == tuple(tuple(r) for r in game.revealed)
        assert state.alive == tuple(game.alive)
        assert state.court_size == len(game.court)
        assert state.turn == game.turn
        for other, card in enumerate(state.known):
            if card is not None:
                assert card in game.hands[other]
        assert request.legal == game.legal(seat)
        if request.actor is not None and state.chain is not None:
            assert state.chain.actor == request.actor
        assert state.history[-1] is not None

    return check


@pytest.mark.parametrize("players", [2, 3, 4, 6, 8])
@pytest.mark.parametrize("variant", ["ambassador", "inquisitor"])
def test_the_view_matches_the_engine_at_every_request(players: int, variant: str) -> None:
    for seed in range(4):
        game = Game.new(players, seed, variant=variant)
        names = [f"p{seat}" for seat in range(players)]
        sessions = []
        for seat in range(players):
            session = Session(Recorder(_truth_check(game, seat)))
            session.feed(encode_game_start(1, seat, names, variant))
            session.feed(encode_seed(seed * 100 + seat))
            sessions.append(session)
        sent = 0
        ids = [0] * players
        while True:
            for event in game.events[sent:]:
                for seat, session in enumerate(sessions):
                    session.feed(encode_event(view(event, seat)))
            sent = len(game.events)
            if game.over:
                break
            assert game.request is not None
            answers = {}
            for seat in game.request.seats:
                ids[seat] += 1
                legal = game.legal(seat)
                reply = sessions[seat].feed(encode_request(ids[seat], game.request, legal, 5000))
                assert reply is not None
                id_text, token = reply.split()
                assert id_text == str(ids[seat])
                answers[seat] = next(d for d in legal if d.token == token)
            for seat, decision in answers.items():
                game.decide(seat, decision)
        for seat, session in enumerate(sessions):
            state = session.state
            assert state is not None and state.placements == game.result.placements
            session.feed(encode_game_over(game.result.placements))
            assert session.state is None
            assert session.bot.overs == [game.result.placements]
            assert session.bot.starts == [(1, seed * 100 + seat)]


# ---------------------------------------------------------- the protocol loop


def _lines(game_number: int = 1, seed: int | None = 42) -> list[str]:
    lines = [encode_game_start(game_number, 0, ["me", "you"], "ambassador")]
    if seed is not None:
        lines.append(encode_seed(seed))
    lines += [
        encode_event(ev.GameStarted(2, "ambassador", False, 0, (2, 2), 11)),
        encode_event(ev.CardsDealt(0, ("duke", "captain"))),
        encode_event(ev.CardsDealt(1, None)),
        encode_event(ev.TurnStarted(1, 0)),
    ]
    return lines


def test_the_seed_line_seeds_the_games_rng() -> None:
    draws: list[float] = []

    class Draw(Recorder):
        def decide(self, state: State, request: Request) -> Decision:
            draws.append(state.rng.random())
            return request.legal[0]

    session = Session(Draw())
    assert session.feed(encode_handshake(Limits())) == "hello recorder"
    for number, seed in ((1, 42), (2, 2**64 - 1), (3, 42)):
        for line in _lines(number, seed):
            assert session.feed(line) is None
        assert session.feed("request 1 action bank_ms=10 : income tax") == "1 income"
        session.feed(encode_game_over((1, 2)))
    assert draws[0] == random.Random(42).random() == draws[2]
    assert draws[1] == random.Random(2**64 - 1).random()
    assert session.bot.starts == [(1, 42), (2, 2**64 - 1), (3, 42)]


def test_a_game_without_a_seed_line_and_a_bad_seed_line() -> None:
    logged: list[str] = []
    session = Session(Recorder(), log=logged.append)
    for line in _lines(seed=None):
        session.feed(line)
    assert session.state is not None and session.state.seed is None
    session.feed(encode_game_over((1, 2)))
    session.feed(encode_game_start(2, 0, ["me", "you"], "ambassador"))
    session.feed(f"seed {2**64}")  # too big: ignored, and said
    assert session.state.seed is None
    assert any("seed" in line for line in logged)


def test_odd_lines_are_ignored_and_every_request_answered() -> None:
    logged: list[str] = []
    session = Session(Recorder(), log=logged.append)
    # A request before any game gets the safe answer.
    assert session.feed("request 1 action bank_ms=10 : steal:1 income") == "1 income"
    for line in _lines():
        session.feed(line)
    for odd in ("event frobnicate 1 2", "event lost 7 duke", "event coins 0 x 1 tax",
                "note hello", "", "   "):
        assert session.feed(odd) is None
    state = session.state
    assert state.coins == (2, 2) and state.hand == ("duke", "captain")
    assert state.face_up == ((), ()) and state.influence == (2, 2)
    assert session.feed("request 2 riddle bank_ms=10 : pass") == "2 pass"
    assert session.feed("quit") is None and session.done


def test_requests_of_the_same_shape_keep_their_own_context() -> None:
    seen: list[tuple[int, str, int, int]] = []

    class Context(Bot):
        name = "context"

        def decide(self, state: State, request: Request) -> Decision:
            seen.append((request.id, request.context["colour"], request.bank_ms,
                         request.claimant))
            return request.legal[-1]

    session = Session(Context())
    for line in _lines():
        session.feed(line)
    for number, colour in enumerate(("red", "blue", "red"), 1):
        line = (f"request {number} challenge colour={colour} bank_ms={100 * number} claimant=1 "
                f"character=duke : pass challenge")
        assert session.feed(line) == f"{number} challenge"
    assert seen == [(1, "red", 100, 1), (2, "blue", 200, 1), (3, "red", 300, 1)]


def test_a_failing_or_cheating_decide_gets_a_safe_answer_and_a_log_line() -> None:
    class Broken(Bot):
        name = "broken"

        def decide(self, state: State, request: Request) -> Decision:
            if request.id == 1:
                raise ZeroDivisionError("oops")
            return Decision("coup", target=1)  # well formed, but not listed

    logged: list[str] = []
    session = Session(Broken(), log=logged.append)
    for line in _lines():
        session.feed(line)
    assert session.feed("request 1 action bank_ms=10 : tax income") == "1 income"
    assert "ZeroDivisionError" in logged[-1]
    assert session.feed("request 2 challenge bank_ms=10 : pass challenge") == "2 pass"
    assert "not one of request 2's legal answers" in logged[-1]


def test_an_equal_decision_built_by_the_bot_is_answered() -> None:
    class Builder(Bot):
        name = "builder"

        def decide(self, state: State, request: Request) -> Decision:
            return Decision.parse("keep:duke,captain")

    session = Session(Builder())
    for line in _lines():
        session.feed(line)
    request = "request 3 keep bank_ms=10 : keep:captain,contessa keep:captain,duke"
    assert session.feed(request) == "3 keep:captain,duke"


def test_a_bad_name_is_refused_at_once() -> None:
    class Nameless(Bot):
        name = "no spaces allowed"

    with pytest.raises(ValueError, match="bot name"):
        Session(Nameless())


def test_run_reads_until_quit_and_flushes_each_line() -> None:
    class Sink:
        def __init__(self) -> None:
            self.lines: list[str] = []
            self.flushed = 0

        def write(self, text: str) -> None:
            self.lines.append(text)

        def flush(self) -> None:
            self.flushed += 1

    sink = Sink()
    lines = [encode_handshake(Limits()) + "\n", *(_lines()), "request 1 action bank_ms=1 : income",
             "quit", "request 2 action bank_ms=1 : income"]
    run(Recorder, lines=lines, out=sink)  # type: ignore[arg-type]
    assert sink.lines == ["hello recorder\n", "1 income\n"]
    assert sink.flushed == 2


def test_the_sdk_imports_neither_numpy_nor_trio() -> None:
    code = ("import sys, arena.sdk, arena.sdk.encoding, arena.sdk.policy; "
            "print(sorted(m for m in ('numpy', 'trio') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------ the example SDK bot


def test_the_example_sdk_bot_plays_a_full_session(tmp_path: Path) -> None:
    session = full_session()
    driver = Driver(BotCommand((sys.executable, "-u", "-P", str(SDK_BOT)), tmp_path),
                    tmp_path / "stderr.txt")
    try:
        driver.send(session.items[0])
        assert decode_hello(driver.read_line()) == "sdk-bot"
        exchanges = play(driver, session.items[1:])
        assert len(exchanges) == sum(isinstance(item, Ask) for item in session.items)
        chosen = check_answers(exchanges)
        code, rest = driver.finish()
    finally:
        driver.close()
    assert (code, rest) == (0, b"")
    assert chosen[0].token == "tax"  # it holds a Duke
    assert b"sdk:" not in (tmp_path / "stderr.txt").read_bytes()  # no fallback was needed


def test_the_example_sdk_bot_is_short() -> None:
    code = [line for line in SDK_BOT.read_text().split('"""', 2)[2].splitlines() if line.strip()]
    assert len(code) <= 30


def test_arena_check_passes_the_example_sdk_bot(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "check", str(SDK_BOT), "--games", "4", "--seed", "5"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Verdict: OK" in done.stdout


@pytest.mark.parametrize("bot", ["sdk_bot.py", "honest.py"])
def test_an_sdk_bot_imports_the_sdk_in_the_sandbox(bot: str, tmp_path: Path,
                                                    bwrap_works: None) -> None:  # noqa: F811
    """arena's own package is shown to a sandboxed .py bot, wherever arena is installed
    (an editable install leaves it in the source checkout)."""
    done = subprocess.run(
        [sys.executable, "-m", "arena", "check", str(ROOT / "example_bots" / bot), "--sandbox",
         "--games", "2", "--seed", "3"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Verdict: OK" in done.stdout
