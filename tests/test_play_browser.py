"""The play page in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`)
driven by Selenium against the server running under uvicorn on 127.0.0.1.

Set QWIXX_SCREENSHOTS=1 to save the page's pictures into docs/images (the README and
docs/play.md show them): a game in progress with the coach on, the end of a game, the replay viewer,
and Longo with five players at 1280 and 400 px wide.
"""

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
if not (CHROMIUM and DRIVER):
    pytest.skip(
        "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver; .ci/run does it)",
        allow_module_level=True,
    )
pytest.importorskip("selenium", reason="needs selenium (the test extra)")
pytest.importorskip("uvicorn", reason="needs the play extra (uvicorn)")

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from qwixx_env import bots, replay, solver  # noqa: E402
from qwixx_env.arena import run_arena  # noqa: E402
from qwixx_env.bots.registry import plays  # noqa: E402
from qwixx_env.core.options import TableOptions  # noqa: E402
from qwixx_env.core.variant import Row, Variant, encode_action, register_variant  # noqa: E402
from qwixx_env.envs.qwixx_v0 import raw_env  # noqa: E402
from qwixx_env.play.games import Game, NewGame, Seat, make_bots, parse_new_game  # noqa: E402
from qwixx_env.play.prepare import Preparation, Task  # noqa: E402
from qwixx_env.play.server import create_app  # noqa: E402
from qwixx_env.play.session import HUMAN  # noqa: E402

from conftest import serving  # noqa: E402

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
SHOTS = REPO / "docs" / "images" if os.environ.get("QWIXX_SCREENSHOTS") else None


@pytest.fixture(scope="module")
def site():
    """The app under uvicorn on a free loopback port, for the module's tests (no token)."""
    app = create_app(max_games=40)  # the module starts about 25 games and leaves many in play
    with serving(app) as url:
        yield app, url


def new_driver():
    """A headless Chromium of its own: a separate browser session (its own localStorage)."""
    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1440,1000",
                "--force-device-scale-factor=1", "--force-prefers-reduced-motion"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(DRIVER), options=options)


@pytest.fixture(scope="module")
def browser():
    driver = new_driver()
    yield driver
    driver.quit()


@pytest.fixture
def second_browser():
    driver = new_driver()
    yield driver
    driver.quit()


# What the page shows and holds when a wait runs out: its toast, its dataset and its state.
PAGE_STATE = """
const t = document.getElementById("toast");
const s = typeof S === "undefined" ? null : S;
const g = s && s.game;
return JSON.stringify({toast: t && !t.hidden ? t.textContent : null,
  dataset: document.body ? {...document.body.dataset} : null,
  playing: s && s.playing, sending: typeof sendMove === "undefined" ? null : !!sendMove.busy,
  game: g ? {id: g.id, decisions: g.decisions, to_decide: g.to_decide, you: g.you} : null});
"""


def wait(driver, condition, timeout=20):
    """Wait until the script `condition` returns true; on a timeout, fail naming the condition and
    what the page shows (an error toast above all), not with Selenium's empty message."""
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.02).until(lambda d: d.execute_script(condition))
    except TimeoutException:
        try:
            state = driver.execute_script(PAGE_STATE)
        except Exception as err:  # the page itself does not answer
            state = f"(the page does not answer: {err})"
        raise AssertionError(f"after {timeout} s, still not true: {condition}\nthe page: {state}") from None


def idle(driver):
    """Wait until the page takes a click: nothing being shown or sent, no cover, options drawn."""
    wait(driver, "return !S.playing && !sendMove.busy && !document.body.dataset.cover && "
                 "!!document.querySelector('#play-options .option')")


def open_page(driver, url):
    driver.get(url)
    # null-safe: on a loaded machine the driver can run this while the document has no body yet
    wait(driver, "return document.body !== null && document.body.dataset.ready === '1'")


def start(driver, players, seed, speed="0"):
    driver.find_element(By.CSS_SELECTOR, f"input[name=players][value='{players}'] + span").click()
    seed_box = driver.find_element(By.ID, "seed")
    seed_box.clear()
    seed_box.send_keys(str(seed))
    driver.execute_script(f"document.getElementById('speed').value = '{speed}'")
    driver.find_element(By.ID, "start-game").click()
    wait(driver, "return ['you', 'over'].includes(document.body.dataset.turn)")


def pass_anyway(driver):
    """Take the penalty where the page asks before a pass that costs one (else nothing)."""
    asked = driver.find_elements(By.CSS_SELECTOR, ".confirm-pass")
    if asked:
        asked[0].click()


def attr(element, name):
    return int(element.get_attribute(name))


def shot(driver, name):
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(SHOTS / name))


def play_direct(app, seed):
    """A finished 2-player game against heuristic, decided without the page (first legal option)."""
    games = app.state.games
    new = parse_new_game({"players": 2, "bots": ["heuristic"], "seed": seed})
    game = Game(games.new_id(), new, make_bots(new))
    games.add(game.id, game)
    while not game.over:
        game.move({"seat": 0, "action": game.env.legal_actions()[0]}, game.seat_secrets[0])
    return game


# The page's legal cell that skips the fewest open numbers of its row (at most 2, else null):
# a player's plain sense, read off the drawn sheet.
FEW_SKIPS = """
let best = null, fewest = 3;
for (const cell of document.querySelectorAll(".sheet[data-seat='0'] .cell.legal")) {
  let skips = 0;
  for (let c = cell.previousElementSibling; c && c.classList.contains("cell"); c = c.previousElementSibling) {
    if (c.classList.contains("crossed")) break;
    if (!c.classList.contains("gone")) skips++;
  }
  if (skips < fewest) { fewest = skips; best = cell.dataset.action; }
}
return best;
"""


def test_a_whole_game_against_greedy_by_clicking(site, browser):
    app, url = site
    open_page(browser, url)
    bot_choice = browser.find_element(By.CSS_SELECTOR, ".seat-bot select")
    browser.execute_script("arguments[0].value = 'greedy'", bot_choice)
    start(browser, players=2, seed=21)
    clicks = 0
    while browser.execute_script("return document.body.dataset.turn") == "you":
        seen = int(browser.execute_script("return document.body.dataset.decisions"))
        cells = browser.find_elements(By.CSS_SELECTOR, ".sheet[data-seat='0'] .cell.legal")
        target = browser.execute_script(FEW_SKIPS)
        if clicks % 4 == 3:  # now and then by keyboard: 1 crosses the first option listed, P passes
            browser.find_element(By.TAG_NAME, "body").send_keys("1" if cells else "p")
        elif target is not None:  # click the legal cell that skips fewest numbers
            browser.find_element(By.CSS_SELECTOR, f".sheet[data-seat='0'] .cell.legal[data-action='{target}']").click()
        else:  # nothing worth crossing: the pass button
            browser.find_element(By.CSS_SELECTOR, ".option:last-child").click()
        pass_anyway(browser)
        clicks += 1
        if clicks == 12:  # the coach on, mid-game: its win chances beside the options
            browser.find_element(By.ID, "coach-on").click()
            wait(browser, "return !!document.querySelector('#coach-panel .coach-values') || "
                          "document.body.dataset.turn !== 'you'")
            if browser.find_elements(By.CSS_SELECTOR, "#coach-panel .coach-values"):
                assert browser.find_elements(By.CSS_SELECTOR, ".sheet[data-seat='0'] .cell.legal .value") or not cells
                shot(browser, "play-coach.png")
            browser.find_element(By.ID, "coach-on").click()
            label, now = browser.execute_script("return [[...document.getElementById('games-list').options]"
                                                ".find((o) => o.value === S.game.id).textContent, S.game.decisions]")
            assert now > 12 and label.endswith(f"· {now} decisions"), label  # the games menu follows the game
        wait(browser, f"return document.body.dataset.turn === 'over' || "
                      f"(document.body.dataset.turn === 'you' && +document.body.dataset.decisions > {seen})")
    assert browser.execute_script("return document.body.dataset.turn") == "over" and clicks > 10
    game_id = browser.execute_script("return S.game.id")
    snap = app.state.games.get(game_id).env.snapshot()
    shown = {
        int(el.get_attribute("data-seat")): attr(el.find_element(By.CSS_SELECTOR, ".sheet-score"), "data-score")
        for el in browser.find_elements(By.CSS_SELECTOR, "#play-sheets .sheet")
    }
    assert shown == {s: p["score"] for s, p in enumerate(snap["players"])}
    penalties = [attr(el, "data-penalties") for el in browser.find_elements(By.CSS_SELECTOR, "#play-sheets .penalties")]
    assert sorted(penalties) == sorted(p["penalties"] for p in snap["players"])
    summary = browser.find_element(By.ID, "summary")
    wait(browser, "return !document.getElementById('summary').hidden")
    assert all(f"{p['score']}" in summary.text for p in snap["players"])
    shot(browser, "play-game-over.png")


def test_the_replay_viewer_steps_through_a_record(site, browser, tmp_path):
    app, url = site
    game = play_direct(app, seed=5)
    record = game.record()
    open_page(browser, url)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    browser.find_element(By.ID, "tab-replay").click()
    browser.find_element(By.ID, "record-file").send_keys(str(path))
    wait(browser, "return S.replay !== null && document.getElementById('rp-pos').textContent.startsWith('position 0')")
    last = len(record["decisions"])
    assert browser.find_element(By.ID, "rp-pos").text == f"position 0 of {last}"
    for _ in range(3):
        browser.find_element(By.ID, "rp-next").click()
    browser.find_element(By.ID, "rp-prev").click()
    assert browser.find_element(By.ID, "rp-pos").text == f"position 2 of {last}"
    browser.find_element(By.TAG_NAME, "body").send_keys("\ue010")  # End
    wait(browser, f"return document.getElementById('rp-pos').textContent === 'position {last} of {last}'")
    scores = [attr(el, "data-score") for el in browser.find_elements(By.CSS_SELECTOR, "#rp-sheets .sheet-score")]
    assert scores == [p["score"] for p in replay(record).snapshot()["players"]]
    names = [el.text for el in browser.find_elements(By.CSS_SELECTOR, "#rp-sheets .sheet-name")]
    assert names == record["seat_names"] == ["You", "heuristic"]  # the page's record names its seats
    assert browser.find_element(By.ID, "rp-banner").text.startswith("End of the record: You ")
    browser.find_element(By.ID, "rp-first").click()
    for _ in range(min(last, 9)):
        browser.find_element(By.ID, "rp-next").click()
    browser.find_element(By.ID, "rp-coach-on").click()  # the coach on the position shown
    wait(browser, "return !!document.querySelector('#rp-coach .coach-values')", timeout=60)
    shown = {attr(r, "data-action") for r in browser.find_elements(By.CSS_SELECTOR, "#rp-coach tr[data-action]")}
    position = min(last, 9)
    assert shown == set(app.state.replays.items()[-1][1].position(position).legal_actions())
    asked = [o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#coach-bot option")]
    assert asked == ["", *(n for n in bots.available() if plays(n, TableOptions(num_players=2)))]  # this table's
    shot(browser, "play-replay.png")
    # a file that is not a record is refused with the server's reason
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**record, "rolls": {}}))
    browser.find_element(By.ID, "record-file").send_keys(str(bad))
    wait(browser, "return document.getElementById('replay-error').textContent.includes('record rolls')")
    # ... and the replay it replaced is gone from view, leaving the error alone
    assert browser.find_elements(By.CSS_SELECTOR, "#rp-sheets .sheet") == []
    assert browser.find_element(By.ID, "rp-pos").text == "" and browser.execute_script("return S.replay") is None
    # a game the arena kept (run_arena(records=DIR)) opens the same way and ends on the arena's scores
    kept = run_arena(["greedy", "random"], games=1, seed=3, workers=1, records=tmp_path / "arena")
    path = kept.record_path(1)
    browser.find_element(By.ID, "record-file").send_keys(str(path))
    last = len(json.loads(path.read_text())["decisions"])
    wait(browser, f"return document.getElementById('rp-pos').textContent === 'position 0 of {last}'")
    browser.find_element(By.TAG_NAME, "body").send_keys("\ue010")  # End
    wait(browser, f"return document.getElementById('rp-pos').textContent === 'position {last} of {last}'")
    scores = [attr(el, "data-score") for el in browser.find_elements(By.CSS_SELECTOR, "#rp-sheets .sheet-score")]
    assert scores == kept.games.scores[1].tolist()
    names = [el.text for el in browser.find_elements(By.CSS_SELECTOR, "#rp-sheets .sheet-name")]
    assert names == ["Player 1", "Player 2"]  # an arena record names no seats


def test_a_solo_game_with_the_coach_shows_the_solvers_values(site, browser, classic):
    """The solo coach's numbers are the solver's: each option's expected final score, checked
    here through the env and `solver.expected_score` for the first decisions of a game."""
    app, url = site
    open_page(browser, url)
    start(browser, players=1, seed=17)
    browser.find_element(By.ID, "coach-on").click()
    for _ in range(8):
        if browser.execute_script("return document.body.dataset.turn") != "you":
            break
        wait(browser, "return !!document.querySelector('#coach-panel .coach-values')", timeout=90)
        game = app.state.games.get(browser.execute_script("return S.game.id"))
        record = game.record()
        rows = browser.find_elements(By.CSS_SELECTOR, "#coach-panel tr[data-action]")
        shown = {attr(r, "data-action"): float(r.get_attribute("data-value")) for r in rows}
        assert set(shown) == set(replay(record).legal_actions())
        for action, value in shown.items():
            assert value == pytest.approx(solo_worth(record, action), abs=1e-3), action
        best = max(shown, key=shown.get)
        assert browser.find_element(By.CSS_SELECTOR, "#coach-panel tr.best").get_attribute("data-action") == str(best)
        seen = int(browser.execute_script("return document.body.dataset.decisions"))
        browser.find_element(By.CSS_SELECTOR, f".option[data-action='{best}']").click()
        pass_anyway(browser)
        wait(browser, f"return document.body.dataset.turn === 'over' || +document.body.dataset.decisions > {seen}")


def test_the_address_with_its_token_opens_the_page_and_plays(browser):
    """A server with a token: the printed ?token= address opens the page (the token moves into
    a cookie, out of the address) and a move is played; without it the page is refused."""
    token = "a-browser-test-token-0123456789"
    app = create_app(max_games=2, token=token)
    with serving(app) as url:
        browser.delete_all_cookies()
        browser.get(url)
        assert "needs its link" in browser.find_element(By.TAG_NAME, "body").text
        open_page(browser, f"{url}?token={token}")
        assert "token" not in browser.current_url
        start(browser, players=2, seed=21)
        seen = int(browser.execute_script("return document.body.dataset.decisions"))
        browser.find_element(By.CSS_SELECTOR, ".option:last-child").click()  # pass
        wait(browser, f"return +document.body.dataset.decisions > {seen}")
        game = app.state.games.get(browser.execute_script("return S.game.id"))
        assert game.decisions > seen and len(app.state.games) == 1


def solo_worth(record, action):
    """What the solver says option `action` is worth: the expected final score of the sheet after
    it (in the white action, after the best colour option that follows on the same dice)."""

    def worth(env):
        snap = env.snapshot()
        return solver.expected_score(snap["players"][0], locked_rows=snap["locked_rows"])

    env = replay(record)
    env.step(action)
    if env.snapshot()["phase"] != "color":
        return worth(env)
    follow_ups = []
    for colour in env.legal_actions():
        after = replay(record)
        after.step(action)
        after.step(colour)
        follow_ups.append(worth(after))
    return max(follow_ups)


LUCKY_SEED = 8  # Longo, 2 players: the first white sum, 8, is one of your lucky numbers (8, 11)


def test_a_longo_lucky_cross_is_chosen_on_the_page(site, browser):
    """Seed 8 of Longo: you cross red 8 with the white sum 8, one of your lucky numbers; yellow,
    green and blue then tie with no crosses, so the page asks where the lucky cross goes. It
    names the phase, offers exactly the env's choices, and the one clicked gives the sheets the
    env reaches with the same decisions."""
    app, url = site
    open_page(browser, url)
    browser.find_element(By.CSS_SELECTOR, "input[name=variant][value='longo'] + span").click()
    assert browser.find_element(By.CSS_SELECTOR, "input[name=lucky][value='bonus']").is_selected()
    bot_choice = browser.find_element(By.CSS_SELECTOR, ".seat-bot select")
    browser.execute_script("arguments[0].value = 'greedy'", bot_choice)
    start(browser, players=2, seed=LUCKY_SEED)
    env = raw_env(num_players=2, variant="longo", lucky="bonus")
    env.reset(seed=LUCKY_SEED)
    red8 = encode_action(("red", 8), "longo")
    assert red8 in env.legal_actions() and browser.find_element(By.ID, "play-phase").text == "White action"
    browser.find_element(By.CSS_SELECTOR, f".sheet[data-seat='0'] .cell.legal[data-action='{red8}']").click()
    env.step(red8)
    wait(browser, "return document.body.dataset.turn === 'you' && +document.body.dataset.decisions === 1")
    phase = browser.find_element(By.ID, "play-phase")
    assert phase.text == "Lucky cross" and "lucky" in phase.get_attribute("class").split()
    assert "lucky cross ties between rows" in browser.find_element(By.ID, "play-banner").text
    assert browser.find_element(By.ID, "play-prompt").text.startswith("Lucky cross")
    cells = browser.find_elements(By.CSS_SELECTOR, ".sheet[data-seat='0'] .cell.legal")
    options = browser.find_elements(By.CSS_SELECTOR, "#play-options .option")
    assert [attr(c, "data-action") for c in cells] == env.legal_actions() == [attr(o, "data-action") for o in options]
    assert [o.text.split("\n")[-1] for o in options] == ["Cross yellow 2", "Cross green 16", "Cross blue 16"]
    pending = browser.find_elements(By.CSS_SELECTOR, ".sheet[data-seat='0'] .cell.pending")
    assert [attr(c, "data-action") for c in pending] == [red8]  # your white cross, shown as chosen
    green16 = encode_action(("green", 16), "longo")
    browser.find_element(By.CSS_SELECTOR, f".sheet[data-seat='0'] .cell.legal[data-action='{green16}']").click()
    # your white cross and its lucky cross are told as one decision, then the bot's white choice
    wait(browser, "return document.body.dataset.turn === 'you' && +document.body.dataset.decisions >= 2 || "
                  "document.body.dataset.turn === 'over'")
    game = app.state.games.get(browser.execute_script("return S.game.id"))
    decisions = game.record()["decisions"]
    assert decisions[:2] == [[0, red8], [0, green16]]
    for _, action in decisions[1:]:  # your lucky cross, then the bot's white choice
        env.step(action)
    snap = env.snapshot()
    assert (browser.find_element(By.ID, "play-phase").text, snap["phase"]) == ("Colour action", "color")
    for seat, player in enumerate(snap["players"]):
        for row, numbers in player["marks"].items():
            shown = browser.find_elements(By.CSS_SELECTOR, f".sheet[data-seat='{seat}'] .row.{row} .cell.crossed")
            assert [attr(c, "data-number") for c in shown] == numbers, (seat, row)
        score = browser.find_element(By.CSS_SELECTOR, f".sheet[data-seat='{seat}'] .sheet-score")
        assert attr(score, "data-score") == player["score"]
    assert snap["players"][0]["marks"]["green"] == [16]


# --- several people at one table -----------------------------------------------------------


def start_table(driver, players, picks, names, seed):
    """Start a table from the new-game form: `picks` for the seats after yours (a bot's name,
    '@here' for a person at this screen, '@link' for one with a join link), `names` by seat."""
    driver.find_element(By.CSS_SELECTOR, f"input[name=players][value='{players}'] + span").click()
    driver.execute_script("""
      const [picks, names] = arguments;
      document.querySelectorAll('.seat-bot select').forEach((sel, i) => {
        sel.value = picks[i]; sel.dispatchEvent(new Event('change'));
      });
      document.querySelectorAll('.seat-name').forEach((box, i) => { box.value = names[i] || ''; });
      document.getElementById('speed').value = '0';""", picks, names)
    seed_box = driver.find_element(By.ID, "seed")
    seed_box.clear()
    seed_box.send_keys(str(seed))
    driver.find_element(By.ID, "start-game").click()
    wait(driver, "return !!S.game && ['you', 'wait', 'cover', 'over'].includes(document.body.dataset.turn)")


def moved(game, decided, timeout=20):
    """Wait until the server's game has gone past `decided` decisions (or is over), the move
    and the bots' answers to it done: a move holds the game's lock throughout."""
    deadline = time.time() + timeout

    def past():
        with game.lock:
            return game.over or game.decisions > decided

    while not past():
        assert time.time() < deadline, "timed out"
        time.sleep(0.02)


SHOWN_SCORES = "return [...document.querySelectorAll('#play-sheets .sheet')].map(" \
               "(el) => [+el.dataset.seat, +el.querySelector('.sheet-score').dataset.score])"
# whether the page shows no other seat's white-action choice before its reveal
NOTHING_HIDDEN_SHOWN = """
const me = S.game.you;
return document.querySelectorAll(`.sheet:not([data-seat='${me}']) .cell.pending`).length === 0
  && S.game.pending.every((p) => p.seat === me)
  && S.game.events.every((e) => e.kind !== 'decision' || !['white', 'lucky'].includes(e.phase)
    || e.seat === me || e.hidden);
"""
FORGED_MOVES = """
const done = arguments[arguments.length - 1];
const send = (headers) => fetch(`/api/games/${S.game.id}/moves`, {method: 'POST',
  headers: {'Content-Type': 'application/json', ...headers}, body: JSON.stringify({seat: 0, action: 44})})
  .then((r) => r.status);
Promise.all([send({'X-Qwixx-Seat': seatsOf(S.game.id)[S.game.you]}), send({})]).then(done);
"""


def test_two_people_and_a_bot_play_from_their_own_browsers(site, browser, second_browser):
    """Ann hosts (seat 0), Bob joins from his link in another browser session (seat 1), random
    plays seat 2. Each page follows the other's moves live, offers no control for the other's
    seat and never shows the other's white choice before the reveal; a forged move for Ann's
    seat from Bob's page is refused; both show the server's final scores."""
    app, url = site
    open_page(browser, url)
    start_table(browser, 3, ["@link", "random"], ["Ann", "Bob"], seed=11)
    game = app.state.games.get(browser.execute_script("return S.game.id"))
    link = browser.find_element(By.CSS_SELECTOR, "#join-links li[data-seat='1'] a.join-link").get_attribute("href")
    assert f"join={game.id}." in link and game.seat_of(link.rsplit(".", 1)[1]) == 1
    bob = second_browser
    bob.get(link)
    wait(bob, "return document.body.dataset.ready === '1' && !!S.game && S.game.you === 1")
    assert "join=" not in bob.current_url  # the secret leaves the address bar; the page keeps it
    pages = {0: browser, 1: bob}
    for page in pages.values():
        page.execute_script("document.getElementById('speed').value = '0'; window.notReloaded = true")
    before = game.decisions
    assert bob.execute_async_script(FORGED_MOVES) == [403, 403]  # as Ann with Bob's secret, and with none
    assert game.decisions == before
    moves = hidden = 0
    while not game.over:
        seat, decided = game.to_decide(), game.decisions
        me, other = pages[seat], pages[1 - seat]
        wait(me, f"return document.body.dataset.turn === 'you' && +document.body.dataset.decisions === {decided}")
        wait(other, f"return +document.body.dataset.decisions === {decided}")
        controls = "return document.querySelectorAll('#play-options .option, .cell.legal').length"
        assert other.execute_script(controls) == 0
        me.find_element(By.CSS_SELECTOR, "#play-options .option:first-child" if moves < 12 else
                        "#play-options .option:last-child").click()  # crosses first, then passes to the end
        pass_anyway(me)
        moves += 1
        moved(game, decided)
        wait(other, f"return document.body.dataset.turn === 'over' || +document.body.dataset.decisions === "
                    f"{game.decisions}")  # live, without a reload
        assert other.execute_script(NOTHING_HIDDEN_SHOWN)
        hidden += bool(game.session.pending(seat)) and game.to_decide() == 1 - seat
    assert hidden > 0  # the other decided while this seat's white choice was pending, unseen
    snap = game.env.snapshot()
    for page in pages.values():
        wait(page, "return document.body.dataset.turn === 'over'")
        assert page.execute_script("return window.notReloaded") is True
        assert dict(page.execute_script(SHOWN_SCORES)) == {s: p["score"] for s, p in enumerate(snap["players"])}
    for again in (link, f"{url}#game={game.id}"):  # Bob closes the tab: his link, or the page's memory, rejoins
        bob.get("about:blank")
        bob.get(again)
        wait(bob, "return document.body.dataset.ready === '1' && !!S.game && S.game.you === 1 && "
                  "document.body.dataset.turn === 'over'")
        assert dict(bob.execute_script(SHOWN_SCORES)) == {s: p["score"] for s, p in enumerate(snap["players"])}


def test_a_hot_seat_game_covers_the_table_between_people(site, browser):
    """Ann and Cy share one screen: between their decisions the page covers the table ('pass
    to Cy'), and the next person's table never shows the last person's pending white choice."""
    app, url = site
    open_page(browser, url)
    start_table(browser, 3, ["@here", "random"], ["Ann", "Cy"], seed=12)
    game = app.state.games.get(browser.execute_script("return S.game.id"))
    names = {0: "Ann", 1: "Cy"}
    covers = hidden = 0
    while not game.over and covers < 6:
        wait(browser, f"return ['you', 'cover'].includes(document.body.dataset.turn) && "
                      f"+document.body.dataset.decisions === {game.decisions}")
        if browser.execute_script("return document.body.dataset.turn") == "cover":
            seat, last = int(browser.execute_script("return document.body.dataset.cover")), 1 - game.to_decide()
            assert seat == game.to_decide()
            assert browser.find_element(By.ID, "cover").text.startswith(f"Pass to {names[seat]}")
            size = "return parseFloat(getComputedStyle(document.querySelector(arguments[0])).fontSize)"
            assert browser.execute_script(size, ".cover-title") >= 1.8 * browser.execute_script(size, "body")
            assert not browser.find_element(By.ID, "play-sheets").is_displayed()  # the table is covered
            hidden += bool(game.session.pending(last))
            browser.find_element(By.ID, "cover-ready").click()
            wait(browser, f"return S.game.you === {seat} && document.body.dataset.turn === 'you'")
            assert browser.execute_script(NOTHING_HIDDEN_SHOWN)
            covers += 1
        else:
            decided = game.decisions
            browser.find_element(By.CSS_SELECTOR, "#play-options .option:first-child").click()
            moved(game, decided)
    assert covers >= 3 and hidden > 0


def viewport(driver, width, height=900):
    """Make the page `width` CSS pixels wide (and `height` tall), as a window of that size."""
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    wait(driver, f"return window.innerWidth === {width}")


MIN_CELL = 32  # px: a cell's side, a touch target (WCAG 2.5.8 asks 24; a cell carries a border and badges)
MIN_FIGURE = 12  # px: a number's font size on a sheet

# What overflows: the page (a horizontal scroll), any sheet, row, row count or banner whose
# content is wider than its box, a lock cell whose "5+" overlaps its number, a cell under
# MIN_CELL px or with a number under MIN_FIGURE px, a coach value outside its cell, and the dice
# on more than one line.
OVERFLOW = f"""
const MIN_CELL = {MIN_CELL}, MIN_FIGURE = {MIN_FIGURE};""" + """
const out = [];
const page = document.documentElement;
if (page.scrollWidth > page.clientWidth) out.push(`page ${page.scrollWidth} > ${page.clientWidth}`);
for (const el of document.querySelectorAll('.sheet, .row, .row-count, .banner, .topbar, .card')) {
  if (el.offsetParent && el.scrollWidth > el.clientWidth) {
    out.push(`${el.className} ${el.scrollWidth} > ${el.clientWidth}`);
  }
}
for (const need of document.querySelectorAll('.lockcell .need')) {
  if (!need.offsetParent) continue;
  const a = need.getBoundingClientRect(), b = need.parentElement.querySelector('.num').getBoundingClientRect();
  const apart = a.top >= b.bottom - 0.5 || b.top >= a.bottom - 0.5 || a.left >= b.right || b.left >= a.right;
  if (!apart) out.push('5+ on its number');
}
for (const cell of document.querySelectorAll('.sheet .cell')) {
  if (!cell.offsetParent) continue;
  const box = cell.getBoundingClientRect(), figure = parseFloat(getComputedStyle(cell.querySelector('.num')).fontSize);
  if (Math.min(box.width, box.height) < MIN_CELL - 0.01 || figure < MIN_FIGURE) {
    out.push(`${cell.getAttribute('aria-label')}: ${box.width.toFixed(1)} px, figures ${figure.toFixed(1)} px`);
  }
  const value = cell.querySelector('.value');
  if (value) {
    const v = value.getBoundingClientRect();
    if (v.left < box.left - 0.5 || v.right > box.right + 0.5 || v.top < box.top - 0.5 || v.bottom > box.bottom + 0.5) {
      out.push(`the coach's value spills over ${cell.getAttribute('aria-label')}`);
    }
  }
}
for (const dice of document.querySelectorAll('.dice')) {
  const tops = new Set([...dice.querySelectorAll('.die')].filter((d) => d.offsetParent)
    .map((d) => Math.round(d.getBoundingClientRect().top)));
  if (tops.size > 1) out.push(`the dice on ${tops.size} lines`);
}
return out;
"""


def new_table(driver, url, variant, players, seed):
    """Start a game of `variant` at `players` players against `random` bots, at once (speed instant)."""
    open_page(driver, url)
    driver.find_element(By.CSS_SELECTOR, f"input[name=variant][value='{variant}'] + span").click()
    driver.find_element(By.CSS_SELECTOR, f"input[name=players][value='{players}'] + span").click()
    driver.execute_script("document.querySelectorAll('.seat-bot select').forEach((s) => { s.value = 'random'; })")
    start(driver, players=players, seed=seed)


def test_every_table_size_fits_at_1280_and_400_px(site, browser, tmp_path):
    """1, 3 and 5 players of both variants, a few crosses in, at a laptop's and a phone's width:
    no horizontal scroll, no sheet, row or banner wider than its box, no "5+" on its number,
    every cell at least MIN_CELL px with readable numbers, the dice on one line."""
    _, url = site
    try:
        for variant in ("classic", "longo"):
            for players in (1, 3, 5):
                viewport(browser, 1280)
                new_table(browser, url, variant, players, seed=4)
                for _ in range(3):  # cross the first option listed (or pass), so sheets have crosses
                    seen = int(browser.execute_script("return document.body.dataset.decisions"))
                    browser.find_element(By.TAG_NAME, "body").send_keys("1" if browser.find_elements(
                        By.CSS_SELECTOR, ".sheet[data-seat='0'] .cell.legal") else "p")
                    pass_anyway(browser)
                    wait(browser, "return document.body.dataset.turn === 'over' || (document.body.dataset.turn "
                                  f"=== 'you' && +document.body.dataset.decisions > {seen})")
                assert len(browser.find_elements(By.CSS_SELECTOR, "#play-sheets .sheet")) == players
                for width in (1280, 400):
                    viewport(browser, width)
                    assert browser.execute_script(OVERFLOW) == [], (variant, players, width)
                    browser.save_screenshot(str(tmp_path / f"play-{variant}-{players}p-{width}.png"))
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


# Every crossed cell's cross: bold (its stroke at least 3.5 px) and dark, over most of the cell;
# and how many crossed two-digit numbers seat 0's sheet shows.
CROSSES = """
const out = [];
for (const cell of document.querySelectorAll('.sheet .cell.crossed')) {
  const x = cell.querySelector('svg.x'), path = x && x.querySelector('path');
  if (!path || !x.getBoundingClientRect().width) { out.push(`${cell.getAttribute('aria-label')}: no cross`); continue; }
  const size = x.getBoundingClientRect().width, style = getComputedStyle(path);
  const stroke = parseFloat(style.strokeWidth) * size / 40;  // the cross's viewBox is 40 wide
  const dark = style.stroke.match(/\\d+/g).slice(0, 3).every((c) => +c < 60) && +style.opacity === 1;
  if (size < 0.8 * cell.getBoundingClientRect().width || stroke < 3.5 || !dark) {
    out.push(`${cell.getAttribute('aria-label')}: a cross of ${size.toFixed(1)} px, stroke ${stroke.toFixed(1)} px, `
      + style.stroke);
  }
}
const twoDigits = [...document.querySelectorAll(".sheet[data-seat='0'] .cell.crossed")]
  .filter((cell) => +cell.dataset.number >= 10).length;
return [out, twoDigits];
"""


def longo_with_five(app):
    """Longo, you and four random bots, seed 4, after twelve of your decisions (greedy's, for
    you): crossed cells on every sheet, two-digit numbers among them."""
    new = parse_new_game({"variant": "longo", "players": 5, "bots": ["random"] * 4, "seed": 4})
    game = Game(app.state.games.new_id(), new, make_bots(new))
    app.state.games.add(game.id, game)
    you = bots.make_bot("greedy", new.table, 0)
    for _ in range(12):
        game.move({"seat": 0, "action": int(you.act(game.env.observe(game.env.agent_selection)))},
                  game.seat_secrets[0])
    assert not game.over
    return game


def test_longo_with_five_players_fits_a_phone_and_a_laptop(site, browser):
    """The hard case of the sheet: Longo's 16 cells a row at five sheets, with the coach on.
    At 400 and 1280 px: no sideways scroll, every cell a touch target (MIN_CELL px) with
    readable numbers, the coach's values inside their cells, the dice on one line, and every
    cross bold and dark, two-digit numbers included."""
    app, url = site
    game = longo_with_five(app)
    try:
        for width in (400, 1280):
            viewport(browser, width)
            browser.get("about:blank")  # a fresh page: from the page itself a new hash would not reload it
            browser.get(f"{url}#join={game.id}.{game.seat_secrets[0]}")
            wait(browser, "return document.body.dataset.turn === 'you'")
            browser.find_element(By.ID, "coach-on").click()
            # a cold kernel cache on a busy machine makes the first Longo coach slow
            wait(browser, "return !!document.querySelector('#coach-panel .coach-values, #coach-panel .error')",
                 timeout=120)
            assert not browser.find_elements(By.CSS_SELECTOR, "#coach-panel .error"), \
                browser.find_element(By.ID, "coach-panel").text
            assert browser.find_elements(By.CSS_SELECTOR, ".sheet[data-seat='0'] .cell.legal .value")
            losses = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "#coach-panel td.loss")]
            assert losses[0] == "0 (best)" and all(float(x) > 0 for x in losses[1:]), losses  # best − option
            assert browser.execute_script(OVERFLOW) == [], width
            problems, two_digits = browser.execute_script(CROSSES)
            assert problems == [] and two_digits >= 1, (width, problems)
            browser.execute_script("window.scrollTo(0, 0)")  # the coach's box scrolled into view
            shot(browser, f"play-longo-5p-{width}px.png")
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def offered(driver):
    """The bots each seat's menu offers, by seat (leaving out its two choices of a person,
    '@here' and '@link')."""
    return [[value for o in sel.find_elements(By.TAG_NAME, "option")
             if not (value := o.get_attribute("value")).startswith("@")]
            for sel in driver.find_elements(By.CSS_SELECTOR, ".seat-bot select")]


@pytest.mark.parametrize(("variant", "players"), [("longo", 3), ("longo", 2), ("classic", 3), ("classic", 5)])
def test_the_seat_menus_offer_only_the_bots_that_play_the_table(site, browser, variant, players):
    """What each seat offers is what the bots' own `check_table` accepts (`registry.plays`),
    and it follows the variant and the player count as they change."""
    _, url = site
    open_page(browser, url)
    browser.find_element(By.CSS_SELECTOR, f"input[name=variant][value='{variant}'] + span").click()
    browser.find_element(By.CSS_SELECTOR, f"input[name=players][value='{players}'] + span").click()
    expected = [name for name in bots.available() if plays(name, TableOptions(num_players=players, variant=variant))]
    assert offered(browser) == [expected] * (players - 1)
    if variant == "longo":
        assert not {"afterstate", "solo_optimal"} & set(expected)
    else:
        assert "solo_optimal" in expected and ("afterstate" in expected) == (players < 5)


def test_the_help_panel_opens_and_closes(site, browser):
    _, url = site
    open_page(browser, url)
    is_open = "return document.getElementById('help').open"
    assert browser.execute_script(is_open) is False
    browser.find_element(By.ID, "help-open").click()
    assert browser.execute_script(is_open) is True
    text = browser.find_element(By.ID, "help").text.lower()  # headings are upper case
    assert "qwixx longo" in text and "“5+”" in text and "keys" in text
    browser.find_element(By.ID, "help-close").click()
    assert browser.execute_script(is_open) is False
    browser.find_element(By.TAG_NAME, "body").send_keys("?")  # the key opens it, Escape closes it
    assert browser.execute_script(is_open) is True
    browser.switch_to.active_element.send_keys("\ue00c")  # Escape
    wait(browser, "return document.getElementById('help').open === false")


def test_a_pass_that_costs_a_penalty_asks_before_it_is_sent(site, browser):
    """Solo, seed 6: you pass the white action, so passing the colour action costs a penalty.
    The pass button and the P key each ask first (nothing is sent; Back returns to the
    options); taking the penalty sends the pass."""
    app, url = site
    open_page(browser, url)
    start(browser, players=1, seed=6)
    game = app.state.games.get(browser.execute_script("return S.game.id"))
    browser.find_element(By.TAG_NAME, "body").send_keys("p")  # the white action: a free pass, sent at once
    wait(browser, "return +document.body.dataset.decisions === 1 && document.body.dataset.turn === 'you'")
    assert browser.find_element(By.ID, "play-phase").text == "Colour action" and game.decisions == 1
    browser.find_element(By.CSS_SELECTOR, "#play-options .option:last-child").click()  # the pass (penalty)
    assert "Pass and take a penalty?" in browser.find_element(By.CSS_SELECTOR, "#play-options .confirm").text
    assert game.decisions == 1 and browser.find_elements(By.CSS_SELECTOR, "#play-options .option") == []
    browser.find_element(By.CSS_SELECTOR, ".cancel-pass").click()
    assert browser.find_elements(By.CSS_SELECTOR, "#play-options .option") and game.decisions == 1
    browser.find_element(By.TAG_NAME, "body").send_keys("0")  # the key asks the same
    assert browser.find_elements(By.CSS_SELECTOR, ".confirm-pass") and game.decisions == 1
    browser.switch_to.active_element.send_keys("p")  # again: take it
    wait(browser, "return +document.body.dataset.decisions === 2")
    assert game.decisions == 2 and game.env.snapshot()["players"][0]["penalties"] == 1
    assert attr(browser.find_element(By.CSS_SELECTOR, "#play-sheets .penalties"), "data-penalties") == 1


def test_a_solo_game_ends_with_the_score_not_a_win(site, browser):
    app, url = site
    games = app.state.games
    new = parse_new_game({"players": 1, "bots": [], "seed": 2})
    game = Game(games.new_id(), new, make_bots(new))
    games.add(game.id, game)
    while not game.over:
        game.move({"seat": 0, "action": game.env.legal_actions()[0]}, game.seat_secrets[0])
    browser.get("about:blank")  # a fresh page: from the page itself a new hash would not reload it
    browser.get(f"{url}#join={game.id}.{game.seat_secrets[0]}")
    wait(browser, "return document.body.dataset.turn === 'over'")
    score = game.env.snapshot()["players"][0]["score"]
    banner = browser.find_element(By.ID, "play-banner").text
    assert banner == f"Game over — you scored {score} points." and "win" not in banner
    assert browser.find_elements(By.CSS_SELECTOR, ".badge.winner, .result.win") == []



# Every answer to the page's games list (GET /api/games) arrives late, after anything asked later.
SLOW_GAMES_LIST = """
const send = window.fetch.bind(window);
window.fetch = async (path, init) => {
  const answer = await send(path, init);
  if (path === "/api/games" && (!init || !init.method || init.method === "GET")) {
    await new Promise((done) => setTimeout(done, 1500));
  }
  return answer;
};
"""


def test_a_join_link_keeps_its_seat_when_the_games_list_answers_late(site, second_browser):
    """The page asks for its games list as it opens, before the join link's seat is kept; that
    answer cannot list the new game, and arriving after the join must not drop its seat (the
    move that follows would be refused for want of the seat's secret)."""
    app, url = site
    games = app.state.games
    new = parse_new_game({"players": 1, "bots": [], "seed": 5})
    game = Game(games.new_id(), new, make_bots(new))
    games.add(game.id, game)
    second_browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SLOW_GAMES_LIST})
    second_browser.get(f"{url}#join={game.id}.{game.seat_secrets[0]}")
    wait(second_browser, "return document.body.dataset.turn === 'you'")
    # the list asked for at the start has answered (its first option counts the games held)
    wait(second_browser, "return document.getElementById('games-list').options.length > 0", timeout=30)
    kept = second_browser.execute_script(f"return seatsOf('{game.id}')")
    assert kept == {"0": game.seat_secrets[0]}
    idle(second_browser)
    second_browser.find_element(By.CSS_SELECTOR, "#play-options .option:first-child").click()
    wait(second_browser, "return +document.body.dataset.decisions >= 1 || "
                         "!!document.querySelector('#toast.bad:not([hidden])')")
    toast = second_browser.find_element(By.ID, "toast")
    assert game.decisions == 1, f"the move was not taken: {toast.text if toast.is_displayed() else '(no toast)'}"

# three rows: top and middle mix a colour the page has shades for (red), a CSS colour it has not
# (purple) and a name no CSS knows (tangerine, drawn grey); bottom is all purple
CYCLE = ("red", "purple", "tangerine")
TRIO = register_variant(Variant(
    name="page_trio", faces=6, lock_cells=1, lock_threshold=5,
    score_table=tuple(k * (k + 1) // 2 for k in range(13)),
    rows=(Row("top", tuple(range(2, 13)), colors=tuple(CYCLE[i % 3] for i in range(11))),
          Row("middle", tuple(range(12, 1, -1)), colors=tuple(CYCLE[(i + 1) % 3] for i in range(11))),
          Row("bottom", tuple(range(2, 13)), colors=("purple",) * 11)),
))
SHEET_DRAWN = """
const sheet = document.querySelector("#play-sheets .sheet[data-seat='0']");
const look = (el) => [el.dataset.color, el.className, getComputedStyle(el).borderTopColor];
return {
  rows: [...sheet.querySelectorAll(".row")].map((r) => [r.dataset.row, r.querySelector(".row-name").textContent,
    r.className, getComputedStyle(r).backgroundColor]),
  top: [...sheet.querySelectorAll(".row[data-row='top'] .cell")].slice(0, 3).map(look),
  dice: [...document.querySelectorAll("#play-dice .die")].map((d) => [d.dataset.die,
    getComputedStyle(d).backgroundColor]),
  sums: sheet.querySelectorAll(".sheet-foot .sum-box").length,
};
"""


def test_a_three_row_sheet_of_mixed_colours_is_drawn_from_the_variant(site, browser):
    """The page draws the variant's rows by name, a mixed row's cells each in its die's colour
    (a colour without shades of its own as CSS names it, an unknown name grey), and its dice."""
    app, url = site
    games = app.state.games
    # A sheet of three rows has kernels of its own (the rules know R when they compile). A whole
    # game of it played here first compiles what a move needs, waiting as long as that takes (in
    # the full suite another test's background preparation may hold numba's compiler lock for
    # minutes), so that the page's waits below wait on the page alone.
    warm_up = NewGame(TableOptions(num_players=1, variant=TRIO), (Seat(HUMAN, "You"),), seed=4)
    session = Game(games.new_id(), warm_up, make_bots(warm_up)).session
    session.advance()
    while not session.over:
        session.decide(0, session.legal()[0]["action"])
    session.record()
    new = NewGame(TableOptions(num_players=1, variant=TRIO), (Seat(HUMAN, "You"),), seed=3)
    game = Game(games.new_id(), new, make_bots(new))
    games.add(game.id, game)
    browser.get("about:blank")
    browser.get(f"{url}#join={game.id}.{game.seat_secrets[0]}")
    wait(browser, "return document.body.dataset.turn === 'you'")
    idle(browser)
    drawn = browser.execute_script(SHEET_DRAWN)
    red, purple, grey = "rgb(211, 47, 58)", "rgb(128, 0, 128)", "rgb(138, 143, 152)"
    assert [r[:2] for r in drawn["rows"]] == [["top", "Top"], ["middle", "Middle"], ["bottom", "Bottom"]]
    assert [r[2] for r in drawn["rows"]] == ["row mixed", "row mixed", "row custom"]
    assert drawn["rows"][2][3] == purple  # bottom: every cell purple, the row painted so
    assert [(c[0], c[2]) for c in drawn["top"]] == [("red", red), ("purple", purple), ("tangerine", grey)]
    assert "red" in drawn["top"][0][1].split() and "custom" in drawn["top"][1][1].split()
    assert drawn["dice"] == [["white", "rgb(255, 255, 255)"]] * 2 + [["red", red], ["purple", purple],
                                                                     ["tangerine", grey]]
    assert drawn["sums"] == 3 + 2  # a box per row, then the penalties and the total
    label = browser.find_element(By.CSS_SELECTOR, ".row[data-row='top'] .cell[data-number='3']").get_attribute(
        "aria-label")
    assert label.startswith("Top 3 (the purple die)")
    option = browser.find_element(By.CSS_SELECTOR, "#play-options .option:first-child")
    mark = game.session.legal()[0]["mark"]
    assert option.text.split("\n")[-1] == f"Cross {mark['row']} {mark['number']}"
    option.click()  # and the game goes on from the page
    taken_or_refused = "+document.body.dataset.decisions >= 1 || !!document.querySelector('#toast.bad:not([hidden])')"
    wait(browser, f"return {taken_or_refused}", timeout=180)
    toast = browser.find_element(By.ID, "toast")
    assert game.decisions >= 1, f"the move was not taken: {toast.text if toast.is_displayed() else '(no toast)'}"


# --- getting ready ---------------------------------------------------------------------------


class SlowItem:
    """A preparation item that reports the progress the test gives (`report`) and finishes when
    the test sets `finish`."""

    def __init__(self):
        self.running = threading.Event()
        self.finish = threading.Event()
        self.report = None

    def __call__(self, progress):
        self.report = progress
        progress(0.4)
        self.running.set()
        assert self.finish.wait(timeout=120)


STATUS = "const s = document.getElementById('ready-status'); return s.hidden ? null : s.textContent"
SEAT_LABELS = "return [...document.querySelectorAll('select[name=bot1] option')].map((o) => [o.value, o.textContent])"


def test_a_game_whose_bot_is_getting_ready_starts_at_once_and_begins_by_itself(browser):
    """A server still preparing greedy: the page's status shows the progress and the seat menu
    says greedy is getting ready; a game against it starts at once, its table says what it waits
    for and follows the progress, and the game begins by itself once greedy is ready."""
    greedy = SlowItem()
    prepare = Preparation([Task("tables", "compiling the game's kernels", lambda progress: None),
                           Task("greedy", "compiling the greedy bot's kernels", greedy)])
    app = create_app(max_games=2, prepare=prepare)
    try:
        with serving(app) as url:
            assert greedy.running.wait(10)
            open_page(browser, url)
            assert wait(browser, STATUS) == "Getting ready: compiling the greedy bot's kernels 40%"
            labels = dict(browser.execute_script(SEAT_LABELS))
            assert labels["greedy"] == "greedy (getting ready)" and labels["random"] == "random"
            browser.execute_script("""const sel = document.querySelector('select[name=bot1]');
              sel.value = 'greedy'; sel.dispatchEvent(new Event('change'));
              document.getElementById('speed').value = '0';""")
            browser.find_element(By.ID, "start-game").click()
            wait(browser, "return document.body.dataset.turn === 'getting-ready'")
            assert browser.find_element(By.ID, "play-banner").text == (
                "greedy is getting ready (compiling the greedy bot's kernels: 40%). "
                "The game begins by itself as soon as it is ready.")
            [(game_id, game)] = app.state.games.items()
            assert not game.begun and browser.execute_script("return S.game.id") == game_id
            assert browser.find_element(By.ID, "start-game").is_enabled()  # the form is free again
            greedy.report(0.7)
            wait(browser, "return document.getElementById('play-banner').textContent.includes('70%')")
            greedy.finish.set()
            wait(browser, "return ['you', 'over'].includes(document.body.dataset.turn)", timeout=120)
            assert game.begun and browser.execute_script("return S.game.seats[1].bot") == "greedy"
            assert browser.find_elements(By.CSS_SELECTOR, "#play-sheets .sheet[data-seat='0'] .cell")
            wait(browser, "return document.getElementById('ready-status').hidden")
            assert dict(browser.execute_script(SEAT_LABELS))["greedy"] == "greedy"
    finally:
        greedy.finish.set()


def test_a_server_offers_a_sheet_of_its_own_on_the_new_game_form(browser):
    """``qwixx serve --variant FILE``: the form lists the server's variants from /api/info (a
    sheet of the user's added beside the two of the page), asks the lucky rule only for a variant
    with lucky numbers, and starts a game of the sheet."""
    app = create_app(max_games=3, variants=["classic", "longo", TRIO.name])
    with serving(app) as url:
        browser.get("about:blank")
        open_page(browser, url)
        pill = browser.find_element(By.CSS_SELECTOR, f"input[name=variant][value='{TRIO.name}'] + span")
        assert pill.text.startswith(TRIO.name) and "a sheet of your own" in pill.text
        lucky = browser.find_element(By.ID, "lucky-row")
        browser.find_element(By.CSS_SELECTOR, "input[name=variant][value='longo'] + span").click()
        assert lucky.is_displayed()
        pill.click()
        assert not lucky.is_displayed()
        browser.find_element(By.CSS_SELECTOR, "input[name=players][value='1'] + span").click()
        browser.find_element(By.ID, "start-game").click()
        wait(browser, "return document.body.dataset.turn === 'you'", timeout=180)  # its kernels may compile
        assert f" · {TRIO.name} · 1 player" in browser.find_element(By.ID, "play-info").text
        ((_, game),) = app.state.games.items()
        assert game.new.table.variant == TRIO.name


# Whether the element at the centre of each of these is that element (or inside it): nothing
# drawn over it. The page scrolled to its end first, as a player on a phone would; the status
# box lets clicks through (pointer-events: none), which elementFromPoint would look through too,
# so it is made to catch them for the look.
UNCOVERED = """
window.scrollTo(0, document.documentElement.scrollHeight);
const status = document.getElementById('ready-status');
status.style.pointerEvents = 'auto';
const out = arguments[0].map((id) => {
  const el = document.getElementById(id), box = el.getBoundingClientRect();
  const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  return [id, !!top && (top === el || el.contains(top) || top.contains(el) && top.tagName === 'LABEL')];
});
status.style.pointerEvents = '';
return out;
"""


def test_the_getting_ready_status_covers_nothing_at_400_px(browser):
    """At 400 px the fixed "Getting ready" box (22 items, 120 px) covered "Who starts" and the
    Start button, scrolled to the bottom or not. Now it names the item being prepared and
    three that wait, and the page's foot gets its height: at the end of the page both are
    uncovered, and the Start button starts the game."""
    first = SlowItem()
    waiting = [Task(name, f"compiling the {name} bot's kernels", lambda progress: None)
               for name in bots.available() if name != "random"]
    prepare = Preparation([Task("tables", "compiling the game's kernels", lambda progress: None),
                           Task("random", "compiling the random bot's kernels", first), *waiting])
    app = create_app(max_games=2, prepare=prepare)
    try:
        with serving(app) as url:
            assert first.running.wait(10)
            viewport(browser, 400, 760)
            open_page(browser, url)
            names = [task.name for task in waiting]
            assert wait(browser, STATUS) == (f"Getting ready: compiling the random bot's kernels 40% · next: "
                                             f"{', '.join(names[:3])} and {len(names) - 3} more")
            assert dict(browser.execute_script(UNCOVERED, ["start-player", "start-game"])) == {
                "start-player": True, "start-game": True}
            browser.execute_script("""const sel = document.querySelector('select[name=bot1]');
              sel.value = 'random'; sel.dispatchEvent(new Event('change'));
              document.getElementById('speed').value = '0';""")
            browser.find_element(By.ID, "start-game").click()  # against random, which is getting ready
            wait(browser, "return document.body.dataset.turn === 'getting-ready'")
            assert len(app.state.games) == 1
    finally:
        first.finish.set()
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


# Each cell that starts a line (the leftmost of its row's cells: a narrow sheet wraps a row in
# two), given a key badge as a legal cell has: the ones whose badge reaches over the row's name
# (the narrow sheet's initial), and how many were tried.
KEYS_OVER_NAMES = """
const out = [];
let tried = 0;
for (const row of document.querySelectorAll(".sheet[data-seat='0'] .row")) {
  const cells = [...row.querySelectorAll('.cell')];
  const left = Math.min(...cells.map((c) => c.getBoundingClientRect().left));
  for (const cell of cells.filter((c) => c.getBoundingClientRect().left < left + 1)) {
    const key = document.createElement('span');
    key.className = 'key';
    key.textContent = '9';
    cell.append(key);
    const name = row.querySelector('.row-name').getBoundingClientRect(), box = key.getBoundingClientRect();
    if (box.left < name.right && box.right > name.left && box.top < name.bottom && box.bottom > name.top) {
      out.push(cell.getAttribute('aria-label'));
    }
    key.remove();
    tried++;
  }
}
return [out, tried];
"""
# A compact sheet's crossed numbers: each on an opaque chip of its own (the cross's arms around it).
CROSSED_CHIPS = """
return [...document.querySelectorAll('.sheet.compact .cell.crossed .num')].map((num) => {
  const [r, g, b, a = 1] = getComputedStyle(num).backgroundColor.match(/[\\d.]+/g).map(Number);
  return [num.textContent, r > 230 && g > 230 && b > 230 && a >= 0.9];
});
"""


def test_a_key_badge_leaves_the_row_initial_and_a_crossed_number_reads_on_a_compact_sheet(site, browser):
    """At 400 px the option's key badge of a cell that starts a line covered the row's
    initial, and a crossed two-digit number on a compact sheet was hard to tell from the
    cross. Now no badge reaches over a row's name, and each crossed number of a compact
    sheet sits on a white chip."""
    app, url = site
    game = longo_with_five(app)
    try:
        viewport(browser, 400)
        browser.get("about:blank")
        browser.get(f"{url}#join={game.id}.{game.seat_secrets[0]}")
        wait(browser, "return document.body.dataset.turn === 'you'")
        over, tried = browser.execute_script(KEYS_OVER_NAMES)
        assert over == [] and tried >= 8, over  # both lines' first cells of each of its 4 rows
        chips = browser.execute_script(CROSSED_CHIPS)
        assert chips and all(ok for _, ok in chips), chips
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
