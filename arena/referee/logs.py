"""Reading a bot's stderr log (written by process.py) for a report."""

from __future__ import annotations

from pathlib import Path

ARENA_NOTE = "[arena:"  # the referee's own lines in a bot's log
GAME_MARK = "=="  # the line that starts each game in a bot's log: == game N, record R ==


def stderr_tail(log: Path, lines: int) -> list[str]:
    """The last ``lines`` non-blank lines the bot wrote to stderr, the referee's
    notes and game marks left out; [] if there is no log."""
    try:
        with open(log, "rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - (1 << 16)))  # only the end matters
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    kept = [line for line in text.splitlines()
            if line.strip() and not line.startswith((ARENA_NOTE, GAME_MARK))]
    return kept[-lines:] if lines > 0 else []
