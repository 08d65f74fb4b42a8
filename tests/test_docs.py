"""The documents stand on their own: every relative link resolves inside the
repository, and no file points to a place a user's clone does not have."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The spec the project was written from lives outside it; a clone has none of it.
# Spelled in parts, so that this file does not name those paths itself.
_SHARED = "sha" + "red"
OUTSIDE = (f"../{_SHARED}", f"/work/{_SHARED}", f"{_SHARED}/RULES.md", f"{_SHARED}/conformance")
# Results record the machine that made them (bot paths in logs); the rest must not.
MACHINE = "/work/"

_FENCE = re.compile(r"^(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def tracked_files() -> list[Path]:
    """The repository's files (git's list; every file but hidden ones without git)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                                check=True).stdout.decode().split("\0")
        return [ROOT / name for name in listed if name and (ROOT / name).is_file()]
    except (OSError, subprocess.CalledProcessError):
        return [path for path in ROOT.rglob("*") if path.is_file()
                and not any(part.startswith(".") for part in path.relative_to(ROOT).parts)]


def markdown_files() -> list[Path]:
    return [path for path in tracked_files() if path.suffix == ".md"]


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, with inline code removed."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(_CODE_SPAN.sub("", line))
    return lines


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lowercase, punctuation dropped, spaces to -."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    found: list[str] = []
    seen: dict[str, int] = {}  # a repeated heading gets -1, -2, ...
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line.strip()):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            slug = github_slug(match.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.append(f"{slug}-{count}" if count else slug)
    return frozenset(found)


def links(path: Path) -> list[str]:
    targets = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        targets += _LINK.findall(line)
        reference = _REFERENCE.match(line)
        if reference:
            targets.append(reference.group(1))
    return targets


def broken_link(source: Path, target: str) -> str | None:
    """Why ``target``, a link in ``source``, leads nowhere; None if it resolves."""
    if re.match(r"[a-z][a-z0-9+.-]*:", target, flags=re.I):
        return None  # https:, mailto: ...: not a file of the repository
    file_part, _, anchor = target.partition("#")
    path = (source.parent / file_part).resolve() if file_part else source
    if not path.is_relative_to(ROOT):
        return "it leads outside the repository"
    if not path.exists():
        return f"{path.relative_to(ROOT)} does not exist"
    if anchor and path.suffix == ".md" and anchor not in anchors(path):
        return f"{path.relative_to(ROOT)} has no heading with the anchor #{anchor}"
    return None


@pytest.mark.parametrize("doc", markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(doc: Path) -> None:
    broken = [f"{target}: {why}" for target in links(doc)
              if (why := broken_link(doc, target)) is not None]
    assert broken == []


def test_the_link_checker_finds_what_is_broken(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "a.md").write_text(
        "# Title — version 1\n\n## 2. Some `code`, here\n\n## Twice\n\n## Twice\n\n"
        "```\n[not a link](nowhere.md)\n```\n"
        "[ok](#title--version-1) [ok](#2-some-code-here) [ok](#twice-1) [ok](b.md#b)\n"
        "[bad](#twice-2) [bad](c.md) [bad](b.md#nope) [bad](../outside.md) `[no](x.md)`\n"
        "[web](https://example.com/x.md)\n")
    (tmp_path / "b.md").write_text("# B\n")
    doc = tmp_path / "a.md"
    found = {target: broken_link(doc, target) for target in links(doc)}
    assert [t for t, why in found.items() if why is None] == [
        "#title--version-1", "#2-some-code-here", "#twice-1", "b.md#b",
        "https://example.com/x.md"]
    assert [t for t, why in found.items() if why is not None] == [
        "#twice-2", "c.md", "b.md#nope", "../outside.md"]


def test_the_main_documents_are_linked_from_the_readme() -> None:
    readme = links(ROOT / "README.md")
    assert "RULES.md" in readme and "protocol.md" in readme
    assert "RULES.md" in links(ROOT / "protocol.md")


def test_no_file_points_outside_the_repository() -> None:
    offenders = []
    for path in tracked_files():
        if path == Path(__file__).resolve():
            continue  # it names what it looks for
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary: records, compiled files
        name = path.relative_to(ROOT).as_posix()
        for needle in OUTSIDE:
            if needle in text:
                offenders.append(f"{name}: {needle}")
        if MACHINE in text and not name.startswith("results/"):
            offenders.append(f"{name}: {MACHINE}")
    assert offenders == []


def test_the_table_of_rules_md_is_the_engines() -> None:
    from arena.engine.rules import ACTIONS, ANYONE, EXCHANGE_DRAW, NOBODY, TARGET

    text = (ROOT / "RULES.md").read_text(encoding="utf-8")
    table = text[text.index("| action | cost |"):].split("\n\n")[0].splitlines()[2:]
    rows = {}
    for row in table:
        action, cost, claimed, blockers, challenged = (c.strip() for c in row.strip("|").split("|"))
        name = action.split(":")[0].split(" (")[0].lower().replace(" ", "_")
        rows[name] = (int(cost), claimed, blockers, challenged)
    who = {NOBODY: "nobody", TARGET: "the target", ANYONE: "any other player"}
    for variant, rules in ACTIONS.items():
        for name, rule in rules.items():
            cost, claimed, blockers, challenged = rows[name]
            assert cost == rule.cost, name
            if rule.claim is None:
                assert claimed == "none", name
            else:
                assert rule.claim.capitalize() in claimed, name
            assert blockers.startswith(who[rule.blocked_by]), name
            assert all(card.capitalize() in blockers for card in rule.block_claims), name
            assert challenged.startswith("yes" if rule.claim else "no"), name
        assert f"{variant.capitalize()} (draws {EXCHANGE_DRAW[variant]})" in rows["exchange"][1]
    assert set(rows) == set(ACTIONS["inquisitor"])
