"""Ctrl-C: `arena run` stops with one message, keeps its games, leaves no bot.

Whatever trio version is installed (newer ones wrap a KeyboardInterrupt that
escapes a nursery in an exception group), the user sees one line, no
traceback, exit status 130, and a rerun goes on where it stopped.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from test_tournament import (
    DET_BOT,
    GAMES,
    complete_lines,
    copy_bots,
    processes_running,
    wait_until,
)

# Once 5 games are stored, the gated bot answers nothing until the file ``go``
# exists (the test makes it before the rerun): the run cannot end before its
# Ctrl-C, however late a loaded machine lets the test look (200 games take 2 s,
# and once they were all played first). A wait at the gate ends only in a
# timeout (11 s: the default 1 s and 10 s bank), and the next game waits again.
GATE = """
import time


def gate(games={games!r}, go={go!r}):
    while not os.path.exists(go):
        try:
            with open(games, "rb") as f:
                if f.read().count(b"\\n") < 5:
                    return
        except FileNotFoundError:
            return
        time.sleep(0.01)
"""


def gated_bot(folder: Path, name: str, games: Path, go: Path) -> str:
    """A copy of the deterministic test bot that stops at the gate before each answer."""
    folder.mkdir(parents=True, exist_ok=True)
    text = DET_BOT.read_text()
    request = '    elif fields[0] == "request":\n'
    assert text.count(request) == 1 and text.count("import sys\n") == 1
    text = text.replace("import sys\n", "import sys\n" + GATE.format(games=str(games),
                                                                     go=str(go)))
    text = text.replace(request, request + "        gate()\n")
    path = folder / f"{name}.py"
    path.write_text(text)
    return str(path)


def test_ctrl_c_stops_cleanly_and_the_rerun_finishes(tmp_path: Path) -> None:
    bot_dir = tmp_path / "bots"
    out = tmp_path / "out"
    go = tmp_path / "go"
    two = [gated_bot(bot_dir, "alpha", out / GAMES, go), *copy_bots(bot_dir, "beta")]
    argv = [sys.executable, "-m", "arena", "run", *two, "--games", "200", "--seed", "3",
            "--out", str(out)]
    # As in a terminal: SIGINT not ignored, even when the suite runs as a background
    # job of a script (which ignores it, and so would arena, which inherits that).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(argv, cwd=tmp_path, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        wait_until(lambda: complete_lines(out / GAMES) >= 5, "5 games played", proc)
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = stderr.decode()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Error" not in err, err
    assert "interrupted" in err and "--resume" in err
    played = complete_lines(out / GAMES)
    assert 5 <= played < 200
    wait_until(lambda: not processes_running(str(bot_dir)), "the bots to be gone")
    go.touch()
    again = subprocess.run(argv, cwd=tmp_path, capture_output=True, timeout=120)
    assert again.returncode == 0, again.stderr.decode()
    assert complete_lines(out / GAMES) == 200
