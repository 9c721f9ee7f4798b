"""The play server's API (qwixx_env/play/server.py) through Starlette's TestClient: every route,
every bad input refused with a 4xx that names the problem, and the game unchanged after each."""

import json
import re
import threading
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the play extra (starlette) is not installed")
pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2 (the test extra)")

from starlette.testclient import TestClient  # noqa: E402

from qwixx_env import bots, replay  # noqa: E402
from qwixx_env.arena import run_arena  # noqa: E402
from qwixx_env.cli import main as cli_main  # noqa: E402
from qwixx_env.core.variant import encode_action  # noqa: E402
from qwixx_env.envs.qwixx_v0 import raw_env  # noqa: E402
from qwixx_env.play import server  # noqa: E402
from qwixx_env.play.server import LOCAL_HOSTS, MAX_BODY, create_app  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def client():
    with TestClient(create_app(max_games=5)) as c:
        yield c


SEAT = "X-Qwixx-Seat"
SECRETS: dict = {}  # game id -> the secret of its (first) person's seat, as the page keeps them


def new_game(client, **body):
    """A new game; the client acts as its person's seat from now on (its X-Qwixx-Seat header)
    and lists it among its games (X-Qwixx-Seats), as the page does."""
    body = {"players": 2, "bots": ["greedy"], "seed": 3, **body}
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    game = r.json()
    sit(client, game["id"], game["joins"][0]["secret"])
    return game


def sit(client, game_id, secret):
    SECRETS[game_id] = secret
    client.headers[SEAT] = secret
    client.headers["X-Qwixx-Seats"] = ",".join(SECRETS.values())


def as_seat(game_id):
    return {SEAT: SECRETS[game_id]}


def play_to_end(client, game, pick=lambda legal: legal[0]["action"]):
    while not game["over"]:
        action = pick(game["legal"])
        body = {"seat": game["you"], "action": action, "decision": game["decisions"]}
        r = client.post(f"/api/games/{game['id']}/moves", json=body, headers=as_seat(game["id"]))
        assert r.status_code == 200, r.text
        game = r.json()
    return game


def state_of(client, game_id, headers=None):
    """Everything a refused request must leave as it was."""
    g = client.get(f"/api/games/{game_id}", headers=headers or as_seat(game_id)).json()
    return {k: g[k] for k in ("snapshot", "decisions", "events_total", "legal", "to_decide", "pending", "over")}


def refused(response, status, *words):
    assert response.status_code == status, response.text
    message = response.json()["error"]
    for word in words:
        assert word in message, message
    return message


# --- the routes ---------------------------------------------------------------------------


def test_the_page_and_its_assets_are_served_from_the_package(client):
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    for asset in ("app.js", "style.css", "favicon.svg"):
        assert f"/static/{asset}" in page.text
        assert client.get(f"/static/{asset}").status_code == 200
    assert "http://" not in page.text and "https://" not in page.text  # nothing fetched from the internet
    assert client.get("/static/../server.py").status_code == 404


def test_every_static_file_is_package_data():
    line = re.search(r'^"qwixx_env.play.static" = \[(.*?)\]', (REPO / "pyproject.toml").read_text(), re.M)
    assert line, 'pyproject.toml: no [tool.setuptools.package-data] line for "qwixx_env.play.static"'
    globs = re.findall(r'"([^"]+)"', line.group(1))
    static = REPO / "qwixx_env" / "play" / "static"
    shipped = {p for g in globs for p in static.glob(g)}
    assert set(static.iterdir()) <= shipped


def test_info_lists_every_bot_and_the_game_of_each_pretrained_one(client):
    info = client.get("/api/info").json()
    assert [b["name"] for b in info["bots"]] == bots.available()
    plays = {b["name"]: b["plays"] for b in info["bots"]}
    assert plays["greedy"] is None
    assert plays["ppo-classic-2p"] == {"variant": "classic", "players": 2, "lucky": None}
    tables = {b["name"]: b["tables"] for b in info["bots"]}
    assert tables["ppo-classic-2p"] == [{"variant": "classic", "players": 2, "lucky": None}]
    assert tables["ppo-longo-2p"] == [{"variant": "longo", "players": 2, "lucky": "bonus"}]
    assert tables["ppo-longo-instead-3p"] == [{"variant": "longo", "players": 3, "lucky": "instead"}]
    # every table the page can start is offered a pretrained bot, and only its own
    offered = [t for b in info["bots"] if b["plays"] for t in b["tables"]]
    assert all([t] == tables[b["name"]] and t == b["plays"] for b in info["bots"] if b["plays"]
               for t in b["tables"])
    assert len({(t["variant"], t["players"], t["lucky"]) for t in offered}) == len(offered) == 15
    # the bots' own check_table: afterstate where a network ships, solo_optimal where the solver covers
    assert {(t["variant"], t["players"]) for t in tables["afterstate"]} == {("classic", p) for p in (2, 3, 4)}
    assert {t["variant"] for t in tables["solo_optimal"]} == {"classic"}
    longo = {(t["players"], t["lucky"]) for t in tables["random"] if t["variant"] == "longo"}
    assert longo == {(p, rule) for p in range(1, 6) for rule in ("bonus", "instead")}
    assert info["max_games"] == 5 and info["max_players"] == 5


@pytest.mark.slow
def test_a_whole_game_against_greedy_replays_from_its_record(client):
    game = new_game(client)
    assert game["to_decide"] == 0 and game["events"] == [] and game["options"]["seed"] == 3
    rec = client.get(f"/api/games/{game['id']}/record").json()
    assert {o["action"] for o in game["legal"]} == set(replay(rec).legal_actions())
    end = play_to_end(client, game)
    scores = [p["score"] for p in end["snapshot"]["players"]]
    assert end["winners"] == [s for s, x in enumerate(scores) if x == max(scores)]
    r = client.get(f"/api/games/{game['id']}/record")
    assert r.headers["content-disposition"] == f'attachment; filename="qwixx-{game["id"]}.json"'
    assert replay(r.json()).snapshot() == end["snapshot"]
    everything = client.get(f"/api/games/{game['id']}?since=0").json()["events"]
    assert len(everything) == end["events_total"] and everything[-1]["snapshot"] == end["snapshot"]
    assert client.get(f"/api/games/{game['id']}?since={end['events_total']}").json()["events"] == []


def test_the_same_seed_and_decisions_give_the_same_game(client):
    first = play_to_end(client, new_game(client, seed=11))
    again = play_to_end(client, new_game(client, seed=11))
    assert first["snapshot"] == again["snapshot"] and first["id"] != again["id"]


def test_bots_white_choices_stay_hidden_until_the_white_action_resolves(client):
    game = new_game(client, players=3, bots=["greedy", "greedy"], start_player=1, seed=5)
    # seats 1 and 2 decide their white crosses before seat 0 (clockwise from the active seat 1);
    # the page sees only that they decided
    assert [(e["seat"], e["hidden"], e["action"], e["mark"]) for e in game["events"]] == [
        (1, True, None, None), (2, True, None, None)
    ]
    rec = client.get(f"/api/games/{game['id']}/record").json()
    assert rec["decisions"] == []  # nor does the record give it away
    assert replay(rec).snapshot() == game["snapshot"]
    r = client.post(f"/api/games/{game['id']}/moves", json={"seat": 0, "action": game["legal"][-1]["action"]})
    reveal = [e for e in r.json()["events"] if e["kind"] == "white"][0]
    assert [c["seat"] for c in reveal["choices"]] == [1, 2, 0]  # every choice, the bots' included


def test_the_game_list_and_the_limit(client):
    ids = [play_to_end(client, new_game(client, seed=0))["id"]]  # finished: a full store may drop it
    ids += [new_game(client, seed=s)["id"] for s in range(1, 5)]
    listed = client.get("/api/games").json()
    assert [g["id"] for g in listed["games"]] == ids and listed["max_games"] == 5
    sixth = client.post("/api/games", json={"players": 1, "bots": [], "seed": 9}).json()
    assert sixth["dropped"] == [ids[0]] and "at most 5 games" in sixth["notice"]
    refused(client.get(f"/api/games/{ids[0]}"), 404, ids[0], "dropped", "at most 5")
    assert client.get(f"/api/games/{ids[1]}", headers=as_seat(ids[1])).status_code == 200


def test_a_replay_has_one_frame_per_position(client):
    end = play_to_end(client, new_game(client, seed=4))
    rec = client.get(f"/api/games/{end['id']}/record").json()
    r = client.post("/api/replays", json=rec)
    assert r.status_code == 201
    rp = r.json()
    frames = rp["frames"]
    assert len(frames) == len(rec["decisions"]) + 1
    assert [[f["decision"]["seat"], f["decision"]["action"]] for f in frames[:-1]] == rec["decisions"]
    assert frames[-1]["snapshot"] == rec["snapshot"] and frames[-1]["decision"] is None
    assert frames[0]["snapshot"] == end["start"]
    assert all(f["decision"]["action"] in {o["action"] for o in f["legal"]} for f in frames[:-1])
    assert client.get(f"/api/replays/{rp['id']}").json()["frames"] == frames
    # the page's record names its seats, and the viewer gets the names; a record without them, None
    assert rec["seat_names"] == rp["seat_names"] == ["You", "greedy"]
    unnamed = {k: v for k, v in rec.items() if k != "seat_names"}
    assert client.post("/api/replays", json=unnamed).json()["seat_names"] is None


def test_the_replay_viewer_opens_a_record_the_arena_kept(client, tmp_path):
    """`run_arena(..., records=DIR)` writes the files the viewer opens (the page sends a file's
    JSON as the request body): its last frame shows the arena's final scores of that game."""
    result = run_arena(["heuristic", "greedy"], num_players=3, variant="longo", games=1, seed=2, workers=1,
                       records=tmp_path / "games")
    game = 1  # lineup 1: greedy, heuristic, greedy
    rec = json.loads(result.record_path(game).read_text())
    r = client.post("/api/replays", json=rec)
    assert r.status_code == 201, r.text
    frames = r.json()["frames"]
    assert len(frames) == len(rec["decisions"]) + 1 and frames[-1]["snapshot"]["phase"] == "over"
    assert [p["score"] for p in frames[-1]["snapshot"]["players"]] == result.games.scores[game].tolist()
    assert r.json()["options"]["variant"] == "longo"


# --- bad input: a 4xx naming the problem, the game as it was ------------------------------


def test_a_refused_move_leaves_the_game_unchanged(client):
    game = new_game(client, seed=8)
    gid = game["id"]
    before = state_of(client, gid)
    legal = {o["action"] for o in game["legal"]}
    illegal = next(a for a in range(45) if a not in legal)
    moves = f"/api/games/{gid}/moves"
    refused(client.post(moves, json={"seat": 0, "action": illegal}), 422, f"action {illegal}", "not legal", "legal:")
    refused(client.post(moves, json={"seat": 0, "action": 99}), 422, "outside the action space 0..44")
    refused(client.post(moves, json={"seat": 0, "action": "r7"}), 400, "action", "'r7'", "integer")
    refused(client.post(moves, json={"seat": 0, "action": 1.0}), 400, "action", "integer")
    legal_one = game["legal"][0]["action"]
    refused(client.post(moves, json={"seat": 1, "action": legal_one}), 403, "seat 1", "greedy", "seat 0")
    refused(client.post(moves, json={"seat": 4, "action": legal_one}), 403, "seat 4", "nobody")
    refused(client.post(moves, json={"seat": 0, "action": 44, "decision": 7}), 409, "decision", "0 decisions")
    refused(client.post(moves, json={"seat": 0}), 400, "action", "None")
    refused(client.post(moves, json={"seat": 0, "action": 44, "why": 1}), 400, "unknown field", "why")
    refused(client.post(moves, json=[0, 44]), 400, "list", "JSON object")
    refused(client.post(moves, content=b"{not json", headers={"content-type": "application/json"}), 400, "not JSON")
    refused(client.post(moves, content=b"x" * (MAX_BODY + 1)), 413, str(MAX_BODY))
    refused(client.get(f"/api/games/{gid}?since=-1"), 400, "since", "'-1'")
    assert state_of(client, gid) == before


@pytest.mark.parametrize("text", ["²", "9" * 5000, "٣", "+1", " 1"])
def test_a_count_in_the_query_is_a_short_plain_number(client, text):
    """`str.isdigit` takes "²", which int() does not, and int() refuses 5,000 digits: both were
    500s. Now those, other scripts' digits and signs are a 400 naming the parameter and what it
    takes; the games and the replay are as they were."""
    game = new_game(client, seed=8)
    other = new_game(client, seed=9)
    rec = client.get(f"/api/games/{game['id']}/record").json()
    rp = client.post("/api/replays", json=rec).json()
    before = {gid: state_of(client, gid) for gid in (game["id"], other["id"])}
    for path, name in ((f"/api/games/{game['id']}", "since"), (f"/api/replays/{rp['id']}/coach", "step")):
        message = refused(client.get(path, params={name: text}, headers=as_seat(game["id"])), 400, f"{name}: got ",
                          f"a non-negative integer of at most {server.MAX_DIGITS} digits")
        assert len(message) < 200
    assert {gid: state_of(client, gid) for gid in before} == before
    assert client.get(f"/api/replays/{rp['id']}").json() == rp
    assert client.get(f"/api/replays/{rp['id']}/coach", params={"step": "0"}).status_code == 200


def test_a_move_for_a_finished_game_is_refused(client):
    end = play_to_end(client, new_game(client, seed=2))
    before = state_of(client, end["id"])
    refused(client.post(f"/api/games/{end['id']}/moves", json={"seat": 0, "action": 44}), 409, "is over", "new game")
    assert state_of(client, end["id"]) == before


def test_an_unknown_game_id_is_refused(client):
    for path in ("/api/games/nosuch", "/api/games/nosuch/record", "/api/replays/nosuch"):
        refused(client.get(path), 404, "'nosuch'", "unknown")
    refused(client.post("/api/games/nosuch/moves", json={"seat": 0, "action": 44}), 404, "unknown game id")


@pytest.mark.parametrize(
    "body, words",
    [
        ({"players": 2, "bots": ["nobot"]}, ["bots[0]", "'nobot'", "expected one of"]),
        ({"players": 3, "bots": ["greedy", "ppo-classic-2p"]}, ["seat 2", "ppo-classic-2p", "num_players", "2"]),
        ({"players": 2, "variant": "longo", "bots": ["ppo-classic-2p"]}, ["ppo-classic-2p", "variant", "classic"]),
        ({"players": 2, "variant": "longo", "bots": ["afterstate"]}, ["afterstate", "cannot play this table"]),
        ({"players": 2, "bots": ["greedy:max_skip=1"]}, ["'greedy:max_skip=1'", "expected one of"]),
        ({"players": 2, "bots": []}, ["bots", "1 bot name"]),
        ({"players": 6, "bots": []}, ["players", "6", "1 to 5"]),
        ({"players": True, "bots": []}, ["players", "True"]),
        ({"variant": "mega"}, ["variant", "'mega'", "classic"]),
        ({"lucky": "always"}, ["lucky", "'always'", "bonus"]),
        ({"variant": "classic", "lucky": "instead", "bots": ["greedy"]}, ["lucky", "instead", "longo"]),
        ({"start_player": 3, "bots": ["greedy"]}, ["start_player", "3"]),
        ({"seed": -1, "bots": ["greedy"]}, ["seed", "-1"]),
        ({"seed": "abc", "bots": ["greedy"]}, ["seed", "'abc'"]),
        ({"bots": ["greedy"], "checkpoint": "/tmp/x.json"}, ["unknown field", "checkpoint"]),
        (["greedy"], ["list", "JSON object"]),
    ],
)
def test_a_bad_new_game_is_refused_and_nothing_is_added(client, body, words):
    held = len(client.get("/api/games").json()["games"])
    refused(client.post("/api/games", json=body), 400, *words)
    assert len(client.get("/api/games").json()["games"]) == held


def _finished_record(client, seed=6):
    end = play_to_end(client, new_game(client, seed=seed))
    return client.get(f"/api/games/{end['id']}/record").json()


@pytest.mark.slow
def test_a_record_that_is_not_a_record_is_refused(client):
    rec = _finished_record(client)
    bad = {
        "a list": ([rec], ["list", "JSON object"]),
        "a path": ("/etc/hostname", ["str", "JSON object"]),
        "missing field": ({k: v for k, v in rec.items() if k != "rolls"}, ["missing field", "rolls"]),
        "unknown field": ({**rec, "path": "/tmp/x"}, ["unknown field", "path"]),
        "wrong type": ({**rec, "decisions": {"0": 1}}, ["record decisions: got {'0': 1}; expected a list of [seat"]),
        "long value": ({**rec, "rolls": "6" * 5000}, ["record rolls: got '666", "... (a str); expected a list"]),
        "seed a number": ({**rec, "seed": 1.5}, ["record seed: got 1.5; expected None or a non-negative integer"]),
        "wrong type inside": ({**rec, "decisions": [[0, "x"], *rec["decisions"][1:]]}, ["decision 0"]),
        "options": ({**rec, "options": {**rec["options"], "num_players": "two"}}, ["num_players", "'two'"]),
        "format": ({**rec, "format": "chess/1"}, ["format", "chess/1"]),
        "rng": ({**rec, "rng_state": "zz"}, ["rng_state", "'zz'"]),
        "seed": ({**rec, "seed": [1]}, ["record seed: got [1]; expected None or a non-negative integer"]),
        "seed text": ({**rec, "seed": "zzz"}, ["record seed: got 'zzz'; expected None or a non-negative integer"]),
        "seed below 0": ({**rec, "seed": -3}, ["record seed: got -3"]),
        "dice": ({**rec, "rolls": [[1, 1, 1, 1, 1, 1], *rec["rolls"][1:]]}, ["roll 0", "dice"]),
        "snapshot": ({**rec, "snapshot": {**rec["snapshot"], "roll": 0}}, ["snapshot", "changed"]),
        "seat names": ({**rec, "seat_names": ["one"]}, ["seat_names", "['one']", "one per seat"]),
        "seat name": ({**rec, "seat_names": ["one", 2]}, ["seat_names", "non-empty names"]),
    }
    # a decision the rules refuse: the first decision crosses a number the white dice do not make
    w = sum(rec["rolls"][0][:2])
    first_seat = rec["decisions"][0][0]
    wrong = next(a for a in range(11) if a + 2 != w)
    changed = [[first_seat, wrong], *rec["decisions"][1:]]
    bad["illegal decision"] = ({**rec, "decisions": changed}, ["decision 0", "illegal"])
    held = len(client.app.state.replays)
    for name, (body, words) in bad.items():
        r = client.post("/api/replays", json=body)
        assert r.status_code == 400, (name, r.text)
        message = r.json()["error"]
        assert all(w in message for w in words), (name, message)
    assert len(client.app.state.replays) == held


def test_a_records_seed_is_none_or_any_whole_number_as_reset_takes_it(client):
    """A record's seed says what the game was reset with (None: no seed): any whole number
    >= 0, as `raw_env.reset` takes one, 10**40 included; the dice come from rng_state."""
    for seed in (None, 0, 10**40):
        env = raw_env(num_players=2)
        env.reset(seed=seed)
        env.step(env.legal_actions()[0])
        record = env.record()
        assert record["seed"] == seed
        r = client.post("/api/replays", content=json.dumps(record), headers={"content-type": "application/json"})
        assert r.status_code == 201, (seed, r.text)
        assert len(r.json()["frames"]) == 2
    refused(client.post("/api/replays", json={**record, "seed": "zzz"}), 400,
            "record seed: got 'zzz'; expected None or a non-negative integer")


def test_a_loopback_server_refuses_other_host_names():
    with TestClient(create_app(max_games=2, allowed_hosts=LOCAL_HOSTS), base_url="http://127.0.0.1:8000") as c:
        assert c.get("/api/info").status_code == 200
        assert c.get("/api/info", headers={"host": "attacker.example"}).status_code == 400


# --- the thread pool ----------------------------------------------------------------------


class SlowBot:
    """A bot that thinks until the test lets it go (at most 10 s), and says whether it was let go."""

    name = "slow"

    def __init__(self):
        self.thinking = threading.Event()
        self.release = threading.Event()
        self.released = None

    def act(self, observation):
        self.thinking.set()
        self.released = self.release.wait(timeout=10.0)
        return int(len(observation["action_mask"]) - 1)


def test_a_thinking_bot_does_not_hold_up_other_requests(client):
    """While the bot thinks, another request is answered: the bot is let go only after that
    answer, so a server that waited for the bot on its event loop would time the bot out."""
    game = new_game(client, seed=1)
    handle = client.app.state.games.get(game["id"])
    bot = handle.bots[1] = SlowBot()
    answered = {}

    def move():
        answered["move"] = client.post(f"/api/games/{game['id']}/moves", json={"seat": 0, "action": 44}).status_code

    worker = threading.Thread(target=move)
    worker.start()
    assert bot.thinking.wait(timeout=10.0)
    assert client.get("/api/info").status_code == 200  # answered while the bot still thinks
    bot.release.set()
    worker.join()
    assert bot.released is True and answered["move"] == 200


# --- the command line ---------------------------------------------------------------------


def test_qwixx_serve_parses_and_hands_over(monkeypatch):
    got = {}
    monkeypatch.setattr(server, "serve", lambda **kw: got.update(kw))
    assert cli_main(["serve", "--port", "8123", "--max-games", "7", "--open"]) == 0
    assert got == {"host": "127.0.0.1", "port": 8123, "open_page": True, "max_games": 7, "store": None,
                   "token": None, "allow_hosts": [], "variants": ["classic", "longo"]}
    token = "t" * 20
    assert cli_main(["serve", "--host", "0.0.0.0", "--token", token, "--allow-host", "a.lan", "--allow-host", "b"]) == 0
    assert got["host"] == "0.0.0.0" and got["token"] == token and got["allow_hosts"] == ["a.lan", "b"]


@pytest.mark.parametrize(
    "args, words",
    [(["--port", "0"], "--port: got 0"), (["--max-games", "0"], "--max-games: got 0"),
     (["--token", "short"], "--token: got 5 characters")],
)
def test_qwixx_serve_refuses_bad_options(capsys, args, words):
    assert cli_main(["serve", *args]) == 2
    assert words in capsys.readouterr().err


def test_json_round_trip_of_a_view_is_plain(client):
    game = new_game(client, variant="longo", lucky="instead", players=3, bots=["heuristic", "random"])
    assert json.loads(json.dumps(game)) == game
    assert game["sheet"]["rows"]["green"][0] == 16 and all(p["lucky_numbers"] for p in game["snapshot"]["players"])


LUCKY_SEED = 8  # Longo, 2 players: the first white sum, 8, is one of your lucky numbers (8, 11)


def test_a_longo_lucky_cross_is_your_decision_when_rows_tie(client):
    """Seed 8: you cross red 8 with the white sum; 8 is lucky, and yellow, green and blue tie with
    no crosses, so you choose where the lucky cross goes: the API offers exactly the env's options,
    refuses anything else, and your choice gives the position the env reaches with it."""
    r8, g16 = encode_action(("red", 8), "longo"), encode_action(("green", 16), "longo")
    game = new_game(client, variant="longo", lucky="bonus", seed=LUCKY_SEED)
    assert sum(game["snapshot"]["dice"]["white"]) == 8 and 8 in game["snapshot"]["players"][0]["lucky_numbers"]
    env = raw_env(num_players=2, variant="longo", lucky="bonus")
    env.reset(seed=LUCKY_SEED)
    env.step(r8)
    r = client.post(f"/api/games/{game['id']}/moves", json={"seat": 0, "action": r8, "decision": 0})
    lucky = r.json()
    assert (lucky["snapshot"]["phase"], lucky["to_decide"]) == ("lucky", 0) == (env.snapshot()["phase"], 0)
    assert [o["action"] for o in lucky["legal"]] == env.legal_actions()
    assert [(o["mark"]["row"], o["mark"]["number"]) for o in lucky["legal"]] == [
        ("yellow", 2), ("green", 16), ("blue", 16)]  # red has a cross now: it is not among the fewest
    assert [(p["seat"], p["action"]) for p in lucky["pending"]] == [(0, r8)]  # your white cross, not yet shown
    before = state_of(client, game["id"])
    for action, words in ((encode_action(("red", 2), "longo"), "red 2"), (env.num_actions - 1, "pass")):
        refused(client.post(f"/api/games/{game['id']}/moves", json={"seat": 0, "action": action}), 422,
                words, "not legal now", "yellow 2", "green 16", "blue 16")
    assert state_of(client, game["id"]) == before
    after = client.post(f"/api/games/{game['id']}/moves", json={"seat": 0, "action": g16, "decision": 1}).json()
    decisions = client.get(f"/api/games/{game['id']}/record").json()["decisions"]
    assert decisions[:2] == [[0, r8], [0, g16]]
    env.step(g16)
    assert [seat for seat, _ in decisions[2:]] == [1]  # the bot's white choice; then your colour action
    env.step(decisions[2][1])
    assert after["snapshot"] == env.snapshot()
    mine = after["snapshot"]["players"][0]["marks"]
    assert (mine["red"], mine["yellow"], mine["green"], mine["blue"]) == ([8], [], [16], [])


# --- the coach ----------------------------------------------------------------------------


def test_the_coach_values_every_legal_option_and_asks_a_bot(client):
    game = new_game(client, seed=12)
    coach = client.get(f"/api/games/{game['id']}/coach?bot=greedy").json()
    assert coach["source"]["name"] == "afterstate"  # 2-player classic: the learned win chance
    assert [o["action"] for o in coach["options"]] == [o["action"] for o in game["legal"]]
    assert all(0 <= o["value"] <= 1 and o["loss"] >= 0 for o in coach["options"])
    assert coach["best_action"] in {o["action"] for o in game["legal"]}
    assert coach["bot"] == "greedy" and coach["bot_action"] in {o["action"] for o in game["legal"]}
    longo = new_game(client, variant="longo", players=3, bots=["heuristic", "greedy"], seed=3)
    assert client.get(f"/api/games/{longo['id']}/coach").json()["source"]["name"] == "heuristic"


def test_the_coach_refuses_what_it_cannot_answer(client):
    game = new_game(client, seed=12)
    gid = game["id"]
    before = state_of(client, gid)
    refused(client.get(f"/api/games/{gid}/coach?bot=nobot"), 400, "bot", "'nobot'", "expected one of")
    refused(client.get(f"/api/games/{gid}/coach?bot=ppo-longo-2p"), 400, "ppo-longo-2p", "cannot play this game")
    refused(client.get(f"/api/games/{gid}/summary"), 409, "not over")
    assert state_of(client, gid) == before
    end = play_to_end(client, game)
    refused(client.get(f"/api/games/{gid}/coach"), 409, "over")
    review = client.get(f"/api/games/{gid}/summary").json()
    rec = client.get(f"/api/games/{gid}/record").json()
    assert [d["index"] for d in review["decisions"]] == [i for i, (s, _) in enumerate(rec["decisions"]) if s == 0]
    assert len(review["worst"]) == 3 and review["worst"][0]["loss"] == max(d["loss"] for d in review["decisions"])
    assert state_of(client, gid)["snapshot"] == end["snapshot"]


def test_the_coach_in_the_replay_viewer(client):
    rec = _finished_record(client, seed=13)
    rp = client.post("/api/replays", json=rec).json()
    last = len(rp["frames"]) - 1
    coach = client.get(f"/api/replays/{rp['id']}/coach?step=3&bot=heuristic").json()
    assert [o["action"] for o in coach["options"]] == [o["action"] for o in rp["frames"][3]["legal"]]
    assert coach["seat"] == rp["frames"][3]["to_decide"]
    refused(client.get(f"/api/replays/{rp['id']}/coach?step={last}"), 409, "end of the record")
    refused(client.get(f"/api/replays/{rp['id']}/coach?step={last + 1}"), 400, "step", f"0 to {last}")
    refused(client.get(f"/api/replays/{rp['id']}/coach?step=x"), 400, "step", "'x'")


def test_an_unknown_api_path_or_method_is_refused_in_json(client):
    """Starlette's own 404 and 405 answer the API's way, {"error": ...} naming the request (a 405
    with what the path takes, and its Allow header); the page's other paths keep plain text."""
    r = client.get("/api/nope")
    assert r.status_code == 404 and r.json()["error"].startswith("GET /api/nope: no such API path")
    r = client.request("PUT", "/api/info", json={})
    assert r.status_code == 405 and set(r.headers["allow"].split(", ")) == {"GET", "HEAD"}
    assert r.json() == {"error": "PUT /api/info: the path does not take PUT; it takes GET, HEAD"}
    r = client.get("/api/games/" + "0" * 32 + "/moves")
    assert r.status_code == 405 and "it takes POST" in r.json()["error"]
    r = client.get("/nope")
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/plain")
    assert client.get("/api/info").status_code == 200  # and the API itself is unchanged
