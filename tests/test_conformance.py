"""Conformance scenarios (arena/conformance/scenarios/README.md) through the runner.

Every scenario shipped with arena, the contest's public ones and the project's
own, is one test.  The runner itself is tested too: unreadable files give one line and
do not stop the others, and ``arena conformance`` reports and exits as
documented.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from arena.cli import main
from arena.conformance.runner import SHIPPED, load_scenario, run_paths, run_scenario

PUBLIC = SHIPPED / "public"
OWN = SHIPPED


def _cases() -> list[Any]:
    return [pytest.param(path, id=path.relative_to(SHIPPED).with_suffix("").as_posix())
            for path in sorted(SHIPPED.rglob("*.json"))]


def test_the_public_scenarios_ship_with_arena() -> None:
    assert len(list(PUBLIC.glob("*.json"))) >= 16
    # Installed, not only in a clone: every scenario is package data.
    pyproject = tomllib.loads((SHIPPED.parents[2] / "pyproject.toml").read_text())
    globs = pyproject["tool"]["setuptools"]["package-data"]["arena.conformance"]
    for path in SHIPPED.rglob("*.json"):
        relative = PurePosixPath(path.relative_to(SHIPPED.parent).as_posix())
        assert any(len(relative.parts) == len(PurePosixPath(glob).parts)
                   and relative.match(glob) for glob in globs), relative


def test_the_example_of_the_format_passes(tmp_path: Path) -> None:
    text = (SHIPPED / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```json\n(.*?)^```", text, flags=re.S | re.M)
    assert len(blocks) == 1
    outcomes, problems = run_paths([str(_write(tmp_path, "example.json", blocks[0]))])
    assert problems == [] and [o.passed for o in outcomes] == [True]


@pytest.mark.parametrize("path", _cases())
def test_scenario(path: Path) -> None:
    outcome = run_scenario(load_scenario(path))
    assert outcome.passed, f"{path.name}: {outcome.detail}"


def test_own_scenarios_are_many_named_and_snake_case() -> None:
    paths = sorted(OWN.glob("*.json"))  # the public ones are in public/
    assert len(paths) >= 36
    names = set()
    for path in paths:
        assert re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", path.stem), path.name
        data = json.loads(path.read_text(encoding="utf-8"))
        assert isinstance(data.get("name"), str) and data["name"].strip(), path.name
        names.add(data["name"])
    assert len(names) == len(paths), "two scenarios share a name"


# -- the runner itself ---------------------------------------------------------------

_HANDS = [["duke", "captain"], ["assassin", "contessa"], ["ambassador", "duke"]]
_COURT = [
    "captain",
    "assassin",
    "contessa",
    "ambassador",
    "duke",
    "captain",
    "assassin",
    "contessa",
    "ambassador",
]


def _scenario(name: str, moves: list[dict[str, Any]], expect: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "setup": {"players": 3, "hands": _HANDS, "court": _COURT, "first": 0},
        "moves": moves,
        "expect": expect,
    }


def _passing(name: str = "income passes") -> dict[str, Any]:
    return _scenario(name, [{"player": 0, "action": "income"}], {"coins": [3, 2, 2], "turn": 1})


def _failing(name: str = "income wrongly expected to give two") -> dict[str, Any]:
    return _scenario(name, [{"player": 0, "action": "income"}], {"coins": [4, 2, 2]})


def _write(folder: Path, name: str, content: Any) -> Path:
    path = folder / name
    text = content if isinstance(content, str) else json.dumps(content)
    path.write_text(text, encoding="utf-8")
    return path


def test_bad_files_give_one_line_each_and_the_others_still_run(tmp_path: Path) -> None:
    _write(tmp_path, "a_not_json.json", "{ this is not json")
    no_moves = _passing("no moves")
    del no_moves["moves"]
    _write(tmp_path, "b_no_moves.json", no_moves)
    unknown_card = _scenario(
        "a block claiming an unknown card",
        [{"player": 0, "action": "foreign_aid"}, {"player": 1, "block": "joker"}],
        {"coins": [2, 2, 2]},
    )
    _write(tmp_path, "c_unknown_card.json", unknown_card)
    _write(tmp_path, "d_good.json", _passing("the good one"))

    outcomes, problems = run_paths([str(tmp_path)])

    assert len(problems) == 2
    not_json, missing = problems
    assert "a_not_json.json" in not_json and "not JSON" in not_json
    assert "b_no_moves.json" in missing and "moves" in missing
    for line in problems:
        assert "\n" not in line

    by_name = {outcome.scenario: outcome for outcome in outcomes}
    assert set(by_name) == {"a block claiming an unknown card", "the good one"}
    assert by_name["the good one"].passed
    bad = by_name["a block claiming an unknown card"]
    assert not bad.passed
    assert "joker" in bad.detail and '"move": 1' in bad.detail
    assert "\n" not in bad.line()


def test_an_expected_move_error_is_a_pass(tmp_path: Path) -> None:
    scenario = _scenario(
        "unknown card expected as an error",
        [{"player": 0, "action": "foreign_aid"}, {"player": 1, "block": "joker"}],
        {"error": {"move": 1}},
    )
    outcomes, problems = run_paths([str(_write(tmp_path, "s.json", scenario))])
    assert problems == []
    assert [o.passed for o in outcomes] == [True]


def test_a_wrong_expected_error_index_fails(tmp_path: Path) -> None:
    scenario = _scenario(
        "error at the wrong move", [{"player": 1, "action": "income"}], {"error": {"move": 1}}
    )
    outcomes, _ = run_paths([str(_write(tmp_path, "s.json", scenario))])
    assert not outcomes[0].passed
    assert '"move": 0' in outcomes[0].detail


def test_cli_exit_status_0_when_all_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, "one.json", _passing("first"))
    _write(tmp_path, "two.json", _passing("second"))
    status = main(["conformance", str(tmp_path)])
    lines = capsys.readouterr().out.strip().splitlines()
    assert status == 0
    assert lines == ["PASS first", "PASS second", "2 passed, 0 failed"]


def test_cli_exit_status_1_when_one_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _write(tmp_path, "good.json", _passing("good"))
    bad = _write(tmp_path, "bad.json", _failing("bad"))
    status = main(["conformance", str(good), str(bad)])
    lines = capsys.readouterr().out.strip().splitlines()
    assert status == 1
    assert lines[0] == "PASS good"
    assert lines[1].startswith("FAIL bad: coins expected [4, 2, 2] got [3, 2, 2]")
    assert lines[-1] == "1 passed, 1 failed"


def test_cli_counts_an_unreadable_file_as_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, "good.json", _passing("good"))
    _write(tmp_path, "broken.json", "[1, 2")
    status = main(["conformance", str(tmp_path)])
    lines = capsys.readouterr().out.strip().splitlines()
    assert status == 1
    assert "PASS good" in lines
    assert any(line.startswith("ERROR ") and "broken.json" in line for line in lines)
    assert lines[-1] == "1 passed, 1 failed"


def test_cli_missing_path_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["conformance", str(tmp_path / "nowhere")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and "nowhere" in err[0]


def test_cli_without_a_path_runs_the_shipped_suite(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # from anywhere, not only from a clone
    status = main(["conformance"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert status == 0
    shipped = len(list(SHIPPED.rglob("*.json")))
    assert lines[-1] == f"{shipped} passed, 0 failed"
    assert any("Contessa" in line for line in lines)  # a public scenario's name


def test_a_malformed_later_move_does_not_hide_an_illegal_earlier_one(tmp_path: Path) -> None:
    # Move 0 is illegal (a Coup with 2 coins), move 1 malformed: the error is move 0's.
    scenario = _scenario(
        "an illegal move before a malformed one",
        [{"player": 0, "action": "coup", "target": 1}, {"player": 1, "challenge": "yes"}],
        {"error": {"move": 0}},
    )
    outcomes, problems = run_paths([str(_write(tmp_path, "s.json", scenario))])
    assert problems == []
    assert outcomes[0].passed, outcomes[0].detail
    scenario["expect"] = {"coins": [2, 2, 2]}
    outcomes, _ = run_paths([str(_write(tmp_path, "s.json", scenario))])
    assert '"move": 0' in outcomes[0].detail and "coup" in outcomes[0].detail.lower()

