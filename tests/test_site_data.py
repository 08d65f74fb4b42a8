"""The results site's data, without a browser: the replay tables against the
engine's own state, the seat views against the observer, the time summaries,
the files `arena report` writes and how `arena run` ends."""

from __future__ import annotations

import csv
import gzip
import json
import random
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.engine import observer
from arena.engine.game import Game, GameConfig
from arena.engine.record import GameRecord, replay
from arena.errors import UserError
from arena.site import build as site_build
from arena.site.replays import CARD_LETTERS, HIDDEN, encode_event, encode_seat, replay_data
from arena.site.table import Table
from arena.tournament.times import TimeSummary, bucket, bucket_middle, histogram

EXAMPLE = Path(__file__).resolve().parent.parent / "results" / "example"
LETTER = {letter: card for card, letter in CARD_LETTERS.items()}


def random_record(config: GameConfig, seed: int, *, faults: bool) -> GameRecord:
    """A game of random legal play; with ``faults``, seats now and then forfeit
    (at any request, mid-Exchange too) and some games are stopped."""
    game = Game.from_config(config, seed)
    rng = random.Random(seed)
    while not game.over:
        request = game.request
        assert request is not None
        if faults and rng.random() < 0.03:
            game.forfeit(rng.choice(request.seats), "timeout")
            continue
        if faults and rng.random() < 0.005:
            game.stop("time_cap")
            break
        for seat in request.seats:
            if game.request is not request or game.over:
                break
            game.decide(seat, rng.choice(game.legal(seat)))
    return GameRecord.of(game, config, seed)


CONFIGS = [GameConfig(p, v, d) for p in (2, 3, 4, 6, 8) for v in ("ambassador", "inquisitor")
           for d in ((None, False) if p == 2 else (None,))]


def engine_states(record: GameRecord) -> tuple[list[Any], list[dict[str, Any]]]:
    """The events, and after each decision the engine's own state and event count."""
    states: list[dict[str, Any]] = []

    def after(game: Game) -> None:
        states.append({"events": len(game.events), "coins": list(game.coins),
                       "hands": [list(h) for h in game.hands],
                       "revealed": [list(r) for r in game.revealed],
                       "alive": list(game.alive), "court": len(game.court),
                       "drawn": list(game._drawn)})

    game = replay(record, after=after)
    return list(game.events), states


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.players}-{c.variant}-{c.draft}")
def test_tables_agree_with_the_engine_after_every_decision(config: GameConfig) -> None:
    for seed in range(25):
        record = random_record(config, seed, faults=seed % 2 == 1)
        events, states = engine_states(record)
        # one table per view: every card, and each seat's
        tables = {who: Table() for who in (observer.OMNISCIENT, *range(config.players))}
        done = 0
        for state in states:
            for event in events[done:state["events"]]:
                for who, table in tables.items():
                    table.apply(observer.view(event, who))
            done = state["events"]
            for who, table in tables.items():
                assert table.court == state["court"], (seed, who)
                for seat, shown in enumerate(table.seats):
                    assert shown.coins == state["coins"][seat]
                    assert shown.revealed == state["revealed"][seat]
                    assert shown.out == (not state["alive"][seat])
                    hand = state["hands"][seat]
                    if who in (observer.OMNISCIENT, seat):
                        assert shown.hand == hand, (seed, who, seat)
                        drawn = state["drawn"] if seat == _current(events, done) else []
                        assert shown.drawn == drawn
                    else:  # another seat's face-down cards: counted, never known
                        assert shown.hand == [None] * len(hand), (seed, who, seat)
                        assert all(card is None for card in shown.drawn)


def _current(events: list[Any], upto: int) -> int | None:
    from arena.engine import events as ev
    for event in reversed(events[:upto]):
        if isinstance(event, ev.TurnStarted):
            return event.seat
    return None


def test_replay_data_seat_views_are_the_observers_and_hide_other_hands() -> None:
    for config in CONFIGS[::3]:
        for seed in range(6):
            record = random_record(config, seed, faults=True)
            data = replay_data(record, "000001")
            events, _ = engine_states(record)
            assert data["events"] == [encode_event(e) for e in events]
            assert data["steps"][-1][0] == len(events)
            assert len(data["tables"]) == 1 + config.players
            for seat in range(config.players):
                seen = data["seen"][seat]
                decoded = [seen.get(str(i), e) for i, e in enumerate(data["events"])]
                assert decoded == [encode_event(observer.view(e, seat)) for e in events]
                last = None
                for text in data["tables"][1 + seat]:
                    last = text or last
                    assert last is not None
                    for other, part in enumerate(last.split(";")[1:]):
                        hand = part.split(".")[1]
                        if other != seat:
                            assert set(hand) <= {HIDDEN}, (seed, seat, last)
                        else:
                            assert HIDDEN not in hand
            assert len(data["tables"][0]) == len(data["steps"])
            assert HIDDEN not in "".join(data["tables"][0])


def test_each_views_table_text_is_its_table_folded_anew_after_each_step() -> None:
    """The replay's table texts (kept from step to step, re-encoded only where
    an event touched a seat) against a Table folded from scratch over each
    view's events and encoded whole, after every step of many games."""
    for config in CONFIGS:
        for seed in range(8):
            record = random_record(config, seed, faults=seed % 2 == 1)
            data = replay_data(record, "000001")
            events, _ = engine_states(record)
            for column, who in enumerate((observer.OMNISCIENT, *range(config.players))):
                table, done, last = Table(), 0, None
                for (end, _, _, _), text in zip(data["steps"], data["tables"][column],
                                                strict=True):
                    for event in events[done:end]:
                        table.apply(observer.view(event, who))
                    done = end
                    whole = ";".join([str(table.court), *map(encode_seat, table.seats)])
                    assert (text or last) == whole, (config, seed, who, end)
                    assert text != last  # "" when the text did not change
                    last = text or last


def test_the_first_step_is_the_deal_and_steps_follow_decisions() -> None:
    record = random_record(GameConfig(2), 7, faults=False)
    data = replay_data(record, "000009")
    events = data["events"]
    first = data["steps"][0][0]
    assert [e[0] for e in events[:first]] == ["GS", "DL", "DO", "DL", "DO"]
    ends = [end for end, _, _, _ in data["steps"]]
    assert ends == sorted(set(ends))  # every step adds events
    assert all(turn >= 0 for _, turn, _, _ in data["steps"])
    assert data["steps"][0][3] == ["draft", [0, 1]]  # the deal waits for both drafts
    assert data["steps"][1][3] == ["action", [data["steps"][1][2]]]  # then for the first turn
    assert data["steps"][-1][3] is None  # the game is over


def test_time_summary_percentiles_from_histograms() -> None:
    times = [0.1] * 98 + [5.0, 50.0]
    summary = TimeSummary()
    # the same times split over two games add up as one
    summary.add({"n": 50, "median": 0.1, "max": 0.1, "hist": histogram(times[:50])})
    summary.add({"n": 50, "median": 0.1, "max": 50.0, "hist": histogram(times[50:])})
    assert summary.n == 100 and summary.max == 50.0
    assert summary.median() == pytest.approx(0.1, rel=0.1)
    assert summary.percentile(99) == pytest.approx(5.0, rel=0.1)
    assert summary.percentile(100) == pytest.approx(50.0, rel=0.1)
    assert bucket(0.0005) == 0 and bucket_middle(bucket(2.0)) == pytest.approx(2.0, rel=0.1)
    old = TimeSummary()  # lines written before histograms: medians only, no percentile
    old.add({"n": 3, "median": 1.0, "max": 4.0})
    old.add({"n": 1, "median": 9.0, "max": 9.0})
    assert old.percentile(99) is None and old.median() == 1.0 and old.max == 9.0


def test_a_histogram_counts_each_time_in_its_bucket() -> None:
    # histogram() computes the buckets inline: they must be bucket()'s.
    times = [0.0, 0.0005, 0.001, 0.0010001, 0.0012, 0.5, 1.0, 1.19, 1.2, 17.3, 999.9, 60_000.0]
    found = histogram(times)
    low = found[0]
    expected = [0] * (len(found) - 1)
    for t in times:
        expected[bucket(t) - low] += 1
    assert found[1:] == expected and low == min(bucket(t) for t in times) == 0
    assert histogram([]) == [] and histogram([2.0, 2.0]) == [bucket(2.0), 2]


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the committed example tournament, without its site."""
    folder = tmp_path_factory.mktemp("example") / "example"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("site"))
    return folder


def read_data(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("arenaData(") and text.endswith(");\n")
    name, _, value = text[len("arenaData("):-3].partition(",")
    return json.loads(name), json.loads(value)


def read_replays(site: Path) -> dict[str, Any]:
    """Every replay of a site, by game id: game N in file N // replay_pack, the
    number the game list's page reads from tournament.js."""
    _, tournament = read_data(site / "data" / "tournament.js")
    pack = tournament["replay_pack"]
    replays: dict[str, Any] = {}
    for path in sorted((site / "replays").glob("*.js")):
        name, value = read_data(path)
        assert name == f"replays-{path.stem}" and value
        assert {int(game) // pack for game in value} == {int(path.stem)}
        assert not replays.keys() & value.keys()
        replays.update(value)
    return replays


def test_report_writes_every_page_and_data_file(example: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    assert main(["report", str(example), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out / "index.html")
    for name in site_build.STATIC:
        assert (out / name).is_file()
    _, t = read_data(out / "data" / "tournament.js")
    with open(example / "standings.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["bot"] for r in t["standings"]] == [row["bot"] for row in rows]
    assert [r["elo"] for r in t["standings"]] == [float(row["elo"]) for row in rows]
    lines = [json.loads(line) for line in (example / "games.jsonl").read_text().splitlines()]
    assert t["games"] == len(lines) and t["chunks"] == 1
    _, games = read_data(out / "data" / "games-0000.js")
    assert [row[0] for row in games["rows"]] == [line["record"][8:14] for line in lines]
    bots = t["h2h"]["bots"]
    roster = t["roster"]
    assert [[roster[k] for k in row[2]] for row in games["rows"]] == [
        line["seats"] for line in lines]
    replays = read_replays(out)
    assert sorted(replays) == sorted(line["record"][8:14] for line in lines)
    assert replays["000001"]["game"] == "000001"
    assert replays["000001"]["names"] == lines[0]["seats"]
    for bot in bots:
        name, value = read_data(out / "data" / f"bot-{t['bot_files'][bot]}.js")
        assert value["bot"] == bot
        assert sum(o["games"] for o in value["opponents"]) == Counter(
            b for line in lines for b in line["seats"])[bot]
    # No page may ask another site for anything.
    for name in site_build.STATIC:
        text = (out / name).read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text and "//cdn" not in text


def test_report_again_writes_only_what_changed(example: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "site"
    site_build.build_site(example, out)
    stamp = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    replayed: list[str] = []
    monkeypatch.setattr(site_build, "replay_json",
                        lambda record, game_id, line: replayed.append(game_id) or "{}")
    site_build.build_site(example, out)
    assert replayed == []  # an existing replay is not made again
    changed = [p.name for p, t in stamp.items() if p.exists() and p.stat().st_mtime_ns != t]
    assert set(changed) <= {"tournament.js"}  # only its clock moves


def test_a_record_newer_than_its_replay_is_replayed_again(example: Path, tmp_path: Path) -> None:
    import os

    folder = tmp_path / "t"
    shutil.copytree(example, folder)
    site_build.build_site(folder)
    replay_file = folder / "site" / "replays" / "00000.js"
    replay_file.write_text(replay_file.read_text().replace('"000001":{', '"000001":{"stale":1,'))
    os.utime(replay_file, ns=(1, 1))  # older than its records: a folder made anew
    site_build.build_site(folder)
    value = read_replays(folder / "site")["000001"]
    assert value["game"] == "000001" and "stale" not in value


def test_a_damaged_record_gives_a_replay_that_says_so(example: Path, tmp_path: Path) -> None:
    folder = tmp_path / "t"
    shutil.copytree(example, folder)
    with gzip.open(folder / "records" / "000002.json.gz", "wt") as f:
        f.write("{not json")
    out = tmp_path / "site"
    site_build.build_site(folder, out)
    value = read_replays(out)["000002"]
    assert "not JSON" in value["error"]
    assert "error" not in read_replays(out)["000003"]


@pytest.mark.parametrize("damage", ["truncated", "two members", "not gzip", "not utf-8",
                                    "not a record"])
def test_a_record_the_site_reads_quickly_is_read_as_load_reads_it(
        example: Path, tmp_path: Path, damage: str) -> None:
    from arena.engine.record import RecordError, load

    for path in sorted((example / "records").glob("*.json.gz"))[:20]:
        assert site_build._load_record(path) == load(path)
    good = (example / "records" / "000003.json.gz").read_bytes()
    damaged = {"truncated": good[:len(good) // 2],
               "two members": good + gzip.compress(b"{}"),
               "not gzip": b"{}",
               "not utf-8": gzip.compress(b'{"format": "\xff"}'),
               "not a record": gzip.compress(b'{"format": "arena-game", "version": 1}')}[damage]
    path = tmp_path / "000003.json.gz"
    path.write_bytes(damaged)
    with pytest.raises(RecordError) as expected:
        load(path)
    with pytest.raises(RecordError) as got:
        site_build._load_record(path)
    assert str(got.value) == str(expected.value)


def test_report_refuses_a_folder_that_is_not_a_tournament(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    assert main(["report", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such folder" in err
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tournament.json" in err


def test_bot_names_that_are_not_file_names_get_safe_keys() -> None:
    assert site_build.bot_file_key("strong") == "strong"
    for name in ("a b", "../x", "é", "a.b", "x" * 80):
        key = site_build.bot_file_key(name)
        assert key.isalnum() and key != site_build.bot_file_key(name + "!")


def test_arena_run_writes_the_site_and_prints_its_index_last(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bots = []
    for name in ("alpha", "beta"):
        shutil.copyfile(Path(__file__).parent / "bots" / "det_hash.py", tmp_path / f"{name}.py")
        bots.append(str(tmp_path / f"{name}.py"))
    out = tmp_path / "run"
    capsys.readouterr()
    assert main(["run", *bots, "--games", "4", "--seed", "5", "--concurrency", "1",
                 "--out", str(out)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == str(out / "site" / "index.html") and Path(last).is_file()
    lines = (out / "games.jsonl").read_text().splitlines()
    assert len(read_replays(out / "site")) == len(lines) == 4
    meta = json.loads((out / "tournament.json").read_text())
    assert meta["started"].endswith("UTC") and meta["finished"] >= meta["started"]
    # again, with nothing left to play: the same last line, and the site as it was
    site = {p: p.stat().st_mtime_ns for p in (out / "site").rglob("*")}
    assert main(["run", *bots, "--games", "4", "--seed", "5", "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == last
    assert {p: p.stat().st_mtime_ns for p in (out / "site").rglob("*")} == site
    # the histogram the site's percentiles are summed from
    seat_times = json.loads(lines[0])["decision_ms"][0]
    assert sum(seat_times["hist"][1:]) == seat_times["n"]


def test_the_site_is_refreshed_while_a_run_goes_on(example: Path, tmp_path: Path) -> None:
    import threading
    import time

    folder = tmp_path / "t"
    shutil.copytree(example, folder)
    games = (folder / "games.jsonl").read_text().splitlines(keepends=True)
    (folder / "games.jsonl").write_text("".join(games[:10]))
    tournament_js = folder / "site" / "data" / "tournament.js"

    def shown_games() -> int | None:
        try:
            return read_data(tournament_js)[1]["games"]
        except (OSError, ValueError):
            return None  # not written yet

    def wait_for(count: int) -> None:
        deadline = time.monotonic() + 60
        while shown_games() != count:
            assert time.monotonic() < deadline, f"the site never showed {count} games"
            time.sleep(0.02)

    def refreshers() -> list[threading.Thread]:
        # By name: other threads (trio's idle workers of earlier tests) come and go.
        return [t for t in threading.enumerate() if t.name == "site-refresh"]

    assert refreshers() == []
    with site_build.refreshing(folder, every=0.05):
        assert len(refreshers()) == 1
        wait_for(10)
        assert read_data(tournament_js)[1]["meta"]["running"] is True
        with open(folder / "games.jsonl", "a") as f:  # the run goes on
            f.writelines(games[10:20])
        wait_for(20)
        assert len(read_replays(folder / "site")) == 20
    assert refreshers() == []  # the refresher has stopped


def test_the_committed_examples_site_is_current_and_the_readme_links_to_it() -> None:
    site = EXAMPLE / "site"
    for name in site_build.STATIC:  # the pages as the package ships them now
        shipped = (Path(site_build.__file__).parent / "static" / name).read_text()
        assert (site / name).read_text() == shipped, f"run: arena report {EXAMPLE}"
    lines = (EXAMPLE / "games.jsonl").read_text().splitlines()
    replays = read_replays(site)
    assert len(replays) == len(lines)
    _, t = read_data(site / "data" / "tournament.js")
    from arena.site import data as site_data
    folder = site_data.read_folder(EXAMPLE)
    now = site_data.tournament_data(folder, site_data.rate(folder), chunk_size=1)["standings"]
    assert t["standings"] == now, f"the site is older than the ratings: arena report {EXAMPLE}"
    assert len(replays["000133"]["steps"]) > 12  # the README links to its step 12
    readme = (EXAMPLE.parent.parent / "README.md").read_text()
    assert "(results/example/site/index.html)" in readme
    assert "(results/example/site/replay.html#game=000133&step=12)" in readme
    size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    assert size < 1_000_000, f"the example's site has grown to {size} bytes"


def test_breakdown_by_variant_and_table_size_only_when_a_run_mixes_them(tmp_path: Path) -> None:
    from arena.site import data as site_data

    shutil.copyfile(EXAMPLE / "tournament.json", tmp_path / "tournament.json")

    lines = iter(range(100))

    def line(seats: list[str], places: list[int], **extra: Any) -> str:
        return json.dumps({"group": "g", "index": next(lines), "seats": seats,
                           "placements": places, "faults": [None] * len(seats), **extra}) + "\n"

    games = [line(["strong", "honest"], [1, 2]), line(["strong", "honest"], [2, 1]),
             line(["strong", "honest"], [1, 2])]
    (tmp_path / "games.jsonl").write_text("".join(games))
    assert site_data.breakdown(site_data.read_folder(tmp_path)) == []
    games += [line(["strong", "honest", "random"], [3, 1, 2]),
              line(["strong", "honest"], [1, 2], variant="inquisitor")]
    (tmp_path / "games.jsonl").write_text("".join(games))
    groups = site_data.breakdown(site_data.read_folder(tmp_path))
    assert [(g["variant"], g["players"], g["games"]) for g in groups] == [
        ("ambassador", 2, 3), ("ambassador", 3, 1), ("inquisitor", 2, 1)]
    assert groups[0]["bots"]["strong"] == {"games": 3, "score": round(2 / 3, 4)}
    assert groups[1]["bots"]["strong"] == {"games": 1, "score": 0.0}
    assert groups[1]["bots"]["honest"] == {"games": 1, "score": 1.0}


def test_a_refresh_after_new_games_writes_only_the_last_chunk_and_new_replays(
        example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(site_build, "CHUNK_SIZE", 100)
    folder = tmp_path / "t"
    shutil.copytree(example, folder)
    games = (folder / "games.jsonl").read_text().splitlines(keepends=True)
    assert len(games) >= 160
    (folder / "games.jsonl").write_text("".join(games[:150]))
    out = folder / "site"
    site_build.build_site(folder)
    stamp = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    with open(folder / "games.jsonl", "a") as f:
        f.writelines(games[150:160])
    replayed = []
    real_replay_json = site_build.replay_json
    monkeypatch.setattr(site_build, "replay_json",
                        lambda record, game_id, line: replayed.append(game_id) or
                        real_replay_json(record, game_id, line))
    site_build.build_site(folder)
    now = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    written = sorted(str(p.relative_to(out)) for p in now if stamp.get(p) != now[p])
    new_games = [json.loads(line)["record"][8:14] for line in games[150:160]]
    assert sorted(replayed) == sorted(new_games)  # a file's other replays are kept
    new_replays = sorted({f"replays/{int(game) // site_build.replay_pack({}):05d}.js"
                          for game in new_games})
    pages = {w for w in written if w.startswith("data/bot-")}
    assert sorted(set(written) - pages) == sorted(
        ["data/games-0001.js", "data/tournament.js", "data/manifest.json", *new_replays])
    assert len(read_replays(out)) == 160
    # the new games' bots, and any other bot whose rating the new games moved
    assert pages >= {f"data/bot-{b}.js" for b in _bots_changed(games[150:160])}


def test_a_game_stored_in_the_clock_tick_its_replay_file_was_written_gets_its_replay(
        example: Path, tmp_path: Path) -> None:
    import os

    folder = tmp_path / "t"
    shutil.copytree(example, folder)
    games = (folder / "games.jsonl").read_text().splitlines(keepends=True)
    (folder / "games.jsonl").write_text("".join(games[:5]))
    site_build.build_site(folder)
    pack = folder / "site" / "replays" / "00000.js"
    assert sorted(read_replays(folder / "site")) == [f"{n:06d}" for n in range(1, 6)]
    with open(folder / "games.jsonl", "a") as f:
        f.writelines(games[5:6])
    tick = pack.stat().st_mtime_ns
    os.utime(folder / "records" / "000006.json.gz", ns=(tick, tick))  # the same tick
    site_build.build_site(folder)
    assert sorted(read_replays(folder / "site")) == [f"{n:06d}" for n in range(1, 7)]


def test_a_replay_file_another_writer_wrote_meanwhile_is_made_whole_again(
        example: Path, tmp_path: Path) -> None:
    folder = tmp_path / "t"
    shutil.copytree(example, folder)
    site_build.build_site(folder)
    pack = folder / "site" / "replays" / "00001.js"
    lines = pack.read_text().split("\n")
    # what an `arena report` that saw a game fewer would have written, after this run
    pack.write_text("\n".join([*lines[:-4], lines[-4].removesuffix(","), *lines[-2:]]))
    assert len(read_replays(folder / "site")) == 209
    site_build.build_site(folder)
    assert len(read_replays(folder / "site")) == 210


def test_bigger_tables_get_fewer_replays_a_file(example: Path, tmp_path: Path) -> None:
    assert [site_build.replay_pack({"players": k}) for k in (2, 3, 4, 8)] == [20, 13, 10, 5]
    assert site_build.replay_pack({}) == site_build.replay_pack({"players": "x"}) == 20
    folder = tmp_path / "t"
    shutil.copytree(example, folder)
    meta_path = folder / "tournament.json"
    meta = json.loads(meta_path.read_text())
    for players, files in ((8, 43), (2, 11)):  # 210 games, numbered 1 to 210
        meta_path.write_text(json.dumps({**meta, "players": players}))
        site_build.build_site(folder)
        assert len(list((folder / "site" / "replays").glob("*.js"))) == files
        assert len(read_replays(folder / "site")) == 210  # each game once, in its file


def test_a_site_of_the_format_with_a_file_per_replay_loses_those_files(
        example: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    (out / "replays").mkdir(parents=True)
    (out / "data").mkdir()
    (out / "data" / "manifest.json").write_text('{"replay_version": 2}\n')
    (out / "replays" / "000001.js").write_text('arenaData("replay-000001",{});\n')
    (out / "replays" / "notes.txt").write_text("not the site's")
    site_build.build_site(example, out)
    assert not (out / "replays" / "000001.js").exists()
    assert (out / "replays" / "notes.txt").exists()
    assert "000001" in read_replays(out)


def _bots_changed(lines: list[str]) -> set[str]:
    return {name for line in lines for name in json.loads(line)["seats"]}


def _folded(data: Any) -> Any:
    """Everything a Folder holds, comparable (a TimeSummary compares by identity)."""
    return (data.meta, data.results, data.rows, data.versus, data.faults, data.fault_totals,
            {bot: vars(summary) for bot, summary in data.times.items()})


def test_a_refresh_folds_only_new_lines_and_sees_a_games_file_made_anew(
        example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.site import data as site_data

    folder = tmp_path / "t"
    shutil.copytree(example, folder)
    path = folder / "games.jsonl"
    games = path.read_text().splitlines(keepends=True)
    folded: list[int] = []
    from_json = site_data.GameResult.from_json
    monkeypatch.setattr(site_data.GameResult, "from_json",
                        staticmethod(lambda line: folded.append(line["index"]) or
                                     from_json(line)))
    fold = None

    def check(lines: list[str], folds: int) -> None:
        nonlocal fold
        path.write_text("".join(lines))
        folded.clear()
        fold = site_data.fold_games(folder, fold)
        assert len(folded) == folds
        assert _folded(fold.data) == _folded(site_data.read_folder(folder))  # all lines, anew

    check(games[:100], 100)
    check(games[:150], 50)  # the refresh of a run: only the new lines
    check(games[:150], 0)
    check(games[:40] + games[41:160], 159)  # a game dropped (--replay-changed): anew
    check(games[:120], 120)  # lines cut off: anew
    check(games[:130], 10)
    path.write_text("".join(games[:130]) + "{damaged\n")
    with pytest.raises(UserError):
        site_data.fold_games(folder, fold)
    fold = None  # spent
    check(games[:140], 140)


def test_a_refresh_encodes_only_the_chunks_of_the_game_list_that_can_have_changed(
        example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.site import data as site_data

    monkeypatch.setattr(site_build, "CHUNK_SIZE", 100)
    folder = tmp_path / "t"
    shutil.copytree(example, folder)
    path = folder / "games.jsonl"
    games = path.read_text().splitlines(keepends=True)
    encoded: list[int] = []
    game_rows = site_data.game_rows
    monkeypatch.setattr(site_data, "game_rows", lambda rows, bots, variants: encoded.append(
        rows[0].line) or game_rows(rows, bots, variants))
    refresh = site_build.Refresh()

    def build(lines: list[str]) -> list[int]:
        path.write_text("".join(lines))
        encoded.clear()
        site_build.build_site(folder, running=True, refresh=refresh)
        return [(line - 1) // 100 for line in encoded]  # the chunks encoded

    assert build(games[:150]) == [0, 1]
    assert build(games[:160]) == [1]
    assert build(games[:205]) == [1, 2]
    assert build(games[:210]) == [2]
    assert build(games[1:210]) == [0, 1, 2]  # the lines before changed: all again
    written = {p.name: p.read_text() for p in (folder / "site" / "data").glob("games-*")}
    site_build.build_site(folder, tmp_path / "fresh")  # every line anew
    assert written == {p.name: p.read_text()
                       for p in (tmp_path / "fresh" / "data").glob("games-*")}


def test_a_tournament_without_games_yet_gets_a_site(tmp_path: Path) -> None:
    shutil.copyfile(EXAMPLE / "tournament.json", tmp_path / "tournament.json")
    index = site_build.build_site(tmp_path)
    _, t = read_data(tmp_path / "site" / "data" / "tournament.js")
    assert index.is_file() and t["games"] == 0 and t["chunks"] == 0
    bots = json.loads((EXAMPLE / "tournament.json").read_text())["bots"]
    assert [r["note"] for r in t["standings"]] == ["no games"] * len(bots)


def test_a_site_that_cannot_be_written_is_one_line(example: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("not a folder")
    assert main(["report", str(example), "--out", str(tmp_path / "file")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write" in err and str(tmp_path / "file") in err


def test_replay_calls_after_once_dealt_then_after_each_decision() -> None:
    record = random_record(GameConfig(3), 4, faults=True)
    seen: list[tuple[int, int]] = []
    replay(record, after=lambda game: seen.append((len(game.history), len(game.events))))
    assert [decisions for decisions, _ in seen] == list(range(len(record.decisions) + 1))
    dealt = record.new_game()
    assert seen[0] == (0, len(dealt.events)) and seen[0][1] > 0
