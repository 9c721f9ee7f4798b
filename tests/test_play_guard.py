"""The play server's guard and background preparation (qwixx_env/play/guard.py, prepare.py):
each defect of a request refused with a 4xx (or a 503 "getting ready") that names it, and
the games as they were."""

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("starlette", reason="the play extra (starlette) is not installed")
pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2 (the test extra)")

from numba.core.compiler_lock import global_compiler_lock  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402
from starlette.routing import WebSocketRoute  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402
from test_play_server import play_to_end, refused, sit, state_of  # noqa: E402 (the server tests' helpers)

from qwixx_env.core import compile  # noqa: E402
from qwixx_env.core.compile import cache_root  # noqa: E402
from qwixx_env.core.options import TableOptions  # noqa: E402
from qwixx_env.play import guard, server  # noqa: E402
from qwixx_env.play import prepare as prepare_module  # noqa: E402
from qwixx_env.play.games import Game, PlayError  # noqa: E402
from qwixx_env.play.guard import MAX_DEPTH, hosts_for, public_message  # noqa: E402
from qwixx_env.play.prepare import Preparation, Task  # noqa: E402
from qwixx_env.play.server import create_app  # noqa: E402
from qwixx_env.play.session import HUMAN, PlaySession  # noqa: E402
from qwixx_env.play.terminal import EXIT_INTERRUPTED  # noqa: E402

TOKEN = "a-test-token-of-32-url-safe-chars"
GAME = {"players": 2, "bots": ["greedy"], "seed": 3}
SOLO = {"players": 1, "bots": [], "seed": 4}


@pytest.fixture
def client():
    with TestClient(create_app(max_games=5)) as c:
        yield c


def new_game(client, body=GAME, **kw):
    """A new game; the client acts as its person's seat from now on, as the page does."""
    r = client.post("/api/games", json=body, **kw)
    assert r.status_code == 201, r.text
    game = r.json()
    sit(client, game["id"], game["joins"][0]["secret"])
    return game


def held(client):
    return [gid for gid, _ in client.app.state.games.items()]


class Gate:
    """A preparation item that works until the test opens the gate, counting its runs; `report`
    is its progress callback, for the test to move it on."""

    def __init__(self, progress=0.4):
        self.opened = threading.Event()
        self.running = threading.Event()
        self.runs = 0
        self.fraction = progress
        self.report = None

    def __call__(self, progress):
        self.runs += 1
        self.report = progress
        progress(self.fraction)
        self.running.set()
        assert self.opened.wait(timeout=300)  # the test opens it; a cold kernel cache makes its games slow


# --- the body ------------------------------------------------------------------------------


def test_a_deeply_nested_body_is_a_400_naming_the_limit_everywhere(client):
    deep = b"[" * 3000 + b"]" * 3000  # about 6 KB
    game = new_game(client)
    before, games = state_of(client, game["id"]), held(client)
    for path in ("/api/games", f"/api/games/{game['id']}/moves", "/api/replays"):
        refused(client.post(path, content=deep, headers={"content-type": "application/json"}),
                400, "nested deeper than", str(MAX_DEPTH))
    assert state_of(client, game["id"]) == before and held(client) == games
    assert len(client.app.state.replays) == 0


def test_the_depth_scan_skips_strings_and_every_parse_failure_is_a_400():
    assert guard.json_depth_problem(b'{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"["}') is None
    assert guard.json_depth_problem(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) is None
    assert "deeper than" in guard.json_depth_problem(b"[" * (MAX_DEPTH + 1))
    for bad in (b"\xff\xfe", b"{", b"", b"[1,]", b"NaN]"):
        with pytest.raises(PlayError) as err:
            guard.parse_json(bad)
        assert err.value.status == 400 and "not JSON" in err.value.message


# --- cross-site requests -------------------------------------------------------------------


def test_a_cross_site_text_plain_post_is_refused_and_creates_nothing(client):
    game = new_game(client)
    before, games = state_of(client, game["id"]), held(client)
    form = json.dumps(GAME)  # what a page elsewhere can send without asking: text/plain, its own Origin
    refused(client.post("/api/games", content=form, headers={"content-type": "text/plain",
                                                             "origin": "http://evil.example"}), 403, "origin")
    refused(client.post("/api/games", content=form, headers={"content-type": "text/plain"}),
            415, "content-type", "'text/plain'", "application/json")
    refused(client.post(f"/api/games/{game['id']}/moves", content=b'{"seat": 0, "action": 44}'),
            415, "content-type", "application/json")
    assert held(client) == games and state_of(client, game["id"]) == before


def test_a_post_from_a_foreign_origin_is_a_403_and_from_the_page_itself_it_works(client):
    games = held(client)
    for origin in ("http://evil.example", "null", "http://testserver:8080", "https://testserver"):
        refused(client.post("/api/games", json=GAME, headers={"origin": origin}), 403, "origin", repr(origin))
    assert held(client) == games
    new_game(client, headers={"origin": "http://testserver"})
    new_game(client, headers={"origin": "http://testserver:80"})
    assert len(held(client)) == len(games) + 2


# --- the Host header -----------------------------------------------------------------------


@pytest.mark.parametrize("bind", ["127.0.0.1", "0.0.0.0"])
def test_a_foreign_host_header_is_refused_for_every_bind(bind):
    hosts = hosts_for(bind, ["qwixx.lan"])
    with TestClient(create_app(max_games=2, allowed_hosts=hosts), base_url="http://127.0.0.1:8000") as c:
        assert c.get("/api/info").status_code == 200
        assert c.get("/api/info", headers={"host": "qwixx.lan:8000"}).status_code == 200  # --allow-host
        for host in ("attacker.example", "attacker.example:8000", "127.0.0.1.evil.example"):
            refused(c.get("/api/info", headers={"host": host}), 400, "host", host, "--allow-host")
        refused(c.post("/api/games", json=GAME, headers={"host": "attacker.example"}), 400, "host")
        assert len(c.app.state.games) == 0


def test_the_names_of_a_bind_address():
    assert hosts_for("127.0.0.1") == ["127.0.0.1", "localhost", "[::1]", "::1"]
    assert hosts_for("127.0.0.2") == ["127.0.0.1", "localhost", "[::1]", "::1", "127.0.0.2"]
    assert "192.168.1.5" in hosts_for("192.168.1.5") and "attacker.example" not in hosts_for("192.168.1.5")
    wildcard = hosts_for("0.0.0.0")
    assert socket.gethostname().lower() in wildcard and "localhost" in wildcard
    assert "[fe80::1]" in hosts_for("fe80::1")


# --- the token -----------------------------------------------------------------------------


@pytest.fixture
def locked():
    with TestClient(create_app(max_games=5, token=TOKEN), follow_redirects=False) as c:
        yield c


def test_without_the_token_every_request_is_a_401(locked):
    for path in ("/api/info", "/api/games", f"/api/games?token={TOKEN[:-1]}"):
        refused(locked.get(path), 401, "token")
    assert locked.get("/static/app.js").status_code == 401
    refused(locked.post("/api/games", json=GAME), 401, "no token")
    refused(locked.post("/api/games", json=GAME, headers={"authorization": "Bearer wrong"}), 401, "wrong token")
    page = locked.get("/")
    assert page.status_code == 401 and "text/html" in page.headers["content-type"] and "?token=" in page.text
    assert len(locked.app.state.games) == 0


def test_the_token_in_the_address_becomes_a_cookie_and_a_script_sends_it_as_a_header(locked):
    first = locked.get(f"/?token={TOKEN}&x=1")
    assert first.status_code == 303 and first.headers["location"] == "/?x=1"
    cookie = first.headers["set-cookie"]
    assert TOKEN in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert locked.get("/").status_code == 200  # the cookie, which the client now keeps
    game = new_game(locked)
    locked.cookies.clear()
    refused(locked.get(f"/api/games/{game['id']}"), 401, "token")
    bearer = {"authorization": f"Bearer {TOKEN}"}
    assert locked.get(f"/api/games/{game['id']}", headers=bearer).status_code == 200
    new_game(locked, headers=bearer)
    assert locked.post(f"/api/games?token={TOKEN}", json=GAME).status_code == 201
    assert locked.get(f"/api/games?token={TOKEN}").status_code == 200  # a script's call: no redirect
    assert len(locked.app.state.games) == 3


def test_a_join_link_carries_the_token(locked):
    game = new_game(locked, headers={"authorization": f"Bearer {TOKEN}"})
    link = game["joins"][0]["link"]
    assert link.startswith(f"/?token={TOKEN}#join={game['id']}.")
    locked.cookies.clear()
    opened = locked.get(link.split("#")[0])  # a browser keeps the #join fragment across the redirect
    assert opened.status_code == 303 and opened.headers["location"] == "/"


def test_a_token_must_be_long_and_url_safe():
    with pytest.raises(ValueError, match="5 characters"):
        create_app(token="short")
    with pytest.raises(ValueError, match="URL|A-Z"):
        guard.check_token("a token with spaces in it, long enough")
    assert len(guard.new_token()) >= 32


# --- what an answer shows ------------------------------------------------------------------


def test_refusals_never_show_a_server_path(client):
    message = refused(client.post("/api/games", json={"players": 2, "bots": ["nobot"]}), 400, "'nobot'")
    assert os.sep + "home" not in message and str(guard.Path(server.__file__).parent) not in message
    paths = [str(cache_root() / "solo-classic.npz"), server.__file__, os.path.expanduser("~/x.json"),
             "/srv/qwixx/t.npz"]
    scrubbed = public_message(f"directory: {paths[0]!r} is not writable; {paths[1]}; {paths[2]}; {paths[3]}")
    assert not any(p in scrubbed for p in paths) and "/" not in scrubbed.replace("<", "").split(";")[-1]
    assert "<cache>" in scrubbed and "<qwixx_env>" in scrubbed and "~" in scrubbed and "<path>" in scrubbed
    assert public_message("seed: got 7; expected 0 to 2**63 - 1, http://x/y") == "seed: got 7; expected 0 to 2**63 - 1, http://x/y"


def test_a_failed_preparation_is_reported_without_its_path():
    def fails(progress):
        raise ValueError(f"directory: {str(cache_root())!r} is not writable; expected a folder")

    prepare = Preparation([Task("solo table", "solving the solo table", fails)])
    with TestClient(create_app(max_games=2, prepare=prepare)) as c:
        assert prepare.wait(10)
        game = new_game(c, SOLO)
        message = refused(c.get(f"/api/games/{game['id']}/coach"), 503, "not available", "failed", "<cache>")
        assert str(cache_root()) not in message
        assert c.get("/api/info").json()["ready"]["solo table"]["state"] == "failed"


def test_an_unexpected_exception_is_a_json_500_without_a_traceback_or_path(client, monkeypatch, caplog):
    game = new_game(client)

    def broken(self, *args, **kwargs):
        raise RuntimeError(f"broken at {server.__file__}")

    monkeypatch.setattr(Game, "view", broken)
    r = client.get(f"/api/games/{game['id']}")
    assert r.status_code == 500 and r.json() == {"error": guard.INTERNAL_ERROR}
    assert "Traceback" not in r.text and server.__file__ not in r.text
    assert "broken at" in caplog.text  # the server's log keeps it


# --- getting ready -------------------------------------------------------------------------


def waiting_game(client, body=GAME):
    """A new game whose bots are not ready: created at once (201), not begun, saying what it waits for."""
    game = new_game(client, body)
    assert game["begun"] is False and game["getting_ready"]["failed"] is False, game
    assert "snapshot" not in game and game["legal"] == [] and game["decisions"] == 0
    return game


def test_a_game_whose_bot_is_getting_ready_starts_at_once_and_begins_by_itself():
    """A game against greedy while greedy's kernels compile: the start answers at once with
    the game (its join link, "getting ready" and the progress), what needs the game itself is
    a 409 that says so, other games play on unchanged, and once greedy is ready the next look
    at the game finds it begun and playable."""
    gate = Gate()
    prepare = Preparation([Task("tables", "compiling the game's kernels", lambda p: None),
                           Task("greedy", "compiling the greedy bot's kernels", gate)])
    with TestClient(create_app(max_games=5, prepare=prepare)) as c:
        assert gate.running.wait(10)
        solo = new_game(c, SOLO)  # a game of nothing unprepared begins at once
        game = waiting_game(c)
        assert game["getting_ready"]["message"] == "greedy is getting ready (compiling the greedy bot's kernels: 40%)"
        assert game["joins"][0]["seat"] == 0 and len(c.app.state.games) == 2
        sit(c, solo["id"], solo["joins"][0]["secret"])
        before = state_of(c, solo["id"])
        sit(c, game["id"], game["joins"][0]["secret"])
        again = c.get(f"/api/games/{game['id']}").json()
        assert again["begun"] is False and again["getting_ready"] == game["getting_ready"]
        refused(c.post(f"/api/games/{game['id']}/moves", json={"seat": 0, "action": 0}), 409, "getting ready")
        refused(c.get(f"/api/games/{game['id']}/record"), 409, "getting ready", "begins by itself")
        refused(c.get(f"/api/games/{game['id']}/coach"), 409, "getting ready")
        listed = {g["id"]: g for g in c.get("/api/games").json()["games"]}
        assert listed[game["id"]]["begun"] is False and listed[game["id"]]["decisions"] == 0
        gate.report(0.7)
        assert "70%" in c.get(f"/api/games/{game['id']}").json()["getting_ready"]["message"]
        gate.opened.set()
        assert prepare.wait(10)
        begun = c.get(f"/api/games/{game['id']}").json()
        assert begun["begun"] is True and "getting_ready" not in begun and begun["to_decide"] == 0
        assert begun["seats"][1]["bot"] == "greedy" and begun["legal"]
        assert play_to_end(c, begun)["over"] is True
        sit(c, solo["id"], solo["joins"][0]["secret"])
        assert state_of(c, solo["id"]) == before  # the other game, as it was


def test_the_game_begins_as_a_game_started_when_all_was_ready():
    """Beginning later changes nothing of the game: the same seed and bots give the same first
    roll and the same bots' decisions as a game started with everything ready."""
    gate = Gate()
    prepare = Preparation([Task("heuristic", "compiling the heuristic bot's kernels", gate)])
    body = {"players": 3, "bots": ["heuristic", "greedy"], "seed": 8, "start_player": 2}
    with TestClient(create_app(max_games=5, prepare=prepare)) as c:
        assert gate.running.wait(10)
        late = waiting_game(c, body)
        gate.opened.set()
        assert prepare.wait(10)
        late = c.get(f"/api/games/{late['id']}").json()
    with TestClient(create_app(max_games=5)) as c:
        now = new_game(c, body)
    assert late["begun"] and late["decisions"] == now["decisions"] > 0  # the bots played up to seat 0
    assert late["snapshot"] == now["snapshot"] and late["events"] == now["events"]


def test_concurrent_first_callers_are_answered_at_once_and_one_computation_runs():
    gate = Gate(progress=0.0)
    prepare = Preparation([Task("solo table", "solving the solo table", gate)])
    with TestClient(create_app(max_games=5, prepare=prepare)) as c:
        assert gate.running.wait(10)
        solo = new_game(c, SOLO)
        answers = []

        def ask(path):
            versus = {**GAME, "bots": ["solo_optimal"]}
            answers.append(c.get(path) if path.endswith("coach") else c.post(path, json=versus))

        callers = [threading.Thread(target=ask, args=[p]) for p in
                   (f"/api/games/{solo['id']}/coach", "/api/games", f"/api/games/{solo['id']}/coach")]
        for t in callers:
            t.start()
        for t in callers:
            t.join(timeout=10)
        assert not any(t.is_alive() for t in callers) and gate.runs == 1  # answered while the one solve runs
        assert sorted(a.status_code for a in answers) == [201, 503, 503]
        assert all("getting ready (solving the solo table: 0%)" in (a.json().get("error") or
                   a.json()["getting_ready"]["message"]) for a in answers)
        assert len(c.app.state.games) == 2
        gate.opened.set()
        assert prepare.wait(10) and gate.runs == 1


def test_a_game_whose_item_fails_while_it_waits_says_so_and_new_ones_are_refused():
    gate = Gate()

    def fails(progress):
        gate(progress)
        raise ValueError("the solver ran out of memory")

    prepare = Preparation([Task("solo table", "solving the solo table", fails)])
    with TestClient(create_app(max_games=5, prepare=prepare)) as c:
        assert gate.running.wait(10)
        game = waiting_game(c, {**GAME, "bots": ["solo_optimal"]})
        gate.opened.set()
        assert prepare.wait(10)
        view = c.get(f"/api/games/{game['id']}").json()
        assert view["begun"] is False and view["getting_ready"] == {
            "message": "solo_optimal is not available: preparing it failed (the solver ran out of memory); "
                       "the server's log says more", "failed": True}
        refused(c.post("/api/games", json={**GAME, "bots": ["solo_optimal"]}), 503, "not available", "out of memory")
        assert len(c.app.state.games) == 1 and new_game(c)["begun"] is True  # other bots play on


def test_a_game_kept_while_getting_ready_resumes_after_a_restart(tmp_path):
    gate = Gate()
    prepare = Preparation([Task("greedy", "compiling the greedy bot's kernels", gate)])
    try:
        with TestClient(create_app(max_games=5, prepare=prepare, store=tmp_path)) as c:
            assert gate.running.wait(10)
            game = waiting_game(c)
        path = tmp_path / f"{game['id']}.json"
        assert json.loads(path.read_text())["record"] is None and path.stat().st_mode & 0o777 == 0o600
    finally:
        gate.opened.set()
    with TestClient(create_app(max_games=5, store=tmp_path)) as c:
        assert c.app.state.store_problems == []
        sit(c, game["id"], game["joins"][0]["secret"])
        view = c.get(f"/api/games/{game['id']}").json()
        assert view["begun"] is True and view["legal"] and view["seats"][1]["bot"] == "greedy"


def test_preparation_runs_its_items_once_in_order_and_survives_a_failure():
    order = []
    prepare = Preparation([Task("a", "doing a", lambda p: order.append("a")),
                           Task("b", "doing b", lambda p: 1 / 0),
                           Task("c", "doing c", lambda p: order.append("c"))])
    prepare.start()
    prepare.start()
    assert prepare.wait(10) and order == ["a", "c"]
    assert [s["state"] for s in prepare.status().values()] == ["ready", "failed", "ready"]
    with pytest.raises(ValueError, match="each item once"):
        Preparation([Task("a", "x", print), Task("a", "y", print)])


@pytest.mark.slow
def test_a_solo_game_works_once_the_solo_table_is_ready(classic):
    """The real solo table (the session's `classic` fixture) handed over by a slow preparation."""
    gate = Gate()
    prepare = Preparation([Task("solo table", "solving the solo table", gate)])
    with TestClient(create_app(max_games=5, prepare=prepare)) as c:
        assert gate.running.wait(10)
        solo = new_game(c, SOLO)
        refused(c.get(f"/api/games/{solo['id']}/coach"), 503, "the coach is getting ready", "40%")
        versus = waiting_game(c, {**GAME, "bots": ["solo_optimal"]})
        assert versus["getting_ready"]["message"] == "solo_optimal is getting ready (solving the solo table: 40%)"
        gate.opened.set()
        assert prepare.wait(10)
        sit(c, solo["id"], solo["joins"][0]["secret"])
        assert c.get(f"/api/games/{solo['id']}/coach").json()["source"]["name"] == "solver"
        sit(c, versus["id"], versus["joins"][0]["secret"])
        versus = c.get(f"/api/games/{versus['id']}").json()
        assert versus["begun"] and versus["seats"][1]["bot"] == "solo_optimal"


# --- no request writes a file --------------------------------------------------------------


def test_no_request_writes_a_file(tmp_path, monkeypatch):
    """Creating, playing, reviewing and replaying games, and a solo coach that is not ready:
    the home and cache folders stay empty. (The kernel cache's folder is fixed when the
    package is imported; the preparation is what fills it, never a request.)"""
    home = tmp_path / "home"
    for name, folder in (("HOME", home), ("XDG_CACHE_HOME", home / "cache"), ("XDG_DATA_HOME", home / "data"),
                         ("QWIXX_ENV_CACHE", home / "qwixx")):
        monkeypatch.setenv(name, str(folder))
    home.mkdir()
    gate = Gate()
    prepare = Preparation([Task("solo table", "solving the solo table", gate)])
    with TestClient(create_app(max_games=5, prepare=prepare)) as c:
        game = new_game(c)
        assert c.get(f"/api/games/{game['id']}/coach").status_code == 200
        game = play_to_end(c, game)
        assert c.get(f"/api/games/{game['id']}/summary").status_code == 200
        record = c.get(f"/api/games/{game['id']}/record").json()
        assert c.post("/api/replays", json=record).status_code == 201
        solo = new_game(c, SOLO)
        refused(c.get(f"/api/games/{solo['id']}/coach"), 503, "getting ready")
        gate.opened.set()
    assert list(home.rglob("*")) == []


# --- serve ---------------------------------------------------------------------------------


class Recorded(server._Server):  # noqa: SLF001 (the test stops the server it started)
    made = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        Recorded.made.append(self)


def free_port(host="127.0.0.1"):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running(monkeypatch, tasks=(), **options):
    """`server.serve(**options)` in a thread, preparing `tasks` (default nothing) in this
    process (the child process serve uses is tested on its own), until the block ends."""
    monkeypatch.setattr(server, "default_tasks", lambda catalogue: list(tasks))
    monkeypatch.setattr(server, "Preparation", lambda items, in_child=False: Preparation(items))


    monkeypatch.setattr(server, "_Server", Recorded)
    made = len(Recorded.made)
    runner = threading.Thread(target=server.serve, kwargs=options, daemon=True)
    runner.start()
    deadline = time.time() + 20
    while not (len(Recorded.made) > made and Recorded.made[-1].started) and time.time() < deadline:
        time.sleep(0.05)
    assert len(Recorded.made) > made and Recorded.made[-1].started, "the server did not start"
    try:
        yield
    finally:
        Recorded.made[-1].should_exit = True
        runner.join(timeout=10)


def test_serve_prints_its_address_with_the_token_once_it_listens(monkeypatch, capsys):
    port = free_port()
    with running(monkeypatch, port=port, token=TOKEN):
        out = capsys.readouterr().out
    assert f"http://127.0.0.1:{port}/?token={TOKEN}" in out


def test_serve_answers_at_the_loopback_address_it_was_given(monkeypatch, capsys):
    """``qwixx serve --host 127.0.0.2`` printed its address, and its Host check refused it
    (it knew the usual loopback names only). Now a game starts there; another name is refused
    and adds none."""
    try:
        port = free_port("127.0.0.2")
    except OSError:
        pytest.skip("this system binds 127.0.0.1 only, not the rest of 127.0.0.0/8")

    def call(method, path, body=None, host=None):
        conn = http.client.HTTPConnection("127.0.0.2", port, timeout=20)
        headers = {"Content-Type": "application/json", **({"Host": host} if host else {})}
        conn.request(method, path, None if body is None else json.dumps(body), headers)
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read())

    with running(monkeypatch, host="127.0.0.2", port=port):
        assert f"the page is at http://127.0.0.2:{port}/ " in capsys.readouterr().out
        status, game = call("POST", "/api/games", GAME)
        assert status == 201, game
        assert call("GET", f"/api/games/{game['id']}")[0] == 200
        status, answer = call("POST", "/api/games", GAME, host="attacker.example")
        assert status == 400 and "host" in answer["error"]
        assert len(Recorded.made[-1].config.app.state.games) == 1


# `qwixx serve` in a fresh process, preparing nothing and reading no checkpoint: what it
# prints and how it stops, not what it prepares
SERVE = """
import sys
from qwixx_env.cli import main
from qwixx_env.play import server
server.default_tasks = lambda catalogue: []
server.bot_catalogue = lambda variants=(): []
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow  # a fresh Python process
@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child process needs a POSIX system")
def test_ctrl_c_stops_serve_with_one_line(tmp_path):
    """Ctrl-C printed a 31-line traceback (uvicorn raises KeyboardInterrupt once it has shut
    down); now one line, and the kept game is as it was."""
    port = free_port()
    env = dict(os.environ)
    if compile.kernel_cache_dir():  # this session's compiled kernels, whatever QWIXX_ENV_CACHE a fixture set since
        env["NUMBA_CACHE_DIR"] = compile.kernel_cache_dir()
    child = subprocess.Popen(
        [sys.executable, "-c", SERVE, "serve", "--port", str(port), "--store", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        # Ctrl-C's default action, even where this test runs with SIGINT ignored (a background job)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert "the page is at" in child.stdout.readline()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        conn.request("POST", "/api/games", json.dumps(GAME), {"Content-Type": "application/json"})
        answer = conn.getresponse()
        assert answer.status == 201
        game = json.loads(answer.read())
        kept = (tmp_path / f"{game['id']}.json").read_bytes()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        child.kill()
    assert child.returncode == EXIT_INTERRUPTED and "Traceback" not in err, err
    assert out.splitlines() == [f"qwixx serve: stopped; its games are kept in {tmp_path}, resumed at the next start"]
    assert (tmp_path / f"{game['id']}.json").read_bytes() == kept


def test_serve_prints_nothing_when_the_port_is_taken(monkeypatch, capsys):
    monkeypatch.setattr(server, "default_tasks", lambda catalogue: [])
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(SystemExit):
            server.serve(port=taken.getsockname()[1])
    assert "the page is at" not in capsys.readouterr().out


def test_the_printed_address_beyond_loopback_carries_a_token():
    urls = server.page_urls("0.0.0.0", 8000, TOKEN)
    assert urls[-1] == f"http://127.0.0.1:8000/?token={TOKEN}"
    assert all(u.endswith(f":8000/?token={TOKEN}") and "0.0.0.0" not in u for u in urls)
    assert server.page_urls("::1", 8000, None) == ["http://[::1]:8000/"]


def test_a_websocket_handshake_passes_the_same_checks():
    async def echo(ws):
        await ws.accept()
        await ws.send_text("open")
        await ws.close()

    app = Starlette(routes=[WebSocketRoute("/ws", echo)], middleware=[Middleware(guard.Guard, token=TOKEN)])
    with TestClient(app) as c:
        with c.websocket_connect(f"/ws?token={TOKEN}") as ws:
            assert ws.receive_text() == "open"
        for path, headers in (("/ws", {}), (f"/ws?token={TOKEN}", {"origin": "http://evil.example"})):
            with pytest.raises(WebSocketDisconnect) as closed, c.websocket_connect(path, headers=headers):
                pass
            assert closed.value.code == 1008


# --- no request waits on the compiler or reads a checkpoint --------------------------------


def call(port, method, path, body=None, secret=None):
    """One request to a real server (`running`): its status and JSON answer. Its timeout is a
    bound on a request that would otherwise wait for the test's held lock forever."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json", **({"X-Qwixx-Seat": secret} if secret else {})}
    conn.request(method, path, None if body is None else json.dumps(body), headers)
    answer = conn.getresponse()
    return answer.status, json.loads(answer.read())


def wait_until(ready, seconds=60):
    deadline = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < deadline, "not within the test's bound"
        time.sleep(0.05)


def seen(port, game):
    """What a look at `game` shows its person (everything a request must leave as it was)."""
    status, view = call(port, "GET", f"/api/games/{game['id']}", secret=game["joins"][0]["secret"])
    assert status == 200, view
    return {k: view.get(k) for k in ("begun", "snapshot", "decisions", "events_total", "legal", "to_decide", "over")}



def test_api_info_answers_from_the_catalogue_serve_read_at_start(monkeypatch):
    """`/api/info` read every pretrained bot's checkpoint inside the first request (6-12 s on
    every start) although `serve` had read them all before listening. Now `serve` reads them
    once and `/api/info` answers from that; a game in play is unchanged by it."""
    reads = []

    def catalogue(variants=None):
        reads.append(1)
        return [{"name": "greedy", "plays": None, "tables": [{"variant": "classic", "players": 2, "lucky": None}]}]

    monkeypatch.setattr(server, "bot_catalogue", catalogue)
    port = free_port()
    with running(monkeypatch, port=port):
        assert reads == [1]
        status, game = call(port, "POST", "/api/games", GAME)
        assert status == 201 and game["begun"], game
        before = seen(port, game)
        for _ in range(2):
            status, info = call(port, "GET", "/api/info")
            assert status == 200 and info["bots"] == catalogue()[:1]
        assert reads == [1, 1, 1]  # serve's and the two this test made: none in a request
        assert seen(port, game) == before


def test_no_request_waits_while_the_preparation_compiles(monkeypatch):
    """Numba takes its global compiler lock before it looks for a kernel it has: while the
    preparation compiled a bot (a minute on a cold cache), every request that made an engine
    (a game beginning, a move, a record) waited for it, 71 s at worst. Here the preparation
    holds that lock, as a compile does: a game of what is ready begins and plays, its record
    and `/api/info` answer, a game against the bot being compiled starts at once and says it
    is getting ready, and once the compile is over it begins; the first game is unchanged."""
    compiling, done = threading.Event(), threading.Event()

    def tables(progress):  # the game's kernels, in this process from now on
        PlaySession(TableOptions(num_players=2), [HUMAN, "random"], seed=0).decide(0, 44)

    def greedy(progress):
        with global_compiler_lock:
            compiling.set()
            assert done.wait(120)

    monkeypatch.setattr(server, "bot_catalogue", list)
    port = free_port()
    tasks = [Task("tables", "compiling the game's kernels", tables),
             Task("greedy", "compiling the greedy bot's kernels", greedy)]
    try:
        with running(monkeypatch, tasks=tasks, port=port):
            assert compiling.wait(120)
            status, game = call(port, "POST", "/api/games", {**GAME, "bots": ["random"]})
            assert status == 201 and game["begun"], game
            secret = game["joins"][0]["secret"]
            view = seen(port, game)
            move = {"seat": 0, "action": view["legal"][0]["action"], "decision": view["decisions"]}
            assert call(port, "POST", f"/api/games/{game['id']}/moves", move, secret)[0] == 200
            assert call(port, "GET", f"/api/games/{game['id']}/record", secret=secret)[0] == 200
            status, info = call(port, "GET", "/api/info")
            assert status == 200 and info["ready"]["greedy"]["state"] == "preparing"
            status, later = call(port, "POST", "/api/games", GAME)
            assert status == 201 and later["begun"] is False and "greedy is getting ready" in (
                later["getting_ready"]["message"])
            before = seen(port, game)
            done.set()
            wait_until(lambda: seen(port, later)["begun"])
            assert seen(port, game) == before
    finally:
        done.set()


def test_what_a_new_game_waits_for_is_prepared_next():
    """Items were prepared in list order only: a game against the last bot of the list waited
    for every other bot's kernels (a game against solo_optimal began 507 s after the start).
    Now what a game waits for is prepared next: it begins while the others still wait; the
    game started before is unchanged."""
    first, middle, last = Gate(), Gate(), Gate()
    prepare = Preparation([Task("tables", "compiling the game's kernels", lambda p: None),
                           Task("heuristic", "compiling the heuristic bot's kernels", first),
                           Task("random", "compiling the random bot's kernels", middle),
                           Task("greedy", "compiling the greedy bot's kernels", last)])
    with TestClient(create_app(max_games=5, prepare=prepare)) as c:
        assert first.running.wait(10)
        solo = new_game(c, SOLO)
        before = state_of(c, solo["id"])
        game = waiting_game(c)  # against greedy, the last of the list
        first.opened.set()
        assert last.running.wait(10) and middle.runs == 0  # greedy next, random after it
        last.opened.set()
        assert middle.running.wait(10)  # greedy is ready; random is being prepared
        sit(c, game["id"], game["joins"][0]["secret"])
        begun = c.get(f"/api/games/{game['id']}").json()
        assert begun["begun"] and prepare.status()["random"]["state"] == "preparing"
        middle.opened.set()
        assert prepare.wait(10) and middle.runs == 1 and last.runs == 1
        sit(c, solo["id"], solo["joins"][0]["secret"])
        assert state_of(c, solo["id"]) == before


class Child:
    """A stand-in for the preparing child process (`prepare.Helper`): item "a" it prepares, "b"
    fails there, "c" it does not know, and at "d" it is gone."""

    def __init__(self):
        self.asked, self.stopped = [], False

    def prepare(self, name, progress):
        self.asked.append(name)
        progress(0.5)
        if name == "c":
            raise LookupError(name)
        if name == "d":
            raise EOFError("the child process ended (exit status -9)")
        return "it broke" if name == "b" else None

    def stop(self):
        self.stopped = True


def test_items_are_prepared_in_a_child_process_then_loaded_here(monkeypatch):
    """A compile in the server's own process holds the interpreter lock for most of a minute,
    and every request waited its turn for it (2 s at worst with the lock taken off). With
    `in_child` each item is prepared by the child first and then run here (to load it);
    what the child does not know, and everything once it is gone, is prepared here."""
    child = Child()
    monkeypatch.setattr(prepare_module, "Helper", lambda: child)
    here = []
    tasks = [Task(name, f"doing {name}", lambda p, name=name: here.append(name)) for name in "abcde"]
    preparation = Preparation(tasks, in_child=True)
    preparation.start()
    assert preparation.wait(10)
    assert child.asked == ["a", "b", "c", "d"] and child.stopped  # "e": the child was gone by then
    assert here == ["a", "c", "d", "e"]  # "a" loads what the child made; "b" failed there
    states = preparation.status()
    assert [states[n]["state"] for n in "abcde"] == ["ready", "failed", "ready", "ready", "ready"]
    assert states["b"]["error"] == "it broke"


@pytest.mark.slow  # a fresh Python process
def test_the_child_process_prepares_the_items_it_is_named():
    helper = prepare_module.Helper()
    try:
        seen = []
        assert helper.prepare("tables", seen.append) is None
        assert seen[-1] == 1.0 and seen == sorted(seen)
        with pytest.raises(LookupError):
            helper.prepare("no such item", seen.append)
    finally:
        helper.stop()
    assert helper.process.returncode is not None


class Stopped(Child):
    """A child process that prepares until the server stops it, then is gone."""

    def __init__(self):
        super().__init__()
        self.killed = threading.Event()

    def prepare(self, name, progress):
        self.asked.append(name)
        assert self.killed.wait(60)
        raise EOFError("the child process ended (exit status -9)")

    def stop(self):
        self.killed.set()


def test_a_stopped_server_stops_preparing_and_says_nothing_of_it(monkeypatch, caplog):
    """Ctrl-C stops the server, which kills its child process: the preparation took that for a
    child that had died, warned, and went on preparing in the stopping server. Now nothing more
    is prepared, and nothing is said."""
    child = Stopped()
    monkeypatch.setattr(prepare_module, "Helper", lambda: child)
    here = []
    preparation = Preparation([Task(name, f"doing {name}", lambda p, name=name: here.append(name)) for name in "ab"],
                              in_child=True)
    preparation.start()
    wait_until(lambda: child.asked == ["a"])
    preparation.stop()
    assert preparation.wait(10)
    assert child.asked == ["a"] and here == [] and "stopped" not in caplog.text
