"""The results site in a real browser: Debian's chromium, driven by selenium
through Debian's chromium-driver, opening the site from file://.

A small real tournament is played in a temporary folder (two example bots
and three test bots that fault once each), its site written by `arena run`,
and every page checked against the results files and the game records.
Nothing is downloaded: the driver's path is given, and selenium's manager is
kept offline.  Without chromium these tests skip, unless
ARENA_TEST_BROWSER=require (CI), where they fail.  Each page type is
screenshot at a desktop and a phone width into the test's temporary folder.
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.engine.game import Game
from arena.engine.record import load, replay
from arena.site.build import build_site
from arena.site.replays import CARD_LETTERS

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
DRIVER = ("/usr/bin/chromedriver",)
WAIT = 20.0  # seconds: bounds every wait on the page; never reached when all is well
PHONE = (390, 844)
HOSTILE = '<img src="x" onerror="document.title=1"><script>document.title=2</script>'
DESKTOP = (1280, 900)


def _find(paths: tuple[str, ...], name: str) -> str | None:
    for path in paths:
        if os.access(path, os.X_OK):
            return path
    return shutil.which(name)


def _unavailable(reason: str) -> None:
    if os.environ.get("ARENA_TEST_BROWSER") == "require":
        pytest.fail(f"ARENA_TEST_BROWSER=require, but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed (pip install -e '.[test]')")
    chromium = _find(CHROMIUM, "chromium")
    chromedriver = _find(DRIVER, "chromedriver")
    if chromium is None or chromedriver is None:
        _unavailable("chromium and chromium-driver are not installed (apt-get install "
                     "chromium chromium-driver)")
    # selenium's manager must never download anything (a driver, a browser)
    offline = os.environ.get("SE_OFFLINE")
    os.environ["SE_OFFLINE"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    profile = tmp_path_factory.mktemp("chromium-profile")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                f"--user-data-dir={profile}", f"--window-size={DESKTOP[0]},{DESKTOP[1]}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    try:
        yield browser
    finally:
        browser.quit()
        if offline is None:
            os.environ.pop("SE_OFFLINE", None)
        else:
            os.environ["SE_OFFLINE"] = offline


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real tournament with faults, and its site, written by `arena run`."""
    base = tmp_path_factory.mktemp("tournament")
    bots = [str(ROOT / "example_bots" / "random.py"), str(ROOT / "example_bots" / "honest.py")]
    for name in ("garbage", "crash", "illegal"):  # each faults once (tests/bots/README.md)
        bots.append(str(ROOT / "tests" / "bots" / f"{name}.py"))
    out = base / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "arena", "run", *bots, "--games", "2",
                           "--seed", "11", "--concurrency", "1", "--workers", "0",
                           "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(out / "site" / "index.html")
    # A bot's log is its own text: the site must show it as text, never as markup.
    with open(out / "logs" / "garbage.w0.log", "a", encoding="utf-8") as log:
        log.write(HOSTILE + "\n")
    build_site(out)
    return out


@pytest.fixture
def page(driver: Any, tournament: Path, tmp_path: Path) -> Iterator[Any]:
    """Opens pages of the site; after the test, no error may be in the console."""
    driver.set_window_size(*DESKTOP)
    driver.get_log("browser")  # drop what earlier tests left

    def open_page(url: str, ready: str = "#main[data-ready]") -> Any:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait
        driver.get("about:blank")  # a new document each time, even if only the hash differs
        driver.get((tournament / "site").as_uri() + "/" + url)
        WebDriverWait(driver, WAIT).until(lambda d: d.find_elements(By.CSS_SELECTOR, ready))
        return driver

    yield open_page
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []
    # and nothing came from anywhere but the site's folder
    loaded = driver.execute_script(
        "return performance.getEntriesByType('resource').map((e) => e.name)"
        ".concat([location.href])")
    site = (tournament / "site").as_uri() + "/"
    assert loaded and all(url.startswith(site) for url in loaded), loaded


def lines(tournament: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tournament / "games.jsonl").read_text().splitlines()]


def screenshot(driver: Any, folder: Path, name: str) -> None:
    """The whole page, at a desktop width and as a phone shows it."""
    for label, (width, height) in (("desktop", DESKTOP), ("phone", PHONE)):
        mobile = label == "phone"
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        tall = driver.execute_script("return document.documentElement.scrollHeight")
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {**metrics, "height": min(max(tall, height), 8000)})
        path = folder / f"{name}-{label}.png"
        assert driver.save_screenshot(str(path)) and path.stat().st_size > 1000
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By
    return driver.find_elements(By.CSS_SELECTOR, selector)


# -- the index page ---------------------------------------------------------------------


def test_the_standings_table_equals_standings_csv(page: Any, tournament: Path,
                                                   tmp_path: Path) -> None:
    driver = page("index.html")
    with open(tournament / "standings.csv", encoding="utf-8") as f:
        expected = list(csv.DictReader(f))

    def pct(text: str, digits: int = 0) -> str:
        return f"{100 * float(text):.{digits}f}%" if text else ""

    shown = []
    for row in css(driver, "#standings tbody tr"):
        cells = {cell.get_attribute("data-key"): cell.text
                 for cell in row.find_elements("css selector", "[data-key]")}
        shown.append(cells)
    def whole(text: str) -> str:  # as the page rounds: halves up (Python's round() is to even)
        return str(math.floor(float(text) + 0.5))

    want = [{"rank": r["rank"], "bot": r["bot"],
             "elo": whole(r["elo"]) if r["elo"] else "—",
             "ci95": f"± {whole(r['ci95'])}" if r["ci95"] else "",
             "los_next": pct(r["los_next"]), "games": r["games"], "score": pct(r["score"], 1),
             "wins": r["wins"], "draws": r["draws"], "losses": r["losses"],
             "faults": str(sum(int(v) for k, v in r.items() if k.startswith("faults_")) or ""),
             "note": r["note"]} for r in expected]
    assert shown == want
    # the head-to-head heatmap, the fault table and the times are there too
    assert len(css(driver, ".heatmap tbody tr")) == len(expected)
    faults = " ".join(e.text for e in css(driver, "#faults ~ div table")).lower()
    assert "crash" in faults and "illegal" in faults and "malformed" in faults
    assert "1000 ms limit" in driver.find_element("css selector", "#times ~ div").text.lower()
    screenshot(driver, tmp_path, "index")


# -- the game list ------------------------------------------------------------------------


def shown_games(driver: Any) -> list[str]:
    return [row.get_attribute("data-game") for row in css(driver, "#games tbody tr")]


def test_filtering_the_game_list_by_bot_and_by_fault(page: Any, tournament: Path,
                                                     tmp_path: Path) -> None:
    from selenium.webdriver.support.ui import Select
    games = lines(tournament)
    ids = {id(g): g["record"][8:14] for g in games}

    driver = page("games.html#bot=honest", ".gamelist[data-ready]")
    assert shown_games(driver) == [ids[id(g)] for g in games if "honest" in g["seats"]]

    def faulted(kind: str | None, bot: str | None = None) -> list[str]:
        return [ids[id(g)] for g in games
                if any(f and (kind is None or f["kind"] == kind)
                       and (bot is None or g["seats"][s] == bot)
                       for s, f in enumerate(g["faults"]))]

    # a bot's wins against one opponent
    driver = page("games.html#bot=honest&opponent=random&result=win", ".gamelist[data-ready]")
    won = [ids[id(g)] for g in games if {"honest", "random"} <= set(g["seats"])
           and g["placements"][g["seats"].index("honest")] == 1]
    assert won and shown_games(driver) == won

    assert faulted("crash") and faulted("malformed")
    driver = page("games.html#fault=crash", ".gamelist[data-ready]")
    assert shown_games(driver) == faulted("crash")
    # by the form, as a user would: any fault of one bot
    Select(driver.find_element("id", "f-fault")).select_by_value("any")
    assert shown_games(driver) == faulted(None)
    Select(driver.find_element("id", "f-bot")).select_by_value("garbage")
    assert shown_games(driver) == faulted(None, "garbage")
    assert "bot=garbage" in driver.current_url and "fault=any" in driver.current_url
    # sorted by turns, longest first
    Select(driver.find_element("id", "f-fault")).select_by_value("")
    Select(driver.find_element("id", "f-bot")).select_by_value("")
    driver.find_element("css selector", "button[data-sort=turns]").click()
    driver.find_element("css selector", "button[data-sort=turns]").click()
    turns = [int(row.find_elements("css selector", "td")[1].text)
             for row in css(driver, "#games tbody tr")]
    assert turns == sorted((g["turns"] for g in games), reverse=True)[:len(turns)]
    screenshot(driver, tmp_path, "games")


# -- a bot's page --------------------------------------------------------------------------


def test_a_bots_page_shows_its_faults_with_the_line_and_a_link_to_the_game(
        page: Any, tournament: Path, tmp_path: Path) -> None:
    driver = page("bot.html#bot=garbage", ".gamelist[data-ready]")
    games = lines(tournament)
    fault = next((g, f) for g in games for s, f in enumerate(g["faults"])
                 if f and g["seats"][s] == "garbage")
    item = css(driver, ".fault-item")
    assert len(item) == 1
    assert fault[1]["line"] in item[0].find_element("css selector", "code.line").text
    link = item[0].find_element("css selector", "a.game")
    assert link.get_attribute("href").endswith(
        f"replay.html#game={fault[0]['record'][8:14]}&fault=garbage")
    log = driver.find_element("css selector", ".log pre")
    assert log.text.splitlines()[-1] == HOSTILE
    # only the referee's game marks become links (to the game's replay), nothing else
    marks = [line for line in log.text.splitlines() if line.startswith("== game ")]
    links = log.find_elements("css selector", "*")
    assert marks and [a.text for a in links] == marks
    assert all(a.tag_name == "a" and "replay.html#game=" in a.get_attribute("href")
               for a in links)
    assert "garbage" in driver.title
    rows = css(driver, "#bot-games-table tbody tr")
    assert len(rows) == min(20, sum("garbage" in g["seats"] for g in games))
    screenshot(driver, tmp_path, "bot")
    # the fault's link opens the replay at the step where the bot forfeits
    link.click()
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(driver, WAIT).until(lambda d: css(d, "#main[data-ready] #turnlog"))
    now = " ".join(e.text for e in css(driver, "#turnlog li.now"))
    assert "garbage forfeits" in now


# -- the replay viewer ------------------------------------------------------------------------


def expected_tables(record_path: Path) -> list[dict[str, Any]]:
    """The engine's own state at the end of each step (each batch of events a
    decision set off, the deal first), from the record alone."""
    record = load(record_path)
    states: list[dict[str, Any]] = []

    def after(game: Game) -> None:
        state = {"events": len(game.events), "coins": list(game.coins),
                 "hands": ["".join(CARD_LETTERS[c] for c in hand) for hand in game.hands],
                 "revealed": ["".join(CARD_LETTERS[c] for c in r) for r in game.revealed]}
        # The first call is the deal; a pass sets off nothing: no step.
        if not states or state["events"] > states[-1]["events"]:
            states.append(state)

    replay(record, after=after)
    return states


def seats_shown(driver: Any) -> list[dict[str, Any]]:
    out = []
    for seat in css(driver, "#table .seat"):
        out.append({
            "coins": int(seat.get_attribute("data-coins")),
            "hand": "".join(c.get_attribute("data-card")
                            for c in seat.find_elements("css selector", ".hand .card")),
            "revealed": "".join(c.get_attribute("data-card")
                                for c in seat.find_elements("css selector", ".revealed .card")),
        })
    return out


def step_number(driver: Any) -> int:
    return int(driver.find_element("id", "step").get_attribute("value"))


def test_stepping_a_replay_shows_the_records_cards_and_coins_in_each_view(
        page: Any, tournament: Path, tmp_path: Path) -> None:
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select
    game = next(g for g in lines(tournament) if not any(g["faults"]) and g["turns"] >= 4)
    gid = game["record"][8:14]
    states = expected_tables(tournament / game["record"])
    driver = page(f"replay.html#game={gid}")
    assert int(driver.find_element("id", "step").get_attribute("max")) == len(states) - 1
    body = driver.find_element("css selector", "body")

    def check(view: int | None) -> None:
        k = step_number(driver)
        shown = seats_shown(driver)
        assert [s["coins"] for s in shown] == states[k]["coins"], k
        assert [s["revealed"] for s in shown] == states[k]["revealed"], k
        for seat, s in enumerate(shown):
            if view is None or view == seat:
                assert s["hand"] == states[k]["hands"][seat], (k, view, seat)
            else:  # another seat's face-down cards: only their number
                assert s["hand"] == "?" * len(states[k]["hands"][seat]), (k, view, seat)

    check(None)
    for k in range(1, len(states)):
        body.send_keys(Keys.ARROW_RIGHT)
        assert step_number(driver) == k
        check(None)
    for k in range(len(states) - 2, len(states) - 6, -1):
        body.send_keys(Keys.ARROW_LEFT)
        assert step_number(driver) == k
        check(None)
    screenshot(driver, tmp_path, "replay")
    Select(driver.find_element("id", "view")).select_by_value("1")
    body.send_keys(Keys.HOME)
    assert step_number(driver) == 0 and "view=1" in driver.current_url
    for k in range(len(states)):
        assert step_number(driver) == k
        check(1)
        # nothing in this view names another seat's face-down card
        for other in css(driver, "#table .seat:not(.mine) .hand .card"):
            assert other.get_attribute("data-card") == "?"
        body.send_keys(Keys.ARROW_RIGHT)
    screenshot(driver, tmp_path, "replay-seat")


def test_a_game_opens_from_its_replay_file_and_one_its_file_lacks_says_so(
        page: Any, tournament: Path) -> None:
    from arena.site.build import replay_pack
    pack = replay_pack(json.loads((tournament / "tournament.json").read_text()))
    last = max(int(g["record"][8:14]) for g in lines(tournament))
    assert last // pack >= 1  # its replays are not all in the first file
    gid = f"{last:06d}"
    driver = page(f"replay.html#game={gid}")
    assert gid in driver.find_element("css selector", "h1").text
    assert int(driver.find_element("id", "step").get_attribute("max")) >= 1
    # a game its file does not hold (its record deleted, or a link typed by hand)
    missing = f"{last + 1:06d}"
    assert (last + 1) // pack == last // pack
    driver = page(f"replay.html#game={missing}")
    alert = driver.find_element("css selector", "[role=alert]").text
    assert "No replay here" in alert and f"holds no game {missing}" in alert


def test_deep_links_open_the_right_step(page: Any, tournament: Path) -> None:
    # A game nobody forfeited has more than 3 steps (one forfeited at once may not).
    game = next(g for g in lines(tournament) if not any(g["faults"]))
    gid = game["record"][8:14]
    driver = page(f"replay.html#game={gid}&step=3&view=0")
    assert step_number(driver) == 3
    assert driver.find_element("id", "view").get_attribute("value") == "0"
    assert driver.find_element("id", "where").text.startswith("Step 3 of")
    # a link given to the index page goes to the replay
    driver = page(f"index.html#game={gid}&step=2")
    assert "replay.html" in driver.current_url and step_number(driver) == 2
    # every row of the game list links to its replay
    driver = page("games.html", ".gamelist[data-ready]")
    first = css(driver, "#games tbody tr a.game")[0]
    gid = lines(tournament)[0]["record"][8:14]
    assert first.get_attribute("href").endswith(f"replay.html#game={gid}")
