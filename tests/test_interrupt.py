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
    GAMES,
    complete_lines,
    copy_bots,
    processes_running,
    wait_until,
)


def test_ctrl_c_stops_cleanly_and_the_rerun_finishes(tmp_path: Path) -> None:
    bot_dir = tmp_path / "bots"
    two = copy_bots(bot_dir, "alpha", "beta")
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "arena", "run", *two, "--games", "200", "--seed", "3",
            "--out", str(out)]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
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
    again = subprocess.run(argv, cwd=tmp_path, capture_output=True, timeout=120)
    assert again.returncode == 0, again.stderr.decode()
    assert complete_lines(out / GAMES) == 200
