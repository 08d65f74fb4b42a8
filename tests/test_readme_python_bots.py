"""Every snippet of README's "Write a bot in Python, train it, submit it" runs.

Blocks whose first line is ``# file: NAME`` are written to NAME in a scratch
folder; the other Python blocks run there as scripts, and the shell blocks
run there command by command (``arena`` and ``python`` as this Python), in
the README's order.  ``arena check`` must give its OK verdict.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pettingzoo", reason="needs the rl extra: pip install 'arena[rl]'")

ROOT = Path(__file__).resolve().parents[1]
TITLE = "## Write a bot in Python, train it, submit it"


def section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(TITLE)
    end = text.index("\n## ", start + len(TITLE))
    return text[start:end]


def blocks() -> list[tuple[str, str]]:
    return re.findall(r"^```(python|sh)\n(.*?)^```", section(), flags=re.S | re.M)


def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    if words[0] == "arena":
        return [sys.executable, "-m", "arena", *words[1:]]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    raise AssertionError(f"a README command this test cannot run: {command!r}")


def test_the_python_bot_section_has_the_snippets_it_promises() -> None:
    found = blocks()
    files = [code.splitlines()[0] for kind, code in found if code.startswith("# file:")]
    assert {"# file: taxman.py", "# file: train.py", "# file: linear_bot.py"} <= set(files)
    assert any("agent_iter" in code for kind, code in found if kind == "python")
    checks = [code for kind, code in found if kind == "sh" and "arena check" in code]
    assert len(checks) == 2


def test_every_snippet_of_the_python_bot_section_runs(tmp_path: Path) -> None:
    found = blocks()
    for kind, code in found:
        first = code.splitlines()[0]
        if kind == "python" and first.startswith("# file: "):
            (tmp_path / first[len("# file: "):].strip()).write_text(code)
    verdicts = 0
    for number, (kind, code) in enumerate(found):
        if kind == "python" and code.startswith("# file: "):
            continue
        if kind == "python":
            script = tmp_path / f"snippet{number}.py"
            script.write_text(code)
            commands = [[sys.executable, str(script)]]
        else:
            commands = [_argv(part) for line in code.splitlines() if line.strip()
                        for part in line.split("&&")]
        for argv in commands:
            done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True,
                                  timeout=600)
            assert done.returncode == 0, f"{argv}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
            if "check" in argv:
                assert "Verdict: OK" in done.stdout, done.stdout[-3000:]
                verdicts += 1
    assert verdicts == 2
    assert (tmp_path / "weights.npy").exists()
